"""Flink's broadcast state pattern in pure Python: a rule applies to every later element, the element
side reads it only, apply_to_keyed_state visits every key, and snapshots keep all of it."""

from __future__ import annotations

import pytest

from funke.semantics.broadcast import (
    BroadcastProcessFunction,
    BroadcastProcessOperator,
    KeyedBroadcastProcessFunction,
    KeyedBroadcastProcessOperator,
)
from funke.semantics.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor

LIMITS = MapStateDescriptor("limits", str, float)
SEEN = ValueStateDescriptor("seen", int)


class OverLimit(KeyedBroadcastProcessFunction):
    def open(self, ctx):
        self.seen = ctx.get_state(SEEN)

    def process_broadcast_element(self, rule, ctx):
        limits = ctx.get_broadcast_state(LIMITS)
        if rule is None:
            limits.clear()
            return
        limits.put(rule[0], rule[1])
        if rule[0] == "reset":
            ctx.apply_to_keyed_state(SEEN, lambda key, state: state.update(0))

    def process_element(self, amount, ctx):
        self.seen.update((self.seen.value() or 0) + 1)
        limit = ctx.get_broadcast_state(LIMITS).get("limit")
        if limit is not None and amount > limit:
            yield (ctx.get_current_key(), amount, self.seen.value())
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)

    def on_timer(self, timestamp, ctx):
        yield ("timer", ctx.get_current_key(), timestamp, sorted(ctx.get_broadcast_state(LIMITS).keys()))


def out(records):
    return [r.value for r in records]


def test_a_rule_applies_to_every_element_after_it_and_changes_apply_from_then_on():
    op = KeyedBroadcastProcessOperator(OverLimit(), (LIMITS,))
    assert out(op.process_element("a", 50.0, 1)) == []  # no rule yet
    op.process_broadcast_element(("limit", 10.0), 2)
    assert out(op.process_element("a", 15.0, 3)) == [("a", 15.0, 2)]
    assert out(op.process_element("b", 5.0, 4)) == []
    op.process_broadcast_element(("limit", 4.0), 5)
    assert out(op.process_element("b", 5.0, 6)) == [("b", 5.0, 2)]
    op.process_broadcast_element(None, 7)  # rules cleared
    assert out(op.process_element("b", 99.0, 8)) == []


def test_apply_to_keyed_state_visits_every_key_of_the_state():
    op = KeyedBroadcastProcessOperator(OverLimit(), (LIMITS,))
    op.process_broadcast_element(("limit", 0.0), 0)
    for key in "abc":
        op.process_element(key, 1.0, 1)
    op.process_element("a", 1.0, 2)
    op.process_broadcast_element(("reset", 0.0), 3)  # every key's count back to 0
    assert out(op.process_element("a", 1.0, 4) + op.process_element("c", 1.0, 5)) == [("a", 1.0, 1), ("c", 1.0, 1)]


class Sneaky(KeyedBroadcastProcessFunction):
    def process_broadcast_element(self, rule, ctx):
        ctx.get_broadcast_state(LIMITS).put("limit", rule)

    def process_element(self, value, ctx):
        ctx.get_broadcast_state(LIMITS).put("limit", value)


def test_the_element_side_cannot_write_broadcast_state_nor_name_an_undeclared_one():
    op = KeyedBroadcastProcessOperator(Sneaky(), (LIMITS,))
    op.process_broadcast_element(1.0, 0)
    with pytest.raises(TypeError, match="broadcast state 'limits' is read-only in process_element"):
        op.process_element("a", 2.0, 1)

    class Other(KeyedBroadcastProcessFunction):
        def process_broadcast_element(self, rule, ctx):
            ctx.get_broadcast_state(MapStateDescriptor("rules", str, str))

    with pytest.raises(ValueError, match=r"no broadcast state 'rules': the broadcast stream declares 'limits'"):
        KeyedBroadcastProcessOperator(Other(), (LIMITS,)).process_broadcast_element(1, 0)
    with pytest.raises(TypeError, match="broadcast state is map state"):
        KeyedBroadcastProcessOperator(Sneaky(), (ListStateDescriptor("l"),))


def test_timers_see_the_broadcast_state_and_a_snapshot_keeps_rules_state_and_timers():
    op = KeyedBroadcastProcessOperator(OverLimit(), (LIMITS,))
    op.process_broadcast_element(("limit", 10.0), 0)
    op.process_element("a", 20.0, 100)
    again = KeyedBroadcastProcessOperator(OverLimit(), (LIMITS,))
    again.restore(op.snapshot())
    assert out(again.process_element("a", 30.0, 101)) == [("a", 30.0, 2)]  # the rule and the count came along
    assert out(again.advance_watermark(111)) == [("timer", "a", 110, ["limit"]), ("timer", "a", 111, ["limit"])]


class Unkeyed(BroadcastProcessFunction):
    def process_broadcast_element(self, rule, ctx):
        ctx.get_broadcast_state(LIMITS).put("limit", rule)

    def process_element(self, amount, ctx):
        limit = ctx.get_broadcast_state(LIMITS).get("limit")
        if limit is not None and amount > limit:
            yield (amount, ctx.timestamp())


def test_the_unkeyed_form_and_the_two_input_driving_names():
    op = BroadcastProcessOperator(Unkeyed(), (LIMITS,))
    assert out(op.process_element1(None, 5.0, 1)) == []
    op.process_element2(None, 3.0, 2)  # the broadcast input
    assert out(op.process_element1(None, 5.0, 3)) == [(5.0, 3)]
    again = BroadcastProcessOperator(Unkeyed(), (LIMITS,))
    again.restore(op.snapshot())
    assert out(again.process_element(None, 4.0, 4)) == [(4.0, 4)]
