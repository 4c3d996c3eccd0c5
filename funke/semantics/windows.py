"""Window assigners (Flink's), as plain values with their assignment logic.

A window is ``[start, end)`` in epoch ms; its ``max_timestamp`` is ``end - 1`` and a
result emitted for it carries that timestamp. Assigners are frozen dataclasses so the
plan can hold them, compare them and fingerprint them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from funke.semantics.time import MAX_WATERMARK, Duration, to_millis
from funke.semantics.triggers import EndOfStreamTrigger, EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, Trigger


@dataclass(frozen=True, order=True)
class TimeWindow:
    start: int
    end: int

    @property
    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: TimeWindow) -> bool:
        """Flink's rule: windows that overlap *or touch* intersect (and so merge)."""
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))


@dataclass(frozen=True)
class GlobalWindow:
    """The single window of ``GlobalWindows``; it never ends by time."""

    start: ClassVar[int] = -(2**63)
    end: ClassVar[int] = MAX_WATERMARK

    @property
    def max_timestamp(self) -> int:
        return MAX_WATERMARK


def window_start(timestamp: int, offset: int, size: int) -> int:
    """Flink's ``TimeWindow.getWindowStartWithOffset`` (correct for negative timestamps)."""
    return timestamp - (timestamp - offset + size) % size


class WindowAssigner:
    """Base of all assigners. ``kind`` names it in plans and ``explain()``."""

    kind: ClassVar[str] = "window"
    is_event_time: ClassVar[bool] = True
    is_merging: ClassVar[bool] = False
    #: Whether assignment reads the element's timestamp (global windows do not).
    needs_timestamp: ClassVar[bool] = True

    def assign_windows(self, timestamp: int, element: Any = None) -> list[TimeWindow | GlobalWindow]:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def default_trigger(self) -> Trigger:
        """The trigger Flink uses when ``window(...)`` is not followed by ``trigger(...)``."""
        raise NotImplementedError(f"{type(self).__name__} does not define a default trigger; pass trigger=...")

    def windows_for(self, timestamp: int | None, element: Any, processing_time: int) -> list[TimeWindow | GlobalWindow]:
        """Windows of one element: event-time assigners read its timestamp, processing-time ones the clock.

        Kept apart from ``assign_windows`` (whose first argument is "the time that
        decides the window") so an operator never has to know which kind it holds.
        """
        if not self.is_event_time:
            return self.assign_windows(processing_time, element)
        if timestamp is None:
            if self.needs_timestamp:
                raise ValueError(
                    f"{self.describe()} assigns windows by event time but the element has no timestamp; "
                    "give the stream a WatermarkStrategy with a timestamp column, or use a processing-time assigner"
                )
            timestamp = processing_time
        return self.assign_windows(timestamp, element)

    def merge_windows(self, windows: list[TimeWindow]) -> list[tuple[TimeWindow, list[TimeWindow]]]:
        """Merging assigners group intersecting windows; others never merge."""
        raise TypeError(f"{type(self).__name__} is not a merging window assigner")


def _offset(offset: Duration, within_ms: int, what: str) -> int:
    """A window offset in ms, smaller than the window's ``what`` (``within_ms``)."""
    offset_ms = to_millis(offset, what="window offset")
    if abs(offset_ms) >= within_ms:
        raise ValueError(f"window offset must be smaller than the {what} ({within_ms} ms), got {offset_ms} ms")
    return offset_ms


def _positive_ms(duration: Duration, what: str) -> int:
    return _positive(to_millis(duration, what=what), what)


def _positive(ms: int, what: str) -> int:
    if ms <= 0:
        raise ValueError(f"{what} must be positive, got {ms} ms")
    return ms


class _ClockWindows(WindowAssigner):
    """Time windows on one clock: the watermark (``is_event_time``) or the operator's processing
    time, which ``assign_windows`` then takes. Each twin (``TumblingEventTimeWindows`` and
    ``TumblingProcessingTimeWindows``, ...) is one of these with its clock and ``kind``; by
    default a window fires when its clock reaches the window's end."""

    def default_trigger(self) -> Trigger:
        return EventTimeTrigger() if self.is_event_time else ProcessingTimeTrigger()


@dataclass(frozen=True)
class _TumblingWindows(_ClockWindows):
    size_ms: int
    offset_ms: int = 0

    @classmethod
    def of(cls, size: Duration, offset: Duration = 0) -> Self:
        size_ms = _positive_ms(size, "window size")
        return cls(size_ms, _offset(offset, size_ms, "size"))

    def assign_windows(self, timestamp: int, element: Any = None) -> list[TimeWindow]:
        start = window_start(timestamp, self.offset_ms, self.size_ms)
        return [TimeWindow(start, start + self.size_ms)]

    def describe(self) -> str:
        off = f", offset={self.offset_ms}ms" if self.offset_ms else ""
        return f"{type(self).__name__}(size={self.size_ms}ms{off})"


@dataclass(frozen=True)
class TumblingEventTimeWindows(_TumblingWindows):
    kind: ClassVar[str] = "tumbling"


@dataclass(frozen=True)
class TumblingProcessingTimeWindows(_TumblingWindows):
    """Tumbling windows over the operator's clock; ``assign_windows`` takes the processing time."""

    kind: ClassVar[str] = "tumbling_processing_time"
    is_event_time: ClassVar[bool] = False


@dataclass(frozen=True)
class _SlidingWindows(_ClockWindows):
    size_ms: int
    slide_ms: int
    offset_ms: int = 0

    @classmethod
    def of(cls, size: Duration, slide: Duration, offset: Duration = 0) -> Self:
        size_ms = _positive_ms(size, "window size")
        slide_ms = _positive_ms(slide, "window slide")
        return cls(size_ms, slide_ms, _offset(offset, slide_ms, "slide"))

    def assign_windows(self, timestamp: int, element: Any = None) -> list[TimeWindow]:
        last_start = window_start(timestamp, self.offset_ms, self.slide_ms)
        windows = []
        start = last_start
        while start > timestamp - self.size_ms:
            windows.append(TimeWindow(start, start + self.size_ms))
            start -= self.slide_ms
        return windows

    def describe(self) -> str:
        off = f", offset={self.offset_ms}ms" if self.offset_ms else ""
        return f"{type(self).__name__}(size={self.size_ms}ms, slide={self.slide_ms}ms{off})"


@dataclass(frozen=True)
class SlidingEventTimeWindows(_SlidingWindows):
    kind: ClassVar[str] = "sliding"


@dataclass(frozen=True)
class SlidingProcessingTimeWindows(_SlidingWindows):
    """Sliding windows over the operator's clock; ``assign_windows`` takes the processing time."""

    kind: ClassVar[str] = "sliding_processing_time"
    is_event_time: ClassVar[bool] = False


@dataclass(frozen=True)
class CumulativeEventTimeWindows(_ClockWindows):
    """Flink SQL's ``CUMULATE``: every ``size`` period (aligned like a tumbling window) has windows
    that all start at its start and end one ``step`` apart, the last at its end.

    An element at ``t`` belongs to each of its period's windows that end after ``t``: with
    ``size`` 3 s and ``step`` 1 s, an element at 1.5 s is in ``[0, 2 s)`` and ``[0, 3 s)``.

    >>> [(w.start, w.end) for w in CumulativeEventTimeWindows.of(3000, 1000).assign_windows(1500)]
    [(0, 2000), (0, 3000)]
    >>> [(w.start, w.end) for w in CumulativeEventTimeWindows.of(3000, 1000).assign_windows(3000)]
    [(3000, 4000), (3000, 5000), (3000, 6000)]
    """

    size_ms: int
    step_ms: int
    offset_ms: int = 0
    kind: ClassVar[str] = "cumulative"

    @classmethod
    def of(cls, size: Duration, step: Duration, offset: Duration = 0) -> CumulativeEventTimeWindows:
        size_ms = _positive_ms(size, "window size")
        step_ms = _positive_ms(step, "window step")
        if size_ms % step_ms:
            raise ValueError(f"a cumulative window's size ({size_ms} ms) must be a multiple of its step ({step_ms} ms)")
        return cls(size_ms, step_ms, _offset(offset, size_ms, "size"))

    def assign_windows(self, timestamp: int, element: Any = None) -> list[TimeWindow]:
        start = window_start(timestamp, self.offset_ms, self.size_ms)
        first_end = start + ((timestamp - start) // self.step_ms + 1) * self.step_ms
        return [TimeWindow(start, end) for end in range(first_end, start + self.size_ms + 1, self.step_ms)]

    def describe(self) -> str:
        off = f", offset={self.offset_ms}ms" if self.offset_ms else ""
        return f"{type(self).__name__}(size={self.size_ms}ms, step={self.step_ms}ms{off})"


@dataclass(frozen=True)
class CumulativeProcessingTimeWindows(CumulativeEventTimeWindows):
    """``CUMULATE`` over the operator's clock (Flink SQL's ``CUMULATE`` on a ``PROCTIME()`` attribute):
    ``assign_windows`` takes the processing time."""

    kind: ClassVar[str] = "cumulative_processing_time"
    is_event_time: ClassVar[bool] = False


@dataclass(frozen=True)
class _SessionWindows(_ClockWindows):
    gap_ms: int | None = None
    gap_fn: Callable[[Any], Duration] | None = field(default=None, compare=False)
    is_merging: ClassVar[bool] = True

    @classmethod
    def with_gap(cls, gap: Duration) -> Self:
        return cls(gap_ms=_positive_ms(gap, "session gap"))

    @classmethod
    def with_dynamic_gap(cls, gap_fn: Callable[[Any], Duration]) -> Self:
        if not callable(gap_fn):
            raise TypeError("with_dynamic_gap() takes a function element -> gap (timedelta or ms)")
        return cls(gap_fn=gap_fn)

    @property
    def is_dynamic(self) -> bool:
        return self.gap_fn is not None

    def gap_for(self, element: Any) -> int:
        if self.gap_fn is None:
            assert self.gap_ms is not None
            return self.gap_ms
        return _positive(to_millis(self.gap_fn(element), what="session gap"), "session gap")

    def assign_windows(self, timestamp: int, element: Any = None) -> list[TimeWindow]:
        return [TimeWindow(timestamp, timestamp + self.gap_for(element))]

    def describe(self) -> str:
        if self.is_dynamic:
            return f"{type(self).__name__}(dynamic gap)"
        return f"{type(self).__name__}(gap={self.gap_ms}ms)"

    def merge_windows(self, windows: list[TimeWindow]) -> list[tuple[TimeWindow, list[TimeWindow]]]:
        return merge_time_windows(windows)


@dataclass(frozen=True)
class EventTimeSessionWindows(_SessionWindows):
    """Sessions: each element opens ``[ts, ts + gap)``; intersecting windows merge."""

    kind: ClassVar[str] = "session"


@dataclass(frozen=True)
class ProcessingTimeSessionWindows(_SessionWindows):
    """Sessions over the operator's clock: each element opens ``[now, now + gap)``."""

    kind: ClassVar[str] = "session_processing_time"
    is_event_time: ClassVar[bool] = False


@dataclass(frozen=True)
class GlobalWindows(WindowAssigner):
    kind: ClassVar[str] = "global"
    needs_timestamp: ClassVar[bool] = False

    @classmethod
    def create(cls) -> GlobalWindows:
        return cls()

    def assign_windows(self, timestamp: int, element: Any = None) -> list[GlobalWindow]:
        return [GlobalWindow()]

    @classmethod
    def create_with_end_of_stream_trigger(cls) -> GlobalWindows:
        """Flink 1.19's ``GlobalWindows.createWithEndOfStreamTrigger()``: one window per key that
        fires once, at the end of input (bounded runs, and finite sources read as streams)."""
        return _EndOfStreamGlobalWindows()

    def default_trigger(self) -> Trigger:
        """Flink's ``NeverTrigger``: a global window fires only with a trigger you give it."""
        return NeverTrigger()


class _EndOfStreamGlobalWindows(GlobalWindows):
    def default_trigger(self) -> Trigger:
        return EndOfStreamTrigger()

    def describe(self) -> str:
        return "GlobalWindows(end-of-stream trigger)"


def merge_time_windows(windows: list[TimeWindow]) -> list[tuple[TimeWindow, list[TimeWindow]]]:
    """Flink's ``TimeWindow.mergeWindows``: sort by start, sweep, group what intersects.

    Returns ``(cover, members)`` only for groups of two or more windows; a window
    that intersects nothing is left alone. Touching windows (``a.end == b.start``)
    intersect, which is why sessions one gap apart merge.

    >>> merge_time_windows([TimeWindow(0, 10), TimeWindow(10, 20), TimeWindow(30, 40)])
    [(TimeWindow(start=0, end=20), [TimeWindow(start=0, end=10), TimeWindow(start=10, end=20)])]
    """
    groups: list[tuple[TimeWindow, list[TimeWindow]]] = []
    for window in sorted(windows, key=lambda w: w.start):
        if groups and groups[-1][0].intersects(window):
            cover, members = groups[-1]
            groups[-1] = (cover.cover(window), [*members, window])
        else:
            groups.append((window, [window]))
    return [(cover, members) for cover, members in groups if len(members) > 1]
