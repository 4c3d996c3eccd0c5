"""What every source and sink description offers the planner: the plan's view of a connector
(``funke.connectors`` describes the real ones on top of these; no pyspark here)."""

from __future__ import annotations

from typing import ClassVar

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
