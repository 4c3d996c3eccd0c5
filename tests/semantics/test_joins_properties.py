"""The join operators against direct computations of Flink's result (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.joins import CoGroupFunction, IntervalJoinOperator, JoinFunction, ProcessJoinFunction, WindowJoinOperator
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.window_operator import WindowSpec
from funke.semantics.windows import TumblingEventTimeWindows

from .support import interval_join_reference, results


class Pairs(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield (left, right, ctx.get_timestamp())


# Few keys, a short time range and more elements than watermarks: most scripts join
# something, and elements land on the watermark and on the interval's edges often.
element = st.tuples(st.sampled_from("LR"), st.sampled_from("ab"), st.integers(0, 15))
step = st.one_of(element, element, element, st.tuples(st.just("W"), st.integers(0, 15)))


@settings(max_examples=500, deadline=None)
@given(
    steps=st.lists(step, min_size=6, max_size=30),
    lower=st.integers(-8, 8),
    width=st.integers(0, 10),
    lower_inclusive=st.booleans(),
    upper_inclusive=st.booleans(),
)
def test_operator_matches_flinks_result_computed_pair_by_pair(steps, lower, width, lower_inclusive, upper_inclusive):
    upper = lower + width
    # each element gets a unique value: its position in the script
    script = [s if s[0] == "W" else (s[0], s[1], f"{s[0]}{i}", s[2]) for i, s in enumerate(steps)]
    op = IntervalJoinOperator(Pairs(), lower=lower, upper=upper, lower_inclusive=lower_inclusive, upper_inclusive=upper_inclusive)
    got = []
    for s in script:
        if s[0] == "W":
            got += op.advance_watermark(s[1])
        elif s[0] == "L":
            got += op.process_element1(s[1], s[2], s[3])
        else:
            got += op.process_element2(s[1], s[2], s[3])
    assert all(r.timestamp == r.value[2] for r in got)
    lo, hi = (lower if lower_inclusive else lower + 1), (upper if upper_inclusive else upper - 1)
    assert sorted(r.value for r in got) == interval_join_reference(script, lo, hi)


class Concat(JoinFunction):
    def join(self, left, right):
        return (left, right)


class Lists(CoGroupFunction):
    def co_group(self, lefts, rights):
        yield (tuple(sorted(lefts)), tuple(sorted(rights)))


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(step, min_size=4, max_size=30), size=st.integers(1, 6), co_group=st.booleans())
def test_tumbling_window_join_and_co_group_match_a_per_window_computation(steps, size, co_group):
    script = [s if s[0] == "W" else (s[0], s[1], f"{s[0]}{i}", s[2]) for i, s in enumerate(steps)]
    op = WindowJoinOperator(WindowSpec.of(TumblingEventTimeWindows.of(size)), Lists() if co_group else Concat())
    got = []
    for s in script:
        if s[0] == "W":
            got += op.advance_watermark(s[1])
        else:
            got += (op.process_element1 if s[0] == "L" else op.process_element2)(s[1], s[2], s[3])
    got += op.advance_watermark(MAX_WATERMARK)
    # Reference: an element is late when its one window's last millisecond is at or below the watermark
    # it arrives at; a window holds its on-time elements of both sides, and fires once.
    wm, windows = None, {}
    for s in script:
        if s[0] == "W":
            wm = s[1] if wm is None else max(wm, s[1])
            continue
        side, key, value, t = s
        start = t - t % size
        if wm is not None and start + size - 1 <= wm:
            continue
        windows.setdefault((key, start), {"L": [], "R": []})[side].append(value)
    expected = []
    for (key, start), sides in windows.items():
        if co_group:
            expected.append((key, start, start + size, (tuple(sorted(sides["L"])), tuple(sorted(sides["R"])))))
        else:
            expected += [(key, start, start + size, (lv, rv)) for lv in sides["L"] for rv in sides["R"]]
    assert sorted(results(got)) == sorted(expected)
