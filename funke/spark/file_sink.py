"""Spark's file sink for ``fk.sinks.files``: streaming (Spark's exactly-once file sink, its ``_spark_metadata``
log) and batch, each partitioned by the sink's ``partition_by`` columns (``col=value/...``)."""

from __future__ import annotations

from typing import Any

from funke.connectors.sinks import FileSink


def stream_writer(writer: Any, spec: FileSink) -> Any:
    """A ``DataStreamWriter`` writing ``spec``'s files."""
    writer = _formatted(writer, spec).option("path", spec.path)
    return writer.partitionBy(*spec.partition_by) if spec.partition_by else writer


def write_frame(frame: Any, spec: FileSink, mode: str) -> None:
    """Write a batch ``frame`` as ``spec``'s files (``mode``: Spark's save mode)."""
    writer = _formatted(frame.write.mode(mode), spec)
    if spec.partition_by:
        writer = writer.partitionBy(*spec.partition_by)
    writer.save(spec.path)


def _formatted(writer: Any, spec: FileSink) -> Any:
    """``writer`` in ``spec``'s format; a json record with its null fields (Spark leaves them out unless told)."""
    writer = writer.format(spec.format)
    return writer.option("ignoreNullFields", str(spec.ignore_null_fields).lower()) if spec.format == "json" else writer
