"""The lowering of Flink SQL's aggregations onto DataStream operations: ``AggregateLowering``, the
methods of ``funke.table.planner.Planner`` that lower them.

* a window aggregation over a window TVF (``GROUP BY window_start, window_end[, keys]``): Spark's
  window aggregation where it computes the aggregates (``COUNT(*)``, ``SUM``, ``MIN``, ``MAX``,
  ``AVG``; ``COUNT(x)`` and ``FILTER (WHERE ...)`` as sums and CASEs of them), funke's window operator
  running ``funke.table.aggregate.WindowAggregates`` where it does not (``DISTINCT`` arguments);
* a group aggregation without a window (``GROUP BY keys`` or none): ``funke.table.aggregate.GroupAggregate``,
  an updating result, over an insert-only or an updating input (retract, then accumulate);
* ``SELECT DISTINCT``: a group aggregation by every column of the SELECT list, without aggregates; over
  an insert-only input without a state TTL, each row's first copy on Spark's ``dropDuplicates``
  (``key_by(...).deduplicate()``, which real-time mode runs too), an insert-only result (Flink's planner
  calls it updating, though it only ever inserts; funke lets an append sink take it).

``GROUP BY`` takes columns and expressions (``GROUP BY DATE_FORMAT(ts, 'yyyy-MM-dd')``): an expression
is computed into a column before the aggregation, and the same expression in the SELECT list or
HAVING reads that column. Aggregates take ``DISTINCT`` and ``FILTER (WHERE ...)``; ``COUNT(x)``
counts non-NULL values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from funke.dialect.functions import call_name
from funke.dialect.json_functions import json_text_type
from funke.dialect.syntax import Collect, JsonArrayAgg, ListAgg, Percentile
from funke.errors import PlanError, SchemaError
from funke.plan.expr import Sql
from funke.plan.nodes import Aggregate, WindowAggregate
from funke.plan.types import INTEGRAL, Field, Schema, decimal_scale, is_numeric
from funke.table.aggregate import AggregateCall, GroupAggregate, WindowAggregates
from funke.table.builtin_aggregates import JsonAgg, Values, Variance
from funke.table.changelog import INSERT, ROW_KIND, changelog_mode, state_mode
from funke.table.data_types import flink_name
from funke.table.grouping_sets import expand
from funke.table.lowering import WINDOW_END, WINDOW_START, WINDOW_TIME, expression_text, kind_first, select_item
from funke.table.sql_types import type_of

if TYPE_CHECKING:
    from funke.table.from_lowering import Tvf

#: The built-in aggregates by sqlglot's node.
_AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg",
    exp.VariancePop: "var_pop", exp.Variance: "var_samp", exp.StddevPop: "stddev_pop", exp.StddevSamp: "stddev_samp",
    exp.Stddev: "stddev_samp", exp.FirstValue: "first_value", exp.LastValue: "last_value", ListAgg: "listagg",
    exp.ArrayAgg: "array_agg", Percentile: "percentile", JsonArrayAgg: "json_arrayagg", exp.JSONObjectAgg: "json_objectagg",
    Collect: "collect",
}  # fmt: skip
#: The aggregates Flink computes by Welford's algorithm (``funke.table.builtin_aggregates.Variance``): funke's
#: operators compute them, not Spark's window aggregation (its ``var_pop`` rounds differently).
_VARIANCES = frozenset(Variance.KINDS)
#: The aggregates of the values themselves (``funke.table.builtin_aggregates.Values``): funke's operators keep
#: them in arrival order (Spark's ``first``, ``collect_list`` and ``listagg`` do not retract, and order otherwise).
_VALUES = frozenset(Values.KINDS)
#: The built-in aggregates only funke's window operator computes in a window aggregation.
_FUNKE_ONLY = _VARIANCES | _VALUES | {"percentile", "collect", *JsonAgg.KINDS}
#: Flink's window_time: the window's last millisecond (the time attribute of its result rows).
_WINDOW_TIME = exp.Sub(
    this=exp.column("window_end"), expression=exp.Interval(this=exp.Literal.string("1"), unit=exp.Var(this="MILLISECOND"))
)

#: ``build(stream, keys, calls, global_)``: the aggregation's operator over ``stream``.
Build = Callable[[Any, list[str], list[AggregateCall], bool], Any]


class AggregateLowering:
    """``Planner``'s aggregation methods (``class Planner(JoinLowering, AggregateLowering)``). They use the
    planner's ``refuse``, ``at``, ``_hide``, ``spark_sql``, ``typed_sql``, ``_known_types``, ``lower``
    and read its ``state_ttl_ms``."""

    def _window_aggregate(self, query: exp.Select, stream: Any, tvf: Tvf) -> Any:
        group = query.args.get("group")
        by = list(group.expressions) if group is not None else []
        names = [g.name if isinstance(g, exp.Column) else None for g in by]
        if WINDOW_START not in names or WINDOW_END not in names:
            raise self.refuse(group or query, "a window aggregation not grouped by both window_start and window_end")
        # (window_time is window_end's last millisecond: grouping by it too, as Flink allows, changes no group)
        stream, keys, grouped = self._group_keys(by, stream, (WINDOW_START, WINDOW_END, WINDOW_TIME))
        if tvf.kind == "SESSION" and set(keys) != set(tvf.partition or ()):
            raise self.refuse(
                group or query,
                "a SESSION window aggregation grouped by other columns than its PARTITION BY",
                f"sessions are per key: GROUP BY window_start, window_end{''.join(', ' + k for k in tvf.partition or ())}",
            )

        def build(s: Any, keys: list[str], calls: list[AggregateCall], global_: bool) -> Any:
            if any(c.distinct or c.function is not None or c.name in _FUNKE_ONLY for c in calls):  # (Spark's has no DISTINCT)
                fields = [Field(c.alias, self._result_type(c, s.schema)) for c in calls]
                window = s.key_by(keys, nulls=True).window(tvf.assigner)
                return window.aggregate(WindowAggregates(calls), output_schema=Schema(tuple(fields)))
            s, native = self._native(s, calls)
            return s.key_by(keys, nulls=True).window(tvf.assigner).aggregate(**native)

        return self._aggregated(query, stream, keys, grouped, build)

    def _timed(self, out: Any) -> tuple[Any, str | None]:
        """An event-time window aggregation's results with their time, ``window_time``, as a column of the window's
        (a hidden one): the time attribute of the rows out, as in Flink, so a window over them runs (cascading
        windows). None for a window on the clock, whose ``window_time`` is computed from ``window_end``."""
        node = out.node
        if not isinstance(node, WindowAggregate) or not node.assigner.is_event_time:
            return out, None
        column = self._hide()
        return type(out)(out._env, replace(node, time_column=column)), column

    def _native(self, s: Any, calls: list[AggregateCall]) -> tuple[Any, dict[str, tuple[str, str | None]]]:
        """The calls as Spark's window aggregates: ``COUNT(x)`` and a filtered ``COUNT`` a SUM of 1s and 0s,
        a filtered aggregate over ``CASE WHEN filter THEN x END`` (NULL where the filter does not hold)."""
        out: dict[str, tuple[str, str | None]] = {}
        for c in calls:
            if c.name == "count" and (c.args or c.filter):
                holds = [f"`{a}` IS NOT NULL" for a in c.args] + ([f"`{c.filter}`"] if c.filter else [])
                ones = self._hide()
                s = s.with_column(
                    ones, Sql(f"CAST(CASE WHEN {' AND '.join(holds)} THEN 1 ELSE 0 END AS BIGINT)", declared="bigint")
                )
                out[c.alias] = ("sum", ones)
            elif c.filter:
                kept = self._hide()
                s = s.with_column(
                    kept,
                    Sql(
                        f"CASE WHEN `{c.filter}` THEN `{c.args[0]}` END", declared=s.schema.field(c.args[0], node="FILTER").dtype
                    ),
                )
                out[c.alias] = (c.name, kept)
            else:
                out[c.alias] = (c.name, c.args[0] if c.args else None)
        return s, out

    def _group_aggregate(self, query: exp.Select, stream: Any) -> Any:
        """``GROUP BY`` keys (or none) without a window TVF: Flink's group aggregation, an updating
        result (``funke.table.aggregate``): a changelog of each key's aggregates, kind in ``ROW_KIND``.
        Over an updating input it retracts what the input takes away."""
        group = query.args.get("group")
        by = [g for g in (group.expressions if group is not None else []) if not (isinstance(g, exp.Tuple) and not g.expressions)]
        stream, keys, grouped = self._group_keys(by, stream, ())  # (``GROUP BY ()``: one group, as without GROUP BY)
        retracting = changelog_mode(stream.node).retracts

        def build(s: Any, keys: list[str], calls: list[AggregateCall], global_: bool) -> Any:
            for c in calls:
                if retracting and c.function is not None and not getattr(c.function, "retracts", callable(getattr(c.function, "retract", None))):
                    raise PlanError(
                        f"Flink SQL: the aggregate function {c.name} runs over an updating result here and has no "
                        "retract(accumulator, *args): implement it (Flink requires it too)"
                    )
            used = dict.fromkeys([*keys, *(a for c in calls for a in c.args), *(c.filter for c in calls if c.filter)])
            self._known_types(s.select(*(f"`{c}`" for c in used)), "a GROUP BY")
            fields = [Field(ROW_KIND, "string"), *(s.schema.field(k, node="GROUP BY") for k in keys)]
            fields += [Field(c.alias, self._result_type(c, s.schema)) for c in calls]
            fn = GroupAggregate(keys, calls, self.state_ttl_ms, retracting=retracting, global_=global_)
            return s.key_by(keys, nulls=True).process(fn, output_schema=Schema(tuple(fields)), name="GroupAggregate")

        return self._aggregated(query, stream, keys, grouped, build, window=False)

    def _select_distinct(self, query: exp.Select) -> Any:
        """``SELECT DISTINCT ...``: the query's rows, each once: a group aggregation by all its columns
        without aggregates (an updating result: a row is deleted when the input takes its last copy away)."""
        distinct = query.args["distinct"]
        if distinct.args.get("on") is not None:
            raise self.refuse(distinct, "DISTINCT ON", "SELECT DISTINCT takes whole rows")
        inner = query.copy()
        inner.set("distinct", None)
        inner.set("with_", None)  # (its CTEs are views of this query already)
        stream = self.lower(inner)
        columns = [c for c in stream.columns if c != ROW_KIND]
        self._known_types(stream.select(*(f"`{c}`" for c in columns)), "SELECT DISTINCT")
        fields = [Field(ROW_KIND, "string"), *(stream.schema.field(c, node="SELECT DISTINCT") for c in columns)]
        mode = changelog_mode(stream.node)
        if not mode.updating and not self.state_ttl_ms and not any("map<" in (f.dtype or "") for f in fields):
            # Insert-only rows, kept for ever: each row's first copy, on Spark's dropDuplicates (real-time mode runs
            # it too). Insert-only, as its rows are: Flink's planner calls it updating, though it only ever inserts.
            return stream.key_by(columns, nulls=True).deduplicate(name="SELECT DISTINCT")
        fn = GroupAggregate(columns, (), self.state_ttl_ms, retracting=mode.retracts)
        return stream.key_by(columns, nulls=True).process(fn, output_schema=Schema(tuple(fields)), name="GroupAggregate")

    def _group_keys(
        self, by: list[exp.Expression], stream: Any, window: tuple[str, ...]
    ) -> tuple[Any, list[str], dict[str, str]]:
        """The stream with each GROUP BY expression computed into a column, the key columns (the window's
        bounds aside), and the grouped expressions' columns by their text (``expression_text``)."""
        keys: list[str] = []
        grouped: dict[str, str] = {}
        for g in by:
            if isinstance(g, exp.Column) and not isinstance(g.this, exp.Star):
                if g.name not in window:
                    stream.schema.field(g.name, node=f"GROUP BY at {self.at(g)}")
                    keys.append(g.name)
                continue
            self._no_window_columns(g, "a GROUP BY expression")
            column = grouped.get(expression_text(g))
            if column is None:
                column = grouped[expression_text(g)] = self._hide()
                key = self.typed_sql(g, stream.schema)
                if key.declared is None and not window:  # (funke's operator keeps the key: it needs its type)
                    raise PlanError(
                        f"Flink SQL: GROUP BY {g.sql()} at {self.at(g)} needs a type funke can tell: CAST it (GROUP BY CAST({g.sql()} AS STRING))"
                    )
                stream = stream.with_column(column, key)
                keys.append(column)
        return stream, keys, grouped

    def _aggregated(
        self, query: exp.Select, stream: Any, keys: list[str], grouped: dict[str, str], build: Build, *, window: bool = True
    ) -> Any:
        """The aggregation ``build(stream, keys, calls, global_)`` makes, then HAVING and the SELECT list over
        its rows (each aggregate call replaced by its column, each GROUP BY expression by its key column;
        a window's bounds and keys readable)."""
        null_treatments(query, self.refuse)
        query = exact_decimal_averages(query, stream.schema, self.refuse)
        calls: list[AggregateCall] = []
        renamed: dict[int, exp.Expression] = {}
        by_text: dict[str, exp.Expression] = {}  # the same aggregate twice (SELECT and HAVING) is computed once
        filtered: set[int] = set()  # (the aggregate inside a FILTER (WHERE ...): the Filter is the call)
        for node in (n for e in (*query.expressions, query.args.get("having")) if e is not None for n in e.walk()):
            if isinstance(node, exp.Filter) and self._is_aggregate_call(node.this):
                filtered.add(id(node.this))
            elif not self._is_aggregate_call(node) or id(node) in filtered:
                continue
            if id(node) in renamed:
                continue
            text = node.sql()
            if text not in by_text:
                call, stream = self._aggregate_call(node, stream)
                calls.append(call)
                by_text[text] = self._typed(exp.column(call.alias), call.name, node, stream.schema)
            renamed[id(node)] = by_text[text]
        if self.batch and any(c.distinct for c in calls) and any(c.name == "collect" and not c.distinct for c in calls):
            raise self.refuse(
                query, "COLLECT(x) beside a DISTINCT aggregate in batch mode",
                "Flink's batch planner fails on it (it takes the MIN of the MULTISET): aggregate the DISTINCT values in a subquery, or run it in streaming mode",
            )
        if window and not calls:  # (GROUP BY alone: each key's row once per window; a count to compute, unread)
            calls.append(AggregateCall(self._hide(), "count"))
        global_ = not keys
        if global_ and not window and self.batch and self.rows is not None:
            stream, calls = self._with_marker_row(stream, calls)
        if global_:  # one group for all rows (Flink's global aggregation): one constant key
            keys = [self._hide()]
            stream = stream.with_column(keys[0], Sql("0", declared="int"))
        out = build(stream, keys, calls, global_)
        out, timed = self._timed(out) if window else (out, None)
        bounds = (*keys, WINDOW_START, WINDOW_END) if window else tuple(keys)

        def rewrite(e: exp.Expression) -> exp.Expression:
            def swap(n: exp.Expression) -> exp.Expression:
                if id(n) in renamed:
                    return renamed[id(n)].copy()
                if grouped and not isinstance(n, (exp.Column, exp.Literal, exp.Identifier)) and expression_text(n) in grouped:
                    return exp.column(grouped[expression_text(n)], quoted=True)
                if window and isinstance(n, exp.Column) and n.name == WINDOW_TIME:
                    return exp.column(timed, quoted=True) if timed else _WINDOW_TIME.copy()
                if (
                    isinstance(n, exp.Column)
                    and n.name not in bounds
                    and not any(self._is_aggregate_call(a) for a in _ancestors(n))
                ):
                    raise PlanError(
                        f"Flink SQL: the column {n.name} at {self.at(n)} is not being grouped (as Flink says it): "
                        f"name it in GROUP BY, or aggregate it (MAX({n.name}), FIRST_VALUE({n.name}), ...)"
                    )
                return n

            return e.transform(swap, copy=False)  # (in place: ``renamed`` knows the query's own nodes)

        having = query.args.get("having")
        if having is not None:
            out = out.filter(self.spark_sql(rewrite(having.this), out.schema))
        items = []
        for i, e in enumerate(query.expressions):
            body = e.this if isinstance(e, exp.Alias) else e
            if isinstance(body, exp.Star):
                raise self.refuse(e, "SELECT * in an aggregation", "name the columns")
            items.append(select_item(e, i, rewrite(body)))
        return out.select(*kind_first(out, [self.typed_sql(x, out.schema) for x in items]))

    def _with_marker_row(self, stream: Any, calls: list[AggregateCall]) -> tuple[Any, list[AggregateCall]]:
        """Batch mode: a global aggregation's input with one marker row more, and its calls, each filtered to the
        input's own rows. Flink's batch global aggregation gives one row over no row at all (``COUNT(*)`` 0, ``SUM``
        NULL, ``JSON_ARRAYAGG`` ``[]``, a user's function its value of a new accumulator); funke's group aggregation
        gives a row per key it saw, and the marker row is the key seen, which no aggregate reads."""
        real = self._hide()
        used = dict.fromkeys([*(a for c in calls for a in c.args), *(c.filter for c in calls if c.filter)])
        kind = [ROW_KIND] if ROW_KIND in stream.columns else []
        rows = stream.select(*(f"`{c}`" for c in (*kind, *used)), Sql(f"TRUE AS `{real}`", declared="boolean"))
        marker = [Sql(f"'{INSERT}' AS `{ROW_KIND}`", declared="string") for _ in kind]
        for c in used:
            dtype = stream.schema.field(c, node="an aggregate").dtype
            marker.append(Sql(f"CAST(NULL AS {dtype}) AS `{c}`", declared=dtype))
        assert self.rows is not None
        marked = rows.union(self.rows(1).select(*marker, Sql(f"FALSE AS `{real}`", declared="boolean")))
        state_mode(marked.node, changelog_mode(rows.node))
        filtered = []
        for c in calls:
            only = real
            if c.filter is not None:
                only = self._hide()
                marked = marked.with_column(only, Sql(f"`{c.filter}` AND `{real}`", declared="boolean"))
            filtered.append(replace(c, filter=only))
        return marked, filtered

    def _grouping_sets(self, query: exp.Select, stream: Any, tvf: Tvf | None) -> Any:
        """A GROUP BY of grouping sets (``GROUPING SETS``, ``ROLLUP``, ``CUBE``; or one calling ``GROUPING``), as
        Flink runs it (``funke.table.grouping_sets``): the rows of ``stream`` copied once per grouping set, a
        varying grouping expression computed in each copy (NULL in the copies of the sets without it), and one
        aggregation of the copies."""

        def aggregate(n: exp.Expression) -> bool:
            return self._is_aggregate_call(n) or (isinstance(n, exp.Filter) and self._is_aggregate_call(n.this))

        x = expand(query, self._hide, self.at, aggregate)
        if x.set_id is not None:
            values = [(self.typed_sql(e, stream.schema), name) for e, name in x.varying]
            copies = []
            for i, members in enumerate(x.sets):
                present = {expression_text(m) for m in members}
                columns: list[Any] = [f"`{c}`" for c in stream.columns]
                for (e, _), (value, name) in zip(x.varying, values, strict=True):
                    if expression_text(e) not in present:  # (NULL of the value's type)
                        value = Sql(f"CASE WHEN FALSE THEN {value.text} END", declared=value.dtype(stream.schema, name))
                    columns.append(value.alias(name))
                copies.append(stream.select(*columns, Sql(f"CAST({i} AS INT)", declared="int").alias(x.set_id)))
            stream = copies[0].union(*copies[1:])
        return self._window_aggregate(x.query, stream, tvf) if tvf is not None else self._group_aggregate(x.query, stream)

    def _is_aggregate_call(self, node: exp.Expression) -> bool:
        """Whether ``node`` calls an aggregate function (a built-in here; a registered user function where
        the planner knows them: this and ``_aggregate_function`` are where they plug in)."""
        return isinstance(node, exp.AggFunc)

    def _aggregates(self, query: exp.Select) -> bool:
        """Whether the query's SELECT list calls an aggregate function (not one of a subquery in it)."""
        inner = lambda n: isinstance(n, (exp.Subquery, exp.Select))
        return any(self._is_aggregate_call(n) for e in query.expressions for n in e.walk(prune=inner))

    def _aggregate_function(self, node: exp.Expression) -> tuple[str, Any]:
        """The aggregate function ``node`` calls: its name and, for a user's function, the function object (an
        aggregate function of PyFlink's shape: ``create_accumulator``, ``accumulate``, ``retract``, ``merge``,
        ``get_value``); a built-in's is None (``funke.table.builtin_aggregates`` makes it)."""
        name = _AGGREGATES.get(type(node))
        if name is None:
            raise self.refuse(node, f"the aggregate {node.sql()}", "COUNT, SUM, MIN, MAX, AVG, VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP, FIRST_VALUE, LAST_VALUE, LISTAGG, ARRAY_AGG, PERCENTILE, JSON_ARRAYAGG, JSON_OBJECTAGG and COLLECT run")
        return name, None

    def _aggregate_arguments(self, node: exp.Expression, schema: Schema | None) -> tuple[list[exp.Expression], bool]:
        """The arguments of an aggregate call, and whether they are DISTINCT."""
        if isinstance(node, (JsonArrayAgg, exp.JSONObjectAgg)):
            return self._json_aggregate_arguments(node, schema), False
        arg = node.this
        distinct = isinstance(arg, exp.Distinct)
        given = list(arg.expressions) if distinct else [arg]
        if isinstance(node, ListAgg) and node.args.get("separator") is not None:
            separator = node.args["separator"]
            if not (isinstance(separator, exp.Literal) and separator.is_string):
                raise PlanError(f"Flink SQL: LISTAGG's separator at {self.at(separator)} must be a string literal, not {separator.sql()}")
            given.append(separator)
        if isinstance(node, Percentile):  # (the percentage a literal, or an ARRAY of them, in [0, 1]; the frequency)
            frequency = node.args.get("frequency")
            given += [self._percentage(node.args["percentage"]), *([exp.Cast(this=frequency.copy(), to=exp.DataType.build("bigint"))] if frequency else [])]
        return given, distinct

    def _json_aggregate_arguments(self, node: exp.Expression, schema: Schema | None) -> list[exp.Expression]:
        """JSON_ARRAYAGG's value, JSON_OBJECTAGG's key and value: the value as its JSON text, as Flink's planner wraps
        it in JSON_STRING (``null`` for a NULL under NULL ON NULL, NULL under ABSENT ON NULL: no element); of the
        types whose text funke writes as Flink does (``funke.dialect.rewrites``), or JSON_OBJECT/JSON_ARRAY's JSON."""
        name = _AGGREGATES[type(node)].upper()
        if isinstance(node, JsonArrayAgg):
            key, value, default = None, node.this, "ABSENT"
        else:
            pairs = node.expressions
            if len(pairs) != 1 or not isinstance(pairs[0], exp.JSONKeyValue) or node.args.get("unique_keys") is not None:
                raise self.refuse(node, node.sql(), "JSON_OBJECTAGG(KEY k VALUE v [NULL | ABSENT] ON NULL), one key and value")
            key, value, default = pairs[0].this, pairs[0].expression, "NULL"
            if (t := type_of(key, schema)) is not None and not re.fullmatch(r"string|varchar\(\d+\)", t):
                raise SchemaError(f"Flink SQL: JSON_OBJECTAGG's key {key.sql()} at {self.at(key)} must be a string, not a {t.upper()}: CAST it")
        choice = node.args.get("null_handling")
        absent = (choice.name if isinstance(choice, exp.Expression) else str(choice or default + " ON NULL")).upper().startswith("ABSENT")
        if (t := type_of(value, schema)) is not None and not json_text_type(t):
            raise self.refuse(
                node, f"{name} of the value {value.sql()} ({t.upper()})",
                "funke writes the JSON of a STRING, an integer, a BOOLEAN, a DECIMAL or a BINARY value (CAST it to one), and "
                "of JSON_OBJECT and JSON_ARRAY; Flink writes a DOUBLE as a BigDecimal (`1.0E+20`), a TIMESTAMP in ISO form",
            )
        text: exp.Expression = exp.Anonymous(this="JSON_STRING", expressions=[value.copy()])
        if not absent:
            text = exp.Coalesce(this=text, expressions=[exp.Literal.string("null")])
        text = exp.Cast(this=text, to=exp.DataType.build("string"))  # (a type the operator's schema knows)
        return [text] if key is None else [exp.Cast(this=key.copy(), to=exp.DataType.build("string")), text]

    def _percentage(self, p: exp.Expression) -> exp.Expression:
        """PERCENTILE's percentage: a number literal in [0, 1] or an ARRAY of them (Flink takes an expression too,
        and then any row's value: funke refuses one)."""
        parts = p.expressions if isinstance(p, exp.Array) else [p]
        for part in parts or [p]:
            number = part.this if isinstance(part, exp.Neg) else part
            if not (isinstance(number, exp.Literal) and not number.is_string):
                raise self.refuse(p, f"PERCENTILE's percentage {p.sql()}", "a number in [0, 1] or an ARRAY of them, written as literals")
            if not 0 <= float(part.sql()) <= 1:
                raise PlanError(f"Flink SQL: PERCENTILE's percentage {part.sql()} at {self.at(part)} is not in [0, 1]")
        return exp.Cast(this=p.copy(), to=exp.DataType.build("array<double>" if isinstance(p, exp.Array) else "double", dialect="spark"))

    def _aggregate_call(self, node: exp.Expression, stream: Any) -> tuple[AggregateCall, Any]:
        """An aggregate call of the query (``f(x)``, ``f(DISTINCT x, ...)``, ``f(...) FILTER (WHERE c)``) as an
        ``AggregateCall`` over columns of the stream (expressions computed into hidden columns)."""
        condition = None
        if isinstance(node, exp.Filter):
            node, condition = node.this, node.expression.this
        name, function = self._aggregate_function(node)
        given, distinct = self._aggregate_arguments(node, stream.schema)
        arg = node.this
        if (
            function is None
            and name == "count"
            and not distinct
            and (isinstance(arg, exp.Star) or (isinstance(arg, exp.Literal) and not arg.is_string))
        ):
            given = []  # COUNT(*), COUNT(1): every row
        elif function is None and name not in ("count", "percentile", "json_objectagg") and len(given) != (2 if name == "listagg" and node.args.get("separator") else 1):
            raise self.refuse(node, f"{node.sql()} (it takes one argument)")
        if name == "percentile":
            frequency = node.args.get("frequency")
            for what, a, ok in (("a number", given[0], is_numeric), ("an integer frequency", frequency, lambda t: t in INTEGRAL)):
                if a is not None and (t := type_of(a, stream.schema)) is not None and not ok(t):
                    raise SchemaError(f"Flink SQL: PERCENTILE at {self.at(node)} takes {what}, not a {t.upper()} ({a.sql()})")
        if condition is not None and name in JsonAgg.KINDS:
            raise self.refuse(node, f"{name.upper()}(...) FILTER (WHERE ...)", f"Flink's parser takes no FILTER after {name.upper()}: aggregate over a subquery's rows")
        if name == "listagg" and (t := type_of(given[0], stream.schema)) is not None and t != "string":
            raise SchemaError(f"Flink SQL: LISTAGG at {self.at(node)} takes a string, not a {t.upper()} ({given[0].sql()}): CAST it")
        alias = self._hide()  # (named before its arguments, as earlier versions did: the same names, the same uids)
        args = []
        for a in given:
            if isinstance(a, exp.Column) and not a.table and not isinstance(a.this, exp.Star):
                stream.schema.field(a.name, node=f"{node.sql()} at {self.at(node)}")
                args.append(a.name)
                continue
            if isinstance(a, exp.Star):
                raise self.refuse(node, f"{node.sql()}", "COUNT(DISTINCT x) counts the distinct values of a column or expression")
            column = self._hide()
            stream = stream.with_column(column, self.typed_sql(a, stream.schema))
            args.append(column)
        filter_column = None
        if condition is not None:
            self._no_window_columns(condition, "FILTER (WHERE ...)")
            filter_column = self._hide()
            stream = stream.with_column(filter_column, Sql(self.spark_sql(condition, stream.schema), declared="boolean"))
        if name == "collect":
            self._collected(node, given[0], stream.schema.field(args[0], node="COLLECT").dtype, type_of(given[0], stream.schema))
        if function is not None and hasattr(function, "for_arguments"):
            function = function.for_arguments([stream.schema.field(a, node=node.sql()).dtype for a in args])
        return AggregateCall(alias, name, tuple(args), distinct, filter_column, function), stream

    def _collected(self, node: exp.Expression, value: exp.Expression, t: str | None, kind: str | None) -> None:
        """Refuse a COLLECT funke cannot give Flink's MULTISET of: one whose value's type funke cannot tell while
        planning (the MAP it keeps the MULTISET as needs it), of an ARRAY, a MAP or a ROW (no MAP key funke keeps),
        and one inside an expression or HAVING (Spark's functions would read the MAP, not a MULTISET). ``t``: the
        value's column type; ``kind``: its type as far as funke tells it (``array`` for an ARRAY of any type)."""
        if (t or kind or "").split("<")[0] in ("array", "map", "struct"):
            what = flink_name(t or kind or "")
            raise self.refuse(node, f"COLLECT of the value {value.sql()} ({what})", "funke keeps a MULTISET as a MAP of each value to its count, and collects values of atomic types only")
        if t is None:
            raise self.refuse(node, f"COLLECT({value.sql()}) of a value whose type funke cannot tell while planning", f"CAST it: COLLECT(CAST({value.sql()} AS STRING))")
        call = node.parent if isinstance(node.parent, exp.Filter) else node
        call = call.parent if isinstance(call.parent, exp.Window) else call  # (COLLECT(x) OVER w: the window's)
        item = call.parent if isinstance(call.parent, exp.Alias) else call
        if not (isinstance(item.parent, exp.Select) and item.arg_key == "expressions"):
            raise self.refuse(
                node, f"COLLECT inside an expression or HAVING ({(call.parent or call).sql()})",
                "funke keeps a MULTISET as a MAP of each value to its count, which Spark's functions would read as a MAP "
                "(CARDINALITY counts distinct values; Flink's planner fails on it): COLLECT is a column of the SELECT list as it is",
            )

    def _result_type(self, call: AggregateCall, schema: Schema) -> str | None:
        """The type of a call's result column (the first argument's, as the built-in aggregate keeps it)."""
        if call.function is not None:
            return getattr(call.function, "result_type", None)
        column = call.args[0] if call.args and call.name != "count" else None
        if call.name == "percentile":  # (a DOUBLE, or an ARRAY of them for an ARRAY of percentages)
            return "array<double>" if schema.field(call.args[1], node="PERCENTILE").dtype.startswith("array") else "double"
        if call.name in JsonAgg.KINDS:
            return "string"
        if call.name == "collect":  # (a MULTISET as funke keeps one: each value's count)
            return f"map<{schema.field(column, node='COLLECT').dtype},int>" if column else None
        if call.name == "lag":  # (an OVER aggregation's LAG: its value's type)
            return schema.field(column, node="LAG").dtype if column else None
        if call.name == "sum" and column and (wide := _decimal_sum(schema.field(column, node="SUM").dtype)):
            return wide
        if call.name in _VARIANCES:  # (a float, cast to the argument's type by ``_typed``)
            return "double"
        if call.name in _VALUES:
            t = schema.field(column, node=f"{call.name.upper()}({column})").dtype if column else None
            return "string" if call.name == "listagg" else (f"array<{t}>" if t and call.name == "array_agg" else t)
        return Aggregate(call.name, column, call.alias).output_type(schema, f"{call.name.upper()}({column or '*'})")

    def _typed(self, column: exp.Expression, fn: str, call: exp.Expression, schema: Schema) -> exp.Expression:
        """Flink's result type: SUM, AVG and the variances of an integer type keep that type (truncated), an AVG or
        a variance of a FLOAT is a FLOAT (Flink averages in DOUBLE, then casts); a variance of a DECIMAL is refused
        (Flink's is a DECIMAL of its own scale)."""
        if fn not in ("sum", "avg", *_VARIANCES):
            return column
        inner = call.this if isinstance(call, exp.Filter) else call
        arg = inner.this.expressions[0] if isinstance(inner.this, exp.Distinct) else inner.this
        t = type_of(arg, schema)
        if t in INTEGRAL or (t == "float" and fn in ("avg", *_VARIANCES)):
            return exp.Cast(this=column, to=exp.DataType.build(t))
        if fn == "sum" and (wide := _decimal_sum(t)):
            return exp.Cast(this=column, to=exp.DataType.build(wide.upper()))
        if fn in _VARIANCES and t != "double":
            name = call_name(inner, self.sql) or fn.upper()
            if t is not None and not is_numeric(t):
                raise SchemaError(f"Flink SQL: {name} at {self.at(call)} takes a number, not a {t.upper()} ({arg.sql()})")
            what = f"a {t.upper()} argument" if t else "an argument whose type funke cannot tell"
            raise self.refuse(call, f"{name}({arg.sql()}) of {what}", f"CAST it: {name}(CAST({arg.sql()} AS DOUBLE))")
        return column


#: Why IGNORE or RESPECT NULLS of another call than ARRAY_AGG is refused.
NULL_TREATMENTS = "ARRAY_AGG takes IGNORE NULLS; FIRST_VALUE, LAST_VALUE and LISTAGG skip NULLs"


def argument_not_null(call: exp.Expression) -> exp.Expression:
    """``x IS NOT NULL`` of an aggregate call's argument (``ARRAY_AGG(x)``, ``ARRAY_AGG(DISTINCT x)``): the
    condition ``IGNORE NULLS`` filters its rows by."""
    arg = call.this.expressions[0] if isinstance(call.this, exp.Distinct) else call.this
    return exp.Not(this=exp.Is(this=arg.copy(), expression=exp.Null()))


def null_treatments(query: exp.Select, refuse: Callable[..., Exception]) -> None:
    """``ARRAY_AGG(x IGNORE NULLS)`` as ``ARRAY_AGG(x) FILTER (WHERE x IS NOT NULL)`` (with a FILTER of its own,
    both conditions), ``ARRAY_AGG(x RESPECT NULLS)`` as ``ARRAY_AGG(x)`` (Flink's default), in the query's SELECT
    list and HAVING, in place; IGNORE or RESPECT NULLS of another call is refused."""

    treatments = (exp.IgnoreNulls, exp.RespectNulls)

    def rewrite(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.ArrayAgg) and isinstance(n.this, treatments):  # (sqlglot's shape before a FILTER)
            treatment, shell = n.this, n
            n.set("this", treatment.this)
        elif isinstance(n, treatments) and isinstance(n.this, exp.ArrayAgg):
            treatment, shell = n, n.this
        elif isinstance(n, treatments):
            raise refuse(n, f"{n.sql()}", NULL_TREATMENTS)
        else:
            return n
        if isinstance(treatment, exp.RespectNulls):
            return shell
        held = argument_not_null(shell)
        outer = n.parent
        if isinstance(outer, exp.Filter) and outer.this is n:  # (... IGNORE NULLS) FILTER (WHERE c): both
            outer.set("expression", exp.Where(this=exp.and_(outer.expression.this, held)))
            return shell
        return exp.Filter(this=shell, expression=exp.Where(this=held))

    query.set("expressions", [e.transform(rewrite, copy=False) for e in query.expressions])
    if query.args.get("having") is not None:
        query.args["having"].transform(rewrite, copy=False)


def _ancestors(node: exp.Expression) -> list[exp.Expression]:
    out, parent = [], node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def _decimal_sum(dtype: str | None) -> str | None:
    """Flink's SUM of a DECIMAL(p, s): a DECIMAL(38, s) (``decimal(38,s)``); None for another type.

    >>> _decimal_sum("decimal(10,2)"), _decimal_sum("bigint")
    ('decimal(38,2)', None)
    """
    scale = decimal_scale(dtype)
    return None if scale is None else f"decimal(38,{scale})"


def exact_decimal_averages(query: exp.Select, schema: Schema, refuse: Callable[..., Exception], *, over: bool = False) -> exp.Select:
    """``query`` with each ``AVG(x)`` of a ``DECIMAL(p, s)`` in its SELECT list and HAVING computed as Flink computes it:
    the DECIMAL(38, max(6, s)) of the sum over the count, rounded half up, written as
    ``CAST(CAST(SUM(x) AS DECIMAL(38, s)) / COUNT(x) AS DECIMAL(38, max(6, s)))`` (``DISTINCT`` and ``FILTER`` kept on
    both). Spark's AVG is a DECIMAL(p + 4, s + 4), and funke's operators average in 8-byte floats. The division is
    Flink's for a DECIMAL(38, s) by a BIGINT: a DECIMAL(38, 6), so a scale above 6 is refused. A copy when it changes
    anything. ``over``: the OVER aggregates' AVGs instead (``AVG(x) OVER w``: SUM and COUNT over the same window),
    which the others leave as they are.

    >>> q = exp.maybe_parse("SELECT k, AVG(m) AS a, AVG(DISTINCT m) FILTER (WHERE m > 1) AS b, AVG(i) AS c FROM t GROUP BY k")
    >>> schema = Schema.of("k string, m decimal(10,2), i int")
    >>> [e.sql() for e in exact_decimal_averages(q, schema, None).expressions[1:]]  # doctest: +NORMALIZE_WHITESPACE
    ['CAST(CAST(SUM(m) AS DECIMAL(38, 2)) / COUNT(m) AS DECIMAL(38, 6)) AS a',
     'CAST(CAST(SUM(DISTINCT m) FILTER(WHERE m > 1) AS DECIMAL(38, 2)) / COUNT(DISTINCT m) FILTER(WHERE m > 1) AS DECIMAL(38, 6)) AS b',
     'AVG(i) AS c']
    >>> q = exp.maybe_parse("SELECT AVG(m) OVER (PARTITION BY k ORDER BY ts) AS a FROM t")
    >>> exact_decimal_averages(q, Schema.of("k string, m decimal(10,2), ts timestamp"), None, over=True).expressions[0].sql()
    'CAST(CAST(SUM(m) OVER (PARTITION BY k ORDER BY ts) AS DECIMAL(38, 2)) / COUNT(m) OVER (PARTITION BY k ORDER BY ts) AS DECIMAL(38, 6)) AS a'
    """
    if query.find(exp.Avg) is None:  # (most queries: no copy)
        return query
    copy = query.copy()
    expressions = [e for e in (*copy.expressions, copy.args.get("having")) if e is not None]
    if over:
        found = [w.this for e in expressions for w in e.find_all(exp.Window) if isinstance(w.this, exp.Avg)]
    else:
        found = [
            a for e in expressions for a in e.find_all(exp.Avg)
            if not isinstance(a.parent, exp.Window) and not (isinstance(a.parent, exp.Filter) and isinstance(a.parent.parent, exp.Window))
        ]
    changed = False
    for avg in found:
        distinct = isinstance(avg.this, exp.Distinct)
        arg = avg.this.expressions[0] if distinct else avg.this
        scale = decimal_scale(type_of(arg, schema))
        if scale is None:
            continue
        if scale > 6:
            raise refuse(avg, f"AVG of a DECIMAL of scale {scale}", "Flink's is a DECIMAL(38, scale) that funke's division cannot give: CAST the argument to a scale of 6 or less, or to DOUBLE")
        where = avg.parent.expression if isinstance(avg.parent, exp.Filter) and avg.parent.this is avg else None
        window = avg.parent if over else None

        def call(kind: type[exp.Expression], inner: exp.Expression, where: exp.Expression | None = where, distinct: bool = distinct, window: exp.Expression | None = window) -> exp.Expression:
            e = kind(this=exp.Distinct(expressions=[inner.copy()]) if distinct else inner.copy())
            if window is not None:
                windowed = window.copy()
                windowed.set("this", e)
                return windowed
            return exp.Filter(this=e, expression=where.copy()) if where is not None else e

        total = exp.Cast(this=call(exp.Sum, arg), to=exp.DataType.build(f"DECIMAL(38, {scale})"))
        exact = exp.Cast(this=exp.Div(this=total, expression=call(exp.Count, arg)), to=exp.DataType.build(f"DECIMAL(38, {max(6, scale)})"))
        (window if window is not None else avg.parent if where is not None else avg).replace(exact)
        changed = True
    return copy if changed else query

