"""Flink SQL's ``ORDER BY`` and ``LIMIT`` outside a window: the Top-N a sort with a limit is in a
stream, and the two sorts Flink runs without one.

* **On a time attribute, in a stream** (``ORDER BY ts[, more]``, ``ts`` the view's event-time or
  ``PROCTIME()`` attribute, ascending): Flink's temporal sort. A row waits until the watermark passes its
  time (on processing time: until the next advance of the clock); then the rows of one time leave
  together, ordered by the rest of the ``ORDER BY``. An insert-only result; a row not after the
  watermark when it arrives is late: dropped and counted (``num_late_records_dropped``), as Flink drops it.
* **Of the whole input, in batch mode** (any ``ORDER BY`` of columns, ``[LIMIT n] [OFFSET m]``): every
  row is kept until the end of the input (the watermark reaches +infinity), then the result leaves in
  order, each row an insert. An updating input is applied first (a ``-U``/``-D`` row takes an equal row
  away), so the sort sees the input's final rows, as a Flink batch job's sort does.
* **A sort with a limit in a stream** (``ORDER BY ... LIMIT n [OFFSET m]``, ``LIMIT n [OFFSET m]``): Flink's
  Top-N over the whole result (``funke.table.rank``) with the rank range m + 1 to m + n, an updating result
  when ordered.
* **A Top-N by RANK() or DENSE_RANK(), in batch mode** (``RankAtEnd``): each key's rows kept until the end of
  the input, as the batch sort keeps them, then ranked.

Each runs as a keyed process function of one key: Flink runs a sort with parallelism 1 too.

>>> s = Sort([Order("v", descending=True)], limit=2, offset=1)
>>> [r["v"] for r in s.sorted([{"v": 1}, {"v": 3}, {"v": 2}, {"v": 5}])]
[3, 2]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlglot import exp

from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.plan.types import Field, Schema
from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from funke.semantics.time import MAX_WATERMARK, timestamp_to_millis
from funke.table.changelog import ROW_KIND, changelog_mode, is_retraction
from funke.table.lowering import is_updating, kind_first
from funke.table.rank import Order, RetractableTopN, TopN, in_range, ranked


class Sort(KeyedProcessFunction):
    """``ORDER BY`` as Flink runs it without a window (the module's docstring): on the time attribute
    ``time`` (its rows leave as the watermark, or with ``processing`` the clock, passes them), or, with
    ``time`` None, of the whole input at its end, ``offset`` rows skipped and at most ``limit`` kept."""

    def __init__(
        self, order: Sequence[Order], *, time: str | None = None, processing: bool = False, limit: int | None = None, offset: int = 0
    ) -> None:  # fmt: skip
        if time is not None and (limit is not None or offset):
            raise ValueError("a sort on a time attribute takes no LIMIT or OFFSET (that is a Top-N)")
        self.order, self.time, self.processing, self.limit, self.offset = tuple(order), time, processing, limit, offset
        self.pending = MapStateDescriptor("pending")  # (on a time attribute: its time to the rows waiting)
        self.rows = ListStateDescriptor("rows")  # (of the whole input: every row so far)
        self.armed = ValueStateDescriptor("armed")  # (of the whole input: whether the end-of-input timer is set)
        self.num_late_records_dropped = 0

    def __repr__(self) -> str:  # (the plan's uid)
        on = f", time={self.time!r}{', processing=True' if self.processing else ''}" if self.time else ""
        return f"Sort({list(self.order)!r}{on}, limit={self.limit}, offset={self.offset})"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "num_late_records_dropped": 0}

    def sorted(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``rows`` (in arrival order) in order: ties keep their arrival order, then the offset and limit."""
        out = ranked(rows, self.order, len(rows), stable=True)[self.offset :]
        return out if self.limit is None else out[: self.limit]

    def process_element(self, value: dict[str, Any], ctx: Any) -> None:
        timers = ctx.timer_service()
        if self.time is None:
            self._keep(value, ctx)
            armed = ctx.get_state(self.armed)
            if not armed.value():
                armed.update(True)
                timers.register_event_time_timer(MAX_WATERMARK)
            return
        t = value[self.time]
        if t is None:
            raise ValueError(f"ORDER BY {self.time}: a row without its time attribute: {value!r}")
        ms = t if isinstance(t, int) else timestamp_to_millis(t)
        if not self.processing and ms <= timers.current_watermark():
            self.num_late_records_dropped += 1
            return
        pending = ctx.get_map_state(self.pending)
        pending.put(ms, [*(pending.get(ms) or []), value])
        if self.processing:
            timers.register_processing_time_timer(ms)
        else:
            timers.register_event_time_timer(ms)

    def _keep(self, value: dict[str, Any], ctx: Any) -> None:
        """Keep an input row; a retraction (``-U``/``-D``) takes the first equal kept row away instead."""
        state = ctx.get_list_state(self.rows)
        if ROW_KIND not in value:
            state.add(value)
            return
        row = {k: v for k, v in value.items() if k != ROW_KIND}
        if not is_retraction(value):
            state.add(row)
            return
        rows = state.get()
        if row not in rows:
            raise ValueError(f"ORDER BY: the input retracts a row it never inserted: {row!r}")
        rows.remove(row)
        state.update(rows)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[dict[str, Any]]:
        if self.time is None:
            state = ctx.get_list_state(self.rows)
            rows = state.get()
            state.clear()
            ctx.get_state(self.armed).clear()
            yield from self.sorted(rows)
            return
        pending = ctx.get_map_state(self.pending)
        rows = pending.get(timestamp) or []
        pending.remove(timestamp)
        yield from ranked(rows, self.order[1:], len(rows), stable=True)


class RankAtEnd(Sort):
    """A Top-N by ``RANK()`` or ``DENSE_RANK()`` (``function``) in batch mode, as Flink's batch rank runs it:
    a key's rows kept until the end of the input (an updating input's retractions applied), then those
    ranked ``start`` to ``end`` inserted in order (ties in arrival order), with their rank in ``rownum``.

    >>> top = RankAtEnd([Order("v", descending=True)], "RANK", 1, 2, "rk")
    >>> [(r["v"], r["rk"]) for r in top.sorted([{"v": 1}, {"v": 3}, {"v": 3}, {"v": 2}])]
    [(3, 1), (3, 1)]
    """

    def __init__(self, order: Sequence[Order], function: str, start: int, end: int, rownum: str) -> None:
        super().__init__(order)
        self.function, self.start, self.end, self.rownum = function, start, end, rownum

    def __repr__(self) -> str:  # (the plan's uid)
        return f"RankAtEnd({list(self.order)!r}, {self.function!r}, {self.start}, {self.end}, rownum={self.rownum!r})"

    def sorted(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kept = in_range(rows, self.order, self.start, self.end, function=self.function, stable=True)
        return [{**row, self.rownum: rank} for rank, row in kept]


class SortLowering:
    """``Planner``'s ORDER BY / LIMIT / OFFSET (``class Planner(SortLowering)``): ``lower`` calls
    ``_sort_limit`` for a SELECT with any of them. ``batch`` is the planner's: whether the environment
    runs in batch mode."""

    def _sort_limit(self: Any, query: exp.Select) -> Any:
        """The SELECT without its ORDER BY / LIMIT / OFFSET, then the sort or Top-N the module's docstring
        names. In a stream, a sort without a limit must lead with a time attribute, ascending, and OFFSET
        takes a LIMIT."""
        order_by, limit, offset = (query.args.get(a) for a in ("order", "limit", "offset"))
        if offset is None and limit is not None:
            offset = limit.args.get("offset")
        count = self._whole(limit.expression, limit, "LIMIT", positive=True) if limit is not None else None
        skip = self._whole(offset.expression if isinstance(offset, exp.Offset) else offset, offset, "OFFSET", positive=False) if offset is not None else 0
        inner = query.copy()
        for arg in ("order", "limit", "offset"):
            inner.set(arg, None)
        terms = list(order_by.expressions) if order_by is not None else []
        targets = [self._order_target(inner, o.this) for o in terms]
        hidden = [i.alias for i in inner.expressions[len(query.expressions) :]]  # (the ones _order_target added)
        stream = self.lower(inner)
        schema = stream.schema.without((ROW_KIND,))
        shown = [c for c in schema.names if c not in hidden]
        order = []
        for o, target in zip(terms, targets, strict=True):
            if isinstance(target, int):  # (ORDER BY 2: the result's second column)
                if not 1 <= target <= len(shown):
                    raise PlanError(f"Flink SQL: ORDER BY {target} at {self.at(o)}: ordinal out of range (the result has {len(shown)} columns)")
                target = shown[target - 1]
            schema.field(target, node=f"ORDER BY at {self.at(o)}")
            order.append(Order(target, bool(o.args.get("desc")), bool(o.args.get("nulls_first"))))
        key = self._hide()
        keyed = stream.with_column(key, Sql("0", declared="int")).key_by([key], nulls=True)
        columns = [f"`{c}`" for c in shown]
        if self.batch and (order or skip):
            if is_updating(stream):
                self._known_types(stream, "ORDER BY over an updating result")
            return keyed.process(Sort(order, limit=count, offset=skip), output_schema=schema, name="Sort").select(*columns)
        if skip and count is None:
            raise PlanError(
                f"Flink SQL: OFFSET {skip} without LIMIT at {self.at(offset)} in streaming mode: as in Flink, a stream skips rows "
                "only in a Top-N; add LIMIT n, or run in batch mode"
            )
        if count is None and not order:  # (OFFSET 0 alone: every row as it is)
            return stream
        if count is None:
            return self._temporal_sort(stream, keyed, order, order_by, columns)
        rownum = self._hide()
        ddl = Schema((Field(ROW_KIND, "string"), *schema.fields, Field(rownum, "bigint")))
        fn: Any
        ranks = {"start": skip + 1} if skip else {}  # (LIMIT n OFFSET m: the ranks m + 1 to m + n, as Flink plans it)
        if is_updating(stream):
            self._known_types(stream, "ORDER BY ... LIMIT over an updating result")
            fn = RetractableTopN(order, skip + count, rownum, numbered=False, ttl_ms=self.state_ttl_ms, partition=(), **ranks)
        else:
            fn = TopN(order, skip + count, rownum, numbered=False, ttl_ms=self.state_ttl_ms, partition=(), **ranks)
        top = keyed.process(fn, output_schema=ddl)
        if not changelog_mode(top.node).updating:  # (LIMIT alone: the first n rows, each an insert)
            return top.select(*columns)
        return top.select(*kind_first(top, columns))

    def final_rows(self: Any, stream: Any) -> Any:
        """An updating result's final rows, each an insert, at the end of the input, as Flink's batch operators
        give a batch-mode query's: its changes applied per upsert key (the whole result one group where none is
        known), what is left inserted in the order it came (a ``Sort`` of no order)."""
        self._known_types(stream, "a batch-mode query with an updating result")
        schema = stream.schema.without((ROW_KIND,))
        key = changelog_mode(stream.node).upsert_key
        if key:
            keyed = stream.key_by(list(key), nulls=True)
        else:
            hidden = self._hide()
            keyed = stream.with_column(hidden, Sql("0", declared="int")).key_by([hidden], nulls=True)
        return keyed.process(Sort([]), output_schema=schema, name="FinalRows").select(*(f"`{c}`" for c in schema.names))

    def _order_target(self: Any, select: exp.Select, e: exp.Expression) -> int | str:
        """What an ORDER BY term sorts on: a position of the result (``ORDER BY 2``, or an expression the SELECT
        list has, such as ``COUNT(*)``), a column of the result by name, or else a hidden column of ``select``
        computing it (``ORDER BY amt`` not selected, ``ORDER BY id * -1``), which the result leaves out. A
        SELECT DISTINCT sorts only on what its columns give, as in Flink."""
        items = select.expressions
        starred = any(isinstance(i, exp.Star) or (isinstance(i, exp.Column) and isinstance(i.this, exp.Star)) for i in items)  # (*, t.*)
        if isinstance(e, exp.Literal) and e.is_int:
            return int(e.this)
        if isinstance(e, exp.Column) and not e.table and (starred or e.name in select.named_selects):
            return e.name
        if not starred and (same := next((n for n, i in enumerate(items, 1) if i.unalias() == e), None)) is not None:
            return same
        if select.args.get("distinct"):
            outside = [c for c in e.find_all(exp.Column) if c.table or not (starred or c.name in select.named_selects)]
            if outside or not any(True for _ in e.find_all(exp.Column)):
                raise PlanError(f"Flink SQL: ORDER BY {e.sql()} at {self.at(e)}: expression {e.sql()!r} is not in the select clause of the SELECT DISTINCT")
        name = self._hide()
        select.append("expressions", exp.alias_(e.copy(), name))
        return name

    def _temporal_sort(self: Any, stream: Any, keyed: Any, order: list[Order], order_by: exp.Order, columns: list[str]) -> Any:
        """``ORDER BY ts[, more]`` in a stream: ``ts`` a time attribute of the result, ascending."""
        attributes = [t for t in (stream.node.event_time, stream.node.proc_time) if t is not None]
        if not order or order[0].column not in attributes or order[0].descending:
            raise PlanError(
                f"Flink SQL: {order_by.sql()} at {self.at(order_by)} without LIMIT in streaming mode: as in Flink, a stream is "
                f"sorted only on a time attribute, ascending, first; lead with {' or '.join(attributes) or 'one (the result has none)'}, "
                "add LIMIT n (a Top-N), or run in batch mode"
            )
        self._insert_only(stream, order_by, "ORDER BY a time attribute")
        processing = order[0].column != stream.node.event_time
        schema = stream.schema
        return keyed.process(Sort(order, time=order[0].column, processing=processing), output_schema=schema, name="Sort").select(*columns)

    def _whole(self: Any, value: exp.Expression, node: exp.Expression, what: str, *, positive: bool) -> int:
        """The whole number of a LIMIT (> 0) or OFFSET (>= 0), else refused naming it."""
        if isinstance(value, exp.Literal) and value.is_int and int(value.this) >= (1 if positive else 0):
            return int(value.this)
        raise self.refuse(node, f"{what} {value.sql()}", f"{what} takes a {'positive' if positive else 'non-negative'} whole number")
