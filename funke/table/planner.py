"""A Flink SQL query (parsed by ``funke.table.dialect``) lowered onto DataStream operations.

What runs (the first part of Flink SQL's streaming dialect):

* ``SELECT <expressions> FROM <view> [WHERE <condition>]``: a filter and a projection;
* a window aggregation over ``TABLE(TUMBLE(TABLE v, DESCRIPTOR(ts), size))``,
  ``TABLE(HOP(TABLE v, DESCRIPTOR(ts), slide, size))``, ``TABLE(CUMULATE(TABLE v, DESCRIPTOR(ts), step, size))``
  or ``TABLE(SESSION(TABLE v [PARTITION BY keys], DESCRIPTOR(ts), gap))``, ``GROUP BY window_start, window_end[, keys]``
  (a SESSION's keys are its PARTITION BY keys),
  with ``COUNT(*)``, ``SUM``, ``MIN``, ``MAX``, ``AVG`` over any expression, ``HAVING``, and
  ``window_start``, ``window_end``, ``window_time`` and the keys in the ``SELECT`` list. It is the
  DataStream program ``key_by(keys).window(assigner).aggregate(...)``: one row per window and
  key when the watermark passes the window's end; late rows are dropped, as Flink SQL does.

Around them: ``UNION ALL`` (by position), subqueries in ``FROM`` and ``WITH``.

Expressions are translated to Spark SQL; where Flink and Spark differ in meaning, funke takes
Flink's: ``/`` between integers divides integers (Spark's ``DIV``), ``SUM`` and ``AVG`` of an
integer column keep its type (Flink's ``AVG`` of ``INT`` is an ``INT``). Anything else is refused
while planning, naming the construct and where it is in the query.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from funke.errors import PlanError, UnsupportedError
from funke.plan.types import INTEGRAL, Schema
from funke.semantics.windows import (
    CumulativeEventTimeWindows,
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    WindowAssigner,
)
from funke.table.dialect import Descriptor, TableArg, WindowTvf, interval_ms, position

#: Columns a window TVF adds to its table.
WINDOW_START, WINDOW_END, WINDOW_TIME = "window_start", "window_end", "window_time"
_AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg",
}  # fmt: skip
#: Flink's window_time: the window's last millisecond (the time attribute of its result rows).
_WINDOW_TIME = exp.Sub(
    this=exp.column("window_end"), expression=exp.Interval(this=exp.Literal.string("1"), unit=exp.Var(this="MILLISECOND"))
)
#: Parts of a SELECT this planner does not run yet, by sqlglot's argument name.
_REFUSED = {
    "joins": "a join",
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "distinct": "SELECT DISTINCT",
    "qualify": "QUALIFY",
    "laterals": "a LATERAL table",
    "windows": "a WINDOW clause",
}


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


@dataclass
class Planner:
    """Lowers one query; ``views`` maps each view name to a function returning its DataStream."""

    views: Mapping[str, Callable[[], Any]]
    sql: str
    _hidden: int = field(default=0)

    def at(self, node: exp.Expression) -> str:
        return position(node, self.sql)

    def refuse(self, node: exp.Expression, what: str, hint: str = "") -> UnsupportedError:
        return UnsupportedError(f"Flink SQL: {what} (at {self.at(node)}) is not supported by funke yet{'; ' + hint if hint else ''}")

    def lower(self, query: exp.Expression) -> Any:
        if isinstance(query, exp.Subquery):  # (a parenthesized query)
            return self.lower(query.this)
        if isinstance(query, exp.Union):
            return self._union(query)
        if not isinstance(query, exp.Select):
            raise self.refuse(query, f"a {type(query).__name__.upper()} statement", "sql_query takes one SELECT")
        if query.args.get("with_"):
            self._ctes(query.args["with_"])
        for arg, what in _REFUSED.items():
            if query.args.get(arg):
                raise self.refuse(query.args[arg] if isinstance(query.args[arg], exp.Expression) else query, what)
        for node in query.find_all(exp.Window):
            raise self.refuse(node, "an OVER window (Top-N, deduplication)")
        source = query.args.get("from_")
        if source is None:
            raise self.refuse(query, "a SELECT without FROM")
        for key, arg in query.args.items():  # (a subquery in FROM is lowered on its own; nowhere else)
            for node in (x for a in (arg if isinstance(arg, list) else [arg]) if isinstance(a, exp.Expression) for x in a.walk()):
                if key not in ("from_", "with_") and isinstance(node, (exp.Subquery, exp.Select)):
                    raise self.refuse(node, "a subquery outside FROM", "a subquery in FROM runs")
        stream, tvf = self._source(source.this)
        named = {source.this.alias_or_name} - {""}
        for column in query.find_all(exp.Column):  # t.x with t the FROM table (or its alias): the stream's column x
            if column.table and column.table in named and column.find_ancestor(exp.Select) is query:
                column.set("table", None)
        where = query.args.get("where")
        if where is not None:
            self._no_window_columns(where.this, "WHERE")
            stream = stream.filter(self.spark_sql(where.this, stream.schema))
        aggregated = any(isinstance(n, exp.AggFunc) for e in query.expressions for n in e.walk())
        if query.args.get("group") or query.args.get("having") or aggregated:
            if tvf is None:
                raise self.refuse(
                    query.args.get("group") or query, "an aggregation without a window TVF (an updating result)",
                    "aggregate over a window TVF (TABLE(TUMBLE(...)), HOP, CUMULATE, SESSION) "
                    "with GROUP BY window_start, window_end",
                )
            return self._window_aggregate(query, stream, tvf)
        if tvf is not None:
            raise self.refuse(source, "a window TVF without GROUP BY window_start, window_end", "aggregate its rows per window")
        return stream.select(*self._projection(query.expressions, stream.schema))

    def _union(self, query: exp.Union) -> Any:
        if query.args.get("distinct"):
            raise self.refuse(query, "UNION (which removes duplicates: an updating result)", "UNION ALL runs")
        for arg in ("order", "limit", "offset", "with_"):
            if query.args.get(arg):
                raise self.refuse(query.args[arg], f"{arg.rstrip('_').upper()} on a UNION ALL")
        left, right = self.lower(query.this), self.lower(query.expression)
        if len(left.columns) != len(right.columns):
            raise PlanError(
                f"Flink SQL: UNION ALL at {self.at(query)} of {len(left.columns)} column(s) ({', '.join(left.columns)}) "
                f"and {len(right.columns)} ({', '.join(right.columns)})"
            )
        if right.columns != left.columns:  # by position, named as on the left (as in Flink)
            right = right.select(*(r if r == x else f"`{r}` AS `{x}`" for r, x in zip(right.columns, left.columns, strict=True)))
        return left.union(right)

    def _ctes(self, with_: exp.With) -> None:
        """``WITH name AS (SELECT ...)``: each a view of this query (and the ones after it)."""
        if with_.args.get("recursive"):
            raise self.refuse(with_, "WITH RECURSIVE")
        views = dict(self.views)
        for cte in with_.expressions:
            self.views = views
            stream = self.lower(cte.this)
            views[cte.alias] = lambda stream=stream: stream
        self.views = views

    # -- FROM ------------------------------------------------------------------------------
    def _source(self, node: exp.Expression) -> tuple[Any, Tvf | None]:
        if isinstance(node, exp.Subquery):
            return self.lower(node.this), None
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and node.this.name.upper() == "TABLE":
            inner = node.this.expressions[0] if len(node.this.expressions) == 1 else None
            if not isinstance(inner, WindowTvf):
                raise self.refuse(node, "a table function other than a window TVF")
            return self._window_tvf(inner)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            if node.args.get("db") or node.args.get("catalog"):
                raise self.refuse(node, f"a qualified table name ({node.sql()})", "register a view with create_temporary_view")
            return self._view(node), None
        raise self.refuse(node, f"{node.sql(dialect='spark')} in FROM")

    def _view(self, table: exp.Table) -> Any:
        name = table.name
        if name not in self.views:
            known = ", ".join(sorted(v for v in self.views if not v.startswith("_fk_"))) or "none"
            raise PlanError(f"Flink SQL: no view named {name!r} (at {self.at(table)}); tables and views: {known}")
        return self.views[name]()

    def _window_tvf(self, tvf: WindowTvf) -> tuple[Any, Tvf]:
        kind = tvf.name.upper()
        args = tvf.expressions
        count, shape = _TVF_SHAPES[kind]  # (the dialect parses these four only)
        if len(args) != count or not isinstance(args[0], TableArg) or not isinstance(args[1], Descriptor):
            raise self.refuse(tvf, f"{kind} with these arguments (an offset, or another form)", f"write {kind}({shape})")
        partition = args[0].args.get("partition")
        if partition and kind != "SESSION":
            raise self.refuse(args[0], f"PARTITION BY in {kind}", "only SESSION takes keys; GROUP BY them")
        stream = self._view(args[0].this)
        keys = tuple(c.name for c in partition or ())
        for c in partition or ():
            stream.schema.field(c.name, node=f"PARTITION BY at {self.at(c)}")
        columns = args[1].expressions
        time = columns[0].name if len(columns) == 1 else None
        if time is None or time != stream.node.event_time:
            has = stream.node.event_time
            raise PlanError(
                f"Flink SQL: DESCRIPTOR({', '.join(c.sql() for c in columns)}) at {self.at(args[1])} must name the view's time "
                f"attribute, the column its watermark is on ({has!r})" if has else
                f"Flink SQL: {kind} at {self.at(tvf)} needs a view with event time: create it from a stream with watermarks"
            )
        sizes = [self._interval_ms(a) for a in args[2:]]
        try:
            assigner: WindowAssigner = {
                "TUMBLE": lambda: TumblingEventTimeWindows.of(sizes[0]),
                "HOP": lambda: SlidingEventTimeWindows.of(sizes[1], sizes[0]),
                "CUMULATE": lambda: CumulativeEventTimeWindows.of(sizes[1], sizes[0]),
                "SESSION": lambda: EventTimeSessionWindows.with_gap(sizes[0]),
            }[kind]()
        except ValueError as e:
            raise PlanError(f"Flink SQL: {kind} at {self.at(tvf)}: {e}") from None
        return stream, Tvf(kind, assigner, time, keys if partition else None)

    def _interval_ms(self, node: exp.Expression) -> int:
        ms = interval_ms(node)
        if ms is not None:
            return ms
        raise self.refuse(node, f"the window size {node.sql()}", "write INTERVAL 'n' SECOND (or MILLISECOND, MINUTE, HOUR, DAY)")

    # -- window aggregation ----------------------------------------------------------------
    def _window_aggregate(self, query: exp.Select, stream: Any, tvf: Tvf) -> Any:
        group = query.args.get("group")
        by = list(group.expressions) if group is not None else []
        names = [g.name if isinstance(g, exp.Column) else None for g in by]
        if WINDOW_START not in names or WINDOW_END not in names:
            raise self.refuse(group or query, "a window aggregation not grouped by both window_start and window_end")
        keys = []
        for g, name in zip(by, names, strict=True):
            if name is None:
                raise self.refuse(g, f"GROUP BY {g.sql()} (only columns)")
            if name not in (WINDOW_START, WINDOW_END):
                stream.schema.field(name, node=f"GROUP BY at {self.at(g)}")
                keys.append(name)
        if tvf.kind == "SESSION" and set(keys) != set(tvf.partition or ()):
            raise self.refuse(
                group or query, "a SESSION window aggregation grouped by other columns than its PARTITION BY",
                f"sessions are per key: GROUP BY window_start, window_end{''.join(', ' + k for k in tvf.partition or ())}",
            )
        aggregates: dict[str, tuple[str, str | None]] = {}
        renamed: dict[int, exp.Expression] = {}
        by_text: dict[str, exp.Expression] = {}  # the same aggregate twice (SELECT and HAVING) is computed once
        for call in (n for e in (*query.expressions, query.args.get("having")) if e is not None for n in e.walk()):
            if isinstance(call, exp.AggFunc) and id(call) not in renamed:
                text = call.sql()
                if text not in by_text:
                    alias, fn, column, stream = self._aggregate(call, stream)
                    aggregates[alias] = (fn, column)
                    by_text[text] = self._typed(exp.column(alias), fn, call, stream.schema)
                renamed[id(call)] = by_text[text]
        if not keys:  # one window for all rows (Flink's global window aggregation): one constant key
            keys = [self._hide()]
            stream = stream.with_column(keys[0], "0")
        out = stream.key_by(keys).window(tvf.assigner).aggregate(**aggregates)

        def rewrite(e: exp.Expression) -> exp.Expression:
            def swap(n: exp.Expression) -> exp.Expression:
                if id(n) in renamed:
                    return renamed[id(n)].copy()
                if isinstance(n, exp.Column) and n.name == WINDOW_TIME:
                    return _WINDOW_TIME.copy()
                grouped = (*keys, WINDOW_START, WINDOW_END)
                if isinstance(n, exp.Column) and n.name not in grouped and not n.find_ancestor(exp.AggFunc):
                    raise self.refuse(n, f"the column {n.name} outside an aggregate and not in GROUP BY")
                return n

            return e.transform(swap, copy=False)  # (in place: ``renamed`` knows the query's own nodes)

        having = query.args.get("having")
        if having is not None:
            out = out.filter(self.spark_sql(rewrite(having.this), out.schema))
        items = []
        for i, e in enumerate(query.expressions):
            name = e.alias_or_name if isinstance(e, (exp.Alias, exp.Column)) else f"EXPR${i}"
            body = e.this if isinstance(e, exp.Alias) else e
            if isinstance(body, exp.Star):
                raise self.refuse(e, "SELECT * in a window aggregation", "name the columns")
            body = rewrite(body)
            items.append(body if isinstance(body, exp.Column) and body.name == name else exp.alias_(body, name, quoted=True))
        return out.select(*(self.spark_sql(x, out.schema) for x in items))

    def _aggregate(self, call: exp.AggFunc, stream: Any) -> tuple[str, str, str | None, Any]:
        fn = _AGGREGATES.get(type(call))
        if fn is None:
            raise self.refuse(call, f"the aggregate {call.sql()}", "COUNT(*), SUM, MIN, MAX and AVG run")
        arg = call.this
        if isinstance(arg, exp.Distinct):
            raise self.refuse(call, f"{call.key.upper()}(DISTINCT ...)")
        alias = self._hide()
        if fn == "count":
            if not isinstance(arg, exp.Star) and not (isinstance(arg, exp.Literal) and not arg.is_string):
                raise self.refuse(call, f"{call.sql()} (it counts non-null values)", "COUNT(*) runs")
            return alias, fn, None, stream
        if isinstance(arg, exp.Column) and not arg.table:
            stream.schema.field(arg.name, node=f"{call.sql()} at {self.at(call)}")
            return alias, fn, arg.name, stream
        column = self._hide()
        return alias, fn, column, stream.with_column(column, self.spark_sql(arg, stream.schema))

    def _typed(self, column: exp.Expression, fn: str, call: exp.AggFunc, schema: Schema) -> exp.Expression:
        """Flink's result type: SUM and AVG of an integer type keep that type (AVG truncates)."""
        if fn not in ("sum", "avg"):
            return column
        t = _type_of(call.this, schema)
        if t in INTEGRAL:
            return exp.Cast(this=column, to=exp.DataType.build(t))
        return column

    def _hide(self) -> str:
        self._hidden += 1
        return f"_fk_{self._hidden}"

    # -- expressions -----------------------------------------------------------------------
    def _no_window_columns(self, e: exp.Expression, where: str) -> None:
        for c in e.find_all(exp.Column):
            if c.name in (WINDOW_START, WINDOW_END, WINDOW_TIME):
                raise self.refuse(c, f"{c.name} in {where}", "filter window results with HAVING")

    def _projection(self, items: list[exp.Expression], schema: Schema) -> list[str]:
        out = []
        for i, e in enumerate(items):
            if isinstance(e, exp.Star):
                out += [f"`{c}`" for c in schema.names]
                continue
            if not isinstance(e, (exp.Alias, exp.Column)):
                e = exp.alias_(e, f"EXPR${i}", quoted=True)
            out.append(self.spark_sql(e, schema))
        return out

    def spark_sql(self, e: exp.Expression, schema: Schema | None) -> str:
        """``e`` as a Spark SQL expression with Flink's meaning (integer ``/`` divides integers)."""

        def flink_meaning(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Anonymous) and n.name.upper() in _FUNCTIONS:
                return _FUNCTIONS[n.name.upper()](self, n)
            if isinstance(n, exp.Div):
                kinds = (_type_of(n.this, schema), _type_of(n.expression, schema))
                if all(k in INTEGRAL for k in kinds):
                    return exp.Cast(this=exp.IntDiv(this=n.this, expression=n.expression), to=exp.DataType.build(_wider(*kinds)))
                if any(k is None for k in kinds):
                    raise self.refuse(n, f"{n.sql()} (funke cannot tell whether it divides integers)", "CAST an operand")
            return n

        return e.copy().transform(flink_meaning).sql(dialect="spark")


def _to_timestamp_ltz(planner: Planner, call: exp.Anonymous) -> exp.Expression:
    """Flink's ``TO_TIMESTAMP_LTZ(epoch, precision)``: precision 3 reads milliseconds, 0 seconds."""
    args = call.expressions
    precision = args[1].name if len(args) == 2 and isinstance(args[1], exp.Literal) else None
    spark = {"3": "TIMESTAMP_MILLIS", "0": "TIMESTAMP_SECONDS"}.get(precision or "")
    if spark is None:
        raise planner.refuse(call, f"{call.sql()} (funke reads epoch milliseconds, precision 3, or seconds, 0)")
    return exp.Anonymous(this=spark, expressions=[args[0]])


#: Flink SQL functions Spark spells (or means) differently, by name.
_FUNCTIONS: dict[str, Callable[[Planner, exp.Anonymous], exp.Expression]] = {"TO_TIMESTAMP_LTZ": _to_timestamp_ltz}

_ORDER = ("tinyint", "smallint", "int", "bigint")


def _wider(a: str, b: str) -> str:
    return max(a, b, key=_ORDER.index)


def _literal_type(e: Any) -> str | None:
    if isinstance(e, exp.Literal) and not e.is_string:
        return "int" if e.name.lstrip("-").isdigit() else "double"
    return None


def _type_of(e: exp.Expression, schema: Schema | None) -> str | None:
    """What type Flink gives ``e``, as far as it matters here (integer or not); None: unknown."""
    if isinstance(e, exp.Paren):
        return _type_of(e.this, schema)
    if isinstance(e, exp.Literal):
        return _literal_type(e) or "string"
    if isinstance(e, exp.Cast):
        return e.to.sql(dialect="spark").lower()
    if isinstance(e, exp.Column) and schema is not None and e.name in schema.names:
        return schema.field(e.name, node="SQL").dtype
    if isinstance(e, exp.Neg):
        return _type_of(e.this, schema)
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul, exp.Mod)):
        kinds = (_type_of(e.this, schema), _type_of(e.expression, schema))
        if all(k in INTEGRAL for k in kinds):
            return _wider(*kinds)
        return "double" if all(k is not None for k in kinds) else None
    return None
