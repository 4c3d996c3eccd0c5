"""What a Flink SQL query's FROM reads, lowered onto DataStreams: ``FromLowering``, the methods of
``funke.table.planner.Planner`` that turn a relation in FROM into a stream.

* a view or table by name (the planner's ``views``; a static table is refused here: a lookup join reads it);
* a subquery, lowered on its own;
* a window TVF, ``TABLE(TUMBLE(...))``, ``HOP``, ``CUMULATE`` or ``SESSION``: the view it reads and ``Tvf``, the
  window assigner it is (event or processing time, by its DESCRIPTOR) that the query's aggregation, join or
  Top-N windows the rows by;
* ``VALUES`` rows: a bounded stream (the planner's ``rows``), each column the common type of its values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from funke.connectors.tables import StaticTable
from funke.dialect.date_arithmetic import interval_ms
from funke.dialect.syntax import Descriptor, TableArg, WindowTvf
from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.semantics.windows import (
    CumulativeEventTimeWindows,
    CumulativeProcessingTimeWindows,
    EventTimeSessionWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)
from funke.table.namespace import object_name

#: Each window TVF's arguments, as a hint when they do not fit.
_TVF_SHAPES = {
    "TUMBLE": (3, "TABLE t, DESCRIPTOR(ts), size"),
    "HOP": (4, "TABLE t, DESCRIPTOR(ts), slide, size"),
    "CUMULATE": (4, "TABLE t, DESCRIPTOR(ts), step, size"),
    "SESSION": (3, "TABLE t [PARTITION BY key | (key, ...)], DESCRIPTOR(ts), gap"),
}


@dataclass(frozen=True)
class Tvf:
    """A window TVF in FROM: its name, the assigner it is, its time attribute, SESSION's keys."""

    kind: str
    assigner: WindowAssigner
    time: str
    partition: tuple[str, ...] | None = None


class FromLowering:
    """``Planner``'s FROM methods (``class Planner(..., FromLowering)``); ``_source`` is what the planner and the
    other lowerings call. They use the planner's ``lower``, ``refuse``, ``at``, ``typed_sql``, ``spark_sql``,
    ``_insert_only``, ``_no_window_columns`` and read its ``views`` and ``rows``. ``_interval_ms`` serves
    ``funke.table.over_lowering`` too."""

    def _source(self, node: exp.Expression) -> tuple[Any, Tvf | None]:
        if isinstance(node, exp.Subquery):
            return self.lower(node.this), None
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and node.this.name.upper() == "TABLE":
            inner = node.this.expressions[0] if len(node.this.expressions) == 1 else None
            if not isinstance(inner, WindowTvf):
                raise self.refuse(node, "a table function other than a window TVF")
            return self._window_tvf(inner)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            view = self._view(node)
            if isinstance(view, StaticTable):
                raise self.refuse(
                    node, f"reading the lookup table {node.name} here",
                    f"a static or jdbc table is read by a lookup join: FROM s JOIN {node.name} FOR SYSTEM_TIME AS OF s.ts AS t ON s.k = t.k",
                )
            return view, None
        if isinstance(node, exp.Values) and self.rows is not None:
            return self._values(node), None
        raise self.refuse(node, f"{node.sql(dialect='spark')} in FROM")

    def _values(self, node: exp.Values) -> Any:
        """``(VALUES (a, b), (c, d)) [AS t(x, y)]``: a bounded stream of its rows, each column the value of its row's
        expression (a CASE on the row's number, so Spark gives the column one type, the common type of its values,
        as Flink does); unnamed columns are ``EXPR$0``, ``EXPR$1``, ..."""
        rows = [list(t.expressions) if isinstance(t, exp.Tuple) else [t] for t in node.expressions]
        width = len(rows[0])
        for t, r in zip(node.expressions, rows, strict=True):
            if len(r) != width:
                raise PlanError(f"Flink SQL: the row {t.sql()} of VALUES at {self.at(t)} has {len(r)} value(s), the first row {width}")
        alias = node.args.get("alias")
        names = [c.name for c in alias.columns] if alias is not None and alias.columns else [f"EXPR${i}" for i in range(width)]
        if len(names) != width:
            raise PlanError(f"Flink SQL: VALUES at {self.at(node)} names {len(names)} columns for rows of {width}")
        assert self.rows is not None
        stream = self.rows(len(rows))
        number = exp.column("_fk_row")
        columns = []
        for j, name in enumerate(names):
            value = rows[-1][j].copy()
            if len(rows) > 1:
                ifs = [exp.If(this=exp.EQ(this=number.copy(), expression=exp.Literal.number(i)), true=r[j].copy()) for i, r in enumerate(rows[:-1])]
                value = exp.Case(ifs=ifs, default=value)
            typed = self.typed_sql(value, stream.schema)
            columns.append(Sql(f"{typed.text} AS `{name}`", declared=typed.declared))
        return stream.select(*columns)

    def _view(self, table: exp.Table) -> Any:
        name = object_name(table, f"{table.sql()} (at {self.at(table)})")
        if name not in self.views:
            known = ", ".join(sorted(v for v in self.views if not v.startswith("_fk_"))) or "none"
            raise PlanError(f"Flink SQL: no view named {name!r} (at {self.at(table)}); tables and views: {known}")
        return self.views[name]()

    def _window_tvf(self, tvf: WindowTvf) -> tuple[Any, Tvf]:
        kind = tvf.name.upper()
        args = tvf.expressions
        count, shape = _TVF_SHAPES[kind]  # (the dialect parses these four only)
        offset = 0
        if kind != "SESSION" and len(args) == count + 1:  # (TUMBLE, HOP, CUMULATE: an offset last, as in Flink)
            offset, args = self._interval_ms(args[-1], "the window offset"), args[:-1]
        if len(args) != count or not isinstance(args[0], TableArg) or not isinstance(args[1], Descriptor):
            offset_shape = "" if kind == "SESSION" else f" or {kind}({shape}, offset)"
            raise self.refuse(tvf, f"{kind} with these arguments", f"write {kind}({shape}){offset_shape}")
        partition = args[0].args.get("partition")
        if partition and kind != "SESSION":
            raise self.refuse(args[0], f"PARTITION BY in {kind}", "only SESSION takes keys; GROUP BY them")
        stream = self._view(args[0].this)
        self._insert_only(stream, args[0], f"a {kind} window", flink_takes=True)
        keys = tuple(c.name for c in partition or ())
        for c in partition or ():
            stream.schema.field(c.name, node=f"PARTITION BY at {self.at(c)}")
        columns = args[1].expressions
        time = columns[0].name if len(columns) == 1 else None
        attributes = [t for t in (stream.node.event_time, stream.node.proc_time) if t is not None]
        if time is None or time not in attributes:
            raise PlanError(
                f"Flink SQL: DESCRIPTOR({', '.join(c.sql() for c in columns)}) at {self.at(args[1])} must name a time "
                f"attribute of the view: {' or '.join(map(repr, attributes))} (the column its watermark is on, or a PROCTIME() column)"
                if attributes else
                f"Flink SQL: {kind} at {self.at(tvf)} needs a view with a time attribute: create it from a stream with "
                "watermarks (WATERMARK FOR ...), or add a processing-time one (pt AS PROCTIME())"
            )
        sizes = [self._interval_ms(a) for a in args[2:]]
        on_clock = time == stream.node.proc_time and time != stream.node.event_time
        try:
            # An offset shifts the windows' alignment (Flink's: any length, positive or negative; offsets a whole
            # alignment period apart give the same windows): taken modulo that period (HOP's slide, else the size).
            aligned = lambda period: offset % period if period > 0 else offset
            assigner: WindowAssigner = {
                "TUMBLE": lambda: (TumblingProcessingTimeWindows if on_clock else TumblingEventTimeWindows).of(sizes[0], aligned(sizes[0])),
                "HOP": lambda: (SlidingProcessingTimeWindows if on_clock else SlidingEventTimeWindows).of(sizes[1], sizes[0], aligned(sizes[0])),
                "CUMULATE": lambda: (CumulativeProcessingTimeWindows if on_clock else CumulativeEventTimeWindows).of(
                    sizes[1], sizes[0], aligned(sizes[1])
                ),
                "SESSION": lambda: (ProcessingTimeSessionWindows if on_clock else EventTimeSessionWindows).with_gap(sizes[0]),
            }[kind]()
        except ValueError as e:
            raise PlanError(f"Flink SQL: {kind} at {self.at(tvf)}: {e}") from None
        return stream, Tvf(kind, assigner, time, keys if partition else None)

    def _interval_ms(self, node: exp.Expression, what: str = "the window size") -> int:
        ms = interval_ms(node)
        if ms is not None:
            return ms
        raise self.refuse(node, f"{what} {node.sql()}", "write INTERVAL 'n' SECOND (or MILLISECOND, MINUTE, HOUR, DAY)")

    def _tvf_rows(self, stream: Any, where: exp.Where | None) -> Any:
        """A window TVF's view filtered by the WHERE of the query reading it (before windows are assigned)."""
        if where is None:
            return stream
        self._no_window_columns(where.this, "WHERE")
        return stream.filter(self.spark_sql(where.this, stream.schema))


def unqualify(query: exp.Select) -> None:
    """``t.x`` in ``query`` (not in its subqueries), with ``t`` its FROM relation or that's alias: the stream's column ``x``."""
    named = {query.args["from_"].this.alias_or_name} - {""}
    for column in query.find_all(exp.Column):
        if column.table and column.table in named and column.find_ancestor(exp.Select) is query:
            column.set("table", None)
