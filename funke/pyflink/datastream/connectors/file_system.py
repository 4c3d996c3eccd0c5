"""PyFlink's ``FileSource`` / ``FileSink`` on funke's file connectors (``fk.sources.files`` / ``fk.sinks.files``).

``FileSource.for_record_stream_format(StreamFormat.text_line_format(), *paths)``: each line a string
value; bounded (the files there when the job starts) unless ``monitor_continuously(interval)``.
``FileSink.for_row_format(base_path, Encoder.simple_string_encoder())``: each value's text (what
``print()`` writes for it) a line. funke writes Spark's part files directly under ``base_path``
(exactly once in a streaming run): Flink's date-time bucket directories and part-file names are not
made, so an ``OutputFileConfig`` or ``BucketAssigner`` that asks for names is refused; rolling is
Spark's (a file per task and micro-batch), as Flink's ``OnCheckpointRollingPolicy`` rolls.
"""

from __future__ import annotations

from typing import Any

import funke as fk
from funke.errors import UnsupportedError
from funke.pyflink.common.typeinfo import Types
from funke.pyflink.datastream._wire import LINE, Tail, TextReader

__all__ = [
    "BucketAssigner", "BulkFormat", "DefaultRollingPolicy", "FileEnumeratorProvider", "FileSink", "FileSource",
    "FileSourceBuilder", "FileSplitAssignerProvider", "OnCheckpointRollingPolicy", "OutputFileConfig", "RollingPolicy",
    "StreamFormat",
]  # fmt: skip


class StreamFormat:
    """How a file's bytes become values: ``text_line_format(charset)``, one string per line."""

    def __init__(self, kind: str, charset: str = "UTF-8") -> None:
        self.kind, self.charset = kind, charset

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        return StreamFormat("text", charset_name)


class BulkFormat:
    """A bulk (columnar) format, read by Flink's Java readers: refused."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedError("BulkFormat (Parquet/ORC/Avro through Flink's Java readers): use StreamFormat.text_line_format(), "
                               "or read Parquet with funke's own fk.sources.files(path, format='parquet', schema=...)")  # fmt: skip


class FileEnumeratorProvider:
    @staticmethod
    def default_splittable_file_enumerator() -> Any:
        return None

    @staticmethod
    def default_non_splittable_file_enumerator() -> Any:
        return None


class FileSplitAssignerProvider:
    @staticmethod
    def locality_aware_split_assigner() -> Any:
        return None


class FileSourceBuilder:
    def __init__(self, fmt: StreamFormat, paths: tuple[str, ...]) -> None:
        self._format, self._paths, self._monitor = fmt, paths, None

    def monitor_continuously(self, discovery_interval: Any) -> FileSourceBuilder:
        """Unbounded: new files picked up as they land, the directories listed every ``discovery_interval``."""
        self._monitor = discovery_interval
        return self

    def process_static_file_set(self) -> FileSourceBuilder:
        self._monitor = None
        return self

    def set_file_enumerator(self, file_enumerator: Any) -> FileSourceBuilder:
        """How Flink splits files among readers: Spark splits them itself (no effect on the values)."""
        return self

    def set_split_assigner(self, split_assigner: Any) -> FileSourceBuilder:
        """As ``set_file_enumerator``."""
        return self

    def build(self) -> FileSource:
        return FileSource(self._format, self._paths, self._monitor)


class FileSource:
    """Files as a source of values (``env.from_source(file_source, watermark_strategy, name)``)."""

    def __init__(self, fmt: StreamFormat, paths: tuple[str, ...], monitor: Any) -> None:
        self._format, self._paths, self._monitor = fmt, paths, monitor

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        if not isinstance(stream_format, StreamFormat):
            raise UnsupportedError(f"FileSource.for_record_stream_format({type(stream_format).__name__}): funke reads StreamFormat.text_line_format()")
        return FileSourceBuilder(stream_format, tuple(str(p).removeprefix("file://") for p in paths))

    @staticmethod
    def for_bulk_file_format(bulk_format: Any, *paths: str) -> FileSourceBuilder:
        raise UnsupportedError("FileSource.for_bulk_file_format: use for_record_stream_format(StreamFormat.text_line_format(), ...)")

    def _stream(self, env: Any, source_name: str, type_info: Any) -> Any:
        from funke.pyflink.datastream.data_stream import DataStream

        parts = [
            env._fk.from_source(fk.sources.files(p, schema="value string", format="text", monitor_continuously=self._monitor), name=source_name)
            for p in self._paths
        ]
        base = parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0]
        return DataStream(env, base, type_info=Types.STRING(), reader=TextReader("value"), known=True)


class RollingPolicy:
    """When a part file is closed: Spark closes one per task and micro-batch (Flink's on-checkpoint rolling)."""

    @staticmethod
    def default_rolling_policy(part_size: int = 134217728, rollover_interval: int = 60000, inactivity_interval: int = 60000) -> RollingPolicy:
        return DefaultRollingPolicy()

    @staticmethod
    def on_checkpoint_rolling_policy() -> RollingPolicy:
        return OnCheckpointRollingPolicy()


class DefaultRollingPolicy(RollingPolicy):
    pass


class OnCheckpointRollingPolicy(RollingPolicy):
    pass


class BucketAssigner:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    @staticmethod
    def base_path_bucket_assigner() -> BucketAssigner:
        return BucketAssigner("base_path")

    @staticmethod
    def date_time_bucket_assigner(format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None) -> BucketAssigner:
        return BucketAssigner("date_time")


class OutputFileConfig:
    def __init__(self, part_prefix: str = "part", part_suffix: str = "") -> None:
        self._prefix, self._suffix = part_prefix, part_suffix

    @staticmethod
    def builder() -> OutputFileConfigBuilder:
        return OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self._prefix

    def get_part_suffix(self) -> str:
        return self._suffix


class OutputFileConfigBuilder:
    def __init__(self) -> None:
        self._prefix, self._suffix = "part", ""

    def with_part_prefix(self, prefix: str) -> OutputFileConfigBuilder:
        self._prefix = prefix
        return self

    def with_part_suffix(self, suffix: str) -> OutputFileConfigBuilder:
        self._suffix = suffix
        return self

    def build(self) -> OutputFileConfig:
        return OutputFileConfig(self._prefix, self._suffix)


class FileSinkBuilder:
    def __init__(self, base_path: str) -> None:
        self._path = base_path

    def with_output_file_config(self, output_file_config: OutputFileConfig) -> FileSinkBuilder:
        if (output_file_config.get_part_prefix(), output_file_config.get_part_suffix()) != ("part", ""):
            raise UnsupportedError(
                f"FileSink OutputFileConfig (part prefix {output_file_config.get_part_prefix()!r}, suffix "
                f"{output_file_config.get_part_suffix()!r}): funke's file sink writes Spark's part files "
                "(part-NNNNN-<id>.txt); drop with_output_file_config, or rename the files after the job"
            )
        return self

    def with_rolling_policy(self, rolling_policy: RollingPolicy) -> FileSinkBuilder:
        return self

    def with_bucket_assigner(self, bucket_assigner: BucketAssigner) -> FileSinkBuilder:
        if bucket_assigner.kind != "base_path":
            raise UnsupportedError(
                "FileSink with_bucket_assigner(date_time_bucket_assigner(...)): funke writes every part file directly "
                "under the base path; use BucketAssigner.base_path_bucket_assigner() or leave it out"
            )
        return self

    def with_bucket_check_interval(self, interval: int) -> FileSinkBuilder:
        return self

    def enable_compact(self, strategy: Any, compactor: Any) -> FileSinkBuilder:
        raise UnsupportedError("FileSink enable_compact: funke's file sink does not compact; Spark writes a file per task and micro-batch")

    def build(self) -> FileSink:
        return FileSink(self._path)


class FileSink:
    """Values to text files under a base path (``stream.sink_to(file_sink)``)."""

    def __init__(self, base_path: str) -> None:
        self._path = str(base_path).removeprefix("file://")

    @staticmethod
    def for_row_format(base_path: str, encoder: Any) -> FileSinkBuilder:
        return FileSinkBuilder(base_path)

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: Any) -> FileSinkBuilder:
        raise UnsupportedError("FileSink.for_bulk_format (Parquet/ORC/Avro writers in Java): use for_row_format(path, Encoder.simple_string_encoder())")

    def _attach(self, stream: Any) -> None:
        lines = stream._chained(Tail("print", out_type=stream._type, prefix=_no_prefix), f"{LINE} string", "FileSink")
        lines.sink_to(fk.sinks.files(self._path, format="text"), name="FileSink")


def _no_prefix() -> str:
    return ""
