"""Flink's JSON functions in Spark SQL: JSON_VALUE, JSON_QUERY, JSON_EXISTS, IS JSON, JSON_STRING, JSON_OBJECT,
JSON_ARRAY, JSON_QUOTE and JSON_UNQUOTE, each with Flink's meaning (its paths, modes, ON EMPTY / ON ERROR clauses and
number texts) over Spark's variant (``try_parse_json``), as rewrites of the call's arguments
(``funke.dialect.functions`` names them in its table of built-in functions).
"""

from __future__ import annotations

import re

from sqlglot import exp

from funke.dialect.rewrites import call, fill
from funke.errors import PlanError, UnsupportedError
from funke.semantics.java_text import java_order

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


#: JSON_VALUE's RETURNING types as Flink 2.3 runs them (its planner refuses the others: "Unsupported type 'BIGINT' for
#: RETURNING in JSON_VALUE()"), each Spark's type and when a number's text ``n`` is one (Flink's JSON provider reads
#: an integer as an Integer, or a Long past that, a number with a fraction or an exponent as a BigDecimal; a value
#: of another kind fails the job in Flink, whatever the ON ERROR clause: a ClassCastException).
_JV_RETURNING = {
    "STRING": ("string", None),
    "INT": ("int", "n RLIKE '^-?[0-9]+$' AND TRY_CAST(n AS INT) IS NOT NULL"),
    "DOUBLE": ("double", "n RLIKE '[.eE]'"),
    "BOOLEAN": ("boolean", None),
}
#: JSON_VALUE's RETURNING types funke takes, each as its Spark type (the planner's type of the call).
JSON_VALUE_TYPES = {returning: spark for returning, (spark, _) in _JV_RETURNING.items()}
#: The Spark types a DEFAULT of each RETURNING type may have (Flink casts a number to a STRING, and fails the job on
#: an INT for a DOUBLE: its ClassCastException).
_JV_DEFAULTS = {
    "string": r"string|varchar\(\d+\)|char\(\d+\)|tinyint|smallint|int|bigint|decimal\(\d+, ?\d+\)|double",
    "int": "tinyint|smallint|int",
    "double": r"float|double|decimal\(\d+, ?\d+\)",
    "boolean": "boolean",
}


def json_value(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``JSON_VALUE(s, path [RETURNING STRING | INT | DOUBLE | BOOLEAN] [{NULL | ERROR | DEFAULT x} ON EMPTY]
    [... ON ERROR])``: the scalar the path leads to, a number's text as Flink writes it (``2.0``, ``1.50``, ``1E+3``).
    A text that is no JSON, a path that leads nowhere, to JSON null, an object or an array gives the ON ERROR choice
    in strict mode (Flink's default) and the ON EMPTY one in lax mode (both NULL when not written; ERROR fails the
    job). Returning INT, DOUBLE or BOOLEAN, a scalar of another kind (``"3"`` for an INT, ``3`` for a DOUBLE) fails
    the job, as in Flink."""
    if len(args) < 2:
        raise PlanError("Flink SQL: JSON_VALUE takes a text, a path and its clauses")
    returning, on, defaults = "STRING", {"EMPTY": "NULL", "ERROR": "NULL"}, {}
    rest = list(args[2:])
    while rest:
        clause = rest.pop(0)
        if not isinstance(clause, exp.Var):
            raise PlanError(f"Flink SQL: JSON_VALUE takes a text, a path and its clauses, not {clause.sql()}")
        if clause.name.startswith("RETURNING "):
            returning = clause.name.removeprefix("RETURNING ")
            continue
        choice, which = clause.name.split(" ON ")
        on[which] = choice
        if choice == "DEFAULT":
            defaults[which] = (len(args) - len(rest), rest.pop(0))
    if returning not in _JV_RETURNING:
        why = (
            "Flink 2.3 cuts the value where it is printed but not where it is used (CHAR_LENGTH sees it whole)"
            if returning.startswith("VARCHAR(") else 'Flink refuses this type too ("Unsupported type for RETURNING in JSON_VALUE()")'
        )
        raise UnsupportedError(
            f"Flink SQL: JSON_VALUE(... RETURNING {returning}) is not supported by funke: {why}; it returns STRING (a VARCHAR of "
            "no length), INT, DOUBLE or BOOLEAN: CAST the STRING it returns"
        )
    spark_type, number = _JV_RETURNING[returning]
    misfits = {}  # (a DEFAULT of another type fails the job where it is used, as Flink's ClassCastException does)
    for which, (i, value) in defaults.items():
        kind = types[i] if i < len(types) else None
        if kind is not None and kind != "void" and not re.fullmatch(_JV_DEFAULTS[spark_type], kind):
            misfits[which] = exp.Literal.string(f"JSON_VALUE: the DEFAULT {value.sql()} ON {which} is a {kind}, where it returns {returning}")
    mode, path = _json_path("JSON_VALUE", args[1])
    behaviour = {
        "NULL": f"CAST(NULL AS {spark_type})",
        "ERROR": {
            "EMPTY": "RAISE_ERROR('JSON_VALUE: Empty result of JSON_VALUE function is not allowed')",
            "ERROR": "RAISE_ERROR(CONCAT('JSON_VALUE: no scalar JSON value at ', {1}, ' in ', {0}))",
        },
    }
    which = "EMPTY" if mode == "lax" else "ERROR"
    if on[which] == "DEFAULT":  # (its value, or the message of a misfit, is the argument {3})
        problem = "RAISE_ERROR({3})" if which in misfits else f"CAST({{3}} AS {spark_type})"
    else:
        problem = behaviour["NULL"] if on[which] == "NULL" else behaviour["ERROR"][which]
    wrong = f"RAISE_ERROR(CONCAT('JSON_VALUE: the value at ', {{1}}, ' is no {returning}, in ', {{0}}))"
    text = "VARIANT_GET(v, '$', 'string')"
    if spark_type == "string":
        scalar = f"IF(STARTSWITH(t, CHR(127)), ELEMENT_AT(TRANSFORM(ARRAY(SUBSTRING(t, 2)), n -> {_JQ_NUMBER}), 1), t)"
        found = f"ELEMENT_AT(TRANSFORM(ARRAY({text}), t -> {scalar}), 1)"
    elif spark_type == "boolean":
        found = f"IF(SCHEMA_OF_VARIANT(v) = 'BOOLEAN', VARIANT_GET(v, '$', 'boolean'), {wrong})"
    else:
        # (a number is a marked string: DEL and its text)
        read = f"ELEMENT_AT(TRANSFORM(ARRAY(SUBSTRING(t, 2)), n -> IF({number}, CAST(n AS {spark_type}), {wrong})), 1)"
        found = f"IF(SCHEMA_OF_VARIANT(v) = 'STRING', ELEMENT_AT(TRANSFORM(ARRAY({text}), t -> IF(STARTSWITH(t, CHR(127)), {read}, {wrong})), 1), {wrong})"
    parsed = (
        f"ELEMENT_AT(TRANSFORM(ARRAY(TRY_VARIANT_GET(TRY_PARSE_JSON({_JQ_MARKED}), {{2}})), v -> CASE "
        f"WHEN v IS NULL OR IS_VARIANT_NULL(v) OR SCHEMA_OF_VARIANT(v) RLIKE '^(OBJECT|ARRAY)' THEN {problem} ELSE {found} END), 1)"
    )
    fallback = misfits.get(which) or next((value for w, (_, value) in defaults.items() if w == which), exp.Null())
    return fill(f"CAST(({_json_case('JSON_VALUE', problem, parsed)}) AS {spark_type})", [args[0], args[1], exp.Literal.string(path), fallback])


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
