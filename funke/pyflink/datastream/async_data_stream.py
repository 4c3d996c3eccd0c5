"""PyFlink's ``AsyncDataStream`` on funke's async I/O (``fk.AsyncDataStream``): an asyncio loop per Spark task."""

from __future__ import annotations

from typing import Any

import funke as fk
from funke.errors import UnsupportedError
from funke.pyflink.common.typeinfo import TypeInformation
from funke.pyflink.datastream import _adapters as adapters
from funke.pyflink.datastream._wire import TS, VALUE
from funke.pyflink.datastream.data_stream import DataStream

__all__ = ["AsyncDataStream"]


def _wait(data_stream: DataStream, async_function: Any, timeout: Any, capacity: int, output_type: TypeInformation | None, ordered: bool) -> DataStream:
    from funke.pyflink.datastream.functions import AsyncFunction

    if not isinstance(async_function, AsyncFunction):
        raise TypeError(f"AsyncDataStream takes an AsyncFunction (async def async_invoke(value)), got {async_function!r}")
    src = data_stream._timed()
    keep_ts = src._has_ts
    adapter = adapters.AsyncAdapter(async_function, adapters.Value(None), keep_ts).configure(src._env._settings)
    schema = f"{VALUE} binary, {TS} timestamp" if keep_ts else f"{VALUE} binary"
    wait = fk.AsyncDataStream.ordered_wait if ordered else fk.AsyncDataStream.unordered_wait
    out = wait(src._plain(), adapter, timeout, capacity, output_schema=schema, name=f"AsyncWait({type(async_function).__name__})")
    return src._out(out, output_type)


class AsyncDataStream:
    @staticmethod
    def unordered_wait(data_stream: DataStream, async_function: Any, timeout: Any, capacity: int = 100, output_type: TypeInformation | None = None) -> DataStream:
        return _wait(data_stream, async_function, timeout, capacity, output_type, ordered=False)

    @staticmethod
    def ordered_wait(data_stream: DataStream, async_function: Any, timeout: Any, capacity: int = 100, output_type: TypeInformation | None = None) -> DataStream:
        return _wait(data_stream, async_function, timeout, capacity, output_type, ordered=True)

    @staticmethod
    def unordered_wait_with_retry(*args: Any, **kwargs: Any) -> DataStream:
        raise _retry("unordered_wait_with_retry")

    @staticmethod
    def ordered_wait_with_retry(*args: Any, **kwargs: Any) -> DataStream:
        raise _retry("ordered_wait_with_retry")


def _retry(name: str) -> UnsupportedError:
    return UnsupportedError(
        f"AsyncDataStream.{name}: funke's async I/O has no retry strategies; retry inside async_invoke (a loop around "
        f"the call) and use {name.replace('_with_retry', '')} with a timeout that covers the retries"
    )
