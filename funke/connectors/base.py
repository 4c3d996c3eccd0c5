"""What every source and sink description offers the planner (no pyspark here)."""

from __future__ import annotations

from typing import Any, ClassVar

from funke.plan.types import Schema


class SourceSpec:
    """A source as data: its schema, whether it ends, and how ``explain()`` names it."""

    kind: ClassVar[str] = "source"

    @property
    def schema(self) -> Schema | None:
        raise NotImplementedError

    @property
    def bounded(self) -> bool:
        """True when the source ends (a collection, a finite generator, a file listing in batch)."""
        raise NotImplementedError

    @property
    def batchable(self) -> bool:
        """True when a bounded run (``execute(bounded=True)``) can read it: a source that ends, or
        one that reads what is there when the job starts (files, Kafka up to its latest offsets)."""
        return self.bounded

    @property
    def split_watermarks(self) -> bool:
        """True when a watermark strategy given with this source is Flink's per-split one: each
        split (a Kafka partition) has its own watermark and the source's is their minimum."""
        return False

    def describe(self) -> str:
        return self.kind

    def fingerprint(self) -> str:
        return self.describe()


class SinkSpec:
    kind: ClassVar[str] = "sink"
    #: "exactly-once" or "at-least-once"; shown by explain().
    guarantee: ClassVar[str] = "exactly-once"

    def describe(self) -> str:
        return self.kind


class BatchSink(SinkSpec):
    """A sink that writes each micro-batch itself (``foreachBatch``), e.g. to an external store.

    ``check`` runs once when the job starts, before any Spark query: it connects and raises
    ``SinkError`` naming the server and address when it cannot. ``write_batch`` gets the
    batch's DataFrame, Spark's batch id (the same id again when Spark replays a batch after
    a restart) and the job name; an exactly-once sink writes the batch together with a
    ``(job, batch_id)`` marker and skips a batch whose marker is already there.
    """

    kind: ClassVar[str] = "batch-sink"
    #: A sink that does not skip replayed batches writes them again: declare "exactly-once"
    #: only when ``write_batch`` writes with a marker as above.
    guarantee: ClassVar[str] = "at-least-once"

    def check(self, job: str) -> None:
        """Connect once and fail early with a clear error (default: nothing to check)."""

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        raise NotImplementedError
