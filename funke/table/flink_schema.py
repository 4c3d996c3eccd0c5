"""The Flink type and nullability of a query's columns, as far as funke can tell while planning: what DESCRIBE,
``get_schema()`` and ``print_schema()`` say of a column funke computes in Spark's types.

Each rule here is what PyFlink 2.3's planner gave for the same expression (run by hand in a side venv):

- a literal is NOT NULL, a string literal a ``CHAR(n)``; a ``VALUES`` column has its rows' common type (``CHAR(n)``
  of strings of one length, ``VARCHAR(n)`` of several), NOT NULL unless a row's value may be NULL;
- a comparison, ``+ - * / %``, a CAST, ``||`` and the functions of ``_PRESERVING`` are NOT NULL where their
  arguments are; ``IS [NOT] NULL``, ``COUNT``, ``CURRENT_TIMESTAMP``, ``NOW()``, ``LOCALTIMESTAMP`` always are;
  ``COALESCE`` is where one argument is; a CASE or IF where each of its results is (and it has an ELSE);
- ``SUBSTRING``, ``CHR``, ``REGEXP_EXTRACT``, ``SPLIT_INDEX``, ``TO_TIMESTAMP``, ``NULLIF``, ``TRY_CAST`` and
  anything funke has no rule for may be NULL;
- in a query with a GROUP BY (of columns or expressions, a window TVF's bounds among them), ``SUM``, ``MIN``, ``MAX``,
  ``AVG``, ``FIRST_VALUE``, ``LAST_VALUE``, ``STDDEV_*``, ``VAR_*`` and ``ARRAY_AGG`` of a NOT NULL value are NOT NULL
  unless they have a FILTER; without a GROUP BY (or with ROLLUP, CUBE or GROUPING SETS) they may be NULL.
  ``LISTAGG`` is NOT NULL of a NOT NULL value in both (as Flink's);
- a column of a ``UNION [ALL]`` is NOT NULL where it is in both queries.

Anywhere else funke says the column may be NULL, where Flink's fuller inference may say NOT NULL (a join's
columns, an OVER aggregate's). A type is given only where it is Flink's for certain; ``""`` leaves it to funke's
Spark type (``funke.table.describe.view_rows``).

>>> from funke.dialect.syntax import parse
>>> columns = {"k": ("STRING", True), "v": ("INT", False)}
>>> [infer(s, columns) for s in parse("SELECT UPPER(k), v + 1, COALESCE(v, 0), SUBSTRING(k, 1, 2), 'ab'", frozenset()).selects]
[('STRING', True), ('INT', False), ('INT', True), ('STRING', False), ('CHAR(2)', True)]
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from funke.plan.types import decimal_arithmetic, decimal_digits, widest_decimal
from funke.table.data_types import flink_name
from funke.table.ddl import flink_type
from funke.table.meaning import DECIMAL_DIGITS
from funke.table.sql_types import ARITHMETIC, number_literal_type

#: A column as DESCRIBE knows it: (its Flink type, ``""`` when funke cannot tell it; whether it is NOT NULL).
Known = tuple[str, bool]
UNKNOWN: Known = ("", False)
_INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT")


#: Functions NOT NULL where their arguments all are: the Flink type of their result (``"arg"``: the first
#: argument's; ``"string"``: STRING of a STRING argument).
_PRESERVING: dict[str, str] = {
    "UPPER": "arg", "LOWER": "arg", "TRIM": "string", "REPLACE": "string", "LPAD": "string", "RPAD": "string",
    "CONCAT": "string", "LENGTH": "INT", "CHAR_LENGTH": "INT", "ASCII": "INT", "HASH_CODE": "INT", "CARDINALITY": "INT",
    "MD5": "CHAR(32)", "POW": "DOUBLE", "POWER": "DOUBLE", "ABS": "arg", "ROUND": "integer", "CEIL": "integer",
    "FLOOR": "integer", "GREATEST": "same", "LEAST": "same", "MOD": "divisor",
    **dict.fromkeys(("YEAR", "MONTH", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND", "QUARTER", "DAYOFWEEK", "DAYOFYEAR", "WEEK", "EXTRACT"), "BIGINT"),
    **dict.fromkeys(("SQRT", "LN", "EXP", "SIN", "COS", "LOG10", "LOG2", "DEGREES", "ATAN2"), "DOUBLE"),
    **dict.fromkeys(("REGEXP_REPLACE", "INITCAP", "REPEAT", "BTRIM", "TRANSLATE"), "string"),
    **dict.fromkeys(("TO_BASE64", "FROM_BASE64", "BIN", "HEX"), "STRING"),
    **dict.fromkeys(("LOCATE", "INSTR", "STR_POSITION", "TIMESTAMPDIFF"), "INT"),
    **dict.fromkeys(("REGEXP", "STARTS_WITH", "ENDS_WITH"), "BOOLEAN"),
    "ARRAY_CONTAINS": "BOOLEAN", "ARRAY_DISTINCT": "arg", "CONCAT_WS": "any string", "SPLIT": "ARRAY<STRING>", "TRUNCATE": "arg", "SIGN": "integer", "SHA256": "CHAR(64)", "SHA": "CHAR(40)",
}  # fmt: skip
#: Functions that may be NULL whatever their arguments: the Flink type of their result.
_NULLABLE: dict[str, str] = {
    "SUBSTRING": "string", "SUBSTR": "string", "CHR": "STRING", "REGEXP_EXTRACT": "STRING", "SPLIT_INDEX": "STRING",
    "TO_TIMESTAMP": "TIMESTAMP(3)", "NULLIF": "arg", "REVERSE": "string", "LEFT": "string", "RIGHT": "string", "TO_DATE": "DATE",
    "FROM_UNIXTIME": "STRING", "DATE_FORMAT": "STRING", "STR_TO_MAP": "MAP<STRING, STRING>", "PARSE_URL": "STRING", "URL_ENCODE": "STRING",
    "CONVERT_TZ": "STRING",
}  # fmt: skip
#: Functions that are never NULL: their Flink type.
_NEVER_NULL = {
    "CURRENT_TIMESTAMP": "TIMESTAMP_LTZ(3)", "NOW": "TIMESTAMP_LTZ(3)", "LOCALTIMESTAMP": "TIMESTAMP(3)", "CURRENT_DATE": "DATE",
    "RAND": "DOUBLE", "UUID": "CHAR(36)", "PI": "DOUBLE", "E": "DOUBLE", "IS_ALPHA": "BOOLEAN", "IS_DIGIT": "BOOLEAN", "IS_DECIMAL": "BOOLEAN",
}  # fmt: skip
#: Time units written as a function's first argument (``TIMESTAMPDIFF(DAY, ...)``, ``EXTRACT(DAY FROM ...)``): no value.
_UNITS = frozenset({"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"})
#: Aggregates NOT NULL of a NOT NULL value in a GROUP BY query: the Flink type of their result.
_GROUPED: dict[type, str] = {
    exp.Sum: "numeric", exp.Avg: "numeric", exp.Min: "arg", exp.Max: "arg", exp.FirstValue: "arg", exp.LastValue: "arg",
    exp.Stddev: "numeric", exp.StddevPop: "numeric", exp.StddevSamp: "numeric", exp.Variance: "numeric",
    exp.VariancePop: "numeric",
}  # fmt: skip
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.Between, exp.In, exp.And, exp.Or, exp.Not)
_ARITHMETIC = tuple(ARITHMETIC)


def infer(e: exp.Expression, columns: Mapping[str, Known], grouped: bool = False) -> Known:
    """``e``'s Flink type and nullability, over ``columns`` (the relation's, by name); ``grouped``: ``e`` is
    selected by a query with a plain GROUP BY (its aggregates' groups are never empty)."""
    e = e.unalias()
    if isinstance(e, exp.Paren):
        return infer(e.this, columns, grouped)
    if isinstance(e, exp.Column):  # (``t.c`` of a join's relation ``t`` is in ``columns`` as ``"t.c"``)
        name = f"{e.table}.{e.name}" if e.table else e.name
        if name in columns:
            return columns[name]
        return (_NEVER_NULL[e.name.upper()], True) if name.upper() == "LOCALTIMESTAMP" else UNKNOWN
    if isinstance(e, (exp.Literal, exp.Boolean)):
        return (_literal(e), True)
    if isinstance(e, exp.Is):
        return ("BOOLEAN", True)
    if isinstance(e, exp.In) and e.args.get("query") is not None:
        return ("BOOLEAN", False)  # (IN a subquery: NULL where no row matches and one is NULL)
    if isinstance(e, _COMPARISONS):
        parts = [e.this, *(e.args.get(k) for k in ("expression", "low", "high")), *e.expressions]
        return ("BOOLEAN", all(infer(p, columns)[1] for p in parts if isinstance(p, exp.Expression)))
    if isinstance(e, exp.TryCast):
        return (_cast_type(e.to), False)
    if isinstance(e, exp.Cast):
        return (_cast_type(e.to), infer(e.this, columns)[1])
    if isinstance(e, exp.Neg):
        return infer(e.this, columns, grouped)
    if isinstance(e, (exp.Add, exp.Sub)) and exp.Interval in (type(e.this), type(e.expression)):  # (a DATE or TIMESTAMP moved)
        moved = e.expression if isinstance(e.this, exp.Interval) else e.this
        kind, never = infer(moved, columns)
        return (kind if kind == "DATE" or kind.startswith("TIMESTAMP(") else "", never)
    if isinstance(e, (exp.Floor, exp.Ceil)) and e.args.get("to") is not None:  # (FLOOR(ts TO HOUR): the timestamp's type)
        return infer(e.this, columns)
    if isinstance(e, _ARITHMETIC):
        (a, a_null), (b, b_null) = infer(e.this, columns), infer(e.expression, columns)
        return (_arithmetic(type(e), a, b), a_null and b_null)
    if isinstance(e, exp.DPipe):
        (a, a_null), (b, b_null) = infer(e.this, columns), infer(e.expression, columns)
        return (_concatenated(a, b), a_null and b_null)
    if isinstance(e, exp.Coalesce):
        parts = [infer(p, columns) for p in [e.this, *e.expressions]]
        return (_same(t for t, _ in parts), any(n for _, n in parts))
    if isinstance(e, (exp.Case, exp.If)):
        return _branches(e, columns)
    if isinstance(e, exp.Array):  # (ARRAY[...]: never NULL, its elements of their common type)
        parts = [infer(p, columns) for p in e.expressions]
        element = _common([t for t, _ in parts])
        return (f"ARRAY<{element}{' NOT NULL' if all(n for _, n in parts) else ''}>" if element else "", True)
    if _name(e) == "ROW" or (isinstance(e, exp.Bracket) and isinstance(e.this, exp.Column) and e.this.name.upper() == "MAP"):
        return ("", True)  # (ROW(...), MAP[...]: never NULL)
    if isinstance(e, exp.Count):
        return ("BIGINT", True)
    if isinstance(e, exp.Filter):  # (an aggregate with a FILTER: its group may have no row)
        return ("BIGINT", True) if isinstance(e.this, exp.Count) else (infer(e.this, columns, False)[0], False)
    if isinstance(e, exp.Window):
        ranked = isinstance(e.this, (exp.RowNumber, exp.Count)) or _name(e.this) in ("RANK", "DENSE_RANK")
        return ("BIGINT", True) if ranked else (infer(e.this, columns, False)[0], False)
    if isinstance(e, exp.ArrayAgg):  # (of a NOT NULL value NOT NULL, with or without a GROUP BY)
        element, never = infer(e.this, columns)
        return (f"ARRAY<{element}{' NOT NULL' if never else ''}>" if element else "", never)
    if isinstance(e, exp.GroupConcat) or _name(e) == "LISTAGG":
        return ("STRING", infer(e.this, columns)[1])
    if type(e) in _GROUPED:
        kind, never = infer(e.this, columns)
        return (_result(_GROUPED[type(e)], [kind]), grouped and never)
    return _function(e, columns)


def _function(e: exp.Expression, columns: Mapping[str, Known]) -> Known:
    name = _name(e)
    if name in _NEVER_NULL:
        return (_NEVER_NULL[name], True)
    if not isinstance(e, exp.Func) or name is None:
        return UNKNOWN
    parts = [infer(a, columns) for a in _arguments(e)]
    kinds = [t for t, _ in parts]
    if name in _PRESERVING:
        return (_result(_PRESERVING[name], kinds), bool(parts) and all(n for _, n in parts))
    if name in _NULLABLE:
        return (_result(_NULLABLE[name], kinds), False)
    return UNKNOWN


def _name(e: exp.Expression) -> str | None:
    """A function call's name as Flink SQL spells it (sqlglot's class for the ones it knows)."""
    if isinstance(e, exp.Anonymous):
        return e.name.upper()
    if isinstance(e, exp.CurrentTimestamp):
        return "CURRENT_TIMESTAMP"
    if isinstance(e, exp.Func):
        return e.sql_name().upper()
    return None


def _arguments(e: exp.Func) -> list[exp.Expression]:
    """A call's arguments that are values (a time unit is none)."""
    given = [a for k, a in e.args.items() if isinstance(a, exp.Expression) and k != "expressions"] + list(e.expressions)
    return [a for a in given if not isinstance(a, exp.Var) and not (isinstance(a, exp.Column) and a.name.upper().removeprefix("SQL_TSI_") in _UNITS)]


def _result(rule: str, kinds: list[str]) -> str:
    first = kinds[0] if kinds else ""
    if rule == "arg":
        return first
    if rule == "string":
        return "STRING" if first == "STRING" else ""
    if rule == "integer":
        return first if first in _INTEGERS else ""
    if rule == "divisor":  # (MOD and % of integers: the divisor's type)
        return kinds[1] if len(kinds) == 2 and kinds[0] in _INTEGERS and kinds[1] in _INTEGERS else ""
    if rule == "numeric":
        return first if first in (*_INTEGERS, "DOUBLE", "FLOAT") else ""
    if rule == "same":
        return _same(kinds)
    if rule == "any string":
        return "STRING" if "STRING" in kinds else ""
    return rule


def _branches(e: exp.Case | exp.If, columns: Mapping[str, Known]) -> Known:
    if isinstance(e, exp.Case):
        results = [i.args["true"] for i in e.args["ifs"]] + ([e.args["default"]] if e.args.get("default") is not None else [None])
    else:
        results = [e.args["true"], e.args.get("false")]
    if any(r is None for r in results):
        return (_same(infer(r, columns)[0] for r in results if r is not None), False)
    parts = [infer(r, columns) for r in results if r is not None]
    return (_same(t for t, _ in parts), all(n for _, n in parts))


def _same(kinds: object) -> str:
    found = set(kinds)  # type: ignore[call-overload]
    return found.pop() if len(found) == 1 else ""


def _arithmetic(op: type, a: str, b: str) -> str:
    """The Flink type of ``a <op> b``: of integers the wider (``%`` the divisor's), a DOUBLE with a DOUBLE, a FLOAT
    with a FLOAT and an integer (a DOUBLE with a DECIMAL), of DECIMALs (an integer as its DECIMAL) Flink's rules for
    the precision and scale (as Spark's, the SQL Server/Hive rules), 38 digits at most."""
    if a in _INTEGERS and b in _INTEGERS:
        return _result("divisor", [a, b]) if op is exp.Mod else max(a, b, key=_INTEGERS.index)
    kinds = {a, b}
    if not all(k in _INTEGERS or k in ("DOUBLE", "FLOAT") or k.startswith("DECIMAL(") for k in kinds):
        return ""
    if "DOUBLE" in kinds or ("FLOAT" in kinds and any(k.startswith("DECIMAL(") for k in kinds)):
        return "DOUBLE"
    if "FLOAT" in kinds:
        return "FLOAT"
    # (an integer as the DECIMAL Flink takes it for: its type's digits, scale 0)
    left, right = ((DECIMAL_DIGITS[k.lower()], 0) if k in _INTEGERS else _digits(k) for k in (a, b))
    precision, scale = decimal_arithmetic(ARITHMETIC[op], left, right)
    return f"DECIMAL({precision}, {scale})"



def _digits(kind: str) -> tuple[int, int]:
    """``DECIMAL(p, s)``'s precision and scale (``funke.plan.types.decimal_digits`` of Spark's spelling)."""
    digits = decimal_digits(kind.lower())
    assert digits is not None, kind
    return digits


def _concatenated(a: str, b: str) -> str:
    """The Flink type of ``a || b``: STRING of a STRING and a string, ``CHAR(m + n)`` of two CHARs."""
    if a.startswith("CHAR(") and b.startswith("CHAR("):
        return f"CHAR({int(a[5:-1]) + int(b[5:-1])})"
    stringy = all(k == "STRING" or k.startswith(("CHAR(", "VARCHAR(")) for k in (a, b))
    return "STRING" if stringy and "STRING" in (a, b) else ""


def _literal(e: exp.Literal | exp.Boolean) -> str:
    """A literal's Flink type: ``CHAR(n)`` of a string (n in UTF-16 units), ``INT``, ``BIGINT``, ``DECIMAL(p, s)``, ``DOUBLE``."""
    if isinstance(e, exp.Boolean):
        return "BOOLEAN"
    if e.is_string:
        return f"CHAR({len(e.name.encode('utf-16-le')) // 2})"
    return flink_name(number_literal_type(e) or "double", summary=True)


def _cast_type(to: exp.DataType) -> str:
    """A CAST's target as Flink writes it (``VARCHAR`` without a length is a STRING there, ``CHAR`` a ``CHAR(1)``)."""
    if to.this == exp.DataType.Type.VARCHAR and not to.expressions:
        return "STRING"
    try:
        return flink_type(to)
    except KeyError:
        return ""


def values_columns(values: exp.Values) -> dict[str, Known]:
    """The columns of ``VALUES (...), (...) AS t(a, b)``: each its rows' common type, NOT NULL unless a row's may be NULL."""
    alias = values.args.get("alias")
    names = [c.name for c in alias.columns] if alias is not None else []
    rows = [list(t.expressions) if isinstance(t, exp.Tuple) else [t] for t in values.expressions]
    out: dict[str, Known] = {}
    for i, name in enumerate(names):
        parts = [infer(r[i], {}) if i < len(r) else UNKNOWN for r in rows]
        out[name] = (_common([t for t, _ in parts]), all(n for _, n in parts))
    return out


def _common(kinds: list[str]) -> str:
    """The type of one column over rows of ``kinds``: strings' ``CHAR(n)`` of one length, else ``VARCHAR(longest)``;
    integers' widest; DECIMALs' with the most digits before and after the point; ``""`` for anything else."""
    if kinds and all(k.startswith("CHAR(") for k in kinds):
        lengths = {int(k[5:-1]) for k in kinds}
        return kinds[0] if len(lengths) == 1 else f"VARCHAR({max(lengths)})"
    if kinds and all(k in _INTEGERS for k in kinds):
        return max(kinds, key=_INTEGERS.index)
    if kinds and all(k.startswith("DECIMAL(") for k in kinds):
        precision, scale = widest_decimal([_digits(k) for k in kinds])
        return f"DECIMAL({precision}, {scale})"
    return _same(kinds)


def union_columns(
    left: Mapping[str, Known], right: Mapping[str, Known], names: list[str], right_names: list[str]
) -> dict[str, Known]:
    """A UNION's columns (named by its first query): a type both queries give, NOT NULL where both are."""
    out: dict[str, Known] = {}
    for name, other in zip(names, right_names, strict=False):
        (a, a_null), (b, b_null) = left.get(name, UNKNOWN), right.get(other, UNKNOWN)
        if a_null and b_null or (a and a == b):
            out[name] = (a if a == b else "", a_null and b_null)
    return out


def join_columns(relations: list[tuple[str, Mapping[str, Known], bool]]) -> dict[str, Known]:
    """The columns a join's SELECT reads: each relation's (its alias, its columns, whether an outer join may
    give it as NULLs) as ``"alias.c"``, and as ``"c"`` where one relation alone has a ``c``."""
    out: dict[str, Known] = {}
    owners: dict[str, int] = {}
    for alias, columns, padded in relations:
        for name, (kind, never) in columns.items():
            out[f"{alias}.{name}"] = (kind, never and not padded)
            owners[name] = owners.get(name, 0) + 1
    for alias, columns, _ in relations:
        out.update({name: out[f"{alias}.{name}"] for name in columns if owners[name] == 1})
    return out


def plainly_grouped(select: exp.Select) -> bool:
    """Whether ``select`` has a GROUP BY of columns or expressions (no ROLLUP, CUBE or GROUPING SETS: their
    groups may leave a key out)."""
    group = select.args.get("group")
    return (
        group is not None
        and bool(group.expressions)
        and not any(isinstance(g, (exp.Rollup, exp.Cube, exp.GroupingSets)) for g in group.expressions)
    )
