"""PyFlink's ``DataStream`` and ``KeyedStream`` as builders of funke streams.

A :class:`DataStream` is a funke stream (``_base``: rows with the pickled ``value``, maybe ``pf_ts``)
plus the Python functions chained onto it since (``_steps``), which run as one funke ``flat_map``
when the chain ends (at a key_by, a union, a process function, a sink). ``_type`` is the declared
type of the values after the chain; ``_convert`` the type the chain's input is converted to first,
where PyFlink would have serialized it on the way (``_wire``).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any, Self

import funke as fk
from funke.errors import PlanError, UnsupportedError
from funke.pyflink.common.typeinfo import TupleTypeInfo, TypeInformation, Types
from funke.pyflink.datastream import _adapters as adapters
from funke.pyflink.datastream._sinks import PrintLines
from funke.pyflink.datastream._wire import KEY, LINE, TS, VALUE, Chain, Reader, Step, Tail, call_chain, loads, print_prefix
from funke.semantics.rich import FilterFunction, FlatMapFunction, Function, KeySelector, Lifecycled, MapFunction

__all__ = ["CloseableIterator", "DataStream", "DataStreamSink", "KeyedStream"]


def _callable(func: Any, method: str, wanted: type, what: str) -> Callable[[Any], Any]:
    if isinstance(func, wanted):
        return getattr(func, method)
    if isinstance(func, Function) or not callable(func):
        raise TypeError(f"{what}() takes a {wanted.__name__} or a callable, got {func!r}")
    return func


def _name(func: Any) -> str:
    """A user function's name in plans: a function's own name, an object's class."""
    if isinstance(func, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType)):
        return func.__qualname__
    return type(func).__name__


class DataStream:
    """A stream of Python values (PyFlink's ``DataStream``)."""

    def __init__(
        self,
        env: Any,
        base: fk.DataStream,
        *,
        type_info: TypeInformation | None = None,
        reader: Reader | None = None,
        convert: TypeInformation | None = None,
        steps: tuple[Step, ...] = (),
        late_tags: tuple[str, ...] = (),
        marks: Any = None,
        known: bool = False,
    ) -> None:
        self._env, self._base, self._type = env, base, type_info
        self._reader = reader or Reader()
        self._convert, self._steps, self._late_tags = convert, steps, late_tags
        #: The PyFlink WatermarkStrategy that gave the values their timestamps (None: none did).
        self._marks = marks
        #: The base's values are in their declared type's form already (a typed source, a reader).
        self._known = known

    # -- facts -----------------------------------------------------------------------------
    @property
    def _base_ts(self) -> bool:
        schema = self._base.schema
        return schema is not None and TS in schema.names

    @property
    def _stamps(self) -> bool:
        """A TimestampAssigner runs in this stream's chain (its watermark follows the chain)."""
        return any(s.kind == "stamp" for s in self._steps)

    @property
    def _converted(self) -> bool:
        """The values are in their declared type's form, as PyFlink's serializer gives them back (so an
        operator after a boundary need not convert them again): no map or flat_map since a place where
        they were converted (a typed source, a shuffle, a union)."""
        if any(s.kind in ("map", "flat_map") for s in self._steps):
            return False
        return self._known or self._convert is not None

    def _operator_read(self) -> adapters.Value:
        """How an operator past a boundary reads these values: converted to their type, unless they are."""
        return adapters.Value(None if self._converted else self._type)

    @property
    def _has_ts(self) -> bool:
        """The values have timestamps (from the base, or assigned in the chain)."""
        return self._stamps or self._base_ts

    @property
    def _ts_type(self) -> str:
        """``pf_ts``'s type: funke's event time (timestamp), or epoch ms (bigint) out of a process function."""
        f = self._base.schema.get(TS) if self._base.schema is not None else None
        return (f.dtype if f is not None else None) or "timestamp"

    def _timed(self) -> DataStream:
        """This stream with its timestamps as funke's event time: after a process function (whose rows
        carry them as numbers) the watermark strategy that made them is declared again."""
        if not self._base_ts or self._stamps or self._base.node.event_time == TS or self._marks is None:
            return self
        strategy = self._marks.to_funke(TS) if self._ts_type != "timestamp" else _existing(self._marks)
        return DataStream(self._env, self._base.assign_timestamps_and_watermarks(strategy), type_info=self._type, reader=self._reader,
                          convert=self._convert, steps=self._steps, marks=self._marks, known=self._known)  # fmt: skip

    def _out(self, base: fk.DataStream, type_info: TypeInformation | None, **kw: Any) -> DataStream:
        """A stream made from this one (its timestamps' strategy goes on)."""
        return DataStream(self._env, base, type_info=type_info, marks=self._marks, **kw)

    def _out_schema(self) -> str:
        """The output of a process function on this stream: values, and their timestamps when these have some."""
        return f"{VALUE} binary, {TS} bigint" if self._has_ts else f"{VALUE} binary"

    def get_type(self) -> TypeInformation:
        return self._type if self._type is not None else Types.PICKLED_BYTE_ARRAY()

    def get_execution_environment(self) -> Any:
        return self._env

    def get_name(self) -> str:
        return " -> ".join(s.name for s in self._steps) if self._steps else self._base.node.name

    # -- chaining ----------------------------------------------------------------------------
    def _then(self, step: Step, out_type: TypeInformation | None) -> DataStream:
        if not self._env._chaining and self._steps:  # (disable_operator_chaining: a boundary between any two functions)
            return self._out(self._plain(), self._type, convert=self._type)._then(step, out_type)
        return self._out(self._base, out_type, reader=self._reader, convert=self._convert, steps=(*self._steps, step))

    def _chained(self, tail: Tail, schema: str, name: str) -> fk.DataStream:
        """The chain (and ``tail``) as one funke flat_map with output ``schema``."""
        chain = Chain(self._reader, self._convert, self._steps, tail, keep_ts=self._base_ts, job_parameters=self._env._settings.job_parameters)
        task = " -> ".join([*(s.name for s in self._steps), name]) if name else " -> ".join(s.name for s in self._steps)
        fn = Lifecycled(chain, call_chain, task or "chain", parallelism=self._env._settings.parallelism)
        fn.__qualname__ = task or "chain"
        out = self._base.flat_map(fn, output_schema=schema, name=task or "chain")
        if self._stamps and tail.kind in ("rows", "key"):  # the assigner's timestamps, now a column: their watermark
            out = out.assign_timestamps_and_watermarks(self._marks.to_funke(TS))
        return out

    def _value_schema(self) -> str:
        """The chain's output columns: values, and their timestamps (epoch ms where the chain assigns them)."""
        if not self._has_ts:
            return f"{VALUE} binary"
        return f"{VALUE} binary, {TS} {'bigint' if self._stamps else self._ts_type}"

    def _plain(self) -> fk.DataStream:
        """The funke stream of this stream's values (the chain run)."""
        if not self._steps and self._convert is None and type(self._reader) is Reader:
            return self._base
        return self._chained(Tail("rows"), self._value_schema(), "")

    def _boundary(self) -> DataStream:
        """This stream after a place where PyFlink serializes values (a shuffle, a union): converted to their type."""
        return self._out(self._plain(), self._type, convert=self._type)

    # -- one-input functions ----------------------------------------------------------------
    def map(self, func: Callable[[Any], Any] | MapFunction, output_type: TypeInformation | None = None) -> DataStream:
        return self._then(Step("map", _callable(func, "map", MapFunction, "map"), func if isinstance(func, Function) else None, f"Map({_name(func)})"), output_type)

    def flat_map(self, func: Callable[[Any], Any] | FlatMapFunction, output_type: TypeInformation | None = None) -> DataStream:
        call = _callable(func, "flat_map", FlatMapFunction, "flat_map")
        return self._then(Step("flat_map", call, func if isinstance(func, Function) else None, f"FlatMap({_name(func)})"), output_type)

    def filter(self, func: Callable[[Any], Any] | FilterFunction) -> DataStream:
        call = _callable(func, "filter", FilterFunction, "filter")
        return self._then(Step("filter", call, func if isinstance(func, Function) else None, f"Filter({_name(func)})"), self._type)

    def project(self, *field_indexes: int) -> DataStream:
        """The tuple's fields at ``field_indexes`` (a ``Types.TUPLE`` stream only, as in PyFlink)."""
        if not isinstance(self._type, TupleTypeInfo):
            raise PlanError(f"project() works on Types.TUPLE streams only; this stream's type is {self.get_type()!r}")
        types = [self._type.field_types[i] for i in field_indexes]
        idx = tuple(field_indexes)
        return self.map(lambda v: tuple(v[i] for i in idx), Types.TUPLE(types))

    def key_by(self, key_selector: Callable[[Any], Any] | KeySelector, key_type: TypeInformation | None = None) -> KeyedStream:
        """Partition by ``key_selector(value)``: the key is converted to ``key_type`` (pickled without one)."""
        selector = _callable(key_selector, "get_key", KeySelector, "key_by")
        src = self._timed()
        base = src._chained(Tail("key", selector=selector, key_type=key_type), f"{KEY} binary, {src._value_schema()}", f"KeyBy({_name(key_selector)})")
        return KeyedStream(self._env, base.key_by(KEY), value_type=self._type, key_type=key_type, marks=self._marks, known=src._converted)

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        """A ``ProcessFunction``: ``process_element(value, ctx)`` per value; ``yield tag, value`` for side outputs."""
        from funke.pyflink.datastream.functions import KeyedProcessFunction, ProcessFunction

        if isinstance(func, KeyedProcessFunction):
            raise PlanError("process(KeyedProcessFunction) needs a keyed stream: call key_by(...) first")
        if not isinstance(func, ProcessFunction):
            raise TypeError(f"process() takes a ProcessFunction, got {func!r}")
        src = self._timed()
        adapter = adapters.ProcessAdapter(func, adapters.Value(None)).configure(self._env._settings, keep_ts=src._has_ts)
        out = src._plain().process(adapter, output_schema=src._out_schema(), name=f"Process({_name(func)})")
        return self._out(out, output_type)

    def assign_timestamps_and_watermarks(self, watermark_strategy: Any) -> DataStream:
        """Event time from the strategy's ``TimestampAssigner`` (run in the chain, PyFlink's way) and its watermark.
        A strategy without an assigner keeps the values' timestamps (none from a collection)."""
        assigner = getattr(watermark_strategy, "assigner", None)
        if assigner is not None:  # in the chain, as PyFlink runs it; the watermark after the chain
            stamped = self._then(Step("stamp", assigner.extract_timestamp, assigner, f"Timestamps/Watermarks({_name(assigner)})"), self._type)
            stamped._marks = watermark_strategy
            return stamped
        if not self._has_ts:
            return self
        base = self._plain()
        # (the timestamps the values have: epoch ms out of a process function, or funke's event time)
        strategy = watermark_strategy.to_funke(TS) if self._ts_type != "timestamp" else _existing(watermark_strategy)
        return DataStream(self._env, base.assign_timestamps_and_watermarks(strategy), type_info=self._type, marks=watermark_strategy, known=self._converted)

    # -- several streams ---------------------------------------------------------------------
    def union(self, *streams: DataStream) -> DataStream:
        """All the streams' values (PyFlink: the same type); a boundary: each converted to its type."""
        parts = [s._timed() for s in (self, *streams)]
        plain = [s._plain() for s in parts]
        timed = all(p.schema is not None and p.schema.get(TS) is not None and p.schema.get(TS).dtype == "timestamp" for p in plain)
        plain = plain if timed else [p.select(VALUE) for p in plain]
        return self._out(plain[0].union(*plain[1:]), self._type, convert=self._type)

    def connect(self, ds: Any) -> Any:
        from funke.pyflink.datastream.connected import BroadcastConnectedStream, BroadcastStream, ConnectedStreams

        if isinstance(ds, BroadcastStream):
            return BroadcastConnectedStream(self, ds)
        if not isinstance(ds, DataStream):
            raise TypeError(f"connect() takes a DataStream or a BroadcastStream, got {ds!r}")
        return ConnectedStreams(self, ds)

    def broadcast(self, broadcast_state_descriptor: Any = None, *other: Any) -> Any:
        """``broadcast(MapStateDescriptor...)``: the broadcast state pattern. Without a descriptor (every value to
        every parallel instance of the next operator) it is refused."""
        from funke.pyflink.datastream.connected import BroadcastStream

        if broadcast_state_descriptor is None:
            raise UnsupportedError(
                "broadcast() without a MapStateDescriptor (each value to every parallel instance of the next operator): "
                "Spark has no such partitioning; use broadcast(MapStateDescriptor(...)) and connect(...) for the broadcast "
                "state pattern, or a keyed stream"
            )
        return BroadcastStream(self, (broadcast_state_descriptor, *other))

    def window_all(self, window_assigner: Any) -> Any:
        from funke.pyflink.datastream.windowed import AllWindowedStream

        return AllWindowedStream(self, window_assigner)

    # -- partitioning: Spark places rows itself ------------------------------------------------
    def shuffle(self) -> DataStream:
        """Random partitioning: Spark places the rows (no effect on results); a boundary (values converted)."""
        return self._boundary()

    def rebalance(self) -> DataStream:
        """Round-robin: Spark places the rows (no effect on results); a boundary (values converted)."""
        return self._boundary()

    def rescale(self) -> DataStream:
        return self._boundary()

    def forward(self) -> DataStream:
        """Forward partitioning: functions stay chained."""
        return self

    def partition_custom(self, partitioner: Any, key_selector: Any) -> DataStream:
        """A user partitioner decides only which parallel instance gets a value, which Spark decides for
        itself: the partitioner is not called; a boundary (values converted)."""
        return self._boundary()

    # -- side outputs ------------------------------------------------------------------------
    def get_side_output(self, output_tag: Any) -> DataStream:
        """The values the function that made this stream sent to ``output_tag`` (``yield output_tag, value``)."""
        if self._steps:
            raise PlanError(
                f"get_side_output({output_tag.tag_id!r}): this stream comes from {self.get_name()}, which writes no side "
                "outputs; call it on the stream of the process function (or window) that yields to the tag"
            )
        return DataStream(self._env, self._base.get_side_output(output_tag), type_info=getattr(output_tag, "type_info", None))

    # -- naming and physical hints ---------------------------------------------------------------
    def name(self, name: str) -> DataStream:
        if self._steps:
            last = self._steps[-1]
            steps = (*self._steps[:-1], Step(last.kind, last.call, last.function, name))
            return self._out(self._base, self._type, reader=self._reader, convert=self._convert, steps=steps)
        return self._out(self._base.name(name), self._type, late_tags=self._late_tags)

    def uid(self, uid: str) -> DataStream:
        """The operator's stable id (savepoints match state by it); a chain of stateless functions has no state to match."""
        if self._steps:
            return self
        return self._out(self._base.uid(uid), self._type, late_tags=self._late_tags)

    def set_uid_hash(self, uid_hash: str) -> DataStream:
        return self.uid(uid_hash)

    def set_description(self, description: str) -> DataStream:
        return self

    def set_parallelism(self, parallelism: int) -> DataStream:
        """A hint, as ``StreamExecutionEnvironment.set_parallelism``: Spark sizes the operator."""
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream:
        return self

    def force_non_parallel(self) -> DataStream:
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> DataStream:
        return self

    def slot_sharing_group(self, slot_sharing_group: Any) -> DataStream:
        return self

    def start_new_chain(self) -> DataStream:
        """The next function starts a new chain: values converted to their type between them."""
        return self._boundary()

    def disable_chaining(self) -> DataStream:
        return self._boundary()

    def cache(self) -> Any:
        raise UnsupportedError("cache(): funke keeps no intermediate results between jobs; write them to files (FileSink) and read them back")

    # -- sinks ------------------------------------------------------------------------------------
    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        """Each value to stdout as PyFlink prints it (``N> `` before it when the parallelism is above 1)."""
        holder = self._env._settings
        tail = Tail("print", out_type=self._type, prefix=_Prefix(holder, sink_identifier))
        lines = self._chained(tail, f"{LINE} string", "Print to Std. Out")
        lines.sink_to(PrintLines(), name="Print to Std. Out")
        return DataStreamSink(self)

    def sink_to(self, sink: Any) -> DataStreamSink:
        attach = getattr(sink, "_attach", None)
        if not callable(attach):
            raise UnsupportedError(
                f"sink_to({type(sink).__name__}): funke maps FileSink and KafkaSink (pyflink.datastream.connectors); "
                "print() writes to stdout"
            )
        attach(self)
        return DataStreamSink(self)

    def add_sink(self, sink_func: Any) -> DataStreamSink:
        raise UnsupportedError("add_sink (a Java SinkFunction): funke runs no Java connectors; use print() or sink_to(FileSink / KafkaSink)")

    def execute_and_collect(self, job_execution_name: str | None = None, limit: int | None = None) -> Any:
        """Run the job and iterate its values (converted to their declared type, as Java hands them back);
        with ``limit``, a list of at most that many."""
        sink = self._chained(Tail("collect", out_type=self._type), f"{VALUE} binary", "Collect").collect()
        handle, _, _ = self._env._start(job_execution_name or "collect")
        iterator = CloseableIterator(_arrivals(handle, sink), handle)
        if limit is not None:
            out = [v for _, v in zip(range(limit), iterator, strict=False)]
            iterator.close()
            return out
        return iterator


class _Prefix:
    """PyFlink's print prefix, with the job's parallelism as of ``execute()``."""

    def __init__(self, settings: Any, identifier: str | None) -> None:
        self.settings, self.identifier = settings, identifier

    def __call__(self) -> str:
        return print_prefix(self.identifier, self.settings.parallelism)()


def _existing(strategy: Any) -> Any:
    """funke's strategy over the timestamps the values already have (``pf_ts``)."""
    from funke.semantics.watermarks import WatermarkStrategy as Funke

    s = Funke.for_bounded_out_of_orderness(strategy.bound_ms).with_timestamp_assigner(TS)
    return s.with_idleness(strategy.idleness_ms) if strategy.idleness_ms is not None else s


class CloseableIterator:
    """PyFlink's ``CloseableIterator``: a job's collected values as they arrive, until it ends (what
    ``execute_and_collect()`` and ``TableResult.collect()`` give). ``close()``, or leaving a ``with`` block,
    stops the job if it still runs."""

    def __init__(self, values: Iterator[Any], handle: Any) -> None:
        self._values, self._handle = values, handle

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        return next(self._values)

    def next(self) -> Any:
        return next(self)

    def close(self) -> None:
        if self._handle is not None and not self._handle.done:
            self._handle.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _arrivals(handle: Any, sink: Any) -> Iterator[Any]:
    """The values of a collect sink as the job adds them, until it ends (raising the job's error, if it failed)."""
    import time

    seen = 0
    while True:
        rows = sink.rows
        if seen < len(rows):
            seen += 1
            yield loads(rows[seen - 1][VALUE])
            continue
        if handle.done:
            handle.wait()
            if seen >= len(sink.rows):
                return
            continue
        time.sleep(0.05)


class DataStreamSink:
    """What ``print()`` / ``sink_to()`` return: names and hints for the sink."""

    def __init__(self, stream: DataStream) -> None:
        self._stream = stream

    def name(self, name: str) -> DataStreamSink:
        return self

    def uid(self, uid: str) -> DataStreamSink:
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStreamSink:
        return self

    def set_description(self, description: str) -> DataStreamSink:
        return self

    def set_parallelism(self, parallelism: int) -> DataStreamSink:
        return self

    def disable_chaining(self) -> DataStreamSink:
        return self

    def slot_sharing_group(self, slot_sharing_group: Any) -> DataStreamSink:
        return self


class KeyedStream(DataStream):
    """A keyed stream (PyFlink's ``KeyedStream``): ``_base`` has ``pf_key``, ``value`` and maybe ``pf_ts``.

    Keyed operators read values converted to their type (the shuffle after ``key_by`` serializes them).
    """

    def __init__(
        self, env: Any, base: fk.DataStream, *, value_type: TypeInformation | None, key_type: TypeInformation | None, marks: Any = None, known: bool = False
    ) -> None:  # fmt: skip
        super().__init__(env, base, type_info=value_type, marks=marks, known=known)
        self._key_type = key_type

    @property
    def _converted(self) -> bool:
        return self._known

    def _values(self) -> DataStream:
        """The values of the keyed stream as a plain stream (after the shuffle: converted)."""
        cols = [VALUE, TS] if self._has_ts else [VALUE]
        if self._known:
            return self._out(self._base.select(*cols), self._type, known=True)
        return self._out(self._base.select(*cols), self._type, convert=self._type)

    def _read(self) -> adapters.Value:
        return self._operator_read()

    def _process(self, user: Any, output_type: TypeInformation | None, name: str) -> DataStream:
        adapter = adapters.KeyedProcessAdapter(user, self._read()).configure(self._env._settings, keep_ts=self._has_ts)
        out = self._base.process(adapter, output_schema=self._out_schema(), name=name)
        return self._out(out, output_type)

    # -- PyFlink's keyed operations -----------------------------------------------------------------
    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:  # type: ignore[override]
        """A ``KeyedProcessFunction``: keyed state and timers; ``yield tag, value`` for side outputs."""
        from funke.pyflink.datastream.functions import KeyedProcessFunction

        if not isinstance(func, KeyedProcessFunction):
            raise TypeError(f"process() on a keyed stream takes a KeyedProcessFunction, got {func!r}")
        return self._process(func, output_type, f"KeyedProcess({_name(func)})")

    def reduce(self, func: Any) -> DataStream:
        """A rolling reduce per key: the reduced value after each element (BATCH mode: once per key, at the end)."""
        if not callable(getattr(func, "reduce", None)) and not callable(func):
            raise TypeError(f"reduce() takes a ReduceFunction or a callable, got {func!r}")
        return self._process(adapters.KeyedReduce(func, self._env._settings), self._type, f"Reduce({_name(func)})")

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        return self.reduce(_Accumulate(position_to_sum, "sum"))

    def min(self, position_to_min: int | str = 0) -> DataStream:
        return self.reduce(_Accumulate(position_to_min, "min"))

    def max(self, position_to_max: int | str = 0) -> DataStream:
        return self.reduce(_Accumulate(position_to_max, "max"))

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        return self.reduce(_Accumulate(position_to_min_by, "min_by"))

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        return self.reduce(_Accumulate(position_to_max_by, "max_by"))

    def map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:  # type: ignore[override]
        """A function class runs as a keyed operator (its ``open`` gets keyed state, as in PyFlink);
        a plain function is chained after the shuffle."""
        if isinstance(func, MapFunction):
            return self._process(adapters.KeyedCall(func, "map"), output_type, f"Map({_name(func)})")
        return self._values().map(func, output_type)

    def flat_map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:  # type: ignore[override]
        if isinstance(func, FlatMapFunction):
            return self._process(adapters.KeyedCall(func, "flat_map"), output_type, f"FlatMap({_name(func)})")
        return self._values().flat_map(func, output_type)

    def filter(self, func: Any) -> DataStream:  # type: ignore[override]
        if isinstance(func, FilterFunction):
            return self._process(adapters.KeyedCall(func, "filter"), self._type, f"Filter({_name(func)})")
        return self._values().filter(func)

    def key_by(self, key_selector: Any, key_type: TypeInformation | None = None) -> KeyedStream:
        return self._values().key_by(key_selector, key_type)

    def window(self, window_assigner: Any) -> Any:
        from funke.pyflink.datastream.windowed import WindowedStream

        return WindowedStream(self, window_assigner)

    def count_window(self, size: int, slide: int = 0) -> Any:
        from funke.pyflink.datastream.window import CountAssigner
        from funke.pyflink.datastream.windowed import WindowedStream

        return WindowedStream(self, CountAssigner(size, slide or None))

    # (the rest of DataStream's operations act on the values)
    def union(self, *streams: DataStream) -> DataStream:
        return self._values().union(*streams)

    def connect(self, ds: Any) -> Any:
        from funke.pyflink.datastream.connected import BroadcastConnectedStream, BroadcastStream, ConnectedStreams

        if isinstance(ds, BroadcastStream):
            return BroadcastConnectedStream(self, ds)
        return ConnectedStreams(self, ds)

    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        return self._values().print(sink_identifier)

    def sink_to(self, sink: Any) -> DataStreamSink:
        return self._values().sink_to(sink)

    def execute_and_collect(self, job_execution_name: str | None = None, limit: int | None = None) -> Any:
        return self._values().execute_and_collect(job_execution_name, limit)

    def assign_timestamps_and_watermarks(self, watermark_strategy: Any) -> DataStream:
        return self._values().assign_timestamps_and_watermarks(watermark_strategy)

    def _plain(self) -> fk.DataStream:
        return self._values()._plain()

    def set_parallelism(self, parallelism: int) -> KeyedStream:
        raise UnsupportedError("Set parallelism for KeyedStream is not supported (as in PyFlink)")

    def name(self, name: str) -> KeyedStream:
        raise UnsupportedError("Set name for KeyedStream is not supported (as in PyFlink)")

    def uid(self, uid: str) -> KeyedStream:
        raise UnsupportedError("Set uid for KeyedStream is not supported (as in PyFlink)")


class _Accumulate:
    """PyFlink's keyed ``sum`` / ``min`` / ``max`` / ``min_by`` / ``max_by`` as a reduce function: over the
    field at a position (or of a name, for a Row); ``min``/``max``/``sum`` replace that field in the first
    value (a tuple is copied, a list or Row changed in place), ``*_by`` keep the whole value that has it."""

    def __init__(self, position: int | str, kind: str) -> None:
        if not isinstance(position, (int, str)):
            raise TypeError(f"The field position must be of int or str type, got {type(position).__name__}")
        self.position, self.kind = position, kind

    def reduce(self, v1: Any, v2: Any) -> Any:
        from funke.pyflink.common.types import Row

        pos, kind = self.position, self.kind
        composite = isinstance(v1, (tuple, list, Row))
        if not composite and pos != 0:
            raise TypeError(
                f"The {pos} field selected on a basic type. A field expression on a basic type can only select the 0th "
                "field (which means selecting the entire basic type)."
            )
        x1, x2 = (v1[pos], v2[pos]) if composite else (v1, v2)
        if kind == "min_by":
            return v2 if x2 < x1 else v1
        if kind == "max_by":
            return v2 if x2 > x1 else v1
        combined = x1 + x2 if kind == "sum" else (min(x1, x2)) if kind == "min" else (max(x1, x2))
        if not composite:
            return combined
        if isinstance(v1, tuple):
            out = list(v1)
            out[pos] = combined  # type: ignore[index]
            return tuple(out)
        v1[pos] = combined
        return v1
