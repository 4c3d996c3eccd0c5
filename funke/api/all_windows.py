"""``stream.window_all(assigner)`` / ``count_window_all(n)``: windows over all elements, not per key.

Flink runs a non-keyed window in one operator instance (parallelism 1). funke does the same by
keying every element with one constant (the column ``fk_all``), building the keyed window, and
dropping the constant from what it emits: results have ``window_start``, ``window_end`` and the
function's columns. The functions are the key-less forms (``ProcessAllWindowFunction``,
``AllWindowFunction``); a reduce or aggregate is the same as on a keyed window.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from funke.api.streams import DataStream
from funke.errors import PlanError
from funke.plan import nodes
from funke.plan.expr import lit
from funke.semantics.functions import OutputTag
from funke.semantics.windows import WindowAssigner

#: The constant key of every element of a window over all elements.
ALL = "fk_all"


def _keyed(stream: DataStream) -> Any:
    if stream.schema is not None and ALL in stream.schema:
        raise PlanError(f"window_all(): the stream has a column '{ALL}', which funke uses for the window's one key; rename it")
    return stream.with_column(ALL, lit(0)).key_by(ALL)


class AllWindowResult(DataStream):
    """What a window over all elements gives: the window's rows without the constant key. ``uid``
    and ``name`` name the window operator (its state); side outputs come from the window itself."""

    def __init__(self, env: Any, window: nodes.Node) -> None:
        self._window = window
        rows = DataStream(env, window)
        super().__init__(env, rows.select(*(c for c in rows.columns if c != ALL)).node)

    @property
    def side_output_node(self) -> nodes.Node:
        return self._window

    def uid(self, uid: str) -> AllWindowResult:
        if not isinstance(uid, str) or not uid:
            raise PlanError(f"uid() takes a non-empty string, got {uid!r}")
        return AllWindowResult(self._env, dataclasses.replace(self._window, explicit_uid=uid))

    def name(self, name: str) -> AllWindowResult:
        return AllWindowResult(self._env, dataclasses.replace(self._window, explicit_name=name))

    def get_side_output(self, tag: OutputTag) -> DataStream:
        if not isinstance(tag, OutputTag):
            raise PlanError(f"get_side_output() takes an OutputTag, got {tag!r}")
        side = DataStream(self._env, nodes.SideOutput((self._window,), tag=tag))
        if side.schema is not None and ALL in side.schema:  # late elements: the input's rows, without the constant
            return side.select(*(c for c in side.columns if c != ALL))
        return side


def _result(windowed: DataStream) -> DataStream:
    return AllWindowResult(windowed._env, windowed.node)


class AllWindowedStream:
    """``stream.window_all(assigner)``: what to compute per window over all elements.

    ``trigger``, ``evictor``, ``allowed_lateness`` and ``side_output_late_data`` as on a keyed
    window; then ``reduce``, ``aggregate``, ``process(ProcessAllWindowFunction)``,
    ``apply(AllWindowFunction)``, ``count``, ``sum``, ``min``, ``max``, ``avg``.
    """

    def __init__(self, windowed: Any) -> None:
        self._windowed = windowed
        windowed._keyed_functions = False

    @classmethod
    def over(cls, stream: DataStream, assigner: WindowAssigner) -> AllWindowedStream:
        return cls(_keyed(stream).window(assigner))

    @classmethod
    def counting(cls, stream: DataStream, size: int, slide: int | None) -> AllWindowedStream:
        return cls(_keyed(stream).count_window(size, slide))

    # -- window options (as on a keyed window) ------------------------------------------------
    def trigger(self, trigger: Any) -> AllWindowedStream:
        self._windowed.trigger(trigger)
        return self

    def evictor(self, evictor: Any) -> AllWindowedStream:
        self._windowed.evictor(evictor)
        return self

    def allowed_lateness(self, lateness: Any) -> AllWindowedStream:
        self._windowed.allowed_lateness(lateness)
        return self

    def side_output_late_data(self, tag: OutputTag) -> AllWindowedStream:
        self._windowed.side_output_late_data(tag)
        return self

    def on_path(self, path: str) -> AllWindowedStream:
        self._windowed.on_path(path)
        return self

    # -- what to compute ------------------------------------------------------------------------
    def reduce(self, fn: Any, window_function: Any = None, *, output_schema: Any = None) -> DataStream:
        """Reduce the window's elements with ``fn(a, b)``; with an ``AllWindowFunction`` /
        ``ProcessAllWindowFunction`` after it, that function's rows of ``output_schema``."""
        return _result(self._windowed.reduce(fn, window_function, output_schema=output_schema))

    def aggregate(self, function: Any = None, window_function: Any = None, *, output_schema: Any = None, **named: Any) -> DataStream:
        return _result(self._windowed.aggregate(function, window_function, output_schema=output_schema, **named))

    def process(self, fn: Any, *, output_schema: Any) -> DataStream:
        """``fn.process(ctx, elements)`` (a ``ProcessAllWindowFunction``) yields rows of ``output_schema``."""
        return _result(self._windowed.process(fn, output_schema=output_schema))

    def apply(self, fn: Any, *, output_schema: Any) -> DataStream:
        """``fn.apply(window, inputs)`` (an ``AllWindowFunction``) yields rows of ``output_schema``."""
        return _result(self._windowed.apply(fn, output_schema=output_schema))

    def count(self, alias: str = "count") -> DataStream:
        return _result(self._windowed.count(alias))

    def sum(self, column: str, alias: str | None = None) -> DataStream:
        return _result(self._windowed.sum(column, alias))

    def min(self, column: str, alias: str | None = None) -> DataStream:
        return _result(self._windowed.min(column, alias))

    def max(self, column: str, alias: str | None = None) -> DataStream:
        return _result(self._windowed.max(column, alias))

    def avg(self, column: str, alias: str | None = None) -> DataStream:
        return _result(self._windowed.avg(column, alias))
