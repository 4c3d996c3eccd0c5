"""``funke.functions``: the user functions of Flink's DataStream API, and ``OutputTag``."""

from funke.semantics.broadcast import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from funke.semantics.co_process import CoFlatMapFunction, CoMapFunction, CoProcessFunction, KeyedCoProcessFunction
from funke.semantics.functions import (
    AggregateFunction,
    KeyedProcessFunction,
    OutputTag,
    ProcessWindowFunction,
    ReduceFunction,
)
from funke.semantics.joins import CoGroupFunction, JoinFunction, ProcessJoinFunction

__all__ = [
    "AggregateFunction",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "JoinFunction",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "OutputTag",
    "ProcessJoinFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
]
