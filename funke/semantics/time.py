"""Durations and timestamps: ``timedelta`` at the surface, integer milliseconds inside.

Flink counts event time in epoch milliseconds; funke does the same internally so the
semantics layer is exact integer arithmetic (no float drift at window boundaries).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

#: Flink's ``Long.MIN_VALUE`` watermark: nothing has been seen yet.
MIN_WATERMARK = -(2**63)
#: Flink's ``Long.MAX_VALUE`` watermark: end of input, every window fires.
MAX_WATERMARK = 2**63 - 1

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

Duration = timedelta | int


def milliseconds(n: float) -> timedelta:
    """``fk.milliseconds(200)`` → ``timedelta(milliseconds=200)``."""
    return timedelta(milliseconds=n)


def seconds(n: float) -> timedelta:
    """``fk.seconds(10)`` → ``timedelta(seconds=10)``."""
    return timedelta(seconds=n)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def hours(n: float) -> timedelta:
    return timedelta(hours=n)


def to_millis(d: Duration, *, what: str = "duration") -> int:
    """A duration as whole milliseconds; an ``int`` is taken as milliseconds already.

    >>> to_millis(seconds(10))
    10000
    >>> to_millis(250)
    250
    """
    if isinstance(d, bool) or not isinstance(d, (timedelta, int)):
        raise TypeError(f"{what} must be a datetime.timedelta (e.g. fk.seconds(5)) or int milliseconds, got {d!r}")
    if isinstance(d, int):
        return d
    micros = (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds
    if micros % 1000:
        raise ValueError(f"{what} {d!r} has sub-millisecond precision; event time is counted in milliseconds")
    return micros // 1000


def timestamp_to_millis(ts: datetime | int) -> int:
    """Epoch milliseconds of a datetime (naive = UTC) or an int already in ms."""
    if isinstance(ts, int):
        return ts
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    delta = ts - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def millis_to_datetime(ms: int) -> datetime:
    """Naive UTC datetime of epoch milliseconds (what Spark returns with a UTC session)."""
    return datetime(1970, 1, 1) + timedelta(milliseconds=ms)
