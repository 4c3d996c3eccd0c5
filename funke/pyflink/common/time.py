"""PyFlink's ``Duration``, ``Time`` and ``Instant``. ``Duration`` and ``Time`` are ``datetime.timedelta`` s,
so every funke API that takes a duration takes them as they are.

>>> Duration.of_seconds(2).to_milliseconds()
2000
>>> Time.milliseconds(5) == Duration.of_millis(5)
True
>>> Instant.of_epoch_milli(1_500).to_epoch_milli()
1500
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["Duration", "Instant", "Time"]


class Duration(timedelta):
    """A length of time (Flink's ``java.time.Duration`` as PyFlink spells it)."""

    @classmethod
    def _of(cls, delta: timedelta) -> Duration:
        return cls(days=delta.days, seconds=delta.seconds, microseconds=delta.microseconds)

    @classmethod
    def of_days(cls, days: int) -> Duration:
        return cls._of(timedelta(days=days))

    @classmethod
    def of_hours(cls, hours: int) -> Duration:
        return cls._of(timedelta(hours=hours))

    @classmethod
    def of_minutes(cls, minutes: int) -> Duration:
        return cls._of(timedelta(minutes=minutes))

    @classmethod
    def of_seconds(cls, seconds: int) -> Duration:
        return cls._of(timedelta(seconds=seconds))

    @classmethod
    def of_millis(cls, millis: int) -> Duration:
        return cls._of(timedelta(milliseconds=millis))

    @classmethod
    def of_nanos(cls, nanos: int) -> Duration:
        return cls._of(timedelta(microseconds=nanos // 1000))

    def to_milliseconds(self) -> int:
        return (self.days * 86_400 + self.seconds) * 1000 + self.microseconds // 1000

    def to_nanos(self) -> int:
        return ((self.days * 86_400 + self.seconds) * 1_000_000 + self.microseconds) * 1000


class Time:
    """Flink's ``Time`` (window sizes, TTL): ``Time.seconds(10)`` is a :class:`Duration` (a timedelta)."""

    @staticmethod
    def milliseconds(milliseconds: int) -> Duration:
        return Duration.of_millis(milliseconds)

    @staticmethod
    def seconds(seconds: int) -> Duration:
        return Duration.of_seconds(seconds)

    @staticmethod
    def minutes(minutes: int) -> Duration:
        return Duration.of_minutes(minutes)

    @staticmethod
    def hours(hours: int) -> Duration:
        return Duration.of_hours(hours)

    @staticmethod
    def days(days: int) -> Duration:
        return Duration.of_days(days)

    @staticmethod
    def of(size: int, unit: str = "MILLISECONDS") -> Duration:
        return Duration.of_millis(size * _UNITS[str(unit).upper().rsplit(".", 1)[-1]])


_UNITS = {"MILLISECONDS": 1, "SECONDS": 1000, "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}


class Instant:
    """A point in time: seconds and nanoseconds since the epoch (Flink's ``Instant``)."""

    def __init__(self, seconds: int, nanos: int) -> None:
        self.seconds, self.nanos = seconds, nanos

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> Instant:
        return Instant(epoch_milli // 1000, epoch_milli % 1000 * 1_000_000)

    def to_epoch_milli(self) -> int:
        return self.seconds * 1000 + self.nanos // 1_000_000

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and (self.seconds, self.nanos) == (other.seconds, other.nanos)

    def __hash__(self) -> int:
        return hash((self.seconds, self.nanos))

    def __repr__(self) -> str:
        return f"Instant<{self.seconds}, {self.nanos}>"
