"""Flink's CEP automaton in plain Python: a pattern compiled to states and edges, run per key.

A pattern (``funke.cep.Pattern``) compiles, as Flink's ``NFACompiler`` does, into
states joined by three kinds of edges: TAKE (the event joins the match), IGNORE (the
event is skipped, the match stays where it is) and PROCEED (an epsilon move to the
next state, checked against the same event). Running it follows Flink's ``NFA``: every
partial match of a key is a *run* (Flink's ``ComputationState``); an event turns each
run into the runs its enabled edges lead to; runs that reach the final state are
matches, runs that reach a stop state (a NOT pattern matched) are dropped with every
branch of the run they came from, and runs older than ``within`` time out.

Events of one key must be given in timestamp order (the caller sorts them, as Flink's
operator does from its buffer once the watermark passes them); ``process`` refuses an
event older than the time the key has already reached. Matches are dicts ``{pattern
name: [events]}``, names in pattern order, events in arrival order. Matches found by
one call come out ordered by their first event (Flink's priority queue); matches with
the same first event come in the automaton's own order (Flink leaves that tie to its
heap). With a skip strategy other than ``no_skip`` a match is held back until no
partial match that started earlier can still complete, as in Flink.

The per-key state (:class:`NFAState`) is a plain picklable value: the runs, the held
matches, and a small table of taken events (Flink's shared buffer without Dewey
numbers: each node points at the one node before it, so a run's path is exact).

>>> from funke.cep import Pattern
>>> nfa = NFA.compile(Pattern.begin("a").where(lambda e: e == "a").next("b").where(lambda e: e == "b"))
>>> state = nfa.initial_state()
>>> [nfa.process(state, e, t).matches for t, e in enumerate(["a", "b", "a", "c"])]
[[], [{'a': ['a'], 'b': ['b']}], [], []]
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from funke.errors import FunkeError, PlanError
from funke.semantics.cep_conditions import (
    TRUE,
    AndCondition,
    Condition,
    IterativeCondition,
    NotCondition,
    OrCondition,
    SimpleCondition,
    SubtypeCondition,
    as_condition,
    iterative,
)
from funke.semantics.clock import Clock, SystemClock

__all__ = [
    "NFA",
    "AfterMatchSkipStrategy",
    "AndCondition",
    "CepOutput",
    "Condition",
    "Consuming",
    "IterativeCondition",
    "MalformedPatternError",
    "NFAState",
    "NotCondition",
    "OrCondition",
    "PatternContext",
    "Quantifier",
    "SimpleCondition",
    "SkipStrategyError",
    "SubtypeCondition",
    "as_condition",
    "iterative",
    "validate",
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


# --------------------------------------------------------------------------- compiled automaton


class Action(enum.Enum):
    TAKE = "take"
    IGNORE = "ignore"
    PROCEED = "proceed"


class Kind(enum.Enum):
    NORMAL = "normal"
    FINAL = "final"
    STOP = "stop"
    PENDING = "pending"  # the end of `not_followed_by(...)` under `within`: a match once time passes


class Transition:
    __slots__ = ("action", "condition", "source", "target")

    def __init__(self, action: Action, source: State, target: State, condition: Condition | None) -> None:
        self.action, self.source, self.target, self.condition = action, source, target, condition

    def __repr__(self) -> str:
        cond = "" if self.condition is None else f" if {self.condition.describe()}"
        return f"{self.action.value} -> {self.target.id}{cond}"


class State:
    """One automaton state; ``name`` is the pattern whose events it takes, ``id`` is unique."""

    __slots__ = ("id", "index", "kind", "name", "start", "transitions")

    def __init__(self, index: int, id: str, name: str, kind: Kind) -> None:
        self.index, self.id, self.name, self.kind = index, id, name, kind
        self.start = False
        self.transitions: list[Transition] = []

    def add(self, action: Action, target: State, condition: Condition | None) -> None:
        self.transitions.append(Transition(action, self, target, condition))

    def __repr__(self) -> str:
        return f"State({self.id}, {self.kind.value}{', start' if self.start else ''})"


FINAL_STATE_NAME = "$endState$"


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


class _Compiler:
    """Pattern → states, walking the pattern from its last stage back, as Flink's ``NFACompiler``.

    Kept close to Flink's structure on purpose: which edge goes where, and in which
    order, decides the matches (and their order), so each helper says which of
    Flink's it stands for.
    """

    def __init__(self, pattern: PatternLike) -> None:
        self.states: list[State] = []
        self.stop_states: dict[str, State] = {}
        self.current: PatternLike = pattern
        self.following: PatternLike | None = None
        self.group: PatternLike | None = None  # the group pattern being compiled, if any
        self.first_of_loop: dict[int, bool] = {}
        self.original_states: dict[str, State] = {}  # greedy+until: sink id -> its copy
        self.window_ms = window_of(pattern)
        self._ids: dict[str, int] = {}

    # -- states and edges

    def new_state(self, name: str, kind: Kind) -> State:
        seen = self._ids.get(name, 0)
        self._ids[name] = seen + 1
        state = State(len(self.states), name if not seen else f"{name}:{seen}", name, kind)
        self.states.append(state)
        return state

    def stop_state(self, not_condition: Condition, name: str) -> State:
        # All states that a NOT pattern stops share one stop state (Flink's createStopState).
        if name not in self.stop_states:
            stop = self.new_state(name, Kind.STOP)
            stop.add(Action.TAKE, stop, not_condition)
            self.stop_states[name] = stop
        return self.stop_states[name]

    def copy(self, state: State) -> State:
        clone = self.new_state(state.name, state.kind)
        for t in state.transitions:
            clone.add(t.action, clone if t.target is t.source else t.target, t.condition)
        return clone

    # -- conditions (Flink's getTakeCondition / getIgnoreCondition / getInnerIgnoreCondition / getTrueFunction)

    def group_until(self) -> Condition | None:
        return self.group.until_condition if self.group is not None else None

    @staticmethod
    def extend_with_until(cond: Condition | None, until: Condition | None, is_take: bool) -> Condition | None:
        if until is not None and cond is not None:
            return AndCondition(NotCondition(until), cond)
        if until is not None and is_take:
            return NotCondition(until)
        return cond

    def take_condition(self, stage: PatternLike) -> Condition:
        cond = stage.condition or TRUE
        return self.extend_with_until(cond, self.group_until(), True) or cond

    def true_condition(self) -> Condition:
        return self.extend_with_until(TRUE, self.group_until(), True) or TRUE

    def _ignore_for(self, strategy: Consuming, stage: PatternLike) -> Condition | None:
        if strategy is Consuming.SKIP_TILL_NEXT:
            cond: Condition | None = NotCondition(stage.condition or TRUE)
        elif strategy is Consuming.SKIP_TILL_ANY:
            cond = TRUE
        else:  # STRICT (and the NOT strategies, which Flink's switch leaves null too)
            cond = None
        return self.extend_with_until(cond, self.group_until(), False)

    def head_of_group(self, stage: PatternLike) -> bool:
        return self.group is not None and stage.previous is None

    def group_first_of_loop(self) -> bool:
        return self.first_of_loop.get(id(self.group), True)

    def set_first_of_loop(self, value: bool) -> None:
        if self.current.group is not None:
            self.first_of_loop[id(self.current)] = value

    def ignore_condition(self, stage: PatternLike) -> Condition | None:
        strategy = stage.quantifier.consuming
        if self.head_of_group(stage):
            assert self.group is not None
            q = self.group.quantifier
            strategy = q.consuming if self.group_first_of_loop() else q.inner
        return self._ignore_for(strategy, stage)

    def inner_ignore_condition(self, stage: PatternLike) -> Condition | None:
        strategy = stage.quantifier.inner
        if self.head_of_group(stage):
            assert self.group is not None
            strategy = self.group.quantifier.inner
        return self._ignore_for(strategy, stage)

    # -- NOT patterns

    def current_not_conditions(self) -> list[tuple[Condition, str]]:
        """NOT patterns before the current stage, reached back through optional stages."""
        found = []
        stage = self.current
        while stage.previous is not None and (
            stage.previous.quantifier.optional or stage.previous.quantifier.consuming is Consuming.NOT_FOLLOW
        ):
            stage = stage.previous
            if stage.quantifier.consuming is Consuming.NOT_FOLLOW:
                found.append((self.take_condition(stage), stage.name or ""))
        return found

    def copy_without_transitive_nots(self, sink: State) -> State:
        """Taking an event in an optional stage ends the NOT patterns before it (Flink's method of that name)."""
        nots = self.current_not_conditions()
        if not nots or not self.current.quantifier.optional:
            return sink
        names = {name for _, name in nots}
        clone = self.new_state(sink.name, sink.kind)
        for t in sink.transitions:
            if t.action is Action.PROCEED:
                target = t.target
                if target.kind is Kind.STOP:
                    if target.name in names:
                        continue
                else:
                    target = self.copy_without_transitive_nots(target)
                clone.add(t.action, target, t.condition)
            else:
                clone.add(t.action, clone if t.target is t.source else t.target, t.condition)
        return clone

    def add_stop_states(self, state: State) -> None:
        for cond, name in self.current_not_conditions():
            state.add(Action.PROCEED, self.stop_state(cond, name), cond)

    def add_stop_state_to_looping(self, state: State) -> None:
        following = self.following
        if following is not None and following.quantifier.consuming is Consuming.NOT_FOLLOW:
            cond = self.take_condition(following)
            state.add(Action.PROCEED, self.stop_state(cond, following.name or ""), cond)

    # -- the walk

    def compile(self) -> State:
        sink = self.new_state(FINAL_STATE_NAME, Kind.FINAL)
        sink = self.middle_states(sink)
        start = self.convert(sink)
        start.start = True
        return start

    def middle_states(self, sink: State) -> State:
        last = sink
        while self.current.previous is not None:
            stage = self.current
            consuming = stage.quantifier.consuming
            if consuming is Consuming.NOT_FOLLOW:
                # In the middle a not_followed_by becomes stop edges of the stages around it;
                # at the end (under `within`) it is a pending state that turns into a match once time passes.
                if last.kind is Kind.FINAL and self.window_ms > 0:
                    pending = self.new_state(stage.name or "", Kind.PENDING)
                    cond = self.take_condition(stage)
                    pending.add(Action.PROCEED, self.stop_state(cond, stage.name or ""), cond)
                    pending.add(Action.IGNORE, pending, NotCondition(cond))
                    last = pending
            elif consuming is Consuming.NOT_NEXT:
                state = self.new_state(stage.name or "", Kind.NORMAL)
                cond = self.take_condition(stage)
                stop = self.stop_state(cond, stage.name or "")
                # At the end, IGNORE (not PROCEED) to the final state, so the match waits for the next event.
                action = Action.IGNORE if last.kind is Kind.FINAL else Action.PROCEED
                state.add(action, last, NotCondition(cond))
                state.add(Action.PROCEED, stop, cond)
                last = state
            else:
                last = self.convert(last)
            self.following = stage
            self.current = stage.previous
        return last

    def convert(self, sink: State) -> State:
        q = self.current.quantifier
        if q.kind == "looping":
            self.set_first_of_loop(False)
            looping = self.looping(self.copy_without_transitive_nots(sink))
            self.set_first_of_loop(True)
            last = self.times_states(looping, sink, q.times_from, q.times_to)
        elif q.kind == "times":
            last = self.times_states(sink, sink, q.times_from, q.times_to)
        else:
            stage = self.current
            last = self.singleton(sink, sink, self.take_condition(stage), self.ignore_condition(stage), q.optional)
        self.add_stop_states(last)
        return last

    def update_with_greedy_condition(self, state: State, take: Condition) -> None:
        for t in state.transitions:
            t.condition = AndCondition(t.condition or TRUE, NotCondition(take))

    def times_states(self, sink: State, proceed: State, times_from: int, times_to: int) -> State:
        stage = self.current
        q = stage.quantifier
        last = sink
        self.set_first_of_loop(False)
        until = stage.until_condition
        inner_ignore = self.extend_with_until(self.inner_ignore_condition(stage), until, False)
        take = self.extend_with_until(self.take_condition(stage), until, True) or TRUE
        if q.greedy and times_from != times_to:
            if until is not None:
                self.original_states[sink.id] = self.copy(sink)
            self.update_with_greedy_condition(sink, take)
        for _ in range(times_from, times_to):  # the optional occurrences past the minimum
            last = self.singleton(last, proceed, take, inner_ignore, True)
            self.add_stop_state_to_looping(last)
        for _ in range(times_from - 1):  # the mandatory ones
            last = self.singleton(last, None, take, inner_ignore, False)
            self.add_stop_state_to_looping(last)
        self.set_first_of_loop(True)
        return self.singleton(last, proceed, take, self.ignore_condition(stage), q.optional)

    def singleton(self, sink: State, proceed: State | None, take: Condition, ignore: Condition | None, optional: bool) -> State:
        stage = self.current
        if stage.group is not None:
            return self.group_states(stage, sink, proceed, optional)
        state = self.new_state(stage.name or "", Kind.NORMAL)
        # Once an event is taken, the NOT patterns before this stage no longer apply.
        taken = self.copy_without_transitive_nots(sink)
        state.add(Action.TAKE, taken, take)
        proceed_condition = self.true_condition()
        if optional:
            assert proceed is not None
            until = stage.until_condition
            if stage.quantifier.greedy and until is not None:
                state.add(Action.PROCEED, self.original_states[proceed.id], AndCondition(proceed_condition, until))
                state.add(Action.PROCEED, proceed, AndCondition(proceed_condition, NotCondition(until)))
            else:
                state.add(Action.PROCEED, proceed, proceed_condition)
        if ignore is not None:
            if optional or self.head_of_optional_group(stage):
                ignore_state = self.new_state(stage.name or "", Kind.NORMAL)
                ignore_state.add(Action.TAKE, taken, take)
                ignore_state.add(Action.IGNORE, ignore_state, ignore)
                self.add_stop_states(ignore_state)
            else:
                ignore_state = state
            state.add(Action.IGNORE, ignore_state, ignore)
        return state

    def head_of_optional_group(self, stage: PatternLike) -> bool:
        return (
            self.head_of_group(stage) and self.group_first_of_loop() and self.group is not None and self.group.quantifier.optional
        )

    def _enter_group(self, group: PatternLike, sink: State) -> State:
        assert group.group is not None
        self.group = group
        self.current = group.group
        last = self.middle_states(sink)
        return self.convert(last)

    def group_states(self, group: PatternLike, sink: State, proceed: State | None, optional: bool) -> State:
        proceed_condition = self.true_condition()
        saved = (self.current, self.following, self.group)
        last = self._enter_group(group, sink)
        if optional:
            assert proceed is not None
            last.add(Action.PROCEED, proceed, proceed_condition)
        self.current, self.following, self.group = saved
        return last

    def looping(self, sink: State) -> State:
        stage = self.current
        if stage.group is not None:
            proceed_condition = self.true_condition()
            saved = (self.current, self.following, self.group)
            dummy = self.new_state("<group>", Kind.NORMAL)
            last = self._enter_group(stage, dummy)
            last.add(Action.PROCEED, sink, proceed_condition)
            dummy.add(Action.PROCEED, last, proceed_condition)
            self.current, self.following, self.group = saved
            return last
        until = stage.until_condition
        ignore = self.extend_with_until(self.inner_ignore_condition(stage), until, False)
        take = self.extend_with_until(self.take_condition(stage), until, True) or TRUE
        proceed_condition = self.true_condition()
        loop = self.new_state(stage.name or "", Kind.NORMAL)
        if stage.quantifier.greedy:
            if until is not None:
                sink_copy = self.copy(sink)
                loop.add(Action.PROCEED, sink_copy, AndCondition(proceed_condition, until))
                self.original_states[sink.id] = sink_copy
            loop.add(
                Action.PROCEED,
                sink,
                AndCondition(proceed_condition, NotCondition(until)) if until is not None else proceed_condition,
            )
            self.update_with_greedy_condition(sink, self.take_condition(stage))
        else:
            loop.add(Action.PROCEED, sink, proceed_condition)
        loop.add(Action.TAKE, loop, take)
        self.add_stop_state_to_looping(loop)
        if ignore is not None:
            ignore_state = self.new_state(stage.name or "", Kind.NORMAL)
            ignore_state.add(Action.TAKE, loop, take)
            ignore_state.add(Action.IGNORE, ignore_state, ignore)
            loop.add(Action.IGNORE, ignore_state, ignore)
            self.add_stop_state_to_looping(ignore_state)
        return loop


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


# --------------------------------------------------------------------------- running it


class Run(NamedTuple):
    """A partial match (Flink's ``ComputationState``): where it is, what it took last, when it began."""

    state: int  # index into NFA.states
    node: int | None  # last taken node in NFAState.nodes (None: nothing taken yet)
    start_ts: int
    start_id: EventId | None


_LAST = (float("inf"), 0)


def _order(run: Run) -> tuple:
    # Flink orders partial and completed matches by their first event; runs not yet started go last.
    return run.start_id if run.start_id is not None else _LAST


@dataclass
class NFAState:
    """Everything the automaton keeps for one key; plain data, picklable.

    ``nodes`` maps a node id to ``(pattern name, event id, event, previous node id)``:
    the events taken by live runs, each pointing at the event before it in its match.
    """

    partial: list[Run]
    completed: list[Run] = field(default_factory=list)
    nodes: dict[int, tuple[str, EventId, Any, int | None]] = field(default_factory=dict)
    next_node: int = 0
    next_event: int = 0
    time: int | None = None
    live_nodes_after_gc: int = 0


class CepOutput(NamedTuple):
    """What one step produced: matches, and timed-out partial matches with their timeout timestamp."""

    matches: list[dict[str, list]]
    timed_out: list[tuple[dict[str, list], int]]


class PatternContext:
    """The ``ctx`` an iterative condition receives: the partial match it would extend."""

    __slots__ = ("_events", "_nfa", "_run", "_state", "_timestamp")

    def __init__(self, nfa: NFA, state: NFAState, run: Run, timestamp: int) -> None:
        self._nfa, self._state, self._run, self._timestamp = nfa, state, run, timestamp
        self._events: dict[str, list] | None = None

    def get_events_for_pattern(self, name: str) -> list:
        """Events this partial match has accepted for ``name`` so far, oldest first."""
        if self._events is None:
            self._events = _materialize(self._state, self._run.node)
        return list(self._events.get(name, ()))

    def timestamp(self) -> int:
        """Timestamp of the event being evaluated."""
        return self._timestamp

    def current_processing_time(self) -> int:
        return self._nfa.clock.now_ms()


def _path(state: NFAState, node: int | None) -> list[tuple[str, EventId, Any]]:
    path = []
    while node is not None:
        name, event_id, event, node = state.nodes[node]
        path.append((name, event_id, event))
    path.reverse()
    return path


def _materialize(state: NFAState, node: int | None) -> dict[str, list]:
    match: dict[str, list] = {}
    for name, _, event in _path(state, node):
        match.setdefault(name, []).append(event)
    return match


def _event_ids(state: NFAState, node: int | None) -> dict[str, list[EventId]]:
    ids: dict[str, list[EventId]] = {}
    for name, event_id, _ in _path(state, node):
        ids.setdefault(name, []).append(event_id)
    return ids


class NFA:
    """A compiled pattern; one instance serves every key, each key has its own :class:`NFAState`."""

    def __init__(
        self,
        states: list[State],
        window_ms: int,
        skip_strategy: AfterMatchSkipStrategy,
        clock: Clock | None = None,
    ) -> None:
        self.states = states
        self.window_ms = window_ms
        self.skip_strategy = skip_strategy
        self.clock: Clock = clock or SystemClock()
        self.start_states = [s for s in states if s.start]

    @classmethod
    def compile(cls, pattern: PatternLike, *, clock: Clock | None = None) -> NFA:
        """Validate ``pattern`` and compile it as Flink's ``NFACompiler`` does."""
        validate(pattern)
        compiler = _Compiler(pattern)
        compiler.compile()
        return cls(compiler.states, compiler.window_ms, pattern.skip_strategy, clock)

    def describe(self) -> str:
        """The states and their edges, one state a line (for ``explain()``)."""
        lines = [f"NFA within={self.window_ms or None} ms skip={self.skip_strategy!r}"]
        for s in self.states:
            flags = [s.kind.value] + (["start"] if s.start else [])
            edges = "; ".join(repr(t) for t in s.transitions)
            lines.append(f"  {s.id} ({', '.join(flags)}): {edges}")
        return "\n".join(lines)

    def initial_state(self) -> NFAState:
        return NFAState(partial=[Run(s.index, None, -1, None) for s in self.start_states])

    # -- the two entry points

    def process(self, state: NFAState, event: Any, timestamp: int) -> CepOutput:
        """Advance time to ``timestamp``, then feed ``event``; events must come in timestamp order."""
        if state.time is not None and timestamp < state.time:
            raise ValueError(
                f"CEP events of a key must come in timestamp order: got {timestamp} after time reached {state.time}; "
                "sort the events (and route late ones elsewhere) before the automaton"
            )
        matches, timed_out = self.advance_time(state, timestamp)
        event_id = (timestamp, state.next_event)
        state.next_event += 1
        new_partial: list[Run] = []
        potential: list[Run] = []
        for run in state.partial:
            retained: list[Run] = []
            stopped = False
            for nxt in self._next_runs(state, run, event, event_id, timestamp):
                kind = self.states[nxt.state].kind
                if kind is Kind.FINAL:
                    potential.append(nxt)
                elif kind is Kind.STOP:
                    stopped = True  # a NOT pattern matched: this run and all its branches end
                else:
                    retained.append(nxt)
            if not stopped:
                new_partial.extend(retained)
        if len(new_partial) > 1:
            new_partial.sort(key=_order)
        if potential or state.completed:
            matches += self._emit(state, potential, new_partial)
        state.partial = new_partial
        self._collect_garbage(state)
        return CepOutput(matches, timed_out)

    def advance_time(self, state: NFAState, timestamp: int) -> CepOutput:
        """No event older than ``timestamp`` will come: time out old partial matches (Flink's ``advanceTime``).

        A partial match times out when ``timestamp - first event timestamp >= within``;
        it is reported with timeout timestamp ``first + within``. A match that ends in
        ``not_followed_by`` completes here, when no forbidden event came in time.
        """
        reached = state.time == timestamp
        state.time = timestamp if state.time is None else max(state.time, timestamp)
        if not state.completed and (reached or not self._any_expired(state, timestamp)):
            # The common case, checked first: nothing times out or completes. (At the time reached
            # already, nothing can: the runs were checked then, and runs made since start no sooner.)
            return CepOutput([], [])
        new_partial: list[Run] = []
        potential: list[Run] = []
        timed_out: list[tuple[dict[str, list], int]] = []
        for run in state.partial:
            if self.window_ms > 0 and not self.states[run.state].start and timestamp - run.start_ts >= self.window_ms:
                if self.states[run.state].kind is Kind.PENDING:
                    potential.append(run)
                else:
                    timed_out.append((_materialize(state, run.node), run.start_ts + self.window_ms))
            else:
                new_partial.append(run)
        matches = self._emit(state, potential, new_partial)
        state.partial = new_partial
        self._collect_garbage(state)
        return CepOutput(matches, timed_out)

    def _any_expired(self, state: NFAState, timestamp: int) -> bool:
        """Whether a partial match of ``state`` is ``within`` or more behind ``timestamp``."""
        window = self.window_ms
        if window <= 0:
            return False
        states = self.states
        for run in state.partial:
            if timestamp - run.start_ts >= window and not states[run.state].start:
                return True
        return False

    # -- one run, one event (Flink's computeNextStates)

    def _enabled_edges(self, ctx: PatternContext, run: Run, event: Any) -> list[Transition]:
        edges: list[Transition] = []
        stack = [self.states[run.state]]
        visited: set[int] = set()
        while stack:
            current = stack.pop()
            if current.index in visited:
                continue
            visited.add(current.index)
            for t in current.transitions:
                if t.condition is None or t.condition.evaluate(event, ctx):
                    if t.action is Action.PROCEED:
                        stack.append(t.target)
                    else:
                        edges.append(t)
        return edges

    def _final_after_proceed(self, ctx: PatternContext, state: State, event: Any) -> State | None:
        stack = [state]
        visited: set[int] = set()
        while stack:
            current = stack.pop()
            if current.index in visited:
                continue
            visited.add(current.index)
            for t in current.transitions:
                if t.action is Action.PROCEED and (t.condition is None or t.condition.evaluate(event, ctx)):
                    if t.target.kind is Kind.FINAL:
                        return t.target
                    stack.append(t.target)
        return None

    def _next_runs(self, state: NFAState, run: Run, event: Any, event_id: EventId, timestamp: int) -> list[Run]:
        ctx = PatternContext(self, state, run, timestamp)
        is_start = self.states[run.state].start
        result: list[Run] = []
        for edge in self._enabled_edges(ctx, run, event):
            if edge.action is Action.IGNORE:
                if not is_start:  # a run that has taken nothing has nothing to keep waiting for
                    result.append(Run(edge.target.index, run.node, run.start_ts, run.start_id))
                continue
            node = state.next_node
            state.next_node += 1
            state.nodes[node] = (edge.source.name, event_id, event, run.node)
            start_ts, start_id = (timestamp, event_id) if is_start else (run.start_ts, run.start_id)
            result.append(Run(edge.target.index, node, start_ts, start_id))
            final = self._final_after_proceed(ctx, edge.target, event)
            if final is not None:
                result.append(Run(final.index, node, start_ts, start_id))
        if is_start:
            result.append(run)  # the start state always stays, ready for the next first event
        return result

    # -- matches and the skip strategy (Flink's processMatchesAccordingToSkipStrategy)

    def _emit(self, state: NFAState, potential: list[Run], partial: list[Run]) -> list[dict[str, list]]:
        state.completed.extend(potential)
        state.completed.sort(key=_order)
        skip = self.skip_strategy
        emitted = []
        while state.completed:
            earliest = state.completed[0]
            # A skip strategy may discard a match that started earlier; wait until none can still complete.
            if skip.is_skip_strategy and partial and _order(earliest) > _order(partial[0]):
                break
            state.completed.pop(0)
            pruning = skip.pruning_id(_event_ids(state, earliest.node))
            if pruning is not None:
                partial[:] = [r for r in partial if r.start_id is None or not skip.should_prune(r.start_id, pruning)]
                state.completed[:] = [
                    r for r in state.completed if r.start_id is None or not skip.should_prune(r.start_id, pruning)
                ]
            emitted.append(_materialize(state, earliest.node))
        return emitted

    @staticmethod
    def _collect_garbage(state: NFAState) -> None:
        # Mark and sweep, run once the table has doubled since the last sweep: amortised O(1) per node.
        if len(state.nodes) <= 2 * state.live_nodes_after_gc + 64:
            return
        live: set[int] = set()
        for run in (*state.partial, *state.completed):
            node = run.node
            while node is not None and node not in live:
                live.add(node)
                node = state.nodes[node][3]
        state.nodes = {n: v for n, v in state.nodes.items() if n in live}
        state.live_nodes_after_gc = len(state.nodes)
