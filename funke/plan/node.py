"""The base of every plan node: what a node derives (uid, schema, event time, keys) and the hooks each kind fills in.

A kind of node (``funke.plan.nodes`` names them all) subclasses :class:`Node`, states its
parameters as dataclass fields and overrides the hooks it needs (``validate``,
``derive_schema``, ``label``); a node validates itself against its inputs' schemas when it is
created. :class:`DeclaredOutput` is the part every process function's node shares: its rows
are what its ``output_schema`` declares. :func:`walk` lists a plan's nodes, inputs first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cached_property
from typing import Any, ClassVar

from funke.errors import SchemaError
from funke.plan.specs import SourceSpec
from funke.plan.types import Schema
from funke.semantics.watermarks import WatermarkStrategy

__all__ = ["DeclaredOutput", "Node", "stable_form", "walk"]


@dataclass(frozen=True, eq=False)
class Node:
    """Base node. ``inputs`` are upstream nodes; ``uid``/``name`` may be given by the user."""

    inputs: tuple[Node, ...]
    explicit_uid: str | None = field(default=None, kw_only=True)
    explicit_name: str | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "node"

    def __post_init__(self) -> None:
        self.validate(tuple(i.schema for i in self.inputs))

    # -- derived facts --------------------------------------------------------------
    @property
    def input(self) -> Node:
        return self.inputs[0]

    def params(self) -> tuple[Any, ...]:
        """What distinguishes this node from a sibling of the same kind (for the derived uid)."""
        skip = {"inputs", "explicit_uid", "explicit_name"}
        return tuple(stable_form(getattr(self, f.name)) for f in fields(self) if f.name not in skip)

    @cached_property
    def uid(self) -> str:
        """Explicit ``uid=`` or a hash of kind, parameters and upstream uids: stable across runs."""
        if self.explicit_uid:
            return self.explicit_uid
        h = hashlib.sha1(repr((self.kind, self.params(), [i.uid for i in self.inputs])).encode())
        return f"{self.kind}-{h.hexdigest()[:10]}"

    @property
    def name(self) -> str:
        return self.explicit_name or self.kind

    @cached_property
    def schema(self) -> Schema | None:
        """Output schema; ``None`` only when Spark alone can tell (resolved at compile time)."""
        return self.derive_schema(tuple(i.schema for i in self.inputs))

    def _from_inputs(self, fact: str) -> str | None:
        """The column every input names as its ``fact`` (``event_time``, ``proc_time``, ``row_time``), where
        this node keeps that column."""
        times = {getattr(i, fact) for i in self.inputs}
        t = times.pop() if len(times) == 1 else None
        return t if t is not None and (self.schema is None or t in self.schema) else None

    @cached_property
    def event_time(self) -> str | None:
        """Column holding event time after this node, if a watermark strategy governs it."""
        return self._from_inputs("event_time")

    @cached_property
    def proc_time(self) -> str | None:
        """Column holding a processing-time attribute after this node (Flink SQL's ``PROCTIME()``,
        ``funke.plan.expr.ProcTime``), if one is there."""
        return self._from_inputs("proc_time")

    @cached_property
    def row_time(self) -> str | None:
        """Column holding each row's event time: the event-time column, or one an operator keeps its input's
        in (a deduplication keeping rows by their event time: Flink's rowtime attribute after it, which a
        temporal join reads as its versions' time), as projections pass it through."""
        return self.event_time or self._from_inputs("row_time")

    @cached_property
    def watermark(self) -> WatermarkStrategy | None:
        marks = {i.watermark for i in self.inputs}
        return marks.pop() if len(marks) == 1 else None

    @cached_property
    def keys(self) -> tuple[str, ...] | None:
        """Key columns when the stream is keyed (after ``key_by``)."""
        return None

    @cached_property
    def scripted_time(self) -> bool:
        """Watermark and processing time come from a test script (``funke.testing.TestStream``)."""
        return any(i.scripted_time for i in self.inputs)

    @cached_property
    def generated_time(self) -> bool:
        """The watermark comes from a user ``WatermarkGenerator`` (``WatermarkStrategy.for_generator``)."""
        return any(i.generated_time for i in self.inputs)

    # -- per-kind hooks ---------------------------------------------------------------
    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        return inputs[0] if inputs else None

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        """Raise PlanError/SchemaError when the node cannot work on these input schemas."""

    def label(self) -> str:
        return self.kind

    def where(self) -> str:
        """How the node names itself in messages: ``filter 'views' (uid filter-ab12)``."""
        named = f" '{self.explicit_name}'" if self.explicit_name else ""
        return f"{self.kind}{named}"


def stable_form(v: Any) -> Any:
    """A repr-stable stand-in for a value (functions by qualified name, never by id)."""
    if callable(v) and hasattr(v, "__qualname__"):
        return f"{getattr(v, '__module__', '?')}.{v.__qualname__}"
    if isinstance(v, (tuple, list)):
        return tuple(stable_form(x) for x in v)
    if isinstance(v, (set, frozenset)):  # their order changes from one process to the next
        return tuple(sorted(repr(stable_form(x)) for x in v))
    if isinstance(v, SourceSpec):
        return v.fingerprint()
    if is_dataclass(v) and not isinstance(v, type):  # its fields, not its ClassVars
        return (type(v).__qualname__, tuple(stable_form(getattr(v, f.name)) for f in fields(v)))
    if type(v).__repr__ is object.__repr__:
        return type(v).__qualname__
    return repr(v)


class DeclaredOutput:
    """A process function's node: its rows are what ``output_schema`` declares, every column
    typed; it has no event-time column of its own (the function stamps each row it emits)."""

    output: Schema
    where: Callable[[], str]  # Node's

    def check_output(self, inputs: tuple[Schema | None, ...] = ()) -> None:
        """Every output column typed; one of unknown type only where it passes an input column
        through under its name: it has that column's type, which Spark knows when it runs."""
        for f in self.output.fields:
            if f.dtype is None and not any(i is not None and f.name in i for i in inputs):
                raise SchemaError(f"{self.where()}: give output column '{f.name}' a type in output_schema")

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        return self.output

    @cached_property
    def event_time(self) -> str | None:
        return None

    @cached_property
    def row_time(self) -> str | None:
        """The column a function keeps its input's event time in (``keeps_event_time``), if it does."""
        t = getattr(getattr(self, "function", None), "keeps_event_time", None)
        inputs: tuple[Node, ...] = getattr(self, "inputs", ())
        return t if t is not None and len(inputs) == 1 and inputs[0].row_time == t and t in self.output else None


def walk(roots: tuple[Node, ...] | list[Node]) -> list[Node]:
    """Every node reachable from ``roots``, inputs before their consumers, each once."""
    seen: dict[int, Node] = {}
    order: list[Node] = []

    def visit(n: Node) -> None:
        if id(n) in seen:
            return
        seen[id(n)] = n
        for i in n.inputs:
            visit(i)
        order.append(n)

    for r in roots:
        visit(r)
    return order
