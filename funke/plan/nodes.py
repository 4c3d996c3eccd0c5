"""The plan: immutable, validated nodes. Facts about a node (schema, uid, event time) are derived.

Builders in ``funke.api`` create these; the Spark compiler visits them. A node validates
itself against its inputs' schemas when it is created, so a wrong column is reported
at the line that wrote it, and again at compile time against Spark's resolved schema
(for SQL strings whose types only Spark knows).

This module holds sources, time (watermarks) and the stateless operators, and is the one
namespace the builders and the compiler name the core node kinds by (``nodes.WindowAggregate``):
the base class and :func:`walk` are :mod:`funke.plan.node`'s, the keyed, stateful kinds
:mod:`funke.plan.stateful`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from funke.errors import PlanError, SchemaError, did_you_mean
from funke.plan.expr import Alias, Col, Expr, ProcTime, Sql, output_field
from funke.plan.node import DeclaredOutput, Node, stable_form, walk
from funke.plan.specs import SinkSpec, SourceSpec
from funke.plan.stateful import (
    SPARK_STATEFUL,
    WINDOW_COLUMNS,
    Aggregate,
    Deduplicate,
    KeyedProcess,
    RollingAggregate,
    SideOutput,
    WindowAggregate,
    side_output_tags,
    writes_any_tag,
)
from funke.plan.types import INTEGRAL, Field, Schema
from funke.semantics.watermarks import WatermarkStrategy

__all__ = [
    "SPARK_STATEFUL",
    "WINDOW_COLUMNS",
    "Aggregate",
    "DeclaredOutput",
    "Deduplicate",
    "Filter",
    "KeyBy",
    "KeyedProcess",
    "LookupJoin",
    "Node",
    "PythonFunction",
    "RollingAggregate",
    "Select",
    "SideOutput",
    "Sink",
    "Source",
    "Union",
    "Watermark",
    "WindowAggregate",
    "check_event_time_column",
    "side_output_tags",
    "walk",
    "writes_any_tag",
]


def _require(schema: Schema | None, column: str, node: Node) -> Field | None:
    if schema is None:
        return None
    return schema.field(column, node=node.where())


# -- sources and time -----------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Source(Node):
    spec: SourceSpec = field(kw_only=True)
    kind: ClassVar[str] = "source"

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        return self.spec.schema

    @cached_property
    def event_time(self) -> str | None:
        return getattr(self.spec, "event_time_column", None)

    @cached_property
    def scripted_time(self) -> bool:
        return bool(getattr(self.spec, "scripted_time", False))

    def label(self) -> str:
        return f"source {self.spec.describe()}"


@dataclass(frozen=True, eq=False)
class Watermark(Node):
    """``assign_timestamps_and_watermarks``: event time is a column; the watermark trails it."""

    strategy: WatermarkStrategy = field(kw_only=True)
    kind: ClassVar[str] = "watermark"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        column = self.strategy.timestamp_column
        if column is None:
            raise PlanError(
                "the watermark strategy names no event-time column: call "
                ".with_timestamp_assigner('column') on it (e.g. WatermarkStrategy"
                ".for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner('event_time'))"
            )
        if self.strategy.ingestion_time:
            if inputs[0] is not None and column in inputs[0]:
                raise PlanError(f"{self.where()}: ingestion time goes into a new column, but the stream already has '{column}': "
                                "name another (WatermarkStrategy.for_ingestion_time('arrived_at'))")  # fmt: skip
            return
        check_event_time_column(inputs[0], column, self.strategy.timestamp_unit, self.where())

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        s = inputs[0]
        if s is not None and self.strategy.ingestion_time:
            return s.with_field(Field(self.strategy.timestamp_column or "", "timestamp"))
        if s is None or self.strategy.timestamp_unit is None:
            return s
        return s.with_field(Field(self.strategy.timestamp_column or "", "timestamp"))

    @cached_property
    def event_time(self) -> str | None:
        return self.strategy.timestamp_column

    @cached_property
    def watermark(self) -> WatermarkStrategy | None:
        return self.strategy

    @cached_property
    def generated_time(self) -> bool:
        return self.strategy.generator is not None

    def label(self) -> str:
        return f"watermark {self.strategy.describe()}"


def check_event_time_column(schema: Schema | None, column: str, unit: str | None, where: str) -> None:
    """The event-time column exists and is a timestamp (or a number with a unit)."""
    if schema is None:
        return
    f = schema.get(column)
    if f is None:
        raise SchemaError(f"{where}: event-time column '{column}' does not exist{did_you_mean(column, schema.names)}")
    if f.dtype is None:
        return
    if unit is None and f.dtype not in ("timestamp", "timestamp_ntz"):
        hint = (
            f"; it holds numbers: declare the unit with .with_timestamp_assigner('{column}', unit='ms')"
            if f.dtype in INTEGRAL
            else ""
        )
        raise SchemaError(f"{where}: event-time column '{column}' must be a timestamp, but it is {f.dtype}{hint}")
    if unit is not None and f.dtype not in INTEGRAL:
        raise SchemaError(
            f"{where}: event-time column '{column}' declared in unit '{unit}' must hold whole numbers, but it is {f.dtype}"
        )


# -- stateless operators ----------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Select(Node):
    exprs: tuple[Expr, ...] = field(kw_only=True)
    kind: ClassVar[str] = "select"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if not self.exprs:
            raise PlanError(f"{self.where()}: select() needs at least one column")
        if inputs[0] is not None:
            for e in self.exprs:
                output_field(e, inputs[0], self.where())

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        s = inputs[0]
        if s is None:
            return None
        out = [output_field(e, s, self.where()) for e in self.exprs]
        if any(isinstance(e, Sql) and e.output_name() is None for e in self.exprs):
            return None  # Spark names unaliased SQL expressions; only it knows how
        return Schema(tuple(out))

    @staticmethod
    def _keeps(e: Expr, column: str | None) -> bool:
        """Whether ``e`` is the input's ``column`` itself, under its own name."""
        return column is not None and e.output_name() == column and (isinstance(e, Col) or e.columns() == frozenset({column}))

    def _passed(self, column: str | None) -> str | None:
        """The name ``column`` leaves this node under: its own, or the one a rename gives it (``ts AS t``: Flink
        keeps a time attribute through a projection); None where it does not leave it."""
        if column is None or any(self._keeps(e, column) for e in self.exprs):
            return column
        return next((e.output_name() for e in self.exprs if e.renamed() == column), None)

    @cached_property
    def event_time(self) -> str | None:
        return self._passed(self.input.event_time)

    @cached_property
    def row_time(self) -> str | None:
        return self._passed(self.event_time or self.input.row_time)

    @cached_property
    def proc_time(self) -> str | None:
        t = self.input.proc_time
        for e in self.exprs:
            if isinstance(e, Alias) and isinstance(e.expr, ProcTime):
                return e.output_name()
        return self._passed(t)

    def label(self) -> str:
        return f"select {', '.join(map(repr, self.exprs))}"


@dataclass(frozen=True, eq=False)
class Filter(Node):
    predicate: Expr = field(kw_only=True)
    kind: ClassVar[str] = "filter"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if inputs[0] is None:
            return
        f = output_field(self.predicate, inputs[0], self.where())
        if f.dtype not in (None, "boolean"):
            raise SchemaError(f"{self.where()}: the condition {self.predicate!r} is {f.dtype}, not boolean")

    def label(self) -> str:
        return f"filter {self.predicate!r}"


@dataclass(frozen=True, eq=False)
class PythonFunction(Node):
    """``map``/``filter``/``flat_map`` with a Python function, run over Arrow batches."""

    fn: Callable[..., Any] = field(kw_only=True)
    mode: str = field(kw_only=True)  # "map" | "flat_map" | "filter"
    output: Schema | None = field(kw_only=True)
    vectorized: bool = field(default=False, kw_only=True)
    kind: ClassVar[str] = "python"

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        return inputs[0] if self.mode == "filter" or self.output is None else self.output

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if self.mode not in ("map", "flat_map", "filter"):
            raise PlanError(f"unknown Python function mode {self.mode!r}")
        if self.mode != "filter" and self.output is None and inputs[0] is None:
            raise SchemaError(f"{self.where()}: declare output_schema= for {self.fn_name}: the input schema is not known yet")

    @property
    def fn_name(self) -> str:
        return getattr(self.fn, "__qualname__", repr(self.fn))

    @property
    def where_fn(self) -> str:
        return f"{self.mode}({self.fn_name})"

    def where(self) -> str:
        return self.where_fn

    def label(self) -> str:
        form = getattr(self.fn, "explain_form", None) or ("pandas batches" if self.vectorized else "rows, Arrow batches")
        return f"{self.mode} {self.fn_name} [{form}]"


@dataclass(frozen=True, eq=False)
class Union(Node):
    kind: ClassVar[str] = "union"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        known = [s for s in inputs if s is not None]
        for s in known[1:]:
            if s.names != known[0].names:
                raise SchemaError(
                    f"union: all streams need the same columns in the same order; got ({', '.join(known[0].names)}) "
                    f"and ({', '.join(s.names)}): select() them into one shape first"
                )

    @cached_property
    def event_time(self) -> str | None:
        times = {i.event_time for i in self.inputs}
        return times.pop() if len(times) == 1 else None

    def label(self) -> str:
        return f"union of {len(self.inputs)} streams"


@dataclass(frozen=True, eq=False)
class KeyBy(Node):
    key_columns: tuple[str, ...] = field(kw_only=True)
    #: A NULL is a key value (Flink SQL's GROUP BY and PARTITION BY); else a row with a NULL key goes to the
    #: dead letters (Flink's keyBy refuses it).
    nulls: bool = field(default=False, kw_only=True)
    kind: ClassVar[str] = "key_by"

    def params(self) -> tuple[Any, ...]:  # (not ``nulls``: the keys' state is the same either way, and so its uid)
        return (stable_form(self.key_columns),)

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if not self.key_columns:
            raise PlanError("key_by() needs at least one key column")
        for k in self.key_columns:
            _require(inputs[0], k, self)

    @cached_property
    def keys(self) -> tuple[str, ...] | None:
        return self.key_columns

    def label(self) -> str:
        return f"key_by {', '.join(self.key_columns)}"


@dataclass(frozen=True, eq=False)
class LookupJoin(Node):
    """Join each element with a static table (broadcast): YSB's ad → campaign step."""

    table: Any = field(kw_only=True)  # funke.connectors.tables.StaticTable
    on: tuple[str, ...] = field(kw_only=True)
    how: str = field(default="inner", kw_only=True)
    kind: ClassVar[str] = "lookup_join"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        if self.how not in ("inner", "left"):
            raise PlanError(f"{self.where()}: how must be 'inner' or 'left', got {self.how!r}")
        for k in self.on:
            _require(inputs[0], k, self)
            if self.table.schema is not None and k not in self.table.schema:
                raise SchemaError(
                    f"{self.where()}: join column '{k}' is not in the table {self.table.describe()}"
                    f"{did_you_mean(k, self.table.schema.names)}"
                )

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        s, t = inputs[0], self.table.schema
        if s is None or t is None:
            return None
        extra = tuple(f for f in t if f.name not in self.on)
        clash = [f.name for f in extra if f.name in s]
        if clash:
            raise SchemaError(f"{self.where()}: columns {', '.join(clash)} exist in both the stream and the table; rename one")
        return Schema(s.fields + extra)

    def params(self) -> tuple[Any, ...]:
        return (self.table.describe(), self.on, self.how)

    def label(self) -> str:
        return f"lookup_join {self.how} on {', '.join(self.on)} with {self.table.describe()}"


# -- sinks ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Sink(Node):
    spec: SinkSpec = field(kw_only=True)
    kind: ClassVar[str] = "sink"

    def params(self) -> tuple[Any, ...]:
        return (self.spec.describe(),)

    def label(self) -> str:
        return f"sink {self.spec.describe()} ({self.spec.guarantee})"
