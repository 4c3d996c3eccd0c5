"""Joins on Spark: the native interval join gives Flink's pairs, lateness included; what needs the
two-input general path says so."""

from __future__ import annotations

import pytest

import funke as fk
from funke.functions import CoGroupFunction, ProcessJoinFunction
from funke.plan.capabilities import place
from funke.semantics.time import timestamp_to_millis
from funke.windows import TumblingEventTimeWindows

from .helpers import ts

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


def test_native_interval_join_drops_what_flink_calls_late_and_keeps_every_other_pair(env):
    a, b = streams(env, LEFT, RIGHT, 3)
    joined = a.key_by("k").interval_join(b.key_by("k")).between(fk.milliseconds(-1_000), fk.milliseconds(500))
    pairs = joined.select("left.k", lid="left.id", rid="right.id", lt="left.t", rt="right.t")
    assert place(pairs.node).path == "native"
    out = pairs.collect()
    job = env.execute().wait(timeout=300)
    assert job.done
    got = sorted((r["lid"], r["rid"]) for r in out.rows)
    assert got == EXPECTED
    by_id = {i: t for _, t, i in LEFT + RIGHT}
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


class Pairs(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield {"lid": left["id"], "rid": right["id"]}


class Lists(CoGroupFunction):
    def co_group(self, lefts, rights):
        yield {"n": len(lefts) + len(rights)}


def test_what_needs_the_two_input_general_path_is_refused_naming_it(env):
    a, b = streams(env, LEFT, RIGHT, 3)
    pj = (
        a.key_by("k")
        .interval_join(b.key_by("k"))
        .between(fk.seconds(-1), fk.seconds(1))
        .process(Pairs(), output_schema="lid string, rid string")
    )
    pj.collect()
    assert place(pj.node).path == "general"
    with pytest.raises(fk.UnsupportedError, match=r"two-input general-path operator.*\.select\('left\.a'"):
        env.execute()
    env2 = fk.StreamEnvironment(app="test2", spark=env.spark, checkpoint_dir=env.checkpoint_dir + "-2")
    a, b = streams(env2, LEFT, RIGHT, 3)
    a.co_group(b).where("k").equal_to("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).apply(
        Lists(), output_schema="n bigint"
    ).collect()
    with pytest.raises(fk.UnsupportedError, match="window join or co-group needs funke's two-input general-path operator"):
        env2.execute()
