"""Evictors: remove elements from a window's contents before or after the window function.

An evictor needs the individual elements, so a window with an evictor keeps every
element (no pre-aggregation), as in Flink's ``EvictingWindowOperator``. Elements
are handed over in arrival order as :class:`TimestampedValue`; whatever survives
``evict_after`` is what the window keeps for its next firing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from funke.semantics.time import Duration, to_millis


@dataclass(frozen=True)
class TimestampedValue:
    """One window element with its event timestamp (``None`` when the stream has none)."""

    value: Any
    timestamp: int | None = None

    @property
    def has_timestamp(self) -> bool:
        return self.timestamp is not None


class EvictorContext(Protocol):
    def get_current_processing_time(self) -> int: ...

    def get_current_watermark(self) -> int: ...


class Evictor:
    """Base class: return the elements to keep (or edit the list in place and return ``None``)."""

    def evict_before(
        self, elements: list[TimestampedValue], size: int, window: Any, ctx: EvictorContext
    ) -> list[TimestampedValue] | None:
        return None

    def evict_after(
        self, elements: list[TimestampedValue], size: int, window: Any, ctx: EvictorContext
    ) -> list[TimestampedValue] | None:
        return None

    def describe(self) -> str:
        return f"{type(self).__name__}()"


def run_evictor(
    evictor: Evictor, before: bool, elements: list[TimestampedValue], window: Any, ctx: EvictorContext
) -> list[TimestampedValue]:
    """Call ``evict_before``/``evict_after`` and normalise the two allowed answer styles."""
    method = evictor.evict_before if before else evictor.evict_after
    kept = method(elements, len(elements), window, ctx)
    if kept is None:
        return elements
    if not isinstance(kept, list):
        name = "evict_before" if before else "evict_after"
        raise TypeError(f"{type(evictor).__name__}.{name} must return a list of TimestampedValue or None, got {kept!r}")
    return kept


def _check_flag(value: bool) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"do_evict_after must be True or False, got {value!r}")


class _BeforeOrAfterEvictor(Evictor):
    """Removes what ``_evict`` says before the window function, or after it with ``do_evict_after``
    (the built-ins' one switch, as Flink's)."""

    do_evict_after: bool

    def _evict(self, elements: list[TimestampedValue]) -> list[TimestampedValue]:
        raise NotImplementedError

    def evict_before(
        self, elements: list[TimestampedValue], size: int, window: Any, ctx: EvictorContext
    ) -> list[TimestampedValue]:
        return elements if self.do_evict_after else self._evict(elements)

    def evict_after(
        self, elements: list[TimestampedValue], size: int, window: Any, ctx: EvictorContext
    ) -> list[TimestampedValue]:
        return self._evict(elements) if self.do_evict_after else elements


@dataclass(frozen=True)
class CountEvictor(_BeforeOrAfterEvictor):
    """Keeps the last ``max_count`` elements (the newest by arrival)."""

    max_count: int
    do_evict_after: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.max_count, bool) or not isinstance(self.max_count, int) or self.max_count < 0:
            raise ValueError(f"CountEvictor needs a count >= 0, got {self.max_count!r}")
        _check_flag(self.do_evict_after)

    @classmethod
    def of(cls, max_count: int, do_evict_after: bool = False) -> CountEvictor:
        return cls(max_count, do_evict_after)

    def _evict(self, elements: list[TimestampedValue]) -> list[TimestampedValue]:
        if len(elements) <= self.max_count:
            return elements
        return elements[len(elements) - self.max_count :]

    def describe(self) -> str:
        return f"CountEvictor({self.max_count}{', after' if self.do_evict_after else ''})"


@dataclass(frozen=True)
class TimeEvictor(_BeforeOrAfterEvictor):
    """Keeps elements newer than ``max timestamp in the window - window_size``.

    Elements without timestamps are never evicted (Flink checks the first element).
    """

    window_size_ms: int
    do_evict_after: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.window_size_ms, bool) or not isinstance(self.window_size_ms, int) or self.window_size_ms < 0:
            raise ValueError(f"TimeEvictor needs a size >= 0 ms, got {self.window_size_ms!r}")
        _check_flag(self.do_evict_after)

    @classmethod
    def of(cls, window_size: Duration, do_evict_after: bool = False) -> TimeEvictor:
        return cls(to_millis(window_size, what="TimeEvictor size"), do_evict_after)

    def _evict(self, elements: list[TimestampedValue]) -> list[TimestampedValue]:
        if not elements or not elements[0].has_timestamp:
            return elements
        newest = max(e.timestamp for e in elements if e.timestamp is not None)
        cutoff = newest - self.window_size_ms
        return [e for e in elements if e.timestamp is None or e.timestamp > cutoff]

    def describe(self) -> str:
        return f"TimeEvictor({self.window_size_ms}ms{', after' if self.do_evict_after else ''})"


@dataclass(frozen=True)
class DeltaEvictor(_BeforeOrAfterEvictor):
    """Drops elements whose ``delta_fn(element, last element) >= threshold``."""

    threshold: float
    delta_fn: Callable[[Any, Any], float] = field(compare=False)
    do_evict_after: bool = False

    def __post_init__(self) -> None:
        if not callable(self.delta_fn):
            raise TypeError("DeltaEvictor.of(threshold, delta_fn) needs a function (a, b) -> distance")
        _check_flag(self.do_evict_after)

    @classmethod
    def of(cls, threshold: float, delta_fn: Callable[[Any, Any], float], do_evict_after: bool = False) -> DeltaEvictor:
        return cls(threshold, delta_fn, do_evict_after)

    def _evict(self, elements: list[TimestampedValue]) -> list[TimestampedValue]:
        if not elements:
            return elements
        last = elements[-1].value
        return [e for e in elements if self.delta_fn(e.value, last) < self.threshold]

    def describe(self) -> str:
        return f"DeltaEvictor({self.threshold}{', after' if self.do_evict_after else ''})"
