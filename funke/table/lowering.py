"""What lowering a Flink SQL query shares between ``funke.table.planner`` (the query) and
``funke.table.join_lowering`` (its joins): the columns a window TVF adds, whether a relation is an
updating result, and the terms of a condition.

>>> import sqlglot
>>> [t.sql() for t in conjuncts(sqlglot.parse_one("a = 1 AND b > 2 AND c"))]
['a = 1', 'b > 2', 'c']
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from funke.plan.expr import Expr
from funke.table.changelog import ROW_KIND

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


def select_item(e: exp.Expression, position: int, body: exp.Expression) -> exp.Expression:
    """The SELECT list item ``e`` as ``body`` (its expression, rewritten), named as Flink names it: its alias
    or column name, else ``EXPR$<position>`` (a column under its own name stays a bare column)."""
    name = e.alias_or_name if isinstance(e, (exp.Alias, exp.Column)) else f"EXPR${position}"
    return body if isinstance(body, exp.Column) and body.name == name else exp.alias_(body, name, quoted=True)
