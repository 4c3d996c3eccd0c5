"""A Flink SQL query (parsed by ``funke.dialect.syntax``) lowered onto DataStream operations.

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
  window_end[, keys] ORDER BY ...) AS rownum`` in a subquery, ``WHERE rownum <= N`` (or a rank range,
  ``rownum > M AND rownum <= N``) outside it, over a window TVF or a relation carrying its windows
  (lowered by ``funke.table.rank_lowering`` onto ``funke.table.rank``'s operators); in batch mode by ``RANK()``
  or ``DENSE_RANK()`` too.

* a join of two relations, lowered by ``funke.table.join_lowering`` (the methods of ``Planner`` it
  inherits): an inner interval join of two views (key equalities and both time attributes bounded
  against each other, in ``ON`` or ``WHERE``, ``funke.api.joins``); a window join, inner or outer, of two
  window TVFs; a regular join, inner or outer (keys without both time bounds, ``funke.table.joins``; an
  outer one is an updating result); a lookup join with a static table.

* updating results: a group aggregation without a window (``GROUP BY k``, ``funke.table.aggregate``),
  a deduplication on event time (``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY ts [DESC])`` kept
  at 1, ``funke.table.rank.Deduplicate``) and a regular Top-N (the same without windows otherwise,
  ``funke.table.rank.TopN``). Each is a changelog whose row kinds travel in a hidden
  column (``funke.table.changelog``); projections and filters over it keep the kinds, anything else
  over it is refused.

Around them: ``UNION ALL`` (by position), subqueries in ``FROM`` and ``WITH``, ``CURRENT_WATERMARK(ts)``
(``funke.table.watermark``). What a FROM reads (a view, a subquery, a window TVF, ``VALUES``) is lowered by
``funke.table.from_lowering``.

What this module and ``funke.table.join_lowering`` share (the window TVF's columns, ``is_updating``)
is in ``funke.table.lowering``.

Expressions are translated to Spark SQL; where Flink and Spark differ in meaning, funke takes
Flink's: ``/`` between integers divides integers (Spark's ``DIV``), ``SUM`` and ``AVG`` of an
integer column keep its type (Flink's ``AVG`` of ``INT`` is an ``INT``). Anything else is refused
while planning, naming the construct and where it is in the query.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from funke.dialect.date_arithmetic import date_plus_interval, quarters_as_months
from funke.dialect.functions import check_calls
from funke.dialect.functions import lowered as builtin_call
from funke.dialect.like import like
from funke.dialect.rewrites import NOW, extract, fill, round_to, rounded
from funke.dialect.syntax import position
from funke.errors import PlanError, UnsupportedError
from funke.plan.expr import Expr, ProcTime, Sql
from funke.plan.types import Field, Schema
from funke.table.aggregate_lowering import AggregateLowering
from funke.table.changelog import INSERT, ROW_KIND, changelog_mode
from funke.table.columns import check_window_query
from funke.table.from_lowering import FromLowering, Tvf, unqualify
from funke.table.grouping_sets import grouping_call, has_grouping_sets
from funke.table.join_lowering import JoinLowering
from funke.table.join_views import JoinViews
from funke.table.lowering import WINDOW_END, WINDOW_START, WINDOW_TIME, is_updating, kind_first
from funke.table.meaning import CALL_ARGS, SIMILAR_TO, arithmetic, cast, is_localtimestamp, keyword_column, overlaps, subscript
from funke.table.over_lowering import OverLowering, named_windows
from funke.table.rank_lowering import RankLowering
from funke.table.sort import SortLowering
from funke.table.sql_types import exact_type, type_of
from funke.table.subqueries import SET_OPERATION_CLAUSES, SubqueryLowering
from funke.table.time_of_day import (
    CURRENT_TIME,
    call_arguments,
    check_time_arguments,
    from_time,
    is_localtime,
    is_time_cast,
    time_arithmetic,
    time_precision,
    to_time,
)
from funke.table.udf_lowering import PythonFunctionLowering
from funke.table.watermark import WithWatermark
from funke.table.windows import group_window_query, has_group_window, windows_sql

#: Parts of a SELECT this planner does not run yet, by sqlglot's argument name.
_REFUSED = {
    "joins": "a join",
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "qualify": "QUALIFY",
    "laterals": "a LATERAL table",
}


@dataclass
class Planner(
    JoinLowering, JoinViews, PythonFunctionLowering, AggregateLowering, OverLowering, SubqueryLowering, SortLowering,
    RankLowering, FromLowering,
):
    """Lowers one query; ``views`` maps each view name to a function returning its DataStream. What its FROM
    reads (views, subqueries, window TVFs, VALUES) is lowered by the methods of ``FromLowering``
    (``funke.table.from_lowering``); its joins by those of ``JoinLowering`` (``funke.table.join_lowering``),
    its aggregations by those of ``AggregateLowering`` (``funke.table.aggregate_lowering``), its Top-Ns and
    deduplications by those of ``RankLowering`` (``funke.table.rank_lowering``); joins of more than two relations
    and queries over joined rows by those of ``JoinViews`` (``funke.table.join_views``); its Python
    functions by those of ``PythonFunctionLowering`` (``funke.table.udf_lowering``), found in ``functions``
    (a Python aggregate function plugs into ``AggregateLowering`` there)."""

    views: Mapping[str, Callable[[], Any]]
    sql: str
    #: ``table.exec.state.ttl``: how long the state of a group aggregation, deduplication or regular
    #: join keeps a key's rows after their last write (processing time); None: for ever.
    state_ttl_ms: int | None = None
    #: The table environment's Python functions (``funke.table.catalog.FunctionCatalog``), or None.
    functions: Any = None
    #: Tables read as streams that a lookup join (``JOIN t FOR SYSTEM_TIME AS OF ...``) reads as a static
    #: table instead (a ``filesystem`` table): name to a function returning that ``StaticTable``.
    lookups: Mapping[str, Callable[[], Any]] = field(default_factory=dict)
    #: Whether the environment runs in batch mode (Flink's ``RuntimeExecutionMode.BATCH``): a sort of the
    #: whole result then runs (``funke.table.sort``).
    batch: bool = False
    #: A bounded stream of n rows (one column, ``_fk_row``: 0, 1, ...), what ``VALUES`` rows are computed over;
    #: None: VALUES and a SELECT without FROM are refused (a planner of no environment).
    rows: Callable[[int], Any] | None = None
    _hidden: int = field(default=0)
    _checked: bool = field(default=False)

    def check_calls(self, e: exp.Expression) -> None:
        """Refuse, while planning, a call in ``e`` of no Flink built-in and no Python function of the
        environment, or of a built-in funke refuses (``funke.dialect.functions.check_calls``)."""
        check_calls(e, self.sql, self.functions.names() if self.functions is not None else (), self.at)

    def at(self, node: exp.Expression) -> str:
        return position(node, self.sql)

    def refuse(self, node: exp.Expression, what: str, hint: str = "") -> UnsupportedError:
        return UnsupportedError(f"Flink SQL: {what} (at {self.at(node)}) is not supported by funke yet{'; ' + hint if hint else ''}")

    def lower(self, query: exp.Expression) -> Any:
        if not self._checked:  # (the whole query, once)
            self._checked = True
            self.check_calls(query)
        self.mark_python_aggregates(query)
        if isinstance(query, exp.Subquery):  # (a parenthesized query)
            return self.lower(query.this)
        if isinstance(query, (exp.Intersect, exp.Except)):
            return self.lower_set_operation(query)
        if isinstance(query, exp.Union):
            return self._union(query)
        if isinstance(query, exp.Values) and not query.alias:  # (VALUES (1, 'a'), ...: its columns EXPR$0, ..., as Flink's)
            values = query.copy()
            values.set("alias", exp.TableAlias(this=exp.to_identifier("_fk_values")))
            return self.lower(exp.select("*").from_(values))
        if not isinstance(query, exp.Select):
            raise self.refuse(query, f"a {type(query).__name__.upper()} statement", "sql_query takes one SELECT")
        if query.args.get("windows"):
            return self.lower(named_windows(query, self.at))
        if query.args.get("with_"):
            self._ctes(query.args["with_"])
        if query.args.get("match") is not None:
            return self.lower(self._match_recognize(query))
        if query.args.get("order") or query.args.get("limit") or query.args.get("offset"):
            return self._sort_limit(query)
        if query.args.get("distinct"):
            return self._select_distinct(query)
        if (windowed := self._group_window(query)) is not None:
            return self.lower(windowed)
        if (lateral := self.lower_lateral(query)) is not None:
            return self.lower(lateral)
        if (scalar := self.lower_scalar_subqueries(query)) is not None:
            return self.lower(scalar)
        if (semi := self.lower_subquery_predicates(query)) is not None:
            return self.lower(semi)
        if query.args.get("joins"):
            if query.args.get("group") or query.args.get("having") or self._aggregates(query) or _ranks(query):
                # (GROUP BY, aggregates or ROW_NUMBER over the joined rows)
                return self.lower(self._over_join(query))
            return self._join(query)
        self._no_refused_parts(query)
        source = query.args.get("from_")
        inner = source.this.this if source is not None and isinstance(source.this, exp.Subquery) else None
        if isinstance(inner, exp.Select) and any(isinstance(e.unalias(), exp.Window) and self._ranking(e.unalias()) for e in inner.expressions):
            return self._top_n(query, inner)
        for node in query.find_all(exp.Window):
            if self._ranking(node):
                raise self.refuse(node, "an OVER window here", "a window Top-N runs: SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rownum FROM ...) WHERE rownum <= N")
        if source is None:  # (one row, as Flink's SELECT without FROM gives)
            if self.rows is None:
                raise self.refuse(query, "a SELECT without FROM")
            one = exp.Values(expressions=[exp.Tuple(expressions=[exp.Literal.number(0)])], alias=exp.TableAlias(this=exp.to_identifier(self._hide())))
            return self.lower(query.copy().from_(one))
        for key, arg in query.args.items():  # (a subquery in FROM is lowered on its own; nowhere else)
            for node in (x for a in (arg if isinstance(arg, list) else [arg]) if isinstance(a, exp.Expression) for x in a.walk()):
                if key not in ("from_", "with_") and isinstance(node, (exp.Subquery, exp.Select)):
                    raise self.refuse(node, "a subquery outside FROM", "a subquery in FROM runs, and IN or [NOT] EXISTS as a term of WHERE")
        stream, tvf = self._source(source.this)
        unqualify(query)
        if tvf is not None:
            check_window_query(query, stream.schema, self.at)
        stream = self._current_watermark(query, stream, tvf)
        if tvf is not None and not (query.args.get("group") or query.args.get("having") or self._aggregates(query) or query.find(exp.Window)):
            return self._window_table(query, stream, tvf, source)
        where = query.args.get("where")
        if where is not None:
            self._no_window_columns(where.this, "WHERE")
            stream = stream.filter(self.spark_sql(where.this, stream.schema))
        if query.find(exp.Window) is not None:
            if tvf is not None:
                raise self.refuse(source, "an OVER aggregation over a window TVF")
            return self._over_aggregate(query, stream, source.this)
        aggregated = self._aggregates(query)
        if query.args.get("group") or query.args.get("having") or aggregated:
            if has_grouping_sets(query):
                return self._grouping_sets(query, stream, tvf)
            if tvf is None:
                return self._group_aggregate(query, stream)
            return self._window_aggregate(query, stream, tvf)
        return stream.select(*kind_first(stream, self._projection(query.expressions, stream.schema)))

    def _window_table(self, query: exp.Select, stream: Any, tvf: Tvf, source: exp.Expression) -> Any:
        """``SELECT ... FROM TABLE(TUMBLE|HOP|CUMULATE(...)) [WHERE ...]`` without an aggregation: Flink's window table
        function. Each row once per window it is in, with ``window_start``, ``window_end`` and ``window_time`` (the
        end less 1 ms), as it arrives: stateless and insert-only, no row late (Flink's operator drops none). The
        WHERE may read the window's columns. SESSION's, which waits for its sessions to end, is refused."""
        if tvf.kind == "SESSION":
            raise self.refuse(source, "a SESSION window TVF without GROUP BY window_start, window_end", "aggregate its rows per session")
        kept = [f"`{c}`" for c in stream.columns]
        hidden = self._hide()
        spread = stream.select(*kept, Sql(f"explode({windows_sql(tvf.assigner, tvf.time)}) AS `{hidden}`", declared="struct<s:bigint,e:bigint>"))
        bounds = (("s", WINDOW_START, ""), ("e", WINDOW_END, ""), ("e", WINDOW_TIME, " - 1"))
        stream = spread.select(*kept, *(Sql(f"timestamp_millis(`{hidden}`.{f}{less}) AS `{name}`", declared="timestamp") for f, name, less in bounds))
        where = query.args.get("where")
        if where is not None:
            stream = stream.filter(self.spark_sql(where.this, stream.schema))
        return stream.select(*self._projection(query.expressions, stream.schema))

    def _group_window(self, query: exp.Select) -> exp.Select | None:
        """A legacy group window (``GROUP BY k, TUMBLE(ts, size)``) as the window TVF over the query's
        FROM (``funke.table.windows.group_window_query``); None without one."""
        if not has_group_window(query):
            return None
        group = query.args["group"]
        source = query.args.get("from_")
        if source is None or query.args.get("joins"):
            raise self.refuse(group, "a group window over a join")
        stream, tvf = self._source(source.this)
        if tvf is not None:
            raise self.refuse(group, "a group window over a window TVF")
        name = self._hide()
        self.views = {**self.views, name: lambda: stream}
        return group_window_query(query, name, self.refuse)

    def _match_recognize(self, query: exp.Select) -> exp.Select:
        """``FROM v MATCH_RECOGNIZE (...) [AS] t``: the CEP pattern's matches (``funke.table.match_recognize``)
        as a view named ``t``, and the query over it."""
        from funke.table.match_recognize import MatchRecognize

        node = query.args["match"]
        source = query.args.get("from_")
        if source is None or query.args.get("joins"):
            raise self.refuse(node, "MATCH_RECOGNIZE over a join", "match over one view (join in a subquery first)")
        stream, tvf = self._source(source.this)
        if tvf is not None:
            raise self.refuse(node, "MATCH_RECOGNIZE over a window TVF")
        matches = MatchRecognize(node, stream, self.at, self._hide).lower()
        name = self._hide()
        self.views = {**self.views, name: lambda: matches}
        alias = node.args.get("alias")
        outer = query.copy()
        outer.set("match", None)
        table = exp.Table(this=exp.to_identifier(name), alias=alias.copy() if alias is not None else None)
        outer.set("from_", exp.From(this=table))
        return outer

    def _no_refused_parts(self, query: exp.Select, allowed: tuple[str, ...] = ()) -> None:
        """Refuse the parts of a SELECT funke does not run (``_REFUSED``), but for ``allowed``."""
        for arg, what in _REFUSED.items():
            if arg not in allowed and query.args.get(arg):
                raise self.refuse(query.args[arg] if isinstance(query.args[arg], exp.Expression) else query, what)

    def _union(self, query: exp.Union) -> Any:
        if query.args.get("distinct"):
            return self.lower_set_operation(query)
        for arg, clause in SET_OPERATION_CLAUSES.items():
            if query.args.get(arg):
                raise self.refuse(query.args[arg], f"{clause} on a UNION ALL")
        left, right, lc, rc = self.set_operands(query, "UNION ALL")
        kinds: list[str] = []
        if is_updating(left) or is_updating(right):  # (a changelog and its other side's rows, each an insert)
            kinds = [f"`{ROW_KIND}`"]
            left, right = (s if is_updating(s) else s.with_column(ROW_KIND, Sql(f"'{INSERT}'", declared="string")) for s in (left, right))
        if left.columns != right.columns:  # by position, named as on the left (as in Flink)
            left = left.select(*kinds, *(f"`{x}`" for x in lc))
            right = right.select(*kinds, *(f"`{r}`" if r == x else f"`{r}` AS `{x}`" for r, x in zip(rc, lc, strict=True)))
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

    def _known_types(self, stream: Any, what: str, skip: Collection[str] = ()) -> None:
        """``what`` keeps rows in funke's state, so it needs each column's type: refuse columns whose type
        only Spark knows (an expression funke cannot type), naming them. ``skip``: columns it reads but
        never writes out (a join condition's hidden columns)."""
        unknown = [f.name for f in stream.schema if f.dtype is None and f.name not in skip]
        if unknown:
            raise PlanError(
                f"Flink SQL: {what} needs the type of {', '.join(unknown)}, an expression whose type funke cannot tell: "
                f"CAST it in the query (CAST(... AS BIGINT) AS {unknown[0]})"
            )

    def _insert_only(self, stream: Any, node: exp.Expression, what: str, *, flink_takes: bool = False) -> None:
        """Refuse ``what`` over an updating result (a changelog: a group aggregation's, a regular Top-N's, a
        deduplication's, an outer join's or a join's of one, an upsert table): as in Flink, interval joins, lookup
        joins and MATCH_RECOGNIZE take insert-only rows (an update has no time attribute); ``flink_takes``: Flink 2
        takes a changelog there (a window TVF), funke not yet."""
        if is_updating(stream):
            why = "Flink 2 takes an upsert table's there, funke not yet" if flink_takes else "as in Flink, it takes insert-only rows"
            raise self.refuse(
                node, f"{what} over an updating result ({changelog_mode(stream.node).describe()})",
                f"{why}; a GROUP BY, a regular join, a regular Top-N or DISTINCT take updating ones",
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
        if tvf is not None or query.args.get("group") or self._aggregates(query):
            raise self.refuse(calls[0], "CURRENT_WATERMARK in a window aggregation", "use it in a SELECT or WHERE over a view")
        column, bucket = self._hide(), self._hide()
        keyed = stream.with_column(bucket, f"pmod(xxhash64(`{stream.node.event_time}`), 64)").key_by(bucket)
        out = Schema((*keyed.schema.fields, Field(column, "timestamp")))
        marked = keyed.process(WithWatermark(column), output_schema=out)
        for c in calls:
            c.replace(exp.column(column, quoted=True))
        return marked

    def _hide(self) -> str:
        self._hidden += 1
        return f"_fk_{self._hidden}"

    # -- expressions -----------------------------------------------------------------------
    def _no_window_columns(self, e: exp.Expression, where: str) -> None:
        for c in e.find_all(exp.Column):
            if c.name in (WINDOW_START, WINDOW_END, WINDOW_TIME):
                raise self.refuse(c, f"{c.name} in {where}", "filter window results with HAVING")

    def _projection(self, items: list[exp.Expression], schema: Schema) -> list[str | Expr]:
        out: list[str | Expr] = []
        for i, e in enumerate(items):
            if isinstance(e, exp.Star):  # (the planner's own columns left out)
                out += [f"`{c}`" for c in schema.names if not c.startswith("_fk_")]
                continue
            if isinstance(e, exp.Column) and e.table and e.table in schema.names:  # a ROW column's field: named by it
                e = exp.alias_(e, e.name, quoted=True)
            if not isinstance(e, (exp.Alias, exp.Column)):
                e = exp.alias_(e, f"EXPR${i}", quoted=True)
            out.append(self.column_value(e.unalias(), schema).alias(e.alias_or_name) if is_proctime(e.unalias()) else self.typed_sql(e, schema))
        return out

    def column_value(self, e: exp.Expression, schema: Schema | None) -> Expr:
        """A column's value: ``PROCTIME()`` alone makes a processing-time attribute (``ProcTime``), as in
        Flink; any other expression is Spark SQL (``typed_sql``)."""
        return ProcTime() if is_proctime(e) else self.typed_sql(e, schema)

    def typed_sql(self, e: exp.Expression, schema: Schema | None) -> Sql:
        """``spark_sql``, with its type when the planner knows it for certain (``exact_type``)."""
        return Sql(self.spark_sql(e, schema), declared=self.python_type(e.unalias()) or exact_type(e.unalias(), schema))

    def spark_sql(self, e: exp.Expression, schema: Schema | None) -> str:
        """``e`` as a Spark SQL expression with Flink's meaning: built-in functions as ``funke.dialect.functions``
        gives them, integer ``/`` dividing integers."""

        def flink_meaning(n: exp.Expression) -> exp.Expression:
            if (python := self.python_call(n, schema, lambda x: x.transform(flink_meaning))) is not None:
                return python
            if isinstance(n, (exp.Func, exp.Like, exp.ILike)):
                check_time_arguments(n, self.sql, [type_of(a, schema) for a in call_arguments(n)], self.at)
            if isinstance(n, exp.Anonymous) or type(n) in CALL_ARGS:
                given = list(n.expressions) if isinstance(n, exp.Anonymous) else [n.args[k] for k in CALL_ARGS[type(n)] if n.args.get(k) is not None]
                args = [a.transform(flink_meaning) for a in given]
                types = [type_of(a, schema) for a in given]
                lowered = builtin_call(n, self.sql, args, types, lambda what: self.refuse(n, what))
                if lowered is not None:
                    return lowered
            if grouping_call(n):  # (an aggregation's SELECT list and HAVING have none left: funke.table.grouping_sets)
                raise PlanError(f"Flink SQL: {n.sql()} at {self.at(n)} outside the SELECT list and HAVING of an aggregation: it tells a GROUP BY's grouping sets apart")
            if is_localtimestamp(n, schema):
                return fill(NOW, [])
            if isinstance(n, (exp.Like, exp.Escape)) and (matched := like(n, lambda x: x.transform(flink_meaning))) is not None:
                return matched
            if isinstance(n, exp.SimilarTo):
                return fill(SIMILAR_TO, [n.this.transform(flink_meaning), n.expression.transform(flink_meaning)])
            if isinstance(n, exp.Bracket):
                return subscript(n, schema, flink_meaning, self.refuse)
            if isinstance(n, exp.Overlaps):
                return overlaps(n, flink_meaning, self.refuse)
            if isinstance(n, (exp.Add, exp.Sub)) and (timed := time_arithmetic(n, (type_of(n.this, schema), type_of(n.expression, schema)), flink_meaning, self.at)) is not None:
                return timed
            if (months := quarters_as_months(n)) is not None:
                return months
            if (dated := date_plus_interval(n, (type_of(n.this, schema), type_of(n.expression, schema)), flink_meaning)) is not None:
                return dated
            if isinstance(n, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
                return arithmetic(n, schema, flink_meaning, self.refuse)
            if is_time_cast(n):
                return to_time(n, n.this.transform(flink_meaning), type_of(n.this, schema), self.at)
            if isinstance(n, (exp.Cast, exp.TryCast)) and time_precision(type_of(n.this, schema)) is not None:
                target, precision = n.to.sql(dialect="spark").lower(), time_precision(type_of(n.this, schema)) or 0
                timed = from_time(n, n.this.transform(flink_meaning), target, self.at, precision)
                if timed is not None:
                    return timed
            if isinstance(n, (exp.Cast, exp.TryCast)):
                now = isinstance(n.this, exp.CurrentTimestamp) or is_localtimestamp(n.this, schema)  # (sqlglot's nodes: no type_of)
                return cast(n, "timestamp" if now else type_of(n.this, schema), flink_meaning)
            if isinstance(n, exp.Extract):
                return extract(n.name, n.expression.transform(flink_meaning), type_of(n.expression, schema))
            if isinstance(n, exp.CurrentTime) or is_localtime(n, schema):
                return CURRENT_TIME.copy()
            if isinstance(n, (exp.Floor, exp.Ceil)) and n.args.get("to") is not None:
                return round_to(isinstance(n, exp.Ceil), n.args["to"].name, n.this.transform(flink_meaning), type_of(n.this, schema))
            if isinstance(n, (exp.Floor, exp.Ceil)) and n.args.get("decimals") is None:
                return rounded(isinstance(n, exp.Ceil), n.this.transform(flink_meaning), type_of(n.this, schema))
            if isinstance(n, exp.CurrentTimestamp):
                return fill(NOW, [])
            return n

        if schema is not None:
            self._known_columns(e, schema)
        return e.copy().transform(flink_meaning).sql(dialect="spark", comments=False)

    def _known_columns(self, e: exp.Expression, schema: Schema) -> None:
        """An unqualified column of ``e`` that ``schema`` lacks is an unknown column here, with did-you-mean,
        not an error of Spark's when the job starts (names compared as Spark's analyzer does, ignoring case;
        a lambda's parameters and ``row.field`` are Spark's to resolve)."""
        names = {x.lower() for x in schema.names}
        for c in e.find_all(exp.Column):
            if c.table or isinstance(c.this, exp.Star) or c.name.lower() in names or c.find_ancestor(exp.Lambda) is not None:
                continue
            if keyword_column(c) and not schema.get(c.name):
                continue
            if is_localtimestamp(c, schema) or is_localtime(c, schema):
                continue
            schema.field(c.name, node=f"Flink SQL: {c.sql()} at {self.at(c)}")


def is_proctime(e: exp.Expression) -> bool:
    """Whether ``e`` is a bare ``PROCTIME()`` call."""
    return isinstance(e, exp.Anonymous) and e.name.upper() == "PROCTIME" and not e.expressions


def _ranks(query: exp.Select) -> bool:
    """Whether the query's SELECT list has an OVER window (a ROW_NUMBER of a Top-N)."""
    return any(isinstance(n, exp.Window) for e in query.expressions for n in e.walk())
