"""The Spark SQL that gives a Flink built-in function its meaning where Spark's own differs: templates over the
call's arguments (``fill``) and rewrites given as functions of them, which ``funke.dialect.functions``'s table
of built-in functions names.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark

from funke.errors import PlanError, UnsupportedError
from funke.plan.types import integer_range

#: A rewrite given as a function: the call's arguments (Flink's meaning already given to each) and their
#: types (Spark's names, None where the planner does not know one) to Spark SQL.
Rewrite = Callable[[list[exp.Expression], list[str | None]], exp.Expression]


#: The integer types (Spark's names): SIGN and TRUNCATE of one keep its type.
INTEGERS = ("tinyint", "smallint", "int", "bigint")


def fill(template: str, args: list[exp.Expression]) -> exp.Expression:
    """``template`` (Spark SQL over ``{0}``, ``{1}``, ...) with each placeholder replaced by its argument."""
    tree = _template(template).copy()

    def put(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table and n.name.startswith("__fk_arg"):
            return exp.Paren(this=args[int(n.name[8:])].copy())
        return n

    return tree.transform(put)


class _Verbatim(Spark):
    """Spark SQL read with every function call as written (sqlglot's Spark writes its own ``LOG10(x)`` as
    ``LOG(10, x)``, which is another number)."""

    class Parser(Spark.Parser):
        FUNCTIONS: ClassVar[dict] = {}


@functools.cache
def _template(template: str) -> exp.Expression:
    text = template
    for i in range(10):
        text = text.replace("{" + str(i) + "}", f"__fk_arg{i}")
    return sqlglot.parse_one(text, read=_Verbatim)


# -- rewrites given as functions ---------------------------------------------------------------------------


def call(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def to_timestamp_ltz(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    precision = args[1].name if len(args) == 2 and isinstance(args[1], exp.Literal) else None
    spark = {"3": "TIMESTAMP_MILLIS", "0": "TIMESTAMP_SECONDS"}.get(precision or "") if len(args) == 2 else "TIMESTAMP_MILLIS"
    if spark is None:
        raise PlanError(
            f"Flink SQL: TO_TIMESTAMP_LTZ({args[0].sql()}, {args[1].sql()}): funke reads epoch milliseconds (precision 3) or seconds (0), a literal"
        )
    return call(spark, args[0])


def regexp_extract(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    if len(args) == 2:
        return fill("CASE WHEN {0} RLIKE {1} THEN REGEXP_EXTRACT({0}, {1}, 0) END", args)
    return fill("CASE WHEN {2} >= 0 AND {0} RLIKE {1} THEN REGEXP_EXTRACT({0}, {1}, {2}) END", args)


_OVERLAY = (
    "ELEMENT_AT(TRANSFORM(ARRAY(NAMED_STRUCT('s', {0}, 'r', {1}, 'p', {2}, 'n', {3})), a -> CASE WHEN a.s IS NULL OR a.r IS NULL "
    "OR a.p IS NULL OR a.n IS NULL THEN NULL WHEN a.p < 1 OR a.p > CHAR_LENGTH(a.s) THEN a.s WHEN a.n <= 0 THEN "
    "CONCAT(SUBSTRING(a.s, 1, a.p - 1), a.r) ELSE CONCAT(SUBSTRING(a.s, 1, a.p - 1), a.r, SUBSTRING(a.s, a.p + a.n)) END), 1)"
)


def overlay(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    return fill(_OVERLAY, [*args[:3], args[3] if len(args) == 4 else call("CHAR_LENGTH", args[1].copy())])


def substring(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    if len(args) == 2:
        return call("SUBSTRING", *args)
    return fill("CASE WHEN {2} >= 0 THEN SUBSTRING({0}, {1}, {2}) END", args)


def concat_ws(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    return call("CONCAT_WS", *args)


def instr(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    return call("INSTR", *args)


def locate(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    return call("LOCATE", *args) if len(args) == 2 else fill("LOCATE({0}, {1}, GREATEST({2}, 1)) + {2} * 0", args)


def parse_url(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    call = "TRY_PARSE_URL({0}, {1})" if len(args) == 2 else "TRY_PARSE_URL({0}, {1}, {2})"
    return fill(f"CASE WHEN {{0}} RLIKE '^(?i)(https?|ftp|file|jar|mailto):' THEN {call} END", args)


def str_to_map(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    delimiters = args[1:] if len(args) == 3 else [exp.Literal.string(","), exp.Literal.string("=")]
    return fill(
        "CASE WHEN {0} = '' THEN CAST(MAP() AS MAP<STRING, STRING>) ELSE STR_TO_MAP({0}, {1}, {2}) END", [args[0], *delimiters]
    )


def elt(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    if len(args) < 2:
        raise PlanError("Flink SQL: ELT takes an index and at least one value")
    values = exp.Array(expressions=[a.copy() for a in args[1:]])
    return fill("CASE WHEN {0} >= 1 THEN TRY_ELEMENT_AT({1}, {0}) END", [args[0], values])


#: ARRAY_SLICE's offset ``{1}`` of the array ``{0}`` as a position from 1: a negative one counts from the end, 0 is 1.
_SLICE_AT = "CASE WHEN {1} < 0 THEN SIZE({0}) + {1} + 1 WHEN {1} = 0 THEN 1 ELSE {1} END"


def array_slice(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``ARRAY_SLICE(a, start [, end])``: Spark's ``slice(a, from, length)`` over the offsets made positions,
    clamped to the array (``end`` left out: the array's length)."""
    start = _SLICE_AT
    end = _SLICE_AT.replace("{1}", "{2}") if len(args) == 3 else "SIZE({0})"
    first = f"GREATEST({start}, 1)"
    null = " OR ".join(f"{{{i}}} IS NULL" for i in range(len(args)))
    return fill(f"CASE WHEN {null} THEN NULL ELSE SLICE({{0}}, {first}, GREATEST(LEAST({end}, SIZE({{0}})) - {first} + 1, 0)) END", args)


def extreme(spark: str) -> Rewrite:
    """GREATEST/LEAST as Flink's: NULL when an argument is NULL (Spark's skip NULLs)."""

    def rewrite(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
        values = exp.Array(expressions=[a.copy() for a in args])
        return fill(f"ELEMENT_AT(TRANSFORM(ARRAY({{0}}), a -> IF(EXISTS(a, x -> x IS NULL), NULL, {spark}(a))), 1)", [values])

    return rewrite


def proctime(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    if args:
        raise UnsupportedError(
            f"Flink SQL: PROCTIME({', '.join(a.sql() for a in args)}) is not supported by funke yet: PROCTIME() takes no arguments"
        )
    return call("TIMESTAMP_MILLIS", call("UNIX_MILLIS", exp.CurrentTimestamp()))



#: A logarithm with Flink's IEEE results: -Infinity of 0, NaN of a negative number (Spark: NULL).
LOG_OF = (
    "CASE WHEN {{0}} > 0 THEN {} WHEN {{0}} = 0 THEN CAST('-Infinity' AS DOUBLE) WHEN {{0}} < 0 THEN CAST('NaN' AS DOUBLE) END"
)


def log(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    if len(args) == 1:
        return fill(LOG_OF.format("LN({0})"), args)
    ln_x, ln_b = fill(LOG_OF.format("LN({0})"), [args[1]]), fill(LOG_OF.format("LN({0})"), [args[0]])
    ieee = fill("CASE WHEN {1} = 0 THEN {0} * POWER({1}, -1) ELSE {0} / {1} END", [ln_x, ln_b])
    return fill("CASE WHEN {0} > 0 AND {1} > 0 THEN LOG({0}, {1}) ELSE {2} END", [*args, ieee])


def abs_of(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``ABS(x)``, Java's ``Math.abs``: of an integer type's smallest value that value (Spark's ANSI ``ABS``
    fails the job), where funke knows the type."""
    kind = types[0] or ""
    if kind not in INTEGERS:
        return call("ABS", args[0])
    smallest = integer_range(kind)[0]
    return fill(f"CASE WHEN {{0}} = CAST('{smallest}' AS {kind.upper()}) THEN {{0}} ELSE ABS({{0}}) END", args)


def sign(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    sign = call("SIGN", args[0])
    return exp.Cast(this=sign, to=exp.DataType.build(types[0])) if types[0] in INTEGERS else sign


def truncate(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    places = args[1] if len(args) == 2 else exp.Literal.number(0)
    cut = fill("CASE WHEN {0} < 0 THEN CEIL({0}, {1}) ELSE FLOOR({0}, {1}) END", [args[0], places])
    kind = types[0]
    return exp.Cast(this=cut, to=exp.DataType.build(kind)) if kind in INTEGERS or kind in ("double", "float") else cut


def rand(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    return call("RAND")


#: Flink's clock reading, TIMESTAMP_LTZ(3): the micro-batch's instant in milliseconds.
NOW = "TIMESTAMP_MILLIS(UNIX_MILLIS(CURRENT_TIMESTAMP()))"

_DIFF_MONTHS = (
    "TRANSFORM(ARRAY(NAMED_STRUCT('s', CAST({0} AS TIMESTAMP), 'e', CAST({1} AS TIMESTAMP))), p -> TRANSFORM(ARRAY(NAMED_STRUCT("
    "'ds', CAST(p.s AS DATE), 'de', CAST(p.e AS DATE), 'm', (YEAR(p.e) - YEAR(p.s)) * 12 + MONTH(p.e) - MONTH(p.s))), q -> TRANSFORM("
    "ARRAY(CASE WHEN q.de >= q.ds THEN q.m - IF(ADD_MONTHS(q.ds, q.m) > q.de, 1, 0) ELSE q.m + IF(ADD_MONTHS(q.de, -q.m) > q.ds, 1, 0) END), "
    "x -> x - IF(ADD_MONTHS(q.ds, x) = q.de AND DATE_FORMAT(p.e, 'HH:mm:ss.SSS') < DATE_FORMAT(p.s, 'HH:mm:ss.SSS'), 1, 0))[0])[0])[0]"
)
_WRAP_INT = "CAST(PMOD({} + 2147483648, 4294967296) - 2147483648 AS INT)"
#: TIMESTAMPDIFF(unit, {0}, {1}) by unit, as Flink counts (an INT that wraps around).
_TIMESTAMPDIFF = {
    **{u: _WRAP_INT.format(f"TIMESTAMPDIFF({u}, {{0}}, {{1}})") for u in ("SECOND", "MINUTE", "HOUR", "DAY", "WEEK")},
    "MILLISECOND": _WRAP_INT.format("TIMESTAMPDIFF(SECOND, {0}, {1}) * 1000"),
    "MICROSECOND": _WRAP_INT.format("TIMESTAMPDIFF(SECOND, {0}, {1}) * 1000000"),
    "MONTH": f"CAST({_DIFF_MONTHS} AS INT)", "QUARTER": f"CAST({_DIFF_MONTHS} DIV 3 AS INT)", "YEAR": f"CAST({_DIFF_MONTHS} DIV 12 AS INT)",
}  # fmt: skip


def _unit(e: exp.Expression) -> str:
    return e.name.upper().removeprefix("SQL_TSI_")


def timestampdiff(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    template = _TIMESTAMPDIFF.get(_unit(args[0]))
    if template is None:
        raise PlanError(
            f"Flink SQL: TIMESTAMPDIFF({args[0].sql()}, ...): a unit funke does not know ({', '.join(_TIMESTAMPDIFF)})"
        )
    return fill(template, args[1:])


_TO_DATE_1 = r"TRY_TO_DATE(REGEXP_EXTRACT({0}, '^\\s*(\\d\\d?\\d?\\d?-\\d\\d?-\\d\\d?)(\\s|$)', 1), 'y-M-d')"
_TO_TIMESTAMP_1 = (
    r"CASE WHEN {0} RLIKE '^\\d\\d\\d\\d-\\d\\d?-\\d\\d?( \\d\\d?:\\d\\d?:\\d\\d?(\\.\\d?\\d?\\d?\\d?\\d?\\d?\\d?\\d?\\d?)?)?$' "
    r"THEN DATE_TRUNC('MILLISECOND', TRY_TO_TIMESTAMP({0})) END"
)


def to_date(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    return fill(_TO_DATE_1, args) if len(args) == 1 else call("TRY_TO_DATE", *args)


def to_timestamp(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    if len(args) == 1:
        return fill(_TO_TIMESTAMP_1, args)
    return fill("DATE_TRUNC('MILLISECOND', TRY_TO_TIMESTAMP({0}, {1}))", args)


#: EXTRACT(unit FROM {0}) by unit, as Flink gives it (a BIGINT; SECOND whole seconds, MILLISECOND the fraction's).
_EXTRACT = {
    **{u: f"CAST(EXTRACT({u} FROM {{0}}) AS BIGINT)" for u in ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "DOW", "DOY")},
    "SECOND": "CAST(FLOOR(EXTRACT(SECOND FROM {0})) AS BIGINT)",
    "MILLISECOND": "CAST(FLOOR(EXTRACT(SECOND FROM {0}) * 1000) % 1000 AS BIGINT)",
    "MICROSECOND": "CAST(FLOOR(EXTRACT(SECOND FROM {0}) * 1000000) % 1000000 AS BIGINT)",
    "NANOSECOND": "CAST(FLOOR(EXTRACT(SECOND FROM {0}) * 1000000) % 1000000 * 1000 AS BIGINT)",
    "EPOCH": "CAST(FLOOR(UNIX_MICROS(CAST({0} AS TIMESTAMP)) / 1000000) AS BIGINT)",
    "DECADE": "CAST(FLOOR(YEAR({0}) / 10) AS BIGINT)",
    "CENTURY": "CAST(FLOOR((YEAR({0}) + 99) / 100) AS BIGINT)",
    "MILLENNIUM": "CAST(FLOOR((YEAR({0}) + 999) / 1000) AS BIGINT)",
    "ISODOW": "CAST(EXTRACT(DAYOFWEEK_ISO FROM {0}) AS BIGINT)",
    "ISOYEAR": "CAST(EXTRACT(YEAROFWEEK FROM {0}) AS BIGINT)",
}  # fmt: skip


#: The units Flink EXTRACTs from a TIME.
_TIME_UNITS = ("HOUR", "MINUTE", "SECOND", "MILLISECOND")


def extract(unit: str, value: exp.Expression, kind: str | None = None) -> exp.Expression:
    """Flink's ``EXTRACT(unit FROM value)`` of a value of type ``kind`` (None: unknown)."""
    template = _EXTRACT.get(unit.upper())
    if template is None:
        raise PlanError(f"Flink SQL: EXTRACT({unit} FROM ...): a unit funke does not know ({', '.join(_EXTRACT)})")
    if kind is not None and kind.startswith("time(") and unit.upper() not in _TIME_UNITS:
        raise PlanError(f"Flink SQL: EXTRACT({unit} FROM ...) of a TIME: Flink EXTRACTs {', '.join(_TIME_UNITS)} from a TIME")
    return fill(template, [value])


#: FLOOR/CEIL(timestamp TO unit), and of a DATE, as Flink rounds (a WEEK from Sunday; CEIL to a MONTH or
#: longer looks at the date only).
_FLOOR_TO = {
    **{u: f"DATE_TRUNC('{u}', {{0}})" for u in ("YEAR", "QUARTER", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND")},
    "WEEK": "DATE_TRUNC('WEEK', {0} + INTERVAL 1 DAY) - INTERVAL 1 DAY",
    "DECADE": "MAKE_TIMESTAMP(YEAR({0}) DIV 10 * 10, 1, 1, 0, 0, 0)",
    "CENTURY": "MAKE_TIMESTAMP((YEAR({0}) - 1) DIV 100 * 100 + 1, 1, 1, 0, 0, 0)",
    "MILLENNIUM": "MAKE_TIMESTAMP((YEAR({0}) - 1) DIV 1000 * 1000 + 1, 1, 1, 0, 0, 0)",
}  # fmt: skip
_FLOOR_DATE_TO = {
    **{u: "{0}" for u in ("DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND")},
    **{u: f"TRUNC({{0}}, '{u}')" for u in ("YEAR", "QUARTER", "MONTH")},
    "WEEK": "DATE_ADD(TRUNC(DATE_ADD({0}, 1), 'WEEK'), -1)",
    "DECADE": "MAKE_DATE(YEAR({0}) DIV 10 * 10, 1, 1)",
    "CENTURY": "MAKE_DATE((YEAR({0}) - 1) DIV 100 * 100 + 1, 1, 1)",
    "MILLENNIUM": "MAKE_DATE((YEAR({0}) - 1) DIV 1000 * 1000 + 1, 1, 1)",
}  # fmt: skip
_CEIL_DATE_TO = {
    **{u: "{0}" for u in ("HOUR", "MINUTE", "SECOND", "MILLISECOND")},
    "DAY": "DATE_ADD({0}, 1)",
    "MONTH": "ADD_MONTHS(TRUNC(DATE_ADD({0}, -1), 'MONTH'), 1)",
    "QUARTER": "ADD_MONTHS(TRUNC(DATE_ADD({0}, -1), 'QUARTER'), 3)",
    "YEAR": "ADD_MONTHS(TRUNC(DATE_ADD({0}, -1), 'YEAR'), 12)",
    "WEEK": "DATE_ADD(TRUNC(DATE_ADD({0}, 7), 'WEEK'), -1)",
    "DECADE": "MAKE_DATE(YEAR({0}) DIV 10 * 10 + 10, 1, 1)",
    "CENTURY": "MAKE_DATE((YEAR({0}) - 1) DIV 100 * 100 + 101, 1, 1)",
    "MILLENNIUM": "MAKE_DATE((YEAR({0}) - 1) DIV 1000 * 1000 + 1001, 1, 1)",
}  # fmt: skip
_CEIL_TO = {
    "MILLISECOND": "DATE_TRUNC('MILLISECOND', {0} + INTERVAL '0.000999' SECOND)",
    "SECOND": "DATE_TRUNC('SECOND', DATE_TRUNC('MILLISECOND', {0}) + INTERVAL '0.999' SECOND)",
    "MINUTE": "DATE_TRUNC('MINUTE', DATE_TRUNC('MILLISECOND', {0}) + INTERVAL '59.999' SECOND)",
    "HOUR": "DATE_TRUNC('HOUR', DATE_TRUNC('MILLISECOND', {0}) + INTERVAL '59:59.999' MINUTE TO SECOND)",
    "DAY": "DATE_TRUNC('DAY', DATE_TRUNC('MILLISECOND', {0}) + INTERVAL '0 23:59:59.999' DAY TO SECOND)",
    **{u: f"CAST({t.replace('{0}', 'CAST({0} AS DATE)')} AS TIMESTAMP)" for u, t in _CEIL_DATE_TO.items() if u not in ("HOUR", "MINUTE", "SECOND", "MILLISECOND", "DAY")},
}  # fmt: skip


def rounded(ceil: bool, value: exp.Expression, kind: str | None) -> exp.Expression:
    """Flink's ``CEIL(x)``/``FLOOR(x)`` of a number of type ``kind``: of that type (Spark's is a BIGINT, NaN
    0, and past BIGINT's range the job fails); Spark's where the type is unknown."""
    spark = "CEIL" if ceil else "FLOOR"
    if kind in INTEGERS:
        return value
    if kind in ("double", "float"):
        limit = 4503599627370496 if kind == "double" else 8388608  # (from here on every such number is whole)
        return fill(f"CASE WHEN ABS({{0}}) < {limit} THEN CAST({spark}({{0}}) AS {kind.upper()}) ELSE {{0}} END", [value])
    if kind is not None and kind.startswith("decimal("):
        precision = kind[len("decimal(") :].split(",")[0]
        return fill(f"CAST({spark}({{0}}) AS DECIMAL({precision}, 0))", [value])
    return exp.Ceil(this=value) if ceil else exp.Floor(this=value)


def round_to(ceil: bool, unit: str, value: exp.Expression, kind: str | None) -> exp.Expression:
    """Flink's ``FLOOR(value TO unit)`` (``ceil``: ``CEIL``) of a value of type ``kind`` (a TIMESTAMP when unknown)."""
    if kind is not None and kind.startswith("time("):
        raise PlanError(f"Flink SQL: {'CEIL' if ceil else 'FLOOR'}(... TO {unit}) of a TIME is not supported by funke yet")
    table = (_CEIL_DATE_TO if ceil else _FLOOR_DATE_TO) if kind == "date" else (_CEIL_TO if ceil else _FLOOR_TO)
    template = table.get(unit.upper())
    if template is None:
        raise PlanError(
            f"Flink SQL: {'CEIL' if ceil else 'FLOOR'}(... TO {unit}): a unit funke does not know ({', '.join(table)})"
        )
    return fill(template, [value])


#: Java's ``String.hashCode`` of ``{0}``: over its UTF-16 units, ``h * 31 + unit`` wrapping around as an INT.
_JAVA_STRING_HASH = (
    "CASE WHEN {0} = '' THEN 0 ELSE AGGREGATE(SEQUENCE(0, LENGTH(HEX(ENCODE({0}, 'UTF-16BE'))) DIV 4 - 1), CAST(0 AS BIGINT), "
    "(fk_h, fk_i) -> (fk_h * 31 + CAST(CONV(SUBSTR(HEX(ENCODE({0}, 'UTF-16BE')), fk_i * 4 + 1, 4), 16, 10) AS BIGINT)) % 4294967296, "
    "fk_h -> CAST(IF(fk_h >= 2147483648, fk_h - 4294967296, fk_h) AS INT)) END"
)
#: Java's ``Long.hashCode`` of ``{0}``: its two halves' exclusive or, as an INT.
_JAVA_LONG_HASH = (
    "CAST(IF((({0} ^ SHIFTRIGHTUNSIGNED({0}, 32)) & 4294967295) >= 2147483648, (({0} ^ SHIFTRIGHTUNSIGNED({0}, 32)) & 4294967295) - 4294967296, "
    "({0} ^ SHIFTRIGHTUNSIGNED({0}, 32)) & 4294967295) AS INT)"
)


def hash_code(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``HASH_CODE(x)``: Java's ``hashCode`` of the value, an INT (NULL for NULL): of a string its
    ``String.hashCode``, of an integer type the value (of a BIGINT ``Long.hashCode``), of a BOOLEAN 1231 or 1237,
    of a DATE its days since 1970-01-01."""
    kind = types[0] or ""
    if kind == "string" or kind.startswith(("varchar(", "char(")):
        return fill(_JAVA_STRING_HASH, args)
    if kind in ("tinyint", "smallint", "int"):
        return exp.Cast(this=args[0], to=exp.DataType.build("int"))
    if kind == "bigint":
        return fill(_JAVA_LONG_HASH, args)
    if kind == "boolean":
        return fill("CASE WHEN {0} THEN 1231 WHEN NOT {0} THEN 1237 END", args)
    if kind == "date":  # (Flink keeps a DATE as its days since 1970-01-01, an INT)
        return fill("DATEDIFF({0}, DATE '1970-01-01')", args)
    what = f"this one is {kind}" if kind else "funke cannot tell this one's type while planning"
    raise UnsupportedError(
        f"Flink SQL: HASH_CODE({args[0].sql()}) is not supported by funke yet: funke gives Java's hash code of a STRING, an "
        f"integer, a BOOLEAN or a DATE, as Flink does ({what}: CAST it to one)"
    )
