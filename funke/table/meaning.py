"""Flink's meaning of SQL's operators and call syntax on Spark (``Planner.spark_sql``'s rewrites besides the
built-in functions of ``funke.dialect.functions``): integer division, an integer operand of a DECIMAL operation,
an integer MOD's type, 1-based array subscripts and the MAP constructor, CASTs to strings, ``SIMILAR TO``."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from funke.dialect.rewrites import fill
from funke.errors import PlanError
from funke.plan.types import INTEGRAL, Schema
from funke.table.sql_types import type_of, wider
from funke.table.time_of_day import is_niladic

#: ``Planner.spark_sql``'s rewrite of a subexpression, and its ``refuse``.
Meaning = Callable[[exp.Expression], exp.Expression]
Refuse = Callable[..., Exception]


def arithmetic(n: exp.Binary, schema: Schema | None, meaning: Meaning, refuse: Refuse) -> exp.Expression:
    """``+ - * / %`` with Flink's meaning: ``/`` of two integers divides integers (truncating, of the wider
    type), and an integer operand of a DECIMAL operation is the DECIMAL Flink takes it for (INT
    ``DECIMAL(10, 0)``, BIGINT ``DECIMAL(19, 0)``: Spark's ``DECIMAL(20, 0)``, and its literals' digits,
    give the result another scale: ``CAST(1 AS DECIMAL(10, 2)) / 3`` is ``0.3333333333333`` in Flink)."""
    kinds = (type_of(n.this, schema), type_of(n.expression, schema))
    left, right = n.this.transform(meaning), n.expression.transform(meaning)
    if isinstance(n, exp.Div):
        if all(k in INTEGRAL for k in kinds):
            return exp.Cast(this=exp.IntDiv(this=left, expression=right), to=exp.DataType.build(wider(*kinds)))
        if any(k is None for k in kinds):
            raise refuse(n, f"{n.sql()} (funke cannot tell whether it divides integers)", "CAST an operand")
    if any(k is not None and k.startswith("decimal") for k in kinds):
        left, right = _decimal_view(left, kinds[0]), _decimal_view(right, kinds[1])
    out = n.copy()
    out.set("this", left)
    out.set("expression", right)
    if isinstance(n, exp.Mod) and all(k in INTEGRAL for k in kinds) and kinds[0] != kinds[1]:
        return exp.Cast(this=out, to=exp.DataType.build(kinds[1]))  # (Flink: the divisor's type)
    return out


#: ``(a, b) OVERLAPS (c, d)`` of two periods (each bound pair in either order): each starts no later than the
#: other ends, ends included; NULL where a bound is NULL (Flink's, checked on Flink 2.3).
_OVERLAPS = (
    "CASE WHEN {0} IS NULL OR {1} IS NULL OR {2} IS NULL OR {3} IS NULL THEN NULL "
    "ELSE GREATEST({0}, {1}) >= LEAST({2}, {3}) AND GREATEST({2}, {3}) >= LEAST({0}, {1}) END"
)


def overlaps(n: exp.Overlaps, meaning: Meaning, refuse: Refuse) -> exp.Expression:
    """``(start, end) OVERLAPS (start, end)``; an end may be a length (an INTERVAL literal), ``start + length``."""
    bounds: list[exp.Expression] = []
    for period in (n.this, n.expression):
        if not (isinstance(period, exp.Tuple) and len(period.expressions) == 2):
            raise refuse(n, f"{n.sql()} (OVERLAPS takes two periods, each (start, end) or (start, INTERVAL ...))")
        start, end = (x.transform(meaning) for x in period.expressions)
        if isinstance(period.expressions[1], exp.Interval):
            end = exp.Add(this=start.copy(), expression=end)
        bounds += [start, end]
    return fill(_OVERLAPS, bounds)


def keyword_column(c: exp.Column) -> bool:
    """Whether ``c`` is a keyword sqlglot parses as a column: ``MAP`` of ``MAP[k, v]`` or the unit of
    ``TIMESTAMPDIFF(DAY, ...)`` / ``TIMESTAMPADD(DAY, ...)`` (no column of the query's)."""
    parent = c.parent
    if isinstance(parent, exp.Bracket) and parent.this is c:
        return c.name.upper() == "MAP"
    return (
        isinstance(parent, exp.Anonymous)
        and parent.name.upper() in ("TIMESTAMPDIFF", "TIMESTAMPADD")
        and bool(parent.expressions)
        and parent.expressions[0] is c
    )


def subscript(n: exp.Bracket, schema: Schema | None, meaning: Meaning, refuse: Refuse) -> exp.Expression:
    """``MAP[k, v, ...]``, ``array[i]`` (1-based in Flink, 0-based in Spark; an index below 1 fails the job, one
    past the end is NULL, as in Flink) or ``map[key]`` (Spark's as it is).

    ``MAP[k, v, ...]`` is Spark's ``map_from_arrays(array(k, ...), array(v, ...))``: of a key given twice the last
    value wins, in the first one's place, as in Flink (funke's sessions set ``spark.sql.mapKeyDedupPolicy`` to
    ``LAST_WIN``). Spark's own ``map(k, v, ...)`` would do the same when run, but its optimizer folds
    ``CARDINALITY(map(...))`` to the number of pairs and ``map(...)[k]`` to the first pair's value, as if keys
    never repeated."""
    args = [a.transform(meaning) for a in n.expressions]
    this = n.this

    def constructor(e: exp.Expression) -> bool:  # (MAP[...])
        return isinstance(e, exp.Column) and not e.table and e.name.upper() == "MAP" and not (schema and schema.get(e.name))

    if constructor(this):
        if not args or len(args) % 2:
            raise PlanError(f"Flink SQL: {n.sql()}: MAP[...] takes one or more pairs of a key and a value, as in Flink")
        keys, values = exp.Array(expressions=args[0::2]), exp.Array(expressions=args[1::2])
        return exp.Anonymous(this="MAP_FROM_ARRAYS", expressions=[keys, values])
    kind = (
        "array"
        if isinstance(this, exp.Array)
        else "map"
        if isinstance(this, exp.Bracket) and constructor(this.this)
        else (type_of(this, schema) or "")
    )
    if kind.startswith("map"):
        return exp.Bracket(this=this.transform(meaning), expressions=args)
    if not kind.startswith("array") or len(args) != 1:
        raise refuse(
            n,
            f"{n.sql()} (funke cannot tell whether it indexes an array, from 1 in Flink and from 0 in Spark, or a map)",
            "CAST the value",
        )
    return _array_at(this.transform(meaning), args[0])


#: sqlglot's nodes of Flink's call syntax funke rewrites (``SUBSTRING(s FROM 2 FOR 3)``): their arguments in Flink's order.
CALL_ARGS: dict[type[exp.Expression], tuple[str, ...]] = {
    exp.Substring: ("this", "start", "length"), exp.Overlay: ("this", "expression", "from_", "for_"), exp.Initcap: ("this",),
}  # fmt: skip
#: ``{0} SIMILAR TO {1}`` (no Spark syntax): a regex match of the whole string, ``%`` any text, ``_`` any character.
SIMILAR_TO = "{0} RLIKE CONCAT('^(?:', REPLACE(REPLACE(REPLACE(REPLACE({1}, '\\\\', '\\\\\\\\'), '$', '\\\\$'), '%', '(?s:.*)'), '_', '.'), ')\\\\z')"

#: An integer operand of a DECIMAL operation as Flink sees it: the DECIMAL of its type's digits.
DECIMAL_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}


def _decimal_view(e: exp.Expression, kind: str | None) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build(f"DECIMAL({DECIMAL_DIGITS[kind]}, 0)")) if kind in DECIMAL_DIGITS else e


def cast(n: exp.Cast, source: str | None, meaning: Meaning) -> exp.Expression:
    """``CAST``/``TRY_CAST`` with Flink's meaning where the source type is known: a BOOLEAN as a string is
    ``'TRUE'``/``'FALSE'`` (Spark: lower case), a TIMESTAMP column or function result (funke's are TIMESTAMP(3)) is
    written with its milliseconds (Spark leaves out a zero fraction: ``2020-01-01 00:00:00`` where Flink writes ``.000``,
    and trailing zeros: ``.12`` where Flink writes ``.120``; ``CURRENT_TIMESTAMP`` too, sqlglot's own node). A CAST to
    ``VARCHAR(n)`` cuts the text to ``n`` characters, to ``CHAR(n)`` cuts or pads it with spaces to ``n``, as Flink's
    (Spark's keeps the whole text)."""
    value = n.this.transform(meaning)
    kind = n.to.this
    if kind in _CHARACTER_STRINGS:  # (the text, then a CHAR(n) padded or cut to n, a VARCHAR(n) cut to n)
        length = int(n.to.expressions[0].name) if n.to.expressions else (1 if kind == exp.DataType.Type.CHAR else None)
        text = _as_text(n, value, source)
        if kind == exp.DataType.Type.CHAR:
            return exp.Anonymous(this="RPAD", expressions=[text, exp.Literal.number(length), exp.Literal.string(" ")])
        if length is not None and length < _MAX_LENGTH:
            return exp.Anonymous(this="SUBSTRING", expressions=[text, exp.Literal.number(1), exp.Literal.number(length)])
        return text
    out = n.copy()
    out.set("this", value)
    return out


#: The character string types a CAST may name: STRING, VARCHAR(n), CHAR(n) (CHAR is CHAR(1), VARCHAR the longest).
_CHARACTER_STRINGS = (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.CHAR)
_MAX_LENGTH = 2**31 - 1


def _as_text(n: exp.Cast, value: exp.Expression, source: str | None) -> exp.Expression:
    """``value`` (of type ``source``) as Flink writes it in a string: a BOOLEAN ``'TRUE'``/``'FALSE'``, a TIMESTAMP
    column or function result with its milliseconds; else Spark's CAST (``TRY_CAST`` kept one)."""
    if source == "boolean":
        return exp.Upper(this=exp.Cast(this=value, to=exp.DataType.build("STRING")))
    if source == "timestamp" and isinstance(n.this, (exp.Column, exp.Anonymous, exp.CurrentTimestamp)):
        return exp.Anonymous(this="DATE_FORMAT", expressions=[value, exp.Literal.string("yyyy-MM-dd HH:mm:ss.SSS")])
    out = n.copy()
    out.set("this", value)
    out.set("to", exp.DataType.build("STRING"))
    return out


def _array_at(array: exp.Expression, index: exp.Expression) -> exp.Expression:
    return fill(
        "get({0}, CASE WHEN {1} < 1 THEN raise_error('Array element access needs an index starting at 1 but was ' || {1}) ELSE {1} - 1 END)",
        [array, index],
    )


def is_localtimestamp(e: exp.Expression, schema: Schema | None) -> bool:
    """Whether ``e`` is Flink's niladic ``LOCALTIMESTAMP``."""
    return is_niladic(e, schema, "LOCALTIMESTAMP")
