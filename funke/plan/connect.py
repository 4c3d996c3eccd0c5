"""Plan nodes of connected streams: ``a.connect(b).process(...)`` and the broadcast state pattern.

Both have two inputs (``inputs[0]`` first, ``inputs[1]`` second) and run one operator over
both, on the general path. A keyed ``CoProcess`` has both inputs keyed by columns that pair
up (``connect(b).key_by(ka, kb)``); a ``BroadcastProcess``'s second input is the broadcast
stream, whose rows reach every instance of the operator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from funke.errors import PlanError
from funke.plan.joins import check_two_keyed
from funke.plan.node import DeclaredOutput, Node
from funke.plan.types import Schema


@dataclass(frozen=True, eq=False)
class CoProcess(DeclaredOutput, Node):
    """``a.connect(b)[.key_by(ka, kb)].process(function, output_schema=...)``.

    ``function`` is a ``KeyedCoProcessFunction`` (both inputs keyed: shared keyed state,
    timers) or, on unkeyed inputs, a ``CoProcessFunction``.
    """

    function: Any = field(kw_only=True)
    output: Schema = field(kw_only=True)
    keyed: bool = field(kw_only=True)
    kind: ClassVar[str] = "co_process"
    emits_side_outputs: ClassVar[bool] = True

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if self.keyed:
            check_two_keyed(self, "connect(...).key_by(...).process()")
        self.check_output()

    def label(self) -> str:
        on = ""
        if self.keyed:
            on = f" on {', '.join(self.inputs[0].keys or ())} = {', '.join(self.inputs[1].keys or ())}"
        return f"co_process{on} {type(self.function).__qualname__}"


@dataclass(frozen=True, eq=False)
class BroadcastProcess(DeclaredOutput, Node):
    """``stream.connect(rules.broadcast(descriptors...)).process(function, output_schema=...)``.

    ``function`` is a ``KeyedBroadcastProcessFunction`` when the first input is keyed, a
    ``BroadcastProcessFunction`` otherwise; ``descriptors`` are the broadcast state's
    ``MapStateDescriptor`` s.
    """

    function: Any = field(kw_only=True)
    descriptors: tuple[Any, ...] = field(kw_only=True)
    output: Schema = field(kw_only=True)
    kind: ClassVar[str] = "broadcast_process"
    emits_side_outputs: ClassVar[bool] = True

    @property
    def keyed(self) -> bool:
        return self.inputs[0].keys is not None

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if not self.descriptors:
            raise PlanError("broadcast(...) needs at least one MapStateDescriptor naming the broadcast state")
        self.check_output()

    @cached_property
    def watermark(self) -> Any:
        return self.inputs[0].watermark

    def label(self) -> str:
        states = ", ".join(d.name for d in self.descriptors)
        on = f" keyed by {', '.join(self.inputs[0].keys or ())}" if self.keyed else ""
        return f"broadcast_process{on} state({states}) {type(self.function).__qualname__}"
