"""Flink's CEP automaton in plain Python: a pattern compiled to states and edges, run per key.

This module runs the automaton. A pattern (``funke.cep.Pattern``; what its stages carry and
the checks: :mod:`funke.semantics.cep_pattern`) compiles, as Flink's ``NFACompiler`` does
(:mod:`funke.semantics.cep_compiler`), into states joined by three kinds of edges: TAKE (the
event joins the match), IGNORE (the event is skipped, the match stays where it is) and
PROCEED (an epsilon move to the next state, checked against the same event). Running it
follows Flink's ``NFA``: every
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

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from funke.semantics.cep_compiler import Action, Kind, State, Transition, compile_states
from funke.semantics.cep_conditions import (
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
from funke.semantics.cep_pattern import (
    AfterMatchSkipStrategy,
    Consuming,
    EventId,
    MalformedPatternError,
    PatternLike,
    Quantifier,
    SkipStrategyError,
    validate,
    window_of,
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
        return cls(compile_states(pattern), window_of(pattern), pattern.skip_strategy, clock)

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
