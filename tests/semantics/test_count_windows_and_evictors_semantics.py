"""Count windows (as Flink lowers them) and evictors before/after the window function."""

from __future__ import annotations

import pytest

from funke.semantics.evictors import CountEvictor, DeltaEvictor, Evictor, TimeEvictor, TimestampedValue
from funke.semantics.functions import ProcessWindowFunction
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.triggers import CountTrigger, PurgingTrigger
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowProcess, WindowReduce, WindowSpec
from funke.semantics.windows import GlobalWindows, TumblingEventTimeWindows

from .support import results, values


def tv(*pairs: tuple[object, int | None]) -> list[TimestampedValue]:
    return [TimestampedValue(v, ts) for v, ts in pairs]


# --------------------------------------------------------------------------- count windows


def test_count_window_lowers_like_flink():
    assert WindowSpec.count_window(3) == WindowSpec(GlobalWindows(), trigger=PurgingTrigger(CountTrigger(3)))
    assert WindowSpec.count_window(3, 2) == WindowSpec(GlobalWindows(), trigger=CountTrigger(2), evictor=CountEvictor(3))


def test_tumbling_count_window_fires_every_n_and_never_by_time():
    op = WindowOperator(WindowSpec.count_window(3), WindowAggregate.sum())
    fired = [results(op.process_element("a", v, None)) for v in range(1, 8)]
    assert fired == [[], [], [("a", None, None, 6)], [], [], [("a", None, None, 15)], []]
    assert op.advance_watermark(MAX_WATERMARK) == []


def test_tumbling_count_window_counts_each_key_separately_and_stamps_max_timestamp():
    op = WindowOperator(WindowSpec.count_window(2), WindowReduce(lambda a, b: a + b))
    op.process_element("a", 1, 10)
    op.process_element("b", 10, 11)
    out = op.process_element("a", 2, 12)
    assert results(out) == [("a", None, None, 3)]
    assert out[0].timestamp == MAX_WATERMARK  # GlobalWindow.max_timestamp, as in Flink
    assert results(op.process_element("b", 20, 13)) == [("b", None, None, 30)]


def test_sliding_count_window_emits_the_last_size_elements_every_slide():
    op = WindowOperator(WindowSpec.count_window(3, 2), WindowAggregate.sum())
    fired = [values(op.process_element("a", v, None)) for v in range(1, 7)]
    assert fired == [[], [3], [], [2 + 3 + 4], [], [4 + 5 + 6]]


# --------------------------------------------------------------------------- evictors, directly


def test_count_evictor_keeps_the_newest():
    kept = CountEvictor.of(2).evict_before(tv((1, 1), (2, 2), (3, 3), (4, 4)), 4, None, None)
    assert [e.value for e in kept] == [3, 4]
    assert CountEvictor.of(2, do_evict_after=True).evict_before(tv((1, 1), (2, 2), (3, 3)), 3, None, None) == tv(
        (1, 1), (2, 2), (3, 3)
    )
    after = CountEvictor.of(2, do_evict_after=True).evict_after(tv((1, 1), (2, 2), (3, 3)), 3, None, None)
    assert [e.value for e in after] == [2, 3]


def test_time_evictor_keeps_what_is_newer_than_max_minus_size():
    kept = TimeEvictor.of(10).evict_before(tv(("a", 1), ("b", 5), ("c", 12), ("d", 20)), 4, None, None)
    assert [e.value for e in kept] == ["c", "d"]  # cutoff 20 - 10 = 10 is evicted inclusively
    untimed = tv(("a", None), ("b", None))
    assert TimeEvictor.of(10).evict_before(untimed, 2, None, None) == untimed


def test_delta_evictor_measures_against_the_last_element():
    kept = DeltaEvictor.of(5, lambda a, b: abs(a - b)).evict_before(tv((1, 0), (8, 0), (10, 0), (12, 0)), 4, None, None)
    assert [e.value for e in kept] == [8, 10, 12]


def test_evictor_validation():
    with pytest.raises(ValueError, match="count >= 0"):
        CountEvictor.of(-1)
    with pytest.raises(TypeError, match="delta_fn"):
        DeltaEvictor.of(1.0, "abs")


# --------------------------------------------------------------------------- evictors in a window


def test_evict_before_disables_preaggregation_and_shapes_the_result():
    op = WindowOperator(
        WindowSpec.of(TumblingEventTimeWindows.of(100), evictor=CountEvictor.of(2)), WindowAggregate.sum()
    )
    for v, ts in [(1, 1), (2, 2), (3, 3)]:
        op.process_element("a", v, ts)
    assert results(op.advance_watermark(99)) == [("a", 0, 100, 5)]


def test_evict_after_removes_elements_for_later_firings():
    spec = WindowSpec.of(GlobalWindows.create(), trigger=CountTrigger.of(2), evictor=CountEvictor.of(1, do_evict_after=True))
    op = WindowOperator(spec, WindowAggregate.sum())
    assert [values(op.process_element("a", v, None)) for v in (1, 2, 3, 4)] == [[], [3], [], [2 + 3 + 4]]


def test_time_evictor_in_a_window_with_a_process_function():
    class Seen(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            yield list(elements)

    op = WindowOperator(
        WindowSpec.of(TumblingEventTimeWindows.of(100), evictor=TimeEvictor.of(10)), WindowProcess(Seen())
    )
    for v, ts in [("a", 5), ("b", 50), ("c", 55)]:
        op.process_element("k", v, ts)
    assert values(op.advance_watermark(99)) == [["b", "c"]]


def test_evicting_everything_reduces_to_nothing_but_aggregates_to_the_empty_result():
    class DropAll(Evictor):
        def evict_before(self, elements, size, window, ctx):
            return []

    spec = WindowSpec.of(TumblingEventTimeWindows.of(10), evictor=DropAll())
    reduce_op = WindowOperator(spec, WindowReduce(lambda a, b: a + b))
    count_op = WindowOperator(spec, WindowAggregate.count())
    for op in (reduce_op, count_op):
        op.process_element("a", 1, 1)
    assert results(reduce_op.advance_watermark(9)) == []
    assert results(count_op.advance_watermark(9)) == [("a", 0, 10, 0)]


def test_user_evictor_may_edit_in_place_and_sees_the_context():
    seen = []

    class DropOdd(Evictor):
        def evict_before(self, elements, size, window, ctx):
            seen.append((size, window.max_timestamp, ctx.get_current_watermark()))
            elements[:] = [e for e in elements if e.value % 2 == 0]

    op = WindowOperator(WindowSpec.of(TumblingEventTimeWindows.of(10), evictor=DropOdd()), WindowAggregate.sum())
    for v in (1, 2, 3, 4):
        op.process_element("a", v, v)
    assert values(op.advance_watermark(9)) == [6]
    assert seen == [(4, 9, 9)]


def test_evictor_returning_garbage_is_an_error():
    class Bad(Evictor):
        def evict_before(self, elements, size, window, ctx):
            return "nope"

    op = WindowOperator(WindowSpec.of(TumblingEventTimeWindows.of(10), evictor=Bad()), WindowAggregate.count())
    op.process_element("a", 1, 1)
    with pytest.raises(TypeError, match="Bad.evict_before must return a list"):
        op.advance_watermark(9)
