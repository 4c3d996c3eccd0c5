"""Flink SQL's TIME on Spark's TIME type (``spark.sql.timeType.enabled``, which funke's sessions set).

Flink's TIME(p) keeps milliseconds at most (its runtime holds milliseconds of the day) and is TIME(0)
where no precision is written; Spark's TIME(p) keeps up to microseconds and is TIME(6) by default. So
funke writes every Flink TIME(p) as Spark's ``TIME(min(p, 3))``: a CAST to it truncates the fraction, as
Flink's does. Where Spark's operators differ from Flink's, the planner rewrites them here: a TIME plus an
INTERVAL wraps around midnight (Spark's fails the job), a TIME as a TIMESTAMP is on 1970-01-01 (Spark's
on today); what Flink refuses (TIME - TIME, a TIME as a number) is refused while planning.

>>> spark_time_type(exp.DataType.build("TIME")).sql(dialect="spark"), spark_time_type(exp.DataType.build("TIME(6)")).sql(dialect="spark")
('TIME(0)', 'TIME(3)')
>>> time_precision("time(3)"), time_precision("timestamp")
(3, None)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from funke.dialect.functions import BUILTINS, call_name
from funke.dialect.rewrites import fill
from funke.errors import PlanError, UnsupportedError
from funke.plan.types import Schema

#: The planner's ``at``: where a node is in the query's text.
At = Callable[[exp.Expression], str]

#: The finest TIME Flink's runtime keeps: milliseconds.
MAX_PRECISION = 3
#: Flink's TIME with a written precision of none.
DEFAULT_PRECISION = 0

#: Flink's CURRENT_TIME and LOCALTIME (the session time zone is UTC): a TIME(0) of the micro-batch's time.
CURRENT_TIME = exp.Anonymous(this="CURRENT_TIME", expressions=[exp.Literal.number(DEFAULT_PRECISION)])

#: Flink's built-in functions of these categories take no TIME argument (Flink refuses the call while
#: planning; Spark's would run: ``DATE_FORMAT``, ``CONCAT``, ``UPPER`` of a TIME)...
_NO_TIME_CATEGORIES = ("arithmetic", "string", "temporal")
#: ... but for these.
_TAKE_TIME = frozenset(
    {"HOUR", "MINUTE", "SECOND", "EXTRACT", "TIMESTAMPDIFF", "COALESCE", "IF", "IFNULL", "NULLIF", "GREATEST", "LEAST", "FLOOR", "CEIL"}
)

_SPARK_TIME = re.compile(r"time\((\d)\)")
#: The string types Flink CASTs a TIME to, as Spark's CAST writes it (``12:34:56.5``).
_STRING_TARGETS = ("string", "varchar", "char")


def is_time_cast(n: exp.Expression) -> bool:
    """Whether ``n`` is a CAST (or TRY_CAST) to Flink's TIME: a ``TIME '...'`` literal is one."""
    return isinstance(n, (exp.Cast, exp.TryCast)) and n.to.is_type(exp.DataType.Type.TIME)


def spark_time_type(flink: exp.DataType) -> exp.DataType:
    """Spark's type for Flink's ``TIME[(p)]``: ``TIME(min(p, 3))``, written as Spark reads it (sqlglot's Spark
    writes its TIME as TIMESTAMP)."""
    params = flink.expressions
    precision = int(params[0].name) if params else DEFAULT_PRECISION
    return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=f"TIME({min(precision, MAX_PRECISION)})")


def is_niladic(e: exp.Expression, schema: Schema | None, name: str) -> bool:
    """Whether ``e`` is Flink's niladic function ``name`` (``LOCALTIME``, ``LOCALTIMESTAMP``), which sqlglot reads
    as a column (an unquoted name no column of ``schema`` has)."""
    return (
        isinstance(e, exp.Column)
        and not e.table
        and e.name.upper() == name
        and not e.args["this"].quoted
        and not (schema and schema.get(e.name))
    )


def is_localtime(e: exp.Expression, schema: Schema | None) -> bool:
    """Whether ``e`` is Flink's niladic ``LOCALTIME``."""
    return is_niladic(e, schema, "LOCALTIME")


def call_arguments(call: exp.Expression) -> list[exp.Expression]:
    """A call's arguments, as sqlglot keeps them (``this``, ``expression``, ``expressions``, ...)."""
    return [v for given in call.args.values() for v in (given if isinstance(given, list) else [given]) if isinstance(v, exp.Expression)]


def check_time_arguments(node: exp.Expression, sql: str, types: list[str | None], at: At) -> None:
    """Refuse a call of a built-in function that takes no TIME with a TIME argument (``types``: its arguments'),
    as Flink does."""
    if not any(time_precision(t) is not None for t in types):
        return
    if isinstance(node, (exp.Like, exp.ILike)):
        raise PlanError(f"Flink SQL: {node.sql()} at {at(node)}: Flink's LIKE takes no TIME (CAST it to a STRING first)")
    name = call_name(node, sql)
    builtin = BUILTINS.get(name) if name is not None else None
    if builtin is not None and builtin.category in _NO_TIME_CATEGORIES and name not in _TAKE_TIME:
        raise PlanError(
            f"Flink SQL: {node.sql()} at {at(node)}: Flink's {name} takes no TIME argument "
            "(of a TIME Flink gives HOUR, MINUTE, SECOND, EXTRACT and TIMESTAMPDIFF; CAST it to a STRING or TIMESTAMP first)"
        )


def time_precision(spark: str | None) -> int | None:
    """The precision of a Spark TIME type's text (``time(3)``); None for another type or none."""
    m = _SPARK_TIME.fullmatch(spark or "")
    return int(m.group(1)) if m else None


def cast_time_type(n: exp.Cast) -> str:
    """The Spark type text of a CAST to Flink's TIME (``time(0)``), for the planner's type of an expression."""
    return spark_time_type(n.to).sql(dialect="spark").lower()


def to_time(n: exp.Cast, value: exp.Expression, source: str | None, at: At) -> exp.Expression:
    """``CAST(value AS TIME(p))`` (or TRY_CAST) as Flink's: a TIME or TIMESTAMP becomes a TIME(min(p, 3)), its
    fraction truncated; a STRING's time is first rounded to milliseconds, as Flink reads it (``'12:34:56.1235'``
    is 12:34:56.124 as a TIME(3), 12:34:56 as a TIME). Flink CASTs nothing else to a TIME."""
    if source is not None and time_precision(source) is None and source not in ("string", "timestamp", "void"):
        raise PlanError(f"Flink SQL: {n.sql()} at {at(n)}: Flink CASTs a STRING, TIME or TIMESTAMP to a TIME, not a {source.upper()}")
    if source == "string" and not _in_milliseconds(n.this):
        read = n.copy()
        read.set("this", value)
        read.set("to", exp.DataType(this=exp.DataType.Type.USERDEFINED, kind="TIME(6)"))
        rounded = fill("MAKE_TIMESTAMP(DATE'1970-01-01', {0}) + INTERVAL '0.0005' SECOND", [read])
        value = exp.Cast(this=rounded, to=exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=f"TIME({MAX_PRECISION})"))
    out = n.copy()
    out.set("this", value)
    out.set("to", spark_time_type(n.to))
    return out


def _in_milliseconds(e: exp.Expression) -> bool:
    """Whether ``e`` is a string literal of a time with no digits past milliseconds (a ``TIME '...'`` literal is one)."""
    return isinstance(e, exp.Literal) and e.is_string and re.fullmatch(r"[^.]*(\.\d{0,3})?", e.name) is not None


def from_time(n: exp.Cast, value: exp.Expression, target: str, at: At, precision: int = DEFAULT_PRECISION) -> exp.Expression | None:
    """``CAST(time AS target)`` as Flink's, or None where Spark's CAST is Flink's (to a STRING: ``12:34:56.5``,
    the fraction's trailing zeros left out, in both, but a TIME(p) of p > 0 keeps one digit, ``12:34:56.0``, where
    Spark's writes ``12:34:56``; to a TIME: ``to_time``). A TIMESTAMP is the time on 1970-01-01 (Spark's CAST
    takes today's date); Flink CASTs a TIME to nothing else. ``precision``: the TIME's."""
    if target == "timestamp":
        return fill("MAKE_TIMESTAMP(DATE'1970-01-01', {0})", [value])
    if target.startswith(_STRING_TARGETS):
        if not precision:
            return None
        text = fill("IF(INSTR(CAST({0} AS STRING), '.') > 0, CAST({0} AS STRING), CONCAT(CAST({0} AS STRING), '.0'))", [value])
        out = n.copy()
        out.set("this", text)
        return out
    raise PlanError(f"Flink SQL: {n.sql()} at {at(n)}: Flink CASTs a TIME to a STRING, TIME or TIMESTAMP, not to {target.upper()}")


def time_arithmetic(
    n: exp.Add | exp.Sub, kinds: tuple[str | None, str | None], meaning: Callable[[exp.Expression], exp.Expression], at: At
) -> exp.Expression | None:
    """``time + interval``, ``interval + time``, ``time - interval`` (operands of types ``kinds``) as Flink's:
    the time of day the instant is at, around midnight (Spark's TIME arithmetic fails the job past it), of the
    TIME's precision (its fraction truncated: ``TIME '12:34:56' + INTERVAL '1.5' SECOND`` is 12:34:57); a YEAR
    TO MONTH interval adds nothing.
    None where no operand is a TIME; ``TIME - TIME`` and any other operand are refused, as in Flink."""
    operands = (n.this, n.expression)
    precisions = [time_precision(k) for k in kinds]
    if precisions == [None, None]:
        return None
    left, right = (o.transform(meaning) for o in operands)
    interval = [isinstance(o, exp.Interval) for o in operands]
    if precisions[0] is not None and interval[1]:
        time, shift, precision = left, right, precisions[0]
    elif isinstance(n, exp.Add) and precisions[1] is not None and interval[0]:
        time, shift, precision = right, left, precisions[1]
    else:
        raise PlanError(
            f"Flink SQL: {n.sql()} at {at(n)}: a TIME takes + or - an INTERVAL literal (TIME '12:00:00' + INTERVAL '1' HOUR) "
            "and nothing else; Flink has no TIME - TIME (use TIMESTAMPDIFF(SECOND, a, b))"
        )
    instant = fill("MAKE_TIMESTAMP(DATE'1970-01-01', {0}) " + ("+" if isinstance(n, exp.Add) else "-") + " {1}", [time, shift])
    return exp.Cast(this=instant, to=exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=f"TIME({precision})"))


def truncated(value: Any, precision: int) -> Any:
    """A Python ``datetime.time`` cut to ``precision`` digits of fraction, as a column of TIME(precision) holds it
    (Spark keeps a finer one given in a DataFrame's rows); anything else as it is."""
    if not isinstance(value, dt.time):
        return value
    step = 10 ** (6 - precision)
    return value.replace(microsecond=value.microsecond // step * step)


def time_text(value: dt.time) -> str:
    """A time as Flink writes it (a CAST to STRING, a printed table): ``12:34:56``, ``12:34:56.5``, ``12:34:56.123``."""
    millis = f"{value.microsecond // 1000:03d}".rstrip("0")
    return f"{value:%H:%M:%S}" + (f".{millis}" if millis else "")


#: Where a TIME column has Flink's meaning in funke: the connectors writing it as text, and the formats reading it
#: as text (``HH:mm:ss[.fraction]``, Flink's and Spark's alike; a read value cut to the column's precision).
_TIME_CONNECTORS = frozenset({"print", "blackhole"})
_TIME_FORMATS = frozenset({"csv", "json"})


def check_time_columns(table: str, connector: str, fmt: str | None, items: list[exp.ColumnDef], at: Callable[[exp.Expression], str]) -> None:
    """Refuse a TIME column of CREATE TABLE ``table`` (its ``connector`` and ``format``) funke cannot give Flink's
    meaning: one inside a ROW or an ARRAY, or of a connector or format other than a filesystem table's csv or json,
    ``print`` or ``blackhole``."""
    for item in items:
        kind = item.args.get("kind")  # (None: a computed column's, of its expression)
        if kind is None or not any(k.this == exp.DataType.Type.TIME for k in kind.find_all(exp.DataType)):
            continue
        where = f"the TIME column {item.name} (at {at(item)}) of table {table}"
        instead = f"declare {item.name} a STRING and CAST({item.name} AS TIME) in a view or a computed column"
        if kind.this != exp.DataType.Type.TIME:
            raise UnsupportedError(f"Flink SQL: {where}: a TIME inside a ROW, an ARRAY or a MAP is not supported by funke; {instead}")
        if connector in _TIME_CONNECTORS or (connector == "filesystem" and fmt in _TIME_FORMATS):
            continue
        how = f"the {connector} connector" + (f" with the format {fmt!r}" if fmt else "")
        raise UnsupportedError(
            f"Flink SQL: {where}: a TIME column of {how} is not supported by funke (it reads and writes TIME in a filesystem "
            f"table's csv or json, and prints it); {instead}"
        )


def time_truncated(column: str, spark_type: str) -> str | None:
    """Spark SQL of a read TIME ``column`` cut to its type's precision, as Flink's reader keeps it (Spark's reader
    keeps the fraction written: ``23:59:59.123`` in a TIME(0)); None for a column of another type.

    >>> time_truncated("t", "time(0)"), time_truncated("n", "int")
    ('CAST(CAST(`t` AS TIME(6)) AS TIME(0))', None)
    """
    if not spark_type.startswith("time("):
        return None
    return f"CAST(CAST(`{column}` AS TIME(6)) AS {spark_type.upper()})"  # (a CAST to the same type keeps the fraction)
