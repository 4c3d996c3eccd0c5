"""A row's values as the text of a JSON record or a CSV line, written on the JVM: what funke's Kafka sink (Spark's
connector) and its csv file sink write, as ``funke.connectors.kafka_sink`` writes them in Python."""

from __future__ import annotations

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
    if dtype in _ATOMIC or dtype.startswith(("decimal", "time(")):
        return c.cast("string")
    raise SinkError(
        f"a Kafka record or a csv line holds text, numbers, booleans, dates and times, not column '{name}' of type {dtype}: "
        "turn it into a string column first (e.g. with to_json, or base64 for binary)"
    )


def json_record(df: DataFrame) -> Column:
    """Each row as a JSON object, keys in column order, nulls written (``kafka_sink.encode_values``)."""
    fields = []
    for f in df.schema.fields:
        dtype = f.dataType.simpleString()
        text = value_text(df, f.name)
        if dtype in ("double", "float"):  # a number, or null where JSON has no spelling
            text = F.when(text.isNotNull(), F.col(f"`{f.name}`"))
        elif dtype not in ("string", "date", "timestamp", "timestamp_ntz"):
            text = F.col(f"`{f.name}`")
        fields.append(text.alias(f.name))
    return F.to_json(F.struct(*fields), {"ignoreNullFields": "false"})


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
