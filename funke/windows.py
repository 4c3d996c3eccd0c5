"""``funke.windows``: Flink's window assigners."""

from funke.semantics.windows import (
    CumulativeEventTimeWindows,
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
    "EventTimeSessionWindows",
    "GlobalWindows",
    "ProcessingTimeSessionWindows",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
]
