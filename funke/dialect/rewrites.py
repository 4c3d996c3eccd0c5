"""The Spark SQL that gives a Flink built-in function its meaning where Spark's own differs: templates over the
call's arguments (``fill``) and rewrites given as functions of them, which ``funke.dialect.functions``'s table
of built-in functions names.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark

from funke.errors import PlanError, UnsupportedError
from funke.plan.types import integer_range
from funke.semantics.java_text import java_order

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


def json_value(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    path = args[1]
    if not (isinstance(path, exp.Literal) and path.is_string and path.name.startswith("$")):
        raise PlanError(
            f"Flink SQL: JSON_VALUE({', '.join(a.sql() for a in args)}): funke's JSON_VALUE takes a '$...' path literal"
        )
    found = call("TRY_VARIANT_GET", call("TRY_PARSE_JSON", args[0]), path)
    scalar = exp.Not(
        this=exp.RegexpLike(this=call("SCHEMA_OF_VARIANT", found), expression=exp.Literal.string("^(OBJECT|ARRAY)"))
    )
    as_text = call("TRY_VARIANT_GET", found.copy(), exp.Literal.string("$"), exp.Literal.string("string"))
    return exp.Case(ifs=[exp.If(this=scalar, true=as_text)])


#: A JSON path funke gives Flink's meaning: an optional mode, then ``$`` and steps ``.key``, ``['key']`` and ``[n]``
#: (Flink's paths are Jayway JsonPath's; Spark's variant paths have these steps, no wildcards, filters or
#: negative indexes).
_JSON_PATH = re.compile(r"(?:\s*(lax|strict)\s+)?(\$(?:\.[^\W\d]\w*|\['[^'\\]*'\]|\[\"[^\"\\]*\"\]|\[\d+\])*)", re.IGNORECASE)
_ON_ERROR = ("TRUE ON ERROR", "FALSE ON ERROR", "UNKNOWN ON ERROR", "ERROR ON ERROR")


def _json_path(function: str, path: exp.Expression) -> tuple[str, str]:
    """A path literal's mode (``lax``, or Flink's default ``strict``) and its steps as Spark's variant path."""
    found = _JSON_PATH.fullmatch(path.name) if isinstance(path, exp.Literal) and path.is_string else None
    if found is None:
        raise PlanError(
            f"Flink SQL: {function}(..., {path.sql()}): funke takes a path literal of `$` and `.key`, `['key']` and `[n]` steps "
            "(with `lax` or `strict` before it); not a wildcard, a `..` scan, a filter or a negative index"
        )
    return (found.group(1) or "strict").lower(), found.group(2)


def json_exists(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``JSON_EXISTS(s, path [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR])``: whether the path leads to a
    value that is not JSON null. In lax mode anything else is FALSE; in strict mode (Flink's default, no mode
    written) a path that leads nowhere or to a JSON null is an error, as is a text that is no JSON, and ON ERROR
    gives the result (FALSE when not written)."""
    on_error = args[2].name.upper() if len(args) == 3 and isinstance(args[2], exp.Var) else "FALSE ON ERROR"
    if on_error not in _ON_ERROR or (len(args) == 3 and not isinstance(args[2], exp.Var)):
        raise PlanError(f"Flink SQL: JSON_EXISTS takes a text, a path and an ON ERROR clause, not {args[2].sql()}")
    mode, path = _json_path("JSON_EXISTS", args[1])
    error = {
        "TRUE ON ERROR": "TRUE", "FALSE ON ERROR": "FALSE", "UNKNOWN ON ERROR": "CAST(NULL AS BOOLEAN)",
        "ERROR ON ERROR": "RAISE_ERROR(CONCAT('JSON_EXISTS: no value at ', {1}, ' in ', {0}))",
    }[on_error]  # fmt: skip
    found = "TRY_VARIANT_GET(TRY_PARSE_JSON({0}), {2}) IS NOT NULL AND NOT IS_VARIANT_NULL(TRY_VARIANT_GET(TRY_PARSE_JSON({0}), {2}))"
    error = "FALSE" if mode == "lax" else error
    return fill(
        f"CASE WHEN {{0}} IS NULL THEN NULL WHEN TRY_PARSE_JSON({{0}}) IS NULL THEN {error} WHEN {found} THEN TRUE ELSE {error} END",
        [args[0], args[1], exp.Literal.string(path)],
    )


#: JSON_QUERY's number marking. Spark's variant keeps no number's text (``1.50`` is read as 1.5, ``1e3`` as
#: 1000.0), which Flink writes as Java's BigDecimal of it (``1.50``, ``1E+3``): every number outside a string
#: (strings are matched whole, so a number in one is left) becomes a string of DEL (U+007F) and its text, which
#: the variant keeps and ``to_json`` writes as it is. CHR(1) and CHR(2) mark a number's ends while the strings
#: are matched (a string leaves them empty, and they are dropped).
_JQ_MARKED = (
    "REPLACE(REPLACE(REPLACE(REGEXP_REPLACE({0}, CONCAT('(\"(?:[^\"', CHR(92), CHR(92), ']++|', CHR(92), CHR(92), "
    "'.)*+\")|(-?(?:0|[1-9][0-9]*)(?:[.][0-9]+)?(?:[eE][+-]?[0-9]+)?)'), CONCAT('$1', CHR(1), '$2', CHR(2))), "
    "CONCAT(CHR(1), CHR(2)), ''), CHR(1), CONCAT('\"', CHR(127))), CHR(2), '\"')"
)
#: A text a marked number could be confused with: DEL in it (as it is or escaped), or a marker character.
_JQ_UNMARKABLE = (
    "INSTR({0}, CHR(127)) > 0 OR INSTR({0}, CHR(1)) > 0 OR INSTR({0}, CHR(2)) > 0 "
    "OR INSTR(LOWER({0}), CONCAT(CHR(92), 'u007f')) > 0"
)
#: Java's ``BigDecimal.toString()`` of the number text ``n`` (Flink's Jackson reads a JSON number as one): the
#: digits without leading zeros, the scale (fraction digits less the exponent), plain for a scale from 0 and an
#: exponent from -6, else scientific (``1E+3``, ``1.0E-7``); zero has no sign.
_JQ_NUMBER = (
    "ELEMENT_AT(TRANSFORM(ARRAY(NAMED_STRUCT("
    "'d', REGEXP_REPLACE(CONCAT(REGEXP_EXTRACT(n, '^-?([0-9]+)', 1), REGEXP_EXTRACT(n, '[.]([0-9]+)', 1)), '^0+(?=[0-9])', ''), "
    "'s', LENGTH(REGEXP_EXTRACT(n, '[.]([0-9]+)', 1)) - CAST(COALESCE(NULLIF(REGEXP_EXTRACT(n, '[eE][+]?(-?[0-9]+)$', 1), ''), '0') AS BIGINT), "
    "'g', IF(STARTSWITH(n, '-'), '-', ''))), "
    "r -> CONCAT(IF(r.d = '0', '', r.g), CASE "
    "WHEN r.s = 0 THEN r.d "
    "WHEN r.s > 0 AND LENGTH(r.d) - 1 - r.s >= -6 THEN IF(LENGTH(r.d) > r.s, "
    "CONCAT(SUBSTRING(r.d, 1, LENGTH(r.d) - r.s), '.', SUBSTRING(r.d, LENGTH(r.d) - r.s + 1)), "
    "CONCAT('0.', REPEAT('0', r.s - LENGTH(r.d)), r.d)) "
    "ELSE CONCAT(SUBSTRING(r.d, 1, 1), IF(LENGTH(r.d) > 1, CONCAT('.', SUBSTRING(r.d, 2)), ''), 'E', "
    "IF(LENGTH(r.d) - 1 - r.s > 0, '+', ''), CAST(LENGTH(r.d) - 1 - r.s AS STRING)) END)), 1)"
)
#: The JSON text of the (marked) variant ``v`` as Flink writes it: ``to_json``'s (no whitespace, the keys sorted,
#: the last of a duplicate key, Jackson's escapes) with each marked number in its place.
_JQ_TEXT = (
    "ELEMENT_AT(TRANSFORM(ARRAY(TO_JSON(v)), j -> ARRAY_JOIN(TRANSFORM(SPLIT(j, CONCAT('\"', CHR(127), '[-+.0-9eE]*\"'), -1), "
    "(p, i) -> CONCAT(p, COALESCE(ELEMENT_AT(TRANSFORM(ARRAY(TRY_ELEMENT_AT(REGEXP_EXTRACT_ALL(j, CONCAT('\"', CHR(127), "
    f"'([-+.0-9eE]*)\"'), 1), i + 1)), n -> {_JQ_NUMBER}), 1), ''))), '')), 1)"
)
#: An element of JSON_QUERY's ``ARRAY<STRING>`` as Flink gives it: a string as it is, a number as Flink writes
#: it, JSON null as NULL, anything else its JSON text.
_JQ_ELEMENT = (
    "CASE WHEN IS_VARIANT_NULL(v) THEN NULL WHEN SCHEMA_OF_VARIANT(v) = 'STRING' THEN ELEMENT_AT(TRANSFORM("
    "ARRAY(VARIANT_GET(v, '$', 'string')), n -> IF(STARTSWITH(n, CHR(127)), ELEMENT_AT(TRANSFORM(ARRAY(SUBSTRING(n, 2)), "
    f"n -> {_JQ_NUMBER}), 1), n)), 1) ELSE {_JQ_TEXT} END"
)
_JQ_EMPTY = {"STRING": {"NULL": "CAST(NULL AS STRING)", "EMPTY ARRAY": "'[]'", "EMPTY OBJECT": "'{}'"},
             "ARRAY<STRING>": {"NULL": "CAST(NULL AS ARRAY<STRING>)", "EMPTY ARRAY": "CAST(ARRAY() AS ARRAY<STRING>)"}}  # fmt: skip


def json_query(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``JSON_QUERY(s, path [RETURNING STRING | ARRAY<STRING>] [wrapper] [... ON EMPTY] [... ON ERROR])``:
    the JSON text of the object or array the path leads to. An error (strict mode, Flink's default: a text that
    is no JSON, a path that leads nowhere or to JSON null, a scalar without a wrapper) gives the ON ERROR choice;
    lax mode has these empty, and gives the ON EMPTY choice (both NULL when not written). A conditional wrapper
    puts what is no array in one, an unconditional one everything. ``RETURNING ARRAY<STRING>`` gives the array's
    elements (a string as it is, any other value its JSON text)."""
    clauses = {c.name.split(" ON ")[-1] if " ON " in c.name else c.name.split()[0]: c.name for c in args[2:] if isinstance(c, exp.Var)}
    if len(args) < 2 or len(clauses) != len(args) - 2:
        raise PlanError("Flink SQL: JSON_QUERY takes a text, a path and its clauses")
    returning = clauses.get("RETURNING", "RETURNING STRING").removeprefix("RETURNING ")
    if returning not in _JQ_EMPTY:
        raise UnsupportedError(
            f"Flink SQL: JSON_QUERY(... RETURNING {returning}) is not supported by funke yet: funke's JSON_QUERY returns "
            "STRING (a VARCHAR of no length) or ARRAY<STRING>"
        )
    mode, path = _json_path("JSON_QUERY", args[1])
    wrapper = clauses.get("WITHOUT", clauses.get("WITH", "WITHOUT ARRAY WRAPPER"))
    failures = {
        "EMPTY": "RAISE_ERROR('JSON_QUERY: Empty result of JSON_QUERY function is not allowed')",
        "ERROR": "RAISE_ERROR(CONCAT('JSON_QUERY: no JSON value of the kind asked for at ', {1}, ' in ', {0}))",
    }
    on = {}
    for which in ("EMPTY", "ERROR"):
        choice = clauses.get(which, f"NULL ON {which}").removesuffix(f" ON {which}")
        if choice not in (*_JQ_EMPTY[returning], "ERROR"):
            raise PlanError(f"Flink SQL: JSON_QUERY(... {choice} ON {which}) is not allowed when returning {returning} (Flink refuses it too)")
        on[which] = failures[which] if choice == "ERROR" else _JQ_EMPTY[returning][choice]
    error = on["EMPTY"] if mode == "lax" else on["ERROR"]
    if returning == "STRING":
        text = _JQ_TEXT
        found = {
            "WITHOUT ARRAY WRAPPER": f"WHEN SCHEMA_OF_VARIANT(v) RLIKE '^(OBJECT|ARRAY)' THEN {text} ELSE {error}",
            "WITH CONDITIONAL ARRAY WRAPPER": f"WHEN SCHEMA_OF_VARIANT(v) LIKE 'ARRAY%' THEN {text} ELSE CONCAT('[', {text}, ']')",
            "WITH UNCONDITIONAL ARRAY WRAPPER": f"ELSE CONCAT('[', {text}, ']')",
        }[wrapper]
    else:
        elements = f"TRANSFORM(CAST(v AS ARRAY<VARIANT>), v -> {_JQ_ELEMENT})"
        found = {
            "WITHOUT ARRAY WRAPPER": (
                f"WHEN SCHEMA_OF_VARIANT(v) LIKE 'ARRAY%' THEN {elements} WHEN SCHEMA_OF_VARIANT(v) LIKE 'OBJECT%' THEN {on['ERROR']} ELSE {error}"
            ),
            "WITH CONDITIONAL ARRAY WRAPPER": f"WHEN SCHEMA_OF_VARIANT(v) LIKE 'ARRAY%' THEN {elements} ELSE ARRAY({_JQ_ELEMENT})",
            "WITH UNCONDITIONAL ARRAY WRAPPER": f"ELSE ARRAY({_JQ_ELEMENT})",
        }[wrapper]
    parsed = (
        f"ELEMENT_AT(TRANSFORM(ARRAY(TRY_VARIANT_GET(TRY_PARSE_JSON({_JQ_MARKED}), {{2}})), v -> CASE "
        f"WHEN v IS NULL OR IS_VARIANT_NULL(v) THEN {error} {found} END), 1)"
    )
    return fill(_json_case("JSON_QUERY", error, parsed), [args[0], args[1], exp.Literal.string(path)])


def _json_case(function: str, error: str, parsed: str) -> str:
    """A JSON function's Spark SQL over the text ``{0}``: NULL of NULL, ``error`` of a text that is no JSON, a failed
    job for one that funke's number marks could be confused with (``_JQ_UNMARKABLE``), else ``parsed`` (which
    reads the marked text)."""
    unmarkable = (
        f"RAISE_ERROR(CONCAT('{function}: funke does not read a JSON text with the character DEL (U+007F) or U+0001, "
        "U+0002 in it: ', {0}))"
    )
    return f"CASE WHEN {{0}} IS NULL THEN NULL WHEN TRY_PARSE_JSON({{0}}) IS NULL THEN {error} WHEN {_JQ_UNMARKABLE} THEN {unmarkable} ELSE {parsed} END"


def is_json(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``s IS JSON [VALUE | SCALAR | ARRAY | OBJECT]``: whether Jackson reads a JSON value at the start of
    ``s`` (what follows it is not read: ``'[1] x'`` is JSON), of that kind; FALSE for NULL. Spark's parser is
    Jackson too, and reads as much; what kind of value it is, its first character tells."""
    kind = args[1].name.upper()
    first = {"VALUE": None, "SCALAR": "NOT {0} RLIKE '^[ \\t\\n\\r]*[\\\\[{]'", "ARRAY": "{0} RLIKE '^[ \\t\\n\\r]*\\\\['", "OBJECT": "{0} RLIKE '^[ \\t\\n\\r]*[{]'"}[kind]
    test = "TRY_PARSE_JSON({0}) IS NOT NULL" + (f" AND {first}" if first else "")
    return fill(f"COALESCE({test}, FALSE)", args[:1])


def json_quote(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    r"""Flink's ``JSON_QUOTE(s)``: ``s`` in double quotes, with ``"``, ``\``, ``/`` and the short escapes (``\n``, ``\t``,
    ``\b``, ``\f``, ``\r``) escaped and every character past ASCII written ``\uxxxx``; other control characters
    stay as they are. Flink writes each UTF-16 unit as the code point that starts there: a character past U+FFFF
    is its code point's hex digits (``\u1f600``) and then its low surrogate's (``\ude00``)."""
    return fill(_JSON_QUOTE, args)


_JSON_QUOTE = (
    "CONCAT('\"', ARRAY_JOIN(TRANSFORM(REGEXP_EXTRACT_ALL({0}, '(?s).', 0), c -> CASE "
    "WHEN c = '\"' THEN '\\\\\"' WHEN c = '\\\\' THEN '\\\\\\\\' WHEN c = '/' THEN '\\\\/' WHEN c = '\\b' THEN '\\\\b' "
    "WHEN c = CHR(12) THEN '\\\\f' WHEN c = '\\n' THEN '\\\\n' WHEN c = '\\r' THEN '\\\\r' WHEN c = '\\t' THEN '\\\\t' "
    "WHEN ASCII(c) < 128 THEN c "
    "WHEN ASCII(c) < 65536 THEN CONCAT('\\\\u', LPAD(LOWER(HEX(ASCII(c))), 4, '0')) "
    "ELSE CONCAT('\\\\u', LOWER(HEX(ASCII(c))), '\\\\u', LOWER(HEX(56320 + ((ASCII(c) - 65536) & 1023)))) END), ''), '\"')"
)


def json_unquote(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    r"""Flink's ``JSON_UNQUOTE(s)``: a text that is JSON (as ``IS JSON``: Jackson reads a value at its start) and both
    starts and ends with ``"`` is what lies between them, unescaped (``'"a"b"'`` is ``a"b``); any other text is
    itself. The part between is unescaped as a JSON string with its bare ``"`` escaped."""
    return fill(_JSON_UNQUOTE, args)


_JSON_UNQUOTE = (
    "CASE WHEN CHAR_LENGTH({0}) >= 2 AND STARTSWITH({0}, '\"') AND ENDSWITH({0}, '\"') AND TRY_PARSE_JSON({0}) IS NOT NULL "
    "THEN COALESCE(TRY_VARIANT_GET(TRY_PARSE_JSON(CONCAT('\"', REGEXP_REPLACE(SUBSTRING({0}, 2, CHAR_LENGTH({0}) - 2), "
    "'(?<!\\\\\\\\)((?:\\\\\\\\\\\\\\\\)*)\"', '$1\\\\\\\\\"'), '\"')), '$', 'string'), {0}) ELSE {0} END"
)


#: The types (Spark's names) whose JSON text Spark's ``to_json`` writes as Flink writes it (both are Jackson's):
#: strings escaped alike, integers, booleans, a DECIMAL with its scale (``1.50``), bytes in base64.
_JSON_TEXT_TYPES = re.compile(r"string|varchar\(\d+\)|tinyint|smallint|int|bigint|boolean|binary|decimal\(\d+, ?\d+\)")


def json_text_type(kind: str) -> bool:
    """Whether funke writes the JSON text of a value of type ``kind`` (Spark's name) as Flink does."""
    return _JSON_TEXT_TYPES.fullmatch(kind) is not None


def json_string(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``JSON_STRING(x)``: ``x``'s JSON text, NULL for NULL; of the types Spark's ``to_json`` writes alike."""
    if args[0].meta.get("json_text"):  # (JSON_STRING(JSON_OBJECT(...)): Flink's is the JSON as it is)
        return args[0]
    if types[0] is not None and not json_text_type(types[0]):
        raise UnsupportedError(
            f"Flink SQL: JSON_STRING({args[0].sql()}) is not supported by funke yet: funke gives Flink's JSON text of a "
            f"STRING, an integer, a BOOLEAN, a DECIMAL or a BINARY value (this one is {types[0]}: CAST it to one); "
            "Flink writes a DOUBLE as a BigDecimal (`1.0E+20`), a TIMESTAMP in ISO form, a MAP with its keys in order"
        )
    return fill("CASE WHEN {0} IS NOT NULL THEN {1} END", [args[0], _checked_json_text("JSON_STRING", args[0], types[0])])


def json_raw(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``JSON(s)``, a value of JSON_OBJECT or JSON_ARRAY (``check_calls`` refuses it anywhere else): the
    JSON value ``s`` holds, inserted as JSON, written as Flink's Jackson writes it again (as JSON_QUERY's text:
    the keys sorted, the last of a duplicate key, each number as Java's BigDecimal writes it, what follows the
    first value not read); NULL for NULL; a text that is no JSON fails the job."""
    error = "RAISE_ERROR(CONCAT('JSON: no JSON value: ', {0}))"
    text = fill(_json_case("JSON", error, f"ELEMENT_AT(TRANSFORM(ARRAY(TRY_PARSE_JSON({_JQ_MARKED})), v -> {_JQ_TEXT}), 1)"), [args[0]])
    text.meta["json_text"] = True
    return text


#: ``{0}``'s JSON text as Spark's Jackson writes it (``null`` for NULL).
_JSON_TEXT = "SUBSTRING(TO_JSON(ARRAY({0})), 2, CHAR_LENGTH(TO_JSON(ARRAY({0}))) - 2)"
#: Spark's names (``typeof``) of the types in ``_JSON_TEXT_TYPES``, and of NULL's (``void``).
_JSON_TEXT_TYPEOF = "^(string|tinyint|smallint|int|bigint|boolean|binary|decimal\\\\(\\\\d+,\\\\d+\\\\)|void)$"


def _checked_json_text(function: str, value: exp.Expression, kind: str | None) -> exp.Expression:
    """``value``'s JSON text; where the planner does not know its type (``kind`` None), the job fails for a value
    of a type whose text Spark writes otherwise than Flink (Spark's ``typeof`` names it), not writing it wrong."""
    if kind is not None:
        return fill(_JSON_TEXT, [value])
    return fill(
        f"CASE WHEN TYPEOF({{0}}) RLIKE '{_JSON_TEXT_TYPEOF}' THEN {_JSON_TEXT} ELSE RAISE_ERROR(CONCAT("
        f"'{function}: funke writes the JSON of a STRING, an integer, a BOOLEAN, a DECIMAL or a BINARY value as Flink does, not of a ', "
        "TYPEOF({0}), ' (CAST it to one)')) END",
        [value],
    )


def _on_null(args: list[exp.Expression], default: str) -> tuple[list[exp.Expression], bool]:
    """The arguments before an ON NULL clause (the parser's last argument), and whether a NULL is left out."""
    if args and isinstance(args[-1], exp.Var):
        return args[:-1], args[-1].name.upper() == "ABSENT ON NULL"
    return args, default == "ABSENT"


def _json_member(function: str, value: exp.Expression, kind: str | None, absent: bool) -> exp.Expression:
    """A value of JSON_OBJECT or JSON_ARRAY as JSON text: another such call's text as it is (Flink inserts it as
    JSON), one of the types Spark's ``to_json`` writes as Flink does as that; NULL when left out."""
    if value.meta.get("json_text"):  # (JSON(s) may be NULL: then ``null``, or left out)
        return value if absent else call("COALESCE", value, exp.Literal.string("null"))
    if kind is not None and not json_text_type(kind):
        raise UnsupportedError(
            f"Flink SQL: {function} with the value {value.sql()} is not supported by funke yet: funke gives Flink's JSON "
            f"of a STRING, an integer, a BOOLEAN, a DECIMAL or a BINARY value, and of JSON_OBJECT and JSON_ARRAY (this one "
            f"is {kind}: CAST it to one); Flink writes a DOUBLE as a BigDecimal (`1.0E+20`), a TIMESTAMP in ISO form, "
            "`JSON(s)` with its numbers as written"
        )
    text = _checked_json_text(function, value, kind)
    return fill("CASE WHEN {0} IS NOT NULL THEN {1} END", [value, text]) if absent else text


def _json_text(open_: str, members: list[exp.Expression], close: str) -> exp.Expression:
    """The members' texts joined by commas (those NULL left out) between ``open_`` and ``close``, marked as JSON."""
    text = call("CONCAT", exp.Literal.string(open_), call("CONCAT_WS", exp.Literal.string(","), *members), exp.Literal.string(close))
    if not members:
        text = exp.Literal.string(open_ + close)
    text.meta["json_text"] = True  # (a value of an enclosing JSON_OBJECT or JSON_ARRAY: JSON, not a string)
    return text


def json_array(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``JSON_ARRAY(v, ... [NULL | ABSENT] ON NULL)``: the values' JSON text in order; a NULL is ``null``
    or, by default, left out."""
    values, absent = _on_null(args, "ABSENT")
    return _json_text("[", [_json_member("JSON_ARRAY", v, k, absent) for v, k in zip(values, types, strict=False)], "]")


def json_object(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``JSON_OBJECT(KEY k VALUE v, ... [NULL | ABSENT] ON NULL)``: Flink writes the members in the order
    of their keys (Java's order of strings: UTF-16 units), the last of a duplicate key winning; a NULL value is
    ``null`` (by default) or left out (and then a duplicate's last value that is not NULL wins). funke orders
    them while planning: the keys must be string literals."""
    pairs, absent = _on_null(args, "NULL")
    values: dict[str, exp.Expression] = {}
    for i in range(0, len(pairs), 2):
        key, value = pairs[i], pairs[i + 1]
        if not (isinstance(key, exp.Literal) and key.is_string):
            raise UnsupportedError(
                f"Flink SQL: JSON_OBJECT with the key {key.sql()} is not supported by funke yet: funke orders the members "
                "while planning, as Flink orders them, and takes string literals as keys"
            )
        text = _json_member("JSON_OBJECT", value, types[i + 1], absent)
        values[key.name] = call("COALESCE", text, values[key.name]) if absent and key.name in values else text
    members = [
        fill("CASE WHEN {1} IS NOT NULL THEN CONCAT(" + _JSON_TEXT + ", ':', {1}) END", [exp.Literal.string(k), values[k]])
        for k in sorted(values, key=java_order)
    ]
    return _json_text("{", members, "}")


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
