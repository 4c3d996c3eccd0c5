"""A CEP pattern compiled to automaton states and edges, as Flink's ``NFACompiler`` does.

The automaton is states (:class:`State`) joined by three kinds of edges (:class:`Transition`):
TAKE (the event joins the match), IGNORE (the event is skipped, the match stays where it is)
and PROCEED (an epsilon move to the next state, checked against the same event).
:func:`compile_states` walks a pattern (:class:`~funke.semantics.cep_pattern.PatternLike`)
from its last stage back and returns the states; :class:`funke.semantics.cep.NFA` runs them.
"""

from __future__ import annotations

import enum

from funke.semantics.cep_conditions import TRUE, AndCondition, Condition, NotCondition
from funke.semantics.cep_pattern import Consuming, PatternLike, window_of

__all__ = ["FINAL_STATE_NAME", "Action", "Kind", "State", "Transition", "compile_states"]


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


def compile_states(pattern: PatternLike) -> list[State]:
    """The automaton's states for ``pattern`` (validated by the caller), the start state among them."""
    compiler = _Compiler(pattern)
    compiler.compile()
    return compiler.states
