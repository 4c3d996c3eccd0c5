"""Plan nodes of two-input joins: the interval join and the window join / co-group.

Both take two keyed inputs (``inputs[0]`` left, ``inputs[1]`` right) whose keys pair up
column by column. An interval join either runs a ``ProcessJoinFunction`` (``function``)
or projects columns of the pair (``columns``): the projection is what Spark's own
stream-stream join can compute, the function needs funke's two-input operator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from funke.errors import PlanError, SchemaError, did_you_mean
from funke.plan.node import Node
from funke.plan.stateful import WINDOW_COLUMNS
from funke.plan.types import INTEGRAL, Field, Schema
from funke.semantics.windows import WindowAssigner

LEFT, RIGHT = "left", "right"


@dataclass(frozen=True)
class JoinColumn:
    """One output column of a projected join: ``side``'s ``column``, named ``alias``."""

    side: str
    column: str
    alias: str

    def __str__(self) -> str:
        return f"{self.side}.{self.column}" + (f" as {self.alias}" if self.alias != self.column else "")


def resolve_join_column(spec: str, alias: str | None, left: Schema | None, right: Schema | None, where: str) -> JoinColumn:
    """``"left.x"``, ``"right.y"`` or a bare name found on exactly one side, as a JoinColumn."""
    side, _, name = spec.partition(".")
    if name and side in (LEFT, RIGHT):
        schema = left if side == LEFT else right
        if schema is not None and name not in schema:
            raise SchemaError(f"{where}: the {side} stream has no column '{name}'{did_you_mean(name, schema.names)}")
        return JoinColumn(side, name, alias or name)
    on = [s for s, schema in ((LEFT, left), (RIGHT, right)) if schema is not None and spec in schema]
    if len(on) == 1:
        return JoinColumn(on[0], spec, alias or spec)
    if not on:
        names = [*(f"left.{n}" for n in (left.names if left else ())), *(f"right.{n}" for n in (right.names if right else ()))]
        raise SchemaError(f"{where}: neither stream has a column '{spec}'{did_you_mean(spec, names)}")
    raise SchemaError(f"{where}: both streams have a column '{spec}': say which, 'left.{spec}' or 'right.{spec}'")


def check_two_keyed(node: Node, what: str) -> None:
    left, right = node.inputs
    if left.keys is None or right.keys is None:
        raise PlanError(f"{what} joins two keyed streams: call key_by(...) on both")
    if len(left.keys) != len(right.keys):
        raise PlanError(
            f"{what}: the two streams' keys must pair up, but the left is keyed by ({', '.join(left.keys)}) "
            f"and the right by ({', '.join(right.keys)})"
        )
    for lk, rk in zip(left.keys, right.keys, strict=True):
        lf = left.schema.get(lk) if left.schema is not None else None
        rf = right.schema.get(rk) if right.schema is not None else None
        if lf is not None and rf is not None and None not in (lf.dtype, rf.dtype) and lf.dtype != rf.dtype:
            both_integral = lf.dtype in INTEGRAL and rf.dtype in INTEGRAL
            if not both_integral:
                raise SchemaError(f"{what}: key columns left.{lk} ({lf.dtype}) and right.{rk} ({rf.dtype}) have different types")


def _check_event_time(node: Node, what: str) -> None:
    for side, i in ((LEFT, node.inputs[0]), (RIGHT, node.inputs[1])):
        if i.event_time is None:
            raise PlanError(
                f"{what} needs event time on both streams, and the {side} one has none: pass watermarks= to "
                "from_source(...) or call assign_timestamps_and_watermarks(...) before key_by()"
            )


@dataclass(frozen=True, eq=False)
class IntervalJoin(Node):
    """``left.key_by(k).interval_join(right.key_by(k)).between(lower, upper)...``: pairs of one key
    with ``right time - left time`` in ``[lower, upper]`` (bounds as given, before exclusiveness)."""

    lower_ms: int = field(kw_only=True)
    upper_ms: int = field(kw_only=True)
    lower_inclusive: bool = field(default=True, kw_only=True)
    upper_inclusive: bool = field(default=True, kw_only=True)
    #: A ``ProcessJoinFunction`` and the columns it yields, or ``columns`` (a projection); not both.
    function: Any = field(default=None, kw_only=True)
    output: Schema | None = field(default=None, kw_only=True)
    columns: tuple[JoinColumn, ...] = field(default=(), kw_only=True)
    #: "native": run Spark's stream-stream join where it can (``on_path``); None: Flink's pairs exactly.
    path_hint: str | None = field(default=None, kw_only=True)
    kind: ClassVar[str] = "interval_join"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        check_two_keyed(self, "interval_join()")
        _check_event_time(self, "interval_join()")
        if self.lower_ms > self.upper_ms:
            raise PlanError(
                f"interval_join().between(lower, upper) needs lower <= upper, got {self.lower_ms} ms and {self.upper_ms} ms"
            )
        if (self.function is None) == (not self.columns):
            raise PlanError(
                "interval_join(): finish it with .process(ProcessJoinFunction, output_schema=...) or .select(columns)"
            )
        if self.function is not None:
            if self.path_hint == "native":
                raise PlanError(
                    "interval_join().on_path('native') runs Spark's join, which only projects the pair's columns: "
                    "finish it with .select(...), or drop on_path('native') to run the ProcessJoinFunction"
                )
            if self.output is None:
                raise PlanError("interval_join().process(...) needs output_schema=... naming the columns the function yields")
            for f in self.output.fields:
                if f.dtype is None:
                    raise SchemaError(f"{self.where()}: give output column '{f.name}' a type in output_schema")
            return
        names = [c.alias for c in self.columns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaError(f"{self.where()}: output column(s) {', '.join(dupes)} appear twice; rename with alias=column")

    @property
    def lower(self) -> int:
        """The lower bound with exclusiveness applied (Flink: an exclusive bound moves by 1 ms)."""
        return self.lower_ms if self.lower_inclusive else self.lower_ms + 1

    @property
    def upper(self) -> int:
        return self.upper_ms if self.upper_inclusive else self.upper_ms - 1

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        if self.function is not None:
            return self.output
        fields = []
        for c in self.columns:
            schema = inputs[0] if c.side == LEFT else inputs[1]
            f = schema.get(c.column) if schema is not None else None
            if schema is not None and f is None:
                return None
            fields.append(Field(c.alias, f.dtype if f is not None else None))
        return Schema(tuple(fields))

    @cached_property
    def event_time(self) -> str | None:
        # Flink's pair carries max(left time, right time); Spark's join output keeps no watermark a
        # later window could use, so downstream event time needs assign_timestamps_and_watermarks.
        return None

    @cached_property
    def watermark(self) -> Any:
        return None

    @property
    def bounds(self) -> str:
        lo = "(" if not self.lower_inclusive else "["
        hi = ")" if not self.upper_inclusive else "]"
        return f"{lo}{self.lower_ms} ms, {self.upper_ms} ms{hi}"

    def label(self) -> str:
        what = type(self.function).__qualname__ if self.function is not None else ", ".join(map(str, self.columns))
        keys = f"{', '.join(self.inputs[0].keys or ())} = {', '.join(self.inputs[1].keys or ())}"
        return f"interval_join on {keys} right time - left time in {self.bounds} -> {what}"


@dataclass(frozen=True, eq=False)
class WindowJoin(Node):
    """``a.join(b).where(ka).equal_to(kb).window(assigner).apply(JoinFunction)`` (``co_group`` alike):
    per key and window, the pairs (join) or both sides' elements (co-group)."""

    assigner: WindowAssigner = field(kw_only=True)
    function: Any = field(kw_only=True)  # funke.semantics.joins.JoinFunction | CoGroupFunction
    output: Schema = field(kw_only=True)
    co_group: bool = field(default=False, kw_only=True)
    kind: ClassVar[str] = "window_join"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        what = "co_group()" if self.co_group else "join()"
        check_two_keyed(self, what)
        if self.assigner.is_event_time:
            _check_event_time(self, what)
        for f in self.output.fields:
            if f.dtype is None:
                raise SchemaError(f"{self.where()}: give output column '{f.name}' a type in output_schema")

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        left_keys = self.inputs[0].keys or ()
        left = inputs[0]
        keys = tuple(left.field(k, node=self.where()) if left is not None else Field(k, None) for k in left_keys)
        rest = tuple(f for f in self.output.fields if f.name not in (*left_keys, *WINDOW_COLUMNS))
        return Schema(keys + (Field("window_start", "timestamp"), Field("window_end", "timestamp")) + rest)

    @cached_property
    def event_time(self) -> str | None:
        return None

    def label(self) -> str:
        op = "co_group" if self.co_group else "join"
        return f"window_{op} {self.assigner.describe()} {type(self.function).__qualname__}"
