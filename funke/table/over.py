"""Flink SQL's OVER aggregations on event time (``SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2
PRECEDING AND CURRENT ROW)``) as a keyed process function, Flink's ``RowTime*PrecedingFunction``s.

Each row gets one output row: itself and each aggregate over its frame, an insert-only result. A row
waits until the watermark passes its time, then the rows of one time are taken in arrival order:

* ``ROWS BETWEEN n PRECEDING AND CURRENT ROW``: the row and the n rows before it (by time, ties in arrival
  order); ``UNBOUNDED PRECEDING``: every row of the key up to it;
* ``RANGE BETWEEN INTERVAL ... PRECEDING AND CURRENT ROW``: every row whose time is at most the interval
  before the row's time, rows of the same time (its peers) included, so peers get the same values;
  ``RANGE UNBOUNDED PRECEDING`` (the default frame) every row up to the row's time.

A row whose time is not after the watermark when it arrives is late: dropped and counted
(``num_late_records_dropped``), as Flink drops it.

On processing time (``processing``: ``ORDER BY`` a ``PROCTIME()`` attribute, whose value is the row's
micro-batch time) a row waits for a processing-time timer at its time instead, so the rows of one
micro-batch are peers and leave together at the next advance of processing time (Flink's
``ProcTime*PrecedingFunction``s process a row at once, or, ``RANGE`` with an interval, a millisecond's
rows together); nothing is late. Aggregates are Flink's built-ins
(``funke.table.builtin_aggregates``), accumulated as rows enter the frame and retracted as they leave it.

>>> over = OverAggregate("ts", Frame("ROWS", 1), [AggregateCall("s", "sum", ("v",))])
>>> acc, kept, out = None, [], []
>>> for row in ({"ts": 1, "v": 1}, {"ts": 2, "v": 2}, {"ts": 2, "v": 4}):
...     acc, kept, rows = over.step(acc, kept, [row])
...     out += [r["s"] for r in rows]
>>> out
[1, 3, 6]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.state import MapStateDescriptor, ValueStateDescriptor
from funke.semantics.time import timestamp_to_millis
from funke.table.aggregate import AggregateCall, apply_calls


@dataclass(frozen=True)
class Frame:
    """An OVER window's frame ending at the current row: ``ROWS`` (``preceding`` rows before it) or
    ``RANGE`` (``preceding`` milliseconds before its time); ``preceding`` None: ``UNBOUNDED``."""

    kind: str
    preceding: int | None = None

    def __str__(self) -> str:
        start = "UNBOUNDED" if self.preceding is None else f"{self.preceding}{' ms' if self.kind == 'RANGE' else ''}"
        return f"{self.kind} BETWEEN {start} PRECEDING AND CURRENT ROW"


class OverAggregate(KeyedProcessFunction):
    """Per key: the rows waiting for the watermark (by time), the frame's accumulators and the rows in the
    frame (for a bounded one, to retract them as they leave)."""

    def __init__(self, time: str, frame: Frame, calls: Sequence[AggregateCall], *, processing: bool = False, row_wise: bool = False) -> None:
        self.time, self.frame, self.calls, self.processing = time, frame, tuple(calls), processing
        #: Batch mode: a LAG reads the rows before its own, the rows of one time one by one (as Flink's batch
        #: OVER does), not the value the last of them sees (its streaming one).
        self.row_wise = row_wise
        self.pending = MapStateDescriptor("pending")
        self.accumulators = ValueStateDescriptor("accumulators")
        self.kept = ValueStateDescriptor("kept")
        self.num_late_records_dropped = 0
        self._functions = [c.make(retracting=frame.preceding is not None) for c in self.calls]

    def __repr__(self) -> str:  # (the plan's uid)
        on = (", processing=True" if self.processing else "") + (", row_wise=True" if self.row_wise else "")
        return f"OverAggregate({self.time!r}, {str(self.frame)!r}, {list(self.calls)!r}{on})"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "num_late_records_dropped": 0}

    def process_element(self, value: dict[str, Any], ctx: Any) -> None:
        t = value[self.time]
        if t is None:
            raise ValueError(f"OVER aggregation: a row without its time attribute {self.time}: {value!r}")
        ms = t if isinstance(t, int) else timestamp_to_millis(t)
        timers = ctx.timer_service()
        if not self.processing and ms <= timers.current_watermark():
            self.num_late_records_dropped += 1
            return
        pending = ctx.get_map_state(self.pending)
        rows = pending.get(ms) or []
        pending.put(ms, [*rows, value])
        if self.processing:
            timers.register_processing_time_timer(ms)
        else:
            timers.register_event_time_timer(ms)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[dict[str, Any]]:
        pending = ctx.get_map_state(self.pending)
        rows = pending.get(timestamp) or []
        pending.remove(timestamp)
        acc_state, kept_state = ctx.get_state(self.accumulators), ctx.get_state(self.kept)
        acc, kept, out = self.step(acc_state.value(), kept_state.value() or [], rows, timestamp)
        acc_state.update(acc)
        kept_state.update(kept)
        yield from out

    def step(
        self, acc: list[Any] | None, kept: list[list[Any]], rows: list[dict[str, Any]], ms: int | None = None
    ) -> tuple[list[Any], list[list[Any]], list[dict[str, Any]]]:
        """The accumulators and the frame's rows (``[time, row]``, oldest first) after the rows of one time
        (``ms``; taken from the first row when None), and their output rows."""
        if ms is None:
            t = rows[0][self.time]
            ms = t if isinstance(t, int) else timestamp_to_millis(t)
        acc = [f.create_accumulator() for f in self._functions] if acc is None else acc
        kept = list(kept)
        bounded = self.frame.preceding is not None
        out = []
        if self.frame.kind == "RANGE":
            if bounded:
                while kept and kept[0][0] < ms - self.frame.preceding:  # type: ignore[operator]
                    self._retract(acc, kept.pop(0)[1])
            own = []
            for row in rows:
                self._accumulate(acc, row)
                if bounded:
                    kept.append([ms, row])
                own.append(self._values(acc, lag_only=True) if self.row_wise else {})
            values = self._values(acc)
            out = [{**row, **values, **mine} for row, mine in zip(rows, own, strict=True)]
        else:
            for row in rows:
                self._accumulate(acc, row)
                if bounded:
                    kept.append([ms, row])
                    if len(kept) > self.frame.preceding + 1:  # type: ignore[operator]
                        self._retract(acc, kept.pop(0)[1])
                out.append({**row, **self._values(acc)})
        return acc, kept, out

    def _accumulate(self, acc: list[Any], row: dict[str, Any]) -> None:
        apply_calls(self.calls, self._functions, acc, row, retract=False)  # (a call's FILTER: ARRAY_AGG's IGNORE NULLS)

    def _retract(self, acc: list[Any], row: dict[str, Any]) -> None:
        apply_calls(self.calls, self._functions, acc, row, retract=True)

    def _values(self, acc: list[Any], *, lag_only: bool = False) -> dict[str, Any]:
        return {c.alias: f.get_value(a) for f, a, c in zip(self._functions, acc, self.calls, strict=True) if c.name == "lag" or not lag_only}
