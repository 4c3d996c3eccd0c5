"""Window assigners (Flink's), as plain values with their assignment logic.

A window is ``[start, end)`` in epoch ms; its ``max_timestamp`` is ``end - 1`` and a
result emitted for it carries that timestamp. Assigners are frozen dataclasses so the
plan can hold them, compare them and fingerprint them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from funke.semantics.time import MAX_WATERMARK, Duration, to_millis


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

    def assign_windows(self, timestamp: int, element: Any = None) -> list[TimeWindow | GlobalWindow]:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__


def _positive(ms: int, what: str) -> int:
    if ms <= 0:
        raise ValueError(f"{what} must be positive, got {ms} ms")
    return ms


@dataclass(frozen=True)
class TumblingEventTimeWindows(WindowAssigner):
    size_ms: int
    offset_ms: int = 0
    kind: ClassVar[str] = "tumbling"

    @classmethod
    def of(cls, size: Duration, offset: Duration = 0) -> TumblingEventTimeWindows:
        size_ms = _positive(to_millis(size, what="window size"), "window size")
        offset_ms = to_millis(offset, what="window offset")
        if abs(offset_ms) >= size_ms:
            raise ValueError(f"window offset must be smaller than the size ({size_ms} ms), got {offset_ms} ms")
        return cls(size_ms, offset_ms)

    def assign_windows(self, timestamp: int, element: Any = None) -> list[TimeWindow]:
        start = window_start(timestamp, self.offset_ms, self.size_ms)
        return [TimeWindow(start, start + self.size_ms)]

    def describe(self) -> str:
        off = f", offset={self.offset_ms}ms" if self.offset_ms else ""
        return f"{type(self).__name__}(size={self.size_ms}ms{off})"


@dataclass(frozen=True)
class SlidingEventTimeWindows(WindowAssigner):
    size_ms: int
    slide_ms: int
    offset_ms: int = 0
    kind: ClassVar[str] = "sliding"

    @classmethod
    def of(cls, size: Duration, slide: Duration, offset: Duration = 0) -> SlidingEventTimeWindows:
        size_ms = _positive(to_millis(size, what="window size"), "window size")
        slide_ms = _positive(to_millis(slide, what="window slide"), "window slide")
        offset_ms = to_millis(offset, what="window offset")
        if abs(offset_ms) >= slide_ms:
            raise ValueError(f"window offset must be smaller than the slide ({slide_ms} ms), got {offset_ms} ms")
        return cls(size_ms, slide_ms, offset_ms)

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
class EventTimeSessionWindows(WindowAssigner):
    """Sessions: each element opens ``[ts, ts + gap)``; intersecting windows merge."""

    gap_ms: int | None = None
    gap_fn: Callable[[Any], Duration] | None = field(default=None, compare=False)
    kind: ClassVar[str] = "session"
    is_merging: ClassVar[bool] = True

    @classmethod
    def with_gap(cls, gap: Duration) -> EventTimeSessionWindows:
        return cls(gap_ms=_positive(to_millis(gap, what="session gap"), "session gap"))

    @classmethod
    def with_dynamic_gap(cls, gap_fn: Callable[[Any], Duration]) -> EventTimeSessionWindows:
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


@dataclass(frozen=True)
class GlobalWindows(WindowAssigner):
    kind: ClassVar[str] = "global"

    @classmethod
    def create(cls) -> GlobalWindows:
        return cls()

    def assign_windows(self, timestamp: int, element: Any = None) -> list[GlobalWindow]:
        return [GlobalWindow()]
