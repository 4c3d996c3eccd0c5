"""Flink's async I/O: an ``AsyncFunction`` called for many elements at once, on an asyncio loop.

``async_invoke(value)`` is a coroutine returning the element's results (a list: zero or more);
``timeout(value)`` gives them when the call takes longer than the timeout (by default it raises,
failing the job, as Flink's does). At most ``capacity`` elements are in the operator's queue at
once (Flink's capacity); a new element waits for a place.

* **ordered**: results leave in the order of their elements; an element stays in the queue
  (holding its place) until every element before it has its results.
* **unordered**: results leave as they complete; an element leaves the queue when it has them.

:func:`run_async` runs one batch of elements (Spark: one micro-batch of a partition) on a loop
the caller keeps (one per task, so clients made in ``async_invoke`` live across batches)::

    class Lookup(AsyncFunction):
        async def async_invoke(self, value):
            return [await client.get(value["id"])]

    loop = asyncio.new_event_loop()
    results = run_async(Lookup(), rows, ordered=True, timeout_ms=1_000, capacity=100, loop=loop)
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from typing import Any

from funke.semantics.rich import Function

__all__ = ["AsyncFunction", "run_async"]


class AsyncFunction(Function):
    """Flink's ``AsyncFunction`` (PyFlink's asyncio form): ``async def async_invoke(value)`` returns a list of results."""

    async def async_invoke(self, value: Any) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__}.async_invoke(value) is not implemented")

    def timeout(self, value: Any) -> list[Any]:
        """The results of an element whose call timed out; by default the job fails, as in Flink."""
        raise TimeoutError(f"{type(self).__name__}.async_invoke timed out for {value!r} (override timeout(value) to give results instead)")


def _results(out: Any, function: Any, method: str) -> list[Any]:
    if out is None:
        return []
    if isinstance(out, (list, tuple)):
        return list(out)
    raise TypeError(
        f"{type(function).__name__}.{method} must return a list of results (even for one result: [result]), "
        f"got {type(out).__name__}: {out!r}"
    )


async def _call(function: Any, value: Any, timeout_s: float) -> list[Any]:
    try:
        out = await asyncio.wait_for(function.async_invoke(value), timeout_s)
    except TimeoutError:
        return _results(function.timeout(value), function, "timeout")
    return _results(out, function, "async_invoke")


async def _run(function: Any, values: Iterable[Any], ordered: bool, timeout_s: float, capacity: int) -> list[Any]:
    queue: deque[asyncio.Task[list[Any]]] = deque()
    completed: list[asyncio.Task[list[Any]]] = []  # in the order the calls completed
    out: list[Any] = []

    def emit_done() -> None:
        if ordered:  # only the head leaves: results in the elements' order
            while queue and queue[0].done():
                out.extend(queue.popleft().result())
            return
        while completed:
            task = completed.pop(0)
            queue.remove(task)
            out.extend(task.result())

    async def wait_for_room(room: int) -> None:
        while len(queue) > room:
            await asyncio.wait({queue[0]} if ordered else set(queue), return_when=asyncio.FIRST_COMPLETED)
            emit_done()

    try:
        for value in values:
            await wait_for_room(capacity - 1)
            task = asyncio.ensure_future(_call(function, value, timeout_s))
            if not ordered:
                task.add_done_callback(completed.append)
            queue.append(task)
            await asyncio.sleep(0)  # the call starts before the next element enters
            emit_done()
        await wait_for_room(0)
    finally:
        for task in queue:
            task.cancel()
    return out


def run_async(
    function: AsyncFunction,
    values: Iterable[Any],
    *,
    ordered: bool,
    timeout_ms: int,
    capacity: int,
    loop: asyncio.AbstractEventLoop | None = None,
) -> list[Any]:
    """The results of ``function`` over ``values``, in ordered or unordered emission order.

    >>> class Twice(AsyncFunction):
    ...     async def async_invoke(self, value):
    ...         await asyncio.sleep(0.001 * (3 - value))
    ...         return [value, value]
    >>> run_async(Twice(), [1, 2], ordered=True, timeout_ms=1_000, capacity=2)
    [1, 1, 2, 2]
    """
    if capacity <= 0:
        raise ValueError(f"async I/O capacity must be positive, got {capacity}")
    if timeout_ms <= 0:
        raise ValueError(f"async I/O timeout must be positive, got {timeout_ms} ms")
    own = loop is None
    loop = loop if loop is not None else asyncio.new_event_loop()
    try:
        return loop.run_until_complete(_run(function, values, ordered, timeout_ms / 1000, capacity))
    finally:
        if own:
            loop.close()
