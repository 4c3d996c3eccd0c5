"""A condition over a pair of rows of two relations, evaluated where a join operator runs: a correlated
``EXISTS`` subquery's other conditions (``funke.table.semi_joins``), an outer join's ``ON`` besides its keys
(``funke.table.joins``). The planner (``funke.table.lowering.SplitCondition``) has each side's rows compute
the parts that read that side only, in Spark; what combines the two is this, compiled to Python with SQL's
NULL meaning (``funke.dialect.evaluate``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from funke.plan.types import Schema


@dataclass
class PairCondition:
    """A condition over a left row and a right row of one key (Spark SQL over the hidden columns ``left``
    and ``right`` carry, typed by ``schema``), held only when TRUE (SQL's NULL semantics). Compiled to
    Python once per process (``funke.dialect.evaluate``), where the join runs.

    >>> c = PairCondition("`r` > `l` + 1", Schema.of("l int, r int"), ("l",), ("r",))
    >>> c.holds({"l": 1}, {"r": 3}), c.holds({"l": 2}, {"r": 3}), c.holds({"l": None}, {"r": 3})
    (True, False, False)
    """

    sql: str
    schema: Schema
    left: tuple[str, ...]
    right: tuple[str, ...]
    _fn: Callable[[Any, Any], Any] | None = field(default=None, repr=False, compare=False)

    def compile(self) -> Callable[[Any, Any], Any]:
        """The condition as Python (a ``PlanError`` for a construct it cannot evaluate)."""
        if self._fn is None:
            import sqlglot

            from funke.dialect.evaluate import ExprCompiler

            self._fn = ExprCompiler(self.schema, (), None, define=False).compile(sqlglot.parse_one(self.sql, read="spark"))
        return self._fn

    def holds(self, left: dict[str, Any], right: dict[str, Any]) -> bool:
        return self.compile()(None, {**left, **right}) is True

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fn": None}
