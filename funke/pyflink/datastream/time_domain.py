"""PyFlink's ``TimeDomain``: which clock fired a timer (``ctx.time_domain()`` in ``on_timer``)."""

from __future__ import annotations

import enum

__all__ = ["TimeDomain"]


class TimeDomain(enum.Enum):
    EVENT_TIME = 0
    PROCESSING_TIME = 1
