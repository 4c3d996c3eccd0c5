"""Async I/O on Spark: each partition's micro-batch through an asyncio loop in the Python worker.

``mapInArrow``: an Arrow batch in, its rows (dicts) handed to ``funke.semantics.async_io.run_async``
at once (ordered or unordered, at most ``capacity`` in flight, each call with its timeout), the
results out as one Arrow batch of the declared schema, checked as a row function's are. One event
loop per task, so a client the function keeps (made in ``async_invoke``) lives across batches;
the function's ``open(runtime_context)`` runs before the task's first batch and ``close()`` after
its last.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from funke.plan.types import Schema
from funke.semantics.async_io import run_async
from funke.semantics.rich import Lifecycled
from funke.spark.python_fns import ResultColumns, arrow_schema, column_lists, in_task


def async_function(
    function: Any, ordered: bool, timeout_ms: int, capacity: int, output: Schema, where: str
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function running ``function`` (an ``AsyncFunction``) over each batch's rows."""
    target = arrow_schema(output, where)
    to_batch = ResultColumns(output, target, where)
    lifecycle = Lifecycled(function, None, where)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        loop = asyncio.new_event_loop()
        try:
            with in_task(lifecycle):
                for batch in batches:
                    names = batch.schema.names
                    rows = [dict(zip(names, values)) for values in zip(*column_lists(batch))] if names else [{}] * batch.num_rows
                    results = run_async(function, rows, ordered=ordered, timeout_ms=timeout_ms, capacity=capacity, loop=loop)
                    yield to_batch(results)
        finally:
            loop.close()

    return run
