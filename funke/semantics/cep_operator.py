"""Flink's ``CepOperator`` as a keyed process function: a pattern run per key on the general path.

:class:`CepOperator` is a :class:`~funke.semantics.functions.KeyedProcessFunction`, so it runs
wherever one runs (``KeyedProcessOperator`` here, the general path on Spark) with its state in
keyed state, in checkpoints and savepoints like any other. What it does is Flink's:

* **Event time.** An element newer than the watermark is buffered (MapState ``elements``:
  timestamp -> elements in arrival order) and an event-time timer is set at its timestamp.
  When the watermark passes, the buffered elements up to it go through the automaton in
  timestamp order (equal timestamps in arrival order, or in the ``comparator``'s order when
  there is one: Flink's ``EventComparator``), then the automaton's time moves to the
  watermark, which times out partial matches older than ``within``. An element at or below
  the watermark on arrival is late: it goes to the late-data side output if one is set, else
  it is dropped and counted (:attr:`CepOperator.num_late_records_dropped`).
* **Processing time.** Elements go through the automaton as they come, stamped with the
  processing time. With a ``comparator`` they are buffered instead, under the processing
  time they arrived at, with a processing-time timer at that time; when it fires, the
  buffered elements go through in time order, those of one millisecond in the comparator's
  order (as Flink's operator does).
* The automaton's per-key state (partial matches and the events they hold) is ValueState
  ``partial_matches`` in plain data (lists, dicts and the events themselves), so a savepoint
  shows it as readable JSON; a key with nothing in flight keeps nothing.
* Partial matches under ``within`` time out when time reaches their first event plus
  ``within``: a timer is set for the earliest such moment (Flink re-arms one at every
  watermark instead; the moments the matches come out are the same). In processing time
  that timer is a processing-time timer, so a partial match times out without waiting for
  the key's next element, which Flink's operator does wait for.

Matches reach a :class:`PatternProcessFunction` (``process_match(match, ctx)`` yields rows);
timed-out partial matches reach its ``process_timed_out_match(match, ctx)`` when it is also
a :class:`TimedOutPartialMatchHandler` (which emits with ``ctx.output(tag, row)``), and are
dropped otherwise. A match is ``{pattern name: [events]}``.

>>> from funke.cep import Pattern
>>> from funke.semantics.keyed_process import KeyedProcessOperator
>>> class Pairs(PatternProcessFunction):
...     def process_match(self, match, ctx):
...         yield (ctx.get_current_key(), match["a"][0], match["b"][0], ctx.timestamp())
>>> pattern = Pattern.begin("a").where(lambda e: e < 10).next("b").where(lambda e: e >= 10)
>>> op = KeyedProcessOperator(CepOperator(pattern, Pairs()))
>>> [op.process_element("k", e, t) for e, t in [(1, 2_000), (20, 3_000), (5, 1_000)]]
[[], [], []]
>>> [r.value for r in op.advance_watermark(2_500)]   # 5 @1000, 1 @2000: no match yet
[]
>>> [r.value for r in op.advance_watermark(3_000)]   # then 20 @3000
[('k', 1, 20, 3000)]
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from funke.semantics.cep import NFA, CepOutput, NFAState, Run
from funke.semantics.cep_pattern import PatternLike
from funke.semantics.functions import KeyedProcessFunction, OutputTag, collect_rows
from funke.semantics.state import MapStateDescriptor, ValueStateDescriptor
from funke.semantics.timers import TimeDomain

__all__ = [
    "CepOperator",
    "PatternFlatSelect",
    "PatternProcessContext",
    "PatternProcessFunction",
    "PatternSelect",
    "TimedOutPartialMatchHandler",
    "as_comparator",
    "export_nfa_state",
    "import_nfa_state",
]

Match = dict[str, list[Any]]


class PatternProcessContext:
    """The ``ctx`` of :meth:`PatternProcessFunction.process_match` (Flink's ``PatternProcessFunction.Context``).

    ``timestamp()`` is the match's time: the timestamp of the event that completed it, or of
    the watermark that completed it (a pattern ending in ``not_followed_by``); for a timed-out
    partial match, its time-out (first event + ``within``). ``get_current_key()`` is funke's
    addition (Flink's context has no key).
    """

    __slots__ = ("_ctx", "_timestamp")

    def __init__(self, ctx: Any, timestamp: int) -> None:
        self._ctx, self._timestamp = ctx, timestamp

    def timestamp(self) -> int:
        return self._timestamp

    def current_processing_time(self) -> int:
        return self._ctx.timer_service().current_processing_time()

    def get_current_key(self) -> Any:
        return self._ctx.get_current_key()

    def output(self, tag: OutputTag, value: Any) -> None:
        """Send ``value`` to the side output ``tag`` (read it with ``get_side_output(tag)``)."""
        self._ctx.output(tag, value)


class PatternProcessFunction:
    """Called once per match (Flink's ``PatternProcessFunction``): ``process_match`` yields output rows.

    Like funke's other process functions it produces rows by ``yield`` (or by returning a
    list); side outputs go through ``ctx.output(tag, row)``. ``open()`` runs when the operator
    starts (on Spark: each micro-batch, as a KeyedProcessFunction's), ``close()`` when it ends.
    """

    def open(self) -> None:
        return None

    def process_match(self, match: Match, ctx: PatternProcessContext) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_match(match, ctx) is not implemented")

    def close(self) -> None:
        return None


class TimedOutPartialMatchHandler:
    """Mix into a :class:`PatternProcessFunction` to receive partial matches that timed out (``within``).

    ``process_timed_out_match(match, ctx)`` emits with ``ctx.output(tag, row)``: a timed-out
    match goes to a side output, never to the main one (as in Flink).
    """

    def process_timed_out_match(self, match: Match, ctx: PatternProcessContext) -> None:
        raise NotImplementedError(f"{type(self).__name__}.process_timed_out_match(match, ctx) is not implemented")


def user_function_name(fn: Any) -> str:
    """A stable name for a user function (a plan uid is made of it): never an object's address."""
    qualname = getattr(fn, "__qualname__", None)
    if qualname is not None:  # a function, a method, a class
        return qualname
    return repr(fn) if type(fn).__repr__ is not object.__repr__ else type(fn).__qualname__


class PatternSelect(PatternProcessFunction, TimedOutPartialMatchHandler):
    """``PatternStream.select(fn)`` (and ``select(timeout_tag, timeout_fn, fn)``): one row per match.

    ``fn(match) -> row``; ``timeout_fn(match, timeout_timestamp) -> row``, sent to ``timeout_tag``.
    Either may be a Flink-style object with ``select`` / ``timeout`` methods.
    """

    flat = False
    _METHODS = ("select", "timeout")

    def __init__(self, fn: Any, timeout_tag: OutputTag | None = None, timeout_fn: Any = None) -> None:
        self.fn = _callable(fn, self._METHODS[0])
        self.timeout_tag = timeout_tag
        self.timeout_fn = None if timeout_fn is None else _callable(timeout_fn, self._METHODS[1])
        self._names = (user_function_name(fn), None if timeout_fn is None else user_function_name(timeout_fn))

    def __repr__(self) -> str:
        call = "flat_select" if self.flat else "select"
        if self.timeout_tag is None:
            return f"{call}({self._names[0]})"
        return f"{call}({self.timeout_tag.name!r}, {self._names[1]}, {self._names[0]})"

    def process_match(self, match: Match, ctx: PatternProcessContext) -> Iterator[Any]:
        yield from self._rows(self.fn(match), "select(fn)")

    def process_timed_out_match(self, match: Match, ctx: PatternProcessContext) -> None:
        if self.timeout_fn is None or self.timeout_tag is None:
            return
        for row in self._rows(self.timeout_fn(match, ctx.timestamp()), "select(timeout_tag, timeout_fn, fn): timeout_fn"):
            ctx.output(self.timeout_tag, row)

    def _rows(self, result: Any, where: str) -> Iterator[Any]:
        if result is None:
            raise TypeError(f"{where} returned None; return one row per match (flat_select emits none or several)")
        yield result


class PatternFlatSelect(PatternSelect):
    """``PatternStream.flat_select(fn)``: ``fn(match)`` (and ``timeout_fn(match, timeout_timestamp)``)
    yield rows, or return a list of rows or None."""

    flat = True
    _METHODS = ("flat_select", "timeout")

    def _rows(self, result: Any, where: str) -> Iterator[Any]:
        return collect_rows(result, where)


def _callable(fn: Any, method: str) -> Callable[..., Any]:
    bound = getattr(fn, method, None)
    if callable(bound) and not isinstance(fn, type):
        return bound
    if callable(fn):
        return fn
    raise TypeError(f"expected a function or an object with a {method}() method, got {fn!r}")


class _TimerClock:
    """The NFA's clock (``ctx.current_processing_time()`` of iterative conditions): the operator's."""

    __slots__ = ("timers",)

    def __init__(self) -> None:
        self.timers: Any = None

    def now_ms(self) -> int:
        if self.timers is None:
            raise RuntimeError("the CEP automaton's processing time is known only while an element or timer is processed")
        return self.timers.current_processing_time()


def as_comparator(comparator: Any) -> Callable[[Any, Any], Any]:
    """Flink's ``EventComparator`` in Python: ``compare(a, b)`` (negative: ``a`` goes first, 0: keep
    their arrival order, positive: ``b`` first), or an object with such a ``compare`` method.

    >>> as_comparator(lambda a, b: a - b)(1, 2)
    -1
    >>> as_comparator(len)
    Traceback (most recent call last):
    ...
    TypeError: a comparator must be a function compare(a, b) -> int (negative: a first, 0: arrival order, positive: b first), or an object with a compare(a, b) method; got <built-in function len>, which takes one argument: for a sort key k, pass lambda a, b: (k(a) > k(b)) - (k(a) < k(b))
    """
    bound = getattr(comparator, "compare", None)
    fn = bound if callable(bound) and not isinstance(comparator, type) else comparator
    what = (
        "a comparator must be a function compare(a, b) -> int (negative: a first, 0: arrival order, positive: b "
        "first), or an object with a compare(a, b) method"
    )
    if not callable(fn) or isinstance(fn, type):
        raise TypeError(f"{what}; got {comparator!r}")
    if _takes_one_argument(fn):
        raise TypeError(
            f"{what}; got {comparator!r}, which takes one argument: for a sort key k, "
            "pass lambda a, b: (k(a) > k(b)) - (k(a) < k(b))"
        )
    return fn


def _takes_one_argument(fn: Callable[..., Any]) -> bool:
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        return True
    except ValueError:  # no signature to read (some builtins): let it be
        return False
    return False


def _sorted_by(comparator: Callable[[Any, Any], Any] | None, elements: list[Any]) -> list[Any]:
    """``elements`` (one timestamp's, in arrival order) in the comparator's order; a stable sort, as
    Java's ``Stream.sorted``, so elements it calls equal keep their arrival order."""
    if comparator is None or len(elements) < 2:
        return elements

    def compare(a: Any, b: Any) -> Any:
        result = comparator(a, b)
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            raise TypeError(
                f"the CEP comparator {user_function_name(comparator)} returned {result!r} for ({a!r}, {b!r}); "
                "it must return a number: negative (a first), 0 (arrival order) or positive (b first)"
            )
        return result

    return sorted(elements, key=functools.cmp_to_key(compare))


#: The operator's keyed state (Flink's CepOperator names them alike).
PARTIAL_MATCHES, ELEMENTS = "partial_matches", "elements"


class CepOperator(KeyedProcessFunction):
    """Runs ``pattern`` per key and hands its matches to ``function`` (Flink's ``CepOperator``).

    ``processing_time``: match in arrival order, stamped with processing time, instead of in
    event-time order. ``late_tag``: where elements late on arrival go (event time).
    ``comparator``: ``compare(a, b) -> int`` orders the elements of one timestamp before the
    automaton sees them (Flink's ``EventComparator``); without one they go in arrival order.
    """

    def __init__(
        self,
        pattern: PatternLike,
        function: PatternProcessFunction,
        *,
        processing_time: bool = False,
        late_tag: OutputTag | None = None,
        comparator: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        if not isinstance(function, PatternProcessFunction):
            raise TypeError(f"a pattern's matches go to a PatternProcessFunction subclass, got {function!r}")
        if late_tag is not None and not isinstance(late_tag, OutputTag):
            raise TypeError(f"late data goes to an OutputTag, got {late_tag!r}")
        self.pattern = pattern
        self.function = function
        self.processing_time = processing_time
        self.late_tag = late_tag
        self.comparator = None if comparator is None else as_comparator(comparator)
        #: Late elements dropped (no late tag), over this instance's life (Flink's numLateRecordsDropped).
        self.num_late_records_dropped = 0
        self._clock = _TimerClock()
        self._nfa: NFA | None = NFA.compile(pattern, clock=self._clock)  # refuses a malformed pattern now

    def __getstate__(self) -> dict[str, Any]:
        # The compiled automaton is rebuilt where the operator runs, from the pattern; state handles come with open().
        state = {k: v for k, v in self.__dict__.items() if k not in ("_matches", "_elements")}
        return {**state, "_nfa": None, "_clock": _TimerClock()}

    def __repr__(self) -> str:  # (the plan's uid, and explain())
        return f"CepOperator({self.describe()})"

    def describe(self) -> str:
        """The pattern, the function, the notion of time and the late-data output, on one line."""
        time = "processing time" if self.processing_time else "event time"
        late = f", late data -> {self.late_tag.name!r}" if self.late_tag is not None and not self.processing_time else ""
        order = f", ties ordered by {user_function_name(self.comparator)}" if self.comparator is not None else ""
        return f"{self.pattern!r} -> {user_function_name(self.function)} [{time}{late}{order}]"

    @property
    def nfa(self) -> NFA:
        if self._nfa is None:
            self._nfa = NFA.compile(self.pattern, clock=self._clock)
        return self._nfa

    def open(self, ctx: Any) -> None:
        self._matches = ctx.get_state(ValueStateDescriptor(PARTIAL_MATCHES))
        self._elements = ctx.get_map_state(MapStateDescriptor(ELEMENTS, int, list))
        self.function.open()

    def close(self) -> None:
        self.function.close()

    # -- elements

    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        timers = ctx.timer_service()
        self._clock.timers = timers
        if self.processing_time:
            now = timers.current_processing_time()
            if self.comparator is not None:  # (Flink's too) wait for this millisecond's others, to sort them
                self._buffer(value, now, timers.register_processing_time_timer)
                return
            state = self._load()
            yield from self._feed(state, [value], now, ctx)
            self._store(state, timers)
            return
        timestamp = ctx.timestamp()
        if timestamp is None:
            raise ValueError(
                "a pattern in event time needs each element's timestamp: give the stream a watermark strategy "
                "with a timestamp column, or match in processing time (CEP.pattern(...).in_processing_time())"
            )
        if timestamp <= timers.current_watermark():
            if self.late_tag is not None:
                ctx.output(self.late_tag, value)
            else:
                self.num_late_records_dropped += 1
            return
        self._buffer(value, timestamp, timers.register_event_time_timer)

    def _buffer(self, value: Any, timestamp: int, register_timer: Callable[[int], None]) -> None:
        buffered = self._elements.get(timestamp)
        self._elements.put(timestamp, [value] if buffered is None else [*buffered, value])
        register_timer(timestamp)

    # -- time

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
        timers = ctx.timer_service()
        self._clock.timers = timers
        state = self._load()
        if ctx.time_domain() is TimeDomain.PROCESSING_TIME:
            now = timers.current_processing_time()
            delete_timer = timers.delete_processing_time_timer
        else:
            now = timers.current_watermark()
            delete_timer = timers.delete_event_time_timer
        # (in processing time only a comparator buffers; its elements are all due: stamped at or before now)
        buffered = self._elements.items()
        due = sorted(item for item in buffered if item[0] <= now)
        for t, elements in due:
            yield from self._feed(state, _sorted_by(self.comparator, elements), t, ctx)
            delete_timer(t)  # this run fed them: their own timers, still due, have nothing to do
        if len(due) == len(buffered):
            self._elements.clear()
        else:
            for t, _ in due:
                self._elements.remove(t)
        yield from self._emit(self.nfa.advance_time(state, now), now, ctx)
        self._store(state, timers)

    # -- matches out

    def _feed(self, state: NFAState, elements: list[Any], timestamp: int, ctx: Any) -> Iterator[Any]:
        # As Flink: time first (what it completes or times out comes out first), then the elements.
        nfa = self.nfa
        out = nfa.advance_time(state, timestamp)
        if out.matches or out.timed_out:
            yield from self._emit(out, timestamp, ctx)
        for element in elements:
            out = nfa.process(state, element, timestamp)
            if out.matches or out.timed_out:
                yield from self._emit(out, timestamp, ctx)

    def _emit(self, out: CepOutput, timestamp: int, ctx: Any) -> Iterator[Any]:
        function = self.function
        for match in out.matches:
            yield from collect_rows(
                function.process_match(match, PatternProcessContext(ctx, timestamp)),
                f"{type(function).__name__}.process_match",
            )
        if out.timed_out and isinstance(function, TimedOutPartialMatchHandler):
            for match, timed_out_at in out.timed_out:
                function.process_timed_out_match(match, PatternProcessContext(ctx, timed_out_at))

    # -- state

    def _load(self) -> NFAState:
        plain = self._matches.value()
        return self.nfa.initial_state() if plain is None else import_nfa_state(self.nfa, plain)

    def _store(self, state: NFAState, timers: Any) -> None:
        if _idle(self.nfa, state):
            self._matches.clear()
        else:
            self._matches.update(export_nfa_state(self.nfa, state))
        timeout = next_timeout(self.nfa, state)
        if timeout is None:
            return
        if self.processing_time:
            timers.register_processing_time_timer(timeout)
        else:
            timers.register_event_time_timer(timeout)


def next_timeout(nfa: NFA, state: NFAState) -> int | None:
    """When the earliest partial match times out (its first event + ``within``), or None."""
    if not nfa.window_ms:
        return None
    starts = [run.start_ts for run in state.partial if not nfa.states[run.state].start]
    return min(starts) + nfa.window_ms if starts else None


def _idle(nfa: NFA, state: NFAState) -> bool:
    """Nothing in flight: only the start states wait, as in a fresh automaton (whose state need not be kept)."""
    return not state.completed and all(nfa.states[r.state].start and r.node is None for r in state.partial)


# -- the automaton's state as plain data (savepoints show it as JSON) --------------------------------


def export_nfa_state(nfa: NFA, state: NFAState) -> dict[str, Any]:
    """``state`` as lists, dicts and the events: a run is ``[automaton state id, last event's node,
    start timestamp, [start timestamp, start event number] or None]``; ``events`` holds the taken
    events as ``[node, pattern name, timestamp, event number, event, previous node or None]``.

    >>> from funke.cep import Pattern
    >>> nfa = NFA.compile(Pattern.begin("a").where(lambda e: e == "a").followed_by("b"))
    >>> state = nfa.initial_state()
    >>> _ = nfa.process(state, "a", 5)
    >>> plain = export_nfa_state(nfa, state)
    >>> plain["partial"], plain["events"]
    ([['b', 0, 5, [5, 0]], ['a', None, -1, None]], [[0, 'a', 5, 0, 'a', None]])
    >>> export_nfa_state(nfa, import_nfa_state(nfa, plain)) == plain
    True
    """

    def run(r: Run) -> list[Any]:
        return [nfa.states[r.state].id, r.node, r.start_ts, None if r.start_id is None else list(r.start_id)]

    live: set[int] = set()  # only the events a run still holds (the automaton sweeps the rest lazily)
    for r in (*state.partial, *state.completed):
        node = r.node
        while node is not None and node not in live:
            live.add(node)
            node = state.nodes[node][3]
    return {
        "partial": [run(r) for r in state.partial],
        "completed": [run(r) for r in state.completed],
        "events": [
            [node, name, ts, seq, event, prev]
            for node, (name, (ts, seq), event, prev) in sorted(state.nodes.items())
            if node in live
        ],
        "next_node": state.next_node,
        "next_event": state.next_event,
        "time": state.time,
    }


def import_nfa_state(nfa: NFA, plain: dict[str, Any]) -> NFAState:
    """The inverse of :func:`export_nfa_state` (refuses a state id the pattern does not have)."""
    index = {s.id: s.index for s in nfa.states}

    def run(r: list[Any]) -> Run:
        state_id, node, start_ts, start_id = r
        if state_id not in index:
            raise ValueError(
                f"CEP state names automaton state {state_id!r}, which the pattern does not have "
                f"(its states: {', '.join(index)}): the pattern changed since the state was written"
            )
        return Run(index[state_id], node, start_ts, None if start_id is None else (start_id[0], start_id[1]))

    nodes = {node: (name, (ts, seq), event, prev) for node, name, ts, seq, event, prev in plain["events"]}
    return NFAState(
        partial=[run(r) for r in plain["partial"]],
        completed=[run(r) for r in plain["completed"]],
        nodes=nodes,
        next_node=plain["next_node"],
        next_event=plain["next_event"],
        time=plain["time"],
        live_nodes_after_gc=len(nodes),
    )
