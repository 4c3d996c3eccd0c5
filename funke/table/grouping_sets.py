"""Flink SQL's ``GROUPING SETS``, ``ROLLUP`` and ``CUBE``, and the ``GROUPING``, ``GROUPING_ID`` and
``GROUP_ID`` functions, run as one aggregation of each row's copies, one per grouping set.

``GROUP BY k, ROLLUP (a, b)`` groups the rows three times: by ``(k, a, b)``, ``(k, a)`` and ``(k)``.
funke runs it as Flink's planner does (``expand``): each row is copied once per grouping set, in the
copy of a set a grouping expression the set lacks is NULL, and one aggregation groups the copies by the
grouping expressions and the set's number. An aggregate's arguments are the rows' own values;
``GROUPING(a, b)`` and ``GROUPING_ID(a, b)`` are the bits of the arguments the row's set lacks (``a`` the
high one), and ``GROUP_ID()`` counts the same set's earlier copies (``GROUPING SETS ((a), (a))``: 0, then 1).

>>> from funke.dialect.syntax import parse
>>> query = parse("SELECT a, b, SUM(v) FROM t GROUP BY ROLLUP (a, b)")
>>> [[g.sql() for g in s] for s in grouping_sets(query.args["group"], _at)]
[['a', 'b'], ['a'], []]
>>> [[g.sql() for g in s] for s in grouping_sets(parse("SELECT 1 FROM t GROUP BY k, CUBE (a, b)").args["group"], _at)]
[['k', 'a', 'b'], ['k', 'a'], ['k', 'b'], ['k']]
>>> query = parse("SELECT k, a, GROUPING(a) AS g, SUM(a) FROM t GROUP BY k, GROUPING SETS ((a), ())")
>>> names = iter(["_fk_a", "_fk_set"])
>>> x = expand(query, lambda: next(names), _at, lambda n: isinstance(n, exp.AggFunc))
>>> x.query.sql()
'SELECT k, _fk_a AS a, CAST(CASE _fk_set WHEN 0 THEN 0 WHEN 1 THEN 1 END AS BIGINT) AS g, SUM(a) FROM t GROUP BY k, _fk_a, _fk_set'
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from funke.errors import PlanError, UnsupportedError
from funke.table.lowering import expression_text

#: Grouping sets one query may have: each is a copy of each row, and a branch of Spark's plan.
MAX_SETS = 256
#: The sqlglot nodes that make a GROUP BY one of grouping sets.
_SET_NODES = (exp.GroupingSets, exp.Rollup, exp.Cube)

#: ``at(node)``: where ``node`` is in the SQL text (``line 1, column 8``).
At = Callable[[exp.Expression], str]


def _at(node: exp.Expression) -> str:  # (for the examples above)
    return "?"


def is_group_id(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.upper() == "GROUP_ID"


def grouping_call(node: exp.Expression) -> bool:
    """Whether ``node`` calls ``GROUPING``, ``GROUPING_ID`` or ``GROUP_ID``."""
    return isinstance(node, (exp.Grouping, exp.GroupingId)) or is_group_id(node)


def _own_nodes(query: exp.Select) -> list[exp.Expression]:
    """The nodes of the query's SELECT list and HAVING, not those of a subquery in them."""
    inner = lambda n: isinstance(n, (exp.Subquery, exp.Select))
    having = query.args.get("having")
    return [n for e in [*query.expressions, *([having] if having is not None else [])] for n in e.walk(prune=inner)]


def has_grouping_sets(query: exp.Select) -> bool:
    """Whether ``query`` groups by grouping sets (``GROUPING SETS``, ``ROLLUP``, ``CUBE``) or calls
    ``GROUPING``, ``GROUPING_ID`` or ``GROUP_ID`` (of one set: its plain GROUP BY)."""
    group = query.args.get("group")
    if group is not None and (group.args.get("rollup") or group.args.get("cube") or any(isinstance(g, _SET_NODES) for g in group.expressions)):
        return True
    return any(grouping_call(n) for n in _own_nodes(query))


def _units(items: list[exp.Expression]) -> list[list[exp.Expression]]:
    """The units ROLLUP and CUBE take away together: ``(a, b)`` is one, ``a`` another."""
    return [list(i.expressions) if isinstance(i, exp.Tuple) else [i.this if isinstance(i, exp.Paren) else i] for i in items]


def _alternatives(element: exp.Expression) -> list[list[exp.Expression]]:
    """The grouping sets one element of a GROUP BY gives (a plain expression: itself, one set)."""
    if isinstance(element, exp.GroupingSets):
        return [s for item in element.expressions for s in _alternatives(item)]
    if isinstance(element, exp.Rollup):
        units = _units(element.expressions)
        return [[g for u in units[:n] for g in u] for n in range(len(units), -1, -1)]
    if isinstance(element, exp.Cube):
        units = _units(element.expressions)
        return [[g for u, kept in zip(units, keep, strict=True) if kept for g in u] for keep in itertools.product((True, False), repeat=len(units))]
    if isinstance(element, exp.Tuple):
        return [list(element.expressions)]
    if isinstance(element, exp.Paren):
        return [[element.this]]
    return [[element]]


def grouping_sets(group: exp.Group, at: At) -> list[list[exp.Expression]]:
    """The grouping sets of ``group``, in Flink's order: the cross product of its elements' sets, each
    set's expressions once."""
    for arg in ("rollup", "cube", "totals"):
        if group.args.get(arg):
            raise PlanError(f"Flink SQL: GROUP BY ... WITH {arg.upper()} at {at(group)} is no Flink SQL: GROUP BY ROLLUP (a, b) or CUBE (a, b)")
    sets: list[list[exp.Expression]] = []
    for combination in itertools.product(*(_alternatives(g) for g in group.expressions)):
        merged: dict[str, exp.Expression] = {}
        for e in (e for part in combination for e in part):
            merged.setdefault(expression_text(e), e)
        sets.append(list(merged.values()))
        if len(sets) > MAX_SETS:
            raise UnsupportedError(
                f"Flink SQL: GROUP BY at {at(group)} has more than {MAX_SETS} grouping sets, more than funke runs: each is a copy "
                "of each row and a branch of Spark's plan"
            )
    return sets


@dataclass(frozen=True)
class Expansion:
    """A query of grouping sets as Flink's planner runs it: each input row once per grouping set (an
    ``Expand``), the copies aggregated together, grouped by the set's number too."""

    #: Each grouping set's expressions, in order.
    sets: list[list[exp.Expression]]
    #: The grouping expressions some set lacks, each with the name of its column in the copies: the
    #: expression's value in the copies of the sets that have it, NULL in the others.
    varying: list[tuple[exp.Expression, str]]
    #: The column of each copy's set number (0, 1, ...); None for one set (no copies).
    set_id: str | None
    #: The query over the copies: grouped by the expressions every set has, the varying columns and the set
    #: number; a varying expression read from its column (but in an aggregate's arguments, which see the
    #: rows' values), ``GROUPING``, ``GROUPING_ID`` and ``GROUP_ID`` the set's values.
    query: exp.Select


def expand(query: exp.Select, name: Callable[[], str], at: At, is_aggregate: Callable[[exp.Expression], bool]) -> Expansion:
    """``query`` (``has_grouping_sets``) as an ``Expansion``; ``name()`` gives a new hidden column's name."""
    group = query.args.get("group")
    if group is None:
        call = next(n for n in _own_nodes(query) if grouping_call(n))
        raise PlanError(f"Flink SQL: {call.sql()} at {at(call)} in a query without GROUP BY: it tells the grouping sets of a GROUP BY apart")
    sets = grouping_sets(group, at)
    keys = [[expression_text(e) for e in s] for s in sets]
    grouped = {expression_text(e): e for s in sets for e in s}
    for node in _own_nodes(query):
        if is_group_id(node) and node.expressions:
            raise PlanError(f"Flink SQL: {node.sql()} at {at(node)}: GROUP_ID() takes no argument")
        if isinstance(node, (exp.Grouping, exp.GroupingId)):
            if not node.expressions:
                raise PlanError(f"Flink SQL: {node.sql()} at {at(node)} takes one or more grouped expressions")
            for a in node.expressions:
                if expression_text(a) not in grouped:
                    raise PlanError(f"Flink SQL: {node.sql()} at {at(node)}: {a.sql()} is no expression of the GROUP BY")
    common = [e for k, e in grouped.items() if all(k in present for present in keys)]
    varying = {k: (e, name()) for k, e in grouped.items() if any(k not in present for present in keys)}
    set_id = name() if len(sets) > 1 else None
    copies = [sum(1 for earlier in keys[:i] if set(earlier) == set(present)) for i, present in enumerate(keys)]

    def per_set(values: list[int]) -> exp.Expression:
        if set_id is None or len(set(values)) == 1:
            return _bigint(values[0])
        return exp.Cast(
            this=exp.Case(this=exp.column(set_id), ifs=[exp.If(this=exp.Literal.number(i), true=exp.Literal.number(v)) for i, v in enumerate(values)]),
            to=exp.DataType.build("BIGINT"),
        )

    def value(node: exp.Expression) -> exp.Expression | None:
        """What ``node`` reads over the copies; None: itself, its parts looked at."""
        if isinstance(node, (exp.Identifier, exp.DataType, exp.Var)):  # (a name, not a value)
            return None
        if is_group_id(node):
            return per_set(copies)
        if isinstance(node, (exp.Grouping, exp.GroupingId)):
            args = [expression_text(a) for a in node.expressions]
            return per_set([sum((a not in present) << (len(args) - 1 - j) for j, a in enumerate(args)) for present in keys])
        if (text := expression_text(node)) in varying:
            return exp.column(varying[text][1])
        return None

    out = query.copy()
    items = []
    for item in out.expressions:
        replaced = _replace(item, value, is_aggregate)
        if replaced is not item and isinstance(item, exp.Column):  # (keeps its name)
            replaced = exp.alias_(replaced, item.alias_or_name, quoted=item.this.quoted)
        items.append(replaced)
    out.set("expressions", items)
    if out.args.get("having") is not None:
        out.set("having", exp.Having(this=_replace(out.args["having"].this, value, is_aggregate)))
    by = [e.copy() for e in common] + [exp.column(c) for _, c in varying.values()] + ([exp.column(set_id)] if set_id else [])
    out.set("group", exp.Group(expressions=by) if by else None)
    return Expansion(sets, list(varying.values()), set_id, out)


def _bigint(n: int) -> exp.Expression:
    return exp.Cast(this=exp.Literal.number(n), to=exp.DataType.build("BIGINT"))


def _replace(
    e: exp.Expression, value: Callable[[exp.Expression], exp.Expression | None], is_aggregate: Callable[[exp.Expression], bool]
) -> exp.Expression:
    """``e`` with each node ``value`` gives a value for replaced by it, but inside an aggregate call or a
    subquery (an aggregate's arguments are the rows' own values)."""
    if (new := value(e)) is not None:  # (GROUPING(...) first: sqlglot's is an aggregate)
        return new
    if is_aggregate(e) or isinstance(e, (exp.Subquery, exp.Select)):
        return e
    found: list[tuple[exp.Expression, exp.Expression]] = []
    for node in e.walk(prune=lambda n: n is not e and (value(n) is not None or is_aggregate(n) or isinstance(n, (exp.Subquery, exp.Select)))):
        if node is not e and (new := value(node)) is not None:
            found.append((node, new))
    for node, new in found:
        node.replace(new)
    return e
