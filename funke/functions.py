"""``funke.functions``: the user functions of Flink's DataStream API, and ``OutputTag``.

Every function class has ``open(runtime_context)`` (before its first element) and ``close()``.
"""

from funke.semantics.async_io import AsyncFunction
from funke.semantics.broadcast import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from funke.semantics.co_process import CoFlatMapFunction, CoMapFunction, CoProcessFunction, KeyedCoProcessFunction
from funke.semantics.functions import (
    AggregateFunction,
    KeyedProcessFunction,
    KeyGroup,
    OutputTag,
    ProcessWindowFunction,
    ReduceFunction,
)
from funke.semantics.joins import CoGroupFunction, JoinFunction, ProcessJoinFunction
from funke.semantics.process import ProcessFunction
from funke.semantics.rich import FilterFunction, FlatMapFunction, Function, KeySelector, MapFunction, RuntimeContext
from funke.semantics.window_functions import AllWindowFunction, ProcessAllWindowFunction, WindowFunction

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AsyncFunction",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeySelector",
    "MapFunction",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "RuntimeContext",
    "WindowFunction",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "JoinFunction",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyGroup",
    "OutputTag",
    "ProcessJoinFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
]
