"""The general path's program: what one general operator runs (``Program``, its outputs and inputs,
the columns it adds around the user's) and how a plan node becomes one (``general_program``,
``two_input_program``); views of its tagged output (``main_view``, ``side_view``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from funke.plan import nodes
from funke.plan.types import NUMERIC, Field, Schema, normalize_type
from funke.plan.unkeyed import Process
from funke.semantics.functions import AcceptsPartials, NamedAggregates, OutputTag, builtin_aggregate
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.rolling import RollingOperator
from funke.semantics.triggers import EventTimeTrigger, PurgingTrigger, Trigger
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.windows import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Columns the general operator adds around the user's columns.
BUCKET, SEQ, CONTROL, TS, WM, PT = "fk_b", "fk_seq", "fk_ctl", "fk_ts", "fk_wm", "fk_pt"
#: A two-input operator's elements and time rows say which input they come from (0 or 1); the
#: second input's columns travel renamed with ``SECOND_PREFIX``.
SIDE, SECOND_PREFIX = "fk_side", "fk_2_"
TAG, OUT_SEQ, COUNT = "__tag", "__oseq", "__n"
DROPPED = "__dropped"
#: A bucket run's report (``Program.beat``): ``COUNT`` is its next processing-time timer, or null.
DUE = "__due"
CONTROL_COLUMNS = (BUCKET, SEQ, CONTROL, TS, WM, PT)
#: A bigint column ``c`` travels to the operator null-free (nulls as 0) beside ``NULLS + c``, its
#: null mask: a nullable int64 column reaches pandas as float64, which rounds above 2**53
#: (control rows and the other input's rows are null in every value column).
NULLS = "fk_null_"


@dataclass(frozen=True)
class Output:
    """One output of the operator: its tag (``None`` = main) and columns as (name, funke type)."""

    tag: OutputTag | None
    columns: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        return "" if self.tag is None else self.tag.name


@dataclass
class Program:
    """Everything an executor needs to run one general operator (pickled to the workers).

    ``make`` builds a fresh semantics operator; ``keys`` and ``values`` name the input
    columns; ``micros`` are timestamp columns carried as epoch microseconds (converted to
    ``datetime`` for user functions when ``user_rows``); ``shape`` turns a main-output
    record into a row.
    """

    uid: str
    make: Callable[[], Any]
    keys: tuple[str, ...]
    values: tuple[str, ...]
    outputs: tuple[Output, ...]
    micros: frozenset[str] = frozenset()
    user_rows: bool = False
    window_result: bool = False
    #: A window's column of its results' time (its last millisecond, Flink's ``window_time``), or None.
    window_time: str | None = None
    buckets: int = 8
    preaggregate: PreAggregate | None = None
    #: funke type per input column (``values``).
    types: dict[str, str] = field(default_factory=dict)
    #: A two-input operator's second input (``keys``/``values`` above are the first's).
    second: SecondInput | None = None
    #: The watermark comes only from funke's clock (``ClockSpec``), never from Spark's.
    clock: bool = False
    #: Time rows come only when due (``funke_beat``, or ``funke_clock`` with a commit log to
    #: follow): each bucket run reports its next processing-time timer (a ``DUE`` row).
    beat: bool = False
    #: The operator's input columns in order, as Spark sends them (``named``).
    columns: tuple[str, ...] = ()
    #: Same-batch firing (``set_latency_mode("latency-first")``): the bound B (ms) of the input's
    #: bounded-out-of-orderness watermark; each run then also applies ``largest event time - B - 1``.
    same_batch_bound_ms: int | None = None
    #: Time comes from a test script (``funke.testing.TestStream``): processing time moves only as it says,
    #: at the end of input too (``_end_of_processing_time``).
    scripted: bool = False
    #: Flink's BATCH runtime mode (a bounded run): a key's elements are read in timestamp order, as Flink's BATCH
    #: execution sorts a keyed operator's input by key and timestamp (stable: ties and untimed elements in arrival order).
    time_ordered: bool = False

    def second_view(self) -> Program:
        """This program as seen by the second input's rows (its keys, columns and types)."""
        s = self.second
        assert s is not None
        return replace(self, keys=s.keys, values=s.values, micros=s.micros, types=s.types, preaggregate=None, second=None)

    def key_of(self, row: dict[str, Any]) -> Any:
        if len(self.keys) == 1:
            return row[self.keys[0]]
        return tuple(row[k] for k in self.keys)

    def output_ddl(self) -> str:
        cols = [f"`{TAG}` string", f"`{OUT_SEQ}` bigint", f"`{COUNT}` bigint"]
        for i, o in enumerate(self.outputs):
            cols += [f"`{column_name(i, name)}` {carried_type(t)}" for name, t in o.columns]
        return ", ".join(cols)


@dataclass(frozen=True)
class SecondInput:
    """The second input of a two-input operator. ``broadcast``: its rows reach every bucket
    (Flink's broadcast stream) and are applied before the batch's other elements."""

    keys: tuple[str, ...]
    values: tuple[str, ...]
    micros: frozenset[str]
    types: dict[str, str]
    broadcast: bool = False


@dataclass(frozen=True)
class ClockSpec:
    """A general operator whose watermark funke computes on the driver (Flink's rule, idleness
    included) and sends in its control rows through ``funke_clock`` reading ``path``.

    ``inputs``: per watermarked input, its observe (``funke_wm_<uid>``), bound and idleness (ms).
    A source with per-split watermarks (Kafka partitions) is one input per split, named by
    ``split_input``.
    """

    path: str
    inputs: tuple[tuple[str, int, int | None], ...]
    uid: str = ""
    #: The operator's output observe (its buckets' next processing-time timers) and bucket count.
    observe: str = ""
    buckets: int = 0


@dataclass(frozen=True)
class BeatSpec:
    """A general operator on Spark's watermark whose time rows come from ``funke_beat`` reading
    ``path`` (``funke.runtime.watermarks.Beat`` writes it from the ``observe``'s ``runs`` and
    ``pt_due``)."""

    path: str
    observe: str
    buckets: int


@dataclass(frozen=True)
class PreAggregate:
    """How to pre-aggregate a batch's on-time elements per key and pane, vectorized.

    Valid for event-time tumbling/sliding windows of built-in aggregates whose trigger does
    not read elements: every element of a pane falls in the same windows, and an element
    newer than the watermark is late for none of them, so a group of them may enter the
    operator as one :class:`Partial` at the position (and timestamp) of its first arrival.
    """

    pane_ms: int
    offset_ms: int
    aggregates: tuple[tuple[str, str | None], ...]  # (fn, column) in NamedAggregates order
    #: For session windows with a static gap: elements of a key within ``gap`` of each other
    #: form one pre-merged session (``pane_ms`` is then unused).
    session_gap_ms: int | None = None
    #: Pre-aggregate every element before the shuffle to the buckets (``pre_shuffle``), not only
    #: the on-time ones inside a bucket. Sound when the allowed lateness is 0 and no late side
    #: output is read: then a pane's elements are all late (its windows are past the watermark:
    #: dropped and counted, which a partial's count does) or all go into the same windows, where
    #: an element older than the watermark is treated like a newer one (no trigger fires on an
    #: element of a window the watermark has not passed).
    before_shuffle: bool = False


#: The split that gathers a source's partitions added after the start (it holds nothing back
#: until one of them sends a record).
UNLISTED = "x"


def split_input(observe: str, split: str) -> str:
    """A clock input for one split of a source: its fields in ``observe`` are
    ``max_event_time_<split>`` and ``rows_<split>`` (``funke.runtime.watermarks.Clock``)."""
    return f"{observe}#{split}"


def column_name(output_index: int, name: str) -> str:
    """The operator's output column for ``name`` of output ``output_index`` (0 = main)."""
    return name if output_index == 0 else f"__o{output_index}_{name}"


def carried_type(t: str) -> str:
    return "bigint" if t in ("timestamp", "timestamp_ntz") else t


_TIMESTAMPS = ("timestamp", "timestamp_ntz")


def _columns(df: DataFrame) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, normalize_type(f.dataType.simpleString()) or "string") for f in df.schema.fields)


def _schema_columns(schema: Schema, where: str, inputs: dict[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """``schema``'s columns and types; a column of unknown type named like one of ``inputs`` (Spark's
    resolved input types) is passed through and has its type (a SQL Top-N's columns)."""
    cols = []
    for f in schema.fields:
        dtype = f.dtype or (inputs or {}).get(f.name)
        if dtype is None:
            raise ValueError(f"{where}: the type of output column '{f.name}' is unknown; declare it in the output schema")
        cols.append((f.name, dtype))
    return tuple(cols)


def needs_time(node: nodes.Node) -> bool:
    """Whether the operator must run every micro-batch (timers, windows), not only when elements arrive."""
    return not isinstance(node, (nodes.RollingAggregate, Process))


def general_program(node: nodes.Node, buckets: int, df: DataFrame, side_tags: tuple[OutputTag, ...] = ()) -> Program:
    """The executable form of a general-path node, given its input frame (Spark's resolved types).

    ``side_tags`` are the tags read downstream (``get_side_output``) of a node that may
    write to any tag (a KeyedProcessFunction).
    """
    inputs = _columns(df)
    types = dict(inputs)
    values = tuple(c for c, _ in inputs)
    micros = frozenset(c for c, t in inputs if t in _TIMESTAMPS)
    keys = tuple(node.input.keys or ())
    if isinstance(node, nodes.RollingAggregate):
        main = list(inputs)
        if node.aggregate is not None and node.aggregate.fn == "count":
            main.append((node.aggregate.alias, "bigint"))
        agg, reduce_fn = node.aggregate, node.reduce_fn
        if reduce_fn is not None:
            make = lambda: RollingOperator.reducing(reduce_fn)
        else:
            assert agg is not None
            make = lambda: RollingOperator.builtin(agg.fn, agg.column, agg.alias)
        return Program(node.uid, make, keys, values, (Output(None, tuple(main)),), micros, user_rows=reduce_fn is not None, buckets=buckets, types=types)
    if isinstance(node, nodes.WindowAggregate):
        spec = WindowSpec.of(
            node.assigner,
            trigger=node.trigger,
            evictor=node.evictor,
            allowed_lateness=node.allowed_lateness_ms,
            late_data_tag=node.late_tag,
        )
        key_cols = tuple((k, types[k]) for k in keys)
        bounds = (("window_start", "timestamp"), ("window_end", "timestamp"), *(((node.time_column, "timestamp"),) if node.time_column else ()))
        pre = _preaggregate(node, types)  # (None for a window function)
        if node.function is not None:
            function = node.function
            declared = _schema_columns(node.function_schema, node.where(), types) if node.function_schema is not None else inputs
            result_cols = tuple((c, t) for c, t in declared if c not in keys and c not in ("window_start", "window_end", node.time_column))
        else:
            named = NamedAggregates(tuple((a.alias, builtin_aggregate(a.fn, a.column)) for a in node.aggregates))
            function = WindowAggregate(AcceptsPartials(named) if pre is not None else named)
            schema = _funke_schema(inputs)
            result_cols = tuple((a.alias, a.output_type(schema, node.where()) or "double") for a in node.aggregates)
            if node.late_tag is None:  # only the key and aggregated columns travel to Python
                needed = [*keys, *(a.column for a in node.aggregates if a.column)]
                values = tuple(dict.fromkeys(needed))
        outputs = [Output(None, key_cols + bounds + result_cols)]
        if node.late_tag is not None:
            outputs.append(Output(node.late_tag, inputs))
        if node.function is not None:  # what the window function sends to a tag that is read
            late = node.late_tag.name if node.late_tag is not None else None
            outputs += [Output(t, _schema_columns(Schema.of(t.schema), f"side output {t.name!r}")) for t in side_tags if t.name != late]
        make = lambda: WindowOperator(spec, function)
        return Program(
            node.uid, make, keys, values, tuple(outputs), micros & set(values),
            user_rows=node.function is not None, window_result=True, window_time=node.time_column, buckets=buckets, types=types,
            preaggregate=pre,
        )
    if isinstance(node, nodes.KeyedProcess):
        function = node.function
        outputs = [Output(None, _schema_columns(node.output, node.where(), types))]
        outputs += [Output(t, _schema_columns(Schema.of(t.schema), f"side output {t.name!r}")) for t in side_tags]
        make = _process_factory(function, keyed=not isinstance(node, Process))
        return Program(node.uid, make, keys, values, tuple(outputs), micros, user_rows=True, buckets=buckets, types=types)
    raise ValueError(f"{node.where()}: no general operator for {node.kind} nodes")


def two_input_program(node: nodes.Node, buckets: int, first: DataFrame, second: DataFrame, side_tags: tuple[OutputTag, ...] = ()) -> Program:
    """The executable form of a two-input node (joins, connect, broadcast), given both input frames."""
    from funke.plan.connect import BroadcastProcess, CoProcess
    from funke.plan.joins import LEFT, IntervalJoin, WindowJoin
    from funke.semantics.joins import IntervalJoinOperator, PairColumns, WindowJoinOperator

    cols1, cols2 = _columns(first), _columns(second)
    keys1, keys2 = tuple(node.inputs[0].keys or ()), tuple(node.inputs[1].keys or ())
    broadcast = isinstance(node, BroadcastProcess)
    other = SecondInput(
        keys2, tuple(x for x, _ in cols2), frozenset(x for x, t in cols2 if t in _TIMESTAMPS), dict(cols2), broadcast=broadcast
    )
    known = dict(cols1)  # output columns typed by Spark where the plan could not: keys, projected columns
    if isinstance(node, IntervalJoin):
        known.update({c.alias: (dict(cols1) if c.side == LEFT else dict(cols2))[c.column] for c in node.columns})
    schema = node.schema or Schema(())
    main = Schema(tuple(Field(f.name, f.dtype or known.get(f.name)) for f in schema.fields))
    outputs = [Output(None, _schema_columns(main, node.where()))]
    if getattr(node, "emits_side_outputs", False):
        outputs += [Output(t, _schema_columns(Schema.of(t.schema), f"side output {t.name!r}")) for t in side_tags]
    window_result = False
    make: Any
    if isinstance(node, IntervalJoin):
        function = node.function if node.function is not None else PairColumns((c.side, c.column, c.alias) for c in node.columns)
        lower, upper, lo_in, up_in = node.lower_ms, node.upper_ms, node.lower_inclusive, node.upper_inclusive
        make = lambda: IntervalJoinOperator(function, lower=lower, upper=upper, lower_inclusive=lo_in, upper_inclusive=up_in)
    elif isinstance(node, WindowJoin):
        spec = WindowSpec.of(node.assigner)
        function = node.function
        make = lambda: WindowJoinOperator(spec, function)
        window_result = True
    elif isinstance(node, CoProcess):
        make = _co_process_factory(node.function, node.keyed)
    elif isinstance(node, BroadcastProcess):
        make = _broadcast_factory(node.function, node.descriptors, node.keyed)
    else:
        raise ValueError(f"{node.where()}: no two-input general operator for {node.kind} nodes")
    return Program(
        node.uid, make, keys1, tuple(x for x, _ in cols1), tuple(outputs), frozenset(x for x, t in cols1 if t in _TIMESTAMPS),
        user_rows=True, window_result=window_result, buckets=buckets, types=dict(cols1), second=other,
    )


def _process_factory(function: Any, keyed: bool) -> Any:
    if keyed:
        return lambda: KeyedProcessOperator(function)
    from funke.semantics.process import ProcessOperator

    return lambda: ProcessOperator(function)


def _co_process_factory(function: Any, keyed: bool) -> Any:
    from funke.semantics.co_process import CoProcessOperator, KeyedCoProcessOperator

    if keyed:
        return lambda: KeyedCoProcessOperator(function)
    return lambda: CoProcessOperator(function)


def _broadcast_factory(function: Any, descriptors: tuple[Any, ...], keyed: bool) -> Any:
    from funke.semantics.broadcast import BroadcastProcessOperator, KeyedBroadcastProcessOperator

    if keyed:
        return lambda: KeyedBroadcastProcessOperator(function, descriptors)
    return lambda: BroadcastProcessOperator(function, descriptors)


def _preaggregate(node: nodes.WindowAggregate, types: dict[str, str]) -> PreAggregate | None:
    """Pre-aggregation per pane when the window's result does not depend on element order or count."""
    a = node.assigner
    trigger = node.trigger
    if node.function is not None or node.evictor is not None or (trigger is not None and trigger.reads_elements):
        return None
    aggregates = tuple((x.fn, x.column) for x in node.aggregates)
    if isinstance(a, TumblingEventTimeWindows):
        pane, offset = a.size_ms, a.offset_ms
    elif isinstance(a, SlidingEventTimeWindows):
        pane, offset = math.gcd(a.size_ms, a.slide_ms), a.offset_ms
    elif isinstance(a, EventTimeSessionWindows) and a.gap_ms is not None and not a.is_dynamic and _event_time_only(trigger):
        # (Other triggers see the intermediate sessions an element-by-element merge goes through.)
        return PreAggregate(1, 0, aggregates, session_gap_ms=a.gap_ms)
    else:
        return None
    # Before the shuffle, late elements are not told apart (see PreAggregate.before_shuffle), and
    # the partial columns carry numbers only.
    before = (
        node.allowed_lateness_ms == 0
        and node.late_tag is None
        and all(c is None or types.get(c) in NUMERIC for _, c in aggregates)
    )
    return PreAggregate(pane, offset % pane, aggregates, before_shuffle=before)


def _event_time_only(trigger: Trigger | None) -> bool:
    if isinstance(trigger, PurgingTrigger):
        trigger = trigger.nested
    return trigger is None or type(trigger) is EventTimeTrigger


def _funke_schema(cols: tuple[tuple[str, str], ...]) -> Schema:
    return Schema(tuple(Field(c, t) for c, t in cols))


def _view(tagged: DataFrame, output: Output, index: int) -> DataFrame:
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    cols = []
    for name, t in output.columns:
        c = F.col(f"`{column_name(index, name)}`")
        cols.append((F.timestamp_micros(c) if t in _TIMESTAMPS else c).alias(name))
    return tagged.where(F.col(TAG) == output.label).select(*cols)


def main_view(tagged: DataFrame, program: Program) -> DataFrame:
    return _view(tagged, program.outputs[0], 0)


def side_view(tagged: DataFrame, program: Program, tag: OutputTag) -> DataFrame:
    for i, o in enumerate(program.outputs):
        if o.tag is not None and o.tag.name == tag.name:
            return _view(tagged, o, i)
    raise ValueError(f"{program.uid} has no side output {tag.name!r}")
