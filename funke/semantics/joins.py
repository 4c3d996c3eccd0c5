"""Two-input joins in Flink's semantics: the interval join and the window join / co-group.

:class:`IntervalJoinOperator` is Flink's ``IntervalJoinOperator``: keyed, a left element at
time ``t`` meets every right element of its key with time in ``[t + lower, t + upper]``::

    op = IntervalJoinOperator(Pairs(), lower=-2, upper=1)
    op.process_element1("a", "L", 10)     # -> []  (buffered)
    op.process_element2("a", "R", 9)      # -> [OutputRecord(("L", "R"), 10)]

Flink's rules, kept exactly (``IntervalJoinOperator.java``):

* an element is late when its timestamp is below the current watermark (``t < wm``; an
  element *at* the watermark is on time) and is then dropped unseen;
* every pair goes to ``ProcessJoinFunction.process_element(left, right, ctx)`` when its
  second element arrives; its timestamp is the larger of the two;
* exclusive bounds move the bound by one millisecond (``lower + 1``, ``upper - 1``);
* buffers are cleaned by event-time timers: a left element at ``t`` at watermark
  ``t + upper`` (``t`` when ``upper <= 0``), a right element at ``t`` at ``t - lower``
  (``t`` when ``lower >= 0``). A timer fires when the watermark *reaches* its time, so an
  element arriving exactly at the watermark no longer meets a partner whose timer has
  just fired (the one at the far edge of its interval), as in Flink; a timer registered at
  or below the current watermark fires at the next watermark advance.

The window join and co-group (Flink's ``JoinedStreams`` / ``CoGroupedStreams``) are what
Flink makes of them: both inputs tagged, united, keyed, windowed by the window operator,
and on firing :class:`CoGroupWindowFunction` splits a window's elements back into the two
sides. :class:`WindowJoinOperator` drives that from two inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from funke.semantics.functions import OutputRecord, OutputTag, ProcessWindowFunction, collect_rows, emitted
from funke.semantics.operator import TimedOperator
from funke.semantics.rich import Function, RuntimeContext, call_open
from funke.semantics.time import MIN_WATERMARK
from funke.semantics.timers import Timer
from funke.semantics.window_operator import WindowOperator, WindowProcess, WindowSpec

__all__ = [
    "CoGroupFunction",
    "CoGroupWindowFunction",
    "IntervalJoinOperator",
    "JoinFunction",
    "PairColumns",
    "ProcessJoinFunction",
    "Tagged",
    "WindowJoinOperator",
]

_LEFT, _RIGHT = "left", "right"


# --------------------------------------------------------------------------- user functions


class ProcessJoinFunction(Function):
    """Flink's ``ProcessJoinFunction``: ``process_element(left, right, ctx)`` yields rows per joined pair.

    ``ctx.get_left_timestamp()``, ``ctx.get_right_timestamp()``, ``ctx.get_timestamp()`` (the
    pair's: the larger of the two) and ``ctx.output(tag, value)`` (or ``yield tag, value``) for side outputs.
    """

    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(left, right, ctx) is not implemented")

    def close(self) -> None:
        return None


class PairColumns(ProcessJoinFunction):
    """An interval join's ``.select(...)`` as a join function: per pair, the named columns of either side.

    ``columns`` are ``(side, column, alias)`` with side ``"left"`` or ``"right"``.
    """

    def __init__(self, columns: Iterable[tuple[str, str, str]]) -> None:
        self.columns = tuple(columns)

    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterable[Any]:
        yield {alias: (left if side == _LEFT else right)[column] for side, column, alias in self.columns}


class JoinFunction(Function):
    """Flink's ``JoinFunction`` of a window join: ``join(left, right)`` returns one row per pair."""

    def join(self, left: Any, right: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.join(left, right) is not implemented")


class CoGroupFunction(Function):
    """Flink's ``CoGroupFunction``: ``co_group(lefts, rights)`` yields rows per key and window.

    It runs for every key and window with at least one element on either side (one of the
    lists may be empty), which is how outer joins are written.
    """

    def co_group(self, lefts: list[Any], rights: list[Any]) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.co_group(lefts, rights) is not implemented")


# --------------------------------------------------------------------------- interval join


class _JoinContext:
    def __init__(self, op: IntervalJoinOperator) -> None:
        self._op = op
        self.left_timestamp = MIN_WATERMARK
        self.right_timestamp = MIN_WATERMARK

    def get_left_timestamp(self) -> int:
        return self.left_timestamp

    def get_right_timestamp(self) -> int:
        return self.right_timestamp

    def get_timestamp(self) -> int:
        return max(self.left_timestamp, self.right_timestamp)

    def output(self, tag: OutputTag, value: Any) -> None:
        if not isinstance(tag, OutputTag):
            raise TypeError(f"output() needs an OutputTag as its first argument, got {tag!r}")
        self._op._out.append(OutputRecord(value, self.get_timestamp(), tag))


class IntervalJoinOperator(TimedOperator):
    """Runs a :class:`ProcessJoinFunction` over two keyed inputs, their watermark, and cleanup timers."""

    def __init__(
        self,
        function: ProcessJoinFunction,
        *,
        lower: int,
        upper: int,
        lower_inclusive: bool = True,
        upper_inclusive: bool = True,
    ) -> None:
        if not isinstance(function, ProcessJoinFunction):
            raise TypeError(f"IntervalJoinOperator runs a ProcessJoinFunction subclass, got {function!r}")
        for name, bound in (("lower", lower), ("upper", upper)):
            if isinstance(bound, bool) or not isinstance(bound, int):
                raise TypeError(f"interval bounds are int milliseconds, got {name}={bound!r}")
        if lower > upper:
            raise ValueError(f"the interval join needs lower <= upper, got lower={lower} ms, upper={upper} ms")
        super().__init__()
        self.function = function
        self.lower = lower if lower_inclusive else lower + 1
        self.upper = upper if upper_inclusive else upper - 1
        #: key -> side -> timestamp -> elements in arrival order (Flink's MapState<Long, List<T>>)
        self._buffers: dict[Any, dict[str, dict[int, list[Any]]]] = {}
        self._late_dropped = 0

    @property
    def num_late_records_dropped(self) -> int:
        return self._late_dropped

    def buffered(self, key: Any, side: str) -> dict[int, list[Any]]:
        """What the operator keeps of one side for ``key`` (``"left"`` / ``"right"``): timestamp -> elements."""
        return {t: list(v) for t, v in self._buffers.get(key, {}).get(side, {}).items()}

    def process_element1(self, key: Any, value: Any, timestamp: int) -> list[OutputRecord]:
        """Feed one left element; returns the pairs it completed, in order."""
        return self._emitting(partial(self._process, key, value, timestamp, _LEFT))

    def process_element2(self, key: Any, value: Any, timestamp: int) -> list[OutputRecord]:
        """Feed one right element; returns the pairs it completed, in order."""
        return self._emitting(partial(self._process, key, value, timestamp, _RIGHT))

    def advance_watermark(self, watermark: int) -> list[OutputRecord]:
        """Move event time (the minimum of both inputs' watermarks) and clean the buffers it passed.

        Only a watermark above the current one does anything: Flink hands an operator only
        increasing watermarks, so a cleanup timer registered at or below the current watermark
        waits for the next advance (until then its element still joins).
        """
        if watermark <= self._timers.current_watermark:
            return []
        return super().advance_watermark(watermark)

    def advance_processing_time(self, time: int | None = None) -> list[OutputRecord]:
        """Processing time moves nothing here: the interval join has only event-time timers."""
        return []

    def close(self) -> None:
        if self._opened:
            self.function.close()

    def snapshot(self) -> dict[str, Any]:
        rows = [
            {"key": key, "side": side, "timestamp": t, "values": list(values)}
            for key, sides in self._buffers.items()
            for side, buffer in sides.items()
            for t, values in buffer.items()
        ]
        return {
            "buffers": rows,
            # the timers' namespace is the side they clean (a plain string, not a window)
            "timers": [{"key": k, "side": side, "timestamp": t} for t, k, side in self._timers.event_time_timers()],
            "watermark": self._timers.current_watermark,
            "late_records_dropped": self._late_dropped,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        for row in snapshot["buffers"]:
            self._buffers.setdefault(row["key"], {}).setdefault(row["side"], {})[row["timestamp"]] = list(row["values"])
        for row in snapshot["timers"]:
            self._timers.register_event_time_timer(row["key"], row["side"], row["timestamp"])
        self._timers.restore_watermark(snapshot["watermark"])
        self._late_dropped = snapshot.get("late_records_dropped", 0)

    # -- internals ---------------------------------------------------------------------

    def _process(self, key: Any, value: Any, timestamp: int, side: str) -> None:
        if isinstance(timestamp, bool) or not isinstance(timestamp, int):
            raise TypeError(f"interval join elements need int epoch-millisecond timestamps, got {timestamp!r}")
        wm = self._timers.current_watermark
        if wm != MIN_WATERMARK and timestamp < wm:
            self._late_dropped += 1
            return
        if not self._opened:
            self._opened = True
            call_open(self.function, RuntimeContext(type(self.function).__name__))
        sides = self._buffers.setdefault(key, {})
        sides.setdefault(side, {}).setdefault(timestamp, []).append(value)
        is_left = side == _LEFT
        # Relative to this element, the other side's partners lie in [t + lo, t + hi].
        lo, hi = (self.lower, self.upper) if is_left else (-self.upper, -self.lower)
        other = sides.get(_RIGHT if is_left else _LEFT, {})
        for t_other, partners in list(other.items()):
            if t_other < timestamp + lo or t_other > timestamp + hi:
                continue
            for partner in list(partners):
                if is_left:
                    self._collect(value, partner, timestamp, t_other)
                else:
                    self._collect(partner, value, t_other, timestamp)
        cleanup = timestamp + hi if hi > 0 else timestamp
        self._timers.register_event_time_timer(key, side, cleanup)

    def _collect(self, left: Any, right: Any, left_ts: int, right_ts: int) -> None:
        ctx = _JoinContext(self)
        ctx.left_timestamp, ctx.right_timestamp = left_ts, right_ts
        rows = self.function.process_element(left, right, ctx)
        stamp = max(left_ts, right_ts)
        self._out.extend(emitted(rows, f"{type(self.function).__name__}.process_element", stamp, stamp))

    def _on_timer(self, timer: Timer) -> None:
        side = timer.namespace
        if side == _LEFT:
            t = timer.timestamp if self.upper <= 0 else timer.timestamp - self.upper
        else:
            t = timer.timestamp + self.lower if self.lower <= 0 else timer.timestamp
        sides = self._buffers.get(timer.key)
        if sides is None:
            return
        sides.get(side, {}).pop(t, None)
        if not any(sides.values()):
            del self._buffers[timer.key]


# --------------------------------------------------------------------------- window join / co-group


@dataclass(frozen=True)
class Tagged:
    """An element of a window join's united input: which side it came from, and the element."""

    side: str
    value: Any


class CoGroupWindowFunction(ProcessWindowFunction):
    """The window function behind a window join / co-group: splits a window's tagged elements.

    A :class:`CoGroupFunction` sees both lists; a :class:`JoinFunction` is called once per
    (left, right) pair in arrival order (left-major), so a window with one side empty
    yields nothing, as Flink's inner window join does.
    """

    def __init__(self, function: CoGroupFunction | JoinFunction) -> None:
        if not isinstance(function, (CoGroupFunction, JoinFunction)):
            raise TypeError(f"a window join runs a JoinFunction or CoGroupFunction subclass, got {function!r}")
        self.function = function

    def process(self, key: Any, ctx: Any, elements: list[Any]) -> Iterable[Any]:
        lefts = [e.value for e in elements if e.side == _LEFT]
        rights = [e.value for e in elements if e.side == _RIGHT]
        if isinstance(self.function, CoGroupFunction):
            yield from collect_rows(self.function.co_group(lefts, rights), f"{type(self.function).__name__}.co_group")
            return
        for left in lefts:
            for right in rights:
                yield self.function.join(left, right)


class WindowJoinOperator(WindowOperator):
    """Flink's window join / co-group over two keyed inputs: the window operator over tagged elements.

    Results are :class:`~funke.semantics.window_operator.WindowResult` s (key, window, row),
    timestamped ``window.max_timestamp`` like every window result.
    """

    def __init__(self, spec: WindowSpec, function: CoGroupFunction | JoinFunction) -> None:
        if spec.evictor is not None or spec.late_data_tag is not None:
            raise ValueError(
                "a window join takes an assigner (and optionally a trigger or allowed lateness), no evictor or late-data tag"
            )
        super().__init__(spec, WindowProcess(CoGroupWindowFunction(function)))

    def process_element1(self, key: Any, value: Any, timestamp: int) -> list[OutputRecord]:
        return super().process_element(key, Tagged(_LEFT, value), timestamp)

    def process_element2(self, key: Any, value: Any, timestamp: int) -> list[OutputRecord]:
        return super().process_element(key, Tagged(_RIGHT, value), timestamp)

    def process_element(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        raise TypeError("a WindowJoinOperator has two inputs: call process_element1 or process_element2")
