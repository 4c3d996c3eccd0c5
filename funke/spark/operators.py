"""Plan nodes on the general path → ``funke.spark.general.Program``s, and views of their tagged output."""

from __future__ import annotations

import math
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from funke.plan import nodes as n
from funke.plan.types import NUMERIC, Field, Schema, normalize_type
from funke.plan.unkeyed import Process
from funke.semantics.functions import AcceptsPartials, NamedAggregates, OutputTag, builtin_aggregate
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.rolling import RollingOperator
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.triggers import EventTimeTrigger, PurgingTrigger, Trigger
from funke.semantics.windows import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows
from funke.spark import general as g

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


def needs_time(node: n.Node) -> bool:
    """Whether the operator must run every micro-batch (timers, windows), not only when elements arrive."""
    return not isinstance(node, (n.RollingAggregate, Process))


def general_program(node: n.Node, buckets: int, df: DataFrame, side_tags: tuple[OutputTag, ...] = ()) -> g.Program:
    """The executable form of a general-path node, given its input frame (Spark's resolved types).

    ``side_tags`` are the tags read downstream (``get_side_output``) of a node that may
    write to any tag (a KeyedProcessFunction).
    """
    inputs = _columns(df)
    types = dict(inputs)
    values = tuple(c for c, _ in inputs)
    micros = frozenset(c for c, t in inputs if t in _TIMESTAMPS)
    keys = tuple(node.input.keys or ())
    if isinstance(node, n.RollingAggregate):
        main = list(inputs)
        if node.aggregate is not None and node.aggregate.fn == "count":
            main.append((node.aggregate.alias, "bigint"))
        agg, reduce_fn = node.aggregate, node.reduce_fn
        if reduce_fn is not None:
            make = lambda: RollingOperator.reducing(reduce_fn)  # noqa: E731
        else:
            assert agg is not None
            make = lambda: RollingOperator.builtin(agg.fn, agg.column, agg.alias)  # noqa: E731
        return g.Program(node.uid, make, keys, values, (g.Output(None, tuple(main)),), micros, user_rows=reduce_fn is not None, buckets=buckets, types=types)
    if isinstance(node, n.WindowAggregate):
        spec = WindowSpec.of(
            node.assigner,
            trigger=node.trigger,
            evictor=node.evictor,
            allowed_lateness=node.allowed_lateness_ms,
            late_data_tag=node.late_tag,
        )
        key_cols = tuple((k, types[k]) for k in keys)
        bounds = (("window_start", "timestamp"), ("window_end", "timestamp"))
        pre = _preaggregate(node, types)  # (None for a window function)
        if node.function is not None:
            function = node.function
            declared = _schema_columns(node.function_schema, node.where(), types) if node.function_schema is not None else inputs
            result_cols = tuple((c, t) for c, t in declared if c not in keys and c not in ("window_start", "window_end"))
        else:
            named = NamedAggregates(tuple((a.alias, builtin_aggregate(a.fn, a.column)) for a in node.aggregates))
            function = WindowAggregate(AcceptsPartials(named) if pre is not None else named)
            schema = _funke_schema(inputs)
            result_cols = tuple((a.alias, a.output_type(schema, node.where()) or "double") for a in node.aggregates)
            if node.late_tag is None:  # only the key and aggregated columns travel to Python
                needed = [*keys, *(a.column for a in node.aggregates if a.column)]
                values = tuple(dict.fromkeys(needed))
        outputs = [g.Output(None, key_cols + bounds + result_cols)]
        if node.late_tag is not None:
            outputs.append(g.Output(node.late_tag, inputs))
        if node.function is not None:  # what the window function sends to a tag that is read
            late = node.late_tag.name if node.late_tag is not None else None
            outputs += [g.Output(t, _schema_columns(Schema.of(t.schema), f"side output {t.name!r}")) for t in side_tags if t.name != late]
        make = lambda: WindowOperator(spec, function)  # noqa: E731
        return g.Program(
            node.uid, make, keys, values, tuple(outputs), micros & set(values),
            user_rows=node.function is not None, window_result=True, buckets=buckets, types=types,
            preaggregate=pre,
        )
    if isinstance(node, n.KeyedProcess):
        function = node.function
        outputs = [g.Output(None, _schema_columns(node.output, node.where(), types))]
        outputs += [g.Output(t, _schema_columns(Schema.of(t.schema), f"side output {t.name!r}")) for t in side_tags]
        make = _process_factory(function, keyed=not isinstance(node, Process))
        return g.Program(node.uid, make, keys, values, tuple(outputs), micros, user_rows=True, buckets=buckets, types=types)
    raise ValueError(f"{node.where()}: no general operator for {node.kind} nodes")


def two_input_program(node: n.Node, buckets: int, first: DataFrame, second: DataFrame, side_tags: tuple[OutputTag, ...] = ()) -> g.Program:
    """The executable form of a two-input node (joins, connect, broadcast), given both input frames."""
    from funke.plan import connect as c
    from funke.plan import joins as j
    from funke.semantics.joins import IntervalJoinOperator, PairColumns, WindowJoinOperator

    cols1, cols2 = _columns(first), _columns(second)
    keys1, keys2 = tuple(node.inputs[0].keys or ()), tuple(node.inputs[1].keys or ())
    broadcast = isinstance(node, c.BroadcastProcess)
    other = g.SecondInput(
        keys2, tuple(x for x, _ in cols2), frozenset(x for x, t in cols2 if t in _TIMESTAMPS), dict(cols2), broadcast=broadcast
    )
    known = dict(cols1)  # output columns typed by Spark where the plan could not: keys, projected columns
    if isinstance(node, j.IntervalJoin):
        known.update({c.alias: (dict(cols1) if c.side == j.LEFT else dict(cols2))[c.column] for c in node.columns})
    schema = node.schema or Schema(())
    main = Schema(tuple(Field(f.name, f.dtype or known.get(f.name)) for f in schema.fields))
    outputs = [g.Output(None, _schema_columns(main, node.where()))]
    if getattr(node, "emits_side_outputs", False):
        outputs += [g.Output(t, _schema_columns(Schema.of(t.schema), f"side output {t.name!r}")) for t in side_tags]
    window_result = False
    make: Any
    if isinstance(node, j.IntervalJoin):
        function = node.function if node.function is not None else PairColumns((c.side, c.column, c.alias) for c in node.columns)
        lower, upper, lo_in, up_in = node.lower_ms, node.upper_ms, node.lower_inclusive, node.upper_inclusive
        make = lambda: IntervalJoinOperator(function, lower=lower, upper=upper, lower_inclusive=lo_in, upper_inclusive=up_in)  # noqa: E731
    elif isinstance(node, j.WindowJoin):
        spec = WindowSpec.of(node.assigner)
        function = node.function
        make = lambda: WindowJoinOperator(spec, function)  # noqa: E731
        window_result = True
    elif isinstance(node, c.CoProcess):
        make = _co_process_factory(node.function, node.keyed)
    elif isinstance(node, c.BroadcastProcess):
        make = _broadcast_factory(node.function, node.descriptors, node.keyed)
    else:
        raise ValueError(f"{node.where()}: no two-input general operator for {node.kind} nodes")
    return g.Program(
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


def _preaggregate(node: n.WindowAggregate, types: dict[str, str]) -> g.PreAggregate | None:
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
        return g.PreAggregate(1, 0, aggregates, session_gap_ms=a.gap_ms)
    else:
        return None
    # Before the shuffle, late elements are not told apart (see PreAggregate.before_shuffle), and
    # the partial columns carry numbers only.
    before = (
        node.allowed_lateness_ms == 0
        and node.late_tag is None
        and all(c is None or types.get(c) in NUMERIC for _, c in aggregates)
    )
    return g.PreAggregate(pane, offset % pane, aggregates, before_shuffle=before)


def _event_time_only(trigger: Trigger | None) -> bool:
    if isinstance(trigger, PurgingTrigger):
        trigger = trigger.nested
    return trigger is None or type(trigger) is EventTimeTrigger


def _funke_schema(cols: tuple[tuple[str, str], ...]) -> Schema:
    return Schema(tuple(Field(c, t) for c, t in cols))


def _view(tagged: DataFrame, output: g.Output, index: int) -> DataFrame:
    cols = []
    for name, t in output.columns:
        c = F.col(f"`{g.column_name(index, name)}`")
        cols.append((F.timestamp_micros(c) if t in _TIMESTAMPS else c).alias(name))
    return tagged.where(F.col(g.TAG) == output.label).select(*cols)


def main_view(tagged: DataFrame, program: g.Program) -> DataFrame:
    return _view(tagged, program.outputs[0], 0)


def side_view(tagged: DataFrame, program: g.Program, tag: OutputTag) -> DataFrame:
    for i, o in enumerate(program.outputs):
        if o.tag is not None and o.tag.name == tag.name:
            return _view(tagged, o, i)
    raise ValueError(f"{program.uid} has no side output {tag.name!r}")


def pre_shuffled(elements: DataFrame, program: g.Program, now: Column) -> DataFrame:
    """``elements`` (``BUCKET``, ``TS``, the keys and the aggregated columns: only what the partials
    need crosses to Python) pre-aggregated per partition, bucket, key and pane before the shuffle
    (``g.PreAggregate.before_shuffle``): a few partial rows travel to the buckets instead of every
    element, with the control columns of element rows (``now``: their processing time)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import DoubleType, IntegralType, LongType, StructField, StructType

    pre = program.preaggregate
    assert pre is not None and pre.before_shuffle
    spark_types = {f.name: f.dataType for f in elements.schema.fields}
    fields = [StructField(c, spark_types[c]) for c in (g.BUCKET, g.TS, *program.keys)]
    fields.append(StructField(g.PARTIAL_N, LongType()))
    if program.same_batch_bound_ms is not None:
        fields.append(StructField(g.PARTIAL_MAX, spark_types[g.TS]))
    for i, (fn, column) in enumerate(pre.aggregates):
        names = g.partial_column(i, fn)
        if not names:
            continue
        t = spark_types[column]
        if fn in ("sum", "avg"):  # a sum carried as Python would hold it: integers exact, else a double
            t = LongType() if isinstance(t, IntegralType) else DoubleType()
        fields.append(StructField(names[0], t))
        if fn == "avg":
            fields.append(StructField(names[1], LongType()))
    schema = StructType(fields)
    partials = elements.mapInArrow(g.pre_shuffle(program, to_arrow_schema(schema)), schema)
    nothing = F.lit(None).cast("bigint")
    return partials.select(
        g.BUCKET, nothing.alias(g.SEQ), F.lit(False).alias(g.CONTROL), g.TS, nothing.alias(g.WM), now.alias(g.PT),
        *(f"`{f.name}`" for f in fields[2:]),
    )
