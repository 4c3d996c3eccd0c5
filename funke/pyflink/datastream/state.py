"""PyFlink's state descriptors and ``StateTtlConfig``: funke's own (the same constructors:
``ValueStateDescriptor(name, value_type_info)``, ``MapStateDescriptor(name, key_type_info,
value_type_info)``, ...). State holds Python values as the function stored them (PyFlink keeps
them in its Python-side cache the same way)."""

from funke.semantics.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    StateTtlConfig,
    ValueState,
    ValueStateDescriptor,
)

__all__ = [
    "AggregatingState",
    "AggregatingStateDescriptor",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "ReducingState",
    "ReducingStateDescriptor",
    "StateDescriptor",
    "StateTtlConfig",
    "ValueState",
    "ValueStateDescriptor",
]
