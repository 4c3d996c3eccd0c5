"""Spark's file sink for ``fk.sinks.files``: streaming (Spark's exactly-once file sink, its ``_spark_metadata``
log) and batch, each partitioned by the sink's ``partition_by`` columns (``col=value/...``).

A csv file's lines are written as Flink's csv format writes them (``record_text.csv_line``: a text with a space, a
comma, a quote... quoted, quotes doubled, a NULL an empty field), as text files: Spark's CSV writer would cut a text's
leading and trailing spaces, write an empty text ``""`` and escape a quote with a backslash."""

from __future__ import annotations

from typing import Any

from funke.connectors.sinks import FileSink


def framed(frame: Any, spec: FileSink) -> Any:
    """``frame`` as ``spec``'s writer takes it: for csv, each row's line beside its partition columns."""
    if spec.format != "csv":
        return frame
    from funke.spark.record_text import csv_line  # (pyspark's lazy import)

    data = [c for c in frame.columns if c not in spec.partition_by]
    line = csv_line(frame, data, delimiter=spec.delimiter, quote=spec.quote, null_literal=spec.null_literal)
    return frame.select(line.alias("value"), *(frame[f"`{c}`"] for c in spec.partition_by))


def stream_writer(writer: Any, spec: FileSink) -> Any:
    """A ``DataStreamWriter`` (of a frame ``framed`` for ``spec``) writing ``spec``'s files."""
    writer = _formatted(writer, spec).option("path", spec.path)
    return writer.partitionBy(*spec.partition_by) if spec.partition_by else writer


def write_frame(frame: Any, spec: FileSink, mode: str) -> None:
    """Write a batch ``frame`` as ``spec``'s files (``mode``: Spark's save mode)."""
    writer = _formatted(framed(frame, spec).write.mode(mode), spec)
    if spec.partition_by:
        writer = writer.partitionBy(*spec.partition_by)
    writer.save(spec.path)


def _formatted(writer: Any, spec: FileSink) -> Any:
    """``writer`` in ``spec``'s format; a json record with its null fields (Spark leaves them out unless told)."""
    if spec.format == "csv":  # (lines made by ``framed``)
        return writer.format("text")
    writer = writer.format(spec.format)
    return writer.option("ignoreNullFields", str(spec.ignore_null_fields).lower()) if spec.format == "json" else writer
