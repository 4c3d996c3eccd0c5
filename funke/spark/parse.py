"""Text records (a JSON or CSV line, a Kafka value) parsed to the declared schema on the JVM.

Spark's ``from_json``/``from_csv`` in PERMISSIVE mode put a record that does not parse, or
has a value of the wrong type, whole into the corrupt-record column; funke sends those to
the dead letters. Parsing an expression rather than scanning with Spark's JSON/CSV file
reader matters twice over: the parse is the same whatever columns the query later reads
(the file reader checks only the columns a query keeps, so one query would keep a record
another calls corrupt), and no query is refused for reading only the corrupt-record column
(``QUERY_ONLY_CORRUPT_RECORD_COLUMN``). With options given, Spark never prunes the parse's
schema (``OptimizeCsvJsonExprs`` leaves a parse with options alone), so every declared
field is checked in every query.

Flink's JSON format reads some values Spark's parser calls corrupt (its ``JsonParserToRowDataConverters``): a
number for an INT or BIGINT, truncated (``2.9`` is 2); a number's text in a string (``"3"``, ``" 4 "``) for any number
type; any value for a BOOLEAN (true only for ``true`` or the text ``"true"``, any case). A record Spark's parse calls
corrupt is read again by those rules (:func:`flink_json`), so funke keeps the rows Flink keeps. With Flink's
``json.ignore-parse-errors`` a value that fits no rule is NULL and its row kept, as in Flink; a record that is no JSON
object goes to the dead letters (Flink skips it).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from funke.plan.types import Schema, struct_fields

#: Columns a source frame may carry for its dead letters: the raw record, why it is bad, where it was.
CORRUPT, REASON, POSITION = "_funke_corrupt_record", "_funke_reason", "_funke_position"
PARSED = "_funke_parsed"
_STRICT = "_funke_parsed_by_spark"


def with_parsed(
    frame: DataFrame, text: Column, fmt: str, declared: Schema, options: dict[str, Any] | None = None, *, ignore_errors: bool = False,
    fail_on_missing: bool = False,
) -> DataFrame:  # fmt: skip
    """``frame`` with ``PARSED``: ``text`` parsed as ``fmt`` (json or csv) to ``declared`` plus ``CORRUPT``; a JSON
    record Spark calls corrupt read again by Flink's rules (``ignore_errors``: ``json.ignore-parse-errors``); with
    ``fail_on_missing`` (``json.fail-on-missing-field``) a JSON object without a field of ``declared`` is corrupt."""
    if fmt != "json":
        return with_flink_csv(frame, text, declared, options or {}, ignore_errors=ignore_errors)
    ddl = f"{declared.ddl()}, `{CORRUPT}` string"
    opts = {**(options or {}), "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    # Spark's parse in a column of its own, so that the choice below reads it rather than parsing twice
    frame = frame.withColumn(_STRICT, F.from_json(text, ddl, opts))
    parsed = _by_flink_where_spark_fails(F.col(_STRICT), text, declared, opts, ignore_errors)
    if fail_on_missing:
        parsed = parsed.withField(CORRUPT, F.coalesce(parsed[CORRUPT], F.when(lacks_a_field(text, declared), text)))
    return frame.withColumn(PARSED, parsed).drop(_STRICT)


def missing_field_reason(fail_on_missing: bool) -> str:
    """What a dead letter's reason adds where a missing field makes a record corrupt (``json.fail-on-missing-field``)."""
    return " or a field missing (json.fail-on-missing-field)" if fail_on_missing else ""


def lacks_a_field(text: Column, declared: Schema) -> Column:
    """Whether the JSON object ``text`` lacks a field of ``declared``, or a nested ROW's object one of its fields, as
    Flink's JSON reader with ``json.fail-on-missing-field`` checks (a field whose value is null is there)."""

    def lacks(obj: Column, fields: dict[str, str]) -> Column:
        keys, out = F.json_object_keys(obj), F.lit(False)  # (no keys: null or no object, which the parse judges)
        for name, dtype in fields.items():
            out = out | ~F.coalesce(F.array_contains(keys, name), F.lit(True))
            if struct_fields(dtype):
                out = out | lacks(F.get_json_object(obj, "$['" + name + "']"), struct_fields(dtype))
        return out

    return lacks(text, {f.name: f.dtype or "string" for f in declared})


def parsed_json(text: Column, declared: Schema, *, ignore_errors: bool = False) -> Column:
    """``text`` parsed as JSON to ``declared`` plus ``CORRUPT``, as ``with_parsed`` parses it, in one expression: for
    values inside an array (a lambda of Spark's ``transform`` reads no column of a frame of its own)."""
    opts = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    return _by_flink_where_spark_fails(F.from_json(text, f"{declared.ddl()}, `{CORRUPT}` string", opts), text, declared, opts, ignore_errors)


def _by_flink_where_spark_fails(record: Column, text: Column, declared: Schema, opts: dict[str, Any], ignore_errors: bool) -> Column:
    """Spark's parse ``record`` of ``text`` where it read it, else ``text`` read again by Flink's rules."""
    parsed = record.isNotNull() & record[CORRUPT].isNull()
    return F.when(parsed | text.isNull(), record).otherwise(flink_json(text, declared, opts, ignore_errors))


def parsed_columns(declared: Schema) -> list[Column]:
    """The declared fields out of ``PARSED``."""
    return [F.col(f"{PARSED}.`{f.name}`").alias(f.name) for f in declared]


def corrupt_text(fmt: str, text: Column, present: Column) -> Column:
    """The raw record where it is bad (null where it parsed); ``present``: the row has a record at all."""
    corrupt = F.col(f"{PARSED}.`{CORRUPT}`")
    if fmt == "json":  # a JSON value that is not an object (a number, an array) parses to no struct at all
        corrupt = F.when(F.col(PARSED).isNull() & present & text.isNotNull(), text).otherwise(corrupt)
    return corrupt


#: What Java's ``Integer.parseInt`` and ``Long.parseLong`` read (ASCII digits), ``Double.parseDouble`` (but hex), ``new BigDecimal``.
_INTEGER = r"^[+-]?[0-9]+$"
_FLOATING = r"^[+-]?(NaN|Infinity|([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)$"
_DECIMAL = r"^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$"
_NUMBER = r"^(BIGINT|DECIMAL|DOUBLE)"
_INTEGRAL, _SHORT, _REAL = ("int", "bigint"), ("smallint", "tinyint"), ("double", "float")


def flink_json(text: Column, declared: Schema, options: dict[str, Any], ignore_errors: bool) -> Column:
    """``text`` parsed to ``declared`` plus ``CORRUPT`` by the rules of Flink's JSON format: a top-level number or
    BOOLEAN column as Flink converts the value (through Spark's variant, which tells a number from a string), any other
    column by Spark's parse of it alone. A value that fits no rule makes the record corrupt, or (``ignore_errors``) is NULL."""
    record = F.try_parse_json(text)
    values, fits = [], []
    if not ignore_errors:  # the other columns by one parse of the record, the number and BOOLEAN ones read as text there
        relaxed = ", ".join(f"`{f.name}` {'string' if _by_rule(f.dtype) else f.dtype or 'string'}" for f in declared)
        others = F.from_json(text, f"{relaxed}, `{CORRUPT}` string", options)
    for f in declared:
        dtype = f.dtype or "string"
        value = F.try_variant_get(record, _path(f.name), "variant")
        kind = F.schema_of_variant(value)
        if _by_rule(dtype) and dtype != "boolean":
            converted, fit = _number(value, kind, dtype)
        elif dtype == "boolean":  # Java's Boolean.parseBoolean of the value's text: false but for "true"
            string = F.lower(_trimmed(value))
            converted = F.when(kind == "BOOLEAN", F.try_variant_get(value, "$", "boolean")).otherwise(F.coalesce(string == "true", F.lit(False)))
            fit = F.lit(True)
        elif not ignore_errors:
            converted, fit = others[f.name], others[CORRUPT].isNull()
        else:  # each column alone, so that one it cannot read is NULL and the others are kept
            alone = F.from_json(text, f"`{f.name}` {dtype}, `{CORRUPT}` string", options)
            converted, fit = alone[f.name], alone[CORRUPT].isNull()
        fit = value.isNull() | (kind == "VOID") | fit
        values.append(F.when(fit & (kind != "VOID"), converted).cast(dtype).alias(f.name))
        fits.append(fit)
    good = record.isNotNull() & F.schema_of_variant(record).startswith("OBJECT")
    if not ignore_errors:
        for fit in fits:
            good = good & fit
    return F.struct(*values, F.when(~good, text).alias(CORRUPT))


def _by_rule(dtype: str | None) -> bool:
    """Whether a column of ``dtype`` is read by Flink's rules here (else by Spark's parse)."""
    return dtype is not None and (dtype in _INTEGRAL + _SHORT + _REAL + ("boolean",) or dtype.startswith("decimal("))


def _number(value: Column, kind: Column, dtype: str) -> tuple[Column, Column]:
    """A number column's value by Flink's rule, and whether it fits: a JSON number converted (an INT's or BIGINT's
    truncated, as Jackson's ``getIntValue``; a SMALLINT's or TINYINT's only from an integer, as ``Short.parseShort`` of
    its text), or a string's trimmed text parsed as Java parses it. A DECIMAL too wide for its precision is NULL in
    Flink, not an error."""
    number = (kind == "BIGINT") if dtype in _SHORT else kind.rlike(_NUMBER)
    from_text, reads = _number_text(_trimmed(value), dtype)
    converted = F.when(number, F.try_variant_get(value, "$", dtype)).when(kind == "STRING", from_text)
    fit = (number | ((kind == "STRING") & reads)) if dtype.startswith("decimal(") else converted.isNotNull()
    return converted, fit


def _number_text(text: Column, dtype: str) -> tuple[Column, Column]:
    """``text`` parsed to the number type ``dtype`` as Java parses it (``Integer.parseInt``, ``Double.parseDouble``,
    ``new BigDecimal``), NULL where it does not read, and whether it reads (a DECIMAL too wide for its precision reads,
    as NULL, as in Flink; an integer out of its type's range does not)."""
    pattern = _INTEGER if dtype in _INTEGRAL + _SHORT else _FLOATING if dtype in _REAL else _DECIMAL
    readable = text.rlike(pattern)
    converted = F.when(readable, (F.regexp_replace(text, "[fFdD]$", "") if dtype in _REAL else text).try_cast(dtype))
    return converted, readable if dtype.startswith("decimal(") else converted.isNotNull()


def _java_trim(text: Column) -> Column:
    return F.btrim(text, F.lit(_JAVA_SPACE))


def _trimmed(value: Column) -> Column:
    """A JSON value's text (a variant's), trimmed as Java trims it."""
    return _java_trim(F.try_variant_get(value, "$", "string"))


#: What Java's ``String.trim()`` cuts: every character up to the space.
_JAVA_SPACE = "".join(map(chr, range(0x21)))


#: Spark's CSV null value in funke's parse: a text no field holds, so that an empty field is one (Flink has no NULL in csv).
_NO_NULL = "\u0000funke: no null\u0000"
_EXTRA = "_funke_extra_field"


def with_flink_csv(frame: DataFrame, text: Column, declared: Schema, options: dict[str, Any], *, ignore_errors: bool = False) -> DataFrame:
    """``frame`` with ``PARSED``: the CSV line ``text`` parsed to ``declared`` plus ``CORRUPT`` by the rules of Flink's csv format (Jackson's CSV
    parser and ``CsvToRowDataConverters``), which has no NULL: an empty field is '' for a STRING, FALSE for a BOOLEAN,
    and fails a number, a DATE or a TIMESTAMP; a number's text is trimmed (Java's ``String.trim``) but a DECIMAL's; a
    BOOLEAN is true for the text ``true`` alone (any case, trimmed); a quote in a quoted field is written twice; a line
    with more or fewer fields than ``declared`` fails, and so does one with a quoted field left open (Flink reads a
    quoted line break; funke reads a line at a time, so such a record is two dead letters). With ``ignore_errors``
    (Flink's ``csv.ignore-parse-errors``) a value that fails is NULL, and so is a field a short line lacks; a line with
    too many fields, which Flink skips, and one with a quoted field left open are corrupt.

    Spark's ``from_csv`` reads an unquoted empty field as NULL whatever its type, so each is written ``""`` first
    (which Spark reads as '', given a null value no field holds); the number and BOOLEAN columns are read as text and
    converted by Java's rules. ``options``: Spark's CSV options (``sep``, ``quote``, ``escape``, a ``nullValue`` of
    the user's own)."""
    named = {k.lower(): v for k, v in options.items()}
    delimiter, quote = named.get("sep", named.get("delimiter", ",")), named.get("quote", '"')
    sep, q, doubled = re.escape(delimiter), re.escape(quote), named.get("escape", quote) == quote  # (doubled: RFC 4180's quote in a field)
    empty_field = f"(?<=^|{sep})(?={sep}|$)(?=(?:[^{q}]*{q}[^{q}]*{q})*[^{q}]*$)"  # (an even number of quotes after it: outside quotes)
    relaxed = ", ".join(f"`{f.name}` {'string' if _by_rule(f.dtype) else f.dtype or 'string'}" for f in declared)
    # (with ignore_errors a field past the declared ones tells a line with too many fields from one that fails otherwise)
    extra = f", `{_EXTRA}` string" if ignore_errors else ""
    opts = {"nullValue": _NO_NULL, "escape": quote, **options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    # (the regular expressions only where they can match: a line without an empty field or a quote skips each)
    has_empty = (text == "") | text.startswith(delimiter) | text.endswith(delimiter) | text.contains(delimiter * 2)
    fields = F.when(has_empty, F.regexp_replace(text, empty_field, quote * 2)).otherwise(text)
    # Spark's parse in a column of its own, read below by every field (in one expression Spark would parse once a field)
    frame = frame.withColumn(_STRICT, F.from_csv(fields, f"{relaxed}{extra}, `{CORRUPT}` string", opts))
    record = F.col(_STRICT)
    # a quoted field left open (a line break in it, which funke's reading line by line splits) fails, where Spark reads on
    balanced = F.length(F.regexp_replace(text, f"[^{q}]", "")) % 2 == 0
    good = ~text.contains(quote) | balanced if doubled else F.lit(True)
    good = good & (record[_EXTRA].isNull() if ignore_errors else record[CORRUPT].isNull())
    values = []
    for f in declared:
        dtype, value = f.dtype or "string", record[f.name]
        if dtype == "boolean":  # (Java's Boolean.parseBoolean)
            value = F.when(value.isNotNull(), F.coalesce(F.lower(_java_trim(value)) == "true", F.lit(False)))
        elif _by_rule(dtype):
            value, reads = _number_text(value if dtype.startswith("decimal(") else _java_trim(value), dtype)
            good = good if ignore_errors else good & reads
        values.append(value.cast(dtype).alias(f.name))
    parsed = F.when(text.isNotNull(), F.struct(*values, F.when(~good, text).alias(CORRUPT)))
    return frame.withColumn(PARSED, parsed).drop(_STRICT)


def _path(name: str) -> str:
    """The variant path of a top-level field."""
    return "$[" + json.dumps(name) + "]"
