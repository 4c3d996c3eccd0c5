"""KeyedProcessOperator: timers in both domains, state of every kind, TTL, side outputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from funke.semantics.clock import ManualClock
from funke.semantics.co_process import KeyedCoProcessFunction, KeyedCoProcessOperator
from funke.semantics.functions import CountAggregate, KeyedProcessFunction, OutputTag
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from funke.semantics.timers import TimeDomain

ALERTS = OutputTag("alerts")


def plain(outputs):
    return [(r.tag.name if r.tag else "main", r.value, r.timestamp) for r in outputs]


class CountThenReport(KeyedProcessFunction):
    """Counts per key; an event-time timer 10 ms after each element reports the count."""

    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", int))
        self.opened = getattr(self, "opened", 0) + 1

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        if value == "!":
            ctx.output(ALERTS, (ctx.get_current_key(), "bang"))
        yield ("seen", ctx.get_current_key(), value)

    def on_timer(self, timestamp, ctx):
        yield ("report", ctx.get_current_key(), self.count.value(), ctx.time_domain())


def test_event_time_timers_fire_in_order_across_keys_with_timer_timestamps():
    fn = CountThenReport()
    op = KeyedProcessOperator(fn)
    assert plain(op.process_element("a", "x", 5)) == [("main", ("seen", "a", "x"), 5)]
    op.process_element("b", "y", 1)
    op.process_element("a", "z", 5)  # same timer (a, 15) again: one timer
    assert plain(op.advance_watermark(14)) == [("main", ("report", "b", 1, TimeDomain.EVENT_TIME), 11)]
    assert plain(op.advance_watermark(100)) == [("main", ("report", "a", 2, TimeDomain.EVENT_TIME), 15)]
    assert plain(op.advance_watermark(200)) == []
    assert fn.opened == 1


def test_side_outputs_carry_the_element_timestamp_and_keep_emission_order():
    op = KeyedProcessOperator(CountThenReport())
    assert plain(op.process_element("a", "!", 7)) == [("alerts", ("a", "bang"), 7), ("main", ("seen", "a", "!"), 7)]


class Heartbeat(KeyedProcessFunction):
    """Processing-time timeout: warns if no element came for 100 ms of processing time."""

    def open(self, ctx):
        self.deadline = ctx.get_state(ValueStateDescriptor("deadline"))

    def process_element(self, value, ctx):
        timers = ctx.timer_service()
        if self.deadline.value() is not None:
            timers.delete_processing_time_timer(self.deadline.value())
        deadline = timers.current_processing_time() + 100
        timers.register_processing_time_timer(deadline)
        self.deadline.update(deadline)
        return None

    def on_timer(self, timestamp, ctx):
        ctx.output(ALERTS, ("timeout", ctx.get_current_key()))
        self.deadline.clear()
        return [("silent", ctx.get_current_key(), timestamp, ctx.time_domain())]


def test_processing_time_timers_are_driven_by_the_clock_and_can_be_deleted():
    clock = ManualClock(0)
    op = KeyedProcessOperator(Heartbeat(), clock=clock)
    op.process_element("a", 1)
    clock.advance_to(50)
    op.process_element("a", 2)  # moves a's deadline from 100 to 150
    assert op.advance_processing_time(120) == []
    assert plain(op.advance_processing_time(150)) == [
        ("alerts", ("timeout", "a"), 150),
        ("main", ("silent", "a", 150, TimeDomain.PROCESSING_TIME), None),  # no timestamp, as in Flink
    ]
    assert op.state_backend.is_empty()


def test_every_state_kind_through_the_context():
    class Everything(KeyedProcessFunction):
        def process_element(self, value, ctx):
            items = ctx.get_list_state(ListStateDescriptor("items"))
            by_value = ctx.get_map_state(MapStateDescriptor("by_value"))
            total = ctx.get_reducing_state(ReducingStateDescriptor("total", lambda a, b: a + b))
            n = ctx.get_aggregating_state(AggregatingStateDescriptor("n", CountAggregate()))
            items.add(value)
            by_value.put(value, (by_value.get(value) or 0) + 1)
            total.add(value)
            n.add(value)
            yield (items.get(), dict(by_value.items()), total.get(), n.get())

    op = KeyedProcessOperator(Everything())
    op.process_element("a", 2)
    op.process_element("b", 100)
    assert [r.value for r in op.process_element("a", 2)] == [([2, 2], {2: 2}, 4, 2)]
    assert [r.value for r in op.process_element("b", 1)] == [([100, 1], {100: 1, 1: 1}, 101, 2)]
    with pytest.raises(TypeError, match="get_list_state\\(\\) takes a list state descriptor"):
        op_ctx_misuse = KeyedProcessOperator(_MisusesListAccessor())
        op_ctx_misuse.process_element("a", 1)


class _MisusesListAccessor(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.get_list_state(ValueStateDescriptor("oops"))


def test_state_ttl_follows_the_operator_clock():
    class Previous(KeyedProcessFunction):
        def open(self, ctx):
            descriptor = ValueStateDescriptor("last")
            descriptor.enable_time_to_live(StateTtlConfig.new_builder(1_000).build())
            self.last = ctx.get_state(descriptor)

        def process_element(self, value, ctx):
            yield self.last.value()
            self.last.update(value)

    clock = ManualClock(0)
    op = KeyedProcessOperator(Previous(), clock=clock)
    assert [r.value for r in op.process_element("a", "first")] == [None]
    clock.advance_to(999)
    assert [r.value for r in op.process_element("a", "second")] == ["first"]
    op.advance_processing_time(1_999)  # the operator may move a ManualClock itself
    assert [r.value for r in op.process_element("a", "third")] == [None]


def test_on_timer_can_chain_timers_within_one_watermark_advance():
    class Ticker(KeyedProcessFunction):
        def process_element(self, value, ctx):
            ctx.timer_service().register_event_time_timer(0)

        def on_timer(self, timestamp, ctx):
            assert ctx.timestamp() == timestamp
            if timestamp < 30:
                ctx.timer_service().register_event_time_timer(timestamp + 10)
            yield timestamp

    op = KeyedProcessOperator(Ticker())
    op.process_element("k", None, 0)
    assert [r.value for r in op.advance_watermark(25)] == [0, 10, 20]
    assert [r.value for r in op.advance_watermark(100)] == [30]


def test_snapshot_and_restore_continue_where_the_first_operator_stopped():
    first = KeyedProcessOperator(CountThenReport())
    first.process_element("a", "x", 5)
    first.process_element("a", "y", 6)
    first.advance_watermark(3)
    second = KeyedProcessOperator(CountThenReport())
    second.restore(first.snapshot())
    assert second.current_watermark == 3
    assert plain(second.advance_watermark(100)) == plain(first.advance_watermark(100))


def test_process_element_must_not_return_a_single_row():
    class ReturnsRow(KeyedProcessFunction):
        def process_element(self, value, ctx):
            return ("a", 1)

    with pytest.raises(TypeError, match="must yield its output rows"):
        KeyedProcessOperator(ReturnsRow()).process_element("a", 1)


def test_operator_checks_its_inputs():
    with pytest.raises(TypeError, match="KeyedProcessFunction subclass"):
        KeyedProcessOperator(lambda v, ctx: v)

    class Outputs(KeyedProcessFunction):
        def process_element(self, value, ctx):
            ctx.output("late", value)

    with pytest.raises(TypeError, match="needs an OutputTag"):
        KeyedProcessOperator(Outputs()).process_element("a", 1)

    class Clockless:
        def now_ms(self):
            return 0

    with pytest.raises(ValueError, match="cannot move"):
        KeyedProcessOperator(Outputs(), clock=Clockless()).advance_processing_time(10)


@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["x", "!", "y"]), st.integers(0, 50)), max_size=40))
def test_process_elements_is_process_element_for_each_in_one_call(elements):
    """A micro-batch's elements in one call (what the Spark adapter does): the same records in the same
    order (side outputs between main rows included), the same state and timers after, as one call each."""
    each, bulk = KeyedProcessOperator(CountThenReport()), KeyedProcessOperator(CountThenReport())
    one_by_one = [r for key, value, ts in elements for r in each.process_element(key, value, ts)]
    assert plain(bulk.process_elements(iter(elements))) == plain(one_by_one)
    assert bulk.snapshot()["state"].tables == each.snapshot()["state"].tables
    assert plain(bulk.advance_watermark(100)) == plain(each.advance_watermark(100))


def test_process_elements_of_a_co_process_operator_are_its_first_input_s():
    class Sides(KeyedCoProcessFunction):
        def process_element1(self, value, ctx):
            yield ("first", value)

        def process_element2(self, value, ctx):
            yield ("second", value)

    op = KeyedCoProcessOperator(Sides())
    assert [r.value for r in op.process_elements([("k", 1, 5), ("k", 2, 6)])] == [("first", 1), ("first", 2)]
    with pytest.raises(TypeError, match="two inputs"):
        op.process_element("k", 3, 7)


class BatchedCountThenReport(CountThenReport):
    """CountThenReport's logic over a micro-batch's elements grouped by key (``process_batch``)."""

    def process_element(self, value, ctx):
        raise AssertionError("process_batch takes every element")

    def process_batch(self, key_groups, ctx):
        for group in key_groups:
            assert ctx.get_current_key() == group.key and ctx.timestamp() == max(group.timestamps)
            self.count.update((self.count.value() or 0) + len(group.values))
            for value, timestamp in zip(group.values, group.timestamps, strict=True):
                ctx.timer_service().register_event_time_timer(timestamp + 10)
                if value == "!":
                    ctx.output(ALERTS, (group.key, "bang"))
                yield ("seen", group.key, value)


def _by_key(outputs):
    """Each key's (tag, value) outputs in order: what a function may not reorder."""
    keys: dict = {}
    for tag, value, _ in plain(outputs):
        keys.setdefault(value[1] if tag == "main" else value[0], []).append((tag, value))
    return keys


@given(
    st.lists(
        st.tuples(
            st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xy!"), st.integers(0, 40)), max_size=8),
            st.integers(0, 25),
        ),
        max_size=6,
    )
)
def test_process_batch_gives_what_process_element_gives_each_keys_rows_in_order_and_the_same_timers(batches):
    one, batched = KeyedProcessOperator(CountThenReport()), KeyedProcessOperator(BatchedCountThenReport())
    watermark = -1
    for elements, step in batches:
        elements = [(k, v, watermark + 1 + t) for k, v, t in elements]  # (not late: after the watermark)
        per_element = one.process_elements(elements)
        assert _by_key(batched.process_elements(elements)) == _by_key(per_element)
        watermark += step
        fired, fired_batched = plain(one.advance_watermark(watermark)), plain(batched.advance_watermark(watermark))
        assert sorted(fired_batched, key=repr) == sorted(fired, key=repr)  # (timers of one time: any key's first)
    one.open(), batched.open()
    for key in "abc":
        one.state_backend.current_key = batched.state_backend.current_key = key
        assert one.function.count.value() == batched.function.count.value()


def test_a_single_element_reaches_process_batch_as_a_group_of_one_with_its_timestamp():
    op = KeyedProcessOperator(BatchedCountThenReport())
    assert plain(op.process_element("a", "!", 7)) == [("alerts", ("a", "bang"), 7), ("main", ("seen", "a", "!"), 7)]
    out = op.process_elements([("a", "x", 3), ("b", "y", 9), ("a", "z", 5)])
    assert plain(out) == [("main", ("seen", "a", "x"), 5), ("main", ("seen", "a", "z"), 5), ("main", ("seen", "b", "y"), 9)]
    assert plain(op.advance_watermark(100))[-1] == ("main", ("report", "b", 1, TimeDomain.EVENT_TIME), 19)
