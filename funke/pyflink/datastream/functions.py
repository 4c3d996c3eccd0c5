"""PyFlink's user function classes (``pyflink.datastream.functions``).

Each has ``open(runtime_context)`` and ``close()`` (funke's ``Function``); funke wraps them in its
own operators' functions (``_adapters``), which turn funke's rows into the values PyFlink gives
and the values back. ``runtime_context`` is funke's :class:`RuntimeContext` (keyed state where the
function is keyed, the task's name, index and parallelism, ``get_job_parameter``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from funke.errors import UnsupportedError
from funke.semantics.functions import AggregateFunction, ReduceFunction
from funke.semantics.rich import FilterFunction, FlatMapFunction, Function, KeySelector, MapFunction, RuntimeContext

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AsyncFunction",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStateStore",
    "MapFunction",
    "NullByteKeySelector",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "SinkFunction",
    "SourceFunction",
    "WindowFunction",
]

KeyedStateStore = RuntimeContext


class _Generic:
    """PyFlink's generic function classes are written ``ProcessWindowFunction[tuple, tuple, str, TimeWindow]``."""

    def __class_getitem__(cls, item: Any) -> Any:
        return cls


class _Context(_Generic):
    """A function's context (the class is for annotations; funke passes its own context object)."""


class CoMapFunction(Function):
    """``map1(value)`` per element of the first stream, ``map2(value)`` per element of the second."""

    def map1(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.map1(value) is not implemented")

    def map2(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.map2(value) is not implemented")


class CoFlatMapFunction(Function):
    """``flat_map1(value)`` / ``flat_map2(value)`` yield zero or more values."""

    def flat_map1(self, value: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.flat_map1(value) is not implemented")

    def flat_map2(self, value: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.flat_map2(value) is not implemented")


class NullByteKeySelector(KeySelector):
    """Every value has the key 0 (one key for all)."""

    def get_key(self, value: Any) -> Any:
        return 0


class Partitioner(Function):
    """``partition(key, num_partitions)``: the parallel instance a key goes to (``partition_custom``)."""

    def partition(self, key: Any, num_partitions: int) -> int:
        raise NotImplementedError(f"{type(self).__name__}.partition(key, num_partitions) is not implemented")


class ProcessFunction(Function):
    """``process_element(value, ctx)`` yields values (``yield tag, value`` for a side output);
    ``ctx.timestamp()``, ``ctx.timer_service()``."""

    class Context(_Context):
        pass

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")


class KeyedProcessFunction(Function):
    """``process_element(value, ctx)`` and ``on_timer(timestamp, ctx)`` yield values; keyed state
    from ``open(runtime_context)``; ``ctx.get_current_key()``, ``ctx.timer_service()``, ``ctx.time_domain()``."""

    class Context(_Context):
        pass

    class OnTimerContext(_Context):
        pass

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None


class CoProcessFunction(Function):
    class Context(_Context):
        pass

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element1(value, ctx) is not implemented")

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element2(value, ctx) is not implemented")


class KeyedCoProcessFunction(Function):
    class Context(_Context):
        pass

    class OnTimerContext(_Context):
        pass

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element1(value, ctx) is not implemented")

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element2(value, ctx) is not implemented")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None


class BroadcastProcessFunction(Function, _Generic):
    class Context(_Context):
        pass

    class ReadOnlyContext(_Context):
        pass

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_broadcast_element(value, ctx) is not implemented")


class KeyedBroadcastProcessFunction(Function, _Generic):
    class Context(_Context):
        pass

    class ReadOnlyContext(_Context):
        pass

    class OnTimerContext(_Context):
        pass

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_broadcast_element(value, ctx) is not implemented")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None


class WindowFunction(Function, _Generic):
    """``apply(key, window, inputs)`` yields (or returns a list of) the window's values."""

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError(f"{type(self).__name__}.apply(key, window, inputs) is not implemented")


class AllWindowFunction(Function, _Generic):
    """``apply(window, inputs)`` (``window_all``)."""

    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError(f"{type(self).__name__}.apply(window, inputs) is not implemented")


class ProcessWindowFunction(Function, _Generic):
    """``process(key, context, elements)``; ``context.window()``, ``current_watermark()``,
    ``window_state()``, ``global_state()``; ``clear(context)`` when a window is dropped."""

    class Context(_Context):
        pass

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError(f"{type(self).__name__}.process(key, context, elements) is not implemented")

    def clear(self, context: Any) -> None:
        return None


class ProcessAllWindowFunction(Function, _Generic):
    """``process(context, elements)`` (``window_all``)."""

    class Context(_Context):
        pass

    def process(self, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError(f"{type(self).__name__}.process(context, elements) is not implemented")

    def clear(self, context: Any) -> None:
        return None


class AsyncFunction(Function, _Generic):
    """``async def async_invoke(value)`` returns a list of results; ``timeout(value)`` those of a call that timed out."""

    async def async_invoke(self, value: Any) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__}.async_invoke(value) is not implemented")

    def timeout(self, value: Any) -> list[Any]:
        raise TimeoutError(f"Async function call has timed out for input: {value!r}")


class AsyncRetryPredicate(_Generic):
    def result_predicate(self) -> Any:
        return None

    def exception_predicate(self) -> Any:
        return None


class AsyncRetryStrategy(_Generic):
    """Retries of async calls: refused (``AsyncDataStream.unordered_wait_with_retry`` says what to do instead)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_retries()

    @staticmethod
    def no_restart() -> Any:
        raise _no_retries()

    @staticmethod
    def fixed_delay(*args: Any, **kwargs: Any) -> Any:
        raise _no_retries()

    @staticmethod
    def exponential_backoff(*args: Any, **kwargs: Any) -> Any:
        raise _no_retries()


def _no_retries() -> UnsupportedError:
    return UnsupportedError(
        "AsyncRetryStrategy: funke's async I/O has no retry strategies; retry inside async_invoke (a loop around the "
        "call) and give unordered_wait / ordered_wait a timeout that covers the retries"
    )


class SourceFunction:
    """A Java source function (PyFlink's legacy ``add_source``): funke runs no Java code."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedError(
            "SourceFunction (a Java source, add_source): funke runs no Java connectors; use from_collection, "
            "from_source(FileSource ...) or from_source(KafkaSource ...)"
        )


class SinkFunction:
    """A Java sink function (PyFlink's legacy ``add_sink``): funke runs no Java code."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedError(
            "SinkFunction (a Java sink, add_sink): funke runs no Java connectors; use print(), sink_to(FileSink ...) "
            "or sink_to(KafkaSink ...)"
        )

