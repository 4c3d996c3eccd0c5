"""What every operator of ``funke.semantics`` shares: its clock, its timers, and how time moves it.

An operator is driven the way Flink's test harness drives one: ``process_element`` per
element, ``advance_watermark`` when event time moves, ``advance_processing_time`` when the
clock does. The last two are the same for every operator (move the time, fire the timers it
made due, in order, and hand back what they emitted), so :class:`TimedOperator` owns them;
an operator says only what its elements do and what one of its timers does (``_on_timer``).

>>> from funke.semantics.timers import Timer
>>> class Echo(TimedOperator):
...     def process_element(self, key, value, timestamp=None):
...         self._timers.register_event_time_timer(key, None, timestamp)
...         return []
...     def _on_timer(self, timer: Timer) -> None:
...         self._out.append(OutputRecord(timer.key, timer.timestamp))
>>> op = Echo()
>>> op.process_element("a", 1, 5)
[]
>>> op.advance_watermark(9)
[OutputRecord(value='a', timestamp=5, tag=None)]
"""

from __future__ import annotations

from functools import partial
from typing import Any

from funke.semantics.clock import Clock, ManualClock, move_clock_to
from funke.semantics.functions import Emitter, OutputRecord
from funke.semantics.timers import InternalTimerService, Timer

__all__ = ["TimedOperator"]


class TimedOperator(Emitter):
    """An operator with a clock (``clock=None``: a ``ManualClock`` at 0) and one timer service.

    ``advance_watermark`` fires the event-time timers at or before the new watermark,
    ``advance_processing_time`` moves the clock and fires the processing-time timers due;
    both return the records the timers emitted. A subclass implements ``_on_timer``.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock: Clock = clock if clock is not None else ManualClock()
        self._timers = InternalTimerService(self._clock)
        self._out: list[OutputRecord] = []
        self._busy = False
        self._opened = False

    def advance_watermark(self, watermark: int) -> list[OutputRecord]:
        """Move event time to ``watermark`` and fire due event-time timers in timestamp order."""
        return self._emitting(partial(self._timers.advance_watermark, watermark, self._on_timer))

    def next_processing_time(self) -> int | None:
        """When the earliest pending processing-time timer is due (``None``: none is)."""
        return self._timers.next_processing_time()

    def advance_processing_time(self, time: int | None = None) -> list[OutputRecord]:
        """Move the clock to ``time`` (if given) and fire due processing-time timers in order."""
        move_clock_to(self._clock, time)
        return self._emitting(partial(self._timers.fire_processing_timers, self._on_timer))

    def _on_timer(self, timer: Timer) -> None:
        raise NotImplementedError(f"{type(self).__name__} registers timers but does not say what they do (_on_timer)")

    def _time_snapshot(self) -> dict[str, Any]:
        """The pending timers and the watermark, as a snapshot's ``timers`` and ``watermark``."""
        return {"timers": self._timers.export_columns(), "watermark": self._timers.current_watermark}

    def _restore_time(self, snapshot: dict[str, Any]) -> None:
        self._timers.import_rows(snapshot["timers"])
        self._timers.restore_watermark(snapshot["watermark"])
