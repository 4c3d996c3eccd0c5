"""What every source and sink description offers the planner (no pyspark here).

``SourceSpec`` and ``SinkSpec`` live in the plan (``funke.plan.specs``), which knows no connector."""

from __future__ import annotations

from typing import Any, ClassVar

from funke.plan.specs import SinkSpec, SourceSpec

__all__ = ["BatchSink", "SinkSpec", "SourceSpec"]


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
