"""Files as Spark DataFrames: Parquet through Spark's reader, JSON and CSV as lines parsed on the JVM.

A JSON or CSV file is read as text, one record per line, and each line parsed with
``from_json``/``from_csv`` (:mod:`funke.spark.parse`, as the Kafka source parses values),
streaming and bounded alike. Spark's own JSON/CSV file reader would decide which records
are corrupt from the columns each query keeps, and refuses a query that keeps only the
corrupt-record column, which the dead-letter query of a streaming job does
(``QUERY_ONLY_CORRUPT_RECORD_COLUMN``).

Options: those of the file scan (``maxFilesPerTrigger``, ``pathGlobFilter``, ``lineSep``...)
go to Spark's text reader, the others to the parse (``sep``, ``quote``, ``timestampFormat``,
``allowComments``...). ``header`` (CSV) drops each file's first line, reading each file
whole; ``comment`` (CSV) drops the lines that start with it. Blank lines are skipped in JSON;
in CSV a blank line is a record of one empty field, as Flink's csv format reads it (a dead
letter where the schema has more columns).
"""

from __future__ import annotations

import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from funke.connectors.sources import FileSource
from funke.spark import parse
from funke.spark.parse import CORRUPT, POSITION, REASON

#: Options of Spark's file scan (streaming and batch) rather than of the parse.
SCAN_OPTIONS = frozenset(
    o.lower()
    for o in (
        "maxFilesPerTrigger", "maxBytesPerTrigger", "latestFirst", "fileNameOnly", "maxFileAge", "maxCachedFiles",
        "discardCachedInputRatio", "cleanSource", "sourceArchiveDir", "pathGlobFilter", "recursiveFileLookup",
        "modifiedBefore", "modifiedAfter", "ignoreCorruptFiles", "ignoreMissingFiles", "lineSep",
    )
)  # fmt: skip
_LINE = "_funke_line"


def load(spark: SparkSession, spec: FileSource, path: str, *, streaming: bool) -> DataFrame:
    """The files at ``path`` (a directory or a glob) as rows of ``spec``'s schema; JSON and CSV
    rows also carry the dead-letter columns ``CORRUPT`` and ``POSITION`` (set on bad records only)."""
    reader = spark.readStream if streaming else spark.read
    if spec.format not in ("json", "csv"):
        return reader.format(spec.format).schema(spec.declared.ddl()).options(**dict(spec.options)).load(path)
    scan = {k: v for k, v in spec.options if k.lower() in SCAN_OPTIONS}
    options = {k: v for k, v in spec.options if k.lower() not in SCAN_OPTIONS and k.lower() != "header"}
    named = {k.lower(): v for k, v in spec.options}  # Spark's options ignore case
    header = spec.format == "csv" and named.get("header", "false").lower() == "true"
    comment = named.get("comment") if spec.format == "csv" else None
    text = reader.format("text").options(**scan)
    if header:  # each file whole, so that its first line is known
        lines = text.option("wholetext", "true").load(path)
        separator = re.escape(named["linesep"]) if "linesep" in named else r"\r?\n"
        parts = F.split("value", separator)
        # (the last line's place taken per file, beside the explode, not per line from the file's whole text)
        lines = lines.select(F.posexplode(parts).alias("_funke_at", _LINE), (F.size(parts) - 1).alias("_funke_last"))
        # (not the header, nor the nothing after a file's last line break)
        at, last = F.col("_funke_at"), F.col("_funke_last")
        lines = lines.where((at > 0) & ((at < last) | (F.col(_LINE) != ""))).drop("_funke_last")
    else:
        lines = text.load(path).withColumnRenamed("value", _LINE)
    line = F.col(_LINE)
    # a blank line is no JSON record; in csv it is one field, '' (Flink's reader: a STRING's value, else too few fields)
    keep = F.trim(line) != "" if spec.format == "json" else F.lit(True)
    if comment:
        keep = keep & ~line.startswith(comment)
    lines = parse.with_parsed(lines.where(keep), line, spec.format, spec.declared, options, ignore_errors=spec.ignore_parse_errors,
                              fail_on_missing=spec.fail_on_missing_field, timestamp_format=spec.timestamp_format, instants=spec.instants)
    corrupt = parse.corrupt_text(spec.format, line, F.lit(True))
    missing = parse.missing_field_reason(spec.fail_on_missing_field)
    return lines.select(
        *parse.parsed_columns(spec.declared),
        corrupt.alias(CORRUPT),
        F.when(corrupt.isNotNull(), F.lit(f"{spec.describe()}: malformed record or a value of the wrong type{missing}")).alias(REASON),
        F.when(corrupt.isNotNull(), F.input_file_name()).alias(POSITION),
    )


def whole(spark: SparkSession, spec: FileSource) -> DataFrame:
    """The files of ``spec`` read whole as a lookup table: the declared columns, and a record that breaks the format's
    rules failing the job with its reason, file and text (a lookup table has no dead letters; Flink's filesystem
    lookup fails on such a record too)."""
    df = load(spark, spec, spec.path, streaming=False)
    if spec.format not in ("json", "csv"):
        return df
    bad = F.col(CORRUPT).isNotNull()
    failed = F.raise_error(F.concat(F.col(REASON), F.lit(" in a lookup table, in "), F.col(POSITION), F.lit(": "), F.col(CORRUPT)))
    # (a filter, which Spark keeps, not a column it could prune)
    return df.where(F.when(bad, failed).isNull()).select(*(F.col(f"`{f.name}`") for f in spec.declared))
