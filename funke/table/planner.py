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
  (``funke.table.rank``); in batch mode by ``RANK()`` or ``DENSE_RANK()`` too.

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
(``funke.table.watermark``).

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

from funke.connectors.tables import StaticTable
from funke.dialect.functions import check_calls
from funke.dialect.functions import lowered as builtin_call
from funke.dialect.rewrites import NOW, extract, fill, round_to, rounded
from funke.dialect.syntax import Descriptor, TableArg, WindowTvf, interval_ms, position
from funke.errors import PlanError, UnsupportedError
from funke.plan.expr import Expr, ProcTime, Sql
from funke.plan.types import Field, Schema
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
from funke.table.aggregate_lowering import AggregateLowering
from funke.table.changelog import INSERT, ROW_KIND, changelog_mode
from funke.table.columns import check_window_query
from funke.table.grouping_sets import grouping_call, has_grouping_sets
from funke.table.join_lowering import JoinLowering
from funke.table.join_views import JoinViews
from funke.table.lowering import WINDOW_END, WINDOW_START, WINDOW_TIME, conjuncts, is_updating, kind_first
from funke.table.meaning import CALL_ARGS, SIMILAR_TO, arithmetic, cast, is_localtimestamp, keyword_column, overlaps, subscript
from funke.table.namespace import object_name
from funke.table.over_lowering import OverLowering, named_windows
from funke.table.rank import DENSE_RANK, RANK, ROW_NUMBER, Deduplicate, Order, RetractableTopN, TopN, WindowResultTopN, WindowTopN
from funke.table.sort import RankAtEnd, SortLowering
from funke.table.sql_types import exact_type, type_of
from funke.table.subqueries import SET_OPERATION_CLAUSES, SubqueryLowering
from funke.table.udf_lowering import PythonFunctionLowering
from funke.table.watermark import WithWatermark
from funke.table.windows import group_window_query, has_group_window

#: Parts of a SELECT this planner does not run yet, by sqlglot's argument name.
_REFUSED = {
    "joins": "a join",
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "qualify": "QUALIFY",
    "laterals": "a LATERAL table",
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
class Planner(JoinLowering, JoinViews, PythonFunctionLowering, AggregateLowering, OverLowering, SubqueryLowering, SortLowering):
    """Lowers one query; ``views`` maps each view name to a function returning its DataStream. Its joins
    are lowered by the methods of ``JoinLowering`` (``funke.table.join_lowering``), its aggregations by
    those of ``AggregateLowering`` (``funke.table.aggregate_lowering``); joins of more than two relations
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
        _unqualify(query)
        if tvf is not None:
            check_window_query(query, stream.schema, self.at)
        stream = self._current_watermark(query, stream, tvf)
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
        if tvf is not None:
            raise self.refuse(source, "a window TVF without GROUP BY window_start, window_end", "aggregate its rows per window")
        return stream.select(*kind_first(stream, self._projection(query.expressions, stream.schema)))

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
        self._insert_only(stream, args[0], f"a {kind} window")
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

    def _insert_only(self, stream: Any, node: exp.Expression, what: str) -> None:
        """Refuse ``what`` over an updating result (a changelog: a group aggregation's, a regular Top-N's, a
        deduplication's, an outer join's or a join's of one): as in Flink, windows, interval joins, lookup
        joins and MATCH_RECOGNIZE take insert-only rows (an update has no time attribute)."""
        if is_updating(stream):
            raise self.refuse(
                node, f"{what} over an updating result ({changelog_mode(stream.node).describe()})",
                "as in Flink, it takes insert-only rows; a GROUP BY, a regular join, a regular Top-N or DISTINCT take updating ones",
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

    # -- window Top-N and deduplication ---------------------------------------------------------
    def _top_n(self, outer: exp.Select, inner: exp.Select) -> Any:
        """``SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, keys]
        ORDER BY ...) AS rownum FROM r) WHERE rownum <= N [AND ...]``: Flink's window Top-N (window
        deduplication when N is 1). ``r`` is a window TVF (its rows ranked per window by the window
        operator, late rows dropped) or a relation carrying window_start and window_end, such as a window
        aggregation (its rows ranked when the watermark passes the window's end). Without window bounds in
        its PARTITION BY, the regular Top-N or a deduplication. The outer WHERE's conditions on rownum give
        the ranks kept (``_rank_range``); RANK() and DENSE_RANK() run in batch mode, as in Flink."""
        if inner.args.get("joins"):  # (a Top-N over joined rows: it ranks the rows of the join as a view)
            inner = self._over_join(inner)
        self._no_refused_parts(inner)
        for arg in ("group", "having"):
            if inner.args.get(arg):
                raise self.refuse(inner.args[arg], "an aggregation in the query of a Top-N", "aggregate in a subquery of its FROM")
        ranks = [e for e in inner.expressions if isinstance(e.unalias(), exp.Window)]
        over = ranks[0].unalias()
        if len(ranks) > 1:
            raise self.refuse(ranks[1], "a second OVER window in one query")
        function = _TOP_N_FUNCTIONS.get(type(over.this))
        if function is None:
            raise self.refuse(over, f"{over.this.sql()} OVER (...)", "a Top-N takes ROW_NUMBER(), and in batch mode RANK() or DENSE_RANK()")
        if over.args.get("spec"):
            raise self.refuse(over, "a window frame (ROWS/RANGE) in a Top-N")
        rownum = ranks[0].alias if isinstance(ranks[0], exp.Alias) else None
        if rownum is None:
            raise self.refuse(over, f"{function}() without a name", f"name it: {function}() OVER (...) AS rownum")
        partition = [c.name if isinstance(c, exp.Column) and not c.table else None for c in over.args.get("partition_by") or []]
        if None in partition:
            raise self.refuse(over, "PARTITION BY an expression", "partition by columns")
        windowed = WINDOW_START in partition and WINDOW_END in partition
        keys = [c for c in partition if c not in (WINDOW_START, WINDOW_END)] if windowed else partition
        if function != ROW_NUMBER and not self.batch:
            raise PlanError(
                f"Flink SQL: {function}() at {self.at(over)} in a {'window ' if windowed else ''}Top-N in streaming mode: as in Flink, "
                "a stream's Top-N ranks by ROW_NUMBER() only; number the rows with ROW_NUMBER(), or run in batch mode"
            )
        ordered = over.args.get("order")
        if ordered is None:
            raise self.refuse(over, f"{function}() without ORDER BY")
        order = []
        for o in ordered.expressions:
            if not isinstance(o.this, exp.Column) or o.this.table:
                raise self.refuse(o, f"ORDER BY {o.this.sql()} in a Top-N (only columns)")
            order.append(Order(o.this.name, bool(o.args.get("desc")), bool(o.args.get("nulls_first"))))
        start, limit, rest = self._rank_range(outer, rownum)

        source = inner.args["from_"].this
        stream, tvf = self._source(source)
        if windowed:
            self._insert_only(stream, source, "a window Top-N")
        where = inner.args.get("where")
        if not windowed:
            if tvf is not None:
                raise self.refuse(over, "a Top-N over a window TVF not partitioned by window_start and window_end")
            if where is not None:
                stream = stream.filter(self.spark_sql(where.this, stream.schema))
            time = stream.node.event_time
            schema = self._fields(stream.schema.without((ROW_KIND,)), order, keys)
            star = list(schema.names)
            ddl = Schema((Field(ROW_KIND, "string"), *schema.fields, Field(rownum, "bigint")))
            partition = tuple(keys)
            if not keys:
                keys = [self._hide()]
                stream = stream.with_column(keys[0], Sql("0", declared="int"))
            # (the row number costs updates of every rank that moves: only when the result shows it)
            shown = any(isinstance(e, exp.Star) or any(c.name == rownum for c in e.find_all(exp.Column)) for e in outer.expressions)
            fn: Any
            attribute = order[0].column if limit == 1 and len(order) == 1 and order[0].column in (time, stream.node.proc_time) else None
            if function != ROW_NUMBER:  # (batch mode: above)
                if is_updating(stream):
                    self._known_types(stream, "a Top-N over an updating result")
                ddl = Schema((*schema.fields, Field(rownum, "bigint")))
                fn, attribute = RankAtEnd(order, function, start, limit, rownum), None
            elif is_updating(stream):  # (Flink's retractable Top-N: every row kept, a retracted one taken out)
                self._known_types(stream, "a Top-N over an updating result")
                fn = RetractableTopN(order, limit, rownum, numbered=shown, ttl_ms=self.state_ttl_ms, partition=partition, start=start)
            elif attribute is not None and attribute != time and not order[0].descending and not self.state_ttl_ms:
                # Flink's keep-first deduplication on processing time: each key's first row, on Spark's dropDuplicates
                # insert-only; its keys stay for the job's life (with a state TTL: below)
                fn = None
            elif attribute is not None:
                fn = Deduplicate(attribute, keep_last=order[0].descending, rownum=rownum, ttl_ms=self.state_ttl_ms, partition=partition)
            else:
                fn = TopN(order, limit, rownum, numbered=shown, ttl_ms=self.state_ttl_ms, partition=partition, start=start)
            if fn is None:
                first = stream.key_by(keys, nulls=True).deduplicate(name="ROW_NUMBER() deduplication")
                ranked = first.with_column(rownum, Sql("CAST(1 AS BIGINT)", declared="bigint"))
            else:
                ranked = stream.key_by(keys, nulls=True).process(fn, output_schema=ddl)
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
            fn = WindowTopN(order, limit, rownum, start=start, function=function, keep_last=_keeps_last(order, limit, start, stream.node.event_time, stream.node.proc_time))
            ranked = stream.key_by(keys, nulls=True).window(tvf.assigner).process(fn, output_schema=ddl)
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
            fn = WindowResultTopN(order, limit, rownum, start=start, function=function, keep_last=_keeps_last(order, limit, start, WINDOW_TIME, stream.node.event_time))
            ranked = stream.key_by([WINDOW_START, WINDOW_END, *keys], nulls=True).process(fn, output_schema=ddl)
        items: list[exp.Expression] = []
        for e in inner.expressions:
            if isinstance(e, exp.Star):
                items += [exp.column(c, quoted=True) for c in star]
            else:
                items.append(exp.column(rownum, quoted=True) if isinstance(e.unalias(), exp.Window) else e)
        view = ranked.select(*kind_first(ranked, self._projection(items, ranked.schema)))
        _unqualify(outer)
        if rest is not None:
            view = view.filter(self.spark_sql(rest, view.schema))
        return view.select(*kind_first(view, self._projection(outer.expressions, view.schema)))

    def _fields(self, schema: Schema, order: list[Order], keys: list[str]) -> Schema:
        """``schema``, checking the Top-N's ORDER BY and PARTITION BY columns are in it."""
        for name in (*(o.column for o in order), *keys):
            schema.field(name, node="the Top-N's OVER (...)")
        return schema

    def _rank_range(self, outer: exp.Select, rownum: str) -> tuple[int, int, exp.Expression | None]:
        """The ranks a Top-N keeps, ``start`` to ``end``, from the conditions on ``rownum`` ANDed in the outer
        WHERE (``rownum <= N``, ``< N``, ``= N``, ``> M``, ``>= M``, ``BETWEEN M AND N``, either way round; several
        narrow the range, as in Flink), and the rest of the outer WHERE (ANDed)."""
        where = outer.args.get("where")
        terms = conjuncts(where.this) if where is not None else []
        starts, ends, rest = [1], [], []
        hint = f"filter it: WHERE {rownum} <= N, or {rownum} > M AND {rownum} <= N"
        flipped = {exp.LT: exp.GT, exp.LTE: exp.GTE, exp.GT: exp.LT, exp.GTE: exp.LTE, exp.EQ: exp.EQ}
        for t in terms:
            if not any(c.name == rownum for c in t.find_all(exp.Column)):
                rest.append(t)
                continue
            bounds = [t.args.get("low"), t.args.get("high")] if isinstance(t, exp.Between) else [t.expression]
            numbers = [b.to_py() if isinstance(b, exp.Literal) and not b.is_string else None for b in bounds]
            subject, kind = t.this, type(t)
            if type(t) in flipped and isinstance(t.expression, exp.Column) and isinstance(t.this, exp.Literal):  # (N >= rownum)
                subject, kind, numbers = t.expression, flipped[type(t)], [t.this.to_py() if not t.this.is_string else None]
            if not (isinstance(subject, exp.Column) and subject.name == rownum and kind in (*flipped, exp.Between)) or not all(
                type(x) is int for x in numbers  # (not a bool)
            ):
                raise self.refuse(t, f"the condition {t.sql()} on {rownum}", hint)
            if kind in (exp.GT, exp.GTE, exp.EQ, exp.Between):
                starts.append(numbers[0] + (kind is exp.GT))
            if kind in (exp.LT, exp.LTE, exp.EQ, exp.Between):
                ends.append(numbers[-1] - (kind is exp.LT))
        if len(starts) > 1 and not ends:
            raise PlanError(
                f"Flink SQL: the Top-N at {self.at(where)} has no upper bound on {rownum}: as in Flink, a Top-N keeps the rows "
                f"ranked up to N; {hint}"
            )
        if not ends:
            raise self.refuse(outer, f"a Top-N without a condition on {rownum}", hint)
        start, end = max(starts), min(ends)
        if start > end:
            raise PlanError(
                f"Flink SQL: the conditions on {rownum} at {self.at(where)} keep no rank ({rownum} from {start} to {end}): "
                f"a Top-N keeps the rows ranked M to N, with 1 <= M <= N"
            )
        return start, end, (exp.and_(*rest) if rest else None)

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
            if isinstance(n, exp.SimilarTo):
                return fill(SIMILAR_TO, [n.this.transform(flink_meaning), n.expression.transform(flink_meaning)])
            if isinstance(n, exp.Bracket):
                return subscript(n, schema, flink_meaning, self.refuse)
            if isinstance(n, exp.Overlaps):
                return overlaps(n, flink_meaning, self.refuse)
            if isinstance(n, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
                return arithmetic(n, schema, flink_meaning, self.refuse)
            if isinstance(n, (exp.Cast, exp.TryCast)):
                if n.to.is_type(exp.DataType.Type.TIME):
                    raise self.refuse(n, f"{n.sql()} (a TIME value: Spark computes with none)")
                now = isinstance(n.this, exp.CurrentTimestamp) or is_localtimestamp(n.this, schema)  # (sqlglot's nodes: no type_of)
                return cast(n, "timestamp" if now else type_of(n.this, schema), flink_meaning)
            if isinstance(n, exp.Extract):
                return extract(n.name, n.expression.transform(flink_meaning))
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
            if is_localtimestamp(c, schema):
                continue
            schema.field(c.name, node=f"Flink SQL: {c.sql()} at {self.at(c)}")


def is_proctime(e: exp.Expression) -> bool:
    """Whether ``e`` is a bare ``PROCTIME()`` call."""
    return isinstance(e, exp.Anonymous) and e.name.upper() == "PROCTIME" and not e.expressions


#: The functions a Top-N ranks by (``funke.table.rank``): ROW_NUMBER(), and in batch mode RANK() and DENSE_RANK().
_TOP_N_FUNCTIONS = {exp.RowNumber: ROW_NUMBER, exp.Rank: RANK, exp.DenseRank: DENSE_RANK}


def _keeps_last(order: list[Order], limit: int, start: int, *attributes: str | None) -> bool:
    """Whether a window Top-N is Flink's window deduplication keeping the last row: ``rn = 1`` by a time attribute,
    descending (ties: the last arrival); any other keeps ties in arrival order."""
    return limit == 1 and start == 1 and len(order) == 1 and order[0].descending and order[0].column in {a for a in attributes if a}


def _ranks(query: exp.Select) -> bool:
    """Whether the query's SELECT list has an OVER window (a ROW_NUMBER of a Top-N)."""
    return any(isinstance(n, exp.Window) for e in query.expressions for n in e.walk())


def _unqualify(query: exp.Select) -> None:
    """``t.x`` in ``query`` (not in its subqueries), with ``t`` its FROM relation or that's alias: the stream's column ``x``."""
    named = {query.args["from_"].this.alias_or_name} - {""}
    for column in query.find_all(exp.Column):
        if column.table and column.table in named and column.find_ancestor(exp.Select) is query:
            column.set("table", None)

