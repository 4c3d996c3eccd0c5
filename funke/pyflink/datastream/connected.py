"""PyFlink's ``ConnectedStreams`` and the broadcast state pattern on funke's two-input operators.

Unkeyed ``map`` / ``flat_map`` of a ``CoMapFunction`` / ``CoFlatMapFunction`` run as each input's
own chained function and a union (no state to share). ``process`` and everything keyed run one funke
two-input operator (values of both inputs converted to their types: they cross into it serialized).
"""

from __future__ import annotations

from typing import Any

from funke.errors import PlanError
from funke.pyflink.common.typeinfo import TypeInformation
from funke.pyflink.datastream import _adapters as adapters
from funke.pyflink.datastream._wire import VALUE, Step
from funke.pyflink.datastream.data_stream import DataStream, KeyedStream

__all__ = ["BroadcastConnectedStream", "BroadcastStream", "ConnectedStreams"]

_OUT = f"{VALUE} binary"


class ConnectedStreams:
    """``a.connect(b)``: ``map``, ``flat_map``, ``process``; ``key_by(key_selector1, key_selector2)``."""

    def __init__(self, stream1: DataStream, stream2: DataStream) -> None:
        self.stream1, self.stream2 = stream1, stream2

    @property
    def _keyed(self) -> bool:
        return isinstance(self.stream1, KeyedStream) and isinstance(self.stream2, KeyedStream)

    def key_by(self, key_selector1: Any, key_selector2: Any, key_type: TypeInformation | None = None) -> ConnectedStreams:
        return ConnectedStreams(self.stream1.key_by(key_selector1, key_type), self.stream2.key_by(key_selector2, key_type))

    def _two(self, adapter: Any, output_type: TypeInformation | None, name: str) -> DataStream:
        one, two = (self.stream1, self.stream2) if self._keyed else (self.stream1._timed(), self.stream2._timed())
        first = one._base if self._keyed else one._plain()
        second = two._base if self._keyed else two._plain()
        keep = one._has_ts and two._has_ts
        adapter.configure(self.stream1._env._settings, keep_ts=keep)
        out = first.connect(second).process(adapter, output_schema=one._out_schema() if keep else _OUT, name=name)
        return one._out(out, output_type)

    def _reads(self) -> tuple[adapters.Value, adapters.Value]:
        return self.stream1._operator_read(), self.stream2._operator_read()

    def map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        from funke.pyflink.datastream.functions import CoMapFunction

        if not isinstance(func, CoMapFunction):
            raise TypeError(f"map() on connected streams takes a CoMapFunction, got {func!r}")
        return self._co(func, "map", output_type)

    def flat_map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        from funke.pyflink.datastream.functions import CoFlatMapFunction

        if not isinstance(func, CoFlatMapFunction):
            raise TypeError(f"flat_map() on connected streams takes a CoFlatMapFunction, got {func!r}")
        return self._co(func, "flat_map", output_type)

    def _co(self, func: Any, kind: str, output_type: TypeInformation | None) -> DataStream:
        name = f"Co-{'Map' if kind == 'map' else 'Flat Map'}({type(func).__name__})"
        if self._keyed:
            return self._two(adapters.KeyedCoProcessAdapter(adapters.CoCall(func), *self._reads()), output_type, name)
        one = self.stream1._then(Step(kind, getattr(func, f"{kind}1"), func, f"{name} (1)"), output_type)
        two = self.stream2._then(Step(kind, getattr(func, f"{kind}2"), func, f"{name} (2)"), output_type)
        return one.union(two)

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        from funke.pyflink.datastream.functions import CoProcessFunction, KeyedCoProcessFunction

        name = f"Co-Process({type(func).__name__})"
        if self._keyed:
            if not isinstance(func, KeyedCoProcessFunction):
                raise TypeError(f"process() on keyed connected streams takes a KeyedCoProcessFunction, got {func!r}")
            return self._two(adapters.KeyedCoProcessAdapter(func, *self._reads()), output_type, name)
        if isinstance(func, KeyedCoProcessFunction):
            raise PlanError("process(KeyedCoProcessFunction) needs keyed connected streams: connect(...).key_by(key_selector1, key_selector2)")
        if not isinstance(func, CoProcessFunction):
            raise TypeError(f"process() on connected streams takes a CoProcessFunction, got {func!r}")
        return self._two(adapters.CoProcessAdapter(func, *self._reads()), output_type, name)


class BroadcastStream:
    """``stream.broadcast(MapStateDescriptor, ...)``: connected to a stream, every value reaches every instance."""

    def __init__(self, stream: DataStream, descriptors: tuple[Any, ...]) -> None:
        self.stream, self.descriptors = stream, descriptors


class BroadcastConnectedStream:
    """``stream.connect(broadcast_stream)``: ``process(BroadcastProcessFunction | KeyedBroadcastProcessFunction)``."""

    def __init__(self, non_broadcast_stream: DataStream, broadcast_stream: BroadcastStream) -> None:
        self.stream, self.broadcast = non_broadcast_stream, broadcast_stream

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        from funke.pyflink.datastream.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction

        keyed = isinstance(self.stream, KeyedStream)
        stream = self.stream if keyed else self.stream._timed()
        reads = (self.stream._operator_read(), self.broadcast.stream._operator_read())
        if keyed:
            if not isinstance(func, KeyedBroadcastProcessFunction):
                raise TypeError(f"process() on a keyed stream connected to a broadcast stream takes a KeyedBroadcastProcessFunction, got {func!r}")
            adapter: Any = adapters.KeyedBroadcastAdapter(func, *reads)
            first = self.stream._base
        else:
            if not isinstance(func, BroadcastProcessFunction):
                raise TypeError(f"process() on a stream connected to a broadcast stream takes a BroadcastProcessFunction, got {func!r}")
            adapter = adapters.BroadcastAdapter(func, *reads)
            first = stream._plain()
        rules = self.broadcast.stream._plain().broadcast(*self.broadcast.descriptors)
        adapter.configure(stream._env._settings, keep_ts=stream._has_ts)
        out = first.connect(rules).process(adapter, output_schema=stream._out_schema(), name=f"Broadcast-Process({type(func).__name__})")
        return stream._out(out, output_type)
