"""The reference keyed process operator: Flink's ``KeyedProcessOperator`` in Python.

Runs a :class:`~funke.semantics.functions.KeyedProcessFunction` with keyed state
(TTL read from the operator's clock), a per-key timer service and side outputs::

    op = KeyedProcessOperator(MyFunction(), clock=ManualClock())
    op.process_element("a", {"v": 1}, timestamp=1_000)
    op.advance_watermark(5_000)          # fires event-time timers <= 5000, in order
    op.advance_processing_time(60_000)   # moves the clock, fires processing-time timers

Output timestamps follow Flink: an element's outputs carry its timestamp, an
event-time timer's outputs carry the timer's time, and main outputs of a
processing-time timer carry none (side outputs carry the timer's time).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from funke.semantics.clock import Clock
from funke.semantics.functions import KeyedProcessFunction, KeyGroup, OutputRecord, OutputTag, collect_rows, emitted, side_output_of
from funke.semantics.operator import TimedOperator
from funke.semantics.rich import RuntimeContext, call_open
from funke.semantics.state import VOID_NAMESPACE, KeyedStateBackend, StateStore
from funke.semantics.timers import InternalTimerService, KeyedTimerService, TimeDomain, Timer


class KeyedElementContext(StateStore):
    """``ctx`` of ``process_element``: state, timers, key, timestamp, side outputs."""

    def __init__(self, op: KeyedProcessOperator, key: Any, timestamp: int | None, side_timestamp: int | None) -> None:
        super().__init__(op._backend, VOID_NAMESPACE)
        self._op, self._key, self._timestamp, self._side_timestamp = op, key, timestamp, side_timestamp

    def timestamp(self) -> int | None:
        return self._timestamp

    def get_current_key(self) -> Any:
        return self._key

    def timer_service(self) -> KeyedTimerService:
        return self._op._timer_service

    def output(self, tag: OutputTag, value: Any) -> None:
        if not isinstance(tag, OutputTag):
            raise TypeError(f"output() needs an OutputTag as its first argument, got {tag!r}")
        self._op._out.append(OutputRecord(value, self._side_timestamp, tag))


class KeyedTimerContext(KeyedElementContext):
    def __init__(self, op: KeyedProcessOperator, timer: Timer) -> None:
        super().__init__(op, timer.key, timer.timestamp, timer.timestamp)
        self._timer = timer

    def timestamp(self) -> int:
        return self._timer.timestamp

    def time_domain(self) -> TimeDomain:
        return self._timer.domain


class KeyedProcessOperator(TimedOperator):
    """Drives a KeyedProcessFunction with elements, watermarks and clock ticks."""

    #: The function class the operator runs (a subclass runs another kind of function the same way).
    function_type: type = KeyedProcessFunction

    def __init__(self, function: Any, *, clock: Clock | None = None) -> None:
        if not isinstance(function, self.function_type):
            raise TypeError(f"{type(self).__name__} runs a {self.function_type.__name__} subclass, got {function!r}")
        super().__init__(clock)
        self.function = function
        self._backend = KeyedStateBackend(self._clock)
        # (the key through the backend, not through ``self``: an operator without reference cycles is freed
        # as soon as its last reference goes, not by a pass of Python's cycle collector over all its state)
        self._timer_service = KeyedTimerService(self._timers, partial(getattr, self._backend, "current_key"))
        #: Whether the function takes a micro-batch's elements grouped by key (``process_batch``).
        self._batched = self._first_method == "process_element" and getattr(type(function), "takes_batches", lambda: False)()

    @property
    def state_backend(self) -> KeyedStateBackend:
        """The operator's keyed state (for queryable state and inspection)."""
        return self._backend

    @property
    def timer_service(self) -> InternalTimerService:
        return self._timers

    @property
    def num_late_records_dropped(self) -> int:
        """Late elements the function dropped, for a function that counts them (``CepOperator``); else 0."""
        return getattr(self.function, "num_late_records_dropped", 0)

    def open(self) -> None:
        """Call the function's ``open``; done automatically before the first element."""
        if not self._opened:
            self._opened = True
            call_open(self.function, RuntimeContext(type(self.function).__name__, state=StateStore(self._backend, VOID_NAMESPACE)))

    def close(self) -> None:
        if self._opened:
            self.function.close()

    def process_element(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        """Feed one element of ``key``; returns the records it emitted, in order."""
        if self._batched:
            return self.process_elements(((key, value, timestamp),))
        return self._emitting(partial(self._process_element, key, value, timestamp))

    def process_elements(self, elements: Iterable[tuple[Any, Any, int | None]]) -> list[OutputRecord]:
        """Feed ``(key, value, timestamp)`` elements (of the first input, for two) in order; returns what they
        emitted, in order: the same as ``process_element`` for each, in one call (a micro-batch's elements,
        without a call's set-up each)."""
        if self._batched:
            return self._emitting(partial(self._process_batch, elements))
        method = self._first_method

        def run() -> None:
            process = self._process_element
            for key, value, timestamp in elements:
                process(key, value, timestamp, method)

        return self._emitting(run)

    #: The function's method for the elements of ``process_elements``.
    _first_method = "process_element"

    def snapshot(self) -> dict[str, Any]:
        return {"state": self._backend.export_columns(), **self._time_snapshot()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._backend.import_rows(snapshot["state"])
        self._restore_time(snapshot)

    # -- internals ---------------------------------------------------------------------

    def _element_context(self, key: Any, timestamp: int | None) -> KeyedElementContext:
        return KeyedElementContext(self, key, timestamp, timestamp)

    def _timer_context(self, timer: Timer) -> KeyedTimerContext:
        return KeyedTimerContext(self, timer)

    def _process_element(self, key: Any, value: Any, timestamp: int | None, method: str = "process_element") -> None:
        self.open()
        self._backend.current_key = key
        ctx = self._element_context(key, timestamp)
        rows = getattr(self.function, method)(value, ctx)
        if rows is not None:  # (``None``: nothing emitted, the common case of a function that keeps state)
            self._out.extend(emitted(rows, f"{type(self.function).__name__}.{method}", timestamp, timestamp))

    def _process_batch(self, elements: Iterable[tuple[Any, Any, int | None]]) -> None:
        """``elements`` grouped by key, keys in the order of their first element, through ``process_batch``."""
        groups: dict[Any, KeyGroup] = {}
        for key, value, timestamp in elements:
            group = groups.get(key)
            if group is None:
                group = groups[key] = KeyGroup(key, [], [])
            group.values.append(value)
            group.timestamps.append(timestamp)
        if not groups:
            return
        self.open()
        ctx = self._element_context(None, None)
        where = f"{type(self.function).__name__}.process_batch"
        for row in collect_rows(self.function.process_batch(self._key_groups(groups.values(), ctx), ctx), where):
            tag = side_output_of(row) if type(row) is tuple else None
            timestamp = ctx._timestamp
            self._out.append(OutputRecord(row, timestamp) if tag is None else OutputRecord(row[1], timestamp, tag))

    def _key_groups(self, groups: Iterable[KeyGroup], ctx: KeyedElementContext) -> Iterator[KeyGroup]:
        """Each group in turn, its key made the current one (state, timers, ``ctx``) when it is given."""
        for group in groups:
            self._backend.current_key = group.key
            stamps = [t for t in group.timestamps if t is not None]
            ctx._key = group.key
            ctx._timestamp = ctx._side_timestamp = max(stamps) if stamps else None
            yield group

    def _on_timer(self, timer: Timer) -> None:
        self.open()
        self._backend.current_key = timer.key
        ctx = self._timer_context(timer)
        main_timestamp = timer.timestamp if timer.domain is TimeDomain.EVENT_TIME else None
        rows = self.function.on_timer(timer.timestamp, ctx)
        if rows is not None:
            self._out.extend(emitted(rows, f"{type(self.function).__name__}.on_timer", main_timestamp, timer.timestamp))

