"""Every column a query reads exists: checked on the SQL before lowering, so an unknown column is
reported as unknown (with a close match), not as a construct funke does not run, nor late by Spark."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from funke.errors import SchemaError, did_you_mean
from funke.plan.types import Schema
from funke.table.lowering import WINDOW_END, WINDOW_START, WINDOW_TIME
from funke.table.meaning import keyword_column

#: The columns a window table-valued function adds to its input's.
WINDOW_COLUMNS = (WINDOW_START, WINDOW_END, WINDOW_TIME)


def check_window_query(query: exp.Select, schema: Schema, at: Callable[[exp.Expression], str]) -> None:
    """The columns of a query over a window TVF: its input's (``schema``), the window's bounds, and
    (outside WHERE) the SELECT list's aliases. ``at`` says where a node is in the SQL text."""
    known = (*schema.names, *WINDOW_COLUMNS)
    aliases = tuple(e.alias for e in query.expressions if isinstance(e, exp.Alias))
    for clause, extra in (("where", ()), ("expressions", aliases), ("group", aliases), ("having", aliases)):
        value = query.args.get(clause)
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, exp.Expression):
                _check(part, clause, known, extra, at)


def _check(part: exp.Expression, clause: str, known: tuple[str, ...], extra: tuple[str, ...], at: Callable[[exp.Expression], str]) -> None:
    for column in part.find_all(exp.Column):
        name = column.table or column.name  # ``r.f``: field f of the ROW column r
        if not name or name in known or name in extra or (keyword_column(column) and not column.table):
            continue
        where = {"expressions": "SELECT", "group": "GROUP BY"}.get(clause, clause.upper())
        raise SchemaError(f"Flink SQL: {where} at {at(column)}: unknown column '{name}'{did_you_mean(name, list(known))}")
