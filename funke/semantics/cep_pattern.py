"""A CEP pattern as the automaton's compiler reads it, and the checks Flink's compiler makes first.

The builder is ``funke.cep.Pattern``; this module holds what its stages carry and what the
compiler (:mod:`funke.semantics.cep_compiler`) reads from them: how often a stage occurs
(:class:`Quantifier`), how it consumes events after the previous one (:class:`Consuming`),
which partial matches a found match discards (:class:`AfterMatchSkipStrategy`), the smallest
``within`` (:func:`window_of`), and :func:`validate`, which refuses a pattern Flink's
``NFACompiler`` refuses (:class:`MalformedPatternError`) before any event.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

from funke.errors import FunkeError, PlanError
from funke.semantics.cep_conditions import Condition

__all__ = [
    "AfterMatchSkipStrategy",
    "Consuming",
    "EventId",
    "MalformedPatternError",
    "PatternLike",
    "Quantifier",
    "SkipStrategyError",
    "validate",
    "window_of",
]


class MalformedPatternError(PlanError):
    """A pattern Flink's CEP would refuse (or one funke cannot run yet), refused before any event."""


class SkipStrategyError(FunkeError, RuntimeError):
    """``skip_to_first/last(name).throw_exception_on_miss()`` met a match it cannot skip in."""


# --------------------------------------------------------------------------- skip strategies

EventId = tuple[int, int]  # (timestamp, arrival number): Flink's EventId order


@dataclass(frozen=True)
class AfterMatchSkipStrategy:
    """Which partial matches a found match discards (Flink's ``AfterMatchSkipStrategy``).

    >>> AfterMatchSkipStrategy.skip_to_last("b")
    AfterMatchSkipStrategy.skip_to_last('b')
    """

    kind: str = "no_skip"
    pattern_name: str | None = None
    throw_on_miss: bool = False

    @staticmethod
    def no_skip() -> AfterMatchSkipStrategy:
        """Every possible match is emitted."""
        return AfterMatchSkipStrategy("no_skip")

    @staticmethod
    def skip_to_next() -> AfterMatchSkipStrategy:
        """Discard partial matches that started with the match's first event."""
        return AfterMatchSkipStrategy("skip_to_next")

    @staticmethod
    def skip_past_last_event() -> AfterMatchSkipStrategy:
        """Discard partial matches that started before the match ended."""
        return AfterMatchSkipStrategy("skip_past_last_event")

    @staticmethod
    def skip_to_first(pattern_name: str) -> AfterMatchSkipStrategy:
        """Discard partial matches that started before the match's first ``pattern_name`` event."""
        return AfterMatchSkipStrategy("skip_to_first", _check_skip_name(pattern_name))

    @staticmethod
    def skip_to_last(pattern_name: str) -> AfterMatchSkipStrategy:
        """Discard partial matches that started before the match's last ``pattern_name`` event."""
        return AfterMatchSkipStrategy("skip_to_last", _check_skip_name(pattern_name))

    def throw_exception_on_miss(self) -> AfterMatchSkipStrategy:
        """Fail (instead of not skipping) when a match has no ``pattern_name`` event, or it is the first."""
        if self.pattern_name is None:
            raise MalformedPatternError(f"throw_exception_on_miss() applies to skip_to_first/skip_to_last, not {self.kind}")
        return AfterMatchSkipStrategy(self.kind, self.pattern_name, True)

    @property
    def is_skip_strategy(self) -> bool:
        return self.kind != "no_skip"

    def pruning_id(self, match: dict[str, list[EventId]]) -> EventId | None:
        """The event partial matches are measured against, or None to prune nothing."""
        if self.kind == "no_skip":
            return None
        if self.kind == "skip_to_next":
            return min(ids[0] for ids in match.values())
        if self.kind == "skip_past_last_event":
            return max(ids[-1] for ids in match.values())
        ids = match.get(self.pattern_name or "")
        if not ids:
            if self.throw_on_miss:
                raise SkipStrategyError(f"could not skip to {self.pattern_name!r}: the match has no such event")
            return None
        pruning = ids[0] if self.kind == "skip_to_first" else ids[-1]
        if self.throw_on_miss and pruning == min(i for ids in match.values() for i in ids):
            raise SkipStrategyError(f"could not skip to the first event of a match ({self.pattern_name!r})")
        return pruning

    def should_prune(self, start: EventId, pruning: EventId) -> bool:
        # Relative to the whole match a start *at* the pruning event is discarded too;
        # relative to an element, only starts strictly before it.
        if self.kind in ("skip_to_first", "skip_to_last"):
            return start < pruning
        return start <= pruning

    def __repr__(self) -> str:
        arg = "" if self.pattern_name is None else repr(self.pattern_name)
        tail = ".throw_exception_on_miss()" if self.throw_on_miss else ""
        return f"AfterMatchSkipStrategy.{self.kind}({arg}){tail}"


def _check_skip_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise MalformedPatternError(f"a skip strategy needs the name of a pattern to skip to, got {name!r}")
    return name


# --------------------------------------------------------------------------- the pattern as the compiler reads it


class Consuming(enum.Enum):
    """How a pattern consumes events after the previous one (Flink's ``ConsumingStrategy``)."""

    STRICT = "next"
    SKIP_TILL_NEXT = "followed_by"
    SKIP_TILL_ANY = "followed_by_any"
    NOT_FOLLOW = "not_followed_by"
    NOT_NEXT = "not_next"


@dataclass(frozen=True)
class Quantifier:
    """How often a pattern occurs and how it consumes events (Flink's ``Quantifier`` + ``Times``).

    ``kind`` is ``single``, ``looping`` (``times_or_more(n)``: ``times_from == times_to == n``)
    or ``times`` (``times_from..times_to``); ``inner`` is the contiguity between the
    events of one looping/times pattern.
    """

    consuming: Consuming = Consuming.STRICT
    kind: str = "single"
    times_from: int = 1
    times_to: int = 1
    optional: bool = False
    greedy: bool = False
    inner: Consuming = Consuming.SKIP_TILL_NEXT

    @property
    def is_not(self) -> bool:
        return self.consuming in (Consuming.NOT_FOLLOW, Consuming.NOT_NEXT)


class PatternLike(Protocol):
    """What the compiler reads from a pattern stage (``funke.cep.Pattern`` is one)."""

    name: str | None
    previous: PatternLike | None
    quantifier: Quantifier
    condition: Condition | None
    until_condition: Condition | None
    window_ms: int | None
    group: PatternLike | None
    skip_strategy: AfterMatchSkipStrategy


# --------------------------------------------------------------------------- checks


def window_of(pattern: PatternLike) -> int:
    """The smallest ``within`` over every stage, groups included (0: no time limit)."""
    windows = []
    stack = [pattern]
    while stack:
        stage = stack.pop()
        while stage is not None:
            if stage.window_ms:
                windows.append(stage.window_ms)
            if stage.group is not None:
                stack.append(stage.group)
            stage = stage.previous
    return min(windows, default=0)


def _names_of(pattern: PatternLike) -> list[str]:
    names: list[str] = []
    stage = pattern
    while stage is not None:
        names.extend(_names_of(stage.group) if stage.group is not None else [stage.name or ""])
        stage = stage.previous
    return names


def validate(pattern: PatternLike) -> None:
    """Refuse what Flink's compiler refuses; the builder refuses the rest as it is called."""
    names = _names_of(pattern)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise MalformedPatternError(f"duplicate pattern name {name!r}: every pattern in a sequence needs its own name")
        seen.add(name)
    if pattern.quantifier.consuming is Consuming.NOT_FOLLOW and window_of(pattern) == 0:
        raise MalformedPatternError(
            "a pattern cannot end with not_followed_by() without a time limit: add .within(...) "
            "(the absence of an event can only be decided once time passes)"
        )
    skip = pattern.skip_strategy
    if skip.pattern_name is not None and skip.pattern_name not in seen:
        raise MalformedPatternError(
            f"the skip strategy {skip!r} names pattern {skip.pattern_name!r}, which is not in the pattern "
            f"(patterns: {', '.join(names)})"
        )
