"""What every source and sink description offers the planner (no pyspark here)."""

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
