"""Joins on Spark: the native interval join gives Flink's pairs, lateness included; what needs the
two-input general path says so."""

from __future__ import annotations

import pytest

import funke as fk
from funke.functions import CoGroupFunction, JoinFunction, ProcessJoinFunction
from funke.plan.capabilities import place
from funke.semantics.time import timestamp_to_millis
from funke.testing import TestStream, assert_rows, run
from funke.windows import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows

from .helpers import ts
from .test_teststream import ms

pytestmark = pytest.mark.spark

BOUND = 1_000

# Three rows a micro-batch on each side. Flink's watermark (both sides' minimum of max - 1000 - 1,
# applied after the batch that follows): none in batches 0-1, 8999 in batch 2, 17999 in batch 3.
LEFT = [
    *[("a", 10_000, "La1"), ("b", 10_000, "Lb1"), ("z", 10_000, "Lz")],
    *[("a", 20_000, "La2"), ("a", 12_000, "La3"), ("z", 12_000, "Lz")],
    *[("a", 9_500, "La4"), ("b", 9_100, "Lb2"), ("z", 9_500, "Lz")],
    *[("a", 17_900, "La5"), ("a", 18_400, "La6"), ("z", 18_400, "Lz")],  # La5 late (< 17999)
]
RIGHT = [
    *[("a", 9_500, "Ra1"), ("a", 10_600, "Ra2"), ("y", 9_500, "Ry")],
    *[("b", 9_000, "Rb1"), ("a", 19_000, "Ra3"), ("y", 19_000, "Ry")],
    *[("b", 8_900, "Rb2"), ("a", 11_200, "Ra4"), ("y", 9_000, "Ry")],  # Rb2 late (< 8999)
    *[("a", 18_000, "Ra5"), ("a", 17_998, "Ra6"), ("a", 17_999, "Ra7")],  # Ra6 late, Ra7 at the watermark: on time
]
# right time - left time in [-1000, 500]; late elements would have met Lb2 (Rb2), Ra5 (La5) and La6 (Ra6)
EXPECTED = sorted(
    [
        ("La1", "Ra1"),
        ("La2", "Ra3"),
        ("La3", "Ra4"),
        ("La4", "Ra1"),
        ("La6", "Ra5"),
        ("La6", "Ra7"),
        ("Lb1", "Rb1"),
        ("Lb2", "Rb1"),
    ]
)


def streams(env, left, right, per_batch):
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(BOUND)).with_timestamp_assigner("t")
    a = env.from_collection(
        [{"k": k, "t": ts(t), "id": i} for k, t, i in left],
        "k string, t timestamp, id string",
        rows_per_batch=per_batch,
        watermarks=wm,
    )
    b = env.from_collection(
        [{"k": k, "t": ts(t), "id": i} for k, t, i in right],
        "k string, t timestamp, id string",
        rows_per_batch=per_batch,
        watermarks=wm,
    )
    return a, b


def test_interval_join_drops_what_flink_calls_late_and_keeps_every_other_pair_natively_and_by_default(env):
    """The same pairs from Spark's join (on_path('native')) and from the default path (funke's operator)."""
    a, b = streams(env, LEFT, RIGHT, 3)
    joined = a.key_by("k").interval_join(b.key_by("k")).between(fk.milliseconds(-1_000), fk.milliseconds(500))
    native = joined.on_path("native").select("left.k", lid="left.id", rid="right.id", lt="left.t", rt="right.t")
    assert place(native.node).path == "native"
    a2, b2 = streams(env, LEFT, RIGHT, 3)
    default = a2.key_by("k").interval_join(b2.key_by("k")).between(fk.milliseconds(-1_000), fk.milliseconds(500))
    default = default.select("left.k", lid="left.id", rid="right.id", lt="left.t", rt="right.t")
    assert place(default.node).path == "general"
    outs = [native.collect(), default.collect()]
    job = env.execute().wait(timeout=300)
    assert job.done
    by_id = {i: t for _, t, i in LEFT + RIGHT}
    for out in outs:
        assert sorted((r["lid"], r["rid"]) for r in out.rows) == EXPECTED
        assert all(
            timestamp_to_millis(r["lt"]) == by_id[r["lid"]] and timestamp_to_millis(r["rt"]) == by_id[r["rid"]] for r in out.rows
        )


def test_bounded_interval_join_keeps_every_pair_and_exclusive_bounds_apply(env):
    a, b = streams(env, LEFT, RIGHT, None)
    joined = (
        a.key_by("k").interval_join(b.key_by("k")).between(fk.milliseconds(-1_000), fk.milliseconds(500)).lower_bound_exclusive()
    )
    out = joined.select(lid="left.id", rid="right.id").collect()
    env.execute(bounded=True).wait(timeout=300)
    # nothing is late in a bounded run; (-1000) is now outside: (La2, Ra3), (Lb1, Rb1) go
    every = sorted((li, ri) for lk, lt, li in LEFT for rk, rt, ri in RIGHT if lk == rk and -1_000 < rt - lt <= 500)
    assert ("Lb2", "Rb2") in every and ("La2", "Ra3") not in every
    assert sorted((r["lid"], r["rid"]) for r in out.rows) == every


def test_general_interval_join_runs_a_process_join_function_with_flinks_pairs(env):
    """The same streams through .process(ProcessJoinFunction) on funke's two-input operator:
    Flink's pairs, the pair's time = the later element's, the three late rows counted."""
    a, b = streams(env, LEFT, RIGHT, 3)
    pj = a.key_by("k").interval_join(b.key_by("k")).between(fk.milliseconds(-1_000), fk.milliseconds(500))
    pj = pj.process(TimedPairs(), output_schema="lid string, rid string, t bigint")
    assert place(pj.node).path == "general"
    out = pj.collect()
    assert "two-input operator" in env.explain()
    job = env.execute().wait(timeout=300)
    assert job.done
    by_id = {i: t for _, t, i in LEFT + RIGHT}
    assert sorted((r["lid"], r["rid"]) for r in out.rows) == EXPECTED
    assert all(r["t"] == max(by_id[r["lid"]], by_id[r["rid"]]) for r in out.rows)
    assert job.metrics()["late_rows_dropped"] == 3  # La5, Rb2, Ra6


class TimedPairs(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield {"lid": left["id"], "rid": right["id"], "t": ctx.get_timestamp()}


def test_two_input_watermark_is_the_minimum_of_each_scripts_watermark(env):
    """Left's script moves its watermark to 5 s; right's never moves it: the join's watermark stays at
    -infinity, so L2 at 3 s is on time (it would be late by the left's watermark alone) and meets R2."""
    left = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "L1")], timestamps=[1_000])
        .advance_watermark_to(5_000)
        .add_elements([("a", "L2")], timestamps=[3_000])
    )
    right = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "R1")], timestamps=[1_000])
        .add_elements([("a", "R0")], timestamps=[9_000])
        .add_elements([("a", "R2")], timestamps=[3_000])
    )
    a, b = env.from_source(left), env.from_source(right)
    pj = a.key_by("k").interval_join(b.key_by("k")).between(fk.milliseconds(0), fk.milliseconds(0))
    out = pj.process(TimedPairs(), output_schema="lid string, rid string, t bigint")
    projected = pj.select(lid="left.id", rid="right.id", rt="right.event_time")  # scripted time: the general path too
    assert place(projected.node).path == "general"
    result = run(env, out, projected)
    assert_rows(
        result[out],
        [{"lid": "L1", "rid": "R1", "t": 1_000, "_step": 0}, {"lid": "L2", "rid": "R2", "t": 3_000, "_step": 2}],
        ignore=(),
    )
    assert [(r["lid"], r["rid"], timestamp_to_millis(r["rt"]), r["_step"]) for r in result[projected]] == [
        ("L1", "R1", 1_000, 0),
        ("L2", "R2", 3_000, 2),
    ]
    assert result.metrics["late_rows_dropped"] == 0


class Ids(CoGroupFunction):
    def co_group(self, lefts, rights):
        yield {"ls": ",".join(x["id"] for x in lefts), "rs": ",".join(x["id"] for x in rights)}


class Pair(JoinFunction):
    def join(self, left, right):
        return {"ls": left["id"], "rs": right["id"]}


def _tumbling_join_and_co_group(env):
    left = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "L1"), ("a", "L2")], timestamps=[1_000, 12_000])
        .advance_watermark_to(10_000)
        .add_elements([("a", "L3")], timestamps=[5_000])
    )
    right = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "R1")], timestamps=[2_000])
        .advance_watermark_to(20_000)
        .add_elements([("b", "R2")], timestamps=[15_000])
    )
    a, b = env.from_source(left), env.from_source(right)
    tumbling = TumblingEventTimeWindows.of(fk.seconds(10))
    groups = a.co_group(b).where("k").equal_to("k").window(tumbling).apply(Ids(), output_schema="ls string, rs string")
    pairs = a.join(b).where("k").equal_to("k").window(tumbling).apply(Pair(), output_schema="ls string, rs string")
    return groups, pairs


def test_window_join_and_co_group_per_tumbling_window_with_the_late_element_dropped(env, spark, tmp_path):
    """Windows of 10 s. After step 1 the watermark is min(10 s, 20 s): [0, 10 s) fires (L1 + R1);
    L3 at 5 s then is late for it and is dropped; the end of input fires [10 s, 20 s) for a (L2 only:
    the join has no pair there) and for b (R2 only). Bounded, nothing is late (Flink's batch mode):
    L3 joins [0, 10 s), the rest is the same."""
    groups, pairs = _tumbling_join_and_co_group(env)
    result = run(env, groups, pairs)
    assert_rows(
        ms(result[groups]),
        [
            {"k": "a", "window_start": 0, "window_end": 10_000, "ls": "L1", "rs": "R1", "_step": 1},
            {"k": "a", "window_start": 10_000, "window_end": 20_000, "ls": "L2", "rs": "", "_step": 3},
            {"k": "b", "window_start": 10_000, "window_end": 20_000, "ls": "", "rs": "R2", "_step": 3},
        ],
        ignore=(),
    )
    assert_rows(
        ms(result[pairs]), [{"k": "a", "window_start": 0, "window_end": 10_000, "ls": "L1", "rs": "R1", "_step": 1}], ignore=()
    )
    assert result.metrics["late_rows_dropped"] == 2  # L3, once per query

    bounded_env = fk.StreamEnvironment(app="tumbling-bounded", spark=spark, checkpoint_dir=str(tmp_path / "bounded"))
    groups, pairs = _tumbling_join_and_co_group(bounded_env)
    bounded = run(bounded_env, groups, pairs, bounded=True)
    assert_rows(
        ms(bounded[groups]),
        [
            {"k": "a", "window_start": 0, "window_end": 10_000, "ls": "L1,L3", "rs": "R1"},
            {"k": "a", "window_start": 10_000, "window_end": 20_000, "ls": "L2", "rs": ""},
            {"k": "b", "window_start": 10_000, "window_end": 20_000, "ls": "", "rs": "R2"},
        ],
    )
    assert_rows(
        ms(bounded[pairs]),
        [
            {"k": "a", "window_start": 0, "window_end": 10_000, "ls": "L1", "rs": "R1"},
            {"k": "a", "window_start": 0, "window_end": 10_000, "ls": "L3", "rs": "R1"},
        ],
    )
    assert bounded.metrics["late_rows_dropped"] == 0


def _pairs(rows, step=True):
    return sorted(
        (r["k"], r["window_start"], r["window_end"], r["ls"], r["rs"]) + ((r["_step"],) if step else ()) for r in ms(rows)
    )


def _sliding_join(env):
    left = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "L1"), ("a", "L2")], timestamps=[1_000, 7_000])
        .advance_watermark_to(10_000)
        .advance_watermark_to(10_000)
        .add_elements([("a", "L3")], timestamps=[3_000])
    )
    right = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "R1")], timestamps=[4_000])
        .add_elements([("a", "R2")], timestamps=[8_000])
        .advance_watermark_to(12_000)
    )
    a, b = env.from_source(left), env.from_source(right)
    sliding = SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5))
    return a.join(b).where("k").equal_to("k").window(sliding).apply(Pair(), output_schema="ls string, rs string")


def test_window_join_per_sliding_window_with_the_late_element_dropped(env, spark, tmp_path):
    """Windows of 10 s every 5 s. The watermark: -infinity until step 2 (right has none before), then
    min(10 s, 12 s) = 10 s: [-5 s, 5 s) (L1, R1) and [0, 10 s) (L1, L2 x R1, R2) fire at step 2. L3 at
    3 s comes at step 3, late for both its windows, and is dropped. Right's input ends at step 3, left's
    at step 4, where [5 s, 15 s) (L2, R2) fires. Bounded, L3 joins R1 in both its windows and R2 in [0, 10 s)."""
    pairs = _sliding_join(env)
    result = run(env, pairs)
    fired = [
        ("a", -5_000, 5_000, "L1", "R1", 2),
        *[("a", 0, 10_000, lid, rid, 2) for lid in ("L1", "L2") for rid in ("R1", "R2")],
        ("a", 5_000, 15_000, "L2", "R2", 4),
    ]
    assert _pairs(result[pairs]) == sorted(fired)
    assert result.metrics["late_rows_dropped"] == 1  # L3, once (all its windows are late)

    bounded_env = fk.StreamEnvironment(app="sliding-bounded", spark=spark, checkpoint_dir=str(tmp_path / "bounded"))
    pairs = _sliding_join(bounded_env)
    bounded = run(bounded_env, pairs, bounded=True)
    with_late = [f[:5] for f in fired] + [
        ("a", -5_000, 5_000, "L3", "R1"),
        ("a", 0, 10_000, "L3", "R1"),
        ("a", 0, 10_000, "L3", "R2"),
    ]
    assert _pairs(bounded[pairs], step=False) == sorted(with_late)


def _session_join(env):
    left = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "L1")], timestamps=[1_000])
        .add_elements([("a", "L2")], timestamps=[9_000])
        .advance_watermark_to(20_000)
        .add_elements([("a", "L3"), ("b", "Lb")], timestamps=[2_000, 14_000])
    )
    right = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "R1"), ("b", "Rb")], timestamps=[4_000, 18_000])
        .advance_watermark_to(30_000)
    )
    a, b = env.from_source(left), env.from_source(right)
    sessions = EventTimeSessionWindows.with_gap(fk.seconds(5))
    return a.join(b).where("k").equal_to("k").window(sessions).apply(Pair(), output_schema="ls string, rs string")


def test_window_join_per_session_window_merges_both_inputs_and_keeps_a_late_element_that_merges(env, spark, tmp_path):
    """Sessions with a 5 s gap, over both inputs' elements of a key. a: L1 [1 s, 6 s) and R1 [4 s, 9 s)
    merge, L2 [9 s, 14 s) touches them: one session [1 s, 14 s), which fires at step 2 (watermark
    min(20 s, right's end) = 20 s). At step 3, a's L3 at 2 s has only its own session [2 s, 7 s), late:
    dropped. b's Lb at 14 s alone would be late too ([14 s, 19 s)), but it merges first with Rb's open
    session [18 s, 23 s) into [14 s, 23 s), which is not late (Flink merges, then checks): kept, fired
    at the end (step 4). Bounded, L3 is in a's one session too."""
    pairs = _session_join(env)
    result = run(env, pairs)
    fired = [("a", 1_000, 14_000, "L1", "R1", 2), ("a", 1_000, 14_000, "L2", "R1", 2), ("b", 14_000, 23_000, "Lb", "Rb", 4)]
    assert _pairs(result[pairs]) == sorted(fired)
    assert result.metrics["late_rows_dropped"] == 1  # L3

    bounded_env = fk.StreamEnvironment(app="session-bounded", spark=spark, checkpoint_dir=str(tmp_path / "bounded"))
    pairs = _session_join(bounded_env)
    bounded = run(bounded_env, pairs, bounded=True)
    assert _pairs(bounded[pairs], step=False) == sorted([f[:5] for f in fired] + [("a", 1_000, 14_000, "L3", "R1")])
