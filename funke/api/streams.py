"""DataStream, KeyedStream, WindowedStream: builders over immutable plan nodes (PyFlink's names)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from funke.api.joins import IntervalJoin, JoinedStreams
from funke.connectors.base import SinkSpec
from funke.connectors.sinks import CollectSink, PrintSink
from funke.connectors.tables import StaticTable, table
from funke.errors import PlanError
from funke.plan import nodes
from funke.plan.capabilities import LATENCY_FIRST, NATIVE, place
from funke.plan.expr import Alias, Col, Expr, to_expr
from funke.plan.probe import probe
from funke.plan.types import Field, Schema
from funke.plan.unkeyed import Process
from funke.semantics.evictors import Evictor
from funke.semantics.functions import AggregateFunction, KeyedProcessFunction, OutputTag, ProcessWindowFunction, ReduceFunction
from funke.semantics.process import ProcessFunction
from funke.semantics.rich import FilterFunction, FlatMapFunction, Function, KeySelector, Lifecycled, MapFunction
from funke.semantics.time import Duration, to_millis
from funke.semantics.triggers import Trigger
from funke.semantics.watermarks import WatermarkStrategy
from funke.semantics.window_functions import as_process_window_function
from funke.semantics.window_operator import WindowAggregate as WindowAggregateFn
from funke.semantics.window_operator import WindowProcess as WindowProcessFn
from funke.semantics.window_operator import WindowReduce, WindowSpec
from funke.semantics.windows import WindowAssigner

if TYPE_CHECKING:
    from funke.api.all_windows import AllWindowedStream
    from funke.api.connect import BroadcastConnectedStream, BroadcastStream, ConnectedStreams
    from funke.api.environment import StreamEnvironment


class DataStream:
    """A stream of rows. Every operator returns a new stream; nothing runs until ``execute()``."""

    def __init__(self, env: StreamEnvironment, node: nodes.Node):
        self._env = env
        self._node = node

    # -- facts ----------------------------------------------------------------------
    @property
    def node(self) -> nodes.Node:
        return self._node

    @property
    def schema(self) -> Schema | None:
        return self._node.schema

    @property
    def side_output_node(self) -> nodes.Node:
        """The operator whose side outputs ``get_side_output`` reads (the one that made this stream)."""
        return self._node

    @property
    def columns(self) -> tuple[str, ...]:
        if self.schema is None:
            raise PlanError("this stream's columns are known only to Spark (an unaliased SQL expression); alias it")
        return self.schema.names

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._node.label()}; {self.schema})"

    def _then(self, node: nodes.Node) -> DataStream:
        return DataStream(self._env, node)

    def uid(self, uid: str) -> DataStream:
        """Flink's ``uid``: a stable id for the operator that made this stream. Savepoints match
        state by it, so give one to every stateful operator (windows, ``process``) you may upgrade."""
        if not isinstance(uid, str) or not uid:
            raise PlanError(f"uid() takes a non-empty string, got {uid!r}")
        return type(self)(self._env, dataclasses.replace(self._node, explicit_uid=uid))

    def name(self, name: str) -> DataStream:
        """Flink's ``name``: how the operator that made this stream shows in ``explain()`` and errors."""
        return type(self)(self._env, dataclasses.replace(self._node, explicit_name=name))

    # -- stateless ------------------------------------------------------------------
    def filter(self, predicate: Expr | str | Callable[[dict[str, Any]], bool] | FilterFunction, *, vectorized: bool = False, name: str | None = None, uid: str | None = None) -> DataStream:
        """Keep rows where ``predicate`` holds: a column expression, a SQL string, a Python function
        or a ``FilterFunction`` (``filter(row)``, with ``open(runtime_context)``/``close()``).

        A Python function gets a row as a dict (or, with ``vectorized=True``, a pandas
        DataFrame, returning a boolean Series) and runs over Arrow batches.
        """
        if isinstance(predicate, Function):
            return self._python(predicate, "filter", None, vectorized, name, uid)
        if callable(predicate) and not isinstance(predicate, Expr):
            return self._python(predicate, "filter", None, vectorized, name, uid)
        return self._then(nodes.Filter((self._node,), predicate=to_expr(predicate), explicit_name=name, explicit_uid=uid))

    def map(self, fn: Callable[[dict[str, Any]], Any] | Mapping[str, Expr | str], *, output_schema: str | Schema | None = None, vectorized: bool = False, name: str | None = None, uid: str | None = None) -> DataStream:
        """One row out per row in: a Python function (dict in, dict or tuple out), a ``MapFunction``
        (``map(row)``, with ``open(runtime_context)``/``close()``) or ``{name: expression}``.

        ``output_schema`` declares the function's result columns (default: the input's).
        With ``vectorized=True`` the function maps a pandas DataFrame to a DataFrame.
        A ``MapFunction``'s ``open`` runs once per Spark task (a partition of a micro-batch)
        before its first row, ``close`` after its last.

        >>> import funke as fk
        >>> from funke.functions import MapFunction
        >>> class Scale(MapFunction):
        ...     def open(self, runtime_context):
        ...         self.factor = 10
        ...     def map(self, row):
        ...         return {"v": row["v"] * self.factor}
        >>> env = fk.StreamEnvironment(app="doc")
        >>> env.from_collection([{"v": 1}], schema="v bigint").map(Scale()).schema.names
        ('v',)
        """
        if isinstance(fn, Mapping):
            return self.select(*(to_expr(e).alias(k) for k, e in fn.items()))
        if callable(getattr(fn, "output_schema", None)):  # a library's batch function (fk.ml.predict) knows its output
            if output_schema is not None:
                raise PlanError(f"map({fn!r}): its output is the stream's columns and its own; drop output_schema=")
            output_schema, vectorized = fn.output_schema(self.schema), True
        return self._python(fn, "map", output_schema, vectorized, name, uid)

    def flat_map(self, fn: Callable[[dict[str, Any]], Any] | FlatMapFunction, *, output_schema: str | Schema | None = None, vectorized: bool = False, name: str | None = None, uid: str | None = None) -> DataStream:
        """Zero or more rows out per row in (the function returns or yields them); or a ``FlatMapFunction``."""
        return self._python(fn, "flat_map", output_schema, vectorized, name, uid)

    def _python(self, fn: Callable[..., Any] | Function, mode: str, output_schema: str | Schema | None, vectorized: bool, name: str | None, uid: str | None) -> DataStream:
        if isinstance(fn, Function):
            fn = rich_call(fn, mode)
        if not callable(fn):
            raise PlanError(f"{mode}() takes a function or an expression, got {type(fn).__name__}")
        out = Schema.of(output_schema)
        node = nodes.PythonFunction((self._node,), fn=fn, mode=mode, output=out, vectorized=vectorized, explicit_name=name, explicit_uid=uid)
        if not vectorized and not isinstance(fn, Lifecycled):  # (never call a function before its open())
            probe(fn, mode, self.schema, out, node.where())
        return self._then(node)

    def select(self, *exprs: Expr | str, name: str | None = None, uid: str | None = None) -> DataStream:
        """Columns by name, ``fk.col`` expressions or SQL strings (``"price * qty AS total"``)."""
        return self._then(nodes.Select((self._node,), exprs=tuple(to_expr(e) for e in exprs), explicit_name=name, explicit_uid=uid))

    def with_column(self, name: str, value: Expr | str) -> DataStream:
        """Add (or replace) one column, keeping the others in place."""
        e = to_expr(value)
        cols: list[Expr] = [Col(c) if c != name else Alias(e, name) for c in self.columns]
        if name not in self.columns:
            cols.append(Alias(e, name))
        return self.select(*cols)

    def union(self, *others: DataStream) -> DataStream:
        if not others:
            raise PlanError("union() needs at least one other stream")
        for o in others:
            if o._env is not self._env:
                raise PlanError("union(): streams must come from the same StreamEnvironment")
        return self._then(nodes.Union((self._node, *(o._node for o in others))))

    def join(self, other: StaticTable | Any, on: str | list[str] | None = None, *, how: str = "inner", name: str | None = None) -> Any:
        """Join each row with a static table (broadcast): ``views.join(campaigns, on="ad_id")``;
        or, given another stream and no ``on``, Flink's window join:
        ``a.join(b).where(ka).equal_to(kb).window(assigner).apply(JoinFunction, output_schema=...)``."""
        if isinstance(other, DataStream):
            if on is not None:
                raise PlanError(
                    "join(other_stream) is Flink's window join: a.join(b).where(ka).equal_to(kb).window(...).apply(...); "
                    "on= is for static tables (or use interval_join on keyed streams)"
                )
            return JoinedStreams(self, other, co_group=False)
        if on is None:
            raise PlanError("join(table, on=...) needs the join column(s)")
        if not isinstance(other, StaticTable):
            other = table(other)
        keys = (on,) if isinstance(on, str) else tuple(on)
        return self._then(nodes.LookupJoin((self._node,), table=other, on=keys, how=how, explicit_name=name))

    def connect(self, other: DataStream | BroadcastStream) -> ConnectedStreams | BroadcastConnectedStream:
        """Flink's ``connect``: one operator over two streams of different columns.

        ``a.connect(b)`` gives ``ConnectedStreams`` (``map``, ``flat_map``, ``process``,
        ``key_by(key_a, key_b)``); ``stream.connect(rules.broadcast(descriptor))`` gives the
        broadcast state pattern (``process(KeyedBroadcastProcessFunction | BroadcastProcessFunction)``).
        """
        from funke.api.connect import BroadcastConnectedStream, BroadcastStream, ConnectedStreams  # (circular at module level)

        if isinstance(other, BroadcastStream):
            return BroadcastConnectedStream(self, other)
        if not isinstance(other, DataStream):
            raise PlanError(f"connect() takes another stream or a broadcast stream, got {type(other).__name__}")
        if other._env is not self._env:
            raise PlanError("connect(): both streams must come from the same StreamEnvironment")
        return ConnectedStreams(self, other)

    def broadcast(self, *descriptors: Any) -> BroadcastStream:
        """This stream as broadcast state (Flink's broadcast state pattern): every row reaches every
        instance of the operator it is connected to, which keeps it in the ``MapStateDescriptor`` s given."""
        from funke.api.connect import BroadcastStream  # (circular at module level: it imports this module)

        return BroadcastStream(self, tuple(descriptors))

    def co_group(self, other: DataStream) -> JoinedStreams:
        """Flink's co-group: ``a.co_group(b).where(ka).equal_to(kb).window(assigner).apply(CoGroupFunction, output_schema=...)``."""
        return JoinedStreams(self, other, co_group=True)

    def assign_timestamps_and_watermarks(self, strategy: WatermarkStrategy) -> DataStream:
        if not isinstance(strategy, WatermarkStrategy):
            raise PlanError(f"expected a WatermarkStrategy, got {type(strategy).__name__}")
        return self._then(nodes.Watermark((self._node,), strategy=strategy))

    def key_by(
        self,
        key: str | list[str] | tuple[str, ...] | Callable[[dict[str, Any]], Any] | KeySelector,
        *,
        key_type: str = "string",
        nulls: bool = False,
    ) -> KeyedStream:
        """Partition by key columns, or by ``key(row)`` or a ``KeySelector``'s ``get_key(row)`` (stored in a
        column named ``key``). A row whose key is NULL goes to the dead letters, as Flink's ``keyBy`` refuses
        it; ``nulls=True`` makes NULL a key value like any other (Flink SQL's ``GROUP BY`` and ``PARTITION BY``)."""
        if isinstance(key, KeySelector):
            out = (self.schema or Schema(())).with_field(Field("key", key_type))
            selector = Lifecycled(key, _with_key, f"key_by {type(key).__qualname__}")
            keyed = self.map(selector, output_schema=out, name=f"key_by({type(key).__qualname__})")
            return KeyedStream(self._env, nodes.KeyBy((keyed._node,), key_columns=("key",), nulls=nulls))
        if callable(key) and not isinstance(key, str):
            fn = key
            out = (self.schema or Schema(())).with_field(Field("key", key_type))
            keyed = self.map(lambda row, _f=fn: {**row, "key": _f(row)}, output_schema=out, name=f"key_by({getattr(fn, '__qualname__', 'fn')})")
            return KeyedStream(self._env, nodes.KeyBy((keyed._node,), key_columns=("key",), nulls=nulls))
        keys = (key,) if isinstance(key, str) else tuple(key)
        return KeyedStream(self._env, nodes.KeyBy((self._node,), key_columns=keys, nulls=nulls))

    def get_side_output(self, tag: OutputTag) -> DataStream:
        """The rows this stream's operator sent to ``tag`` (late data, ``ctx.output(tag, row)``)."""
        if not isinstance(tag, OutputTag):
            raise PlanError(f"get_side_output() takes an OutputTag, got {tag!r}")
        return self._then(nodes.SideOutput((self._node,), tag=tag))

    def window(self, assigner: WindowAssigner) -> WindowedStream:
        raise PlanError("window() needs a keyed stream: call key_by(...) first, or use window_all(...) for one window over all elements")

    def window_all(self, assigner: WindowAssigner) -> AllWindowedStream:
        """Flink's ``windowAll``: windows over all elements of the stream, not per key.

        Every element goes to one operator instance (as in Flink, where it runs with parallelism
        1): funke keys them all by one constant. Results have ``window_start``, ``window_end`` and
        the function's columns; ``.reduce``, ``.aggregate``, ``.process(ProcessAllWindowFunction)``,
        ``.apply(AllWindowFunction)`` and the built-in aggregates as on a keyed window.

        >>> import funke as fk
        >>> from funke.windows import TumblingEventTimeWindows
        >>> env = fk.StreamEnvironment(app="doc")
        >>> wm = fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("t")
        >>> s = env.from_collection([], "v bigint, t timestamp", watermarks=wm)
        >>> s.window_all(TumblingEventTimeWindows.of(fk.seconds(10))).sum("v").schema.names
        ('window_start', 'window_end', 'v')
        """
        from funke.api.all_windows import AllWindowedStream  # (circular at module level: it imports this module)

        return AllWindowedStream.over(self, assigner)

    def count_window_all(self, size: int, slide: int | None = None) -> AllWindowedStream:
        """Flink's ``countWindowAll``: every ``size`` elements of the whole stream (or the last ``size`` every ``slide``)."""
        from funke.api.all_windows import AllWindowedStream  # (circular at module level: it imports this module)

        return AllWindowedStream.counting(self, size, slide)

    def process(self, function: ProcessFunction, *, output_schema: str | Schema | None = None, name: str | None = None, uid: str | None = None) -> DataStream:
        """Flink's ``ProcessFunction`` on a stream that is not keyed: ``process_element(value, ctx)`` yields
        rows of ``output_schema`` per element, ``ctx.timestamp()``, ``ctx.timer_service()`` (the watermark,
        processing time; timers need ``key_by``), side outputs by ``ctx.output(tag, row)`` or ``yield tag, row``.

        It runs as a funke operator; each Spark partition's elements reach it in their order.
        """
        if not isinstance(function, ProcessFunction):
            hint = " (a KeyedProcessFunction needs key_by(...) first)" if isinstance(function, KeyedProcessFunction) else ""
            raise PlanError(f"process() on a stream that is not keyed takes a ProcessFunction subclass, got {function!r}{hint}")
        out = Schema.of(output_schema)
        if out is None:
            raise PlanError("process() needs output_schema=... naming the columns the function yields")
        return self._then(Process((self._node,), function=function, output=out, explicit_name=name, explicit_uid=uid))

    # -- sinks ----------------------------------------------------------------------
    def sink_to(self, sink: SinkSpec, *, uid: str | None = None, name: str | None = None) -> SinkSpec:
        """Send the stream to ``sink``; returns the sink (a collect() sink holds the rows)."""
        if not isinstance(sink, SinkSpec):
            raise PlanError(f"sink_to() takes a sink from fk.sinks, got {type(sink).__name__}")
        partition_by = getattr(sink, "partition_by", ())
        if partition_by and self._node.schema is not None:
            for c in partition_by:
                self._node.schema.field(c, node=f"the partition columns of {sink.describe()}")
        self._env._add_sink(nodes.Sink((self._node,), spec=sink, explicit_uid=uid, explicit_name=name))
        return sink

    def print(self, limit: int = 20) -> PrintSink:
        return self.sink_to(PrintSink(limit))  # type: ignore[return-value]

    def collect(self) -> CollectSink:
        """Shorthand for ``sink_to(fk.sinks.collect())``."""
        return self.sink_to(CollectSink())  # type: ignore[return-value]


class KeyedStream(DataStream):
    """A stream partitioned by key: rolling aggregates and windows."""

    @property
    def key_columns(self) -> tuple[str, ...]:
        assert self._node.keys is not None
        return self._node.keys

    def window(self, assigner: WindowAssigner) -> WindowedStream:
        if not isinstance(assigner, WindowAssigner):
            raise PlanError(f"window() takes a window assigner (e.g. TumblingEventTimeWindows.of(fk.seconds(10))), got {assigner!r}")
        return WindowedStream(self._env, self._node, assigner)

    def interval_join(self, other: KeyedStream) -> IntervalJoin:
        """Flink's interval join: ``.between(lower, upper)`` then ``.select(...)`` or ``.process(ProcessJoinFunction, ...)``."""
        return IntervalJoin(self, other)

    def _rolling(self, fn: str, column: str | None) -> DataStream:
        agg = nodes.Aggregate(fn, column, column or fn)
        return self._then(nodes.RollingAggregate((self._node,), aggregate=agg))

    def reduce(self, fn: ReduceFunction | Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]], *, name: str | None = None, uid: str | None = None) -> DataStream:
        """Rolling reduce: the key's first element, then ``fn(accumulated, element)`` for each next one.

        Rows are dicts with the stream's columns; ``fn`` returns a dict with the same columns.
        """
        if not callable(fn) and not isinstance(fn, ReduceFunction):
            raise PlanError(f"reduce() takes a function (a, b) -> row or a ReduceFunction, got {fn!r}")
        return self._then(nodes.RollingAggregate((self._node,), reduce_fn=fn, explicit_name=name, explicit_uid=uid))

    def process(self, function: KeyedProcessFunction, *, output_schema: str | Schema | None = None, name: str | None = None, uid: str | None = None) -> DataStream:
        """Run ``function`` per element with keyed state and timers; it yields rows of ``output_schema``
        (a library's function that knows its output, such as ``fk.ml.online``, gives it itself).

        Side outputs: ``ctx.output(tag, row)`` in the function, ``stream.get_side_output(tag)`` here,
        with ``OutputTag(name, schema)``. On Spark, ``open()`` runs at the start of each micro-batch.
        """
        if not isinstance(function, KeyedProcessFunction):
            raise PlanError(f"process() on a keyed stream takes a KeyedProcessFunction subclass, got {function!r}")
        if output_schema is None and callable(getattr(function, "output_schema", None)):
            output_schema = function.output_schema(self.schema)
        out = Schema.of(output_schema)
        if out is None:
            raise PlanError("process() needs output_schema=... naming the columns the function yields")
        return self._then(nodes.KeyedProcess((self._node,), function=function, output=out, explicit_name=name, explicit_uid=uid))

    def deduplicate(self, *, name: str | None = None, uid: str | None = None) -> DataStream:
        """Each key's first element, once; later elements of a key are dropped (Flink SQL's
        deduplication keeping the first row, on processing time). Runs on Spark's ``dropDuplicates``,
        also in real-time mode; the keys seen are state for the job's life."""
        return self._then(nodes.Deduplicate((self._node,), explicit_name=name, explicit_uid=uid))

    def count_window(self, size: int, slide: int | None = None) -> WindowedStream:
        """Flink's ``countWindow``: every ``size`` elements of a key (tumbling), or the last ``size`` every ``slide``."""
        if size <= 0 or (slide is not None and slide <= 0):
            raise PlanError(f"count_window sizes must be positive, got size={size}, slide={slide}")
        spec = WindowSpec.count_window(size, slide)
        w = WindowedStream(self._env, self._node, spec.assigner)
        w._trigger, w._evictor = spec.trigger, spec.evictor
        return w

    def sum(self, column: str) -> DataStream:
        """Rolling sum: for each element, the element with ``column`` replaced by the key's running sum."""
        return self._rolling("sum", column)

    def min(self, column: str) -> DataStream:
        return self._rolling("min", column)

    def max(self, column: str) -> DataStream:
        return self._rolling("max", column)

    def count(self) -> DataStream:
        """Rolling count: each element with a ``count`` column, the key's running count."""
        return self._rolling("count", None)


class WindowedStream:
    """``key_by(...).window(assigner)``: say what to compute per window and key."""

    def __init__(self, env: StreamEnvironment, keyed: nodes.Node, assigner: WindowAssigner):
        self._env = env
        self._keyed = keyed
        self._assigner = assigner
        self._trigger: Any = None
        self._lateness_ms = 0
        self._late_tag: Any = None
        self._evictor: Any = None
        self._path_hint: str | None = None

    def trigger(self, trigger: Trigger) -> WindowedStream:
        if not isinstance(trigger, Trigger):
            raise PlanError(f"trigger() takes a Trigger from funke.triggers (or your subclass), got {trigger!r}")
        self._trigger = trigger
        return self

    def on_path(self, path: str) -> WindowedStream:
        """Run this window on ``"general"`` (funke's operator) even where Spark's native one is exact.

        For comparing the two paths; the planner's choice (``"auto"``) is the fast one.
        """
        if path not in ("auto", "general"):
            raise PlanError(f"on_path() takes 'auto' or 'general', got {path!r}")
        self._path_hint = None if path == "auto" else path
        return self

    def evictor(self, evictor: Evictor) -> WindowedStream:
        if not isinstance(evictor, Evictor):
            raise PlanError(f"evictor() takes an Evictor from funke.evictors, got {evictor!r}")
        self._evictor = evictor
        return self

    def allowed_lateness(self, lateness: Duration) -> WindowedStream:
        ms = to_millis(lateness, what="allowed lateness")
        if ms < 0:
            raise PlanError(f"allowed lateness must not be negative, got {ms} ms")
        self._lateness_ms = ms
        return self

    def side_output_late_data(self, tag: OutputTag) -> WindowedStream:
        """Send elements too late for any window to ``tag`` (read it with ``get_side_output(tag)``)."""
        if not isinstance(tag, OutputTag):
            raise PlanError(f"side_output_late_data() takes an OutputTag, got {tag!r}")
        self._late_tag = tag
        return self

    def _aggregate(self, *aggs: nodes.Aggregate, function: Any = None, output_schema: str | Schema | None = None) -> DataStream:
        node = nodes.WindowAggregate(
            (self._keyed,),
            assigner=self._assigner,
            aggregates=aggs,
            trigger=self._trigger,
            allowed_lateness_ms=self._lateness_ms,
            late_tag=self._late_tag,
            evictor=self._evictor,
            function=function,
            function_schema=Schema.of(output_schema) if output_schema is not None else None,
            path_hint=self._path_hint,
        )
        if self._path_hint is None and self._assigner.is_event_time:
            self._env._mode_windows += 1  # (their path depends on the latency mode: set it first)
            if self._env.latency_mode == LATENCY_FIRST and place(node).path == NATIVE:
                node = dataclasses.replace(node, path_hint=LATENCY_FIRST)
        return DataStream(self._env, node)

    #: Whether window functions get the key (False over ``window_all``: the All- forms).
    _keyed_functions = True

    def _window_function(self, function: Any, what: str) -> ProcessWindowFunction:
        try:
            return as_process_window_function(function, keyed=self._keyed_functions)
        except TypeError as e:
            raise PlanError(f"{what}: {e}") from None

    def reduce(self, fn: ReduceFunction | Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]], window_function: Any = None, *, output_schema: str | Schema | None = None) -> DataStream:
        """Reduce each window's elements (dict rows) with ``fn(a, b) -> row``; the result has the input's columns.

        With ``window_function`` (a ProcessWindowFunction or WindowFunction), the window's one
        reduced value goes to it (as its only element) and it yields rows of ``output_schema``.
        """
        if not callable(fn) and not isinstance(fn, ReduceFunction):
            raise PlanError(f"reduce() takes a function (a, b) -> row or a ReduceFunction, got {fn!r}")
        if window_function is None:
            return self._aggregate(function=WindowReduce(fn))
        if output_schema is None:
            raise PlanError("reduce(fn, window_function) needs output_schema=... naming the columns the window function yields")
        return self._aggregate(function=WindowReduce(fn, self._window_function(window_function, "reduce()")), output_schema=output_schema)

    def process(self, fn: ProcessWindowFunction, *, output_schema: str | Schema) -> DataStream:
        """``fn.process(key, ctx, elements)`` yields rows of ``output_schema`` per window firing."""
        return self._aggregate(function=WindowProcessFn(self._window_function(fn, "process()")), output_schema=output_schema)

    def apply(self, fn: Any, *, output_schema: str | Schema) -> DataStream:
        """Flink's ``apply``: ``fn.apply(key, window, inputs)`` (a ``WindowFunction``) yields rows of
        ``output_schema`` per window firing (``window.start``, ``window.end``, ``window.max_timestamp``)."""
        return self._aggregate(function=WindowProcessFn(self._window_function(fn, "apply()")), output_schema=output_schema)

    def count(self, alias: str = "count") -> DataStream:
        return self._aggregate(nodes.Aggregate("count", None, alias))

    def sum(self, column: str, alias: str | None = None) -> DataStream:
        return self._aggregate(nodes.Aggregate("sum", column, alias or column))

    def min(self, column: str, alias: str | None = None) -> DataStream:
        return self._aggregate(nodes.Aggregate("min", column, alias or column))

    def max(self, column: str, alias: str | None = None) -> DataStream:
        return self._aggregate(nodes.Aggregate("max", column, alias or column))

    def avg(self, column: str, alias: str | None = None) -> DataStream:
        return self._aggregate(nodes.Aggregate("avg", column, alias or column))

    def aggregate(self, function: AggregateFunction | None = None, window_function: Any = None, *, output_schema: str | Schema | None = None, **named: tuple[str, str | None] | str) -> DataStream:
        """An ``AggregateFunction`` (its result a dict of ``output_schema``'s columns), or several
        built-ins at once: ``.aggregate(n="count", total=("sum", "price"))``. With ``window_function``
        (a ProcessWindowFunction or WindowFunction) the aggregate's result goes to it, which yields
        rows of ``output_schema``."""
        if function is not None:
            if not isinstance(function, AggregateFunction) or named:
                raise PlanError("aggregate() takes an AggregateFunction (with output_schema=...) or named built-ins, not both")
            if output_schema is None:
                raise PlanError("aggregate(AggregateFunction) needs output_schema=... naming the result's columns")
            wf = None if window_function is None else self._window_function(window_function, "aggregate()")
            return self._aggregate(function=WindowAggregateFn(function, wf), output_schema=output_schema)
        aggs = []
        for alias, spec in named.items():
            fn, column = (spec, None) if isinstance(spec, str) else spec
            if fn not in nodes.Aggregate.FUNCTIONS:
                raise PlanError(f"unknown aggregate {fn!r}: use one of {', '.join(sorted(nodes.Aggregate.FUNCTIONS))}")
            if fn != "count" and column is None:
                raise PlanError(f"aggregate {alias}={fn!r} needs a column: ({fn!r}, 'column')")
            aggs.append(nodes.Aggregate(fn, column, alias))
        return self._aggregate(*aggs)


def _with_key(selector: KeySelector, row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "key": selector.get_key(row)}


def _call_map(fn: MapFunction, row: Any) -> Any:
    return fn.map(row)


def _call_flat_map(fn: FlatMapFunction, row: Any) -> Any:
    return fn.flat_map(row)


def _call_filter(fn: FilterFunction, row: Any) -> Any:
    return fn.filter(row)


_RICH = {"map": (MapFunction, _call_map), "flat_map": (FlatMapFunction, _call_flat_map), "filter": (FilterFunction, _call_filter)}


def rich_call(function: Function, mode: str) -> Lifecycled:
    """A ``MapFunction`` / ``FlatMapFunction`` / ``FilterFunction`` as the row function of ``mode``, with its lifecycle."""
    wanted, call = _RICH[mode]
    if not isinstance(function, wanted):
        raise PlanError(f"{mode}() takes a function or a {wanted.__name__}, got {type(function).__name__}")
    return Lifecycled(function, call, f"{mode} {type(function).__qualname__}")
