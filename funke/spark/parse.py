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

from funke.plan.types import Field, Schema, struct_fields

#: Columns a source frame may carry for its dead letters: the raw record, why it is bad, where it was.
CORRUPT, REASON, POSITION = "_funke_corrupt_record", "_funke_reason", "_funke_position"
PARSED = "_funke_parsed"
_STRICT = "_funke_parsed_by_spark"


def with_parsed(
    frame: DataFrame, text: Column, fmt: str, declared: Schema, options: dict[str, Any] | None = None, *, ignore_errors: bool = False,
    fail_on_missing: bool = False, timestamp_format: str | None = None, instants: tuple[str, ...] = (),
) -> DataFrame:  # fmt: skip
    """``frame`` with ``PARSED``: ``text`` parsed as ``fmt`` (json or csv) to ``declared`` plus ``CORRUPT``; a JSON
    record Spark calls corrupt read again by Flink's rules (``ignore_errors``: ``json.ignore-parse-errors``); with
    ``fail_on_missing`` (``json.fail-on-missing-field``) a JSON object without a field of ``declared`` is corrupt. With
    ``timestamp_format`` (``json.timestamp-format.standard``: SQL or ISO-8601) a DATE or TIMESTAMP column is read by
    Flink's JSON format's rules (``flink_time``), the ``instants`` as TIMESTAMP_LTZ; without it, by Spark's reader."""
    if fmt != "json":
        return with_flink_csv(frame, text, declared, options or {}, ignore_errors=ignore_errors)
    times = {} if timestamp_format is None else {
        f.name: "date" if f.dtype == "date" else "timestamp_ltz" if f.name in instants else "timestamp"
        for f in declared if f.dtype in ("date", "timestamp")
    }  # fmt: skip
    read = Schema(tuple(Field(f.name, "string") if f.name in times else f for f in declared))  # (their text, converted below)
    ddl = f"{read.ddl()}, `{CORRUPT}` string"
    opts = {**(options or {}), "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    # Spark's parse in a column of its own, so that the choice below reads it rather than parsing twice
    frame = frame.withColumn(_STRICT, F.from_json(text, ddl, opts))
    parsed = _by_flink_where_spark_fails(F.col(_STRICT), text, read, opts, ignore_errors)
    if fail_on_missing:
        parsed = parsed.withField(CORRUPT, F.coalesce(parsed[CORRUPT], F.when(lacks_a_field(text, declared), text)))
    frame = frame.withColumn(PARSED, parsed).drop(_STRICT)
    if not times:
        return frame
    # the texts' parts in columns of their own, read below (in one expression Spark would repeat the parse per part)
    standard, record = timestamp_format or "SQL", F.col(PARSED)
    parts = {name: f"_funke_time_{i}" for i, name in enumerate(times)}
    frame = frame.withColumns({parts[name]: time_parts(record[name], kind, standard) for name, kind in times.items()})
    # and their values so too: each is read twice below (the field, and whether the text failed to read)
    values = {name: f"_funke_time_value_{i}" for i, name in enumerate(times)}
    frame = frame.withColumns({values[name]: flink_time(F.col(parts[name]), kind, standard) for name, kind in times.items()})
    bad, converted = F.lit(False), record
    for name in times:
        value = F.col(values[name])
        bad = bad | (record[name].isNotNull() & value.isNull())
        converted = converted.withField(name, value)
    if not ignore_errors:  # (with ignore_errors a text that does not read is NULL, its row kept, as in Flink)
        converted = converted.withField(CORRUPT, F.coalesce(record[CORRUPT], F.when(bad, text)))
    return frame.withColumn(PARSED, converted).drop(*parts.values(), *values.values())


def time_parts(text: Column, kind: str, standard: str) -> Column:
    """The parts of a JSON value's ``text`` that Flink's JSON format reads as a ``kind`` (date, timestamp,
    timestamp_ltz) column, an array of texts (year, month, day; then hour, minute, second, fraction), NULL where the
    text is not of its form (Flink's ``TimeFormats``, java.time formatters; ``flink_time`` resolves them):

    - a DATE is ``yyyy-MM-dd`` (ISO_LOCAL_DATE);
    - SQL: a TIMESTAMP is ``yyyy-MM-dd HH:mm:ss`` with an optional point and 0 to 9 digits, a TIMESTAMP_LTZ that and
      ``Z``;
    - ISO-8601: ``T`` between date and time, the seconds optional (ISO_LOCAL_TIME), a TIMESTAMP_LTZ's ``Z`` after it.

    The text is not trimmed. (Spark's reader takes a number, a ``T`` or a space, a date alone, spaces around.)"""
    date = "([0-9]{4})-([0-9]{2})-([0-9]{2})"
    zone = "Z" if kind == "timestamp_ltz" else ""
    if kind == "date":
        pattern, groups = f"^{date}$", "$1,$2,$3"
    elif standard == "SQL":
        pattern, groups = f"^{date} ([0-9]{{2}}):([0-9]{{2}}):([0-9]{{2}})(?:[.]([0-9]{{0,9}}))?{zone}$", "$1,$2,$3,$4,$5,$6,$7"
    else:
        pattern, groups = f"^{date}T([0-9]{{2}}):([0-9]{{2}})(?::([0-9]{{2}})(?:[.]([0-9]{{0,9}}))?)?{zone}$", "$1,$2,$3,$4,$5,$6,$7"
    return F.when(text.rlike(pattern), F.split(F.regexp_replace(text, pattern, groups), ","))


def flink_time(parts: Column, kind: str, standard: str) -> Column:
    """The ``kind`` value of a text's ``parts`` (``time_parts``), as Flink's JSON format resolves them, NULL where its
    reader fails: a DATE a real day of its month; a TIMESTAMP by Java's SMART resolver in SQL (``2020-02-30 ...`` is
    Feb 29th, ``24:00:00`` the next day's midnight), by the STRICT one in ISO-8601 (ISO_LOCAL_DATE_TIME: no Feb 30th,
    no 24:00); a TIMESTAMP_LTZ by the SMART one in both. Digits past microseconds are cut (funke holds microseconds)."""
    part = lambda i: parts[i].cast("int")
    year, month, day, utc = part(0), part(1), part(2), F.lit("UTC")
    if kind == "date":
        return F.to_date(F.try_make_timestamp(year, month, day, F.lit(0), F.lit(0), F.lit(0), utc))
    hour, minute = part(3), part(4)
    second = F.coalesce(F.nullif(parts[5], F.lit("")), F.lit("0")).cast("int")
    fraction = parts[6]
    micros = F.concat(second.cast("string"), F.lit("."), F.rpad(F.substring(fraction, 1, 6), 6, "0")).cast("decimal(8,6)")
    if standard == "ISO-8601" and kind == "timestamp":
        return F.when((second <= 59) & (hour <= 23), F.try_make_timestamp(year, month, day, hour, minute, micros, utc))
    # SMART: a day past its month's end is its last day; 24:00:00 (nothing after it) the next day's start
    last = F.dayofmonth(F.last_day(F.to_date(F.try_make_timestamp(year, month, F.lit(1), F.lit(0), F.lit(0), F.lit(0), utc))))
    midnight = (hour == 24) & (minute == 0) & (second == 0) & ~fraction.rlike("[1-9]")
    start = F.try_make_timestamp(year, month, F.least(day, last), F.when(midnight, 0).otherwise(hour), minute, micros, utc)
    valid = day.between(1, 31) & (second <= 59) & ((hour <= 23) | midnight)
    return F.when(valid, F.when(midnight, start + F.expr("INTERVAL 1 DAY")).otherwise(start))


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
