"""PyFlink's ``WindowedStream`` (``key_by(...).window(...)`` / ``count_window``) and ``AllWindowedStream``
(``window_all``) on funke's windows.

The assigner, trigger, allowed lateness and late-data tag become funke's window; the user's
reduce / aggregate / apply / process functions run inside funke's window operator through
adapters (values converted to their type: the shuffle before a window serializes them). A
window's result stream holds the function's values only (``value``), as PyFlink's does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import funke as fk
from funke.api.all_windows import AllWindowResult
from funke.errors import PlanError
from funke.pyflink.common.typeinfo import TypeInformation
from funke.pyflink.datastream import _adapters as adapters
from funke.pyflink.datastream._wire import TS, VALUE
from funke.pyflink.datastream.data_stream import DataStream, KeyedStream
from funke.pyflink.datastream.window import CountAssigner, ExtractedGap, SlidingCountTrigger
from funke.semantics import triggers as ft
from funke.semantics.window_functions import ProcessAllWindowFunction as FunkeProcessAll
from funke.semantics.windows import WindowAssigner

__all__ = ["AllWindowedStream", "WindowedStream"]

_BUILT_IN_TRIGGERS = (
    ft.EventTimeTrigger, ft.ProcessingTimeTrigger, ft.CountTrigger, ft.ContinuousEventTimeTrigger,
    ft.ContinuousProcessingTimeTrigger, ft.NeverTrigger,
)  # fmt: skip
_VALUE_OUT = f"{VALUE} binary"


class AllWindowAdapter(FunkeProcessAll):
    """funke's window-over-all-elements function around a PyFlink one (an ``a.WindowAdapter`` without the key)."""

    def __init__(self, inner: adapters.WindowAdapter) -> None:
        self.inner = inner

    def open(self, ctx: Any) -> None:
        self.inner.open(ctx)

    def close(self) -> None:
        self.inner.close()

    def process(self, ctx: Any, elements: Any) -> Any:
        return self.inner.process(None, ctx, elements)

    def clear(self, ctx: Any) -> None:
        self.inner.clear(ctx)


class _Windowed:
    """What both windowed streams share: the window's options, and its functions' adapters."""

    def __init__(self, stream: DataStream, assigner: Any, *, keyed: bool) -> None:
        if not isinstance(assigner, (WindowAssigner, CountAssigner)):
            raise TypeError(f"window() takes a window assigner (e.g. TumblingEventTimeWindows.of(Time.seconds(5))), got {assigner!r}")
        self._stream, self._keyed = stream, keyed
        self._read = stream._operator_read()
        self._assigner = self._own_gap(assigner)
        self._trigger: Any = None
        self._lateness: Any = None
        self._late: Any = None
        if isinstance(assigner, WindowAssigner) and assigner.is_event_time and assigner.needs_timestamp and not stream._has_ts:
            raise PlanError(
                f"{assigner.describe()} needs event time, and these values have no timestamps: assign them with "
                "assign_timestamps_and_watermarks(WatermarkStrategy...with_timestamp_assigner(...)) before key_by / "
                "window_all (funke carries timestamps through map, flat_map, filter, key_by, process functions and windows)"
            )

    def _own_gap(self, assigner: Any) -> Any:
        gap = getattr(assigner, "gap_fn", None)
        if isinstance(gap, ExtractedGap):  # the extractor gets the value, not funke's row
            return dataclasses.replace(assigner, gap_fn=ExtractedGap(gap.extractor, self._read))
        return assigner

    def get_execution_environment(self) -> Any:
        return self._stream._env

    def get_input_type(self) -> TypeInformation:
        return self._stream.get_type()

    def trigger(self, trigger: Any) -> Any:
        if not isinstance(trigger, ft.Trigger):
            raise TypeError(f"trigger() takes a Trigger, got {trigger!r}")
        self._trigger = self._own_trigger(trigger)
        return self

    def _own_trigger(self, trigger: Any) -> Any:
        if isinstance(trigger, ft.PurgingTrigger):
            return ft.PurgingTrigger.of(self._own_trigger(trigger.nested))
        return trigger if isinstance(trigger, _BUILT_IN_TRIGGERS) else adapters.TriggerAdapter(trigger, self._read)

    def allowed_lateness(self, time_ms: Any) -> Any:
        self._lateness = time_ms
        return self

    def side_output_late_data(self, output_tag: Any) -> Any:
        self._late = output_tag
        return self

    # -- building ---------------------------------------------------------------------------
    def _funke(self) -> Any:
        stream = self._stream
        if self._keyed:
            keyed = stream._base
            if isinstance(self._assigner, CountAssigner):
                w = keyed.count_window(self._assigner.size, self._assigner.slide)
            else:
                w = keyed.window(self._assigner)
        else:
            plain = stream._timed()._plain()
            if isinstance(self._assigner, CountAssigner):
                w = plain.count_window_all(self._assigner.size, self._assigner.slide)
            else:
                w = plain.window_all(self._assigner)
        if isinstance(self._assigner, CountAssigner) and self._assigner.slide is not None:
            w.trigger(SlidingCountTrigger(self._assigner.size, self._assigner.slide))  # (PyFlink's firings, not Java's)
        if self._trigger is not None:
            w.trigger(self._trigger)
        if self._lateness is not None:
            w.allowed_lateness(self._lateness)
        if self._late is not None:  # (funke's tag without a schema: the late rows are the window's input)
            w.side_output_late_data(fk.OutputTag(self._late.tag_id))
        return w

    def _adapter(self, user: Any, kind: str, read: adapters.Value | None = None) -> Any:
        counting = isinstance(self._assigner, CountAssigner)
        inner = adapters.WindowAdapter(user, read if read is not None else self._read, kind=kind, counting=counting).configure(self._stream._env._settings)
        return inner if self._keyed else AllWindowAdapter(inner)

    def _result(self, windowed: Any, output_type: TypeInformation | None) -> DataStream:
        late = (self._late.tag_id,) if self._late is not None else ()
        # Flink gives a time window's results its last millisecond as their timestamp (``window.max_timestamp()``),
        # in processing time for a processing-time window; PyFlink a count or global window's the timestamp of the
        # element that fired it (none when the elements have none). They keep that time, so a window, a timer or
        # ``ctx.timestamp()`` downstream reads it, as in a cascade of windows.
        timed = (isinstance(self._assigner, WindowAssigner) and self._assigner.kind != "global") or self._stream._has_ts
        if timed:
            windowed = _timestamped(windowed)
        return _WindowResult(self._stream._env, windowed, output_type, late, timed=timed)

    def _function_kind(self, func: Any, for_process: bool) -> str:
        from funke.pyflink.datastream import functions as pf

        if self._keyed:
            wanted = pf.ProcessWindowFunction if for_process else pf.WindowFunction
        else:
            wanted = pf.ProcessAllWindowFunction if for_process else pf.AllWindowFunction
        if not isinstance(func, wanted):
            what = "process" if for_process else "apply"
            raise TypeError(f"{what}() on a {'keyed' if self._keyed else 'non-keyed'} window takes a {wanted.__name__}, got {func!r}")
        return ("process" if for_process else "apply") + ("" if self._keyed else "_all")

    def reduce(self, reduce_function: Any, window_function: Any = None, output_type: TypeInformation | None = None) -> DataStream:
        reduce = adapters.ReduceAdapter(reduce_function, self._read).configure(self._stream._env._settings)
        w = self._funke()
        if window_function is None:
            return self._result(w.reduce(reduce), self._stream._type)
        kind = self._function_kind(window_function, isinstance(window_function, _PROCESS_TYPES()))
        return self._result(w.reduce(reduce, self._adapter(window_function, kind, adapters.Value(None)), output_schema=_VALUE_OUT), output_type)

    def aggregate(
        self,
        aggregate_function: Any,
        window_function: Any = None,
        accumulator_type: TypeInformation | None = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        agg = adapters.AggregateAdapter(aggregate_function, self._read).configure(self._stream._env._settings)
        wf = None
        if window_function is not None:
            wf = self._adapter(window_function, self._function_kind(window_function, isinstance(window_function, _PROCESS_TYPES())), adapters.Value(None))
        return self._result(self._funke().aggregate(agg, wf, output_schema=_VALUE_OUT), output_type)

    def apply(self, window_function: Any, output_type: TypeInformation | None = None) -> DataStream:
        fn = self._adapter(window_function, self._function_kind(window_function, False))
        return self._result(self._funke().process(fn, output_schema=_VALUE_OUT), output_type)

    def process(self, process_window_function: Any, output_type: TypeInformation | None = None) -> DataStream:
        fn = self._adapter(process_window_function, self._function_kind(process_window_function, True))
        return self._result(self._funke().process(fn, output_schema=_VALUE_OUT), output_type)


def _timestamped(windowed: Any) -> Any:
    """The funke window's results with their time (its last millisecond) in ``pf_ts``."""
    if isinstance(windowed, AllWindowResult):  # (a window over all elements: the window is under the select of its columns)
        return AllWindowResult(windowed._env, dataclasses.replace(windowed.side_output_node, time_column=TS))
    return type(windowed)(windowed._env, dataclasses.replace(windowed.node, time_column=TS))


def _PROCESS_TYPES() -> tuple[type, ...]:
    from funke.pyflink.datastream import functions as pf

    return (pf.ProcessWindowFunction, pf.ProcessAllWindowFunction)


class _WindowResult(DataStream):
    """A window's values. Its side outputs come from the window operator: the late elements
    (``side_output_late_data``) and what its function yielded to a tag."""

    def __init__(self, env: Any, windowed: Any, output_type: TypeInformation | None, late_tags: tuple[str, ...], *, timed: bool) -> None:
        # (the values only, without a time when the window gives them none: a count window over values without one)
        super().__init__(env, windowed.select(VALUE, TS) if timed else windowed.select(VALUE), type_info=output_type, late_tags=late_tags)
        self._windowed = windowed

    def get_side_output(self, output_tag: Any) -> DataStream:
        if output_tag.tag_id not in self._late_tags:
            side = self._windowed.get_side_output(output_tag)
            return DataStream(self._env, side, type_info=getattr(output_tag, "type_info", None))
        late = self._windowed.get_side_output(fk.OutputTag(output_tag.tag_id))
        cols = [VALUE, TS] if late.schema is not None and TS in late.schema.names else [VALUE]
        return DataStream(self._env, late.select(*cols), type_info=getattr(output_tag, "type_info", None))


class WindowedStream(_Windowed):
    """``keyed.window(assigner)`` / ``keyed.count_window(n)``."""

    def __init__(self, keyed_stream: KeyedStream, window_assigner: Any) -> None:
        super().__init__(keyed_stream, window_assigner, keyed=True)


class AllWindowedStream(_Windowed):
    """``stream.window_all(assigner)``: one window over all values (one operator instance, as in Flink)."""

    def __init__(self, data_stream: DataStream, window_assigner: Any) -> None:
        super().__init__(data_stream, window_assigner, keyed=False)

