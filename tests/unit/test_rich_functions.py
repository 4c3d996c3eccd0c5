"""Function classes with a lifecycle, the unkeyed ProcessFunction, window functions without a key, and
side outputs yielded as ``(output_tag, value)``: the semantics operators in pure Python, expected
outputs derived by hand."""

from __future__ import annotations

import pytest

from funke.errors import UnsupportedError
from funke.semantics.clock import ManualClock
from funke.semantics.co_process import CoProcessFunction, CoProcessOperator, KeyedCoProcessFunction, KeyedCoProcessOperator
from funke.semantics.functions import KeyedProcessFunction, OutputTag, ProcessWindowFunction
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.process import ProcessFunction, ProcessOperator
from funke.semantics.rich import Lifecycled, MapFunction, RuntimeContext, call_open
from funke.semantics.state import ValueStateDescriptor
from funke.semantics.window_functions import (
    AllWindowFunction,
    ProcessAllWindowFunction,
    WindowFunction,
    as_process_window_function,
)
from funke.semantics.window_operator import WindowOperator, WindowProcess, WindowReduce, WindowResult, WindowSpec
from funke.semantics.windows import TumblingEventTimeWindows

BIG = OutputTag("big")


def values(records):
    return [(r.value, r.timestamp, r.tag.name if r.tag else None) for r in records]


class Route(KeyedProcessFunction):
    def process_element(self, value, ctx):
        if value > 10:
            yield BIG, (ctx.get_current_key(), value)
        else:
            yield (ctx.get_current_key(), value)  # a 2-tuple that is not a side output stays a row


def test_a_yielded_tag_and_value_is_a_side_output_not_a_main_output_tuple():
    op = KeyedProcessOperator(Route())
    assert values(op.process_element("a", 5, 100)) == [(("a", 5), 100, None)]
    assert values(op.process_element("a", 50, 200)) == [(("a", 50), 200, "big")]


class TimerToSide(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_processing_time_timer(1_000)

    def on_timer(self, timestamp, ctx):
        yield BIG, ctx.get_current_key()
        yield ctx.get_current_key()


def test_a_processing_time_timer_s_side_output_carries_the_timer_s_time_and_its_main_output_none():
    op = KeyedProcessOperator(TimerToSide(), clock=ManualClock(0))
    op.process_element("k", 1, 5)
    assert values(op.advance_processing_time(1_000)) == [("k", 1_000, "big"), ("k", None, None)]


class Counting(KeyedProcessFunction):
    def open(self, runtime_context):
        self.task = runtime_context.get_task_name()
        self.n = runtime_context.get_state(ValueStateDescriptor("n"))

    def process_element(self, value, ctx):
        self.n.update((self.n.value() or 0) + 1)
        yield (self.task, self.n.value())


def test_a_keyed_function_s_open_gets_a_runtime_context_with_keyed_state():
    op = KeyedProcessOperator(Counting())
    op.process_element("a", 1)
    assert values(op.process_element("a", 2)) == [(("Counting", 2), None, None)]


class Both(CoProcessFunction):
    def open(self, runtime_context):  # PyFlink's signature: used to raise TypeError
        self.prefix = runtime_context.get_task_name()

    def process_element1(self, value, ctx):
        yield f"{self.prefix}:{value}@{ctx.timer_service().current_watermark()}"

    def process_element2(self, value, ctx):
        yield BIG, value


def test_co_process_function_open_takes_the_runtime_context_and_side_outputs_can_be_yielded():
    op = CoProcessOperator(Both())
    op.advance_watermark(7)
    assert values(op.process_element1(None, "x", 3)) == [("Both:x@7", 3, None)]
    assert values(op.process_element2(None, "y", 4)) == [("y", 4, "big")]


class OldStyle(CoProcessFunction):
    def open(self):  # funke's earlier spelling still works
        self.opened = True

    def process_element1(self, value, ctx):
        yield self.opened


def test_an_open_without_an_argument_is_still_called():
    assert values(CoProcessOperator(OldStyle()).process_element1(None, 1, None)) == [(True, None, None)]


class KeyedBoth(KeyedCoProcessFunction):
    def process_element1(self, value, ctx):
        yield BIG, value

    def process_element2(self, value, ctx):
        return None


def test_keyed_co_process_yields_side_outputs_too():
    assert values(KeyedCoProcessOperator(KeyedBoth()).process_element1("k", 1, 9)) == [(1, 9, "big")]


class Stamp(ProcessFunction):
    def process_element(self, value, ctx):
        if value < 0:
            yield BIG, value
            return
        yield (value, ctx.timestamp(), ctx.timer_service().current_watermark(), ctx.timer_service().current_processing_time())


def test_the_unkeyed_process_function_sees_timestamp_watermark_and_time_and_has_side_outputs():
    op = ProcessOperator(Stamp(), clock=ManualClock(50))
    op.advance_watermark(10)
    assert values(op.process_element(None, 1, 20)) == [((1, 20, 10, 50), 20, None)]
    assert values(op.process_element(None, -1, 30)) == [(-1, 30, "big")]


class SetsTimer(ProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_event_time_timer(5)


def test_a_timer_on_an_unkeyed_stream_is_refused_as_flink_refuses_it():
    with pytest.raises(TypeError, match="timers need a keyed stream.*key_by"):
        ProcessOperator(SetsTimer()).process_element(None, 1, 1)


def test_unkeyed_state_and_metrics_are_refused_with_what_to_do():
    ctx = RuntimeContext("map f")
    with pytest.raises(TypeError, match=r"keyed state needs a keyed stream.*key_by"):
        ctx.get_state(ValueStateDescriptor("x"))
    with pytest.raises(UnsupportedError, match="JobHandle.metrics"):
        ctx.get_metrics_group()


class Opens(MapFunction):
    def __init__(self):
        self.events = []

    def open(self, runtime_context):
        self.events.append(("open", runtime_context.get_task_name()))

    def map(self, value):
        return value + 1

    def close(self):
        self.events.append(("close",))


def test_lifecycled_opens_and_closes_the_function_around_its_calls():
    fn = Opens()
    f = Lifecycled(fn, lambda g, v: g.map(v), "map Opens")
    f.start()
    assert [f(1), f(2)] == [2, 3]
    f.finish()
    assert fn.events == [("open", "map Opens"), ("close",)]
    assert f.__qualname__ == "Opens"


def test_call_open_passes_the_context_only_to_an_open_that_takes_it():
    seen = []

    class A:
        def open(self, ctx):
            seen.append(ctx)

    class B:
        def open(self):
            seen.append("b")

    ctx = RuntimeContext("t")
    call_open(A(), ctx)
    call_open(B(), ctx)
    assert seen == [ctx, "b"]


class Sum(WindowFunction):
    def apply(self, key, window, inputs):
        yield (key, window.start, window.end, sum(inputs))


class AllSum(AllWindowFunction):
    def apply(self, window, inputs):
        return [(window.end, sum(inputs))]


class AllCount(ProcessAllWindowFunction):
    def process(self, ctx, elements):
        yield BIG, len(elements)
        yield (ctx.window().start, len(elements))


def _window(function, *elements):
    op = WindowOperator(WindowSpec.of(TumblingEventTimeWindows.of(10)), WindowProcess(function))
    for key, value, ts in elements:
        op.process_element(key, value, ts)
    return op.advance_watermark(100)


def test_window_function_apply_gets_key_window_and_inputs():
    out = _window(as_process_window_function(Sum()), ("a", 1, 1), ("a", 2, 5), ("a", 7, 12))
    assert [r.value.value for r in out] == [("a", 0, 10, 3), ("a", 10, 20, 7)]


def test_all_window_functions_get_no_key_and_may_yield_side_outputs():
    out = _window(as_process_window_function(AllSum(), keyed=False), (0, 1, 1), (0, 2, 5))
    assert [r.value.value for r in out] == [(10, 3)]
    out = _window(as_process_window_function(AllCount(), keyed=False), (0, 1, 1), (0, 2, 5))
    assert [(r.tag.name if r.tag else None, r.value if r.tag else r.value.value) for r in out] == [("big", 2), (None, (0, 2))]


def test_a_window_function_of_the_wrong_kind_is_refused_naming_what_fits():
    with pytest.raises(TypeError, match="ProcessAllWindowFunction"):
        as_process_window_function(Sum(), keyed=False)

    class P(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            yield key

    with pytest.raises(TypeError, match="has no key: use a ProcessAllWindowFunction"):
        as_process_window_function(P(), keyed=False)


class OpenedReduce:
    """A reduce function class with open(): opened before the first element is reduced."""

    def open(self, runtime_context):
        self.factor = 10

    def reduce(self, a, b):
        return a + b * self.factor

    def close(self):
        pass


def test_a_reduce_function_with_open_is_opened_before_its_first_element():
    op = WindowOperator(WindowSpec.of(TumblingEventTimeWindows.of(10)), WindowReduce(OpenedReduce()))
    op.process_element("a", 1, 1)
    op.process_element("a", 2, 2)
    assert [r.value for r in op.advance_watermark(100)] == [WindowResult("a", 0, 10, 21)]
