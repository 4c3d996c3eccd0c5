"""Window functions: reduce, aggregate, process (with state and side outputs), built-ins."""

from __future__ import annotations

import pytest

from funke.semantics.clock import ManualClock
from funke.semantics.functions import AggregateFunction, OutputTag, ProcessWindowFunction, ReduceFunction
from funke.semantics.state import ReducingStateDescriptor, ValueStateDescriptor
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.window_operator import (
    WindowAggregate,
    WindowOperator,
    WindowProcess,
    WindowReduce,
    WindowResult,
    WindowSpec,
    as_window_function,
)
from funke.semantics.windows import TumblingEventTimeWindows, TumblingProcessingTimeWindows

from .support import results, side

TUMBLING_10 = WindowSpec.of(TumblingEventTimeWindows.of(10))
ROWS = [({"v": 3, "name": "x"}, 1), ({"v": 1, "name": "y"}, 2), ({"v": 8, "name": "z"}, 4)]


def run(function, rows=ROWS, spec=TUMBLING_10, key="k"):
    op = WindowOperator(spec, function)
    for value, ts in rows:
        op.process_element(key, value, ts)
    return op.advance_watermark(MAX_WATERMARK)


def test_reduce_with_a_plain_callable_and_a_reduce_function():
    class KeepMax(ReduceFunction):
        def reduce(self, a, b):
            return a if a["v"] >= b["v"] else b

    assert results(run(WindowReduce(lambda a, b: {"v": a["v"] + b["v"]}))) == [("k", 0, 10, {"v": 12})]
    assert results(run(KeepMax())) == [("k", 0, 10, {"v": 8, "name": "z"})]


def test_aggregate_with_a_user_function():
    class MeanOfV(AggregateFunction):
        def create_accumulator(self):
            return [0, 0]

        def add(self, value, acc):
            return [acc[0] + value["v"], acc[1] + 1]

        def get_result(self, acc):
            return acc[0] / acc[1]

        def merge(self, a, b):
            return [a[0] + b[0], a[1] + b[1]]

    assert results(run(MeanOfV())) == [("k", 0, 10, 4.0)]


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (WindowAggregate.count(), 3),
        (WindowAggregate.sum("v"), 12),
        (WindowAggregate.min("v"), 1),
        (WindowAggregate.max("v"), 8),
        (WindowAggregate.avg("v"), 4.0),
    ],
)
def test_builtin_aggregates(function, expected):
    assert results(run(function)) == [("k", 0, 10, expected)]


def test_builtin_aggregate_on_a_missing_field_names_it():
    with pytest.raises(KeyError, match="no field 'price'"):
        run(WindowAggregate.sum("price"))


def test_process_function_sees_all_elements_window_and_time():
    class Describe(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            yield {"n": len(elements), "names": [e["name"] for e in elements], "wm": ctx.current_watermark()}

    out = run(WindowProcess(Describe()))
    assert results(out) == [("k", 0, 10, {"n": 3, "names": ["x", "y", "z"], "wm": MAX_WATERMARK})]
    assert out[0].timestamp == 9
    assert out[0].value.as_row() == {
        "key": "k",
        "window_start": 0,
        "window_end": 10,
        "n": 3,
        "names": ["x", "y", "z"],
        "wm": MAX_WATERMARK,
    }


def test_process_function_side_outputs_interleave_in_emission_order():
    big = OutputTag("big")

    class Split(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            for e in elements:
                if e["v"] > 2:
                    ctx.output(big, e["name"])
                else:
                    yield e["name"]

    out = run(WindowProcess(Split()))
    assert [(r.tag.name if r.tag else "main", r.value if r.tag else r.value.value, r.timestamp) for r in out] == [
        ("big", "x", 9),
        ("main", "y", 9),
        ("big", "z", 9),
    ]
    assert side(out) == [("big", "x", 9), ("big", "z", 9)]


def test_reduce_and_aggregate_with_a_window_function():
    class Tag(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            (only,) = elements
            yield {"key": key, "end": ctx.window().end, "result": only}

    assert results(run(WindowReduce(lambda a, b: {"v": a["v"] + b["v"]}, Tag()))) == [
        ("k", 0, 10, {"key": "k", "end": 10, "result": {"v": 12}})
    ]
    assert results(run(WindowAggregate(WindowAggregate.count().aggregate_fn, Tag()))) == [
        ("k", 0, 10, {"key": "k", "end": 10, "result": 3})
    ]


def test_window_state_global_state_and_clear():
    firings = ValueStateDescriptor("firings")
    total = ReducingStateDescriptor("total", lambda a, b: a + b)
    cleared = []

    class CountFirings(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            per_window = ctx.window_state().get_state(firings)
            per_window.update((per_window.value() or 0) + 1)
            ctx.global_state().get_reducing_state(total).add(1)
            yield (per_window.value(), ctx.global_state().get_reducing_state(total).get())

        def clear(self, ctx):
            ctx.window_state().get_state(firings).clear()
            cleared.append(ctx.window().start)

    spec = WindowSpec.of(TumblingEventTimeWindows.of(10), allowed_lateness=5)
    op = WindowOperator(spec, WindowProcess(CountFirings()))
    op.process_element("k", "a", 1)
    assert [r.value.value for r in op.advance_watermark(9)] == [(1, 1)]
    assert [r.value.value for r in op.process_element("k", "late", 2)] == [(2, 2)]  # late firing
    op.process_element("k", "b", 12)
    assert [r.value.value for r in op.advance_watermark(19)] == [(1, 3)]
    op.advance_watermark(MAX_WATERMARK)
    assert cleared == [0, 10]
    remaining = {(row["state"], row["namespace"]) for row in op.snapshot()["state"]}
    assert remaining == {("user:total", "void")}  # per-window state gone, global state stays


def test_processing_time_tumbling_windows_fire_by_the_clock():
    clock = ManualClock(1_000)
    op = WindowOperator(WindowSpec.of(TumblingProcessingTimeWindows.of(10_000)), WindowAggregate.count(), clock=clock)
    op.process_element("a", "x")
    op.process_element("a", "y", 123)  # an event timestamp is irrelevant to processing-time windows
    assert op.advance_processing_time(9_998) == []
    assert results(op.advance_processing_time(9_999)) == [("a", 0, 10_000, 2)]
    clock.advance_to(10_500)
    op.process_element("a", "z")
    assert results(op.advance_processing_time(25_000)) == [("a", 10_000, 20_000, 1)]
    assert op.snapshot()["state"] == []


def test_function_must_yield_rows_not_return_one():
    class ReturnsDict(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            return {"n": len(elements)}

    with pytest.raises(TypeError, match="must yield its output rows"):
        run(WindowProcess(ReturnsDict()))


def test_window_function_forms_are_checked():
    with pytest.raises(TypeError, match="WindowReduce"):
        as_window_function(lambda a, b: a + b)
    assert WindowResult("k", 0, 10, 5).as_row() == {"key": "k", "window_start": 0, "window_end": 10, "value": 5}
