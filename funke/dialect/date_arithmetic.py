"""Flink's meaning of a DATE moved by an interval, where Spark's differs (checked with PyFlink 2.3):

- ``date +/- INTERVAL 'n' HOUR`` (a day-time interval of one unit: DAY, HOUR, MINUTE, SECOND, MILLISECOND) is a
  DATE in Flink, moved by the interval's whole days, truncated toward zero (``DATE '2024-01-31' - INTERVAL '25'
  HOUR`` is 2024-01-30, ``- INTERVAL '1' SECOND`` the same day); Spark's is a TIMESTAMP;
- ``INTERVAL 'n' QUARTER`` is ``3n`` months (Spark has no QUARTER interval: the job failed);
- ``TIMESTAMPADD(unit, n, date)`` by DAY, WEEK, MONTH, QUARTER or YEAR is a DATE in Flink (Spark's a TIMESTAMP);
  the ``SQL_TSI_`` names of the units are Flink's too; a unit Flink's TIMESTAMPADD lacks (MILLISECOND,
  MICROSECOND, DAYOFYEAR) is refused, as Flink refuses it.

A day-time interval of two units (``DAY TO SECOND``) or one that is no literal runs Spark's meaning (docs/sql.md).

>>> from funke.dialect.syntax import parse
>>> date_plus_interval(parse("SELECT d - INTERVAL '25' HOUR").expressions[0], ("date", None), lambda e: e).sql()
'DATE_ADD(d, -1)'
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from funke.errors import PlanError

#: Interval units Flink SQL writes (singular; the plural forms too), in ms.
_UNITS_MS = {"MILLISECOND": 1, "SECOND": 1_000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}


def interval_ms(node: exp.Expression) -> int | None:
    """``INTERVAL '5' SECOND`` in ms (also MILLISECOND, MINUTE, HOUR, DAY, and the plural forms); None otherwise."""
    if isinstance(node, exp.Interval) and isinstance(node.this, exp.Literal) and node.unit is not None:
        unit = node.unit.name.upper().removesuffix("S")
        if unit in _UNITS_MS:
            try:
                return int(node.this.name) * _UNITS_MS[unit]
            except ValueError:
                return None
    return None

#: TIMESTAMPADD's units (Flink's), and those that keep a DATE a DATE.
_UNITS = frozenset({"SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"})
_DATE_UNITS = frozenset({"DAY", "WEEK", "MONTH", "QUARTER", "YEAR"})


def quarters_as_months(n: exp.Expression) -> exp.Expression | None:
    """``INTERVAL 'n' QUARTER`` as ``INTERVAL '3n' MONTH``; None for any other node."""
    if isinstance(n, exp.Interval) and isinstance(n.this, exp.Literal) and n.unit is not None and n.unit.name.upper() in ("QUARTER", "QUARTERS"):
        try:
            quarters = int(n.this.name)
        except ValueError:
            return None
        return exp.Interval(this=exp.Literal.string(str(3 * quarters)), unit=exp.Var(this="MONTH"))
    return None


def date_plus_interval(
    n: exp.Expression, kinds: tuple[str | None, str | None], lowered: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression | None:
    """``n`` (an Add or Sub of operands of types ``kinds``) as Flink's DATE when it moves a DATE by a one-unit
    day-time interval literal; None for anything else."""
    if not isinstance(n, (exp.Add, exp.Sub)):
        return None
    pairs = [(n.this, n.expression, kinds[0])] + ([(n.expression, n.this, kinds[1])] if isinstance(n, exp.Add) else [])
    for date, interval, kind in pairs:
        ms = interval_ms(interval)
        if kind == "date" and ms is not None:
            days = abs(ms) // _UNITS_MS["DAY"] * (1 if ms >= 0 else -1) * (-1 if isinstance(n, exp.Sub) else 1)
            return exp.Anonymous(this="DATE_ADD", expressions=[lowered(date), exp.Literal.number(days)])
    return None


def timestampadd(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``TIMESTAMPADD(unit, n, t)``: Spark's, its unit's ``SQL_TSI_`` name read, a DATE by DAY, WEEK,
    MONTH, QUARTER or YEAR kept a DATE."""
    unit = args[0].name.upper().removeprefix("SQL_TSI_") if isinstance(args[0], (exp.Column, exp.Var)) else ""
    if unit not in _UNITS:
        raise PlanError(f"Flink SQL: TIMESTAMPADD takes the units {', '.join(sorted(_UNITS))} (or their SQL_TSI_ names), as Flink's, not {args[0].sql()}")
    moved = exp.Anonymous(this="TIMESTAMPADD", expressions=[exp.Var(this=unit), args[1], args[2]])
    return exp.Cast(this=moved, to=exp.DataType.build("date")) if types[2] == "date" and unit in _DATE_UNITS else moved
