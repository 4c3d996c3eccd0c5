"""PyFlink's ``TimerService`` (the type of ``ctx.timer_service()``: funke's keyed timer service)."""

from funke.semantics.timers import KeyedTimerService as TimerService

__all__ = ["TimerService"]
