"""Window functions besides ``ProcessWindowFunction``: Flink's ``WindowFunction`` (``apply``) and the
forms over all elements of a non-keyed window (``window_all``), each run as a ProcessWindowFunction.

* ``WindowFunction.apply(key, window, inputs)`` yields the window's rows (``windowed.apply(...)``).
* ``AllWindowFunction.apply(window, inputs)`` and ``ProcessAllWindowFunction.process(ctx, elements)``
  are the same without a key (``stream.window_all(...).apply/process(...)``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from funke.semantics.functions import ProcessWindowFunction
from funke.semantics.rich import Function, call_open

__all__ = [
    "AllWindowFunction",
    "AsProcessWindowFunction",
    "ProcessAllWindowFunction",
    "WindowFunction",
    "as_process_window_function",
]


class WindowFunction(Function):
    """Flink's ``WindowFunction``: ``apply(key, window, inputs)`` yields (or returns a list of) the window's rows."""

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.apply(key, window, inputs) is not implemented")


class AllWindowFunction(Function):
    """Flink's ``AllWindowFunction`` (``window_all``): ``apply(window, inputs)`` yields the window's rows."""

    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.apply(window, inputs) is not implemented")


class ProcessAllWindowFunction(Function):
    """Flink's ``ProcessAllWindowFunction`` (``window_all``): ``process(ctx, elements)`` yields the window's rows;
    ``ctx`` as a ProcessWindowFunction's (``window()``, ``current_watermark()``, ``window_state()``, ``output(tag, row)``)."""

    def process(self, ctx: Any, elements: Iterable[Any]) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process(ctx, elements) is not implemented")

    def clear(self, ctx: Any) -> None:
        return None


class AsProcessWindowFunction(ProcessWindowFunction):
    """A WindowFunction, AllWindowFunction or ProcessAllWindowFunction run as a ProcessWindowFunction
    (its ``open``/``close`` passed on).

    >>> class Total(WindowFunction):
    ...     def apply(self, key, window, inputs):
    ...         yield (key, sum(inputs))
    >>> class Ctx:
    ...     def window(self):
    ...         return "w"
    >>> list(AsProcessWindowFunction(Total()).process("a", Ctx(), [1, 2]))
    [('a', 3)]
    """

    def __init__(self, function: WindowFunction | AllWindowFunction | ProcessAllWindowFunction) -> None:
        self.function = function

    def open(self, ctx: Any) -> None:
        call_open(self.function, ctx)

    def process(self, key: Any, ctx: Any, elements: list[Any]) -> Iterable[Any] | None:
        f = self.function
        if isinstance(f, WindowFunction):
            return f.apply(key, ctx.window(), elements)
        if isinstance(f, AllWindowFunction):
            return f.apply(ctx.window(), elements)
        return f.process(ctx, elements)

    def clear(self, ctx: Any) -> None:
        clear = getattr(self.function, "clear", None)
        if callable(clear):
            clear(ctx)

    def close(self) -> None:
        self.function.close()


def as_process_window_function(function: Any, *, keyed: bool = True) -> ProcessWindowFunction:
    """``function`` as the ProcessWindowFunction the window operator runs, or a TypeError naming what is accepted."""
    if isinstance(function, ProcessWindowFunction):
        if not keyed:
            raise TypeError(
                f"{type(function).__name__} is a ProcessWindowFunction (process(key, ctx, elements)); a window over all "
                "elements has no key: use a ProcessAllWindowFunction (process(ctx, elements))"
            )
        return function
    if keyed and isinstance(function, WindowFunction):
        return AsProcessWindowFunction(function)
    if not keyed and isinstance(function, (AllWindowFunction, ProcessAllWindowFunction)):
        return AsProcessWindowFunction(function)
    wanted = "a ProcessWindowFunction or WindowFunction" if keyed else "a ProcessAllWindowFunction or AllWindowFunction"
    raise TypeError(f"a window function here is {wanted}, got {function!r}")
