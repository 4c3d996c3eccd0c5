"""PyFlink's windows: assigners, triggers and the window objects user functions see.

The assigners and built-in triggers are funke's (``funke.windows``, ``funke.triggers``), with
PyFlink's factories (``TumblingEventTimeWindows.of(Time.seconds(5))``; a ``Time`` or ``Duration``
is a timedelta). Count assigners (``CountTumblingWindowAssigner.of(n)``) become Flink's lowering
of ``count_window``. A user function gets PyFlink's window objects: :class:`TimeWindow` (``start``,
``end``, ``max_timestamp()``), :class:`CountWindow` and :class:`GlobalWindow`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from funke.pyflink.common.time import Time  # noqa: F401 (PyFlink's window module has it: ``from pyflink.datastream.window import Time``)
from funke.semantics import windows as fw
from funke.semantics.state import ReducingStateDescriptor
from funke.semantics.time import MAX_WATERMARK, Duration
from funke.semantics.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from funke.semantics.windows import (
    GlobalWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from funke.semantics.windows import WindowAssigner as _FunkeAssigner

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindows",
    "MergingWindowAssigner",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
]

WindowAssigner = _FunkeAssigner
MergingWindowAssigner = _FunkeAssigner


class Window:
    """A window a user function sees."""

    def max_timestamp(self) -> int:
        raise NotImplementedError


class TimeWindow(Window):
    """``[start, end)`` in epoch ms (PyFlink's ``TimeWindow``)."""

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end

    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: TimeWindow) -> bool:
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @staticmethod
    def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
        return fw.window_start(timestamp, offset, window_size)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimeWindow) and (self.start, self.end) == (other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __repr__(self) -> str:
        return f"TimeWindow(start={self.start}, end={self.end})"


class GlobalWindow(Window):
    """The one window of ``GlobalWindows``."""

    def max_timestamp(self) -> int:
        return MAX_WATERMARK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalWindow)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "GlobalWindow"


class CountWindow(Window):
    """The window of a count window (``count_window(n)``, ``count_window(n, slide)``), numbered per key
    from 0 as PyFlink numbers them. funke runs a count window as a global window whose trigger fires
    when a window is full, and each firing is the next window's (PyFlink fires only full windows, in
    order), so a window function gets the number of its key's firings before it (``WindowAdapter``)."""

    def __init__(self, id: int = 0) -> None:
        self._id = id

    def max_timestamp(self) -> int:
        return MAX_WATERMARK

    @property
    def id(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
        return type(other) is CountWindow and other._id == self._id

    def __hash__(self) -> int:
        return hash(("CountWindow", self._id))

    def __repr__(self) -> str:
        return f"CountWindow(id={self._id})"


def user_window(window: Any, *, number: int | None = None) -> Window:
    """funke's window as the PyFlink window object a user function sees: a count window's with its
    ``number`` (None: not a count window)."""
    if isinstance(window, fw.GlobalWindow):
        return CountWindow(number) if number is not None else GlobalWindow()
    return TimeWindow(window.start, window.end)


class SessionWindowTimeGapExtractor:
    """``extract(element)``: the session gap (ms) an element opens."""

    def extract(self, element: Any) -> int:
        raise NotImplementedError(f"{type(self).__name__}.extract(element) is not implemented")


@dataclass(frozen=True)
class ExtractedGap:
    """A ``SessionWindowTimeGapExtractor`` as funke's gap function; ``read`` turns funke's row into the value
    (set when the window is built on a stream, which knows its values' type)."""

    extractor: Any
    read: Any = None

    def __call__(self, row: Any) -> int:
        return self.extractor.extract(self.read(row) if self.read is not None else row)


class EventTimeSessionWindows:
    """``with_gap(Time)`` / ``with_dynamic_gap(SessionWindowTimeGapExtractor)``."""

    @staticmethod
    def with_gap(size: Duration) -> fw.EventTimeSessionWindows:
        return fw.EventTimeSessionWindows.with_gap(size)

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> fw.EventTimeSessionWindows:
        return fw.EventTimeSessionWindows.with_dynamic_gap(ExtractedGap(extractor))


class ProcessingTimeSessionWindows:
    @staticmethod
    def with_gap(size: Duration) -> fw.ProcessingTimeSessionWindows:
        return fw.ProcessingTimeSessionWindows.with_gap(size)

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> fw.ProcessingTimeSessionWindows:
        return fw.ProcessingTimeSessionWindows.with_dynamic_gap(ExtractedGap(extractor))


class DynamicEventTimeSessionWindows:
    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> fw.EventTimeSessionWindows:
        return EventTimeSessionWindows.with_dynamic_gap(extractor)


class DynamicProcessingTimeSessionWindows:
    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> fw.ProcessingTimeSessionWindows:
        return ProcessingTimeSessionWindows.with_dynamic_gap(extractor)


@dataclass(frozen=True)
class CountAssigner:
    """``CountTumblingWindowAssigner.of(n)`` / ``CountSlidingWindowAssigner.of(size, slide)``: a count window."""

    size: int
    slide: int | None = None


#: The sliding count trigger's count of a key's elements (funke's state per key and window).
_SLIDING_COUNT = ReducingStateDescriptor("pyflink-sliding-count", operator.add)


@dataclass(frozen=True)
class SlidingCountTrigger(Trigger):
    """PyFlink's sliding count window, ``count_window(size, slide)``, on funke's global window with a
    ``CountEvictor(size)``: it fires at a key's ``size``-th element, then at every ``slide``-th after it.

    PyFlink numbers the windows: window k holds a key's elements k*slide to k*slide + size - 1 (from 0) and fires
    once, when full. So its first result comes at the ``size``-th element, each over the last ``size``. Flink's
    Java ``countWindow(size, slide)`` fires every ``slide`` elements from the first, over fewer than ``size`` at
    first; funke's own ``count_window`` does that. With ``slide > size`` the elements between two windows
    belong to none, as in PyFlink: the evictor keeps only the last ``size``."""

    size: int
    slide: int

    def on_element(self, element: Any, timestamp: int | None, window: Any, ctx: Any) -> TriggerResult:
        count = ctx.get_partitioned_state(_SLIDING_COUNT)
        count.add(1)
        if count.get() < self.size:
            return TriggerResult.CONTINUE
        count.clear()
        if self.size != self.slide:  # (the next firing: ``slide`` elements on)
            count.add(self.size - self.slide)
        return TriggerResult.FIRE

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.get_partitioned_state(_SLIDING_COUNT).clear()

    def describe(self) -> str:
        return f"CountSlidingWindowAssigner({self.size}, {self.slide})"


class CountTumblingWindowAssigner:
    @staticmethod
    def of(window_size: int) -> CountAssigner:
        return CountAssigner(window_size)


class CountSlidingWindowAssigner:
    @staticmethod
    def of(window_size: int, window_slide: int) -> CountAssigner:
        return CountAssigner(window_size, window_slide)

