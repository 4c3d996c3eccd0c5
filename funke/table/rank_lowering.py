"""The lowering of Flink SQL's Top-N queries onto DataStream operations: ``RankLowering``, the methods of
``funke.table.planner.Planner`` that lower a ``ROW_NUMBER() OVER (...)`` in a subquery kept at ranks M to N by
the outer WHERE (``funke.table.rank`` holds the operators).

* a window Top-N (window deduplication with N = 1): ``PARTITION BY window_start, window_end[, keys]`` over a
  window TVF (``WindowTopN``, ranked per window by the window operator) or over a relation carrying its
  windows, such as a window aggregation (``WindowResultTopN``, ranked when the watermark passes the window's end);
* without window bounds in its PARTITION BY, an updating result: a deduplication on a time attribute
  (``Deduplicate``, or Spark's ``dropDuplicates`` for keep-first on processing time), a regular Top-N
  (``TopN``), or over an updating input Flink's retractable Top-N (``RetractableTopN``);
* in batch mode ``RANK()`` and ``DENSE_RANK()`` too (``funke.table.sort.RankAtEnd``).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.plan.types import Field, Schema
from funke.table.changelog import ROW_KIND
from funke.table.from_lowering import unqualify
from funke.table.lowering import WINDOW_END, WINDOW_START, WINDOW_TIME, conjuncts, is_updating, item_name, kind_first, select_item
from funke.table.rank import DENSE_RANK, RANK, ROW_NUMBER, Deduplicate, Order, RetractableTopN, TopN, WindowResultTopN, WindowTopN
from funke.table.sort import RankAtEnd

#: The functions a Top-N ranks by (``funke.table.rank``): ROW_NUMBER(), and in batch mode RANK() and DENSE_RANK().
_TOP_N_FUNCTIONS = {exp.RowNumber: ROW_NUMBER, exp.Rank: RANK, exp.DenseRank: DENSE_RANK}


def _keeps_last(order: list[Order], limit: int, start: int, *attributes: str | None) -> bool:
    """Whether a window Top-N is Flink's window deduplication keeping the last row: ``rn = 1`` by a time attribute,
    descending (ties: the last arrival); any other keeps ties in arrival order."""
    return limit == 1 and start == 1 and len(order) == 1 and order[0].descending and order[0].column in {a for a in attributes if a}


class RankLowering:
    """``Planner``'s Top-N methods (``class Planner(..., RankLowering)``); ``Planner.lower`` calls ``_top_n``.
    They use the planner's ``refuse``, ``at``, ``_hide``, ``spark_sql``, ``_projection``, ``_source``,
    ``_tvf_rows``, ``_no_refused_parts``, ``_insert_only``, ``_known_types``, ``_over_join``
    (``funke.table.join_views``) and read its ``batch`` and ``state_ttl_ms``."""

    def _aggregates_beside_ranks(self, inner: exp.Select) -> bool:
        """Whether the query calls an aggregate function other than its ranking functions (``COUNT(*)`` in an OVER's
        ORDER BY among them)."""
        ranking = lambda n: isinstance(n.parent, exp.Window) and n.arg_key == "this"
        inside = lambda n: isinstance(n, (exp.Subquery, exp.Select))
        return any(self._is_aggregate_call(n) and not ranking(n) for e in inner.expressions for n in e.walk(prune=inside))

    def _ranked_aggregation(self, inner: exp.Select) -> exp.Select:
        """A Top-N whose query aggregates (``ROW_NUMBER() OVER (PARTITION BY c ORDER BY COUNT(*) DESC) ... GROUP BY c,
        k``), as Flink's planner takes it: the aggregation as a subquery (its SELECT list, named as Flink names it, and
        hidden columns for what the OVER reads besides), ranked by the query over it."""
        positions = [i for i, e in enumerate(inner.expressions) if not isinstance(e.unalias(), exp.Window)]
        plain = [inner.expressions[i] for i in positions]
        names = [item_name(inner.expressions[i], i) for i in positions]
        aggregation = inner.copy()
        aggregation.set("expressions", [select_item(inner.expressions[i], i, inner.expressions[i].unalias().copy()) for i in positions])

        def column_of(e: exp.Expression) -> exp.Expression:
            if isinstance(e, exp.Column) and not e.table and e.name in names:
                return e.copy()
            same = next((n for n, item in zip(names, plain, strict=True) if item.unalias() == e), None)
            if same is None:
                same = self._hide()
                aggregation.append("expressions", exp.alias_(e.copy(), same, quoted=True))
            return exp.column(same, quoted=True)

        ranked, shown = [], iter(names)
        for e in inner.expressions:
            over = e.unalias()
            if not isinstance(over, exp.Window):
                ranked.append(exp.column(next(shown), quoted=True))
                continue
            over = over.copy()
            over.set("partition_by", [column_of(p) for p in over.args.get("partition_by") or []])
            for o in over.args["order"].expressions if over.args.get("order") is not None else []:
                o.set("this", column_of(o.this))
            ranked.append(exp.alias_(over, e.alias, quoted=True) if isinstance(e, exp.Alias) else over)
        return exp.select(*ranked).from_(exp.Subquery(this=aggregation, alias=exp.TableAlias(this=exp.to_identifier(self._hide()))))

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
        if inner.args.get("group") or inner.args.get("having") or self._aggregates_beside_ranks(inner):
            inner = self._ranked_aggregation(inner)
        self._no_refused_parts(inner)
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
        unqualify(outer)
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
