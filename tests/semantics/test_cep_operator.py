"""CepOperator (Flink's CEP operator as a keyed process function), driven without Spark.

Elements are buffered until the watermark passes them, then matched in timestamp order (ties
in arrival order); late elements go to their side output or are counted; partial matches time
out when time reaches first event + within; processing time matches in arrival order. Each
expectation is derived by hand from Flink's CepOperator.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funke as fk
from funke.cep import CEP, Pattern, PatternProcessFunction, TimedOutPartialMatchHandler
from funke.errors import PlanError
from funke.savepoints.general import encode_value
from funke.semantics.cep import NFA
from funke.semantics.cep_operator import CepOperator, PatternFlatSelect, PatternSelect
from funke.semantics.clock import ManualClock
from funke.semantics.functions import OutputTag
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.time import MAX_WATERMARK

LATE = OutputTag("late")
TIMED_OUT = OutputTag("timed-out")


def kind(*kinds):
    return lambda e: e[0] in kinds


class Labels(PatternProcessFunction, TimedOutPartialMatchHandler):
    """A match as (key, labels, match timestamp); a timed-out one likewise, to ``TIMED_OUT``."""

    def process_match(self, match, ctx):
        yield (ctx.get_current_key(), _labels(match), ctx.timestamp())

    def process_timed_out_match(self, match, ctx):
        ctx.output(TIMED_OUT, (ctx.get_current_key(), _labels(match), ctx.timestamp()))


def _labels(match):
    return " ".join(e for events in match.values() for e in events)


def operator(pattern, *, late=None, processing_time=False, clock=None, function=None, comparator=None):
    fn = CepOperator(pattern, function or Labels(), late_tag=late, processing_time=processing_time, comparator=comparator)
    return KeyedProcessOperator(fn, clock=clock)


def out(records):
    return [(r.tag.name if r.tag else "main", r.value) for r in records]


A_THEN_B = Pattern.begin("a").where(kind("a")).next("b").where(kind("b"))
A_B_LOOP_C = Pattern.begin("a").where(kind("a")).followed_by("b").where(kind("b")).one_or_more().followed_by("c").where(kind("c"))


def test_elements_wait_for_the_watermark_and_are_matched_in_timestamp_order():
    op = operator(A_THEN_B)
    # arrival: b1 @3, a1 @2, x @1; in time: x a1 b1 -> a1 b1 (strict: nothing between a1 and b1)
    assert op.process_element("k", "b1", 3) == []
    assert op.process_element("k", "a1", 2) == []
    assert op.process_element("k", "x", 1) == []
    assert out(op.advance_watermark(2)) == []  # x, a1 fed; b1 waits
    assert out(op.advance_watermark(3)) == [("main", ("k", "a1 b1", 3))]
    # in arrival order the answer would be none: b1 first, then a1 followed by x breaks strictness


def test_equal_timestamps_go_in_arrival_order():
    op = operator(A_THEN_B)
    for e in ("a1", "b1", "a2", "b2"):  # all at 5
        op.process_element("k", e, 5)
    assert out(op.advance_watermark(5)) == [("main", ("k", "a1 b1", 5)), ("main", ("k", "a2 b2", 5))]


def by_kind(a, b):
    """Flink's EventComparator as a function: "a" events before "b" events; the same kind: 0 (arrival order)."""
    return (a[0] > b[0]) - (a[0] < b[0])


class ByKindDescending:
    """A Flink-style comparator object (``compare(a, b)``): "b" events before "a" events."""

    def compare(self, a, b):
        return by_kind(b, a)


def test_a_comparator_orders_the_elements_of_one_timestamp_only_and_ties_keep_arrival_order():
    arrival = [("b0", 4), ("b1", 5), ("a2", 5), ("a1", 5)]

    def matches(comparator):
        op = operator(A_THEN_B, comparator=comparator)
        for e, t in arrival:
            op.process_element("k", e, t)
        return out(op.advance_watermark(MAX_WATERMARK))

    # arrival order: b0 | b1 a2 a1: no "a" right before a "b"
    assert matches(None) == []
    # the comparator: b0 | a2 a1 b1 (a2 and a1 compare equal: arrival order; b0 is earlier, whatever its kind)
    assert matches(by_kind) == [("main", ("k", "a1 b1", 5))]
    # an object with compare(a, b): b0 | b1 a2 a1 -> "b" first, so again none
    assert matches(ByKindDescending()) == []
    assert matches(lambda a, b: by_kind(b, a) if a[1] == b[1] else 0) == []  # a "compare" that says 0: arrival order


def test_a_comparator_in_processing_time_orders_the_elements_of_one_millisecond_on_a_timer():
    clock = ManualClock(1_000)
    op = operator(A_THEN_B.within(100), processing_time=True, clock=clock, comparator=by_kind)
    assert op.process_element("k", "b1", None) == []  # waits for the rest of its millisecond, as in Flink
    assert op.process_element("k", "a1", None) == []
    assert op.next_processing_time() == 1_000
    assert out(op.advance_processing_time()) == [("main", ("k", "a1 b1", 1_000))]  # a1 b1, not b1 a1
    clock.advance_to(1_010)
    op.process_element("k", "b2", None)
    clock.advance_to(1_011)  # (no timer fired in between: both wait)
    op.process_element("k", "a2", None)
    assert out(op.advance_processing_time()) == []  # b2 @1010, then a2 @1011: the comparator orders within a millisecond
    op.advance_processing_time(1_050)
    op.process_element("k", "b3", None)
    assert out(op.advance_processing_time()) == [("main", ("k", "a2 b3", 1_050))]
    op.process_element("k", "a4", None)
    assert out(op.advance_processing_time()) == []
    assert out(op.advance_processing_time(1_150)) == [("timed-out", ("k", "a4", 1_150))]
    assert op.snapshot()["state"] == [] and op.snapshot()["timers"] == []


def test_a_comparator_must_compare_two_events():
    env = fk.StreamEnvironment(app="cep-comparator")
    keyed = env.from_collection([("k", "a")], "k string, kind string").key_by("k")
    with pytest.raises(PlanError) as bad:
        CEP.pattern(keyed, A_THEN_B, comparator="kind")
    assert str(bad.value) == (
        "CEP.pattern(stream, pattern, comparator): a comparator must be a function compare(a, b) -> int "
        "(negative: a first, 0: arrival order, positive: b first), or an object with a compare(a, b) method; got 'kind'"
    )
    with pytest.raises(PlanError, match=r"which takes one argument: for a sort key k, pass lambda a, b: \(k\(a\) > k\(b\)\)"):
        CEP.pattern(keyed, A_THEN_B, comparator=lambda e: e["kind"])
    with pytest.raises(TypeError, match="a comparator must be a function"):
        CepOperator(A_THEN_B, Labels(), comparator=42)
    op = operator(A_THEN_B, comparator=lambda a, b: None)
    op.process_element("k", "a1", 5)
    op.process_element("k", "b1", 5)
    with pytest.raises(
        TypeError, match=r"the CEP comparator .*<lambda> returned None for \('b1', 'a1'\); it must return a number"
    ):
        op.advance_watermark(5)
    assert repr(CEP.pattern(keyed, A_THEN_B)) == f"PatternStream({A_THEN_B!r}, event time)"
    assert (
        CepOperator(A_THEN_B, Labels(), comparator=ByKindDescending())
        .describe()
        .endswith("-> Labels [event time, ties ordered by ByKindDescending.compare]")
    )


def test_late_elements_go_to_the_late_output_or_are_dropped_and_counted():
    op = operator(A_THEN_B, late=LATE)
    op.process_element("k", "a1", 10)
    op.advance_watermark(10)
    assert out(op.process_element("k", "b0", 10)) == [("late", "b0")]  # at the watermark: late
    assert out(op.process_element("k", "b1", 11)) == []
    assert out(op.advance_watermark(11)) == [("main", ("k", "a1 b1", 11))]

    dropping = operator(A_THEN_B)
    dropping.advance_watermark(10)
    assert dropping.process_element("k", "a0", 9) == [] and dropping.process_element("k", "a1", 10) == []
    assert dropping.num_late_records_dropped == 2


def test_a_partial_match_times_out_at_first_event_plus_within_with_its_events():
    op = operator(A_B_LOOP_C.within(100))
    for e, t in (("a1", 10), ("b1", 20), ("b2", 30)):
        op.process_element("k", e, t)
    assert out(op.advance_watermark(50)) == []
    # a timer at 10 + 100: the watermark reaching 109 times out nothing, 110 both partial matches.
    # Relaxed contiguity: b1 is taken, not skipped (so no "a1" alone, no "a1 b2"); b2 extends the loop,
    # and the run that went on to wait for c skips it ("a1 b1").
    assert out(op.advance_watermark(109)) == []
    assert sorted(out(op.advance_watermark(110))) == [("timed-out", ("k", "a1 b1", 110)), ("timed-out", ("k", "a1 b1 b2", 110))]
    assert op.snapshot()["state"] == []  # nothing in flight: the key keeps nothing
    assert op.snapshot()["timers"] == []


def test_not_followed_by_at_the_end_completes_when_the_watermark_passes_the_window():
    pattern = Pattern.begin("a").where(kind("a")).not_followed_by("x").where(kind("x")).within(50)
    op = operator(pattern)
    op.process_element("k", "a1", 10)
    op.process_element("k", "a2", 20)
    op.process_element("k", "x1", 65)  # within 50 of a2 (20..69), not of a1 (10..59)
    assert out(op.advance_watermark(59)) == []
    assert out(op.advance_watermark(60)) == [("main", ("k", "a1", 60))]
    assert out(op.advance_watermark(MAX_WATERMARK)) == []  # x1 ended a2's


def test_time_goes_first_what_it_times_out_comes_out_before_what_the_element_completes():
    op = operator(Pattern.begin("a").where(kind("a")).followed_by("b").where(kind("b")).within(10))
    for e, t in (("a1", 0), ("a2", 5), ("b1", 12)):
        op.process_element("k", e, t)
    # at 12: a1's partial match timed out at 0 + 10 (Flink's advanceTime), then b1 completes a2's
    assert out(op.advance_watermark(12)) == [("timed-out", ("k", "a1", 10)), ("main", ("k", "a2 b1", 12))]


def test_state_is_plain_data_and_survives_a_snapshot_mid_match():
    pattern = Pattern.begin("a").where(kind("a")).followed_by("b").where(kind("b")).within(1_000)
    op = operator(pattern, function=PatternSelect(lambda m: _labels(m)))
    op.process_element("k", "a1", 10)
    op.process_element("k", "b0", 30)  # buffered, not yet fed
    op.advance_watermark(20)
    snap = op.snapshot()
    assert {row["state"] for row in snap["state"]} == {"user:partial_matches", "user:elements"}
    assert all("$pickle" not in encode_value(row["value"]) for row in snap["state"])  # readable in a savepoint
    again = operator(pattern, function=PatternSelect(lambda m: _labels(m)))
    again.restore(snap)
    assert out(again.advance_watermark(30)) == [("main", "a1 b0")]


def test_select_and_flat_select_with_their_timeout_functions():
    pattern = Pattern.begin("a").where(kind("a")).followed_by("b").where(kind("b")).within(10)
    select = PatternSelect(lambda m: m["a"][0] + m["b"][0], TIMED_OUT, lambda m, t: (m["a"][0], t))
    op = operator(pattern, function=select)
    for e, t in (("a1", 1), ("b1", 5), ("a2", 6)):
        op.process_element("k", e, t)
    assert out(op.advance_watermark(MAX_WATERMARK)) == [("main", "a1b1"), ("timed-out", ("a2", 16))]
    assert repr(select).startswith("select('timed-out', test_select_and_flat_select_with_their_timeout_functions.<locals>")

    flat = PatternFlatSelect(lambda m: [m["a"][0]] * 2, TIMED_OUT, lambda m, t: iter(()))
    op = operator(pattern, function=flat)
    for e, t in (("a1", 1), ("b1", 5), ("a2", 6)):
        op.process_element("k", e, t)
    assert out(op.advance_watermark(MAX_WATERMARK)) == [("main", "a1"), ("main", "a1")]


def test_processing_time_matches_in_arrival_order_and_times_out_on_a_timer():
    clock = ManualClock(1_000)
    pattern = Pattern.begin("a").where(kind("a")).next("b").where(kind("b")).within(100)
    op = operator(pattern, processing_time=True, clock=clock)
    assert op.process_element("k", "b1", 1) == []  # event timestamps play no part
    assert out(op.process_element("k", "a1", 999)) == []
    assert out(op.process_element("k", "b2", 5)) == [("main", ("k", "a1 b2", 1_000))]
    op.advance_processing_time(1_050)
    op.process_element("k", "a2", None)
    assert out(op.advance_processing_time(1_149)) == []
    assert out(op.advance_processing_time(1_150)) == [("timed-out", ("k", "a2", 1_150))]


def test_explain_line_names_the_pattern_the_function_and_the_time():
    fn = CepOperator(A_THEN_B, Labels(), late_tag=LATE)
    assert fn.describe() == (
        "Pattern.begin('a').where(kind.<locals>.<lambda>).next('b').where(kind.<locals>.<lambda>) -> Labels [event time, late data -> 'late']"
    )
    assert "processing time" in CepOperator(A_THEN_B, Labels(), processing_time=True).describe()


# -- the operator against the automaton run by hand ---------------------------------------------------

PATTERNS = {
    "loop": A_B_LOOP_C.within(40),
    "strict": Pattern.begin("a").where(kind("a")).next("b").where(kind("b", "c")).times(2).within(30),
    "not": Pattern.begin("a").where(kind("a")).not_followed_by("c").where(kind("c")).within(25),
}


def reference(pattern, events, tie_rank=lambda e: 0):
    """Per key, the events in (timestamp, tie_rank, arrival) order through a fresh automaton, then time to +infinity."""
    nfa = NFA.compile(pattern)
    found = []
    for key in sorted({k for k, _, _ in events}):
        state = nfa.initial_state()
        mine = [(t, i, e) for t, _, i, e in sorted((t, tie_rank(e), i, e) for i, (k, e, t) in enumerate(events) if k == key)]
        outs = [nfa.process(state, e, t) for t, _, e in mine] + [nfa.advance_time(state, MAX_WATERMARK)]
        for o in outs:
            found += [("main", (key, _labels(m))) for m in o.matches]
            found += [("timed-out", (key, _labels(m), at)) for m, at in o.timed_out]
    return sorted(found)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), name=st.sampled_from(sorted(PATTERNS)), compared=st.booleans())
def test_the_operator_equals_the_automaton_in_timestamp_order(seed, name, compared):
    """With a comparator (later kinds first), events of one timestamp go in its order, ties in arrival order."""
    rnd = random.Random(seed)
    events, t, watermark = [], 0, -1
    op = operator(PATTERNS[name], comparator=ByKindDescending() if compared else None)
    got = []
    for i in range(40):
        t += rnd.randrange(0, 6)
        k, e, ts = rnd.choice("xy"), f"{rnd.choice('abcd')}{i}", max(0, t - rnd.randrange(0, 8))
        if ts > watermark:  # (late ones are tested above)
            events.append((k, e, ts))
            got += op.process_element(k, e, ts)
        if rnd.random() < 0.3:
            watermark = max(watermark, t - 8)
            got += op.advance_watermark(watermark)
    got += op.advance_watermark(MAX_WATERMARK)
    plain = [(tag, v[:2]) if tag == "main" else (tag, v) for tag, v in out(got)]
    assert sorted(plain) == reference(PATTERNS[name], events, (lambda e: -ord(e[0])) if compared else (lambda e: 0))


def test_a_used_operator_is_freed_by_reference_counting_not_left_to_the_cycle_collector():
    """On Spark a bucket's operator, with all its state, is dropped after every micro-batch; one in a
    reference cycle waits for Python's cycle collector, which then walks all of it (PySpark runs a full
    collection after each task: about a third of a CEP bench worker's time while the timer service's key
    lookup went through the operator)."""
    import gc
    import weakref

    fn = CepOperator(A_B_LOOP_C.within(fk.seconds(5)), Labels(), late_tag=LATE)
    gc.disable()
    try:
        op = KeyedProcessOperator(fn)
        for i, e in enumerate(["a", "b", "x", "b", "c", "a"]):
            op.process_element(f"k{i % 2}", (e, i), 1_000 * (i + 1))
        op.advance_watermark(3_500)  # timers fired, partial matches and buffered elements left in state
        assert op.snapshot()["state"] and op.snapshot()["timers"]
        freed = weakref.ref(op)
        del op
        assert freed() is None
    finally:
        gc.enable()
