"""The reference window operator: Flink's ``WindowOperator`` / ``EvictingWindowOperator`` in Python.

Both execution paths are checked against this. It is driven the way Flink's test
harness drives an operator, one call per input event::

    op = WindowOperator(WindowSpec.of(TumblingEventTimeWindows.of(seconds(10))), WindowAggregate.count())
    op.process_element("a", {"v": 1}, timestamp=1_000)   # -> []
    op.advance_watermark(9_999)                          # -> [OutputRecord(WindowResult("a", 0, 10000, 1), 9999)]

Each call returns the records it caused, main and side outputs interleaved in
emission order. Per key, an element is assigned to windows (merged with in-flight
sessions for merging assigners), added to each window's state, and the trigger
decides whether the window fires and/or purges. Window state lives until
``max_timestamp + allowed_lateness`` (a cleanup timer); an element all of whose
windows are past that is late: it goes to the late-data side output when a tag is
set, otherwise it is dropped and counted in :attr:`WindowOperator.num_late_records_dropped`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from funke.semantics.clock import Clock
from funke.semantics.evictors import CountEvictor, Evictor, TimestampedValue, run_evictor
from funke.semantics.functions import (
    AggregateFunction,
    AvgAggregate,
    CountAggregate,
    MaxAggregate,
    MinAggregate,
    OutputRecord,
    OutputTag,
    Partial,
    ProcessWindowFunction,
    ReduceFunction,
    SumAggregate,
    as_reduce_callable,
    collect_rows,
    side_output_of,
)
from funke.semantics.merging import MergingWindowSet
from funke.semantics.operator import TimedOperator
from funke.semantics.rich import RuntimeContext, call_open
from funke.semantics.state import (
    VOID_NAMESPACE,
    AggregatingStateDescriptor,
    KeyedStateBackend,
    ListStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    StateStore,
    ValueStateDescriptor,
)
from funke.semantics.time import MAX_WATERMARK, Duration, to_millis
from funke.semantics.timers import TimeDomain, Timer
from funke.semantics.triggers import CountTrigger, PurgingTrigger, Trigger, TriggerResult
from funke.semantics.windows import GlobalWindow, GlobalWindows, TimeWindow, WindowAssigner

Window = TimeWindow | GlobalWindow

# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class WindowSpec:
    """Everything about a window except its function: assigner, trigger, evictor, lateness, late tag.

    ``trigger=None`` means the assigner's default trigger (as in Flink).
    """

    assigner: WindowAssigner
    trigger: Trigger | None = None
    evictor: Evictor | None = None
    allowed_lateness_ms: int = 0
    late_data_tag: OutputTag | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.assigner, WindowAssigner):
            raise TypeError(f"a window needs a WindowAssigner (e.g. TumblingEventTimeWindows.of(...)), got {self.assigner!r}")
        if self.trigger is not None and not isinstance(self.trigger, Trigger):
            raise TypeError(f"trigger must be a Trigger, got {self.trigger!r}")
        if self.evictor is not None and not isinstance(self.evictor, Evictor):
            raise TypeError(f"evictor must be an Evictor, got {self.evictor!r}")
        lateness = self.allowed_lateness_ms
        if isinstance(lateness, bool) or not isinstance(lateness, int) or lateness < 0:
            raise ValueError(f"allowed lateness must be >= 0 milliseconds, got {lateness!r}")
        if self.late_data_tag is not None and not isinstance(self.late_data_tag, OutputTag):
            raise TypeError(f"late data goes to an OutputTag, got {self.late_data_tag!r}")
        if self.assigner.is_merging and not self.effective_trigger.can_merge():
            raise ValueError(
                f"{self.assigner.describe()} merges windows, but trigger {self.effective_trigger.describe()} "
                "cannot merge; use a trigger whose can_merge() is True"
            )

    @classmethod
    def of(
        cls,
        assigner: WindowAssigner,
        *,
        trigger: Trigger | None = None,
        evictor: Evictor | None = None,
        allowed_lateness: Duration = 0,
        late_data_tag: OutputTag | None = None,
    ) -> WindowSpec:
        return cls(assigner, trigger, evictor, to_millis(allowed_lateness, what="allowed lateness"), late_data_tag)

    @classmethod
    def count_window(cls, size: int, slide: int | None = None) -> WindowSpec:
        """Flink's ``countWindow``: ``(size)`` tumbles, ``(size, slide)`` slides, by element count.

        Lowered exactly as Flink does: a global window with a purging count trigger,
        or a global window firing every ``slide`` elements that keeps the last ``size``.
        """
        if slide is None:
            return cls(GlobalWindows.create(), trigger=PurgingTrigger.of(CountTrigger.of(size)))
        return cls(GlobalWindows.create(), trigger=CountTrigger.of(slide), evictor=CountEvictor.of(size))

    @property
    def effective_trigger(self) -> Trigger:
        return self.trigger if self.trigger is not None else self.assigner.default_trigger()

    def describe(self) -> str:
        parts = [self.assigner.describe(), self.effective_trigger.describe()]
        if self.evictor is not None:
            parts.append(self.evictor.describe())
        if self.allowed_lateness_ms:
            parts.append(f"allowed lateness {self.allowed_lateness_ms}ms")
        if self.late_data_tag is not None:
            parts.append(f"late data -> {self.late_data_tag.name!r}")
        return ", ".join(parts)


@dataclass(frozen=True)
class WindowReduce:
    """``reduce(f)`` (optionally ``reduce(f, window_function)``): contents pre-reduced as they arrive."""

    reduce_fn: ReduceFunction | Callable[[Any, Any], Any]
    window_function: ProcessWindowFunction | None = None


@dataclass(frozen=True)
class WindowAggregate:
    """``aggregate(agg)`` (optionally with a window function): contents kept as an accumulator."""

    aggregate_fn: AggregateFunction
    window_function: ProcessWindowFunction | None = None

    @classmethod
    def count(cls) -> WindowAggregate:
        return cls(CountAggregate())

    @classmethod
    def sum(cls, field: str | int | None = None) -> WindowAggregate:
        return cls(SumAggregate(field))

    @classmethod
    def min(cls, field: str | int | None = None) -> WindowAggregate:
        return cls(MinAggregate(field))

    @classmethod
    def max(cls, field: str | int | None = None) -> WindowAggregate:
        return cls(MaxAggregate(field))

    @classmethod
    def avg(cls, field: str | int | None = None) -> WindowAggregate:
        return cls(AvgAggregate(field))


@dataclass(frozen=True)
class WindowProcess:
    """``process(fn)``: every element kept; ``fn.process(key, ctx, elements)`` sees them all."""

    process_fn: ProcessWindowFunction


WindowFunction = WindowReduce | WindowAggregate | WindowProcess


def as_window_function(function: Any) -> WindowFunction:
    """Accept the unambiguous short forms: an AggregateFunction, ReduceFunction or ProcessWindowFunction."""
    if isinstance(function, (WindowReduce, WindowAggregate, WindowProcess)):
        return function
    if isinstance(function, AggregateFunction):
        return WindowAggregate(function)
    if isinstance(function, ReduceFunction):
        return WindowReduce(function)
    if isinstance(function, ProcessWindowFunction):
        return WindowProcess(function)
    raise TypeError(
        f"a window needs WindowReduce(f), WindowAggregate(agg), WindowProcess(fn) or a built-in like "
        f"WindowAggregate.count(), got {function!r}"
    )


@dataclass(frozen=True)
class WindowResult:
    """A window's result row: key, window bounds (``None`` for the global window) and value.

    ``fired_at``, of a global window's result only: the timestamp of the element whose arrival fired the window
    (``None`` without one), or of the timer that did. Flink's Java operator stamps such a result with the global
    window's last millisecond, Long.MAX_VALUE; PyFlink's count windows with this time, which funke's PyFlink
    layer gives them (``funke.pyflink.datastream.windowed``). Not part of the result's equality."""

    key: Any
    window_start: int | None
    window_end: int | None
    value: Any
    fired_at: int | None = field(default=None, compare=False)

    @classmethod
    def of(cls, key: Any, window: Window, value: Any, fired_at: int | None = None) -> WindowResult:
        if isinstance(window, GlobalWindow):
            return cls(key, None, None, value, fired_at)
        return cls(key, window.start, window.end, value)

    def as_row(self) -> dict[str, Any]:
        """Flat row: a mapping value's fields are spliced in, any other value is ``value``."""
        row: dict[str, Any] = {"key": self.key, "window_start": self.window_start, "window_end": self.window_end}
        if isinstance(self.value, dict):
            row.update(self.value)
        else:
            row["value"] = self.value
        return row


# --------------------------------------------------------------------------- contexts


class _TriggerContext:
    """Trigger/evictor/merge context scoped to one key and window (Flink's ``WindowOperator.Context``)."""

    def __init__(self, op: WindowOperator, key: Any, window: Window, merged_windows: list[Window] | None = None):
        self._op, self._key, self._window, self._merged = op, key, window, merged_windows or []

    def get_current_watermark(self) -> int:
        return self._op._timers.current_watermark

    def get_current_processing_time(self) -> int:
        return self._op._clock.now_ms()

    def register_event_time_timer(self, time: int) -> None:
        self._op._timers.register_event_time_timer(self._key, self._window, time)

    def register_processing_time_timer(self, time: int) -> None:
        self._op._timers.register_processing_time_timer(self._key, self._window, time)

    def delete_event_time_timer(self, time: int) -> None:
        self._op._timers.delete_event_time_timer(self._key, self._window, time)

    def delete_processing_time_timer(self, time: int) -> None:
        self._op._timers.delete_processing_time_timer(self._key, self._window, time)

    def get_partitioned_state(self, descriptor: StateDescriptor) -> Any:
        return self._op._backend.get_state(descriptor, self._window, scope="trigger:")

    def merge_partitioned_state(self, descriptor: StateDescriptor) -> None:
        if not self._merged:
            return
        state = self.get_partitioned_state(descriptor)
        if not hasattr(state, "merge_namespaces"):
            raise TypeError(
                f"merge_partitioned_state() merges list, reducing or aggregating state; "
                f"{descriptor.name!r} is {descriptor.kind} state"
            )
        state.merge_namespaces(self._window, self._merged)


class _ProcessWindowContext:
    """What a ProcessWindowFunction sees (Flink's ``ProcessWindowFunction.Context``)."""

    def __init__(self, op: WindowOperator, key: Any, window: Window) -> None:
        self._op, self._key, self._window = op, key, window

    def window(self) -> Window:
        return self._window

    def current_watermark(self) -> int:
        return self._op._timers.current_watermark

    def current_processing_time(self) -> int:
        return self._op._clock.now_ms()

    def window_state(self) -> StateStore:
        if self._op.spec.assigner.is_merging:
            raise ValueError(
                "per-window state is not available with merging (session) windows, as in Flink; "
                "use global_state() or an aggregate"
            )
        return StateStore(self._op._backend, self._window)

    def global_state(self) -> StateStore:
        return StateStore(self._op._backend, VOID_NAMESPACE)

    def output(self, tag: OutputTag, value: Any) -> None:
        if not isinstance(tag, OutputTag):
            raise TypeError(f"output() needs an OutputTag as its first argument, got {tag!r}")
        self._op._out.append(OutputRecord(value, self._window.max_timestamp, tag))


# --------------------------------------------------------------------------- the operator

_CONTENTS = "contents"
_MERGING_SET = ValueStateDescriptor("merging-window-set")


class WindowOperator(TimedOperator):
    """Runs one keyed window definition over a stream of elements, watermarks and clock ticks."""

    def __init__(self, spec: WindowSpec, function: Any, *, clock: Clock | None = None) -> None:
        if not isinstance(spec, WindowSpec):
            raise TypeError(f"WindowOperator takes a WindowSpec first (WindowSpec.of(assigner, ...)), got {spec!r}")
        super().__init__(clock)
        self.spec = spec
        self.function: WindowFunction = as_window_function(function)
        self._assigner = spec.assigner
        self._trigger = spec.effective_trigger
        self._backend = KeyedStateBackend(self._clock)
        self._keeps_elements = spec.evictor is not None or isinstance(self.function, WindowProcess)
        self._contents = self._backend.get_state(self._contents_descriptor(), scope="window:")
        self._late_dropped = 0
        #: The timestamp of the element or timer firing a window now (``WindowResult.fired_at``).
        self._fired_at: int | None = None

    def _contents_descriptor(self) -> StateDescriptor:
        fn = self.function
        if self._keeps_elements:
            return ListStateDescriptor(_CONTENTS)
        if isinstance(fn, WindowReduce):
            return ReducingStateDescriptor(_CONTENTS, as_reduce_callable(fn.reduce_fn))
        return AggregatingStateDescriptor(_CONTENTS, fn.aggregate_fn)

    def _process_fn(self) -> ProcessWindowFunction | None:
        fn = self.function
        return fn.process_fn if isinstance(fn, WindowProcess) else fn.window_function

    # -- public driving API -------------------------------------------------------

    @property
    def num_late_records_dropped(self) -> int:
        """Late elements dropped because no late-data tag was set (Flink's ``numLateRecordsDropped``)."""
        return self._late_dropped

    def process_element(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        """Feed one element of ``key``; returns what it caused to be emitted."""
        return self._emitting(partial(self._process_element, key, value, timestamp))

    def _process_element(self, key: Any, value: Any, timestamp: int | None) -> None:
        if not self._opened:
            self._ensure_open()
        self._backend.current_key = key
        if isinstance(value, Partial) and value.window is not None:  # pre-merged session
            windows: list[Window] = [TimeWindow(*value.window)]
        else:
            windows = self._assigner.windows_for(timestamp, value, self._clock.now_ms())
        skipped = True
        if self._assigner.is_merging:
            merging_set = self._load_merging_set()
            for window in windows:
                actual = merging_set.add_window(window, partial(self._merge, key))
                if self._is_window_late(actual):
                    merging_set.retire_window(actual)
                    continue
                skipped = False
                state_window = merging_set.get_state_window(actual)
                assert state_window is not None
                self._add_and_trigger(key, value, timestamp, actual, state_window)
            self._store_merging_set(merging_set)
        else:
            for window in windows:
                if self._is_window_late(window):
                    continue
                skipped = False
                self._add_and_trigger(key, value, timestamp, window, window)
        if skipped and self._is_element_late(timestamp):
            if self.spec.late_data_tag is not None:
                self._out.append(OutputRecord(value, timestamp, self.spec.late_data_tag))
            else:  # a partial aggregate counts the elements it stands for, as Flink counts each
                self._late_dropped += value.count if isinstance(value, Partial) else 1

    def close(self) -> None:
        if self._opened:
            for fn in self._user_functions():
                fn.close()

    def _user_functions(self) -> list[Any]:
        """The user's functions with a lifecycle (``open``/``close``): the window function and a
        reduce or aggregate function given as a class."""
        fn = self.function
        inner = fn.reduce_fn if isinstance(fn, WindowReduce) else fn.aggregate_fn if isinstance(fn, WindowAggregate) else None
        found = [f for f in (inner, self._process_fn()) if f is not None and callable(getattr(f, "open", None))]
        return found

    # -- snapshot / restore ----------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """All of the operator's state as plain rows (window contents, trigger state, timers)."""
        return {"state": self._backend.export_columns(), **self._time_snapshot(), "late_records_dropped": self._late_dropped}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Load a :meth:`snapshot` into this (fresh) operator."""
        self._backend.import_rows(snapshot["state"])
        self._restore_time(snapshot)
        self._late_dropped = snapshot.get("late_records_dropped", 0)

    # -- element path --------------------------------------------------------------

    def _add_and_trigger(self, key: Any, value: Any, timestamp: int | None, window: Window, state_window: Window) -> None:
        self._contents.set_current_namespace(state_window)
        self._contents.add(TimestampedValue(value, timestamp) if self._keeps_elements else value)
        result = self._checked(
            self._trigger.on_element(value, timestamp, window, _TriggerContext(self, key, window)), "on_element"
        )
        if result.fire:
            self._fired_at = timestamp
            self._emit_window_contents(key, window, state_window)
        if result.purge:
            self._contents.set_current_namespace(state_window)
            self._contents.clear()
        self._register_cleanup_timer(key, window)

    def _merge(
        self,
        key: Any,
        merge_result: TimeWindow,
        merged_windows: list[TimeWindow],
        state_window_result: TimeWindow,
        merged_state_windows: list[TimeWindow],
    ) -> None:
        if self._assigner.is_event_time and self._is_window_late(merge_result):
            raise RuntimeError(
                f"merging produced window {merge_result} that is already past watermark "
                f"{self.current_watermark} + allowed lateness; an in-flight session should never be late"
            )
        if not self._assigner.is_event_time and merge_result.max_timestamp <= self._clock.now_ms():
            raise RuntimeError(f"merging produced processing-time window {merge_result} that has already ended")
        self._trigger.on_merge(merge_result, _TriggerContext(self, key, merge_result, list(merged_windows)))
        for window in merged_windows:
            self._trigger.clear(window, _TriggerContext(self, key, window))
            self._delete_cleanup_timer(key, window)
        self._contents.merge_namespaces(state_window_result, merged_state_windows)

    # -- timer path ------------------------------------------------------------------

    def _on_timer(self, timer: Timer) -> None:
        key, window = timer.key, timer.namespace
        self._backend.current_key = key
        merging_set = None
        state_window = window
        if self._assigner.is_merging:
            merging_set = self._load_merging_set()
            state_window = merging_set.get_state_window(window)
            if state_window is None:
                return  # a timer of a window that was merged away or already cleaned up
        ctx = _TriggerContext(self, key, window)
        if timer.domain is TimeDomain.EVENT_TIME:
            result = self._checked(self._trigger.on_event_time(timer.timestamp, window, ctx), "on_event_time")
        else:
            result = self._checked(self._trigger.on_processing_time(timer.timestamp, window, ctx), "on_processing_time")
        if result.fire:
            self._fired_at = timer.timestamp
            self._emit_window_contents(key, window, state_window)
        if result.purge:
            self._contents.set_current_namespace(state_window)
            self._contents.clear()
        is_own_domain = (timer.domain is TimeDomain.EVENT_TIME) == self._assigner.is_event_time
        if is_own_domain and timer.timestamp == self._cleanup_time(window):
            self._clear_all_state(key, window, state_window, merging_set)
        if merging_set is not None:
            self._store_merging_set(merging_set)

    def _clear_all_state(
        self, key: Any, window: Window, state_window: Window, merging_set: MergingWindowSet | None
    ) -> None:
        self._contents.set_current_namespace(state_window)
        self._contents.clear()
        self._trigger.clear(window, _TriggerContext(self, key, window))
        process_fn = self._process_fn()
        if process_fn is not None:
            self._ensure_open()
            process_fn.clear(_ProcessWindowContext(self, key, window))
        if merging_set is not None:
            merging_set.retire_window(window)

    # -- emitting --------------------------------------------------------------------

    def _emit_window_contents(self, key: Any, window: Window, state_window: Window) -> None:
        self._contents.set_current_namespace(state_window)
        present, stored = self._contents.raw()
        if not present:
            return
        fn = self.function
        if not self._keeps_elements:
            value = fn.aggregate_fn.get_result(stored) if isinstance(fn, WindowAggregate) else stored
            self._emit_value(key, window, value)
            return
        elements: list[TimestampedValue] = stored
        if not elements:
            return
        evictor = self.spec.evictor
        ctx = _TriggerContext(self, key, window)
        if evictor is not None:
            elements = run_evictor(evictor, True, elements, window, ctx)
        values = [e.value for e in elements]
        if isinstance(fn, WindowProcess):
            self._run_process(fn.process_fn, key, window, values)
        elif isinstance(fn, WindowAggregate):
            accumulator = fn.aggregate_fn.create_accumulator()
            for value in values:
                accumulator = fn.aggregate_fn.add(value, accumulator)
            self._emit_value(key, window, fn.aggregate_fn.get_result(accumulator))
        elif values:  # reducing nothing yields nothing (Flink would emit null)
            reduce = as_reduce_callable(fn.reduce_fn)
            result = values[0]
            for value in values[1:]:
                result = reduce(result, value)
            self._emit_value(key, window, result)
        if evictor is not None:
            elements = run_evictor(evictor, False, elements, window, ctx)
            # Like Flink (FLINK-4369): what the evictors removed is gone from the window for good.
            self._contents.set_current_namespace(state_window)
            self._contents.update(elements)

    def _emit_value(self, key: Any, window: Window, value: Any) -> None:
        window_function = self._process_fn()
        if window_function is not None:
            self._run_process(window_function, key, window, [value])
        else:
            self._out.append(OutputRecord(WindowResult.of(key, window, value, self._fired_at), window.max_timestamp))

    def _run_process(self, process_fn: ProcessWindowFunction, key: Any, window: Window, values: list[Any]) -> None:
        self._ensure_open()
        rows = process_fn.process(key, _ProcessWindowContext(self, key, window), values)
        for row in collect_rows(rows, f"{type(process_fn).__name__}.process"):
            tag = side_output_of(row)
            if tag is not None:  # ``yield tag, value``: PyFlink's side output
                self._out.append(OutputRecord(row[1], window.max_timestamp, tag))
            else:
                self._out.append(OutputRecord(WindowResult.of(key, window, row, self._fired_at), window.max_timestamp))

    # -- lateness and cleanup ----------------------------------------------------------

    def _cleanup_time(self, window: Window) -> int:
        if self._assigner.is_event_time:
            return min(window.max_timestamp + self.spec.allowed_lateness_ms, MAX_WATERMARK)
        return window.max_timestamp

    def _is_window_late(self, window: Window) -> bool:
        return self._assigner.is_event_time and self._cleanup_time(window) <= self._timers.current_watermark

    def _is_element_late(self, timestamp: int | None) -> bool:
        return (
            self._assigner.is_event_time
            and timestamp is not None
            and timestamp + self.spec.allowed_lateness_ms <= self._timers.current_watermark
        )

    def _register_cleanup_timer(self, key: Any, window: Window) -> None:
        cleanup = self._cleanup_time(window)
        if cleanup == MAX_WATERMARK:
            return  # "end of time": never cleaned up, so no timer
        if self._assigner.is_event_time:
            self._timers.register_event_time_timer(key, window, cleanup)
        else:
            self._timers.register_processing_time_timer(key, window, cleanup)

    def _delete_cleanup_timer(self, key: Any, window: Window) -> None:
        cleanup = self._cleanup_time(window)
        if self._assigner.is_event_time:
            self._timers.delete_event_time_timer(key, window, cleanup)
        else:
            self._timers.delete_processing_time_timer(key, window, cleanup)

    # -- helpers -----------------------------------------------------------------------

    def _load_merging_set(self) -> MergingWindowSet:
        stored = self._backend.get_state(_MERGING_SET, scope="window:").value()
        return MergingWindowSet.from_plain(self._assigner.merge_windows, stored)

    def _store_merging_set(self, merging_set: MergingWindowSet) -> None:
        state = self._backend.get_state(_MERGING_SET, scope="window:")
        state.update(merging_set.to_plain() if len(merging_set) else None)

    def _checked(self, result: Any, method: str) -> TriggerResult:
        if not isinstance(result, TriggerResult):
            raise TypeError(
                f"{type(self._trigger).__name__}.{method} must return a TriggerResult "
                f"(CONTINUE, FIRE, PURGE or FIRE_AND_PURGE), got {result!r}"
            )
        return result

    def _ensure_open(self) -> None:
        if not self._opened:
            self._opened = True
            for fn in self._user_functions():
                call_open(fn, RuntimeContext(type(fn).__name__, state=StateStore(self._backend, VOID_NAMESPACE)))


