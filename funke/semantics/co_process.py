"""Two-input process functions in Flink's semantics: ``connect`` and its operators.

:class:`KeyedCoProcessOperator` is Flink's ``KeyedCoProcessOperator``: two keyed inputs, one
keyed state and one timer service shared by both, so the function sees the same state
whichever input the element came from::

    op = KeyedCoProcessOperator(Checkout())
    op.process_element1("a", {"order": 1}, 1_000)    # orders
    op.process_element2("a", {"payment": 7}, 1_500)  # payments, same key, same state
    op.advance_watermark(6_000)                      # fires event-time timers, in order

Output timestamps follow Flink's: an element's outputs carry its timestamp, an event-time
timer's its time, a processing-time timer's main outputs none.

:class:`CoProcessOperator` runs an unkeyed :class:`CoProcessFunction` (no keyed state; timers
need a keyed stream, as in Flink), and :class:`CoMapFunction` / :class:`CoFlatMapFunction`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from funke.semantics.clock import Clock
from funke.semantics.functions import KeyedStateStore, OutputRecord, OutputTag, emitted
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.operator import TimedOperator
from funke.semantics.rich import Function, RuntimeContext, call_open

__all__ = [
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "CoProcessOperator",
    "KeyedCoProcessFunction",
    "KeyedCoProcessOperator",
    "UnkeyedContext",
    "UnkeyedOperator",
]


class CoMapFunction(Function):
    """Flink's ``CoMapFunction``: ``map1(row)`` per first-input row, ``map2(row)`` per second-input row; one row each."""

    def map1(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.map1(value) is not implemented")

    def map2(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.map2(value) is not implemented")


class CoFlatMapFunction(Function):
    """Flink's ``CoFlatMapFunction``: ``flat_map1(row)`` / ``flat_map2(row)`` yield zero or more rows each."""

    def flat_map1(self, value: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.flat_map1(value) is not implemented")

    def flat_map2(self, value: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.flat_map2(value) is not implemented")


class CoProcessFunction(Function):
    """Flink's ``CoProcessFunction`` on unkeyed connected streams.

    ``open(runtime_context)`` runs before the first element; ``process_element1(value, ctx)`` /
    ``process_element2(value, ctx)`` yield rows (``(output_tag, row)`` for a side output); ``ctx``
    has ``timestamp()``, ``current_watermark()``, ``current_processing_time()``, ``timer_service()``
    (the time; registering a timer needs keyed state: ``connect(...).key_by(key1, key2)`` and a
    :class:`KeyedCoProcessFunction`) and ``output(tag, row)``.
    """

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element1(value, ctx) is not implemented")

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element2(value, ctx) is not implemented")

    def close(self) -> None:
        return None


class KeyedCoProcessFunction(Function):
    """Flink's ``KeyedCoProcessFunction``: two keyed inputs sharing one keyed state and timer service.

    ``open(ctx)`` runs once before the first element (state handles from ``ctx`` always refer
    to the key being processed); ``process_element1`` / ``process_element2(value, ctx)`` and
    ``on_timer(timestamp, ctx)`` yield rows; ``ctx`` as a ``KeyedProcessFunction``'s
    (``timestamp()``, ``get_current_key()``, ``timer_service()``, ``get_state(...)``,
    ``output(tag, row)``; ``time_domain()`` in ``on_timer``).
    """

    def open(self, ctx: KeyedStateStore) -> None:
        return None

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element1(value, ctx) is not implemented")

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element2(value, ctx) is not implemented")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None

    def close(self) -> None:
        return None


class KeyedCoProcessOperator(KeyedProcessOperator):
    """Drives a :class:`KeyedCoProcessFunction`: the keyed process operator with two element methods."""

    function_type = KeyedCoProcessFunction
    _first_method = "process_element1"

    def process_element1(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        """Feed one element of the first input; returns what it emitted, in order."""
        return self._emitting(partial(self._process_element, key, value, timestamp, "process_element1"))

    def process_element2(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        """Feed one element of the second input."""
        return self._emitting(partial(self._process_element, key, value, timestamp, "process_element2"))

    def process_element(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        raise TypeError("a KeyedCoProcessOperator has two inputs: call process_element1 or process_element2")


_KEYED_TIMERS = (
    "timers need a keyed stream (Flink: 'Setting timers is only supported on a keyed streams'): "
    "connect(...).key_by(key1, key2).process(KeyedCoProcessFunction), or key_by(...).process(KeyedProcessFunction)"
)


class UnkeyedTimerService:
    """An unkeyed function's ``ctx.timer_service()``: the current time; no timers (Flink's rule)."""

    def __init__(self, op: UnkeyedOperator) -> None:
        self._op = op

    def current_watermark(self) -> int:
        return self._op.current_watermark

    def current_processing_time(self) -> int:
        return self._op._clock.now_ms()

    def _refuse(self, *_: Any) -> None:
        raise TypeError(_KEYED_TIMERS)

    register_event_time_timer = register_processing_time_timer = _refuse
    delete_event_time_timer = delete_processing_time_timer = _refuse


class UnkeyedContext:
    """``ctx`` of an unkeyed function: the element's timestamp, time, side outputs; no timers."""

    def __init__(self, op: UnkeyedOperator, timestamp: int | None) -> None:
        self._op, self._timestamp = op, timestamp

    def timestamp(self) -> int | None:
        return self._timestamp

    def current_watermark(self) -> int:
        return self._op.current_watermark

    def current_processing_time(self) -> int:
        return self._op._clock.now_ms()

    def timer_service(self) -> UnkeyedTimerService:
        return UnkeyedTimerService(self._op)

    def output(self, tag: OutputTag, value: Any) -> None:
        if not isinstance(tag, OutputTag):
            raise TypeError(f"output() needs an OutputTag as its first argument, got {tag!r}")
        self._op._out.append(OutputRecord(value, self._timestamp, tag))


class UnkeyedOperator(TimedOperator):
    """What an unkeyed two-input operator keeps: the function, its watermark and clock (no keyed
    state, and no timers: its functions cannot register any). ``key`` arguments are accepted and
    ignored, so every two-input operator is driven alike."""

    def __init__(self, function: Any, *, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self.function = function

    def open(self) -> None:
        if not self._opened:
            self._opened = True
            call_open(self.function, RuntimeContext(type(self.function).__name__))

    def close(self) -> None:
        if self._opened and callable(getattr(self.function, "close", None)):
            self.function.close()

    def snapshot(self) -> dict[str, Any]:
        return {"watermark": self._timers.current_watermark}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._timers.restore_watermark(snapshot["watermark"])

    def _emit(self, rows: Any, method: str, timestamp: int | None) -> None:
        self._out.extend(emitted(rows, f"{type(self.function).__name__}.{method}", timestamp, timestamp))


class CoProcessOperator(UnkeyedOperator):
    """Runs an unkeyed :class:`CoProcessFunction`, :class:`CoMapFunction` or :class:`CoFlatMapFunction`."""

    def __init__(self, function: CoProcessFunction | CoMapFunction | CoFlatMapFunction, *, clock: Clock | None = None) -> None:
        if not isinstance(function, (CoProcessFunction, CoMapFunction, CoFlatMapFunction)):
            raise TypeError(
                f"CoProcessOperator runs a CoProcessFunction, CoMapFunction or CoFlatMapFunction subclass, got {function!r}"
            )
        super().__init__(function, clock=clock)

    def process_element1(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        return self._emitting(partial(self._process, 1, value, timestamp))

    def process_element2(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        return self._emitting(partial(self._process, 2, value, timestamp))

    def _process(self, side: int, value: Any, timestamp: int | None) -> None:
        self.open()
        f = self.function
        if isinstance(f, CoMapFunction):
            self._emit([f.map1(value) if side == 1 else f.map2(value)], f"map{side}", timestamp)
        elif isinstance(f, CoFlatMapFunction):
            self._emit(f.flat_map1(value) if side == 1 else f.flat_map2(value), f"flat_map{side}", timestamp)
        else:
            method = f"process_element{side}"
            self._emit(getattr(f, method)(value, UnkeyedContext(self, timestamp)), method, timestamp)
