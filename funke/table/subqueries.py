"""The lowering of Flink SQL's subquery predicates and set operations onto semi and anti joins
(``funke.table.semi_joins``): ``SubqueryLowering``, the methods of ``funke.table.planner.Planner`` that
lower them.

* ``WHERE k IN (SELECT ...)`` and ``WHERE (a, b) IN (SELECT x, y ...)``: a semi join on the values;
* ``WHERE [NOT] EXISTS (SELECT ... FROM r WHERE r.k = t.k AND ...)``: a semi (anti) join on the
  correlated equalities; the subquery's other conditions filter its own rows first. Without a
  correlation, every row of the query meets every row of the subquery (one key for all).
* ``INTERSECT`` and ``EXCEPT``: the distinct rows of the left query that the right one has (has not),
  a NULL equal to a NULL as in SQL's set operations; ``INTERSECT ALL`` and ``EXCEPT ALL``: each row
  ``min(m, n)`` and ``max(m - n, 0)`` times (``funke.table.semi_joins.MultisetJoin``);
* ``UNION``: ``UNION ALL`` and ``SELECT DISTINCT`` over it.

Each predicate is a conjunct of the query's WHERE; the query's other conditions filter its rows before
the joins. A left row with a NULL key matches nothing: ``IN`` and ``EXISTS`` drop it, ``NOT EXISTS``
keeps it. ``NOT IN`` keeps SQL's three-valued meaning (``_not_in``: unknown, so left out, where the
subquery holds a NULL or the value is NULL, but true over an empty subquery). Scalar subqueries
(``x > (SELECT AVG(y) FROM r)``) are the query's rows LEFT-joined with the subquery's one row
(``lower_scalar_subqueries``); a correlated one with its rows aggregated per correlated key
(``_correlated_scalar``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from funke.errors import PlanError
from funke.plan.expr import Col, Sql
from funke.plan.types import Field, Schema
from funke.table.changelog import INSERT, ROW_KIND, changelog_mode, state_mode
from funke.table.lowering import SplitCondition, conjuncts, is_updating, keys_known, kind_first
from funke.table.pair_condition import PairCondition
from funke.table.semi_joins import MultisetJoin, SemiAntiJoin

if TYPE_CHECKING:
    from funke.table.planner import Planner

#: The clauses of a set operation funke refuses, by sqlglot's argument name.
SET_OPERATION_CLAUSES = {"order": "ORDER BY", "limit": "LIMIT", "offset": "OFFSET", "with_": "WITH"}

#: The key of an EXISTS without a correlation: one for every row.
_ONE = "_fk_one"


def _predicate(term: exp.Expression) -> exp.In | exp.Exists | None:
    """The IN-subquery or EXISTS that ``term`` is (or negates), or None."""
    core = term.this if isinstance(term, exp.Not) else term
    core = core.unnest()
    if isinstance(core, exp.Exists) or (isinstance(core, exp.In) and core.args.get("query") is not None):
        return core
    return None


class SubqueryLowering:
    """``Planner``'s methods for subqueries in WHERE and set operations (``class Planner(SubqueryLowering)``);
    ``Planner.lower`` calls ``lower_subquery_predicates`` and ``lower_set_operation``."""

    def lower_subquery_predicates(self: Planner, query: exp.Select) -> exp.Select | None:
        """``query`` reading a view of its FROM's rows semi- and anti-joined with its IN and EXISTS
        subqueries (the rest of its WHERE applied first); None when its WHERE has none."""
        where = query.args.get("where")
        terms = conjuncts(where.this) if where is not None else []
        predicates = [t for t in terms if _predicate(t) is not None]
        if not predicates:
            return None
        if query.args.get("joins"):
            raise self.refuse(
                predicates[0],
                "IN or EXISTS with a subquery in the WHERE of a join",
                "join in a subquery first: SELECT ... FROM (SELECT ... FROM a JOIN b ON ...) t WHERE ... IN (SELECT ...)",
            )
        source = query.args.get("from_")
        if source is None:
            raise self.refuse(query, "a SELECT without FROM")
        if isinstance(source.this, exp.Table) and not isinstance(source.this.this, exp.Identifier):
            raise self.refuse(
                predicates[0], "IN or EXISTS with a subquery over a window TVF", "filter the TVF's view first, in a subquery"
            )
        name = source.this.alias_or_name
        rest = [t for t in terms if _predicate(t) is None]
        rows = exp.select("*").from_(source.this.copy())
        if rest:
            rows = rows.where(exp.and_(*(t.copy() for t in rest)))
        stream = self.lower(rows)
        for term in predicates:
            stream = self._semi_join(stream, term, name)
        view = self._hide()
        self.views = {**self.views, view: lambda: stream}
        outer = query.copy()
        outer.set("where", None)
        outer.set(
            "from_", exp.From(this=exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(name))))
        )
        return outer

    def lower_scalar_subqueries(self: Planner, query: exp.Select) -> exp.Select | None:
        """``query`` with each scalar subquery of its WHERE (and, without an aggregation, its SELECT list) read
        from a column: its FROM's rows LEFT-joined with the subquery's one row, as Flink's planner joins a
        scalar subquery's single value (an updating result when the subquery's value changes: each row is
        retracted and joined again). None when it has none. Subqueries of one aggregation without ``GROUP BY``
        run (one row, or none yet: NULL), correlated ones too (``_correlated_scalar``); others are refused, named."""
        aggregating = bool(query.args.get("group") or query.args.get("having") or self._aggregates(query))
        places = [query.args.get("where"), *([] if aggregating else query.expressions)]
        scalars = [q for e in places if e is not None for q in _scalars(e)]
        if not scalars:
            if aggregating:
                for e in (*query.expressions, query.args.get("having")):
                    if e is not None and (q := next(iter(_scalars(e)), None)) is not None:
                        raise self.refuse(q, "a scalar subquery in the SELECT list or HAVING of an aggregation", "use it in WHERE, or aggregate in a subquery of FROM first")
            return None
        source = query.args.get("from_")
        if query.args.get("joins") or source is None or (isinstance(source.this, exp.Table) and not isinstance(source.this.this, exp.Identifier)):
            raise self.refuse(scalars[0], "a scalar subquery in a query with a join, a window TVF or no FROM", "read the relation through a subquery of FROM first")
        name = source.this.alias_or_name
        key = self._hide()
        rows = self.lower(exp.select("*").from_(source.this.copy()))
        joined = rows.with_column(key, Sql("0", declared="int"))
        for sub in scalars:
            inner = sub.this
            one_row = isinstance(inner, exp.Select) and not inner.args.get("group") and self._aggregates(inner) and not any(
                inner.args.get(a) for a in ("joins", "distinct", "order", "limit", "offset", "laterals")
            )  # fmt: skip
            if not one_row:
                raise self.refuse(
                    sub, "a scalar subquery other than one aggregation without GROUP BY",
                    "funke runs those, which give one row; Flink fails such a query when its subquery gives two",
                )
            if any(c.table == name for c in inner.find_all(exp.Column)) and not _names_relation(inner, name):
                joined = self._correlated_scalar(sub, joined, rows, name)
                continue
            value = self.lower(inner)
            columns = [c for c in value.columns if c != ROW_KIND]
            if len(columns) != 1:
                raise PlanError(f"Flink SQL: the scalar subquery at {self.at(sub)} gives {len(columns)} columns; it must give one")
            column, other_key = self._hide(), self._hide()
            one = value.select(*kind_first(value, [Sql(f"0 AS `{other_key}`", declared="int"), Col(columns[0]).alias(column)]))
            left, right = self._hide(), self._hide()
            self.views = {**self.views, left: lambda s=joined: s, right: lambda s=one: s}
            joined = self.lower(exp.select(exp.column(exp.Star(), table=left), exp.column(column, table=right, quoted=True)).from_(
                exp.Table(this=exp.to_identifier(left))
            ).join(exp.Table(this=exp.to_identifier(right)), on=exp.EQ(this=exp.column(key, table=left, quoted=True),
                   expression=exp.column(other_key, table=right, quoted=True)), join_type="LEFT"))  # fmt: skip
            sub.replace(exp.column(column, quoted=True))
        view = self._hide()
        self.views = {**self.views, view: lambda: joined}
        outer = query.copy()
        outer.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(name)))))
        return outer

    def _correlated_scalar(self: Planner, sub: exp.Subquery, joined: Any, rows: Any, name: str) -> Any:
        """``joined`` with the value of a correlated scalar subquery (``(SELECT MAX(y) FROM r WHERE r.k = t.k)``)
        in a column that replaces ``sub``, as Flink decorrelates it: the subquery's rows aggregated per its
        correlated columns, LEFT-joined on the equalities (an updating result, a key's value changing as its
        rows come). Where no row meets a row's keys the value is the aggregation's over no rows: a COUNT 0,
        any other aggregate NULL (``COUNT(*) + 1`` is 1)."""
        inner = sub.this
        residual: list[SplitCondition] = []
        correlated = self._correlation(inner, rows, name, residual=residual)
        assert correlated is not None  # (the caller saw a column of the outer query in it)
        equalities, own_rows = correlated
        if len(inner.expressions) != 1:
            raise PlanError(f"Flink SQL: the scalar subquery at {self.at(sub)} gives {len(inner.expressions)} columns; it must give one")
        value_sql = inner.expressions[0].unalias()
        for node in value_sql.walk():
            if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)) and (fn := self._function(node.name)) is not None and fn.kind == "aggregate":
                raise self.refuse(node, f"the Python aggregate function {node.name.lower()} in a correlated scalar subquery", "aggregate per key in a subquery of FROM and join that")
        keys, value, matched = [self._hide() for _ in equalities], self._hide(), self._hide()
        if residual:
            right_rows, outer = self._per_outer_values(sub, joined, name, equalities, residual, own_rows, (keys, value, matched))
            equalities = [(o, exp.column(k, quoted=True)) for o, k in outer]
            keys = [k for _, k in outer]
        else:
            per_key = own_rows.select(
                *(exp.alias_(i.copy(), k, quoted=True) for (_, i), k in zip(equalities, keys, strict=True)),
                exp.alias_(value_sql.copy(), value, quoted=True), exp.alias_(exp.Count(this=exp.Star()), matched, quoted=True),
            ).group_by(*(i.copy() for _, i in equalities))  # fmt: skip
            right_rows = self.lower(per_key)
        left, right = self._hide(), self._hide()
        self.views = {**self.views, left: lambda s=joined: s, right: lambda s=right_rows: s}

        def on_left(e: exp.Expression) -> exp.Expression:
            e = e.copy()
            for c in e.find_all(exp.Column):
                c.set("table", exp.to_identifier(left))
            return e

        on = exp.and_(*(exp.EQ(this=on_left(o), expression=exp.column(k, table=right, quoted=True)) for (o, _), k in zip(equalities, keys, strict=True)))
        # (over no rows: each COUNT 0 and any other aggregate NULL, as the aggregation gives it)
        empty = value_sql.copy().transform(
            lambda n: exp.Literal.number(0) if isinstance(n, exp.Count) else exp.Null() if isinstance(n, exp.AggFunc) else n
        )
        got = exp.column(value, table=right, quoted=True)
        column = self._hide()
        if not isinstance(empty, exp.Null):
            got = exp.Case(ifs=[exp.If(this=exp.Is(this=exp.column(matched, table=right, quoted=True), expression=exp.Null()), true=empty)], default=got)
            dtype = right_rows.schema.field(value, node=f"the scalar subquery at {self.at(sub)}").dtype
            if dtype is not None:  # (the value's type, which the CASE keeps)
                got = exp.Cast(this=got, to=exp.DataType.build(dtype, dialect="spark"))
        result = self.lower(exp.select(exp.column(exp.Star(), table=left), exp.alias_(got, column, quoted=True)).from_(
            exp.Table(this=exp.to_identifier(left))
        ).join(exp.Table(this=exp.to_identifier(right)), on=on, join_type="LEFT"))  # fmt: skip
        sub.replace(exp.column(column, quoted=True))
        return result

    def _semi_join(self: Planner, left: Any, term: exp.Expression, name: str) -> Any:
        """``left``'s rows for which ``term`` (an IN subquery, EXISTS or NOT EXISTS; ``name``: the query's
        FROM relation) holds."""
        anti = isinstance(term, exp.Not)
        core = _predicate(term)
        assert core is not None
        if anti and isinstance(core, exp.In):
            return self._not_in(left, core, name)
        sub = core.args["query"].this if isinstance(core, exp.In) else core.this
        sub = sub.unnest() if isinstance(sub, exp.Subquery) else sub
        outer_keys = (
            (core.this.expressions if isinstance(core.this, exp.Tuple) else [core.this]) if isinstance(core, exp.In) else []
        )
        if isinstance(core, exp.In) and isinstance(sub, exp.Select) and len(sub.expressions) != len(outer_keys):
            raise PlanError(
                f"Flink SQL: IN at {self.at(core)} compares {len(outer_keys)} value(s) with a subquery of {len(sub.expressions)} column(s)"
            )
        residual: list[SplitCondition] = []
        correlated = self._correlation(sub, left, name, residual=residual)
        if correlated is None:  # (the subquery reads nothing of the outer query: lowered as it is)
            right = self.lower(sub)
            inner = [c for c in right.columns if c != ROW_KIND]
            if isinstance(core, exp.In) and len(inner) != len(outer_keys):
                raise PlanError(
                    f"Flink SQL: IN at {self.at(core)} compares {len(outer_keys)} value(s) with {len(inner)} column(s)"
                )
            pairs = [(k, exp.column(c, quoted=True)) for k, c in zip(outer_keys, inner, strict=True)]
            right_rows: exp.Select | None = None
        else:
            equalities, right_rows = correlated
            pairs = [*zip(outer_keys, sub.expressions, strict=True), *equalities] if isinstance(core, exp.In) else equalities
            right = None
        # the values a correlated condition reads of the outer row, as hidden columns (before the keys: an
        # unknown column is named among the query's own)
        left = SplitCondition.add(residual, 0, left, lambda e: self.typed_sql(_unqualified(e, name), left.schema))
        # the keys: the outer expressions as columns of left, the inner ones as columns of the right side
        keys, fields = [], []
        for outer_key, _ in pairs:
            column = self._hide()
            typed = self.typed_sql(_unqualified(outer_key, name), left.schema)
            left = left.with_column(column, typed)
            keys.append(column)
            fields.append(left.schema.field(column, node="a subquery's key"))
        if right is None:
            assert right_rows is not None
            for (_, inner_key), column, f in zip(pairs, keys, fields, strict=True):
                right_rows.select(exp.alias_(_typed(inner_key, f), column, quoted=True), copy=False)
            if not pairs:
                right_rows.select(exp.alias_(exp.Literal.number(1), _ONE, quoted=True), copy=False)
            for r in residual:
                for column, e in r.parts[1].items():
                    right_rows.select(exp.alias_(e.copy(), column, quoted=True), copy=False)
            right = self.lower(right_rows)
        elif pairs:
            right = _retyped(right, inner, keys, fields)
        else:  # (the subquery's rows are only counted)
            right = right.select(*kind_first(right, [Sql(f"1 AS `{_ONE}`", declared="int")]))
        if not pairs:  # (EXISTS without a correlation: one key for all rows)
            left = left.with_column(_ONE, Sql("1", declared="int"))
            keys = [_ONE]
        what = "NOT EXISTS" if anti else "EXISTS" if isinstance(core, exp.Exists) else "IN"
        condition = SplitCondition.pair(self, residual, (left.schema, right.schema), f"{what} at {self.at(core)}") if residual else None
        return self.semi_anti_join(left, right, keys, anti=anti, what=what, nulls=False, condition=condition)

    def _not_in(self: Planner, left: Any, core: exp.In, name: str) -> Any:
        """``x NOT IN (SELECT y ...)`` with SQL's three-valued meaning, as Flink's null-aware anti join: a row
        passes when no ``y`` equals its ``x``, no ``y`` is NULL (then the answer is unknown) and ``x`` is not
        NULL, or when the subquery is empty (then it is true even for a NULL ``x``). Three anti joins of the
        row with the subquery's rows: by value, with its NULLs, and (a NULL ``x``) with any of its rows.
        The subquery may have any shape; uncorrelated, one column."""
        sub = core.args["query"].this
        sub = sub.unnest() if isinstance(sub, exp.Subquery) else sub
        if isinstance(core.this, exp.Tuple):
            raise self.refuse(core, "NOT IN with several values", "write NOT EXISTS (SELECT ... WHERE r.a = t.a AND r.b = t.b)")
        if any(c.table == name for c in sub.find_all(exp.Column)) and not _names_relation(sub, name):
            raise self.refuse(core, "a correlated NOT IN subquery", "write NOT EXISTS (SELECT ... WHERE r.y = t.x AND r.k = t.k)")
        right = self.lower(sub)
        inner = [c for c in right.columns if c != ROW_KIND]
        if len(inner) != 1:
            raise PlanError(f"Flink SQL: NOT IN at {self.at(core)} compares 1 value with {len(inner)} column(s)")
        columns = [c for c in left.columns if c != ROW_KIND]
        value = self._hide()
        keyed = left.with_column(value, self.typed_sql(_unqualified(core.this, name), left.schema))
        field = keyed.schema.field(value, node="NOT IN's value")
        values = _retyped(right, inner, [value], [field])
        one = Sql(f"1 AS `{_ONE}`", declared="int")
        held = keyed.filter(f"`{value}` IS NOT NULL")
        held = self.semi_anti_join(held, values, [value], anti=True, what="NOT IN", nulls=False)  # (no y equals x)
        null_ys = values.filter(f"`{value}` IS NULL").select(*kind_first(values, [one]))
        held = self.semi_anti_join(held.with_column(_ONE, Sql("1", declared="int")), null_ys, [_ONE], anti=True, what="NOT IN", nulls=False)
        null_x = keyed.filter(f"`{value}` IS NULL").select(*kind_first(keyed, [f"`{c}`" for c in columns]))
        empty = self.semi_anti_join(
            null_x.with_column(_ONE, Sql("1", declared="int")), right.select(*kind_first(right, [one])), [_ONE],
            anti=True, what="NOT IN", nulls=False,
        )  # fmt: skip
        out = held.union(empty)
        state_mode(out.node, changelog_mode(held.node))
        return out

    def semi_anti_join(
        self: Planner, left: Any, right: Any, keys: list[str], *, anti: bool, what: str, nulls: bool, condition: PairCondition | None = None
    ) -> Any:
        """``left``'s rows (its columns but the planner's key columns) whose ``keys`` equal those of a row of
        ``right`` (``anti``: of none) for which ``condition`` holds too, when given. ``nulls``: a NULL key equals
        a NULL (set operations); else a NULL key matches nothing, and an anti join passes its row at once."""
        hidden = set(keys if not nulls else ()) | set(condition.left if condition is not None else ())
        columns = [c for c in left.columns if c != ROW_KIND and c not in hidden]
        fn = SemiAntiJoin(columns, anti=anti, ttl_ms=self.state_ttl_ms, updating=(is_updating(left), is_updating(right)), condition=condition)
        schema = self._left_rows_schema(left, right, columns, fn.updating, what, skip=() if condition is None else (*condition.left, *condition.right))
        known = keys_known(keys)
        lrows, right = (left, right) if nulls else (left.filter(known), right.filter(known))
        keyed = lrows.key_by(keys, nulls=nulls).connect(right.key_by(keys, nulls=nulls))
        joined = keyed.process(fn, output_schema=schema, name="AntiJoin" if anti else "SemiJoin")
        if not anti or nulls:
            return joined
        kind = [f"`{ROW_KIND}`"] if is_updating(left) else [f"'{INSERT}' AS `{ROW_KIND}`"]
        unmatched = left.filter(f"NOT ({known})").select(*kind, *(f"`{c}`" for c in columns))  # (NOT EXISTS holds for them)
        out = joined.union(unmatched)
        state_mode(out.node, changelog_mode(joined.node))
        return out

    def lower_set_operation(self: Planner, query: exp.SetOperation) -> Any:
        """``UNION``, ``INTERSECT`` and ``EXCEPT`` (by position, named as on the left): the distinct rows of
        both queries, of the left one that the right one has, or has not; ``INTERSECT ALL`` and ``EXCEPT ALL``:
        each row as often as both hold it, or as often as the left holds it more than the right."""
        what = f"{type(query).__name__.upper()}{'' if query.args.get('distinct') else ' ALL'}"
        for arg, clause in SET_OPERATION_CLAUSES.items():
            if query.args.get(arg):
                raise self.refuse(query.args[arg], f"{clause} on a {what}")
        if isinstance(query, exp.Union):
            every = query.copy()
            every.set("distinct", False)
            rows = self.lower(every)
        else:
            left, right, lc, rc = self.set_operands(query, what)
            right = _retyped(right, rc, lc, [left.schema.field(c, node=what) for c in lc])
            if not query.args.get("distinct"):
                return self._multiset_join(left, right, lc, except_=isinstance(query, exp.Except), what=what)
            rows = self.semi_anti_join(left, right, lc, anti=isinstance(query, exp.Except), what=what, nulls=True)
        view = self._hide()
        self.views = {**self.views, view: lambda: rows}
        return self.lower(exp.select("*").from_(view).distinct())

    def set_operands(self: Planner, query: exp.SetOperation, what: str) -> tuple[Any, Any, list[str], list[str]]:
        """A set operation's two sides lowered, and their columns (the row kind aside), which pair up by position."""
        left, right = self.lower(query.this), self.lower(query.expression)
        lc, rc = ([c for c in side.columns if c != ROW_KIND] for side in (left, right))
        if len(lc) != len(rc):
            raise PlanError(
                f"Flink SQL: {what} at {self.at(query)} of {len(lc)} column(s) ({', '.join(lc)}) and {len(rc)} ({', '.join(rc)})"
            )
        return left, right, lc, rc

    def _multiset_join(self: Planner, left: Any, right: Any, columns: list[str], *, except_: bool, what: str) -> Any:
        """``INTERSECT ALL`` / ``EXCEPT ALL`` of ``left`` and ``right`` (the same ``columns``): ``MultisetJoin``
        keyed by every column, a NULL equal to a NULL."""
        fn = MultisetJoin(columns, except_=except_, ttl_ms=self.state_ttl_ms, updating=(is_updating(left), is_updating(right)))
        schema = self._left_rows_schema(left, right, columns, fn.updating, what)
        keyed = left.key_by(columns, nulls=True).connect(right.key_by(columns, nulls=True))
        return keyed.process(fn, output_schema=schema, name="MultisetJoin")

    def _per_outer_values(
        self: Planner,
        sub: exp.Subquery,
        joined: Any,
        name: str,
        equalities: list[tuple[exp.Expression, exp.Expression]],
        residual: list[SplitCondition],
        own_rows: exp.Select,
        columns: tuple[list[str], str, str],
    ) -> tuple[Any, list[tuple[exp.Expression, str]]]:
        """A correlated scalar subquery with conditions other than equalities (``r.k = t.k AND r.ts < t.ts``),
        decorrelated as Flink's planner does it: the distinct values of the outer row that the subquery reads
        (each equality's outer side, each outer part of another condition), joined with the subquery's rows on
        all its conditions, aggregated per those values (the value and a count of rows); the caller LEFT-joins
        the outer rows with that on the same values. Returns it and each value's outer expression and column."""
        keys, value, matched = columns
        if not equalities:
            raise self.refuse(
                residual[0].written, f"the correlated condition {residual[0].written.sql()} without an equality",
                "a scalar subquery correlates by an equality of its columns with the outer query's (r.k = t.k), other conditions beside it",
            )
        for r in residual:  # (a NULL of the outer row meets no row here: a condition that may hold for it is refused)
            if r.written.find(exp.Or, exp.Is, exp.Coalesce, exp.Case, exp.If, exp.NullSafeEQ, exp.NullSafeNEQ) is not None:
                raise self.refuse(r.written, f"the correlated condition {r.written.sql()} (it may hold for a NULL of the outer row)", "compare the columns (r.ts < t.ts)")
        outer = [(o, k) for (o, _), k in zip(equalities, keys, strict=True)]
        outer += [(e, n) for r in residual for n, e in r.parts[0].items()]
        distinct, rows_view, inner_view = self._hide(), self._hide(), self._hide()
        self.views = {**self.views, rows_view: lambda: joined}
        values = self.lower(
            exp.select(*(exp.alias_(e.copy(), n, quoted=True) for e, n in outer)).distinct().from_(
                exp.Table(this=exp.to_identifier(rows_view), alias=exp.TableAlias(this=exp.to_identifier(name)))
            )
        )
        inner_rows = self.lower(own_rows.copy().select(exp.Star()))
        inner_name = own_rows.args["from_"].this.alias_or_name
        self.views = {**self.views, distinct: lambda: values, inner_view: lambda: inner_rows}
        d = lambda n: exp.column(n, table=distinct, quoted=True)

        def on_inner(e: exp.Expression) -> exp.Expression:
            return e.copy().transform(lambda c: exp.column(c.name, table=inner_name, quoted=True) if isinstance(c, exp.Column) else c)

        terms: list[exp.Expression] = [exp.EQ(this=d(k), expression=on_inner(i)) for (_, i), k in zip(equalities, keys, strict=True)]
        for r in residual:
            swap = {n: on_inner(e) for n, e in r.parts[1].items()} | {n: d(n) for n in r.parts[0]}
            terms.append(r.condition.copy().transform(lambda c, swap=swap: swap[c.name].copy() if isinstance(c, exp.Column) and c.name in swap else c))
        inner_select = sub.this.expressions[0].unalias().copy().transform(
            lambda c: on_inner(c) if isinstance(c, exp.Column) and not isinstance(c.this, exp.Star) else c
        )
        per_values = exp.select(
            *(exp.alias_(d(n), n, quoted=True) for _, n in outer),
            exp.alias_(inner_select, value, quoted=True), exp.alias_(exp.Count(this=exp.Star()), matched, quoted=True),
        ).from_(exp.Table(this=exp.to_identifier(distinct))).join(
            exp.Table(this=exp.to_identifier(inner_view), alias=exp.TableAlias(this=exp.to_identifier(inner_name))), on=exp.and_(*terms)
        ).group_by(*(d(n) for _, n in outer))  # fmt: skip
        return self.lower(per_values), outer

    def _left_rows_schema(
        self: Planner, left: Any, right: Any, columns: list[str], updating: bool, what: str, skip: tuple[str, ...] = ()
    ) -> Schema:
        """The schema of a semi, anti or multiset join's result, ``left``'s ``columns`` (the row kind first when
        ``updating``); both sides' rows reach funke's state, so each column's type must be known (but those of
        ``skip``, a condition's hidden columns, never written out)."""
        for stream in (left, right):
            self._known_types(stream, what, skip)
        fields = [left.schema.field(c, node=what) for c in columns]
        return Schema(tuple([Field(ROW_KIND, "string"), *fields] if updating else fields))

    def _correlation(
        self: Planner, sub: exp.Expression, left: Any, name: str, *, residual: list[SplitCondition] | None = None
    ) -> tuple[list[tuple[exp.Expression, exp.Expression]], exp.Select] | None:
        """For a subquery that reads the outer query's columns: its correlated equalities (outer, inner) and
        the query of its own rows (its FROM filtered by its other conditions, no SELECT list yet); None
        for a subquery that reads none of them. Its other correlated conditions (``b.y > a.x``) go into
        ``residual`` where the caller takes them (a semi or anti join), else are refused."""
        outer_names = set(left.columns) - {ROW_KIND}
        simple = isinstance(sub, exp.Select) and sub.args.get("from_") is not None and not any(
            sub.args.get(a) for a in ("joins", "group", "having", "distinct", "order", "limit", "offset", "qualify", "laterals", "windows", "with_")
        )  # fmt: skip
        if not simple:
            for c in sub.find_all(exp.Column):
                if c.table == name and not _names_relation(sub, name):
                    raise self.refuse(
                        c,
                        "a correlated subquery with a join, GROUP BY, DISTINCT, ORDER BY or LIMIT",
                        "correlate a subquery over one relation (EXISTS (SELECT ... FROM r WHERE r.k = t.k AND ...))",
                    )
            return None
        relation = sub.args["from_"].this
        inner_name = relation.alias_or_name
        stream, tvf = self._source(relation)
        if tvf is not None:
            raise self.refuse(relation, "a window TVF in an IN or EXISTS subquery")
        inner_names = set(stream.columns)
        hidden = self._hide()
        self.views = {**self.views, hidden: lambda: stream}

        def side(c: exp.Column) -> str:
            if c.table:
                return "inner" if c.table == inner_name else "outer" if c.table == name else "inner"
            return "inner" if c.name in inner_names or c.name not in outer_names else "outer"

        def sides(e: exp.Expression) -> set[str]:
            return {side(c) for c in e.find_all(exp.Column)}

        for c in sub.find_all(exp.Column):  # (an unknown column of its own is named here, not by Spark later)
            if side(c) == "inner" and not isinstance(c.this, exp.Star) and (not c.table or c.table == inner_name):
                stream.schema.field(c.name, node=f"the subquery at {self.at(c)}")
        for e in sub.expressions:
            if "outer" in sides(e):
                raise self.refuse(e, "the outer query's column in a subquery's SELECT list")
        where = sub.args.get("where")
        equalities: list[tuple[exp.Expression, exp.Expression]] = []
        local: list[exp.Expression] = []
        for t in conjuncts(where.this) if where is not None else []:
            if t.find(exp.Subquery, exp.Exists) is not None:
                raise self.refuse(t, "a subquery in a subquery's WHERE")
            if "outer" not in sides(t):
                local.append(t.copy())
                continue
            if isinstance(t, exp.EQ):
                a, b = sides(t.this), sides(t.expression)
                if a == {"outer"} and b == {"inner"}:
                    equalities.append((t.this, t.expression))
                    continue
                if a == {"inner"} and b == {"outer"}:
                    equalities.append((t.expression, t.this))
                    continue
            if residual is not None:
                residual.append(SplitCondition.of(t, lambda c: 0 if side(c) == "outer" else 1, self._hide))
                continue
            raise self.refuse(
                t,
                f"the correlated condition {t.sql()}",
                "a subquery correlates by equalities of its columns with the outer query's (r.k = t.k); other conditions are on its own columns",
            )
        rows = exp.Select(expressions=[]).from_(
            exp.Table(this=exp.to_identifier(hidden), alias=exp.TableAlias(this=exp.to_identifier(inner_name)))
        )
        if local:
            rows = rows.where(exp.and_(*local))
        return equalities, rows


def _scalar(sub: exp.Subquery) -> bool:
    """Whether a subquery is a scalar one (a value), not the query of an IN or a relation of FROM."""
    return not isinstance(sub.parent, (exp.In, exp.From, exp.Join)) and isinstance(sub.this, (exp.Select, exp.SetOperation))


def _scalars(e: exp.Expression) -> list[exp.Subquery]:
    """The scalar subqueries of ``e`` itself (not those inside its subqueries: they are theirs)."""
    nested = lambda n: isinstance(n, (exp.Subquery, exp.Exists))
    return [n for n in e.walk(prune=nested) if isinstance(n, exp.Subquery) and _scalar(n)]


def _names_relation(sub: exp.Expression, name: str) -> bool:
    """Whether ``sub`` has a relation of its own named ``name`` (so ``name.x`` in it is its own column)."""
    return any(t.alias_or_name == name for t in sub.find_all(exp.Table))


def _unqualified(e: exp.Expression, name: str) -> exp.Expression:
    """``e`` with ``name.x`` written ``x`` (the outer relation's columns, as the left stream names them)."""
    e = e.copy()
    for c in e.find_all(exp.Column):
        if c.table == name:
            c.set("table", None)
    return e


def _retyped(stream: Any, columns: list[str], names: list[str], fields: list[Field]) -> Any:
    """``stream``'s ``columns`` (its row kind first, when it has one) as ``names``, cast to the types of ``fields``
    (the other side's keys: both sides hash alike)."""
    return stream.select(*kind_first(stream, [
        Sql(f"CAST(`{c}` AS {f.dtype}) AS `{n}`", declared=f.dtype) if f.dtype else f"`{c}` AS `{n}`"
        for c, n, f in zip(columns, names, fields, strict=True)
    ]))  # fmt: skip


def _typed(e: exp.Expression, f: Field) -> exp.Expression:
    """``e`` cast to the type of the outer key it is compared with (keys of both sides hash alike)."""
    return exp.Cast(this=e.copy(), to=exp.DataType.build(f.dtype, dialect="spark")) if f.dtype else e.copy()
