"""funke expressions → native Spark Columns (no Python per row)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from funke.errors import PlanError
from funke.plan.expr import Alias, BinOp, Call, Cast, Col, Expr, Lit, ProcTime, Sql

_BINOPS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "%": lambda a, b: a % b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
}


def to_column(e: Expr) -> Column:
    if isinstance(e, Col):
        return F.col(e.name)
    if isinstance(e, Lit):
        return F.lit(e.value)
    if isinstance(e, BinOp):
        return _BINOPS[e.op](to_column(e.left), to_column(e.right))
    if isinstance(e, Alias):
        return to_column(e.expr).alias(e.name)
    if isinstance(e, Cast):
        return to_column(e.expr).cast(e.to)
    if isinstance(e, Sql):
        return F.expr(e.text)
    if isinstance(e, Call):
        return _call(e)
    if isinstance(e, ProcTime):  # (the batch's time in milliseconds, as the general path's processing time)
        return F.timestamp_millis(F.unix_millis(F.current_timestamp()))
    raise PlanError(f"no Spark translation for expression {e!r}")


def _call(e: Call) -> Any:
    args = [to_column(a) for a in e.args]
    if e.name == "not":
        return ~args[0]
    if e.name == "isin":
        return args[0].isin(*args[1:])
    if e.name == "isnull":
        return args[0].isNull()
    if e.name == "isnotnull":
        return args[0].isNotNull()
    return F.call_function(e.name, *args)
