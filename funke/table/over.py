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

In batch mode (``OverAtEnd``) a key's rows are kept until the end of the input, then ordered by the window's
``ORDER BY`` (any columns; ties in arrival order, as funke's batch sort keeps them) and given their values as
above, peers being the rows equal in every ``ORDER BY`` column, and with the window functions that read the
whole partition (``WINDOW_FUNCTIONS``: LEAD, NTILE, CUME_DIST, PERCENT_RANK, RANK, DENSE_RANK, ROW_NUMBER).

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
from decimal import Decimal
from typing import Any

from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from funke.semantics.time import MAX_WATERMARK, timestamp_to_millis
from funke.table.aggregate import AggregateCall, apply_calls
from funke.table.rank import Order, compare, ranked

#: The window functions of a batch-mode OVER that read the whole partition, by name, with their result type
#: (LEAD's is its value's): each an ``AggregateCall`` whose arguments are columns (LEAD's value, offset and
#: default, as ``LAG``'s; NTILE's number of buckets; none for the others).
WINDOW_FUNCTIONS = {
    "lead": None, "ntile": "bigint", "cume_dist": "double", "percent_rank": "double", "rank": "bigint",
    "dense_rank": "bigint", "row_number": "bigint",
}  # fmt: skip


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


class OverAtEnd(OverAggregate):
    """An OVER aggregation in batch mode (the module's docstring): per key, the rows kept until the end of the
    input, then ordered by ``order`` and each given its frame's aggregates (LAG row by row, ``row_wise``) and
    its window functions (``calls`` named in ``WINDOW_FUNCTIONS``). ``RANGE n PRECEDING`` takes one ``ORDER BY``
    column: a number, or a time (n in milliseconds); the rows whose value is NULL are a frame of their own.

    >>> over = OverAtEnd([Order("v")], Frame("RANGE"), [AggregateCall("s", "sum", ("v",)), AggregateCall("r", "rank")])
    >>> [(r["v"], r["s"], r["r"]) for r in over.values([{"v": 2}, {"v": 1}, {"v": 2}])]
    [(1, 1, 1), (2, 5, 2), (2, 5, 2)]
    """

    def __init__(self, order: Sequence[Order], frame: Frame, calls: Sequence[AggregateCall]) -> None:
        self.order = tuple(order)
        self.window_calls = tuple(c for c in calls if c.name in WINDOW_FUNCTIONS)
        super().__init__(order[0].column if order else "", frame, [c for c in calls if c.name not in WINDOW_FUNCTIONS], row_wise=True)
        self.rows = ListStateDescriptor("rows")
        self.armed = ValueStateDescriptor("armed")

    def __repr__(self) -> str:  # (the plan's uid)
        return f"OverAtEnd({list(self.order)!r}, {str(self.frame)!r}, {[*self.calls, *self.window_calls]!r})"

    def process_element(self, value: dict[str, Any], ctx: Any) -> None:
        ctx.get_list_state(self.rows).add(value)
        armed = ctx.get_state(self.armed)
        if not armed.value():
            armed.update(True)
            ctx.timer_service().register_event_time_timer(MAX_WATERMARK)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[dict[str, Any]]:
        state = ctx.get_list_state(self.rows)
        rows = state.get()
        state.clear()
        ctx.get_state(self.armed).clear()
        yield from self.values(rows)

    def values(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A key's rows (in arrival order) in order, each with its values."""
        ordered = ranked(rows, self.order, None, stable=True)
        groups: list[list[dict[str, Any]]] = []  # (the peers: rows equal in every ORDER BY column)
        for row in ordered:
            if groups and compare(self.order, groups[-1][0], row) == 0:
                groups[-1].append(row)
            else:
                groups.append([row])
        acc, kept, out, previous = None, [], [], 0
        for group in groups:
            position = self._position(group[0])
            if (position is None) != (previous is None):  # (NULLs, first or last, are a RANGE frame of their own)
                acc, kept = None, []
            acc, kept, values = self.step(acc, kept, group, 0 if position is None else position)
            out += values
            previous = position
        start = 0
        for dense, group in enumerate(groups, 1):
            end = start + len(group)
            for i in range(start, end):
                out[i].update({c.alias: window_value(c, out, i, start, end, dense) for c in self.window_calls})
            start = end
        return out

    def _position(self, row: dict[str, Any]) -> Any:
        """A row's place for a ``RANGE n PRECEDING`` frame: its ORDER BY value (a time in milliseconds), negated
        when descending; None for a NULL; 0 for other frames."""
        if self.frame.kind != "RANGE" or self.frame.preceding is None:
            return 0
        v = row[self.order[0].column]
        if v is None:
            return None
        v = v if isinstance(v, (int, float, Decimal)) else timestamp_to_millis(v)
        return -v if self.order[0].descending else v


def window_value(call: AggregateCall, rows: list[dict[str, Any]], i: int, start: int, end: int, dense: int) -> Any:
    """The value of a window function (``WINDOW_FUNCTIONS``) for ``rows[i]``, ``rows`` a partition in order,
    the row's peers ``rows[start:end]``, their group the ``dense``-th.

    >>> rows = [{"v": 1}, {"v": 2}, {"v": 2}, {"v": 3}, {"v": 5}]
    >>> [window_value(AggregateCall("c", "cume_dist"), rows, i, s, e, d) for i, s, e, d in ((0, 0, 1, 1), (2, 1, 3, 2))]
    [0.2, 0.6]
    """
    n = len(rows)
    name = call.name
    if name == "row_number":
        return i + 1
    if name == "rank":
        return start + 1
    if name == "dense_rank":
        return dense
    if name == "percent_rank":
        return start / (n - 1) if n > 1 else 0.0
    if name == "cume_dist":
        return end / n
    if name == "ntile":  # (n rows in b buckets: the first n % b buckets one row larger than the others)
        size, extra = divmod(n, rows[i][call.args[0]])
        big = extra * (size + 1)
        return i // (size + 1) + 1 if i < big else extra + (i - big) // size + 1
    if name == "lead":
        value, offset, default = call.args
        j = i + rows[i][offset]  # (a negative offset reads the rows before, as LAG)
        return rows[j][value] if 0 <= j < n else rows[i][default]
    raise ValueError(f"unknown window function {name!r}: use {', '.join(WINDOW_FUNCTIONS)}")
