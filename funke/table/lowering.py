"""What lowering a Flink SQL query shares between ``funke.table.planner`` (the query) and
``funke.table.join_lowering`` (its joins): the columns a window TVF adds, whether a relation is an
updating result, and the terms of a condition.

>>> import sqlglot
>>> [t.sql() for t in conjuncts(sqlglot.parse_one("a = 1 AND b > 2 AND c"))]
['a = 1', 'b > 2', 'c']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from funke.errors import PlanError
from funke.plan.expr import Expr
from funke.plan.types import Schema
from funke.table.changelog import ROW_KIND
from funke.table.pair_condition import PairCondition

#: Columns a window TVF adds to its table.
WINDOW_START, WINDOW_END, WINDOW_TIME = "window_start", "window_end", "window_time"


def is_updating(stream: Any) -> bool:
    """Whether ``stream`` is an updating result: a changelog whose row kinds are in ``ROW_KIND``."""
    return ROW_KIND in getattr(stream, "columns", ())


def kind_first(stream: Any, items: list[str | Expr]) -> list[str | Expr]:
    """A projection's items, led by the row kind when ``stream`` is updating (projections keep it)."""
    return [f"`{ROW_KIND}`", *items] if is_updating(stream) else items


def keys_known(names: list[str]) -> str:
    """Spark SQL that holds where none of the key columns ``names`` is NULL (a NULL key equals no key)."""
    return " AND ".join(f"`{k}` IS NOT NULL" for k in names)


def conjuncts(e: exp.Expression) -> list[exp.Expression]:
    """The terms of ``a AND b AND ...`` (``e`` itself when it is no AND), each without its parentheses."""
    e = e.unnest()
    return [t for x in e.flatten() for t in conjuncts(x)] if isinstance(e, exp.And) else [e]


def item_name(e: exp.Expression, position: int) -> str:
    """The name Flink gives the SELECT list item ``e``: its alias or column name, else ``EXPR$<position>``."""
    return e.alias_or_name if isinstance(e, (exp.Alias, exp.Column)) else f"EXPR${position}"


def select_item(e: exp.Expression, position: int, body: exp.Expression) -> exp.Expression:
    """The SELECT list item ``e`` as ``body`` (its expression, rewritten), named as Flink names it (``item_name``;
    a column under its own name stays a bare column)."""
    name = item_name(e, position)
    return body if isinstance(body, exp.Column) and body.name == name else exp.alias_(body, name, quoted=True)


@dataclass
class SplitCondition:
    """A condition over two relations' rows (a correlated subquery's ``b.y > a.x``, an outer join's ``ON``
    besides its keys) split for a join operator: each largest part that reads one side only
    (``UPPER(b.k)``, ``a.ts - INTERVAL '1' HOUR``) becomes a hidden column of that side's rows, computed in
    Spark (``parts``: per side, column to expression); what is left (``condition``) combines the two (a
    comparison, arithmetic, AND/OR/NOT, BETWEEN, IN, CASE) and is evaluated per pair of rows
    (``funke.table.pair_condition.PairCondition``). ``written``: the term as the query has it.

    >>> import sqlglot
    >>> names = iter(["_h1", "_h2"])
    >>> s = SplitCondition.of(sqlglot.parse_one("UPPER(b.k) > a.k"), lambda c: 0 if c.table == "a" else 1, lambda: next(names))
    >>> s.condition.sql(), {c: e.sql() for c, e in s.parts[0].items()}, {c: e.sql() for c, e in s.parts[1].items()}
    ('"_h1" > "_h2"', {'_h2': 'a.k'}, {'_h1': 'UPPER(b.k)'})
    """

    condition: exp.Expression
    parts: tuple[dict[str, exp.Expression], dict[str, exp.Expression]]
    written: exp.Expression

    @classmethod
    def of(cls, term: exp.Expression, side: Callable[[exp.Column], int], hide: Callable[[], str]) -> SplitCondition:
        parts: tuple[dict[str, exp.Expression], dict[str, exp.Expression]] = ({}, {})
        named: dict[tuple[int, str], str] = {}

        def visit(node: exp.Expression) -> exp.Expression:
            sides = {side(c) for c in node.find_all(exp.Column)}
            if len(sides) == 1:
                at = sides.pop()
                column = named.setdefault((at, node.sql()), hide())
                parts[at][column] = node.copy()
                return exp.column(column, quoted=True)
            for child in list(node.iter_expressions()):
                if (new := visit(child)) is not child:
                    child.replace(new)
            return node

        return cls(visit(term.copy()), parts, term)

    @staticmethod
    def add(splits: Sequence[SplitCondition], at: int, stream: Any, sql: Callable[[exp.Expression], Any]) -> Any:
        """``stream`` (side ``at``) with the hidden columns the conditions read of it (``sql``: an expression as the column's SQL)."""
        for split in splits:
            for column, e in split.parts[at].items():
                stream = stream.with_column(column, sql(e))
        return stream

    @staticmethod
    def pair(planner: Any, splits: Sequence[SplitCondition], schemas: tuple[Schema, Schema], where: str) -> PairCondition:
        """The conditions ANDed as the join's ``PairCondition`` (``schemas``: the two sides' with their hidden
        columns); a part that combines the two sides in a way Python cannot evaluate is refused, named."""
        reads = [(at, c) for split in splits for at in (0, 1) for c in split.parts[at]]
        schema = Schema(tuple(replace(schemas[at].field(c, node=where), name=c) for at, c in reads))
        sides = tuple(tuple(c for a, c in reads if a == at) for at in (0, 1))
        for split in splits:
            try:
                PairCondition(split.condition.sql(dialect="spark"), schema, *sides).compile()
            except PlanError:
                raise planner.refuse(
                    split.written, f"the condition {split.written.sql()} of two relations' columns",
                    "one that combines the two sides' columns takes comparisons, arithmetic, AND/OR/NOT, IS [NOT] NULL, "
                    "BETWEEN, IN, CASE, COALESCE, ABS and CAST; any function of one side's columns runs",
                ) from None
        return PairCondition(exp.and_(*(s.condition for s in splits)).sql(dialect="spark"), schema, *sides)


def expression_text(e: exp.Expression) -> str:
    """``e`` as text that two spellings of one expression share (quoting aside), to match a GROUP BY
    expression with the same expression in the SELECT list."""

    def plain(n: exp.Expression) -> exp.Expression:
        return exp.Identifier(this=n.name, quoted=False) if isinstance(n, exp.Identifier) else n

    return e.copy().transform(plain).sql()
