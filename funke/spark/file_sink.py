"""Spark's file sink for ``fk.sinks.files``: streaming (Spark's exactly-once file sink, its ``_spark_metadata``
log) and batch, each partitioned by the sink's ``partition_by`` columns (``col=value/...``).

A csv file's lines are written as Flink's csv format writes them (``record_text.csv_line``: a text with a space, a
comma, a quote... quoted, quotes doubled, a NULL an empty field), as text files: Spark's CSV writer would cut a text's
leading and trailing spaces, write an empty text ``""`` and escape a quote with a backslash. A json file's records
are Spark's JSON but for a DECIMAL, which is Flink's text (``record_text.json_record``: ``1E+1``, not ``10.00``), also
as text files."""

from __future__ import annotations

from typing import Any

from funke.connectors.sinks import FileSink


def framed(frame: Any, spec: FileSink) -> Any:
    """``frame`` as ``spec``'s writer takes it: for csv and json, each row's line beside its partition columns."""
    if spec.format not in ("csv", "json"):
        return frame
    from funke.spark.record_text import csv_line, json_record  # (pyspark's lazy import)

    data = [c for c in frame.columns if c not in spec.partition_by]
    if spec.format == "csv":
        line = csv_line(frame, data, delimiter=spec.delimiter, quote=spec.quote, null_literal=spec.null_literal)
    else:
        line = json_record(frame, columns=data, ignore_null_fields=spec.ignore_null_fields, spark_json=True)
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
    """``writer`` in ``spec``'s format: csv and json as the text lines ``framed`` made."""
    return writer.format("text" if spec.format in ("csv", "json") else spec.format)
