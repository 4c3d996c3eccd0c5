"""``funke.functions``: the user functions of Flink's DataStream API, and ``OutputTag``."""

from funke.semantics.functions import (
    AggregateFunction,
    KeyedProcessFunction,
    OutputTag,
    ProcessWindowFunction,
    ReduceFunction,
)

__all__ = ["AggregateFunction", "KeyedProcessFunction", "OutputTag", "ProcessWindowFunction", "ReduceFunction"]
