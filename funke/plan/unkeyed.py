"""Plan nodes of one-input operators on an unkeyed stream with a user's function object:
``stream.process(ProcessFunction)`` and async I/O (``AsyncDataStream.ordered_wait/unordered_wait``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from funke.errors import PlanError
from funke.plan.node import DeclaredOutput, Node
from funke.plan.stateful import KeyedProcess
from funke.plan.types import Schema


@dataclass(frozen=True, eq=False)
class Process(KeyedProcess):
    """``stream.process(ProcessFunction, output_schema=...)`` on an unkeyed stream: no keyed state,
    no timers; the element's timestamp, the watermark and side outputs (a ``KeyedProcess`` whose
    input has no key: funke's general operator, its buckets by partition)."""

    kind: ClassVar[str] = "process"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        self.check_output(inputs)

    def label(self) -> str:
        return f"process {type(self.function).__qualname__} (unkeyed)"


@dataclass(frozen=True, eq=False)
class AsyncWait(DeclaredOutput, Node):
    """``AsyncDataStream.ordered_wait / unordered_wait(stream, AsyncFunction, timeout, capacity)``."""

    function: Any = field(kw_only=True)  # funke.semantics.async_io.AsyncFunction
    ordered: bool = field(kw_only=True)
    timeout_ms: int = field(kw_only=True)
    capacity: int = field(kw_only=True)
    output: Schema = field(kw_only=True)
    kind: ClassVar[str] = "async_wait"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if self.timeout_ms <= 0:
            raise PlanError(f"{self.where()}: the timeout must be positive, got {self.timeout_ms} ms")
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity <= 0:
            raise PlanError(f"{self.where()}: capacity (the most elements in flight) must be a positive int, got {self.capacity!r}")
        self.check_output()

    def label(self) -> str:
        order = "ordered" if self.ordered else "unordered"
        return f"async_wait {type(self.function).__qualname__} [{order}, timeout {self.timeout_ms} ms, capacity {self.capacity}]"
