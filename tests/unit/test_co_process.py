"""Connected streams' operators in pure Python: keyed co-process (state shared by both inputs, timers,
side outputs, snapshots) and the unkeyed co-functions; expected outputs derived by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from funke.semantics.clock import ManualClock
from funke.semantics.co_process import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    CoProcessOperator,
    KeyedCoProcessFunction,
    KeyedCoProcessOperator,
)
from funke.semantics.functions import KeyedProcessFunction, OutputTag
from funke.semantics.state import ValueStateDescriptor
from funke.semantics.timers import TimeDomain

LATE = OutputTag("late-payment")


class Checkout(KeyedCoProcessFunction):
    """Input 1: orders, input 2: payments; an order unpaid 5 s later goes to a side output."""

    def open(self, ctx):
        self.order = ctx.get_state(ValueStateDescriptor("order"))

    def process_element1(self, order, ctx):
        self.order.update(order)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 5_000)
        ctx.timer_service().register_processing_time_timer(60_000)

    def process_element2(self, payment, ctx):
        if self.order.value() is not None:
            yield (ctx.get_current_key(), self.order.value(), payment)
            self.order.clear()

    def on_timer(self, timestamp, ctx):
        if ctx.time_domain() is TimeDomain.PROCESSING_TIME:
            yield ("tick", ctx.get_current_key(), timestamp)
        elif self.order.value() is not None:
            ctx.output(LATE, (ctx.get_current_key(), self.order.value()))
            self.order.clear()


def values(records):
    return [(r.value, r.timestamp, r.tag.name if r.tag else None) for r in records]


def test_both_inputs_share_the_key_s_state_and_timers_fire_in_either_domain():
    op = KeyedCoProcessOperator(Checkout(), clock=ManualClock(0))
    assert op.process_element1("a", "o1", 1_000) == []
    assert op.process_element1("b", "o2", 2_000) == []
    assert values(op.process_element2("a", "p1", 1_500)) == [(("a", "o1", "p1"), 1_500, None)]
    assert op.process_element2("c", "p9", 1_600) == []  # no order for c: nothing
    assert op.advance_watermark(6_999) == []  # a's timer at 6000 fires on an empty state; b's is at 7000
    assert values(op.advance_watermark(7_000)) == [(("b", "o2"), 7_000, "late-payment")]
    # processing-time timers: one per key (a set), their main output carries no timestamp
    assert values(op.advance_processing_time(60_000)) == [
        (("tick", "a", 60_000), None, None),
        (("tick", "b", 60_000), None, None),
    ]


def test_a_snapshot_carries_state_and_timers_into_a_fresh_operator():
    op = KeyedCoProcessOperator(Checkout())
    op.process_element1("a", "o1", 1_000)
    snap = op.snapshot()
    again = KeyedCoProcessOperator(Checkout())
    again.restore(snap)
    assert values(again.process_element2("a", "p1", 2_000)) == [(("a", "o1", "p1"), 2_000, None)]
    other = KeyedCoProcessOperator(Checkout())
    other.restore(snap)
    assert values(other.advance_watermark(6_000)) == [(("a", "o1"), 6_000, "late-payment")]


def test_the_keyed_co_operator_takes_only_co_functions_and_has_no_single_input():
    with pytest.raises(TypeError, match="runs a KeyedCoProcessFunction subclass"):
        KeyedCoProcessOperator(KeyedProcessFunction())
    with pytest.raises(TypeError, match="process_element1 or process_element2"):
        KeyedCoProcessOperator(Checkout()).process_element("a", 1, 1)


class Last(KeyedCoProcessFunction):
    """Remembers the last value of either input per key; emits (key, previous, new)."""

    def open(self, ctx):
        self.last = ctx.get_state(ValueStateDescriptor("last"))

    def process_element1(self, v, ctx):
        yield (ctx.get_current_key(), self.last.value(), v)
        self.last.update(v)

    def process_element2(self, v, ctx):
        yield (ctx.get_current_key(), self.last.value(), -v)
        self.last.update(-v)


@given(st.lists(st.tuples(st.sampled_from([1, 2]), st.sampled_from("abc"), st.integers(1, 9)), max_size=30))
def test_keyed_state_is_one_per_key_whichever_input_writes_it(elements):
    op = KeyedCoProcessOperator(Last())
    got, expected, last = [], [], {}
    for side, key, v in elements:
        got += [r.value for r in (op.process_element1 if side == 1 else op.process_element2)(key, v, 0)]
        new = v if side == 1 else -v
        expected.append((key, last.get(key), new))
        last[key] = new
    assert got == expected


class Upper(CoMapFunction):
    def map1(self, v):
        return v.upper()

    def map2(self, v):
        return -v


class Split(CoFlatMapFunction):
    def flat_map1(self, v):
        yield from v.split()

    def flat_map2(self, v):
        return [v, v]


class Route(CoProcessFunction):
    def process_element1(self, v, ctx):
        yield (v, ctx.timestamp(), ctx.current_watermark())

    def process_element2(self, v, ctx):
        ctx.output(LATE, v)


def test_unkeyed_co_functions_map_each_input_with_its_own_method():
    m = CoProcessOperator(Upper())
    assert [r.value for r in m.process_element1(None, "ab", 1) + m.process_element2(None, 3, 2)] == ["AB", -3]
    f = CoProcessOperator(Split())
    assert [r.value for r in f.process_element1(None, "x y", 1) + f.process_element2(None, 7, 2)] == ["x", "y", 7, 7]
    p = CoProcessOperator(Route())
    p.advance_watermark(100)
    assert values(p.process_element1(None, "e", 150)) == [(("e", 150, 100), 150, None)]
    assert values(p.process_element2(None, "s", 160)) == [("s", 160, "late-payment")]
    fresh = CoProcessOperator(Route())
    fresh.restore(p.snapshot())
    assert fresh.current_watermark == 100


class Timed(CoProcessFunction):
    def process_element1(self, v, ctx):
        ctx.timer_service().register_event_time_timer(5)


def test_timers_on_unkeyed_connected_streams_are_refused_as_in_flink():
    with pytest.raises(TypeError, match=r"timers need a keyed stream.*key_by\(key1, key2\)"):
        CoProcessOperator(Timed()).process_element1(None, 1, 1)
