"""Keyed, stateful plan nodes: window and rolling aggregates, deduplication, keyed process functions, side outputs.

Each keeps state per key (a window's panes, a running aggregate, the keys seen, a process
function's state and timers) and so needs a keyed stream; :class:`SideOutput` reads the rows
one of them sent to a tag. :data:`SPARK_STATEFUL` lists those Spark runs with state of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from funke.errors import PlanError, SchemaError
from funke.plan.node import DeclaredOutput, Node, stable_form
from funke.plan.types import INTEGRAL, Field, Schema, is_numeric
from funke.semantics.windows import WindowAssigner

__all__ = [
    "SPARK_STATEFUL",
    "WINDOW_COLUMNS",
    "Aggregate",
    "Deduplicate",
    "KeyedProcess",
    "RollingAggregate",
    "SideOutput",
    "WindowAggregate",
    "side_output_tags",
    "writes_any_tag",
]

#: Columns every window result carries besides the key and the aggregates (Flink's [start, end)).
WINDOW_COLUMNS = ("window_start", "window_end")


@dataclass(frozen=True)
class Aggregate:
    """A built-in aggregate of a window or rolling aggregation: ``count``, ``sum(col)``, ..."""

    fn: str  # count | sum | min | max | avg
    column: str | None
    alias: str

    FUNCTIONS: ClassVar[frozenset[str]] = frozenset({"count", "sum", "min", "max", "avg"})

    def output_type(self, schema: Schema | None, where: str) -> str | None:
        if self.fn == "count":
            return "bigint"
        if schema is None or self.column is None:
            return None
        t = schema.field(self.column, node=where).dtype
        if t is not None and self.fn in ("sum", "avg") and not is_numeric(t):
            raise SchemaError(f"{where}: {self.fn}('{self.column}') needs a numeric column, but it is {t}")
        if self.fn == "avg":
            return "double"
        if self.fn == "sum" and t in INTEGRAL:
            return "bigint"
        return t

    def __str__(self) -> str:
        inner = self.column or ""
        return f"{self.fn}({inner})" + (f" as {self.alias}" if self.alias not in (self.fn, self.column) else "")


@dataclass(frozen=True, eq=False)
class WindowAggregate(Node):
    """``key_by(...).window(assigner)[.trigger/.allowed_lateness/...].<aggregate>``."""

    assigner: WindowAssigner = field(kw_only=True)
    aggregates: tuple[Aggregate, ...] = field(kw_only=True)
    trigger: Any = field(default=None, kw_only=True)
    allowed_lateness_ms: int = field(default=0, kw_only=True)
    late_tag: Any = field(default=None, kw_only=True)
    evictor: Any = field(default=None, kw_only=True)
    #: A user window function (funke.semantics WindowReduce / WindowAggregate / WindowProcess)
    #: and the columns it produces, instead of built-in ``aggregates``.
    function: Any = field(default=None, kw_only=True)
    function_schema: Schema | None = field(default=None, kw_only=True)
    #: "general" runs the window on funke's operator even where Spark's would be exact (comparisons, tests).
    path_hint: str | None = field(default=None, kw_only=True)
    #: A column of each result's time, its window's last millisecond (Flink's ``window_time``, the timestamp Flink
    #: gives a window's results), after ``window_end``: the event time of the rows out (a window over a window).
    #: A processing-time window's is in processing time, as Flink's; a global (count) window's is the time of the
    #: element that fired it, as PyFlink's (``WindowResult.fired_at``).
    time_column: str | None = field(default=None, kw_only=True)
    kind: ClassVar[str] = "window"

    @property
    def emits_side_outputs(self) -> bool:
        """A user window function may write to any side output (``ctx.output(tag, row)``, ``yield tag, row``)."""
        return self.function is not None

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        keys = self.input.keys
        if keys is None:
            raise PlanError(
                "window() needs a keyed stream: call key_by(...) first, or use window_all(...) for one window over all elements"
            )
        if not self.aggregates and self.function is None:
            raise PlanError(f"{self.where()}: say what to compute per window: .count(), .sum('col'), ...")
        for a in self.aggregates:
            a.output_type(inputs[0], self.where())
        if self.assigner.is_event_time and self.assigner.needs_timestamp and self.input.event_time is None:
            raise PlanError(
                f"{self.where()} with {self.assigner.describe()} needs event time: pass watermarks= to from_source(...) "
                "or call assign_timestamps_and_watermarks(WatermarkStrategy...with_timestamp_assigner('column')) "
                "before key_by(), and keep the event-time column in later select()s"
            )
        if self.function is not None:
            return
        names = [*keys, *WINDOW_COLUMNS, *([self.time_column] if self.time_column else []), *(a.alias for a in self.aggregates)]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaError(f"{self.where()}: output column(s) {', '.join(dupes)} appear twice; give aggregates other names")

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        s = inputs[0]
        keys = self.input.keys or ()
        key_fields = tuple(s.field(k, node=self.where()) if s is not None else Field(k, None) for k in keys)
        if self.function is not None:
            agg_fields = self.function_schema.fields if self.function_schema is not None else (s.fields if s is not None else ())
            agg_fields = tuple(f for f in agg_fields if f.name not in (*keys, *WINDOW_COLUMNS, self.time_column))
        else:
            agg_fields = tuple(Field(a.alias, a.output_type(s, self.where())) for a in self.aggregates)
        timed = (Field(self.time_column, "timestamp"),) if self.time_column else ()
        return Schema(key_fields + (Field("window_start", "timestamp"), Field("window_end", "timestamp")) + timed + agg_fields)

    @cached_property
    def event_time(self) -> str | None:
        return self.time_column

    def label(self) -> str:
        extra = []
        if self.trigger is not None:
            extra.append(f"trigger={self.trigger.describe()}")
        if self.allowed_lateness_ms:
            extra.append(f"allowed_lateness={self.allowed_lateness_ms}ms")
        if self.late_tag is not None:
            extra.append(f"late data -> {self.late_tag.name!r}")
        tail = f" [{', '.join(extra)}]" if extra else ""
        if self.evictor is not None:
            tail = f"{tail} evictor={self.evictor.describe()}"
        what = ", ".join(map(str, self.aggregates)) if self.function is None else type(self.function).__name__
        return f"window {self.assigner.describe()} {what}{tail}"


@dataclass(frozen=True, eq=False)
class RollingAggregate(Node):
    """Keyed rolling ``sum/min/max/count`` or ``reduce(f)``: one updated row per element (Flink's semantics).

    Like Flink, sum/min/max keep the other columns of the key's first element and update
    only the aggregated column; ``count`` adds a running ``count`` column to each element;
    ``reduce(f)`` emits the first element, then ``f(accumulated, element)`` for each next one.
    """

    aggregate: Aggregate | None = field(default=None, kw_only=True)
    reduce_fn: Callable[[Any, Any], Any] | None = field(default=None, kw_only=True)
    kind: ClassVar[str] = "rolling"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if self.input.keys is None:
            what = "reduce" if self.reduce_fn is not None else (self.aggregate.fn if self.aggregate else "?")
            raise PlanError(f"rolling {what}() needs a keyed stream: call key_by(...) first")
        if (self.aggregate is None) == (self.reduce_fn is None):
            raise PlanError("a rolling aggregate takes either a built-in aggregate or a reduce function")
        if self.aggregate is not None:
            if self.aggregate.fn == "avg":
                raise PlanError("there is no rolling avg in Flink; use reduce() or a window")
            self.aggregate.output_type(inputs[0], self.where())

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        s = inputs[0]
        if s is None or self.aggregate is None:
            return s
        return s.with_field(Field(self.aggregate.alias, self.aggregate.output_type(s, self.where())))

    def params(self) -> tuple[Any, ...]:
        return (str(self.aggregate), stable_form(self.reduce_fn))

    def label(self) -> str:
        if self.reduce_fn is not None:
            return f"rolling reduce({getattr(self.reduce_fn, '__qualname__', 'fn')})"
        return f"rolling {self.aggregate}"


@dataclass(frozen=True, eq=False)
class Deduplicate(Node):
    """``key_by(...).deduplicate()``: each key's first element passes, every later one is dropped.

    Flink SQL's deduplication keeping the first row on processing time (``ROW_NUMBER() OVER
    (PARTITION BY k ORDER BY proctime) = 1``, and ``SELECT DISTINCT`` over an insert-only input with
    every column the key): insert-only, each key's first arrival. Which one that is when a key's rows
    come from several source partitions at once is the order they reach the operator, as in Flink; of
    one partition's rows the earlier wins. The keys seen are kept for the job's life.
    """

    kind: ClassVar[str] = "deduplicate"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if self.input.keys is None:
            raise PlanError("deduplicate() needs a keyed stream: call key_by(...) first (every column: key_by(list(stream.columns)))")

    def label(self) -> str:
        return f"deduplicate by {', '.join(self.input.keys or ())}, first row kept"


@dataclass(frozen=True, eq=False)
class KeyedProcess(DeclaredOutput, Node):
    """``keyed.process(KeyedProcessFunction, output_schema=...)``: elements, keyed state and timers."""

    function: Any = field(kw_only=True)  # funke.semantics.functions.KeyedProcessFunction
    output: Schema = field(kw_only=True)
    kind: ClassVar[str] = "process"
    #: The function may write to any side output (ctx.output(tag, row)); get_side_output declares it.
    emits_side_outputs: ClassVar[bool] = True

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if self.input.keys is None:
            raise PlanError("process(KeyedProcessFunction) needs a keyed stream: call key_by(...) first")
        self.check_output(inputs)

    def label(self) -> str:
        describe = getattr(self.function, "describe", None)  # a planner-made function says what it runs (CEP: the pattern)
        return f"process {type(self.function).__qualname__}" + (f" {describe()}" if callable(describe) else "")


@dataclass(frozen=True, eq=False)
class SideOutput(Node):
    """``stream.get_side_output(tag)``: the rows an upstream operator sent to ``tag``."""

    tag: Any = field(kw_only=True)  # funke.semantics.functions.OutputTag
    kind: ClassVar[str] = "side_output"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        tags = side_output_tags(self.input)
        if self.tag.name in {t.name for t in tags}:
            return
        if writes_any_tag(self.input):
            if self.tag.schema is None:
                raise SchemaError(f"get_side_output({self.tag.name!r}): declare the tag's columns, OutputTag(name, schema)")
            return
        if self.tag.name not in {t.name for t in tags}:
            known = ", ".join(repr(t.name) for t in tags) or "none"
            raise PlanError(
                f"get_side_output({self.tag.name!r}): {self.input.where()} sends nothing to that tag "
                f"(its side outputs: {known}); pass the same OutputTag to side_output_late_data(...) or ctx.output(...)"
            )

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        if self.tag.schema is not None:
            return Schema.of(self.tag.schema)
        if isinstance(self.input, WindowAggregate) and self.input.late_tag is not None and self.input.late_tag.name == self.tag.name:
            return self.input.input.schema
        raise SchemaError(f"get_side_output({self.tag.name!r}): declare the tag's columns, OutputTag(name, schema)")

    @cached_property
    def event_time(self) -> str | None:
        return None

    def params(self) -> tuple[Any, ...]:
        return (self.tag.name,)

    def label(self) -> str:
        return f"side output {self.tag.name!r}"


def writes_any_tag(node: Node) -> bool:
    """The node's function may send rows to any side output (a KeyedProcessFunction's ctx.output)."""
    return bool(getattr(node, "emits_side_outputs", False))


def side_output_tags(node: Node) -> tuple[Any, ...]:
    """The side-output tags a node writes to."""
    if isinstance(node, WindowAggregate) and node.late_tag is not None:
        return (node.late_tag,)
    return ()


#: The one-input operators Spark runs with state of its own (native): its aggregations and deduplication.
#: The compiler (what may follow a split), real-time mode (its shuffles) and savepoints (their layout)
#: read this one list.
SPARK_STATEFUL: tuple[type[Node], ...] = (WindowAggregate, RollingAggregate, Deduplicate)
