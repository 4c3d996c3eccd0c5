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

* a window Top-N (window deduplication with N = 1): ``ROW_NUMBER() OVER (PARTITION BY window_start,
  window_end[, keys] ORDER BY ...) AS rownum`` in a subquery, ``WHERE rownum <= N`` outside it, over
  a window TVF or a relation carrying its windows (``funke.table.rank``).

* an inner interval join of two views: key equalities and both time attributes bounded against each
  other, in ``ON`` or ``WHERE`` (``funke.api.joins``); an inner window join of two window TVFs;
  a regular join, inner or outer (keys without both time bounds, ``funke.table.joins``; an outer one
  is an updating result); a lookup join with a static table.

* updating results: a group aggregation without a window (``GROUP BY k``, ``funke.table.aggregate``),
  a deduplication on event time (``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY ts [DESC])`` kept
  at 1, ``funke.table.rank.Deduplicate``) and a regular Top-N (the same without windows otherwise,
  ``funke.table.rank.TopN``). Each is a changelog whose row kinds travel in a hidden
  column (``funke.table.changelog``); projections and filters over it keep the kinds, anything else
  over it is refused.

Around them: ``UNION ALL`` (by position), subqueries in ``FROM`` and ``WITH``, ``CURRENT_WATERMARK(ts)``
(``funke.table.watermark``).

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

from funke.connectors.tables import StaticTable
from funke.errors import PlanError, UnsupportedError
from funke.plan.expr import Sql
from funke.plan.nodes import Aggregate
from funke.plan.types import INTEGRAL, Field, Schema, normalize_type
from funke.semantics.windows import (
    CumulativeEventTimeWindows,
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    WindowAssigner,
)
from funke.table.aggregate import GroupAggregate
from funke.table.changelog import INSERT, ROW_KIND
from funke.table.dialect import Descriptor, TableArg, WindowTvf, interval_ms, position
from funke.table.joins import RegularJoin
from funke.table.rank import Deduplicate, Order, OuterPairRows, PairRows, TopN, WindowResultTopN, WindowTopN
from funke.table.watermark import WithWatermark
from funke.table.windows import group_window_query

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
    #: ``table.exec.state.ttl``: how long the state of a group aggregation, deduplication or regular
    #: join keeps a key's rows after their last write (processing time); None: for ever.
    state_ttl_ms: int | None = None
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
        if (windowed := self._group_window(query)) is not None:
            return self.lower(windowed)
        if query.args.get("joins"):
            return self._join(query)
        self._no_refused_parts(query)
        source = query.args.get("from_")
        inner = source.this.this if source is not None and isinstance(source.this, exp.Subquery) else None
        if isinstance(inner, exp.Select) and any(isinstance(e.unalias(), exp.Window) for e in inner.expressions):
            return self._top_n(query, inner)
        for node in query.find_all(exp.Window):
            raise self.refuse(node, "an OVER window here", "a window Top-N runs: SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rownum FROM ...) WHERE rownum <= N")
        if source is None:
            raise self.refuse(query, "a SELECT without FROM")
        for key, arg in query.args.items():  # (a subquery in FROM is lowered on its own; nowhere else)
            for node in (x for a in (arg if isinstance(arg, list) else [arg]) if isinstance(a, exp.Expression) for x in a.walk()):
                if key not in ("from_", "with_") and isinstance(node, (exp.Subquery, exp.Select)):
                    raise self.refuse(node, "a subquery outside FROM", "a subquery in FROM runs")
        stream, tvf = self._source(source.this)
        _unqualify(query)
        stream = self._current_watermark(query, stream, tvf)
        where = query.args.get("where")
        if where is not None:
            self._no_window_columns(where.this, "WHERE")
            stream = stream.filter(self.spark_sql(where.this, stream.schema))
        aggregated = any(isinstance(n, exp.AggFunc) for e in query.expressions for n in e.walk())
        if query.args.get("group") or query.args.get("having") or aggregated:
            if tvf is None:
                return self._group_aggregate(query, stream)
            return self._window_aggregate(query, stream, tvf)
        if tvf is not None:
            raise self.refuse(source, "a window TVF without GROUP BY window_start, window_end", "aggregate its rows per window")
        return stream.select(*_kind_first(stream, self._projection(query.expressions, stream.schema)))

    def _group_window(self, query: exp.Select) -> exp.Select | None:
        """A legacy group window (``GROUP BY k, TUMBLE(ts, size)``) as the window TVF over the query's
        FROM (``funke.table.windows.group_window_query``); None without one."""
        group = query.args.get("group")
        if group is None or not any(isinstance(g, WindowTvf) for g in group.expressions):
            return None
        source = query.args.get("from_")
        if source is None or query.args.get("joins"):
            raise self.refuse(group, "a group window over a join")
        stream, tvf = self._source(source.this)
        if tvf is not None:
            raise self.refuse(group, "a group window over a window TVF")
        name = self._hide()
        self.views = {**self.views, name: lambda: stream}
        return group_window_query(query, name, self.refuse)

    def _no_refused_parts(self, query: exp.Select, allowed: tuple[str, ...] = ()) -> None:
        """Refuse the parts of a SELECT funke does not run (``_REFUSED``), but for ``allowed``."""
        for arg, what in _REFUSED.items():
            if arg not in allowed and query.args.get(arg):
                raise self.refuse(query.args[arg] if isinstance(query.args[arg], exp.Expression) else query, what)

    def _plain_join_query(self, query: exp.Select) -> None:
        """A join's SELECT: no other refused part, and no aggregation over the joined rows."""
        self._no_refused_parts(query, allowed=("joins",))
        if query.args.get("group") or any(isinstance(x, exp.AggFunc) for e in query.expressions for x in e.walk()):
            raise self.refuse(query.args.get("group") or query, "an aggregation over a join")

    def _union(self, query: exp.Union) -> Any:
        if query.args.get("distinct"):
            raise self.refuse(query, "UNION (which removes duplicates: an updating result)", "UNION ALL runs")
        for arg in ("order", "limit", "offset", "with_"):
            if query.args.get(arg):
                raise self.refuse(query.args[arg], f"{arg.rstrip('_').upper()} on a UNION ALL")
        left, right = self.lower(query.this), self.lower(query.expression)
        for side in (left, right):
            self._insert_only(side, query, "UNION ALL")
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
            view = self._view(node)
            if isinstance(view, StaticTable):
                raise self.refuse(
                    node, f"reading the lookup table {node.name} here",
                    f"a static or jdbc table is read by a lookup join: FROM s JOIN {node.name} FOR SYSTEM_TIME AS OF s.ts AS t ON s.k = t.k",
                )
            return view, None
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
        self._insert_only(stream, args[0], f"a {kind} window")
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
        keys = self._group_keys(by, stream, (WINDOW_START, WINDOW_END))
        if tvf.kind == "SESSION" and set(keys) != set(tvf.partition or ()):
            raise self.refuse(
                group or query, "a SESSION window aggregation grouped by other columns than its PARTITION BY",
                f"sessions are per key: GROUP BY window_start, window_end{''.join(', ' + k for k in tvf.partition or ())}",
            )
        return self._aggregated(
            query, stream, keys, lambda s, keys, aggregates: s.key_by(keys).window(tvf.assigner).aggregate(**aggregates)
        )

    def _group_aggregate(self, query: exp.Select, stream: Any) -> Any:
        """``GROUP BY`` keys (or none) without a window TVF: Flink's group aggregation, an updating
        result (``funke.table.aggregate``): a changelog of each key's aggregates, kind in ``ROW_KIND``."""
        group = query.args.get("group")
        keys = self._group_keys(list(group.expressions) if group is not None else [], stream, ())

        def build(s: Any, keys: list[str], aggregates: dict[str, tuple[str, str | None]]) -> Any:
            self._known_types(s.select(*(f"`{c}`" for c in (*keys, *(c for _, c in aggregates.values() if c)))), "a GROUP BY")
            parts = [(alias, fn, column) for alias, (fn, column) in aggregates.items()]
            fields = [Field(ROW_KIND, "string"), *(s.schema.field(k, node="GROUP BY") for k in keys)]
            for alias, fn, column in parts:
                fields.append(Field(alias, Aggregate(fn, column, alias).output_type(s.schema, f"{fn.upper()}({column or '*'})")))
            return s.key_by(keys).process(GroupAggregate(keys, parts, self.state_ttl_ms), output_schema=Schema(tuple(fields)), name="GroupAggregate")

        return self._aggregated(query, stream, keys, build, window=False)

    def _group_keys(self, by: list[exp.Expression], stream: Any, window: tuple[str, ...]) -> list[str]:
        """The GROUP BY columns other than the window's bounds (each a column of ``stream``)."""
        keys = []
        for g in by:
            if not isinstance(g, exp.Column):
                raise self.refuse(g, f"GROUP BY {g.sql()} (only columns)")
            if g.name not in window:
                stream.schema.field(g.name, node=f"GROUP BY at {self.at(g)}")
                keys.append(g.name)
        return keys

    def _aggregated(
        self, query: exp.Select, stream: Any, keys: list[str], build: Callable[[Any, list[str], dict[str, tuple[str, str | None]]], Any],
        *, window: bool = True,
    ) -> Any:
        """The aggregation ``build(stream, keys, aggregates)`` makes, then HAVING and the SELECT list over
        its rows (each aggregate call replaced by its column; a window's bounds and keys readable)."""
        self._insert_only(stream, query, "an aggregation")
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
        if window and not aggregates:  # (GROUP BY alone: each key's row once per window; a count to compute, unread)
            aggregates[self._hide()] = ("count", None)
        if not keys:  # one group for all rows (Flink's global aggregation): one constant key
            keys = [self._hide()]
            stream = stream.with_column(keys[0], Sql("0", declared="int"))
        out = build(stream, keys, aggregates)
        grouped = (*keys, WINDOW_START, WINDOW_END) if window else tuple(keys)

        def rewrite(e: exp.Expression) -> exp.Expression:
            def swap(n: exp.Expression) -> exp.Expression:
                if id(n) in renamed:
                    return renamed[id(n)].copy()
                if window and isinstance(n, exp.Column) and n.name == WINDOW_TIME:
                    return _WINDOW_TIME.copy()
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
                raise self.refuse(e, "SELECT * in an aggregation", "name the columns")
            body = rewrite(body)
            items.append(body if isinstance(body, exp.Column) and body.name == name else exp.alias_(body, name, quoted=True))
        return out.select(*_kind_first(out, [self.typed_sql(x, out.schema) for x in items]))

    def _known_types(self, stream: Any, what: str) -> None:
        """``what`` keeps rows in funke's state, so it needs each column's type: refuse columns whose type
        only Spark knows (an expression funke cannot type), naming them."""
        unknown = [f.name for f in stream.schema if f.dtype is None]
        if unknown:
            raise PlanError(
                f"Flink SQL: {what} needs the type of {', '.join(unknown)}, an expression whose type funke cannot tell: "
                f"CAST it in the query (CAST(... AS BIGINT) AS {unknown[0]})"
            )

    def _insert_only(self, stream: Any, node: exp.Expression, what: str) -> None:
        """Refuse ``what`` over an updating result (the changelog of a group aggregation, a regular Top-N,
        a deduplication or an outer regular join)."""
        if is_updating(stream):
            raise self.refuse(
                node, f"{what} over an updating result (a GROUP BY without a window TVF, a regular Top-N, a deduplication or an outer join)",
                "funke reads updating results only with projections and filters, to_changelog_stream and upsert sinks",
            )

    def _current_watermark(self, query: exp.Select, stream: Any, tvf: Tvf | None) -> Any:
        """``CURRENT_WATERMARK(ts)`` in the SELECT list or WHERE: each row given the watermark when it
        arrives (``funke.table.watermark``: a funke operator keyed by a hash of the row), the calls
        replaced by that column. ``ts`` must be the view's time attribute."""
        calls = [c for c in query.find_all(exp.Anonymous) if c.name.upper() == "CURRENT_WATERMARK" and c.find_ancestor(exp.Select) is query]
        if not calls:
            return stream
        self._insert_only(stream, calls[0], "CURRENT_WATERMARK")
        for c in calls:
            args = c.expressions
            if len(args) != 1 or not isinstance(args[0], exp.Column) or args[0].name != stream.node.event_time:
                raise PlanError(
                    f"Flink SQL: {c.sql()} at {self.at(c)} takes the view's time attribute "
                    f"({stream.node.event_time or 'none: the view has no watermark'})"
                )
        if tvf is not None or query.args.get("group") or any(isinstance(n, exp.AggFunc) for e in query.expressions for n in e.walk()):
            raise self.refuse(calls[0], "CURRENT_WATERMARK in a window aggregation", "use it in a SELECT or WHERE over a view")
        column, bucket = self._hide(), self._hide()
        keyed = stream.with_column(bucket, f"pmod(xxhash64(`{stream.node.event_time}`), 64)").key_by(bucket)
        out = Schema((*keyed.schema.fields, Field(column, "timestamp")))
        marked = keyed.process(WithWatermark(column), output_schema=out)
        for c in calls:
            c.replace(exp.column(column, quoted=True))
        return marked

    # -- interval join -------------------------------------------------------------------------
    def _join(self, query: exp.Select) -> Any:
        """``FROM a [AS l] JOIN b [AS r] ON ...`` (or ``FROM a, b WHERE ...``) with equality of keys and
        both time attributes bounded against each other (``l.ts BETWEEN r.ts - INTERVAL ... AND r.ts``):
        Flink's interval join, ``key_by(l keys).interval_join(key_by(r keys)).between(...)``; conditions
        on anything else filter the joined rows. Late rows are dropped, as Flink SQL does."""
        joins = query.args["joins"]
        if len(joins) > 1:
            raise self.refuse(joins[1], "a join of more than two relations")
        join = joins[0]
        if isinstance(join.this, exp.Table) and isinstance(join.this.this, exp.Identifier) and isinstance(self._table(join.this), StaticTable):
            return self._lookup_join(query, join)
        if join.this.args.get("version") is not None:
            raise self.refuse(join.this, "FOR SYSTEM_TIME AS OF a view (a temporal join)", "a lookup join reads a static table: create_temporary_view(name, fk.table(...))")
        rels = (query.args["from_"].this, join.this)
        windowed = [self._windowed(rel) for rel in rels]
        if any(w is not None for w in windowed):
            return self._window_join(query, join, windowed)
        outer = (join.side in ("LEFT", "FULL"), join.side in ("RIGHT", "FULL"))
        if join.kind not in ("", "INNER", "CROSS", "OUTER") or join.args.get("using"):
            what = f"a {' '.join(x for x in (join.side, join.kind) if x)} JOIN" if join.side or join.kind else "JOIN ... USING"
            raise self.refuse(join, what, "inner joins and LEFT, RIGHT and FULL regular joins run")
        self._plain_join_query(query)
        sides = []
        for rel in rels:
            stream, tvf = self._source(rel)
            if tvf is not None:
                raise self.refuse(rel, "a join of a window TVF with a relation that is not one")
            self._insert_only(stream, rel, "a join")
            sides.append((rel.alias_or_name, stream))
        (ln, left), (rn, right) = sides
        if ln == rn:
            raise PlanError(f"Flink SQL: both sides of the join at {self.at(join)} are named {ln!r}: give one an alias")
        columns = _JoinColumns(self, ln, left.schema, rn, right.schema)
        terms = _join_terms(query, join)
        keys: list[tuple[str, str]] = []
        bounds = _Bounds()
        rest = []
        times = (left.node.event_time, right.node.event_time)
        for t in terms:
            pair = columns.key_pair(t)
            if pair is not None and times not in (pair, pair[::-1]):
                keys.append(pair)
            elif not bounds.take(t, columns, times):
                rest.append(t)
        if not keys:
            raise self.refuse(join, "a join without an equality of the two sides' columns", "a join needs keys: ON l.k = r.k")
        if any(outer) and bounds.complete():
            raise self.refuse(join, f"a {join.side} interval join", "an inner interval join runs, and LEFT, RIGHT and FULL regular joins")
        if not bounds.complete():  # a regular join; time conditions, if any, filter its pairs
            rest = [t for t in terms if (pair := columns.key_pair(t)) is None or pair in (times, times[::-1])]
            if any(outer):  # (ON decides which rows pair up: only keys there; WHERE filters the result)
                for t in _conjuncts(join.args["on"]) if join.args.get("on") else []:
                    pair = columns.key_pair(t)
                    if pair is None or pair in (times, times[::-1]):
                        raise self.refuse(t, f"a condition other than a key equality in the ON of a {join.side} JOIN", "put it in WHERE")
            regular = self._regular_join(left, right, keys, columns, outer)
            return columns.finish(regular, rest, query.expressions)
        joined = left.key_by([k for k, _ in keys]).interval_join(right.key_by([k for _, k in keys]))
        joined = bounds.apply(joined)
        pairs = joined.select(**{internal: f"{side}.{name}" for internal, side, name in columns.all()})
        return columns.finish(pairs, rest, query.expressions)

    def _regular_join(self, left: Any, right: Any, keys: list[tuple[str, str]], columns: _JoinColumns, outer: tuple[bool, bool]) -> Any:
        """Flink SQL's regular join (``funke.table.joins``): every row of both sides kept (for
        ``table.exec.state.ttl`` when set), each arriving row paired with the other side's of equal keys;
        an outer side's unmatched rows padded with NULLs (an updating result). A row with a NULL key
        matches nothing (SQL's ``=``): an outer side's goes straight out padded, an inner side's nowhere."""
        streams, mapped = (left, right), []
        for stream in streams:
            self._known_types(stream, "a regular join")
        fields = [Field(i, streams[s].schema.field(c, node="the join").dtype) for (s, c), i in columns.internal.items()]
        if any(outer):
            fields.insert(0, Field(ROW_KIND, "string"))
        schema = Schema(tuple(fields))
        keyed, unmatched = [], []
        for side, names in ((0, [k for k, _ in keys]), (1, [k for _, k in keys])):
            mapped.append([(c, i) for (s, c), i in columns.internal.items() if s == side])
            known = " AND ".join(f"`{k}` IS NOT NULL" for k in names)
            keyed.append(streams[side].filter(known).key_by(names))
            if outer[side]:  # (its NULL-keyed rows: padded at once, never retracted)
                own = {i: c for c, i in mapped[side]}
                padded = [
                    f"'{INSERT}' AS `{f.name}`" if f.name == ROW_KIND
                    else f"`{own[f.name]}` AS `{f.name}`" if f.name in own else f"CAST(NULL AS {f.dtype}) AS `{f.name}`"
                    for f in schema
                ]  # fmt: skip
                unmatched.append(streams[side].filter(f"NOT ({known})").select(*padded))
        fn = RegularJoin(mapped[0], mapped[1], self.state_ttl_ms, outer)
        out = keyed[0].connect(keyed[1]).process(fn, output_schema=schema, name="RegularJoin")
        for rows in unmatched:
            out = out.union(rows)
        return out

    def _windowed(self, rel: exp.Expression) -> tuple[Any, Tvf] | None:
        """A window TVF in FROM, bare (``TABLE(TUMBLE(...)) AS l``) or as ``(SELECT * FROM TABLE(TUMBLE(...)) [WHERE ...]) AS l``:
        its stream (filtered) and TVF; None for any other relation."""
        inner: exp.Expression = rel
        where = None
        if isinstance(rel, exp.Subquery) and isinstance(rel.this, exp.Select):
            q = rel.this
            star = len(q.expressions) == 1 and isinstance(q.expressions[0], exp.Star)
            extra = [a for a in ("joins", "group", "having", "order", "limit", "with_", "qualify", "distinct") if q.args.get(a)]
            if not star or extra or q.args.get("from_") is None:
                return None
            inner, where = q.args["from_"].this, q.args.get("where")
        if not (isinstance(inner, exp.Table) and isinstance(inner.this, exp.Anonymous) and inner.this.name.upper() == "TABLE"):
            return None
        stream, tvf = self._source(inner)
        assert tvf is not None
        return self._tvf_rows(stream, where), tvf

    def _tvf_rows(self, stream: Any, where: exp.Where | None) -> Any:
        """A window TVF's view filtered by the WHERE of the query reading it (before windows are assigned)."""
        if where is None:
            return stream
        self._no_window_columns(where.this, "WHERE")
        return stream.filter(self.spark_sql(where.this, stream.schema))

    def _window_join(self, query: exp.Select, join: exp.Join, sides: list[tuple[Any, Tvf] | None]) -> Any:
        """Two window TVFs of the same windows joined ``ON l.window_start = r.window_start AND l.window_end =
        r.window_end AND keys``: Flink's window join, ``l.join(r).where(keys).equal_to(keys).window(assigner)``;
        each window's pairs when the watermark passes its end, late rows dropped. Other conditions filter the pairs."""
        outer = (join.side in ("LEFT", "FULL"), join.side in ("RIGHT", "FULL"))
        if join.kind not in ("", "INNER", "OUTER") or join.args.get("using"):
            what = f"a {' '.join(x for x in (join.side, join.kind) if x)} window join" if join.side or join.kind else "JOIN ... USING"
            raise self.refuse(join, what, "inner, LEFT, RIGHT and FULL window joins run")
        self._plain_join_query(query)
        rels = (query.args["from_"].this, join.this)
        for rel, side in zip(rels, sides, strict=True):
            if side is None:
                raise self.refuse(rel, "a join of a window TVF with a relation that is not one")
        (left, ltvf), (right, rtvf) = sides  # type: ignore[misc]
        if ltvf.kind == "SESSION" or rtvf.kind == "SESSION":
            raise self.refuse(join, "a window join of SESSION windows")
        if ltvf.assigner != rtvf.assigner:
            raise self.refuse(join, f"a window join of different windows ({ltvf.assigner.describe()} and {rtvf.assigner.describe()})")
        ln, rn = rels[0].alias_or_name, rels[1].alias_or_name
        if not ln or not rn or ln == rn:
            raise PlanError(f"Flink SQL: name both sides of the window join at {self.at(join)} (AS l, AS r)")
        bounds = (WINDOW_START, WINDOW_END, WINDOW_TIME)
        windowed = [Schema((*sch.fields, *(Field(b, "timestamp") for b in bounds))) for sch in (left.schema, right.schema)]
        columns = _JoinColumns(self, ln, windowed[0], rn, windowed[1])
        terms = _join_terms(query, join)
        keys, same, rest = [], set(), []
        for t in terms:
            pair = columns.key_pair(t)
            if pair is not None and pair[0] == pair[1] and pair[0] in bounds:
                same.add(pair[0])
            elif pair is not None and pair[0] not in bounds and pair[1] not in bounds:
                keys.append(pair)
            else:
                rest.append(t)
        if not {WINDOW_START, WINDOW_END} <= same:
            raise self.refuse(join, "a join of window TVFs not on both window_start and window_end", "ON l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k")
        if not keys:
            raise self.refuse(join, "a window join without an equality of the two sides' columns", "add ON l.k = r.k")
        for side in (0, 1):
            columns.internal[(side, WINDOW_START)], columns.internal[(side, WINDOW_END)] = WINDOW_START, WINDOW_END
        window_time = self._hide()
        for side in (0, 1):
            columns.internal[(side, WINDOW_TIME)] = window_time
        pairs_of = {side: {c: columns.internal[(side, c)] for c in (left, right)[side].schema.names} for side in (0, 1)}
        lkeys = [k for k, _ in keys]
        out_fields = [Field(pairs_of[s][f.name], f.dtype) for s, sch in ((0, left.schema), (1, right.schema)) for f in sch.fields]
        if any(outer):  # Flink's outer window join: a row without a partner in its window, padded with NULLs
            if not join.args.get("on") or any(columns.key_pair(t) is None for t in _conjuncts(join.args["on"])):
                raise self.refuse(join, f"a condition other than equalities in the ON of a {join.side} window join", "put it in WHERE")
            # keyed by the keys as JSON, a NULL-keyed row by its side alone: it meets nobody and goes out padded
            # Keyed by the keys as JSON; a NULL-keyed row by its side alone: it meets nobody and goes out padded.
            # Each side's window columns are NULL where it is padded (a marker column tells).
            key = self._hide()
            grouped, bounds_of = [], []
            for side, stream, names in ((0, left, lkeys), (1, right, [k for _, k in keys])):
                known = " AND ".join(f"`{k}` IS NOT NULL" for k in names)
                fields = ", ".join(f"'{i}', `{k}`" for i, k in enumerate(names))
                marker = self._hide()
                stream = stream.with_column(key, f"CASE WHEN {known} THEN to_json(named_struct({fields})) ELSE '{side}' END")
                grouped.append(stream.with_column(marker, "1 = 1"))
                pairs_of[side][marker] = marker
                out_fields.append(Field(marker, "boolean"))
                bounds_of.append((marker, {b: self._hide() for b in bounds}))
            joined = (
                grouped[0].co_group(grouped[1]).where(key).equal_to(key).window(ltvf.assigner)
                .apply(OuterPairRows(pairs_of[0], pairs_of[1], outer), output_schema=Schema(tuple(out_fields)))
            )  # fmt: skip
            whole = {WINDOW_START: f"`{WINDOW_START}`", WINDOW_END: f"`{WINDOW_END}`", WINDOW_TIME: f"`{WINDOW_END}` - INTERVAL 1 MILLISECOND"}
            for side, (marker, names) in enumerate(bounds_of):
                for b, name in names.items():
                    joined = joined.with_column(name, f"CASE WHEN `{marker}` THEN {whole[b]} END")
                    columns.internal[(side, b)] = name
            return columns.finish(joined, rest, query.expressions)
        joined = (
            left.join(right).where(lkeys).equal_to([k for _, k in keys]).window(ltvf.assigner)
            .apply(PairRows(pairs_of[0], pairs_of[1]), output_schema=Schema(tuple(out_fields)))
        )  # fmt: skip
        for k in lkeys:  # (the window join's result has the left keys under their names)
            columns.internal[(0, k)] = k
        joined = joined.with_column(window_time, f"`{WINDOW_END}` - INTERVAL 1 MILLISECOND")
        return columns.finish(joined, rest, query.expressions)

    def _table(self, table: exp.Table) -> Any:
        return self.views[table.name]() if table.name in self.views else None

    def _lookup_join(self, query: exp.Select, join: exp.Join) -> Any:
        """``FROM s [AS e] [LEFT] JOIN t [FOR SYSTEM_TIME AS OF e.x] [AS c] ON e.k = c.k`` with ``t`` a static
        table (``create_temporary_view(name, fk.table(...))``): Flink's lookup join, each row joined with
        the table as it is (one version: the AS OF time reads nothing). ``stream.join(table, on=keys)``;
        conditions on anything else filter the joined rows."""
        if join.kind not in ("", "INNER") or join.side not in ("", "LEFT") or join.args.get("using"):
            raise self.refuse(join, f"a {join.side or join.kind} JOIN with a static table", "INNER and LEFT lookup joins run")
        self._plain_join_query(query)
        rel = query.args["from_"].this
        stream, tvf = self._source(rel)
        if tvf is not None or isinstance(stream, StaticTable):
            raise self.refuse(rel, "a lookup join whose left side is not a stream")
        self._insert_only(stream, rel, "a lookup join")
        table = self._table(join.this)
        ln, rn = rel.alias_or_name, join.this.alias_or_name
        columns = _JoinColumns(self, ln, stream.schema, rn, table.schema, rename=False)
        terms = _join_terms(query, join)
        keys, rest = [], []
        for t in terms:
            pair = columns.key_pair(t)
            (keys if pair is not None else rest).append(pair if pair is not None else t)
        if not keys:
            raise self.refuse(join, "a lookup join without an equality of a stream column and a table column", "ON s.k = t.k")
        if join.side == "LEFT" and rest and any(columns.sides_of(t) != {0} for t in rest):
            raise self.refuse(join, "a LEFT lookup join with conditions on the table besides its keys")
        for left_key, table_key in keys:
            if left_key != table_key:
                if table_key in stream.schema:
                    raise PlanError(f"Flink SQL: the lookup join at {self.at(join)} pairs {left_key} with the table's {table_key}, which the stream also has")
                stream = stream.with_column(table_key, f"`{left_key}`")
        joined = stream.join(table, on=[k for _, k in keys], how=join.side.lower() or "inner")
        for (left_key, table_key) in keys:
            columns.internal[(1, table_key)] = table_key
        return columns.finish(joined, rest, query.expressions)

    # -- window Top-N and deduplication ---------------------------------------------------------
    def _top_n(self, outer: exp.Select, inner: exp.Select) -> Any:
        """``SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, keys]
        ORDER BY ...) AS rownum FROM r) WHERE rownum <= N [AND ...]``: Flink's window Top-N (window
        deduplication when N is 1). ``r`` is a window TVF (its rows ranked per window by the window
        operator, late rows dropped) or a relation carrying window_start and window_end, such as a window
        aggregation (its rows ranked when the watermark passes the window's end)."""
        if inner.args.get("joins"):
            raise self.refuse(inner.args["joins"][0], "a Top-N (ROW_NUMBER) over a join in one SELECT", "rank the rows of a subquery or view that joins")
        self._no_refused_parts(inner)
        for arg in ("group", "having"):
            if inner.args.get(arg):
                raise self.refuse(inner.args[arg], "an aggregation in the query of a Top-N", "aggregate in a subquery of its FROM")
        ranks = [e for e in inner.expressions if isinstance(e.unalias(), exp.Window)]
        over = ranks[0].unalias()
        if len(ranks) > 1:
            raise self.refuse(ranks[1], "a second OVER window in one query")
        if not isinstance(over.this, exp.RowNumber):
            raise self.refuse(over, f"{over.this.sql()} OVER (...)", "window Top-N takes ROW_NUMBER()")
        if over.args.get("spec"):
            raise self.refuse(over, "a window frame (ROWS/RANGE) in a Top-N")
        rownum = ranks[0].alias if isinstance(ranks[0], exp.Alias) else None
        if rownum is None:
            raise self.refuse(over, "ROW_NUMBER() without a name", "name it: ROW_NUMBER() OVER (...) AS rownum")
        partition = [c.name if isinstance(c, exp.Column) and not c.table else None for c in over.args.get("partition_by") or []]
        if None in partition:
            raise self.refuse(over, "PARTITION BY an expression", "partition by columns")
        windowed = WINDOW_START in partition and WINDOW_END in partition
        keys = [c for c in partition if c not in (WINDOW_START, WINDOW_END)] if windowed else partition
        ordered = over.args.get("order")
        if ordered is None:
            raise self.refuse(over, "ROW_NUMBER() without ORDER BY")
        order = []
        for o in ordered.expressions:
            if not isinstance(o.this, exp.Column) or o.this.table:
                raise self.refuse(o, f"ORDER BY {o.this.sql()} in a Top-N (only columns)")
            order.append(Order(o.this.name, bool(o.args.get("desc")), bool(o.args.get("nulls_first"))))
        limit, rest = self._rownum_limit(outer, rownum)

        source = inner.args["from_"].this
        stream, tvf = self._source(source)
        self._insert_only(stream, source, "a Top-N")
        where = inner.args.get("where")
        if not windowed:
            if tvf is not None:
                raise self.refuse(over, "a Top-N over a window TVF not partitioned by window_start and window_end")
            if where is not None:
                stream = stream.filter(self.spark_sql(where.this, stream.schema))
            time = stream.node.event_time
            schema = self._fields(stream.schema, order, keys)
            star = list(schema.names)
            ddl = Schema((Field(ROW_KIND, "string"), *schema.fields, Field(rownum, "bigint")))
            if not keys:
                keys = [self._hide()]
                stream = stream.with_column(keys[0], Sql("0", declared="int"))
            fn: Any
            if limit == 1 and len(order) == 1 and time is not None and order[0].column == time:
                fn = Deduplicate(time, keep_last=order[0].descending, rownum=rownum, ttl_ms=self.state_ttl_ms)
            else:  # (the row number costs updates of every rank that moves: only when the result shows it)
                shown = any(isinstance(e, exp.Star) or any(c.name == rownum for c in e.find_all(exp.Column)) for e in outer.expressions)
                fn = TopN(order, limit, rownum, numbered=shown, ttl_ms=self.state_ttl_ms)
            ranked = stream.key_by(keys).process(fn, output_schema=ddl)
        elif tvf is not None:
            stream = self._tvf_rows(stream, where)
            if tvf.kind == "SESSION":
                raise self.refuse(source, "a window Top-N over SESSION windows", "rank the rows of a SESSION window aggregation")
            schema = self._fields(stream.schema, order, keys)
            star = [*schema.names, WINDOW_START, WINDOW_END, WINDOW_TIME]  # (Flink's columns of a window TVF)
            bounds = (Field(WINDOW_START, "timestamp"), Field(WINDOW_END, "timestamp"), Field(WINDOW_TIME, "timestamp"))
            ddl = Schema((*schema.fields, *bounds, Field(rownum, "bigint")))
            if not keys:
                keys = [self._hide()]
                stream = stream.with_column(keys[0], Sql("0", declared="int"))
            ranked = stream.key_by(keys).window(tvf.assigner).process(WindowTopN(order, limit, rownum), output_schema=ddl)
        else:
            if stream.node.watermark is None:  # (its windows would never close in a stream)
                raise PlanError(
                    f"Flink SQL: the Top-N at {self.at(over)} ranks rows by their window_end, but {source.sql()} has no watermark: "
                    "rank a window TVF or a window aggregation"
                )
            if where is not None:
                stream = stream.filter(self.spark_sql(where.this, stream.schema))
            schema = self._fields(stream.schema, order, [WINDOW_START, WINDOW_END, *keys])
            star = list(schema.names)
            ddl = Schema((*schema.fields, Field(rownum, "bigint")))
            fn = WindowResultTopN(order, limit, rownum)
            ranked = stream.key_by([WINDOW_START, WINDOW_END, *keys]).process(fn, output_schema=ddl)
        items: list[exp.Expression] = []
        for e in inner.expressions:
            if isinstance(e, exp.Star):
                items += [exp.column(c, quoted=True) for c in star]
            else:
                items.append(exp.column(rownum, quoted=True) if isinstance(e.unalias(), exp.Window) else e)
        view = ranked.select(*_kind_first(ranked, self._projection(items, ranked.schema)))
        _unqualify(outer)
        if rest is not None:
            view = view.filter(self.spark_sql(rest, view.schema))
        return view.select(*_kind_first(view, self._projection(outer.expressions, view.schema)))

    def _fields(self, schema: Schema, order: list[Order], keys: list[str]) -> Schema:
        """``schema``, checking the Top-N's ORDER BY and PARTITION BY columns are in it."""
        for name in (*(o.column for o in order), *keys):
            schema.field(name, node="the Top-N's OVER (...)")
        return schema

    def _rownum_limit(self, outer: exp.Select, rownum: str) -> tuple[int, exp.Expression | None]:
        """N of ``WHERE rownum <= N`` (``< N``, ``= 1``) and the rest of the outer WHERE (ANDed)."""
        where = outer.args.get("where")
        terms = _conjuncts(where.this) if where is not None else []
        limits, rest = [], []
        for t in terms:
            if any(c.name == rownum for c in t.find_all(exp.Column)):
                limits.append(t)
            else:
                rest.append(t)
        hint = f"filter it: WHERE {rownum} <= N"
        if len(limits) != 1:
            raise self.refuse(limits[1] if limits else outer, f"a Top-N {'with more than one condition on' if limits else 'without a condition on'} {rownum}", hint)
        t = limits[0]
        n = t.expression.to_py() if isinstance(t.expression, exp.Literal) and not t.expression.is_string else None
        ok = isinstance(t.this, exp.Column) and isinstance(n, int) and n >= 1
        if ok and isinstance(t, exp.LTE):
            limit = n
        elif ok and isinstance(t, exp.LT) and n >= 2:
            limit = n - 1
        elif ok and isinstance(t, exp.EQ) and n == 1:
            limit = 1
        else:
            raise self.refuse(t, f"the condition {t.sql()} on {rownum}", hint)
        return limit, (exp.and_(*rest) if rest else None)

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

    def _projection(self, items: list[exp.Expression], schema: Schema) -> list[str | Sql]:
        out: list[str | Sql] = []
        for i, e in enumerate(items):
            if isinstance(e, exp.Star):  # (the planner's own columns left out)
                out += [f"`{c}`" for c in schema.names if not c.startswith("_fk_")]
                continue
            if isinstance(e, exp.Column) and e.table and e.table in schema.names:  # a ROW column's field: named by it
                e = exp.alias_(e, e.name, quoted=True)
            if not isinstance(e, (exp.Alias, exp.Column)):
                e = exp.alias_(e, f"EXPR${i}", quoted=True)
            out.append(self.typed_sql(e, schema))
        return out

    def typed_sql(self, e: exp.Expression, schema: Schema | None) -> Sql:
        """``spark_sql``, with its type when the planner knows it for certain (``exact_type``)."""
        return Sql(self.spark_sql(e, schema), declared=exact_type(e.unalias(), schema))

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

        return e.copy().transform(flink_meaning).sql(dialect="spark", comments=False)


def is_updating(stream: Any) -> bool:
    """Whether ``stream`` is an updating result: a changelog whose row kinds are in ``ROW_KIND``."""
    return ROW_KIND in getattr(stream, "columns", ())


def _kind_first(stream: Any, items: list[str | Sql]) -> list[str | Sql]:
    """A projection's items, led by the row kind when ``stream`` is updating (projections keep it)."""
    return [f"`{ROW_KIND}`", *items] if is_updating(stream) else items


def _to_timestamp_ltz(planner: Planner, call: exp.Anonymous) -> exp.Expression:
    """Flink's ``TO_TIMESTAMP_LTZ(epoch, precision)``: precision 3 reads milliseconds, 0 seconds."""
    args = call.expressions
    precision = args[1].name if len(args) == 2 and isinstance(args[1], exp.Literal) else None
    spark = {"3": "TIMESTAMP_MILLIS", "0": "TIMESTAMP_SECONDS"}.get(precision or "")
    if spark is None:
        raise planner.refuse(call, f"{call.sql()} (funke reads epoch milliseconds, precision 3, or seconds, 0)")
    return exp.Anonymous(this=spark, expressions=[args[0]])


def _regexp_extract(planner: Planner, call: exp.Anonymous) -> exp.Expression:
    """Flink's ``REGEXP_EXTRACT(s, regex[, group])``: NULL when the regex does not match (Spark gives ''),
    group 0 (the whole match) when none is given (Spark takes group 1)."""
    args = call.expressions
    if len(args) not in (2, 3):
        raise planner.refuse(call, f"{call.sql()} (REGEXP_EXTRACT takes a string, a regex and a group index)")
    s, regex = args[0], args[1]
    group = args[2] if len(args) == 3 else exp.Literal.number(0)
    extract = exp.Anonymous(this="REGEXP_EXTRACT", expressions=[s.copy(), regex.copy(), group])
    return exp.Case(ifs=[exp.If(this=exp.RegexpLike(this=s, expression=regex), true=extract)])


def _split_index(planner: Planner, call: exp.Anonymous) -> exp.Expression:
    """Flink's ``SPLIT_INDEX(s, separator, index)``: the ``index``-th (from 0) part of ``s`` split at
    every ``separator`` (a string, taken literally), NULL past the last or for a negative index."""
    args = call.expressions
    if len(args) != 3 or not (isinstance(args[1], exp.Literal) and args[1].is_string):
        raise planner.refuse(call, f"{call.sql()} (funke's SPLIT_INDEX takes a string, a separator string literal and an index)")
    s, separator, index = args
    parts = exp.Anonymous(this="SPLIT", expressions=[s, exp.Literal.string("\\Q" + separator.name + "\\E"), exp.Literal.number(-1)])
    at = exp.Anonymous(this="TRY_ELEMENT_AT", expressions=[parts, exp.Add(this=exp.Paren(this=index.copy()), expression=exp.Literal.number(1))])
    return exp.Case(ifs=[exp.If(this=exp.GTE(this=index, expression=exp.Literal.number(0)), true=at)])


def _proctime(planner: Planner, call: exp.Anonymous) -> exp.Expression:
    """``PROCTIME()`` as a value: a processing-time attribute, which funke's views do not have (a lookup
    join's ``FOR SYSTEM_TIME AS OF PROCTIME()`` reads it as "now" and runs)."""
    raise planner.refuse(call, "PROCTIME() (a processing-time attribute)", "windows and joins run on event time (WATERMARK FOR ...)")


#: Flink SQL functions Spark spells (or means) differently, by name.
_FUNCTIONS: dict[str, Callable[[Planner, exp.Anonymous], exp.Expression]] = {
    "TO_TIMESTAMP_LTZ": _to_timestamp_ltz, "REGEXP_EXTRACT": _regexp_extract, "SPLIT_INDEX": _split_index,
    "PROCTIME": _proctime,
}  # fmt: skip

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


def exact_type(e: exp.Expression, schema: Schema | None) -> str | None:
    """The Spark type of ``e`` where Flink's and Spark's agree for certain: a column, a ROW's field
    (``person.id``), a CAST, a CASE whose results all have one such type; None otherwise."""
    if isinstance(e, exp.Paren):
        return exact_type(e.this, schema)
    if isinstance(e, exp.Cast):
        return normalize_type(e.to.sql(dialect="spark"))
    if isinstance(e, exp.Column) and schema is not None:
        if not e.table:
            f = schema.get(e.name)
            return f.dtype if f is not None else None
        row = schema.get(e.table)
        return _row_fields(row.dtype).get(e.name) if row is not None and row.dtype else None
    if isinstance(e, exp.Case) and e.args.get("default") is not None:
        kinds = {exact_type(x, schema) for x in [*(c.args["true"] for c in e.args["ifs"]), e.args["default"]]}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(e, (exp.Predicate, exp.Connector, exp.Not)):  # (comparisons, AND/OR, NOT, IS NULL, LIKE, IN, ...)
        return "boolean"
    if isinstance(e, exp.Literal) and e.is_string:
        return "string"
    if isinstance(e, exp.Literal) and e.name.isdigit():  # (an integer literal: INT, BIGINT past INT's range)
        return "int" if int(e.name) < 2**31 else "bigint" if int(e.name) < 2**63 else None
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul)):  # integers: the wider type, in Flink and Spark alike
        kinds = (exact_type(e.this, schema), exact_type(e.expression, schema))
        return _wider(*kinds) if all(k in INTEGRAL for k in kinds) else None
    return None


def _row_fields(dtype: str) -> dict[str, str]:
    """A flat ``struct<a:t,b:u>`` type's fields and their types ({} for any other type)."""
    if not dtype.startswith("struct<") or dtype.count("<") > 1:
        return {}
    return dict(f.split(":", 1) for f in dtype[len("struct<") : -1].split(",") if ":" in f)


def _unqualify(query: exp.Select) -> None:
    """``t.x`` in ``query`` (not in its subqueries), with ``t`` its FROM relation or that's alias: the stream's column ``x``."""
    named = {query.args["from_"].this.alias_or_name} - {""}
    for column in query.find_all(exp.Column):
        if column.table and column.table in named and column.find_ancestor(exp.Select) is query:
            column.set("table", None)


def _numbered(name: str, seen: set[str]) -> str:
    """``name``, or if ``seen`` has it already ``name0``, ``name1``, ... (Flink's unique output names); added to ``seen``."""
    out, n = name, 0
    while out in seen:
        out, n = f"{name}{n}", n + 1
    seen.add(out)
    return out


def _conjuncts(e: exp.Expression) -> list[exp.Expression]:
    """The terms of ``a AND b AND ...`` (``e`` itself when it is no AND)."""
    return list(e.flatten()) if isinstance(e, exp.And) else [e]


def _join_terms(query: exp.Select, join: exp.Join) -> list[exp.Expression]:
    """A join's conditions: the terms of its ON and of the query's WHERE."""
    where = query.args.get("where")
    return [t for c in (join.args.get("on"), where.this if where else None) if c is not None for t in _conjuncts(c)]


class _JoinColumns:
    """The columns of a join's two sides under internal names (``l.x`` and ``r.x`` may both exist)."""

    def __init__(self, planner: Planner, ln: str, ls: Schema, rn: str, rs: Schema, *, rename: bool = True) -> None:
        self.planner, self.names = planner, (ln, rn)
        self.schemas = (ls, rs)
        self.internal = {(side, c): planner._hide() if rename else c for side, schema in enumerate(self.schemas) for c in schema.names}

    def finish(self, joined: Any, rest: list[exp.Expression], expressions: list[exp.Expression]) -> Any:
        """The joined rows filtered by the conditions ``rest`` (ANDed), then the SELECT list ``expressions``."""
        if rest:
            joined = joined.filter(self.planner.spark_sql(self.rewrite(exp.and_(*rest)), joined.schema))
        return joined.select(*_kind_first(joined, [self.planner.typed_sql(x, joined.schema) for x in self.projection(expressions)]))

    def projection(self, expressions: list[exp.Expression]) -> list[exp.Expression]:
        """A join's SELECT list over the joined columns (a column kept under its own name stays a column);
        a name taken already gets a number, as Flink names them (``B.dateTime, A.dateTime``: ``dateTime``,
        ``dateTime0``)."""
        items: list[exp.Expression] = []
        seen: set[str] = set()
        for i, e in enumerate(expressions):
            if isinstance(e, exp.Star):
                items += [exp.alias_(exp.column(internal, quoted=True), out, quoted=True) for internal, out in self.star()]
                seen.update(out for _, out in self.star())
                continue
            name = _numbered(e.alias_or_name if isinstance(e, (exp.Alias, exp.Column)) else f"EXPR${i}", seen)
            body = self.rewrite(e.this if isinstance(e, exp.Alias) else e)
            same = isinstance(body, exp.Column) and body.name == name
            items.append(body if same else exp.alias_(body, name, quoted=True))
        return items

    def sides_of(self, e: exp.Expression) -> set[int | None]:
        return {self.side_of(c) for c in e.find_all(exp.Column)}

    def all(self) -> list[tuple[str, str, str]]:
        return [(i, ("left", "right")[side], c) for (side, c), i in self.internal.items()]

    def star(self) -> list[tuple[str, str]]:
        """``SELECT *``: the left's columns, then the right's; a name taken already gets a number (Flink's ``id0``)."""
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for (_, c), i in self.internal.items():
            out.append((i, _numbered(c, seen)))
        return out

    def side_of(self, column: exp.Column) -> int | None:
        """Which side a column is on (None: not a column of either)."""
        if column.table:
            if column.table not in self.names:
                raise PlanError(f"Flink SQL: no relation {column.table!r} in this join (at {self.planner.at(column)}); it joins {' and '.join(self.names)}")
            side = self.names.index(column.table)
            self.schemas[side].field(column.name, node=f"{column.table}.{column.name} at {self.planner.at(column)}")
            return side
        on = [side for side, schema in enumerate(self.schemas) if column.name in schema]
        if len(on) > 1:
            raise PlanError(f"Flink SQL: both sides of the join have a column {column.name!r} (at {self.planner.at(column)}): say which, {self.names[0]}.{column.name} or {self.names[1]}.{column.name}")
        if not on:
            raise PlanError(f"Flink SQL: neither side of the join has a column {column.name!r} (at {self.planner.at(column)})")
        return on[0]

    def key_pair(self, t: exp.Expression) -> tuple[str, str] | None:
        """``l.a = r.b`` as (a, b), the left's column first; None for any other condition."""
        if not isinstance(t, exp.EQ) or not isinstance(t.this, exp.Column) or not isinstance(t.expression, exp.Column):
            return None
        a, b = self.side_of(t.this), self.side_of(t.expression)
        if {a, b} != {0, 1}:
            return None
        return (t.this.name, t.expression.name) if a == 0 else (t.expression.name, t.this.name)

    def rewrite(self, e: exp.Expression) -> exp.Expression:
        def swap(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column):
                side = self.side_of(n)
                return exp.column(self.internal[(side, n.name)], quoted=True)
            return n

        return e.copy().transform(swap)


@dataclass
class _Bounds:
    """An interval join's time conditions as bounds on ``right time - left time`` (ms, inclusive or not)."""

    lower: tuple[int, bool] | None = None
    upper: tuple[int, bool] | None = None

    def take(self, t: exp.Expression, columns: _JoinColumns, times: tuple[str | None, str | None]) -> bool:
        """Record ``t`` if it compares the two time attributes; False if it is another condition."""
        if isinstance(t, exp.Between):
            parts = [exp.GTE(this=t.this, expression=t.args["low"]), exp.LTE(this=t.this, expression=t.args["high"])]
            offsets = [self._operands(p, columns, times) for p in parts]
            if None in offsets:
                return False
            for p, o in zip(parts, offsets, strict=True):
                self._add(type(p), *o)
            return True
        if isinstance(t, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
            o = self._operands(t, columns, times)
            if o is None:
                return False
            self._add(type(t), *o)
            return True
        return False

    @staticmethod
    def _operands(t: exp.Expression, columns: _JoinColumns, times: tuple[str | None, str | None]) -> tuple[tuple[int, int], tuple[int, int]] | None:
        sides = []
        for e in (t.this, t.expression):
            offset = 0
            while isinstance(e, exp.Paren):
                e = e.this
            if isinstance(e, (exp.Add, exp.Sub)) and isinstance(e.expression, exp.Interval):
                ms = interval_ms(e.expression)
                if ms is None:
                    return None
                offset, e = (ms if isinstance(e, exp.Add) else -ms), e.this
            if not isinstance(e, exp.Column):
                return None
            side = columns.side_of(e)
            if side is None or e.name != times[side]:
                return None
            sides.append((side, offset))
        if {sides[0][0], sides[1][0]} != {0, 1}:
            return None
        return sides[0], sides[1]

    def _add(self, op: type, a: tuple[int, int], b: tuple[int, int]) -> None:
        """``a op b`` with a, b = (side, offset): side 0's time + offset against side 1's."""
        if op in (exp.GT, exp.GTE):  # a > b  is  b < a
            a, b, op = b, a, exp.LT if op is exp.GT else exp.LTE
        inclusive = op is exp.LTE
        (sa, oa), (_, ob) = a, b
        if sa == 0:  # left + oa <= right + ob:  right - left >= oa - ob
            self._tighten("lower", (oa - ob, inclusive))
        else:  # right + oa <= left + ob:  right - left <= ob - oa
            self._tighten("upper", (ob - oa, inclusive))

    def _tighten(self, which: str, bound: tuple[int, bool]) -> None:
        old = getattr(self, which)
        if old is None:
            setattr(self, which, bound)
            return
        tighter = max if which == "lower" else min
        value = tighter(old[0], bound[0])
        inclusive = (old[1] if old[0] == value else True) and (bound[1] if bound[0] == value else True)
        setattr(self, which, (value, inclusive))

    def complete(self) -> bool:
        return self.lower is not None and self.upper is not None

    def apply(self, joined: Any) -> Any:
        assert self.lower is not None and self.upper is not None
        out = joined.between(self.lower[0], self.upper[0])
        if not self.lower[1]:
            out = out.lower_bound_exclusive()
        if not self.upper[1]:
            out = out.upper_bound_exclusive()
        return out
