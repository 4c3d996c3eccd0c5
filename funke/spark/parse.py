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
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from funke.plan.types import Schema

#: Columns a source frame may carry for its dead letters: the raw record, why it is bad, where it was.
CORRUPT, REASON, POSITION = "_funke_corrupt_record", "_funke_reason", "_funke_position"
PARSED = "_funke_parsed"


def with_parsed(frame: DataFrame, text: Column, fmt: str, declared: Schema, options: dict[str, Any] | None = None) -> DataFrame:
    """``frame`` with ``PARSED``: ``text`` parsed as ``fmt`` (json or csv) to ``declared`` plus ``CORRUPT``."""
    ddl = f"{declared.ddl()}, `{CORRUPT}` string"
    opts = {**(options or {}), "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    record = F.from_json(text, ddl, opts) if fmt == "json" else F.from_csv(text, ddl, opts)
    return frame.withColumn(PARSED, record)


def parsed_columns(declared: Schema) -> list[Column]:
    """The declared fields out of ``PARSED``."""
    return [F.col(f"{PARSED}.`{f.name}`").alias(f.name) for f in declared]


def corrupt_text(fmt: str, text: Column, present: Column) -> Column:
    """The raw record where it is bad (null where it parsed); ``present``: the row has a record at all."""
    corrupt = F.col(f"{PARSED}.`{CORRUPT}`")
    if fmt == "json":  # a JSON value that is not an object (a number, an array) parses to no struct at all
        corrupt = F.when(F.col(PARSED).isNull() & present & text.isNotNull(), text).otherwise(corrupt)
    return corrupt
