"""``funke.state``: keyed state descriptors and state time-to-live (Flink's names)."""

from funke.semantics.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from funke.semantics.ttl import StateTtlConfig, TtlStateVisibility, TtlUpdateType

__all__ = [
    "AggregatingStateDescriptor",
    "ListStateDescriptor",
    "MapStateDescriptor",
    "ReducingStateDescriptor",
    "StateTtlConfig",
    "TtlStateVisibility",
    "TtlUpdateType",
    "ValueStateDescriptor",
]
