"""Processing time as an object the caller controls.

Flink reads processing time from the machine clock, which makes processing-time
windows, processing-time timers and state TTL impossible to test exactly. Every
component in ``funke.semantics`` instead asks a :class:`Clock`; tests and the Spark
adapters pass a :class:`ManualClock` and move it explicitly (Spark's batch timestamp,
a ``TestStream`` step), so nothing ever sleeps.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

from funke.semantics.time import Duration, to_millis


@runtime_checkable
class Clock(Protocol):
    """Anything that says what time it is, in epoch milliseconds."""

    def now_ms(self) -> int: ...


class ManualClock:
    """A clock that only moves when told to, and never backwards.

    >>> clock = ManualClock(1_000)
    >>> clock.advance(500); clock.now_ms()
    1500
    >>> clock.advance_to(2_000); clock.now_ms()
    2000
    """

    def __init__(self, start_ms: int = 0) -> None:
        if isinstance(start_ms, bool) or not isinstance(start_ms, int):
            raise TypeError(f"ManualClock(start_ms) takes int epoch milliseconds, got {start_ms!r}")
        self._now = start_ms

    def now_ms(self) -> int:
        return self._now

    def advance_to(self, time_ms: int) -> None:
        """Move to ``time_ms``; processing time never goes back, so an earlier time is an error."""
        if isinstance(time_ms, bool) or not isinstance(time_ms, int):
            raise TypeError(f"advance_to() takes int epoch milliseconds, got {time_ms!r}")
        if time_ms < self._now:
            raise ValueError(
                f"processing time cannot go back: the clock is at {self._now} ms, asked for {time_ms} ms"
            )
        self._now = time_ms

    def advance(self, duration: Duration) -> None:
        """Move forward by a ``timedelta`` or int milliseconds."""
        step = to_millis(duration, what="clock step")
        if step < 0:
            raise ValueError(f"a clock step must not be negative, got {step} ms")
        self._now += step

    def __repr__(self) -> str:
        return f"ManualClock(now_ms={self._now})"


class SystemClock:
    """The machine's wall clock, for running outside tests."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


def move_clock_to(clock: Clock, time_ms: int | None) -> None:
    """Advance a settable clock to ``time_ms``; a clock that cannot be moved must already be there.

    Operators call this from ``advance_processing_time(t)``: with a ``ManualClock`` the
    caller drives time through the operator, with any other clock ``t`` may not lie
    in the clock's future. An earlier ``t`` is ignored (processing time never goes back).
    """
    if time_ms is None or time_ms <= clock.now_ms():
        return
    advance_to = getattr(clock, "advance_to", None)
    if not callable(advance_to):
        raise ValueError(
            f"cannot move {clock!r} to {time_ms} ms; give the operator clock=ManualClock(), "
            "or call advance_processing_time() without a time once your clock has moved"
        )
    advance_to(time_ms)
