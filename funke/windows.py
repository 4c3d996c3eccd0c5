"""``funke.windows``: Flink's window assigners."""

from funke.semantics.windows import (
    EventTimeSessionWindows,
    GlobalWindows,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
)

__all__ = ["EventTimeSessionWindows", "GlobalWindows", "SlidingEventTimeWindows", "TimeWindow", "TumblingEventTimeWindows"]
