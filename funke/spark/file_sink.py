"""Spark's file sink for ``fk.sinks.files``: streaming (Spark's exactly-once file sink, its ``_spark_metadata``
log) and batch, each partitioned by the sink's ``partition_by`` columns (``col=value/...``)."""

from __future__ import annotations

from typing import Any

from funke.connectors.sinks import FileSink


def stream_writer(writer: Any, spec: FileSink) -> Any:
    """A ``DataStreamWriter`` writing ``spec``'s files."""
    writer = writer.format(spec.format).option("path", spec.path)
    return writer.partitionBy(*spec.partition_by) if spec.partition_by else writer


def write_frame(frame: Any, spec: FileSink, mode: str) -> None:
    """Write a batch ``frame`` as ``spec``'s files (``mode``: Spark's save mode)."""
    writer = frame.write.mode(mode).format(spec.format)
    if spec.partition_by:
        writer = writer.partitionBy(*spec.partition_by)
    writer.save(spec.path)
