"""Keyed rolling aggregation (Flink's ``KeyedStream.sum/min/max/reduce``): one updated record per element.

Flink runs these as a reduce per key: the first element of a key is emitted as it is,
every later one is ``reduce(accumulated, element)``. For the built-ins the accumulated
record keeps the first element's other fields and only the aggregated field changes
(Flink's ``SumAggregator``/``ComparableAggregator``); ``count`` is funke's addition and
adds a running ``count`` field to each element as it arrives.

>>> op = RollingOperator.builtin("sum", "v")
>>> [r.value for r in op.process_element("a", {"k": "a", "v": 2, "x": 1})]
[{'k': 'a', 'v': 2, 'x': 1}]
>>> [r.value for r in op.process_element("a", {"k": "a", "v": 3, "x": 9})]
[{'k': 'a', 'v': 5, 'x': 1}]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funke.semantics.functions import OutputRecord, ReduceFunction, as_reduce_callable


def _sum(acc: dict[str, Any], value: dict[str, Any], field: str) -> dict[str, Any]:
    x = value.get(field)
    return acc if x is None else {**acc, field: x if acc.get(field) is None else acc[field] + x}


def _extreme(pick: Callable[[Any, Any], Any]) -> Callable[[dict[str, Any], dict[str, Any], str], dict[str, Any]]:
    def step(acc: dict[str, Any], value: dict[str, Any], field: str) -> dict[str, Any]:
        x, a = value.get(field), acc.get(field)
        return acc if x is None else {**acc, field: x if a is None else pick(a, x)}

    return step


_BUILTINS = {"sum": _sum, "min": _extreme(min), "max": _extreme(max)}


class RollingOperator:
    """Per-key accumulated record; ``process_element`` returns the updated record."""

    def __init__(self, reduce: Callable[[Any, Any], Any], *, count_field: str | None = None) -> None:
        self._reduce = reduce
        self._count_field = count_field
        self._acc: dict[Any, Any] = {}

    @classmethod
    def builtin(cls, fn: str, field: str | None, alias: str | None = None) -> RollingOperator:
        """``sum``/``min``/``max`` of ``field``, or ``count`` (into ``alias``, default ``count``)."""
        if fn == "count":
            return cls(lambda acc, value: value, count_field=alias or "count")
        if fn not in _BUILTINS or field is None:
            raise ValueError(f"rolling aggregate must be count or sum/min/max of a field, got {fn}({field})")
        step = _BUILTINS[fn]
        return cls(lambda acc, value: step(acc, value, field))

    @classmethod
    def reducing(cls, fn: ReduceFunction | Callable[[Any, Any], Any]) -> RollingOperator:
        return cls(as_reduce_callable(fn))

    @property
    def current_watermark(self) -> int:
        from funke.semantics.time import MIN_WATERMARK

        return MIN_WATERMARK

    def process_element(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        if self._count_field is not None:
            n = self._acc.get(key, 0) + 1
            self._acc[key] = n
            return [OutputRecord({**value, self._count_field: n}, timestamp)]
        acc = self._acc.get(key)
        out = value if acc is None else self._reduce(acc, value)
        self._acc[key] = out
        return [OutputRecord(out, timestamp)]

    def advance_watermark(self, watermark: int) -> list[OutputRecord]:
        return []

    def advance_processing_time(self, time: int | None = None) -> list[OutputRecord]:
        return []

    def snapshot(self) -> dict[str, Any]:
        return {"acc": dict(self._acc)}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._acc = dict(snapshot["acc"])
