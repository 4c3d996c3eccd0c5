"""What type Flink SQL gives an expression, as far as the planner needs it: whether it is an integer
(``type_of``: integer ``/`` divides integers, SUM and AVG keep an integer type) and the Spark type of
an expression where Flink's and Spark's agree for certain (``exact_type``: the type a general-path
operator declares for its output).

>>> import sqlglot
>>> exact_type(sqlglot.parse_one("CASE WHEN v > 0 THEN 'p' ELSE 'n' END"), None)
'string'
>>> [exact_type(sqlglot.parse_one(e), None) for e in ("-1.25", "COALESCE(NULL, 1.5, 22.125)", "CASE WHEN v THEN 1 ELSE 1.5 END")]
['decimal(3,2)', 'decimal(5,3)', None]
>>> exact_type(sqlglot.parse_one("ARRAY[1, 2147483648]"), None), exact_type(sqlglot.parse_one("1.5 * 2.25"), None)
('array<bigint>', 'decimal(6,3)')
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from funke.dialect.json_functions import JSON_VALUE_TYPES
from funke.plan.types import INTEGRAL, Schema, decimal_arithmetic, decimal_digits, normalize_type, struct_fields, widest_decimal
from funke.table.time_of_day import cast_time_type, is_localtime, is_time_cast, time_precision

_ORDER = ("tinyint", "smallint", "int", "bigint")


def wider(a: str, b: str) -> str:
    return max(a, b, key=_ORDER.index)


def number_literal_type(e: Any) -> str | None:
    """A number literal's type as Flink gives it: ``1`` an INT, ``1.25`` a DECIMAL(3, 2), ``1e0`` a DOUBLE."""
    if isinstance(e, exp.Literal) and not e.is_string:
        digits = e.name.lstrip("-")
        if digits.isdigit():
            return "int" if int(digits) < 2**31 else "bigint"
        whole, dot, fraction = digits.partition(".")
        if dot and (whole + fraction).isdigit():
            return f"decimal({max(len(whole.lstrip('0')) + len(fraction), len(fraction), 1)},{len(fraction)})"
        return "double"
    return None


def type_of(e: exp.Expression, schema: Schema | None) -> str | None:
    """What type Flink gives ``e``, as far as it matters here (integer or not); None: unknown."""
    if isinstance(e, exp.Paren):
        return type_of(e.this, schema)
    if isinstance(e, exp.Literal):
        return number_literal_type(e) or "string"
    if isinstance(e, exp.HexString):  # (X'...')
        return "binary"
    if isinstance(e, (exp.Boolean, exp.Predicate, exp.Connector, exp.Not)):
        return "boolean"
    if isinstance(e, exp.Anonymous) and e.name.upper() in _TIMESTAMP_FUNCTIONS:
        return "timestamp"
    if isinstance(e, exp.Anonymous) and e.name.upper() == "JSON_VALUE":
        return json_value_type(e)
    if isinstance(e, exp.Array) or (isinstance(e, exp.Anonymous) and e.name.upper() in _ARRAY_FUNCTIONS):
        return "array"
    if is_time_cast(e):
        return cast_time_type(e)
    if isinstance(e, exp.Cast):
        return e.to.sql(dialect="spark").lower()
    if isinstance(e, exp.Column) and schema is not None and e.name in schema.names:
        return schema.field(e.name, node="SQL").dtype
    if isinstance(e, exp.CurrentTime) or is_localtime(e, schema):
        return "time(0)"
    if isinstance(e, exp.Neg):
        return type_of(e.this, schema)
    if isinstance(e, (exp.Add, exp.Sub)) and _time_plus_interval(e, schema):
        return _time_plus_interval(e, schema)
    if isinstance(e, (exp.Coalesce, exp.Case, exp.If, exp.Nullif, exp.Min, exp.Max)):
        return _time_of_parts(e, schema)
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul, exp.Mod)):
        kinds = (type_of(e.this, schema), type_of(e.expression, schema))
        if all(k in INTEGRAL for k in kinds):
            return wider(*kinds)
        return "double" if all(k is not None for k in kinds) else None
    return None


def json_value_type(e: exp.Anonymous) -> str | None:
    """A JSON_VALUE call's type: its RETURNING clause's (an ``exp.Var`` when written), STRING without one."""
    returning = next((a.name.removeprefix("RETURNING ") for a in e.expressions if isinstance(a, exp.Var) and a.name.startswith("RETURNING ")), "STRING")
    return JSON_VALUE_TYPES.get(returning)


def _time_of_parts(e: exp.Expression, schema: Schema | None) -> str | None:
    """The TIME type of a COALESCE, CASE, IF, NULLIF, MIN or MAX whose values are all TIMEs (the finest of
    them); None for any other (the planner tells TIMEs apart, not other types, here)."""
    if isinstance(e, exp.Case):
        parts = [i.args["true"] for i in e.args["ifs"]] + ([e.args["default"]] if e.args.get("default") is not None else [])
    elif isinstance(e, exp.If):
        parts = [e.args["true"]] + ([e.args["false"]] if e.args.get("false") is not None else [])
    elif isinstance(e, exp.Nullif):
        parts = [e.this]
    else:
        parts = [e.this, *e.expressions]
    precisions = [time_precision(type_of(p, schema)) for p in parts if not isinstance(p, exp.Null)]
    if not precisions or None in precisions:
        return None
    return f"time({max(p for p in precisions if p is not None)})"


def _time_plus_interval(e: exp.Add | exp.Sub, schema: Schema | None) -> str | None:
    """The TIME type of ``time +/- INTERVAL`` (or ``INTERVAL + time``); None for anything else."""
    for time, other in ((e.this, e.expression), (e.expression, e.this)):
        kind = type_of(time, schema)
        if time_precision(kind) is not None and isinstance(other, exp.Interval):
            return kind
    return None


def exact_type(e: exp.Expression, schema: Schema | None) -> str | None:
    """The Spark type of ``e`` where Flink's and Spark's agree for certain: a column, a ROW's field
    (``person.id``), a CAST, a CASE or COALESCE whose results all have one such type; None otherwise."""
    if isinstance(e, exp.Paren):
        return exact_type(e.this, schema)
    if is_time_cast(e):
        return cast_time_type(e)
    if isinstance(e, exp.Cast):
        return normalize_type(e.to.sql(dialect="spark"))
    if isinstance(e, exp.CurrentTime) or is_localtime(e, schema):
        return "time(0)"
    if isinstance(e, (exp.Add, exp.Sub)) and _time_plus_interval(e, schema):
        return _time_plus_interval(e, schema)
    if isinstance(e, exp.Column) and schema is not None:
        if not e.table:
            f = schema.get(e.name)
            return f.dtype if f is not None else None
        row = schema.get(e.table)
        return struct_fields(row.dtype).get(e.name) if row is not None else None
    if isinstance(e, exp.Coalesce):
        return _common_type([e.this, *e.expressions], schema)
    if isinstance(e, exp.Case) and e.args.get("default") is not None:  # (and a VALUES column: funke.table.from_lowering)
        return _common_type([*(c.args["true"] for c in e.args["ifs"]), e.args["default"]], schema)
    if isinstance(e, exp.Array) and e.expressions:  # ARRAY[...]: of its elements' common type
        element = _common_type(list(e.expressions), schema)
        return f"array<{element}>" if element is not None else None
    if isinstance(e, (exp.Predicate, exp.Connector, exp.Not, exp.Boolean)):  # (comparisons, AND/OR, NOT, IS NULL, LIKE, IN, TRUE, ...)
        return "boolean"
    if isinstance(e, exp.Literal) and e.is_string:
        return "string"
    if isinstance(e, exp.Literal) and e.name.isdigit():  # (an integer literal: INT, BIGINT past INT's range)
        return "int" if int(e.name) < 2**31 else "bigint" if int(e.name) < 2**63 else None
    literal = number_literal_type(e.this if isinstance(e, exp.Neg) else e)  # (1.25: a DECIMAL(3, 2) in both, and so is -1.25)
    if (digits := decimal_digits(literal)) is not None and digits[0] <= _DECIMAL_MAX:
        return literal
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul)):  # integers: the wider type, in Flink and Spark alike
        kinds = (exact_type(e.this, schema), exact_type(e.expression, schema))
        if all(k in INTEGRAL for k in kinds):
            return wider(*kinds)
        left, right = map(decimal_digits, kinds)  # (two DECIMALs: Flink's rules, which are Spark's)
        if left is None or right is None:
            return None
        precision, scale = decimal_arithmetic(ARITHMETIC[type(e)], left, right)
        return f"decimal({precision},{scale})"
    if isinstance(e, exp.Anonymous) and e.name.upper() == "JSON_VALUE":
        return json_value_type(e)
    if isinstance(e, (exp.Upper, exp.Lower)) or (isinstance(e, exp.Anonymous) and e.name.upper() in _STRING_FUNCTIONS):
        return "string"
    if isinstance(e, exp.DPipe) and exact_type(e.this, schema) == exact_type(e.expression, schema) == "string":
        return "string"
    return None


def _common_type(values: list[exp.Expression], schema: Schema | None) -> str | None:
    """The type of CASE or COALESCE over ``values`` where Flink and Spark widen alike: one type; integers' widest;
    DECIMALs' with the most digits on each side of the point (at most 38). A NULL literal takes the others' type."""
    kinds = {exact_type(x, schema) for x in values if not isinstance(x, exp.Null)}
    if None in kinds or not kinds:
        return None
    if len(kinds) == 1:
        return kinds.pop()
    if kinds <= INTEGRAL:
        return max(kinds, key=_ORDER.index)
    digits = [d for d in map(decimal_digits, kinds) if d is not None]
    if len(digits) == len(kinds):
        precision, scale = widest_decimal(digits)
        return f"decimal({precision},{scale})" if precision <= _DECIMAL_MAX else None
    return None


_DECIMAL_MAX = 38
#: SQL's arithmetic operators by sqlglot's node (``funke.plan.types.decimal_arithmetic`` takes them by sign).
ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}

#: Functions whose result is a string in Flink and in Spark alike (whatever their arguments).
_STRING_FUNCTIONS = frozenset({"DATE_FORMAT"})
#: Functions whose result is a TIMESTAMP(3) or TIMESTAMP_LTZ(3) in Flink (a TIMESTAMP in Spark).
_TIMESTAMP_FUNCTIONS = frozenset({"TO_TIMESTAMP_LTZ", "TO_TIMESTAMP", "NOW", "CURRENT_ROW_TIMESTAMP"})
#: Functions whose result is an ARRAY (the kind is what matters: a subscript counts from 1).
_ARRAY_FUNCTIONS = frozenset({
    "SPLIT", "ARRAY_APPEND", "ARRAY_PREPEND", "ARRAY_CONCAT", "ARRAY_DISTINCT", "ARRAY_EXCEPT", "ARRAY_INTERSECT", "ARRAY_UNION",
    "ARRAY_REMOVE", "ARRAY_REVERSE", "ARRAY_SLICE", "ARRAY_SORT", "MAP_KEYS", "MAP_VALUES",
})  # fmt: skip
