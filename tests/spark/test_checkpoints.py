"""Checkpoints: a job started again under the same name resumes; a finished job or fresh=True starts clean."""

from __future__ import annotations

import dataclasses
import time

import pytest

import examples.ysb as ysb
import funke as fk
from funke.savepoints.checkpoints import FINISHED, Checkpoints
from funke.spark.general.lowering import balanced_bucket_ids
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark
EVENTS, RATE, PER_BATCH = 30_000, 50_000, 4_000


def ysb_job(spark, checkpoint, out):
    env = fk.StreamEnvironment(app="resume", spark=spark, checkpoint_dir=str(checkpoint))
    source = dataclasses.replace(ysb.events(EVENTS, rate=RATE), rows_per_batch=PER_BATCH)  # >= 8 micro-batches
    ysb.pipeline(env, source).sink_to(fk.sinks.files(str(out), overwrite=True), uid="counts")
    return env


def counts(spark, path):
    return sorted(tuple(r) for r in spark.read.parquet(str(path)).collect())


def test_a_stopped_job_resumes_where_it_stopped_and_a_finished_one_starts_clean(spark, tmp_path):
    ck, out = tmp_path / "ck", tmp_path / "out"
    first = ysb_job(spark, ck, out).execute()
    deadline = time.monotonic() + 120
    while first.metrics()["input_rows"] == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    first.stop()
    m1 = first.metrics()
    assert 0 < m1["input_rows"] < EVENTS and m1["resumed"] is False
    assert not Checkpoints(str(ck)).finished()

    second = ysb_job(spark, ck, out).execute().wait(300)
    m2 = second.metrics()
    assert m2["resumed"] is True and second.done
    # the second run read only what the first had not committed: together exactly the events, once
    assert m1["input_rows"] + m2["input_rows"] >= EVENTS and m2["input_rows"] < EVENTS
    resumed = counts(spark, out)
    assert sum(r[3] for r in resumed) == ysb.expected_view_count(EVENTS)
    assert (ck / FINISHED).exists()

    # the job reached the end of its input: started again it runs from the beginning ...
    third = ysb_job(spark, ck, out).execute().wait(300)
    assert third.metrics()["resumed"] is False and third.metrics()["input_rows"] == EVENTS
    assert counts(spark, out) == resumed
    # ... and fresh=True starts clean even from a half-done run
    fourth = ysb_job(spark, ck, out).execute()
    while fourth.metrics()["input_rows"] == 0 and time.monotonic() < deadline + 120:
        time.sleep(0.2)
    fourth.stop()
    fifth = ysb_job(spark, ck, out).execute(fresh=True).wait(300)
    assert fifth.metrics()["resumed"] is False and fifth.metrics()["input_rows"] == EVENTS
    assert counts(spark, out) == resumed


def test_checkpoint_roots_by_job_name_and_uri(tmp_path):
    env = fk.StreamEnvironment(app="named")
    assert Checkpoints.for_job(env, "other").root.endswith("/jobs/other/checkpoint")
    local = Checkpoints(f"file://{tmp_path}/ck")
    assert not local.uri and not local.has_progress()
    local.mark_finished()
    assert local.finished() and not local.has_progress() and (tmp_path / "ck" / FINISHED).exists()
    local.wipe()
    assert not (tmp_path / "ck").exists()
    env.from_collection([{"a": 1}]).print()
    with pytest.raises(fk.PlanError, match="job name"):
        env.execute(name="no spaces")


def test_queries_that_ended_are_not_waited_for_after_a_restart(spark, tmp_path):
    """Killed after its queries ended but before the job noted its end: the restart finishes at once."""
    ck = tmp_path / "ck"

    def two_sinks():
        env = fk.StreamEnvironment(app="ended", spark=spark, checkpoint_dir=str(ck))
        s = env.from_collection([{"k": "a", "v": i} for i in range(6)], rows_per_batch=3)
        s.sink_to(fk.sinks.files(str(tmp_path / "all"), overwrite=True), uid="all")
        s.filter(fk.col("v") > 2).sink_to(fk.sinks.files(str(tmp_path / "big"), overwrite=True), uid="big")
        return env

    two_sinks().execute().wait(120)
    (ck / FINISHED).unlink()  # as if killed just before the job's own end marker
    assert (ck / f"{FINISHED}_all").exists() and (ck / f"{FINISHED}_big").exists()
    again = two_sinks().execute().wait(60)
    assert again.done and again.metrics()["resumed"] is True and again.metrics()["input_rows"] == 0
    assert sorted(r["v"] for r in spark.read.parquet(str(tmp_path / "big")).collect()) == [3, 4, 5]


def test_a_user_function_that_throws_fails_the_job_with_its_traceback_and_a_restart_resumes(spark, tmp_path):
    flag = tmp_path / "broken"
    flag.touch()

    def tripwire(row):
        if row["v"] == 7 and flag.exists():
            raise ValueError(f"tripped at v={row['v']}")
        return {**row, "v2": row["v"] * 2}

    def job():
        env = fk.StreamEnvironment(app="tripwire", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        s = env.from_collection([{"k": "a", "v": i} for i in range(12)], rows_per_batch=4)
        s.map(tripwire, output_schema="k string, v bigint, v2 bigint").sink_to(fk.sinks.files(str(tmp_path / "out"), overwrite=True), uid="out")
        return env

    with pytest.raises(fk.JobFailedError) as failed:
        job().execute().wait(120)
    message = str(failed.value)
    assert "ValueError: tripped at v=7" in message and "in tripwire" in message  # the user's own traceback
    assert sorted(r["v"] for r in spark.read.parquet(str(tmp_path / "out")).collect()) == [0, 1, 2, 3]  # batches before it

    flag.unlink()  # the bug is fixed; the job starts again from its checkpoint
    again = job().execute().wait(120)
    assert again.metrics()["resumed"] is True
    assert sorted(r["v2"] for r in spark.read.parquet(str(tmp_path / "out")).collect()) == [2 * i for i in range(12)]


def test_a_query_that_read_its_end_before_a_crash_finishes_after_the_restart(spark, tmp_path):
    """Killed after the end of input was read (and maybe acted on) but before any end marker was written."""
    ck = tmp_path / "ck"

    def windowed():
        env = fk.StreamEnvironment(app="ended-windows", spark=spark, checkpoint_dir=str(ck))
        wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("t", unit="ms")
        s = env.from_collection([{"k": "a", "t": i * 4_000} for i in range(6)], "k string, t bigint", rows_per_batch=3, watermarks=wm)
        s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().sink_to(fk.sinks.files(str(tmp_path / "out"), overwrite=True), uid="w")
        return env

    windowed().execute().wait(120)
    for marker in ck.glob(f"{FINISHED}*"):
        marker.unlink()
    assert list(ck.glob("_END_w__*"))  # the end row's batch, noted when it was read
    again = windowed().execute().wait(60)
    assert again.done and again.metrics()["resumed"] is True
    assert sorted(r["count"] for r in spark.read.parquet(str(tmp_path / "out")).collect()) == [1, 2, 3]


class Count(fk.functions.KeyedProcessFunction):
    """Each element's key and that key's count so far (keyed value state on the general path)."""

    def open(self, ctx):
        self.n = ctx.get_state(fk.state.ValueStateDescriptor("n", int))

    def process_element(self, value, ctx):
        n = (self.n.value() or 0) + 1
        self.n.update(n)
        yield {"k": value["k"], "n": n}


def test_a_job_resumed_on_other_cores_keeps_its_key_buckets(spark, tmp_path, monkeypatch):
    """A key's state is in the bucket its hash names among the job's bucket count (four a core when it
    started): a run resumed with other cores keeps that count, so each key's state goes on where it was."""
    from funke.runtime import start

    flag = tmp_path / "broken"
    flag.touch()
    rows = [{"k": f"k{i % 16}", "v": i} for i in range(96)]

    def tripwire(row):
        if row["v"] == 60 and flag.exists():
            raise ValueError("stopped here")
        return row

    def job():
        env = fk.StreamEnvironment(app="buckets", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        s = env.from_collection(rows, "k string, v bigint", rows_per_batch=16).map(tripwire, output_schema="k string, v bigint")
        s.key_by("k").process(Count(), output_schema="k string, n bigint").sink_to(
            fk.sinks.files(str(tmp_path / "out"), overwrite=True), uid="out"
        )
        return env

    with monkeypatch.context() as m:  # the first run on one core: 4 buckets
        m.setattr(start, "session_cores", lambda *a, **k: 1)
        with pytest.raises(fk.JobFailedError, match="stopped here"):
            job().execute().wait(120)
    first_buckets = Checkpoints(str(tmp_path / "ck")).recorded_buckets()
    assert first_buckets == balanced_bucket_ids(4, 2)
    flag.unlink()
    again = job().execute().wait(120)  # on this session's two cores, which would make 8 buckets
    assert again.metrics()["resumed"] is True and again.bucket_ids == first_buckets
    counts = {}
    for r in spark.read.parquet(str(tmp_path / "out")).collect():
        counts[r["k"]] = max(counts.get(r["k"], 0), r["n"])
    assert counts == {f"k{i}": 6 for i in range(16)}  # (8 buckets would have restarted the moved keys' counts)
