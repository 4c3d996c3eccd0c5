"""``funke.windows``: Flink's window assigners."""

from funke.semantics.windows import (
    CumulativeEventTimeWindows,
    CumulativeProcessingTimeWindows,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)

__all__ = [
    "CumulativeEventTimeWindows",
    "CumulativeProcessingTimeWindows",
    "EventTimeSessionWindows",
    "GlobalWindows",
    "ProcessingTimeSessionWindows",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
]
