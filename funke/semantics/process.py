"""Flink's ``ProcessFunction`` on an unkeyed stream, and the operator that runs it.

No keyed state and no timers (Flink refuses both on an unkeyed stream); ``ctx`` gives the
element's timestamp, the current watermark and processing time, and side outputs::

    class Split(ProcessFunction):
        def process_element(self, value, ctx):
            if value["amount"] < 0:
                yield REFUNDS, value            # a side output (or ctx.output(REFUNDS, value))
            else:
                yield value

    op = ProcessOperator(Split())
    op.process_element(None, {"amount": 5}, 1_000)    # -> [OutputRecord({'amount': 5}, 1000)]
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from funke.semantics.clock import Clock
from funke.semantics.co_process import UnkeyedContext, UnkeyedOperator
from funke.semantics.functions import OutputRecord, emitted
from funke.semantics.rich import Function

__all__ = ["ProcessFunction", "ProcessOperator"]


class ProcessFunction(Function):
    """Flink's ``ProcessFunction``: ``process_element(value, ctx)`` yields rows per element.

    ``ctx.timestamp()`` (the element's event time, or None), ``ctx.timer_service()``
    (``current_watermark()``, ``current_processing_time()``; registering a timer needs a keyed
    stream: ``key_by(...).process(KeyedProcessFunction)``) and ``ctx.output(tag, row)``; a row
    yielded as ``(output_tag, row)`` goes to that side output too.
    """

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")


class ProcessOperator(UnkeyedOperator):
    """Drives a :class:`ProcessFunction` (``key`` arguments are accepted and ignored, as the stream has none).

    >>> class Double(ProcessFunction):
    ...     def process_element(self, value, ctx):
    ...         yield value * 2
    >>> op = ProcessOperator(Double())
    >>> [(r.value, r.timestamp) for r in op.process_element(None, 21, 5)]
    [(42, 5)]
    """

    def __init__(self, function: ProcessFunction, *, clock: Clock | None = None) -> None:
        if not isinstance(function, ProcessFunction):
            raise TypeError(f"ProcessOperator runs a ProcessFunction subclass, got {function!r}")
        super().__init__(function, clock=clock)

    def process_element(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        return self._emitting(partial(self._process, value, timestamp))

    def _process(self, value: Any, timestamp: int | None) -> None:
        self.open()
        rows = self.function.process_element(value, UnkeyedContext(self, timestamp))
        self._out.extend(emitted(rows, f"{type(self.function).__name__}.process_element", timestamp, timestamp))
