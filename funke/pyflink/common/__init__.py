"""PyFlink's common classes (``pyflink.common``) on funke: ``Types``, ``Row``, ``WatermarkStrategy``,
``Duration``/``Time``, ``Configuration``, ``Encoder`` and the serialization schemas."""

from funke.pyflink.common.configuration import Configuration
from funke.pyflink.common.execution_config import ExecutionConfig
from funke.pyflink.common.job_status import JobStatus
from funke.pyflink.common.serialization import (
    ByteArraySchema,
    DeserializationSchema,
    Encoder,
    SerializationSchema,
    SimpleStringSchema,
)
from funke.pyflink.common.time import Duration, Instant, Time
from funke.pyflink.common.typeinfo import TypeInformation, Types
from funke.pyflink.common.types import Row, RowKind
from funke.pyflink.common.watermark_strategy import TimestampAssigner, WatermarkStrategy

__all__ = [
    "ByteArraySchema", "Configuration", "DeserializationSchema", "Duration", "Encoder", "ExecutionConfig", "Instant",
    "JobStatus", "Row", "RowKind", "SerializationSchema", "SimpleStringSchema", "Time", "TimestampAssigner",
    "TypeInformation", "Types", "WatermarkStrategy",
]  # fmt: skip
