"""funke functions around PyFlink user functions: funke's rows in, PyFlink's values and contexts to the
user's function, its values back as rows (``_wire``: the pickled ``value`` column).

Every adapter reads a value as ``loads(row["value"])`` and converts it to its declared type where
PyFlink would have serialized it before the operator (``convert``), hands PyFlink's context and
window objects to the user's function, and encodes what it yields: a value as a row, a
``(output_tag, value)`` pair as that side output's row.
"""

from __future__ import annotations

from typing import Any

from funke.pyflink.common.typeinfo import TypeInformation
from funke.pyflink.datastream import window as pw
from funke.pyflink.datastream._wire import KEY, TS, VALUE, dumps, loads, needs_conversion
from funke.pyflink.datastream.time_domain import TimeDomain
from funke.semantics import async_io as fa
from funke.semantics import co_process as fc
from funke.semantics import functions as ff
from funke.semantics import process as fp
from funke.semantics.broadcast import BroadcastProcessFunction as FunkeBroadcast
from funke.semantics.broadcast import KeyedBroadcastProcessFunction as FunkeKeyedBroadcast
from funke.semantics.rich import RuntimeContext, call_open
from funke.semantics.state import ReducingStateDescriptor, ValueStateDescriptor
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.timers import TimeDomain as FunkeTimeDomain
from funke.semantics.triggers import Trigger


class Value:
    """How an operator reads its input values: unpickle, then convert to ``type_info`` (where PyFlink
    serialized them on the way here)."""

    def __init__(self, type_info: TypeInformation | None) -> None:
        self.type_info = type_info if needs_conversion(type_info) else None
        self._convert: Any = None

    def __call__(self, row: dict[str, Any]) -> Any:
        if self.type_info is None:
            return loads(row[VALUE])
        convert = self._convert
        if convert is None:  # (built where it runs: a generated function does not pickle)
            convert = self._convert = self.type_info.converter()
        return convert(loads(row[VALUE]))

    def __getstate__(self) -> dict[str, Any]:
        return {"type_info": self.type_info, "_convert": None}


def emit(result: Any, ts: int | None = None, keep: bool = False) -> list[Any]:
    """What a PyFlink function produced, as funke rows: PyFlink iterates whatever it returns (None: nothing).
    With ``keep``, each main-output row carries its timestamp ``ts`` (Flink's: the element's, or an
    event-time timer's) as the number ``pf_ts``, so event time goes on downstream."""
    if result is None:
        return []
    out = []
    for item in result:
        if type(item) is tuple and len(item) == 2 and isinstance(item[0], ff.OutputTag):
            out.append((item[0], {VALUE: dumps(item[1])}))
        elif keep:
            out.append({VALUE: dumps(item), TS: ts})
        else:
            out.append({VALUE: dumps(item)})
    return out


def _open(user: Any, ctx: Any, settings: Any) -> None:
    """The user's ``open`` with a RuntimeContext named after its class (keyed state from funke's ``ctx``)."""
    state = ctx if ctx is not None and callable(getattr(ctx, "get_state", None)) else None
    parallelism = getattr(settings, "parallelism", 1)
    call_open(user, RuntimeContext(type(user).__name__, state=state, parallelism=parallelism, job_parameters=getattr(settings, "job_parameters", {})))


class _Lifecycle:
    """Passes funke's ``open(ctx)`` / ``close()`` on to the user's function; ``settings``: the job's
    parallelism and parameters as of ``execute()`` (``_sinks.Settings``)."""

    user: Any
    settings: Any = None
    keep_ts = False

    def open(self, ctx: Any = None) -> None:
        _open(self.user, ctx, self.settings)

    def close(self) -> None:
        close = getattr(self.user, "close", None)
        if callable(close):
            close()

    def describe(self) -> str:
        """How ``explain()`` names the operator's function: the user's."""
        inner = getattr(self.user, "function", None)  # (a keyed reduce or call: the function it runs)
        return f"(PyFlink {type(inner if inner is not None else self.user).__name__})"

    def configure(self, settings: Any, keep_ts: bool = False) -> Any:
        self.settings, self.keep_ts = settings, keep_ts
        return self


# -- contexts ----------------------------------------------------------------------------------

#: What PyFlink's ``ctx.timestamp()`` gives for an element without a timestamp (Java's Long.MIN_VALUE, not None).
NO_TIMESTAMP = -(2**63)


class _Context:
    """What every PyFlink ``ctx`` has: the element's timestamp, the timer service, broadcast state."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def timestamp(self) -> int:
        """The element's (or the firing timer's) timestamp; PyFlink's Long.MIN_VALUE for an element without one."""
        ts = self._ctx.timestamp()
        return NO_TIMESTAMP if ts is None else ts

    def timer_service(self) -> Any:
        return self._ctx.timer_service()

    def get_broadcast_state(self, descriptor: Any) -> Any:
        return self._ctx.get_broadcast_state(descriptor)


class KeyedContext(_Context):
    """PyFlink's keyed ``ctx``: ``timestamp()``, ``timer_service()``, ``get_current_key()``, ``time_domain()``."""

    __slots__ = ()

    def get_current_key(self) -> Any:
        return loads(self._ctx.get_current_key())

    def time_domain(self) -> TimeDomain:
        return TimeDomain.EVENT_TIME if self._ctx.time_domain() is FunkeTimeDomain.EVENT_TIME else TimeDomain.PROCESSING_TIME

    def current_watermark(self) -> int:
        return self._ctx.timer_service().current_watermark()

    def current_processing_time(self) -> int:
        return self._ctx.timer_service().current_processing_time()


class UnkeyedContext(_Context):
    """PyFlink's ``ctx`` of an unkeyed function: ``timestamp()``, ``timer_service()``, broadcast state."""

    __slots__ = ()

    def apply_to_keyed_state(self, descriptor: Any, function: Any) -> None:
        self._ctx.apply_to_keyed_state(descriptor, lambda key, state: function(loads(key), state))

    def current_watermark(self) -> int:
        return self._ctx.current_watermark()

    def current_processing_time(self) -> int:
        return self._ctx.current_processing_time()


class WindowContext:
    """PyFlink's window ``context``: ``window()``, ``current_watermark()``, ``current_processing_time()``,
    ``window_state()``, ``global_state()``."""

    __slots__ = ("_ctx", "_number")

    def __init__(self, ctx: Any, number: int | None) -> None:
        self._ctx, self._number = ctx, number

    def window(self) -> pw.Window:
        return pw.user_window(self._ctx.window(), number=self._number)

    def current_watermark(self) -> int:
        return self._ctx.current_watermark()

    def current_processing_time(self) -> int:
        return self._ctx.current_processing_time()

    def window_state(self) -> Any:
        return self._ctx.window_state()

    def global_state(self) -> Any:
        return self._ctx.global_state()


# -- one input ---------------------------------------------------------------------------------


class ProcessAdapter(_Lifecycle, fp.ProcessFunction):
    """A PyFlink ``ProcessFunction`` on an unkeyed stream."""

    def __init__(self, user: Any, read: Value) -> None:
        self.user, self.read = user, read

    def process_element(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element(self.read(row), UnkeyedContext(ctx)), ctx.timestamp(), self.keep_ts)


class KeyedProcessAdapter(_Lifecycle, ff.KeyedProcessFunction):
    """A PyFlink ``KeyedProcessFunction`` (and keyed ``map``/``flat_map``/``filter`` of function classes)."""

    def __init__(self, user: Any, read: Value) -> None:
        self.user, self.read = user, read

    def process_element(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element(self.read(row), KeyedContext(ctx)), ctx.timestamp(), self.keep_ts)

    def on_timer(self, timestamp: int, ctx: Any) -> list[Any]:
        ts = timestamp if ctx.time_domain() is FunkeTimeDomain.EVENT_TIME else None
        return emit(self.user.on_timer(timestamp, KeyedContext(ctx)), ts, self.keep_ts)


class KeyedCall:
    """A keyed ``map`` / ``flat_map`` / ``filter`` of a function class, as a KeyedProcessFunction (its
    ``open`` gets keyed state, as in PyFlink)."""

    def __init__(self, function: Any, kind: str) -> None:
        self.function, self.kind = function, kind

    def open(self, runtime_context: Any) -> None:
        call_open(self.function, runtime_context)

    def close(self) -> None:
        self.function.close()

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        return None

    def process_element(self, value: Any, ctx: Any) -> Any:
        f = self.function
        if self.kind == "map":
            return [f.map(value)]
        if self.kind == "filter":
            return [value] if f.filter(value) else []
        return f.flat_map(value)


class KeyedReduce:
    """PyFlink's keyed ``reduce`` (and ``sum``/``min``/``max``...): reducing state per key, its value
    after each element (streaming) or once per key at the end of input (batch)."""

    def __init__(self, reduce_function: Any, settings: Any) -> None:
        self.function, self.settings = reduce_function, settings

    def open(self, runtime_context: Any) -> None:
        f = self.function
        reduce = f.reduce if callable(getattr(f, "reduce", None)) else f
        if callable(getattr(f, "open", None)):
            call_open(f, runtime_context)
        self.state = runtime_context.get_reducing_state(ReducingStateDescriptor("_reduce_state", reduce))

    def close(self) -> None:
        close = getattr(self.function, "close", None)
        if callable(close):
            close()

    def process_element(self, value: Any, ctx: Any) -> Any:
        if self.settings.batch:
            if self.state.get() is None:
                ctx.timer_service().register_event_time_timer(MAX_WATERMARK)
            self.state.add(value)
            return None
        self.state.add(value)
        return [self.state.get()]

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        current = self.state.get()
        return [current] if current is not None else None


# -- windows ----------------------------------------------------------------------------------------


#: A count window function's firings per key (``WindowAdapter._number``), in the key's window-global state.
_FIRINGS = ValueStateDescriptor("_funke_count_window_firings", int)


class WindowAdapter(_Lifecycle, ff.ProcessWindowFunction):
    """A PyFlink window function: ``process`` / ``apply`` with or without a key (``window_all``)."""

    def __init__(self, user: Any, read: Value, *, kind: str, counting: bool) -> None:
        self.user, self.read, self.kind, self.counting = user, read, kind, counting

    def process(self, key: Any, ctx: Any, elements: list[Any]) -> list[Any]:
        values = [self.read(e) for e in elements]
        user, kind, number = self.user, self.kind, self._number(ctx, fired=True)
        if kind == "process":
            out = user.process(loads(key), WindowContext(ctx, number), values)
        elif kind == "process_all":
            out = user.process(WindowContext(ctx, number), values)
        elif kind == "apply":
            out = user.apply(loads(key), pw.user_window(ctx.window(), number=number), values)
        else:  # apply_all
            out = user.apply(pw.user_window(ctx.window(), number=number), values)
        return emit(out)

    def _number(self, ctx: Any, *, fired: bool) -> int | None:
        """A count window's number (``pw.CountWindow``): its key's firings before this one, kept in the key's state
        (None for other windows). ``fired``: this call is the window's firing, so the next one's number is one more."""
        if not self.counting:
            return None
        firings = ctx.global_state().get_state(_FIRINGS)
        before = firings.value() or 0
        if fired:
            firings.update(before + 1)
            return before
        return max(before - 1, 0)  # (the window last fired)

    def clear(self, ctx: Any) -> None:
        clear = getattr(self.user, "clear", None)
        if callable(clear) and self.kind in ("process", "process_all"):
            clear(WindowContext(ctx, self._number(ctx, fired=False)))


class ReduceAdapter(_Lifecycle, ff.ReduceFunction):
    """A PyFlink reduce function over a window's rows; the reduced row keeps the later row's other columns."""

    def __init__(self, user: Any, read: Value) -> None:
        self.user, self.read = user, read
        self._reduce = user.reduce if callable(getattr(user, "reduce", None)) else user

    def open(self, ctx: Any = None) -> None:
        if callable(getattr(self.user, "open", None)):
            super().open(ctx)

    def close(self) -> None:
        if callable(getattr(self.user, "close", None)):
            super().close()

    def reduce(self, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        return {**b, VALUE: dumps(self._reduce(self.read(a), self.read(b)))}


class AggregateAdapter(_Lifecycle, ff.AggregateFunction):
    """A PyFlink ``AggregateFunction`` over a window's rows; its result as a row."""

    def __init__(self, user: Any, read: Value) -> None:
        self.user, self.read = user, read

    def create_accumulator(self) -> Any:
        return self.user.create_accumulator()

    def add(self, row: dict[str, Any], accumulator: Any) -> Any:
        return self.user.add(self.read(row), accumulator)

    def get_result(self, accumulator: Any) -> dict[str, Any]:
        return {VALUE: dumps(self.user.get_result(accumulator))}

    def merge(self, a: Any, b: Any) -> Any:
        return self.user.merge(a, b)


class TriggerAdapter(Trigger):
    """A PyFlink user trigger on funke's window operator: the element as its value, PyFlink's windows."""

    reads_elements = True

    def __init__(self, user: Any, read: Value) -> None:
        self.user, self.read = user, read

    def on_element(self, element: Any, timestamp: Any, window: Any, ctx: Any) -> Any:
        return self.user.on_element(self.read(element), timestamp, pw.user_window(window), ctx)

    def on_event_time(self, time: int, window: Any, ctx: Any) -> Any:
        return self.user.on_event_time(time, pw.user_window(window), ctx)

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> Any:
        return self.user.on_processing_time(time, pw.user_window(window), ctx)

    def can_merge(self) -> bool:
        return bool(self.user.can_merge())

    def on_merge(self, window: Any, ctx: Any) -> None:
        self.user.on_merge(pw.user_window(window), ctx)

    def clear(self, window: Any, ctx: Any) -> None:
        self.user.clear(pw.user_window(window), ctx)

    def describe(self) -> str:
        return f"{type(self.user).__name__}()"


# -- two inputs ------------------------------------------------------------------------------------


class CoProcessAdapter(_Lifecycle, fc.CoProcessFunction):
    """A PyFlink ``CoProcessFunction`` (or an unkeyed CoMap/CoFlatMap run as one) on connected streams."""

    def __init__(self, user: Any, read1: Value, read2: Value) -> None:
        self.user, self.read1, self.read2 = user, read1, read2

    def process_element1(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element1(self.read1(row), UnkeyedContext(ctx)), ctx.timestamp(), self.keep_ts)

    def process_element2(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element2(self.read2(row), UnkeyedContext(ctx)), ctx.timestamp(), self.keep_ts)


class KeyedCoProcessAdapter(_Lifecycle, fc.KeyedCoProcessFunction):
    """A PyFlink ``KeyedCoProcessFunction`` (or a keyed CoMap/CoFlatMap) with keyed state shared by both inputs."""

    def __init__(self, user: Any, read1: Value, read2: Value) -> None:
        self.user, self.read1, self.read2 = user, read1, read2

    def process_element1(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element1(self.read1(row), KeyedContext(ctx)), ctx.timestamp(), self.keep_ts)

    def process_element2(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element2(self.read2(row), KeyedContext(ctx)), ctx.timestamp(), self.keep_ts)

    def on_timer(self, timestamp: int, ctx: Any) -> list[Any]:
        ts = timestamp if ctx.time_domain() is FunkeTimeDomain.EVENT_TIME else None
        return emit(getattr(self.user, "on_timer", lambda *_: None)(timestamp, KeyedContext(ctx)), ts, self.keep_ts)


class CoCall:
    """A CoMapFunction / CoFlatMapFunction as a co-process function."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def open(self, runtime_context: Any) -> None:
        call_open(self.function, runtime_context)

    def close(self) -> None:
        self.function.close()

    def _call(self, side: int, value: Any) -> Any:
        f = self.function
        if callable(getattr(f, f"map{side}", None)):
            return [getattr(f, f"map{side}")(value)]
        return getattr(f, f"flat_map{side}")(value)

    def process_element1(self, value: Any, ctx: Any) -> Any:
        return self._call(1, value)

    def process_element2(self, value: Any, ctx: Any) -> Any:
        return self._call(2, value)


class BroadcastAdapter(_Lifecycle, FunkeBroadcast):
    def __init__(self, user: Any, read1: Value, read2: Value) -> None:
        self.user, self.read1, self.read2 = user, read1, read2

    def process_element(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element(self.read1(row), UnkeyedContext(ctx)), ctx.timestamp(), self.keep_ts)

    def process_broadcast_element(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_broadcast_element(self.read2(row), UnkeyedContext(ctx)), ctx.timestamp(), self.keep_ts)


class KeyedBroadcastAdapter(_Lifecycle, FunkeKeyedBroadcast):
    def __init__(self, user: Any, read1: Value, read2: Value) -> None:
        self.user, self.read1, self.read2 = user, read1, read2

    def process_element(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_element(self.read1(row), KeyedContext(ctx)), ctx.timestamp(), self.keep_ts)

    def process_broadcast_element(self, row: Any, ctx: Any) -> list[Any]:
        return emit(self.user.process_broadcast_element(self.read2(row), UnkeyedContext(ctx)), ctx.timestamp(), self.keep_ts)

    def on_timer(self, timestamp: int, ctx: Any) -> list[Any]:
        ts = timestamp if ctx.time_domain() is FunkeTimeDomain.EVENT_TIME else None
        return emit(self.user.on_timer(timestamp, KeyedContext(ctx)), ts, self.keep_ts)


# -- async I/O -----------------------------------------------------------------------------------------


class AsyncAdapter(_Lifecycle, fa.AsyncFunction):
    """A PyFlink ``AsyncFunction``: the element's value to ``async_invoke``, its results as rows (with its event time)."""

    def __init__(self, user: Any, read: Value, keep_ts: bool) -> None:
        self.user, self.read, self.keep_ts = user, read, keep_ts

    def _rows(self, row: dict[str, Any], results: Any, method: str) -> list[dict[str, Any]]:
        if results is None:
            return []
        if not isinstance(results, (list, tuple)):
            raise TypeError(f"{type(self.user).__name__}.{method} must return a list of results, got {type(results).__name__}: {results!r}")
        if self.keep_ts:
            return [{VALUE: dumps(r), TS: row.get(TS)} for r in results]
        return [{VALUE: dumps(r)} for r in results]

    async def async_invoke(self, row: dict[str, Any]) -> list[Any]:
        return self._rows(row, await self.user.async_invoke(self.read(row)), "async_invoke")

    def timeout(self, row: dict[str, Any]) -> list[Any]:
        return self._rows(row, self.user.timeout(self.read(row)), "timeout")


__all__ = [
    "KEY",
    "AggregateAdapter",
    "AsyncAdapter",
    "BroadcastAdapter",
    "CoCall",
    "CoProcessAdapter",
    "KeyedBroadcastAdapter",
    "KeyedCall",
    "KeyedCoProcessAdapter",
    "KeyedProcessAdapter",
    "KeyedReduce",
    "ProcessAdapter",
    "ReduceAdapter",
    "TriggerAdapter",
    "Value",
    "WindowAdapter",
    "emit",
]  # fmt: skip
