"""Random out-of-order streams through the interval join on Spark's native path (on_path('native')) and
on funke's general path (the default), funke/semantics' operator and a pair-by-pair computation of
Flink's result: they agree, the native path up to the one documented edge (why the default is the
general path).

The schedule is the native path's (tests/spark/test_paths_agree.py): micro-batch ``n``'s elements of
both sides, then Flink's watermark ``min over sides (max event time of batches 0..n-1) - bound - 1``.
Spark emits every pair of on-time elements; Flink's operator also loses a pair whose second element
arrives exactly at the watermark after the first one's cleanup timer fired at that same watermark.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funke as fk
from funke.semantics.joins import IntervalJoinOperator, ProcessJoinFunction

from ..semantics.support import interval_join_reference
from .helpers import ts

pytestmark = pytest.mark.spark

BOUND = 3
BASE = 1_000  # Spark's watermark starts at the epoch: keep event times above it


class Ids(ProcessJoinFunction):
    """Yields (left, right, time) of the pair: ids on Spark (rows), the values themselves in the operator."""

    def process_element(self, left, right, ctx):
        if isinstance(left, dict):
            left, right = left["id"], right["id"]
        yield (left, right, ctx.get_timestamp())


def schedule(left, right, per_batch):
    """The script both sides make under the micro-batch schedule: elements, then watermarks."""
    script: list[tuple] = []
    before: dict[str, int | None] = {"L": None, "R": None}  # max event time of batches 0..n-1
    batches = -(-max(len(left), len(right)) // per_batch)
    for b in range(batches):
        chunks = {side: rows[b * per_batch : (b + 1) * per_batch] for side, rows in (("L", left), ("R", right))}
        for side, chunk in chunks.items():
            script += [(side, k, i, t) for k, t, i in chunk]
        if all(m is not None for m in before.values()):  # after batch b: batches 0..b-1's maximum
            script.append(("W", min(before.values()) - BOUND - 1))  # type: ignore[type-var]
        for side, chunk in chunks.items():
            if chunk:
                top = max(t for _, t, _ in chunk)
                before[side] = top if before[side] is None else max(before[side], top)
    return script


side_rows = st.lists(st.tuples(st.sampled_from("ab"), st.integers(BASE, BASE + 25)), min_size=2, max_size=9)


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.tuples(side_rows, side_rows), per_batch=st.sampled_from([2, 3]), lower=st.integers(-6, 4), width=st.integers(0, 6))
def test_native_and_general_interval_join_semantics_and_reference_agree(spark, tmp_path_factory, rows, per_batch, lower, width):
    compare(spark, tmp_path_factory, rows, per_batch, lower, width)


def test_the_edge_flink_loses_and_spark_keeps(spark, tmp_path_factory):
    # Batch 1's maximum (1006 on both sides) makes Flink's watermark 1006 - 3 - 1 = 1002 after batch 2;
    # it fires L0's cleanup timer (1000 + upper 2). In batch 2, R4 at 1002 is on time (not below 1002)
    # and would meet L0: Flink has just removed L0, Spark (watermark 1006 - 5 = 1001) still holds it.
    # R5 at 1001 is late for both.
    left = [("a", 1_000), ("b", 1_006), ("b", 1_006), ("b", 1_006), ("b", 1_006), ("b", 1_006)]
    right = [("b", 1_006), ("b", 1_006), ("b", 1_006), ("b", 1_006), ("a", 1_002), ("a", 1_001)]
    flink, on_time, native = compare(spark, tmp_path_factory, (left, right), 2, 0, 2, general=False)
    assert {(lv, rv) for lv, rv, _ in set(on_time) - set(flink)} == {("L0", "R4")}
    assert ("L0", "R4") in native and ("L0", "R5") not in native
    # the default path (no on_path) loses it too, as Flink does: exactly Flink's pairs
    default = run_join(spark, tmp_path_factory, left_rows(left), right_rows(right), 2, 0, 2, how="default")
    assert sorted((r["lid"], r["rid"]) for r in default) == sorted((lv, rv) for lv, rv, _ in flink)


def left_rows(rows):
    return [(k, t, f"L{i}") for i, (k, t) in enumerate(rows)]


def right_rows(rows):
    return [(k, t, f"R{i}") for i, (k, t) in enumerate(rows)]


def run_join(spark, tmp_path_factory, left, right, per_batch, lower, upper, how) -> list[dict]:
    """One streaming job over both sides: ``how`` = "process" (Ids on the general path), "native"
    (on_path('native').select) or "default" (.select, the general path)."""
    env = fk.StreamEnvironment(app="join-props", spark=spark, checkpoint_dir=str(tmp_path_factory.mktemp("ck")))
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(BOUND)).with_timestamp_assigner("t")
    schema = "k string, t timestamp, id string"
    a = env.from_collection([{"k": k, "t": ts(t), "id": i} for k, t, i in left], schema, rows_per_batch=per_batch, watermarks=wm)
    b = env.from_collection([{"k": k, "t": ts(t), "id": i} for k, t, i in right], schema, rows_per_batch=per_batch, watermarks=wm)
    joined = a.key_by("k").interval_join(b.key_by("k")).between(fk.milliseconds(lower), fk.milliseconds(upper))
    if how == "process":
        out = joined.process(Ids(), output_schema="lid string, rid string, t bigint").collect()
    elif how == "native":
        out = joined.on_path("native").select(lid="left.id", rid="right.id").collect()
    else:
        out = joined.select(lid="left.id", rid="right.id").collect()
    assert env.execute().wait(timeout=300).done
    return out.rows


def compare(spark, tmp_path_factory, rows, per_batch, lower, width, general=True):
    """Run them all (the general path unless ``general=False``); check they agree up to the edge; return
    (Flink's pairs, on-time pairs, Spark's pairs)."""
    upper = lower + width
    n = min(len(rows[0]), len(rows[1]))  # equal lengths: both sides' batches line up, and both end together
    left, right = left_rows(rows[0][:n]), right_rows(rows[1][:n])
    script = schedule(left, right, per_batch)

    op = IntervalJoinOperator(Ids(), lower=lower, upper=upper)
    got = []
    for s in script:
        if s[0] == "W":
            got += op.advance_watermark(s[1])
        else:
            got += (op.process_element1 if s[0] == "L" else op.process_element2)(s[1], s[2], s[3])
    flink = interval_join_reference(script, lower, upper)
    assert sorted(r.value for r in got) == flink

    def run(general: bool) -> list[dict]:
        return run_join(spark, tmp_path_factory, left, right, per_batch, lower, upper, "process" if general else "native")

    # the general path runs Flink's operator under the same schedule: exactly Flink's pairs and times
    if general:
        assert sorted((r["lid"], r["rid"], r["t"]) for r in run(general=True)) == flink
    native = sorted((r["lid"], r["rid"]) for r in run(general=False))

    on_time = interval_join_reference(script, lower, upper, cleanup=False)
    assert native == sorted((lv, rv) for lv, rv, _ in on_time)
    # what Flink loses and Spark keeps: only pairs whose second element came exactly at the watermark
    arrival = {}
    wm_now = None
    for s in script:
        if s[0] == "W":
            wm_now = s[1] if wm_now is None else max(wm_now, s[1])
        else:
            arrival[s[2]] = (script.index(s), s[3], wm_now)
    for lv, rv, _ in sorted(set(on_time) - set(flink)):
        (li, lt, lw), (ri, rt, rw) = arrival[lv], arrival[rv]
        second_t, second_wm = (rt, rw) if li < ri else (lt, lw)
        assert second_t == second_wm, (lv, rv)
    return flink, on_time, native
