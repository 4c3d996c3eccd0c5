"""Timers: Flink's ``InternalTimerServiceImpl`` for one operator, all keys.

A timer is ``(key, namespace, timestamp)`` in one of two domains. Registering the
same timer twice is one timer (Flink keeps them in a set-like priority queue), and
deleting a timer that does not exist is a no-op. Event-time timers fire when the
watermark reaches them, processing-time timers when the clock does; both fire in
timestamp order (ties in registration order), and a timer registered while firing
that is already due fires in the same advance, as in Flink.

User functions see the per-key :class:`KeyedTimerService` facade (Flink's
``TimerService``); window operators use the internal service with windows as the
namespace.
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from funke.semantics.clock import Clock
from funke.semantics.snapshot_columns import NamespaceCodes, TimerColumns
from funke.semantics.state import VOID_NAMESPACE, decode_namespace, encode_namespace
from funke.semantics.time import MIN_WATERMARK


class TimeDomain(enum.Enum):
    """Which clock a timer belongs to (Flink's ``TimeDomain``)."""

    EVENT_TIME = "event_time"
    PROCESSING_TIME = "processing_time"


class Timer(NamedTuple):
    """A timer that fires (a tuple: made once per firing, and a frozen dataclass costs three times as much)."""

    timestamp: int
    key: Any
    namespace: Any
    domain: TimeDomain


class _TimerQueue:
    """A min-heap of timers with set semantics and lazy deletion."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Any, Any]] = []
        self._live: dict[tuple[Any, Any, int], int] = {}  # (key, namespace, ts) -> sequence number
        self._sequence = 0

    def add(self, key: Any, namespace: Any, timestamp: int) -> None:
        ident = (key, namespace, timestamp)
        if ident in self._live:
            return
        self._sequence += 1
        self._live[ident] = self._sequence
        heapq.heappush(self._heap, (timestamp, self._sequence, key, namespace))

    def remove(self, key: Any, namespace: Any, timestamp: int) -> None:
        self._live.pop((key, namespace, timestamp), None)

    def _drop_stale_head(self) -> None:
        while self._heap:
            timestamp, sequence, key, namespace = self._heap[0]
            if self._live.get((key, namespace, timestamp)) == sequence:
                return
            heapq.heappop(self._heap)

    def fire_due(self, up_to: int, fire: Callable[[int, Any, Any], None]) -> None:
        """``fire(timestamp, key, namespace)`` for each timer due by ``up_to``, in order (of
        timestamp, then of adding), with the due timers taken off the heap in bulk (``_take_due``).

        ``fire`` may add and remove timers: a timer removed before its turn does not fire, and one added
        that is due fires in its place in the order (before the taken timers later than it)."""
        live = self._live
        while taken := self._take_due(up_to):
            for i, (timestamp, sequence, key, namespace) in enumerate(taken):
                heap = self._heap
                if heap and heap[0][0] < timestamp:  # (a timer added by ``fire``, due before this one)
                    self._heap += taken[i:]
                    heapq.heapify(self._heap)
                    break
                ident = (key, namespace, timestamp)
                if live.get(ident) != sequence:  # (removed, or removed and added again: that one is in the heap)
                    continue
                del live[ident]
                fire(timestamp, key, namespace)

    #: Due timers ``_take_due`` pops one by one before it takes the rest in one pass over the heap.
    _POPS = 32

    def _take_due(self, up_to: int) -> list[tuple[int, int, Any, Any]]:
        """The heap's entries due by ``up_to`` (removed ones too), in order, taken off the heap: a few by
        popping, many by one pass that splits the heap into the due and the rest (then made a heap again),
        which costs less than a pop each once more than ``_POPS`` are due."""
        heap = self._heap
        taken = []
        while heap and heap[0][0] <= up_to:
            if len(taken) == self._POPS:
                taken += [t for t in heap if t[0] <= up_to]
                self._heap = [t for t in heap if t[0] > up_to]
                heapq.heapify(self._heap)
                taken.sort()  # ((timestamp, sequence): sequence numbers are unique, no key is compared)
                break
            taken.append(heapq.heappop(heap))
        return taken

    def peek_time(self) -> int | None:
        self._drop_stale_head()
        return self._heap[0][0] if self._heap else None

    def columns(self, code: Callable[[Any], str]) -> tuple[list[int], list[int], list[Any], list[str]]:
        """The pending timers as (timestamps, sequence numbers, keys, namespaces ``code`` encodes), heap order."""
        live = self._live
        timers = [t for t in self._heap if live.get((t[2], t[3], t[0])) == t[1]]
        return [t[0] for t in timers], [t[1] for t in timers], [t[2] for t in timers], [code(t[3]) for t in timers]

    def load(self, columns: tuple[list[int], list[int], list[Any], list[str]], decode: Callable[[str], Any]) -> None:
        """Add the timers of :meth:`columns` (the order among them kept by their sequence numbers, after any held)."""
        stamps, sequence, keys, namespaces = columns
        base = self._sequence
        if base:
            sequence = [base + number for number in sequence]
        timers = list(zip(stamps, sequence, keys, map(decode, namespaces), strict=True))
        live = self._live
        if live:  # (timers held already: a timer of the columns that is one of them stays as it was)
            timers = [t for t in timers if (t[2], t[3], t[0]) not in live]
        live.update({(key, namespace, timestamp): number for timestamp, number, key, namespace in timers})
        self._heap += timers
        heapq.heapify(self._heap)
        self._sequence = max(sequence, default=base)

    def items(self) -> list[tuple[int, Any, Any]]:
        ordered = sorted(self._live.items(), key=lambda item: (item[0][2], item[1]))
        return [(ts, key, ns) for (key, ns, ts), _ in ordered]

    def __len__(self) -> int:
        return len(self._live)


class InternalTimerService:
    """Event-time and processing-time timers of one operator, across all keys.

    >>> from funke.semantics.clock import ManualClock
    >>> timers = InternalTimerService(ManualClock())
    >>> timers.register_event_time_timer("k", "ns", 10)
    >>> timers.register_event_time_timer("k", "ns", 10)   # same timer: still one
    >>> fired = []
    >>> timers.advance_watermark(10, fired.append)
    >>> [(t.key, t.timestamp) for t in fired]
    [('k', 10)]
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._watermark = MIN_WATERMARK
        self._event = _TimerQueue()
        self._processing = _TimerQueue()

    @property
    def current_watermark(self) -> int:
        return self._watermark

    def current_processing_time(self) -> int:
        return self._clock.now_ms()

    def register_event_time_timer(self, key: Any, namespace: Any, timestamp: int) -> None:
        self._event.add(key, namespace, _check_time(timestamp))

    def delete_event_time_timer(self, key: Any, namespace: Any, timestamp: int) -> None:
        self._event.remove(key, namespace, timestamp)

    def register_processing_time_timer(self, key: Any, namespace: Any, timestamp: int) -> None:
        self._processing.add(key, namespace, _check_time(timestamp))

    def delete_processing_time_timer(self, key: Any, namespace: Any, timestamp: int) -> None:
        self._processing.remove(key, namespace, timestamp)

    def advance_watermark(self, watermark: int, on_timer: Callable[[Timer], None]) -> None:
        """Set the watermark, then fire every event-time timer at or before it, in order.

        A watermark below the current one is ignored: watermarks never go back.
        """
        self._watermark = max(self._watermark, _check_time(watermark))
        self._fire(self._event, self._watermark, TimeDomain.EVENT_TIME, on_timer)

    def fire_processing_timers(self, on_timer: Callable[[Timer], None]) -> None:
        """Fire every processing-time timer at or before the clock's current time, in order."""
        self._fire(self._processing, self._clock.now_ms(), TimeDomain.PROCESSING_TIME, on_timer)

    @staticmethod
    def _fire(queue: _TimerQueue, up_to: int, domain: TimeDomain, on_timer: Callable[[Timer], None]) -> None:
        queue.fire_due(up_to, lambda timestamp, key, namespace: on_timer(Timer(timestamp, key, namespace, domain)))

    def event_time_timers(self) -> list[tuple[int, Any, Any]]:
        """``(timestamp, key, namespace)`` of pending event-time timers, in firing order."""
        return self._event.items()

    def processing_time_timers(self) -> list[tuple[int, Any, Any]]:
        return self._processing.items()

    def next_processing_time(self) -> int | None:
        """When the next processing-time timer is due (the adapter schedules its next batch by it)."""
        return self._processing.peek_time()

    def export_rows(self) -> list[dict[str, Any]]:
        """Pending timers as plain rows: domain, key, namespace, timestamp (in firing order)."""
        return list(self.export_columns())

    def export_columns(self) -> TimerColumns:
        """What :meth:`export_rows` gives, column by column (what an operator's snapshot keeps)."""
        code = NamespaceCodes(encode_namespace)
        return TimerColumns({domain.value: queue.columns(code) for domain, queue in self._queues()})

    def import_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Load rows written by :meth:`export_rows` or :meth:`export_columns`."""
        if isinstance(rows, TimerColumns):
            decode = NamespaceCodes(decode_namespace)
            for domain, queue in self._queues():
                if domain.value in rows.queues:
                    queue.load(rows.queues[domain.value], decode)
            return
        for row in rows:
            domain = TimeDomain(row["domain"])
            queue = self._event if domain is TimeDomain.EVENT_TIME else self._processing
            queue.add(row["key"], decode_namespace(row["namespace"]), row["timestamp"])

    def _queues(self) -> tuple[tuple[TimeDomain, _TimerQueue], ...]:
        return (TimeDomain.EVENT_TIME, self._event), (TimeDomain.PROCESSING_TIME, self._processing)

    def restore_watermark(self, watermark: int) -> None:
        self._watermark = watermark


def _check_time(timestamp: int) -> int:
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise TypeError(f"timer and watermark times are int epoch milliseconds, got {timestamp!r}")
    return timestamp


class KeyedTimerService:
    """Flink's ``TimerService`` for the key being processed (namespace ``VOID_NAMESPACE``)."""

    def __init__(self, service: InternalTimerService, current_key: Callable[[], Any]) -> None:
        self._service = service
        self._current_key = current_key

    def current_processing_time(self) -> int:
        return self._service.current_processing_time()

    def current_watermark(self) -> int:
        return self._service.current_watermark

    def register_event_time_timer(self, time: int) -> None:
        self._service.register_event_time_timer(self._current_key(), VOID_NAMESPACE, time)

    def register_processing_time_timer(self, time: int) -> None:
        self._service.register_processing_time_timer(self._current_key(), VOID_NAMESPACE, time)

    def delete_event_time_timer(self, time: int) -> None:
        self._service.delete_event_time_timer(self._current_key(), VOID_NAMESPACE, time)

    def delete_processing_time_timer(self, time: int) -> None:
        self._service.delete_processing_time_timer(self._current_key(), VOID_NAMESPACE, time)
