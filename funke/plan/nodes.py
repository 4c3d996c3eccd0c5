"""The plan: immutable, validated nodes. Facts about a node (schema, uid, event time) are derived.

Builders in ``funke.api`` create these; the Spark compiler visits them. A node validates
itself against its inputs' schemas when it is created, so a wrong column is reported
at the line that wrote it, and again at compile time against Spark's resolved schema
(for SQL strings whose types only Spark knows).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cached_property
from typing import Any, ClassVar

from funke.errors import PlanError, SchemaError, did_you_mean
from funke.plan.expr import Alias, Col, Expr, ProcTime, Sql, output_field
from funke.plan.specs import SinkSpec, SourceSpec
from funke.plan.types import INTEGRAL, Field, Schema, is_numeric
from funke.semantics.watermarks import WatermarkStrategy
from funke.semantics.windows import WindowAssigner

#: Columns every window result carries besides the key and the aggregates (Flink's [start, end)).
WINDOW_COLUMNS = ("window_start", "window_end")


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
        return tuple(_stable(getattr(self, f.name)) for f in fields(self) if f.name not in skip)

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


def _stable(v: Any) -> Any:
    """A repr-stable stand-in for a value (functions by qualified name, never by id)."""
    if callable(v) and hasattr(v, "__qualname__"):
        return f"{getattr(v, '__module__', '?')}.{v.__qualname__}"
    if isinstance(v, (tuple, list)):
        return tuple(_stable(x) for x in v)
    if isinstance(v, (set, frozenset)):  # their order changes from one process to the next
        return tuple(sorted(repr(_stable(x)) for x in v))
    if isinstance(v, SourceSpec):
        return v.fingerprint()
    if is_dataclass(v) and not isinstance(v, type):  # its fields, not its ClassVars
        return (type(v).__qualname__, tuple(_stable(getattr(v, f.name)) for f in fields(v)))
    if type(v).__repr__ is object.__repr__:
        return type(v).__qualname__
    return repr(v)


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
        return column if any(self._keeps(e, column) for e in self.exprs) else None

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
            if (isinstance(e, Alias) and isinstance(e.expr, ProcTime)) or self._keeps(e, t):
                return e.output_name()
        return None

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
        return (_stable(self.key_columns),)

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


# -- keyed, stateful ----------------------------------------------------------------------


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
        names = [*keys, *WINDOW_COLUMNS, *(a.alias for a in self.aggregates)]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaError(f"{self.where()}: output column(s) {', '.join(dupes)} appear twice; give aggregates other names")

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        s = inputs[0]
        keys = self.input.keys or ()
        key_fields = tuple(s.field(k, node=self.where()) if s is not None else Field(k, None) for k in keys)
        if self.function is not None:
            agg_fields = self.function_schema.fields if self.function_schema is not None else (s.fields if s is not None else ())
            agg_fields = tuple(f for f in agg_fields if f.name not in (*keys, *WINDOW_COLUMNS))
        else:
            agg_fields = tuple(Field(a.alias, a.output_type(s, self.where())) for a in self.aggregates)
        return Schema(key_fields + (Field("window_start", "timestamp"), Field("window_end", "timestamp")) + agg_fields)

    @cached_property
    def event_time(self) -> str | None:
        return None

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
        return (str(self.aggregate), _stable(self.reduce_fn))

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


@dataclass(frozen=True, eq=False)
class Sink(Node):
    spec: SinkSpec = field(kw_only=True)
    kind: ClassVar[str] = "sink"

    def params(self) -> tuple[Any, ...]:
        return (self.spec.describe(),)

    def label(self) -> str:
        return f"sink {self.spec.describe()} ({self.spec.guarantee})"


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


#: The one-input operators Spark runs with state of its own (native): its aggregations and deduplication.
#: The compiler (what may follow a split), real-time mode (its shuffles) and savepoints (their layout)
#: read this one list.
SPARK_STATEFUL: tuple[type[Node], ...] = (WindowAggregate, RollingAggregate, Deduplicate)
