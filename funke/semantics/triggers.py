"""Triggers: when a window's contents are emitted and when they are purged.

The classes follow Flink's built-ins call for call (``onElement``, ``onEventTime``,
``onProcessingTime``, ``onMerge``, ``clear``) so that a window run by funke fires at
exactly the moments Flink's would. Built-ins are frozen dataclasses: a plan can hold,
compare and fingerprint them; their per-window bookkeeping lives in partitioned state
reached through the :class:`TriggerContext`, never on the trigger object.

Write your own by subclassing :class:`Trigger`::

    class EveryNOrAtEnd(Trigger):            # early firings by count + the on-time firing
        ...
"""

from __future__ import annotations

import enum
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

from funke.semantics.state import ReducingStateDescriptor, StateDescriptor
from funke.semantics.time import Duration, to_millis

if TYPE_CHECKING:
    from funke.semantics.windows import GlobalWindow, TimeWindow

    Window = TimeWindow | GlobalWindow


class TriggerResult(enum.Enum):
    """What a trigger asks the window operator to do: ``(fire, purge)``."""

    CONTINUE = (False, False)
    FIRE = (True, False)
    PURGE = (False, True)
    FIRE_AND_PURGE = (True, True)

    @property
    def fire(self) -> bool:
        return self.value[0]

    @property
    def purge(self) -> bool:
        return self.value[1]

    def is_fire(self) -> bool:
        return self.fire

    def is_purge(self) -> bool:
        return self.purge


class TriggerContext(Protocol):
    """What a trigger may touch: time, timers of its window, and per-window state.

    Timers and state are scoped to the current key and the window the trigger is
    called for; registering the same timer twice is one timer.
    """

    def get_current_watermark(self) -> int: ...

    def get_current_processing_time(self) -> int: ...

    def register_event_time_timer(self, time: int) -> None: ...

    def register_processing_time_timer(self, time: int) -> None: ...

    def delete_event_time_timer(self, time: int) -> None: ...

    def delete_processing_time_timer(self, time: int) -> None: ...

    def get_partitioned_state(self, descriptor: StateDescriptor) -> Any: ...


class OnMergeContext(TriggerContext, Protocol):
    """The context of ``on_merge``: it can also fold the merged windows' state into the new one."""

    def merge_partitioned_state(self, descriptor: StateDescriptor) -> None: ...


class Trigger:
    """Base class of all triggers; subclass it for custom firing logic.

    ``on_element`` must be implemented. ``on_event_time``/``on_processing_time``
    default to ``CONTINUE``; ``clear`` defaults to doing nothing, so a trigger that
    registers timers or keeps state should delete them in ``clear`` (Flink calls it
    when the window is purged for good). A trigger used with session windows must
    return ``True`` from ``can_merge`` and implement ``on_merge``.

    ``reads_elements = False`` promises that ``on_element`` looks at neither the element's
    value nor how many elements arrived (only at the window, the time, and the timestamp
    of a window's first element): then funke may pre-aggregate elements before the
    trigger sees them, which is much faster. The default is ``True``.
    """

    reads_elements: ClassVar[bool] = True

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        raise NotImplementedError(f"{type(self).__name__}.on_element(element, timestamp, window, ctx) is not implemented")

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return False

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        raise NotImplementedError(
            f"{type(self).__name__} does not support merging windows; return True from can_merge() "
            "and implement on_merge(window, ctx) to use it with session windows"
        )

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        return None

    def describe(self) -> str:
        return f"{type(self).__name__}()"


# The trigger-private state every built-in uses; partitioned per key and window by the context.
_COUNT = ReducingStateDescriptor("count", operator.add)
_FIRE_TIME = ReducingStateDescriptor("fire-time", min)


def _positive_interval(interval: Duration, what: str) -> int:
    ms = to_millis(interval, what=what)
    if ms <= 0:
        raise ValueError(f"{what} must be positive, got {ms} ms")
    return ms


class _ClockTrigger(Trigger):
    """A trigger on one clock: event time (the watermark) or, with ``_event_time = False``, the
    operator's processing time. Its timers and its "now" are that clock's; it never reads the
    elements, and it merges. The event-time and processing-time twins below are one of these each."""

    reads_elements: ClassVar[bool] = False
    _event_time: ClassVar[bool] = True

    def can_merge(self) -> bool:
        return True

    def _now(self, ctx: TriggerContext) -> int:
        return ctx.get_current_watermark() if self._event_time else ctx.get_current_processing_time()

    def _register_timer(self, ctx: TriggerContext, time: int) -> None:
        if self._event_time:
            ctx.register_event_time_timer(time)
        else:
            ctx.register_processing_time_timer(time)

    def _delete_timer(self, ctx: TriggerContext, time: int) -> None:
        if self._event_time:
            ctx.delete_event_time_timer(time)
        else:
            ctx.delete_processing_time_timer(time)


class _WindowEndTrigger(_ClockTrigger):
    """Fires when its clock reaches the window's end (``max_timestamp``)."""

    @classmethod
    def create(cls) -> Self:
        return cls()

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        # Only re-arm if the merged window is not complete yet; otherwise on_element fires it.
        if window.max_timestamp > self._now(ctx):
            self._register_timer(ctx, window.max_timestamp)

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        self._delete_timer(ctx, window.max_timestamp)


@dataclass(frozen=True)
class EventTimeTrigger(_WindowEndTrigger):
    """Fires once the watermark passes the window's end; fires again for each allowed-late element."""

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        if window.max_timestamp <= ctx.get_current_watermark():
            return TriggerResult.FIRE  # late but within allowed lateness: fire right away
        ctx.register_event_time_timer(window.max_timestamp)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp else TriggerResult.CONTINUE


@dataclass(frozen=True)
class ProcessingTimeTrigger(_WindowEndTrigger):
    """Fires when the operator's clock reaches the window's end."""

    _event_time: ClassVar[bool] = False

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE


@dataclass(frozen=True)
class NeverTrigger(Trigger):
    """The default trigger of ``GlobalWindows``: never fires."""

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        return None


@dataclass(frozen=True)
class EndOfStreamTrigger(EventTimeTrigger):
    """The trigger of ``GlobalWindows.create_with_end_of_stream_trigger()`` (Flink 1.19+).

    An event-time trigger at the global window's end, ``MAX_WATERMARK``, which only the
    watermark of a finished input reaches: the window fires once, at the end of input.
    """


@dataclass(frozen=True)
class CountTrigger(Trigger):
    """Fires every ``max_count`` elements of a window (the count restarts after each firing)."""

    max_count: int

    def __post_init__(self) -> None:
        if isinstance(self.max_count, bool) or not isinstance(self.max_count, int) or self.max_count <= 0:
            raise ValueError(f"CountTrigger needs a positive whole count, got {self.max_count!r}")

    @classmethod
    def of(cls, max_count: int) -> CountTrigger:
        return cls(max_count)

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        count = ctx.get_partitioned_state(_COUNT)
        count.add(1)
        if count.get() >= self.max_count:
            count.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(_COUNT)

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        ctx.get_partitioned_state(_COUNT).clear()

    def describe(self) -> str:
        return f"CountTrigger({self.max_count})"


@dataclass(frozen=True)
class _ContinuousTrigger(_ClockTrigger):
    """Fires every ``interval`` of its clock (aligned to multiples of it) and at the window's end;
    the next firing time is the trigger's state (``fire-time``)."""

    interval_ms: int
    _name: ClassVar[str]

    def __post_init__(self) -> None:
        _positive_interval(self.interval_ms, f"{self._name} interval")

    @classmethod
    def of(cls, interval: Duration) -> Self:
        return cls(_positive_interval(interval, f"{cls._name} interval"))

    def _register_next(self, time: int, window: Window, ctx: TriggerContext) -> None:
        next_fire = min(time + self.interval_ms, window.max_timestamp)
        ctx.get_partitioned_state(_FIRE_TIME).add(next_fire)
        self._register_timer(ctx, next_fire)

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(_FIRE_TIME)
        next_fire = ctx.get_partitioned_state(_FIRE_TIME).get()
        if next_fire is not None:
            self._register_timer(ctx, next_fire)

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        pending = fire_time.get()
        if pending is not None:
            self._delete_timer(ctx, pending)
            fire_time.clear()

    def describe(self) -> str:
        return f"{self._name}({self.interval_ms}ms)"


@dataclass(frozen=True)
class ContinuousEventTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` of event time (aligned to multiples of it) and at the window's end."""

    _name: ClassVar[str] = "ContinuousEventTimeTrigger"

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        if window.max_timestamp <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp)
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() is None:
            if timestamp is None:
                raise ValueError("ContinuousEventTimeTrigger needs element timestamps; the element has none")
            self._register_next(timestamp - timestamp % self.interval_ms, window, ctx)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        if time == window.max_timestamp:
            return TriggerResult.FIRE
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() == time:
            fire_time.clear()
            self._register_next(time, window, ctx)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE


@dataclass(frozen=True)
class ContinuousProcessingTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` of processing time (aligned) and when the clock reaches the window's end.

    The first firing is at the next multiple of ``interval`` after the first element.
    Unlike Flink (FLINK-35069) it does not re-arm a timer at the window's end once it
    fired there, which in Flink loops forever on event-time windows whose end lies in
    the processing-time past.
    """

    _name: ClassVar[str] = "ContinuousProcessingTimeTrigger"
    _event_time: ClassVar[bool] = False

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() is None:
            now = ctx.get_current_processing_time()
            self._register_next(now - now % self.interval_ms, window, ctx)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() == time:
            fire_time.clear()
            if time < window.max_timestamp:
                self._register_next(time, window, ctx)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE


@dataclass(frozen=True)
class PurgingTrigger(Trigger):
    """Turns every FIRE of the nested trigger into FIRE_AND_PURGE."""

    nested: Trigger

    def __post_init__(self) -> None:
        if not isinstance(self.nested, Trigger):
            raise TypeError(f"PurgingTrigger.of() takes a Trigger, got {self.nested!r}")

    @classmethod
    def of(cls, nested: Trigger) -> PurgingTrigger:
        return cls(nested)

    @property
    def reads_elements(self) -> bool:  # type: ignore[override]
        return self.nested.reads_elements

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if result.fire else result

    def on_element(self, element: Any, timestamp: int | None, window: Window, ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested.on_event_time(time, window, ctx))

    def on_processing_time(self, time: int, window: Window, ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested.on_processing_time(time, window, ctx))

    def can_merge(self) -> bool:
        return self.nested.can_merge()

    def on_merge(self, window: Window, ctx: OnMergeContext) -> None:
        self.nested.on_merge(window, ctx)

    def clear(self, window: Window, ctx: TriggerContext) -> None:
        self.nested.clear(window, ctx)

    def describe(self) -> str:
        return f"PurgingTrigger({self.nested.describe()})"
