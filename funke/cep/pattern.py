"""Flink's CEP ``Pattern`` in Python: an immutable value built one call at a time.

Each call returns a new :class:`Pattern`; the one it was called on is unchanged, so a
prefix can be shared by several patterns. A pattern is a chain of *stages*, the last
one first: ``previous`` points back, quantifier calls (``one_or_more()``, ``times(...)``,
``optional()``, ...) and conditions (``where``, ``or_``, ``until``, ``subtype``) apply to
the last stage, as in Flink.

Conditions: a plain function ``f(event) -> bool`` is a *simple* condition. A condition
that needs the partial match is an :class:`IterativeCondition` (subclass it, or wrap
``f(event, ctx)`` with :func:`iterative`); ``ctx.get_events_for_pattern(name)`` lists
what the partial match has accepted for ``name``. funke never guesses from a
function's signature.

>>> start = Pattern.begin("start").where(lambda e: e["amount"] < 1)
>>> fraud = start.next("large").where(lambda e: e["amount"] > 500).within(60_000)
>>> fraud
Pattern.begin('start').where(<lambda>).next('large').where(<lambda>).within(60000 ms)
>>> start   # unchanged
Pattern.begin('start').where(<lambda>)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from funke.cep.sql import sql_text
from funke.semantics.cep_conditions import AndCondition, Condition, OrCondition, SubtypeCondition, as_condition
from funke.semantics.cep_pattern import (
    AfterMatchSkipStrategy,
    Consuming,
    MalformedPatternError,
    Quantifier,
    validate,
    window_of,
)
from funke.semantics.time import Duration, to_millis

_ONE_STRICT = Quantifier()
_NO_SKIP = AfterMatchSkipStrategy.no_skip()

_CONTIGUITY_CALL = {
    Consuming.STRICT: "next",
    Consuming.SKIP_TILL_NEXT: "followed_by",
    Consuming.SKIP_TILL_ANY: "followed_by_any",
    Consuming.NOT_NEXT: "not_next",
    Consuming.NOT_FOLLOW: "not_followed_by",
}


@dataclass(frozen=True, eq=False)
class Pattern:
    """One stage of a pattern sequence, with the stages before it (``previous``).

    Build with :meth:`begin`; don't call the constructor. ``group`` holds the inner
    sequence of a group pattern (``Pattern.begin(pattern)``, ``.next(pattern)``, ...),
    whose ``name`` is None.
    """

    name: str | None
    previous: Pattern | None = None
    quantifier: Quantifier = _ONE_STRICT
    condition: Condition | None = None
    until_condition: Condition | None = None
    window_ms: int | None = None
    group: Pattern | None = None
    skip_strategy: AfterMatchSkipStrategy = _NO_SKIP

    # -- starting and appending

    @staticmethod
    def begin(name_or_pattern: str | Pattern, skip_strategy: AfterMatchSkipStrategy | None = None) -> Pattern:
        """Start a sequence with a stage named ``name`` (or a group: a whole pattern).

        >>> Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event())
        Pattern.begin('a', AfterMatchSkipStrategy.skip_past_last_event())
        """
        skip = AfterMatchSkipStrategy.no_skip() if skip_strategy is None else skip_strategy
        if not isinstance(skip, AfterMatchSkipStrategy):
            raise TypeError(f"Pattern.begin(name, skip_strategy): skip_strategy must be an AfterMatchSkipStrategy, got {skip!r}")
        return Pattern._stage(name_or_pattern, None, Consuming.STRICT, skip, "begin")

    @staticmethod
    def _stage(
        name_or_pattern: Any, previous: Pattern | None, consuming: Consuming, skip: AfterMatchSkipStrategy, call: str
    ) -> Pattern:
        taken = set(_names(previous)) if previous is not None else set()
        if isinstance(name_or_pattern, Pattern):
            if consuming in (Consuming.NOT_NEXT, Consuming.NOT_FOLLOW):
                raise MalformedPatternError(f"{call}() takes a name, not a group pattern: Flink has no negated groups")
            inner = name_or_pattern
            if inner.quantifier.consuming is Consuming.NOT_FOLLOW:
                raise MalformedPatternError(
                    f"a group pattern cannot end with not_followed_by() ({inner!r}): put the NOT after the group"
                )
            for name in _names(inner):
                _check_free(name, taken)
                taken.add(name)
            return Pattern(None, previous, Quantifier(consuming), group=inner, skip_strategy=skip)
        if not isinstance(name_or_pattern, str):
            raise TypeError(f"{call}() takes a pattern name (str) or a group Pattern, got {name_or_pattern!r}")
        _check_free(name_or_pattern, taken)
        return Pattern(name_or_pattern, previous, Quantifier(consuming), skip_strategy=skip)

    def _append(self, name_or_pattern: str | Pattern, consuming: Consuming) -> Pattern:
        return Pattern._stage(name_or_pattern, self, consuming, self.skip_strategy, _CONTIGUITY_CALL[consuming])

    def next(self, name_or_pattern: str | Pattern) -> Pattern:
        """Append a stage whose event must come right after the previous match event (strict contiguity)."""
        return self._append(name_or_pattern, Consuming.STRICT)

    def followed_by(self, name_or_pattern: str | Pattern) -> Pattern:
        """Append a stage; non-matching events in between are skipped (relaxed contiguity)."""
        return self._append(name_or_pattern, Consuming.SKIP_TILL_NEXT)

    def followed_by_any(self, name_or_pattern: str | Pattern) -> Pattern:
        """Append a stage; any events in between may be skipped, matching ones too (non-deterministic relaxed)."""
        return self._append(name_or_pattern, Consuming.SKIP_TILL_ANY)

    def not_next(self, name: str) -> Pattern:
        """Append a NOT stage: the partial match is dropped if the very next event matches it."""
        self._check_not_after_optional("not_next")
        return self._append(name, Consuming.NOT_NEXT)

    def not_followed_by(self, name: str) -> Pattern:
        """Append a NOT stage: dropped if a matching event comes before the next stage (at the end: within the time limit)."""
        self._check_not_after_optional("not_followed_by")
        return self._append(name, Consuming.NOT_FOLLOW)

    def _check_not_after_optional(self, call: str) -> None:
        if self.quantifier.optional:
            raise MalformedPatternError(
                f"{call}() cannot follow an optional stage ({self._stage_label()}): Flink does not support an "
                "optional path to a NOT pattern; write two patterns, one with and one without the optional stage"
            )

    # -- conditions

    def _replace(self, **changes: Any) -> Pattern:
        return dataclasses.replace(self, **changes)

    def _check_not_group(self, call: str) -> None:
        if self.group is not None:
            raise MalformedPatternError(f"{call}() does not apply to a group pattern; put it on the stages inside the group")

    def where(self, condition: Any) -> Pattern:
        """AND a condition onto the last stage: ``f(event) -> bool``, an ``IterativeCondition``, or a SQL
        expression over the event's columns (``"amount < 10"``, see ``funke.cep.sql``)."""
        self._check_not_group("where")
        cond = _condition(condition, "where(condition)")
        return self._replace(condition=cond if self.condition is None else AndCondition(self.condition, cond))

    def or_(self, condition: Any) -> Pattern:
        """OR a condition onto the last stage's condition (Flink's ``or``)."""
        self._check_not_group("or_")
        cond = _condition(condition, "or_(condition)")
        return self._replace(condition=cond if self.condition is None else OrCondition(self.condition, cond))

    def subtype(self, cls: type) -> Pattern:
        """Only events that are instances of ``cls`` match the last stage."""
        self._check_not_group("subtype")
        if not isinstance(cls, type):
            raise TypeError(f"subtype() takes a class, got {cls!r}")
        cond = SubtypeCondition(cls)
        return self._replace(condition=cond if self.condition is None else AndCondition(self.condition, cond))

    def until(self, condition: Any) -> Pattern:
        """Stop condition of a looping stage: an event matching it ends the loop and is not taken."""
        if self.until_condition is not None:
            raise MalformedPatternError("only one until() condition can be applied to a stage")
        if self.quantifier.kind != "looping":
            raise MalformedPatternError(
                "until() applies to looping stages only: call one_or_more() or times_or_more(n) before until()"
            )
        return self._replace(until_condition=_condition(condition, "until(condition)"))

    # -- quantifiers

    def _check_no_not(self, call: str) -> None:
        if self.quantifier.is_not:
            raise MalformedPatternError(f"{call}() does not apply to a NOT pattern ({self._stage_label()})")

    def _check_single(self, call: str) -> None:
        q = self.quantifier
        if q.kind != "single":
            raise MalformedPatternError(
                f"{call}(): a quantifier is already applied to {self._stage_label()} ({_quantifier_text(q)})"
            )
        if q.optional:
            raise MalformedPatternError(
                f"{call}() after optional(): apply the quantifier first, then optional() (e.g. .{call}(...).optional())"
            )

    def _quantified(self, call: str, kind: str, times_from: int, times_to: int, optional: bool = False) -> Pattern:
        self._check_no_not(call)
        self._check_single(call)
        q = dataclasses.replace(self.quantifier, kind=kind, times_from=times_from, times_to=times_to, optional=optional)
        return self._replace(quantifier=q)

    def one_or_more(self) -> Pattern:
        """The last stage matches one or more events (relaxed contiguity between them by default)."""
        return self._quantified("one_or_more", "looping", 1, 1)

    def times_or_more(self, times: int) -> Pattern:
        """The last stage matches ``times`` or more events."""
        _check_int(times, "times_or_more(times)")
        if times < 1:
            raise MalformedPatternError(f"times_or_more({times}): the number of times must be at least 1")
        return self._quantified("times_or_more", "looping", times, times)

    def times(self, times: int, to: int | None = None) -> Pattern:
        """The last stage matches exactly ``times`` events, or between ``times`` and ``to`` (``0`` = optional).

        >>> Pattern.begin("a").times(0, 2)
        Pattern.begin('a').times(1, 2).optional()
        """
        _check_int(times, "times(from)")
        if to is None:
            if times < 1:
                raise MalformedPatternError(f"times({times}): the number of times must be at least 1")
            return self._quantified("times", "times", times, times)
        _check_int(to, "times(from, to)")
        optional = times == 0  # Flink: times(0, n) is times(1, n).optional()
        low = 1 if optional else times
        if low < 1 or to < low:
            raise MalformedPatternError(f"times({times}, {to}): need 0 <= from <= to and to >= 1")
        return self._quantified("times", "times", low, to, optional)

    def optional(self) -> Pattern:
        """The last stage may match no event at all."""
        q = self.quantifier
        if q.optional:
            raise MalformedPatternError(f"optional() is already applied to {self._stage_label()}")
        if q.is_not:
            raise MalformedPatternError(f"a NOT pattern cannot be optional ({self._stage_label()})")
        if self.previous is not None and self.previous.quantifier.greedy:
            raise MalformedPatternError("an optional stage cannot follow a greedy one")
        return self._replace(quantifier=dataclasses.replace(q, optional=True))

    def greedy(self) -> Pattern:
        """The looping/times stage takes as many events as it can before the next stage may start."""
        q = self.quantifier
        self._check_no_not("greedy")
        self._check_not_group("greedy")
        if q.inner is Consuming.SKIP_TILL_ANY:
            raise MalformedPatternError("greedy() does not combine with allow_combinations()")
        if q.kind == "single":
            raise MalformedPatternError(
                f"greedy() applies to a quantified stage: call one_or_more(), times(...) or times_or_more(n) on "
                f"{self._stage_label()} first"
            )
        return self._replace(quantifier=dataclasses.replace(q, greedy=True))

    def consecutive(self) -> Pattern:
        """Strict contiguity between the events of a looping/times stage (any other event breaks it)."""
        return self._inner("consecutive", Consuming.STRICT)

    def allow_combinations(self) -> Pattern:
        """Non-deterministic relaxed contiguity between the events of a looping/times stage."""
        if self.quantifier.greedy:
            raise MalformedPatternError("allow_combinations() does not combine with greedy()")
        return self._inner("allow_combinations", Consuming.SKIP_TILL_ANY)

    def _inner(self, call: str, inner: Consuming) -> Pattern:
        q = self.quantifier
        if q.kind == "single":
            raise MalformedPatternError(f"{call}() applies to one_or_more(), times(...) or times_or_more(n) stages")
        if q.inner is inner:
            raise MalformedPatternError(f"{call}() is already applied to {self._stage_label()}")
        if q.inner is not Consuming.SKIP_TILL_NEXT:
            raise MalformedPatternError("apply either consecutive() or allow_combinations(), not both")
        return self._replace(quantifier=dataclasses.replace(q, inner=inner))

    def within(self, duration: Duration) -> Pattern:
        """Time limit between the first and the last event of a match (``timedelta`` or int ms).

        With several, the smallest applies (as in Flink).
        """
        window = to_millis(duration, what="within(duration)")
        if window <= 0:
            raise MalformedPatternError(f"within() needs a positive duration, got {window} ms")
        return self._replace(window_ms=window)

    # -- reading it

    @property
    def window(self) -> int | None:
        """The smallest ``within`` of the whole pattern in ms, or None."""
        return window_of(self) or None

    def names(self) -> list[str]:
        """The stage names in order (group stages spelled out)."""
        return _names(self)

    def validate(self) -> Pattern:
        """Refuse what only the whole pattern shows (e.g. ending in not_followed_by without within)."""
        validate(self)
        return self

    def stages(self) -> list[Pattern]:
        stages = []
        stage: Pattern | None = self
        while stage is not None:
            stages.append(stage)
            stage = stage.previous
        return stages[::-1]

    def _stage_label(self) -> str:
        return f"pattern {self.name!r}" if self.name is not None else "the group pattern"

    def _calls(self) -> str:
        q = self.quantifier
        parts = []
        if self.condition is not None:
            parts.append(f".where({self.condition.describe()})")
        parts.append(_quantifier_calls(q))
        if self.until_condition is not None:
            parts.append(f".until({self.until_condition.describe()})")
        if self.window_ms is not None:
            parts.append(f".within({self.window_ms} ms)")
        return "".join(parts)

    def __repr__(self) -> str:
        out = []
        for i, stage in enumerate(self.stages()):
            target = repr(stage.group) if stage.group is not None else repr(stage.name)
            if i == 0:
                skip = "" if not stage.skip_strategy.is_skip_strategy else f", {stage.skip_strategy!r}"
                out.append(f"Pattern.begin({target}{skip})")
            else:
                out.append(f".{_CONTIGUITY_CALL[stage.quantifier.consuming]}({target})")
            out.append(stage._calls())
        return "".join(out)

    def describe(self) -> str:
        """One line per stage, for ``explain()``.

        >>> print(Pattern.begin("a").followed_by("b").one_or_more().consecutive().within(10_000).describe())
        pattern within 10000 ms, skip no_skip
          a: one event
          b: followed_by, one or more (consecutive)
        """
        window = self.window
        head = f"pattern{'' if window is None else f' within {window} ms'}, skip {self.skip_strategy.kind}"
        if self.skip_strategy.pattern_name is not None:
            head += f" {self.skip_strategy.pattern_name!r}"
        return "\n".join([head, *_describe_lines(self, "  ")])


def _describe_lines(pattern: Pattern, indent: str) -> list[str]:
    lines = []
    for i, stage in enumerate(pattern.stages()):
        q = stage.quantifier
        bits = [] if i == 0 else [_CONTIGUITY_CALL[q.consuming]]
        bits.append(_quantifier_text(q))
        if stage.condition is not None:
            bits.append(f"where {stage.condition.describe()}")
        if stage.until_condition is not None:
            bits.append(f"until {stage.until_condition.describe()}")
        label = stage.name if stage.group is None else "group"
        lines.append(f"{indent}{label}: {', '.join(bits)}")
        if stage.group is not None:
            lines.extend(_describe_lines(stage.group, indent + "  "))
    return lines


def _quantifier_text(q: Quantifier) -> str:
    if q.kind == "single":
        text = "one event"
    elif q.kind == "looping":
        text = "one or more" if q.times_from == 1 else f"{q.times_from} or more"
    else:
        text = f"{q.times_from} times" if q.times_from == q.times_to else f"{q.times_from} to {q.times_to} times"
    inner = {Consuming.STRICT: " (consecutive)", Consuming.SKIP_TILL_ANY: " (combinations)"}.get(q.inner, "")
    if q.kind == "single":
        inner = ""
    return text + inner + (", optional" if q.optional else "") + (", greedy" if q.greedy else "")


def _quantifier_calls(q: Quantifier) -> str:
    calls = ""
    if q.kind == "looping":
        calls = ".one_or_more()" if q.times_from == 1 else f".times_or_more({q.times_from})"
    elif q.kind == "times":
        calls = f".times({q.times_from})" if q.times_from == q.times_to else f".times({q.times_from}, {q.times_to})"
    if q.kind != "single":
        calls += {Consuming.STRICT: ".consecutive()", Consuming.SKIP_TILL_ANY: ".allow_combinations()"}.get(q.inner, "")
    if q.optional:
        calls += ".optional()"
    if q.greedy:
        calls += ".greedy()"
    return calls


def _condition(condition: Any, what: str) -> Condition:
    return sql_text(condition) or as_condition(condition, what=what)


def _names(pattern: Pattern | None) -> list[str]:
    names: list[str] = []
    for stage in pattern.stages() if pattern is not None else []:
        names.extend(_names(stage.group) if stage.group is not None else [stage.name or ""])
    return names


def _check_free(name: str, taken: set[str]) -> None:
    if not name:
        raise MalformedPatternError("a pattern name must not be empty")
    if ":" in name:
        raise MalformedPatternError(f"pattern name {name!r} contains ':', which Flink's CEP does not allow in names")
    if name in taken:
        raise MalformedPatternError(f"duplicate pattern name {name!r}: every pattern in a sequence needs its own name")


def _check_int(value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} takes an int, got {value!r}")
