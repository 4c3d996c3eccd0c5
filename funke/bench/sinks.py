"""Parquet sinks of the benchmark that write each micro-batch themselves (``foreachBatch``).

Both put micro-batch ``N``'s rows in ``<path>/batch_id=N/``, so the directory reads back as
one Parquet table with a ``batch_id`` column (Spark's partition discovery) and no
``_spark_metadata`` log: a reader sees every file there.

* :class:`AppendParquetSink` is **at-least-once**: it appends, so a batch Spark replays
  after a failure writes its files a second time beside the first ones. It is what
  ``funke bench ysb --exactly-once off`` writes with: no sink protocol at all.
* :class:`BatchParquetSink` is **exactly-once** by idempotence: it replaces the batch's
  own directory, so a replayed batch (same batch id, same rows) leaves one copy. The
  trigger variant writes with it when exactly-once is on, because a plain PySpark job in
  update mode cannot use Spark's file sink (append mode only).

>>> AppendParquetSink("/tmp/out").describe(), AppendParquetSink.guarantee
('parquet-append(/tmp/out/batch_id=<batch>)', 'at-least-once')
>>> BatchParquetSink("/tmp/out").batch_path(7), BatchParquetSink.guarantee
('/tmp/out/batch_id=7', 'exactly-once')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from funke.connectors.base import BatchSink

#: The column the batch directories add when the output is read back.
BATCH_COLUMN = "batch_id"


def batch_path(path: str, batch_id: int | str) -> str:
    """Where micro-batch ``batch_id``'s rows go under ``path``."""
    return f"{path.rstrip('/')}/{BATCH_COLUMN}={batch_id}"


@dataclass(eq=False)
class AppendParquetSink(BatchSink):
    """At-least-once: appends each micro-batch's rows as plain Parquet; a replayed batch writes its files again."""

    path: str
    kind: ClassVar[str] = "parquet-append"
    guarantee: ClassVar[str] = "at-least-once"
    mode: ClassVar[str] = "append"

    def batch_path(self, batch_id: int) -> str:
        return batch_path(self.path, batch_id)

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        df.write.mode(self.mode).parquet(self.batch_path(batch_id))

    def describe(self) -> str:
        return f"{self.kind}({batch_path(self.path, '<batch>')})"


@dataclass(eq=False)
class BatchParquetSink(AppendParquetSink):
    """Exactly-once by idempotence: each micro-batch replaces its own directory, so a replay leaves one copy."""

    kind: ClassVar[str] = "parquet-per-batch"
    guarantee: ClassVar[str] = "exactly-once"
    mode: ClassVar[str] = "overwrite"
