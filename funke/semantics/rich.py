"""Flink's rich functions: ``open(runtime_context)`` before the first element, ``close()`` after the last.

The function classes of Flink's DataStream API (PyFlink's names) for the stateless operators,
and the :class:`RuntimeContext` every function's ``open`` gets::

    class Enrich(MapFunction):
        def open(self, runtime_context):
            self.table = load_table()          # once per task, not per element

        def map(self, value):
            return {**value, "region": self.table[value["shop"]]}

    stream.map(Enrich(), output_schema="shop string, region string")

On Spark a stateless function's ``open`` runs once per partition of each micro-batch (the
Python task that runs it) and ``close`` after that partition's last row, even when the
function fails. A keyed function's ``open`` runs at the start of each micro-batch of each
key bucket. ``runtime_context`` gives keyed state where the function is keyed
(``get_state(descriptor)`` ...) and the task's name, index and parallelism.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from funke.errors import UnsupportedError

__all__ = [
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeySelector",
    "Lifecycled",
    "MapFunction",
    "RuntimeContext",
    "TaskInfo",
    "call_open",
    "current_task",
    "set_current_task",
]


@dataclass(frozen=True)
class TaskInfo:
    """Where a function runs: Spark's partition (Flink: the subtask) and attempt."""

    index: int = 0
    attempt: int = 0


_task = TaskInfo()


def set_current_task(info: TaskInfo) -> None:
    """Set by the Spark adapters before they call user code in a task (a worker runs one task at a time)."""
    global _task
    _task = info


def current_task() -> TaskInfo:
    return _task


class RuntimeContext:
    """What ``open(runtime_context)`` gets (PyFlink's ``RuntimeContext``).

    ``state`` is the keyed state of a keyed function (a ``StateStore``); a function on an
    unkeyed stream has none, and asking for state says so.

    >>> ctx = RuntimeContext("map Enrich", parallelism=4)
    >>> (ctx.get_task_name(), ctx.get_number_of_parallel_subtasks(), ctx.get_index_of_this_subtask())
    ('map Enrich', 4, 0)
    >>> ctx.get_job_parameter("region", "eu")
    'eu'
    """

    def __init__(
        self,
        task_name: str = "",
        *,
        state: Any = None,
        parallelism: int = 1,
        job_parameters: dict[str, str] | None = None,
    ) -> None:
        self._task_name = task_name
        self._state = state
        self._parallelism = parallelism
        self._job_parameters = dict(job_parameters or {})

    # -- the task -------------------------------------------------------------------
    def get_task_name(self) -> str:
        return self._task_name

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_index_of_this_subtask(self) -> int:
        """Spark's partition id of the task running the function (Flink's subtask index)."""
        return current_task().index

    def get_attempt_number(self) -> int:
        return current_task().attempt

    def get_task_name_with_subtasks(self) -> str:
        return f"{self._task_name} ({self.get_index_of_this_subtask() + 1}/{self._parallelism})"

    def get_job_parameter(self, key: str, default_value: str | None = None) -> str | None:
        return self._job_parameters.get(key, default_value)

    def get_metrics_group(self) -> Any:
        raise UnsupportedError(
            "get_metrics_group(): funke has no per-function metrics; a job's metrics (rows in and out per operator, "
            "watermark, late rows) are JobHandle.metrics() and its Prometheus endpoint"
        )

    # -- keyed state ----------------------------------------------------------------
    def _keyed(self, accessor: str) -> Any:
        if self._state is None:
            raise TypeError(
                f"{accessor}(): keyed state needs a keyed stream (Flink: 'Keyed state can only be used on a "
                "KeyedStream'); call key_by(...) before this function"
            )
        return getattr(self._state, accessor)

    def get_state(self, descriptor: Any) -> Any:
        return self._keyed("get_state")(descriptor)

    def get_list_state(self, descriptor: Any) -> Any:
        return self._keyed("get_list_state")(descriptor)

    def get_map_state(self, descriptor: Any) -> Any:
        return self._keyed("get_map_state")(descriptor)

    def get_reducing_state(self, descriptor: Any) -> Any:
        return self._keyed("get_reducing_state")(descriptor)

    def get_aggregating_state(self, descriptor: Any) -> Any:
        return self._keyed("get_aggregating_state")(descriptor)


def call_open(function: Any, ctx: RuntimeContext) -> None:
    """``function.open(ctx)``; a function whose ``open`` takes no argument (funke's older spelling) is called without."""
    open_ = getattr(function, "open", None)
    if not callable(open_):
        return
    try:
        params = [p for p in inspect.signature(open_).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):  # a builtin without a signature: give it the context
        params = [None]  # type: ignore[list-item]
    if params:
        open_(ctx)
    else:
        open_()


class Function:
    """Every user function: ``open(runtime_context)`` before the first element, ``close()`` after the last."""

    def open(self, runtime_context: RuntimeContext) -> None:
        return None

    def close(self) -> None:
        return None


class MapFunction(Function):
    """``map(value)``: one value out per value in."""

    def map(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.map(value) is not implemented")


class FlatMapFunction(Function):
    """``flat_map(value)``: yields (or returns a list of) zero or more values."""

    def flat_map(self, value: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.flat_map(value) is not implemented")


class FilterFunction(Function):
    """``filter(value)``: keep the value when it returns true."""

    def filter(self, value: Any) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.filter(value) is not implemented")


class KeySelector(Function):
    """``get_key(value)``: the key of a value (``key_by(KeySelector())``)."""

    def get_key(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.get_key(value) is not implemented")


class Lifecycled:
    """A function with a lifecycle, as the plain callable Spark's row path calls: ``call(function, row)``
    per row, ``start()`` (the function's ``open(runtime_context)``) before a task's first row and
    ``finish()`` (its ``close()``) after its last.

    Functions built by funke around a user's function (a ``MapFunction``'s ``map``, a PyFlink
    function with its value conversion) are this, so that funke never calls a user function
    before its ``open`` (plan-time probing skips them).

    >>> class Add(MapFunction):
    ...     def open(self, runtime_context):
    ...         self.n = 10
    ...     def map(self, value):
    ...         return value + self.n
    >>> f = Lifecycled(Add(), lambda fn, v: fn.map(v), "map")
    >>> f.start(); f(1)
    11
    """

    def __init__(
        self,
        function: Any,
        call: Any,
        task_name: str,
        *,
        parallelism: int = 1,
        job_parameters: dict[str, str] | None = None,
    ) -> None:
        self.function = function
        self._call = call
        self.task_name = task_name
        self.parallelism = parallelism
        self.job_parameters = dict(job_parameters or {})
        self.__qualname__ = type(function).__qualname__
        self.__module__ = type(function).__module__

    def __call__(self, row: Any) -> Any:
        return self._call(self.function, row)

    def start(self) -> None:
        call_open(self.function, RuntimeContext(self.task_name, parallelism=self.parallelism, job_parameters=self.job_parameters))

    def finish(self) -> None:
        close = getattr(self.function, "close", None)
        if callable(close):
            close()
