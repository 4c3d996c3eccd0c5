"""Interval join and window join / co-group: Flink's rules, each expectation derived by hand."""

from __future__ import annotations

import pytest

from funke.semantics.functions import OutputTag
from funke.semantics.joins import (
    CoGroupFunction,
    IntervalJoinOperator,
    JoinFunction,
    ProcessJoinFunction,
    WindowJoinOperator,
)
from funke.semantics.window_operator import WindowSpec
from funke.semantics.windows import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows

from .support import results

EDGE = OutputTag("edge")


class Pairs(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield (left, right)


class Stamped(ProcessJoinFunction):
    """Reports the context's timestamps; sends pairs at equal times to a side output too."""

    def process_element(self, left, right, ctx):
        if ctx.get_left_timestamp() == ctx.get_right_timestamp():
            ctx.output(EDGE, (left, right))
        yield (left, right, ctx.get_left_timestamp(), ctx.get_right_timestamp(), ctx.get_timestamp())


def pairs(out):
    return [(r.value, r.timestamp) for r in out if r.tag is None]


def op(lower=-2, upper=1, **kw):
    return IntervalJoinOperator(Pairs(), lower=lower, upper=upper, **kw)


def test_left_element_meets_right_elements_within_its_interval_both_bounds_inclusive():
    j = op(-2, 1)
    assert j.process_element1("a", "L", 10) == []
    # right times 8..11 lie in [10 - 2, 10 + 1]; 7 and 12 do not
    assert pairs(j.process_element2("a", "R7", 7)) == []
    assert pairs(j.process_element2("a", "R8", 8)) == [(("L", "R8"), 10)]
    assert pairs(j.process_element2("a", "R11", 11)) == [(("L", "R11"), 11)]
    assert pairs(j.process_element2("a", "R12", 12)) == []
    # a second left element at 12 meets the buffered right elements at 11 and 12 ([10, 13]), in arrival order
    assert pairs(j.process_element1("a", "L2", 12)) == [(("L2", "R11"), 12), (("L2", "R12"), 12)]


def test_exclusive_bounds_move_each_bound_by_one_millisecond():
    j = op(-2, 1, lower_inclusive=False, upper_inclusive=False)  # [t - 1, t]
    j.process_element1("a", "L", 10)
    assert pairs(j.process_element2("a", "R8", 8)) == []
    assert pairs(j.process_element2("a", "R9", 9)) == [(("L", "R9"), 10)]
    assert pairs(j.process_element2("a", "R10", 10)) == [(("L", "R10"), 10)]
    assert pairs(j.process_element2("a", "R11", 11)) == []


def test_keys_join_only_with_their_own_key():
    j = op(0, 5)
    j.process_element1("a", "La", 1)
    assert pairs(j.process_element2("b", "Rb", 2)) == []
    assert pairs(j.process_element2("a", "Ra", 2)) == [(("La", "Ra"), 2)]


def test_an_element_below_the_watermark_is_late_and_dropped_one_at_it_is_on_time():
    j = op(-5, 5)
    j.process_element1("a", "L", 12)  # partners in [7, 17]
    j.advance_watermark(10)
    assert pairs(j.process_element2("a", "R9", 9)) == []  # 9 < 10: late, not even buffered
    assert j.num_late_records_dropped == 1
    assert j.buffered("a", "right") == {}
    assert pairs(j.process_element2("a", "R10", 10)) == [(("L", "R10"), 12)]  # at the watermark: on time (Flink: t < wm is late)


def test_left_buffer_is_cleaned_when_the_watermark_reaches_t_plus_upper():
    j = op(-2, 1)
    j.process_element1("a", "L", 10)  # cleanup timer at 10 + 1
    j.advance_watermark(10)
    assert j.buffered("a", "left") == {10: ["L"]}
    assert pairs(j.process_element2("a", "R11", 11)) == [(("L", "R11"), 11)]
    j.advance_watermark(11)
    assert j.buffered("a", "left") == {}
    # 11 is not late at watermark 11, but its partner's timer has fired: Flink joins it with nothing
    assert pairs(j.process_element2("a", "R11b", 11)) == []


def test_right_buffer_is_cleaned_when_the_watermark_reaches_t_minus_lower():
    j = op(-2, 1)
    j.process_element2("a", "R", 10)  # a left partner lies in [10 - 1, 10 + 2]: cleanup timer at 12
    j.advance_watermark(11)
    assert pairs(j.process_element1("a", "L12", 12)) == [(("L12", "R"), 12)]
    j.advance_watermark(12)
    assert j.buffered("a", "right") == {}
    assert pairs(j.process_element1("a", "L12b", 12)) == []


def test_cleanup_at_the_element_itself_when_the_interval_lies_on_one_side():
    # upper <= 0: a left element waits for nothing later than itself; its timer is at t
    j = op(-5, -1)
    j.process_element1("a", "L", 10)
    assert pairs(j.process_element2("a", "R9", 9)) == [(("L", "R9"), 10)]
    j.advance_watermark(9)
    assert j.buffered("a", "left") == {10: ["L"]}
    j.advance_watermark(10)
    assert j.buffered("a", "left") == {}
    # lower >= 0: a right element's left partners lie at or before it; its timer is at t
    k = op(1, 5)
    k.process_element2("a", "R", 10)
    assert pairs(k.process_element1("a", "L7", 7)) == [(("L7", "R"), 10)]
    k.advance_watermark(10)
    assert k.buffered("a", "right") == {}
    assert k.buffered("a", "left") == {7: ["L7"]}  # left 7 waits until 7 + 5
    k.advance_watermark(12)
    assert k.buffered("a", "left") == {}


def test_context_gives_both_timestamps_and_the_pairs_the_larger_and_side_outputs_carry_it():
    j = IntervalJoinOperator(Stamped(), lower=-3, upper=3)
    j.process_element1("a", "L", 5)
    out = j.process_element2("a", "R", 3) + j.process_element2("a", "S", 5)
    assert [(r.tag.name if r.tag else "main", r.value, r.timestamp) for r in out] == [
        ("main", ("L", "R", 5, 3, 5), 5),
        ("edge", ("L", "S"), 5),
        ("main", ("L", "S", 5, 5, 5), 5),
    ]


def test_snapshot_and_restore_continue_exactly():
    j = op(-2, 2)
    j.process_element1("a", "L1", 10)
    j.process_element2("b", "Rb", 4)
    j.advance_watermark(7)  # Rb's timer (4 + 2 = 6) fired
    snap = j.snapshot()
    k = op(-2, 2)
    k.restore(snap)
    assert k.buffered("b", "right") == {}
    assert pairs(k.process_element2("a", "R", 12)) == [(("L1", "R"), 12)]
    assert pairs(k.process_element2("a", "late", 6)) == []
    assert k.num_late_records_dropped == 1
    k.advance_watermark(12)
    assert k.buffered("a", "left") == {}


def test_bounds_are_checked():
    with pytest.raises(ValueError, match="lower <= upper"):
        op(3, 2)
    with pytest.raises(TypeError, match="ProcessJoinFunction"):
        IntervalJoinOperator(lambda l, r: (l, r), lower=0, upper=1)  # type: ignore[arg-type]
    # exclusive bounds that meet leave an empty interval, which Flink accepts: nothing ever joins
    j = op(0, 0, upper_inclusive=False)
    j.process_element1("a", "L", 1)
    assert pairs(j.process_element2("a", "R", 1)) == []


# --------------------------------------------------------------------------- window join / co-group


class Concat(JoinFunction):
    def join(self, left, right):
        return f"{left}+{right}"


class Lists(CoGroupFunction):
    def co_group(self, lefts, rights):
        yield (tuple(lefts), tuple(rights))


def test_tumbling_window_join_pairs_elements_of_the_same_key_and_window():
    w = WindowJoinOperator(WindowSpec.of(TumblingEventTimeWindows.of(10)), Concat())
    w.process_element1("a", "L1", 1)
    w.process_element1("a", "L2", 3)
    w.process_element2("a", "R1", 5)
    w.process_element2("b", "Rb", 6)  # no left for b: an inner join yields nothing
    w.process_element2("a", "R2", 12)  # next window
    assert results(w.advance_watermark(9)) == [("a", 0, 10, "L1+R1"), ("a", 0, 10, "L2+R1")]
    w.process_element1("a", "L3", 19)
    assert results(w.advance_watermark(19)) == [("a", 10, 20, "L3+R2")]


def test_co_group_sees_both_sides_even_when_one_is_empty():
    w = WindowJoinOperator(WindowSpec.of(TumblingEventTimeWindows.of(10)), Lists())
    w.process_element1("a", "L1", 1)
    w.process_element2("b", "Rb", 6)
    w.process_element2("a", "R1", 2)
    out = w.advance_watermark(9)
    assert sorted(results(out)) == [("a", 0, 10, (("L1",), ("R1",))), ("b", 0, 10, ((), ("Rb",)))]
    assert {r.timestamp for r in out} == {9}


def test_sliding_window_join_pairs_only_in_windows_both_elements_belong_to():
    w = WindowJoinOperator(WindowSpec.of(SlidingEventTimeWindows.of(10, 5)), Concat())
    w.process_element1("a", "L", 7)  # [0, 10) and [5, 15)
    w.process_element2("a", "R", 12)  # [5, 15) and [10, 20)
    assert results(w.advance_watermark(30)) == [("a", 5, 15, "L+R")]


def test_session_window_join_merges_sessions_across_both_sides():
    w = WindowJoinOperator(WindowSpec.of(EventTimeSessionWindows.with_gap(5)), Lists())
    w.process_element1("a", "L1", 1)  # [1, 6)
    w.process_element2("a", "R1", 8)  # [8, 13): a separate session so far
    w.process_element2("a", "R2", 5)  # [5, 10) touches both: one session [1, 13)
    w.process_element1("a", "L2", 30)  # [30, 35)
    assert results(w.advance_watermark(100)) == [
        ("a", 1, 13, (("L1",), ("R1", "R2"))),
        ("a", 30, 35, (("L2",), ())),
    ]


def test_window_join_drops_elements_whose_windows_have_fired():
    w = WindowJoinOperator(WindowSpec.of(TumblingEventTimeWindows.of(10)), Concat())
    w.advance_watermark(9)
    w.process_element1("a", "late", 3)
    assert w.num_late_records_dropped == 1
    w.process_element1("a", "L", 13)
    w.process_element2("a", "R", 17)
    snap = w.snapshot()
    v = WindowJoinOperator(WindowSpec.of(TumblingEventTimeWindows.of(10)), Concat())
    v.restore(snap)
    assert results(v.advance_watermark(19)) == [("a", 10, 20, "L+R")]


def test_a_cleanup_timer_at_or_below_the_watermark_waits_for_the_next_advance():
    j = op(-2, 0)
    j.advance_watermark(5)
    j.process_element1("a", "L", 5)  # on time at 5; its timer (5) is already due
    assert j.advance_watermark(5) == []  # the same watermark again is no advance
    assert j.buffered("a", "left") == {5: ["L"]}
    assert pairs(j.process_element2("a", "R", 5)) == [(("L", "R"), 5)]
    j.advance_watermark(6)
    assert j.buffered("a", "left") == {}
