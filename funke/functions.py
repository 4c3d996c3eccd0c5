"""``funke.functions``: the user functions of Flink's DataStream API, and ``OutputTag``."""

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
    "CoGroupFunction",
    "JoinFunction",
    "KeyedProcessFunction",
    "OutputTag",
    "ProcessJoinFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
]
