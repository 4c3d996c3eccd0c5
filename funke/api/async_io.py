"""Flink's async I/O: ``AsyncDataStream.unordered_wait / ordered_wait(stream, AsyncFunction, timeout, capacity)``.

An ``AsyncFunction``'s ``async def async_invoke(value)`` returns the element's results (a list);
many calls are in flight at once (at most ``capacity``), on an asyncio loop in Spark's Python
worker, so a job waiting on a remote service waits for many elements at a time::

    class Lookup(AsyncFunction):
        async def async_invoke(self, row):
            profile = await client.get(row["user"])          # e.g. an aiohttp / asyncpg call
            return [{**row, "tier": profile["tier"]}]

        def timeout(self, row):                              # by default a timeout fails the job
            return [{**row, "tier": None}]

    enriched = AsyncDataStream.unordered_wait(clicks, Lookup(), fk.seconds(2), 100,
                                              output_schema="user string, ts timestamp, tier string")

``ordered_wait`` emits each element's results in the order of the elements; ``unordered_wait``
as they complete (Flink's semantics within each micro-batch; a micro-batch is one watermark
step, so results never cross a watermark, as in Flink's unordered mode with event time).
"""

from __future__ import annotations

from typing import Any

from funke.api.streams import DataStream
from funke.errors import PlanError
from funke.plan.types import Schema
from funke.plan.unkeyed import AsyncWait
from funke.semantics.async_io import AsyncFunction
from funke.semantics.time import Duration, to_millis

__all__ = ["AsyncDataStream"]

#: Flink's default capacity of an async operator.
DEFAULT_CAPACITY = 100


class AsyncDataStream:
    """Builders of async I/O operators (Flink's ``AsyncDataStream``)."""

    @staticmethod
    def unordered_wait(
        stream: DataStream,
        async_function: AsyncFunction,
        timeout: Duration,
        capacity: int = DEFAULT_CAPACITY,
        *,
        output_schema: str | Schema,
        name: str | None = None,
    ) -> DataStream:
        """Results as their calls complete; at most ``capacity`` elements in flight."""
        return _wait(stream, async_function, timeout, capacity, output_schema, name, ordered=False)

    @staticmethod
    def ordered_wait(
        stream: DataStream,
        async_function: AsyncFunction,
        timeout: Duration,
        capacity: int = DEFAULT_CAPACITY,
        *,
        output_schema: str | Schema,
        name: str | None = None,
    ) -> DataStream:
        """Results in the order of their elements; at most ``capacity`` elements in the queue
        (an element keeps its place until every element before it has its results)."""
        return _wait(stream, async_function, timeout, capacity, output_schema, name, ordered=True)


def _wait(stream: Any, function: Any, timeout: Duration, capacity: int, output_schema: Any, name: str | None, *, ordered: bool) -> DataStream:
    if not isinstance(stream, DataStream):
        raise PlanError(f"AsyncDataStream takes a stream first, got {type(stream).__name__}")
    if not isinstance(function, AsyncFunction):
        raise PlanError(f"AsyncDataStream takes an AsyncFunction subclass (async def async_invoke(value)), got {function!r}")
    out = Schema.of(output_schema)
    if out is None:
        raise PlanError("AsyncDataStream needs output_schema=... naming the columns of the function's results")
    node = AsyncWait(
        (stream.node,), function=function, ordered=ordered, timeout_ms=to_millis(timeout, what="async timeout"),
        capacity=capacity, output=out, explicit_name=name,
    )
    return DataStream(stream._env, node)
