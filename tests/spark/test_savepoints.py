"""Savepoints: pause and resume, upgrade, A/B, time travel, refused restores, the open state format."""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest

import funke as fk
from funke.savepoints import SavepointError, read
from funke.savepoints.checkpoints import BUCKETS
from funke.savepoints.registry import registry
from funke.spark.general.lowering import spark_int_hash
from funke.windows import TumblingEventTimeWindows
from tests.spark.helpers import EVERY, RunningTotal, wait_for_batches

pytestmark = pytest.mark.spark
EVENTS, KEYS, MS_PER_EVENT, RATE, PER_BATCH = 16_000, 4, 5, 800, 2_000  # 20 s of input: the savepoint comes well before its end
def job(spark, tmp_path, *, version: str = "v0", totals: bool = True, aggregate: str = "count") -> tuple[fk.StreamEnvironment, dict[str, Any]]:
    env = fk.StreamEnvironment(app="savepoints", spark=spark, checkpoint_dir=str(tmp_path / f"ck-{time.monotonic_ns()}"))
    source = fk.sources.generator(
        {"key": f"concat('k', cast(i % {KEYS} as string))", "x": "i % 7", "event_time": f"i * {MS_PER_EVENT}"},
        schema="key string, x bigint, event_time bigint",
        events=EVENTS,
        rows_per_second=RATE,
        rows_per_batch=PER_BATCH,
    )
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("event_time", unit="ms")
    keyed = env.from_source(source, wm, uid="events").key_by("key")
    windowed = keyed.window(TumblingEventTimeWindows.of(fk.seconds(1)))
    counted = (windowed.count() if aggregate == "count" else windowed.sum("x", alias="count")).uid("window")
    sinks = {"counts": counted.with_column("version", f"'{version}'").sink_to(fk.sinks.collect(), uid="counts")}
    if totals:
        running = keyed.process(RunningTotal(), output_schema="key string, n bigint", uid="running-total")
        sinks["totals"] = running.sink_to(fk.sinks.collect(), uid="totals")
    return env, sinks


def expected() -> dict[str, Counter]:
    counts: Counter = Counter()
    for i in range(EVENTS):
        counts[(f"k{i % KEYS}", i * MS_PER_EVENT // 1000)] += 1
    totals = Counter((f"k{k}", n) for k in range(KEYS) for n in range(EVERY, EVENTS // KEYS + 1, EVERY))
    return {"counts": Counter((k, w, c) for (k, w), c in counts.items()), "totals": totals}


def rows(sink: Any, *, after: int = -1, upto: int | None = None) -> Counter:
    """A collect sink's rows as comparable tuples, from the batches in (after, upto]."""
    out: Counter = Counter()
    for batch, batch_rows in sink.batches:
        if batch <= after or (upto is not None and batch > upto):
            continue
        for r in batch_rows:
            out[(r["key"], int(r["window_start"].timestamp()), r["count"]) if "window_start" in r else (r["key"], r["n"])] += 1
    return out


def versions(sink: Any) -> set[str]:
    return {r["version"] for r in sink.rows}


def where(handle: Any) -> list[dict[str, Any]]:
    """Each query's state, for a failure message."""
    out = []
    for st in handle.states:
        q = st.query
        last = q.lastProgress if q is not None else None
        out.append({
            "sink": st.sink.uid, "finished": st.finished, "ends": dict(st.end_batch), "batches": st.batches,
            "active": q.isActive if q is not None else None, "status": q.status if q is not None else None,
            "last_batch": last["batchId"] if last else None, "error": str(q.exception())[:500] if q is not None and q.exception() else None,
        })
    return out


@pytest.fixture(scope="module")
def first_run(spark, tmp_path_factory):
    """v0 run to the end, with a savepoint taken while it ran."""
    tmp = tmp_path_factory.mktemp("first")
    env, sinks = job(spark, tmp)
    handle = env.execute(name="sp-first")
    wait_for_batches(handle, 1)
    sp = handle.savepoint(str(tmp / "savepoints"))
    handle.wait(600)
    assert handle.done and not handle.metrics()["resumed"]
    return sp, sinks


def test_a_savepoint_taken_while_the_job_runs_holds_its_state_in_the_open_format(first_run):
    sp, sinks = first_run
    again = read(sp.path)
    assert set(again.batches) == {"counts", "totals"} and again.manifest["job"] == "sp-first"
    assert {op["uid"] for q in again.manifest["queries"].values() for op in q["layout"]} == {"window", "running-total"}
    n = again.batches["counts"]
    state = again.table("window")  # the open windows as of batch n: key, window, count
    assert {"key", "window_start", "window_end", "count"} <= set(state.columns) and len(state) > 0
    # every event read by batch n is either in a window already written or in an open one
    read_by_n = again.manifest["queries"]["counts"]["source_offsets"][0]["i"]
    written = sum(r["count"] for batch, batch_rows in sinks["counts"].batches if batch <= n for r in batch_rows)
    assert state["count"].sum() + written == read_by_n
    # the running total (general path): its value state "n" per key, as JSON, one row per key
    totals = next(op for op in again.manifest["queries"]["totals"]["operators"] if op["uid"] == "running-total")
    assert totals["format"] == "funke-general-v1" and totals["tables"] == {
        "state": "running-total", "timers": "running-total.timers", "buckets": "running-total.buckets"
    }  # fmt: skip
    assert set(totals["tables"].values()) <= set(again.operators())
    n_state = again.table("running-total")
    assert list(n_state.columns) == ["key", "scope", "state", "kind", "namespace", "value", "last_access", "bucket"]
    assert set(zip(n_state["scope"], n_state["state"], n_state["kind"], n_state["namespace"])) == {("user", "n", "value", "void")}
    read_by_totals = again.manifest["queries"]["totals"]["source_offsets"][0]["i"]
    per_key = Counter(f"k{i % KEYS}" for i in range(read_by_totals))
    assert {json.loads(k): json.loads(v) for k, v in zip(n_state["key"], n_state["value"], strict=True)} == dict(per_key)
    assert len(n_state) == len(per_key) and totals["rows"] == len(n_state)
    assert again.table("running-total.timers").empty  # RunningTotal sets no timers
    buckets = again.table("running-total.buckets")
    assert set(n_state["bucket"]) <= set(buckets["bucket"]) and buckets["watermark"].notna().all()
    # each bucket is in the shuffle partition funke placed it in (so the partitions get as many buckets each)
    assert {int(b): int(p) for b, p in zip(buckets["bucket"], buckets["partition_id"], strict=True)} == {
        int(b): spark_int_hash(int(b)) % 2 for b in buckets["bucket"]
    }
    assert str(sp.path) in {s.path for s in registry().savepoints("sp-first")}


def test_time_travel_and_a_b_from_one_savepoint(spark, tmp_path, first_run):
    """v0 again (time travel) and v0.1 (a changed step after the window), side by side from one savepoint."""
    sp, first = first_run
    n = sp.batches
    env_a, a = job(spark, tmp_path, version="v0.1")
    env_b, b = job(spark, tmp_path, version="v0")
    ha = env_a.execute(name="sp-a", from_savepoint=str(sp.path))
    hb = env_b.execute(name="sp-b", from_savepoint=str(sp.path))
    ha.wait(600), hb.wait(600)
    assert ha.metrics()["restored_from"] == str(sp.path)
    # the savepoint says how many key buckets its job's general operators had; a restored job keeps them
    assert ha.bucket_ids == hb.bucket_ids == tuple(int(b) for b in (sp.path / "checkpoint" / BUCKETS).read_text().split(","))
    for uid in ("counts", "totals"):
        before = rows(first[uid], upto=n[uid])
        # the replayed span equals the first run's, and with what the first run wrote before it, the whole result
        assert rows(b[uid]) == rows(first[uid], after=n[uid]), uid
        assert before + rows(b[uid]) == expected()[uid], uid
        assert before + rows(a[uid]) == expected()[uid], uid
    assert versions(a["counts"]) == {"v0.1"} and versions(b["counts"]) == {"v0"}


def test_stop_with_a_savepoint_then_resume_gives_the_uninterrupted_result(spark, tmp_path):
    env, first = job(spark, tmp_path)
    handle = env.execute(name="sp-pause")
    wait_for_batches(handle, 1)
    sp = handle.stop(savepoint=str(tmp_path / "sps"))
    assert registry().job("sp-pause").status == "stopped"
    env2, second = job(spark, tmp_path)
    resumed = env2.execute(name="sp-pause", from_savepoint=str(sp.path)).wait(600)
    assert resumed.metrics()["resumed"] is True
    assert resumed.done, f"the resumed job did not finish: {where(resumed)}"
    for uid in ("counts", "totals"):
        assert rows(first[uid], upto=sp.batches[uid]) + rows(second[uid]) == expected()[uid], uid
    assert registry().job("sp-pause").status == "finished"


def test_restores_that_do_not_fit_are_refused_before_any_record(spark, tmp_path, first_run):
    sp, _ = first_run
    env, _ = job(spark, tmp_path, totals=False)
    with pytest.raises(SavepointError, match=r"holds state of 'totals'.*allow-non-restored-state"):
        env.execute(name="sp-refused", from_savepoint=str(sp.path))
    env, _ = job(spark, tmp_path, aggregate="sum")
    with pytest.raises(SavepointError, match=r"state of window .*\(uid window\) no longer fits: its aggregates was \['count\(\)'\]"):
        env.execute(name="sp-refused", from_savepoint=str(sp.path))
    # dropping the totals is allowed when asked for; the counts go on from the savepoint
    env, sinks = job(spark, tmp_path, totals=False)
    handle = env.execute(name="sp-dropped", from_savepoint=str(sp.path), allow_non_restored_state=True).wait(600)
    assert any("'totals' dropped" in note for note in handle.restore_notes)
    assert rows(sinks["counts"]) + rows(first_run[1]["counts"], upto=sp.batches["counts"]) == expected()["counts"]


def test_the_savepoint_bench_measures_a_savepoint_during_ysb(spark):
    from funke.bench.savepoint import run_savepoint_bench

    r = run_savepoint_bench(campaigns=100, events=400_000, rows_per_batch=40_000, spark=spark)
    assert r["results_exact"], r["mismatches"]
    assert r["batch"] >= 0 and r["size_bytes"] > 0 and r["state_rows"] > 0 and r["batches_during"] >= 1
