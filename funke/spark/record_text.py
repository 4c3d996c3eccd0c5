"""A row's values as the text of a JSON record or a CSV line, written on the JVM: what funke's Kafka sink (Spark's
connector) and its csv file sink write, as ``funke.connectors.kafka_sink`` writes them in Python."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from funke.connectors.kafka_sink import csv_quoted
from funke.errors import SinkError

_ATOMIC = ("string", "int", "bigint", "smallint", "tinyint", "double", "float", "boolean", "date", "timestamp", "timestamp_ntz")


def value_text(df: DataFrame, name: str) -> Column:
    """A column's value as the text funke's Kafka and csv file sinks write (``kafka_sink.as_text``); null for null,
    NaN, ±inf."""
    dtype = df.schema[name].dataType.simpleString()
    c = F.col(f"`{name}`")
    if dtype in ("timestamp", "timestamp_ntz"):
        zone = df.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
        wall = F.to_utc_timestamp(c, zone) if dtype == "timestamp" and zone not in ("UTC", "Etc/UTC", "Z") else c
        # whole seconds (window bounds, mostly) without the regular expression that trims a fraction's zeros
        whole = F.unix_micros(c.cast("timestamp")) % 1_000_000 == 0
        fraction = F.regexp_replace(F.date_format(wall, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), "0+$", "")
        text = F.when(whole, F.date_format(wall, "yyyy-MM-dd'T'HH:mm:ss")).otherwise(fraction)
        return F.concat(text, F.lit("Z")) if dtype == "timestamp" else text
    if dtype in ("double", "float"):
        return F.when(~F.isnan(c) & (F.abs(c) != F.lit(float("inf"))), c.cast("string"))
    if dtype.startswith("decimal"):
        return decimal_text(c)
    if dtype in _ATOMIC or dtype.startswith("time("):
        return c.cast("string")
    raise SinkError(
        f"a Kafka record or a csv line holds text, numbers, booleans, dates and times, not column '{name}' of type {dtype}: "
        "turn it into a string column first (e.g. with to_json, or base64 for binary)"
    )


def decimal_text(c: Column) -> Column:
    """A DECIMAL's text as Flink's json and csv formats write it, Java's ``BigDecimal.stripTrailingZeros().toString()``
    (Jackson's number node): the fraction's trailing zeros cut, then scientific notation where the value has zeros
    before its point that are not its own digits or its first digit is more than 6 places after the point (``10.00``
    ``1E+1``, ``-12300`` ``-1.23E+4``, ``4.50`` ``4.5``, ``0.000001`` as it is, ``0.0000001`` ``1E-7``, ``0.00``
    ``0``). Python's ``Decimal.normalize()`` prints the same (``kafka_sink.decimal_texts``)."""
    absolute = F.regexp_replace(c.cast("string"), "^-", "")  # (Spark's text of a DECIMAL is plain: -12300, 0.00000010)
    sign = F.when(c < 0, F.lit("-")).otherwise(F.lit(""))
    fraction = absolute.contains(".")
    cut = F.when(fraction, F.regexp_replace(F.regexp_replace(absolute, "0+$", ""), "\\.$", "")).otherwise(absolute)
    # a whole number: its trailing zeros are a negative scale, written as an exponent (Java: scale < 0)
    coefficient = F.regexp_replace(cut, "0+$", "")
    whole_exponent = F.length(cut) - 1
    # a fraction: its digits without the leading zeros, the exponent of the first (Java: adjusted < -6)
    digits = F.regexp_replace(F.regexp_replace(cut, "\\.", ""), "^0+", "")
    fraction_exponent = F.length(digits) - 1 - (F.length(cut) - F.instr(cut, "."))  # (its length - 1 - the scale)

    def scientific(d: Column, exponent: Column, plus: str) -> Column:
        point = F.when(F.length(d) > 1, F.concat(F.lit("."), F.substring(d, 2, 1 << 16))).otherwise(F.lit(""))
        return F.concat(F.substring(d, 1, 1), point, F.lit("E" + plus), exponent.cast("string"))

    body = (
        F.when(~cut.contains(".") & ((cut == "0") | (F.length(coefficient) == F.length(cut))), cut)
        .when(~cut.contains("."), scientific(coefficient, whole_exponent, "+"))
        .when(fraction_exponent >= -6, cut)
        .otherwise(scientific(digits, fraction_exponent, ""))
    )
    return F.concat(sign, body)


#: What marks a DECIMAL's text inside ``json_record``'s record until its quotes are taken off: a character no
#: decimal's text has, which Spark's JSON writer escapes (``\u0000``).
_DECIMAL_MARK = "\x00"


def json_record(df: DataFrame, *, columns: Sequence[str] | None = None, ignore_null_fields: bool = False, spark_json: bool = False) -> Column:
    """Each row (its ``columns``, all by default) as a JSON object, keys in column order, nulls written unless
    ``ignore_null_fields``; a DECIMAL as Flink's json format writes it (``decimal_text``, a bare number). The other
    values as funke's Kafka sink writes them (``value_text``; ``kafka_sink.encode_values``), or with ``spark_json`` as
    Spark's JSON writer does (the file sink's: nested values too)."""
    fields, decimals = [], []
    for name in df.columns if columns is None else columns:
        dtype = df.schema[name].dataType.simpleString()
        c = F.col(f"`{name}`")
        if dtype.startswith("decimal"):  # (its text as a marked JSON string first, then the quotes and mark taken off)
            decimals.append(name)
            c = F.concat(F.lit(_DECIMAL_MARK), decimal_text(c))
        elif not spark_json:
            text = value_text(df, name)
            if dtype in ("double", "float"):  # a number, or null where JSON has no spelling
                c = F.when(text.isNotNull(), c)
            elif dtype in ("string", "date", "timestamp", "timestamp_ntz"):
                c = text
        fields.append(c.alias(name))
    record = F.to_json(F.struct(*fields), {"ignoreNullFields": str(ignore_null_fields).lower()})
    for name in decimals:  # (one pass over the record's text per decimal: its text is computed once, above)
        key = json.dumps(name, ensure_ascii=False) + ":"  # (a key's quotes are outside any string's)
        found = re.escape(key + json.dumps(_DECIMAL_MARK)[:-1]) + '([^"]*)"'  # (to_json escapes the mark as json does; a number has no quote)
        record = F.regexp_replace(record, found, key.replace("\\", "\\\\").replace("$", "\\$") + "$1")
    return record


def csv_line(df: DataFrame, names: Sequence[str] | None = None, *, delimiter: str = ",", quote: str = '"', null_literal: str = "") -> Column:
    """Each row's columns ``names`` (all by default) as a CSV line, as Flink's csv format writes it
    (``kafka_sink.csv_fields``): a text quoted where it holds a character Jackson's writer quotes (``csv_quoted``),
    quotes doubled; a NULL ``null_literal`` (Flink's ``csv.null-literal``; an empty field by default)."""
    fields, quoting = [], csv_quoted(delimiter, quote)
    for name in df.columns if names is None else names:
        text = value_text(df, name)
        if df.schema[name].dataType.simpleString() == "string":
            quoted = F.concat(F.lit(quote), F.replace(text, F.lit(quote), F.lit(quote * 2)), F.lit(quote))
            text = F.when(text.rlike(quoting), quoted).otherwise(text)
        fields.append(F.coalesce(text, F.lit(null_literal)))
    return F.concat_ws(delimiter, *fields)
