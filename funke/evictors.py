"""``funke.evictors``: Flink's evictors."""

from funke.semantics.evictors import CountEvictor, DeltaEvictor, Evictor, TimeEvictor

__all__ = ["CountEvictor", "DeltaEvictor", "Evictor", "TimeEvictor"]
