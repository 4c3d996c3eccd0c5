"""``set_latency_mode("realtime")`` against the real broker: each allowlisted operator under Spark's real-time
trigger gives what the micro-batch run of the same job gives, the slots are planned, and what the mode cannot
run is refused before any query starts.

Every real-time job here reads topics written before it starts and writes an at-least-once Kafka topic; the
test waits until the topic holds the records it expects (a condition, never a duration), stops the job and
compares with the micro-batch run (``events=N``: it ends, and its windows fire at the end of input).
Keys are written each to one partition (the Kafka key's), so that each key's elements have one order, the
order Flink sees them in too. The shared session has the task slots (``tests/conftest.py``).
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from typing import Any

import pytest

import funke as fk
from funke.errors import UnsupportedError
from funke.runtime.job import JobHandle
from funke.windows import SlidingEventTimeWindows, TumblingEventTimeWindows
from tests.spark import test_kafka_source as kafka_tests
from tests.spark.test_kafka_jvm import read_topic
from tests.spark.test_kafka_source import T0, finish, produce

pytestmark = pytest.mark.spark
bootstrap, topic = kafka_tests.bootstrap, kafka_tests.topic  # the fixtures: the broker, fresh topics
N = 60
SCHEMA = "k string, v bigint"
#: Spark's watermark (the real-time mode's), 1 s behind the record timestamps.
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("kafka_timestamp")


def records(topic_name: str, bootstrap: str, n: int = N, *, offset: int = 0) -> None:
    """Record i: key k<i % 4>, value v = (7 i) % 23, timestamp T0 + i s; the key's partition: i % 4 % 2."""
    produce(bootstrap, topic_name, [
        ((i % 4) % 2, f"k{i % 4}".encode(), json.dumps({"k": f"k{i % 4}", "v": (7 * i + offset) % 23}).encode(), T0 + i * 1000)
        for i in range(n)
    ])  # fmt: skip


def source(t: str, bootstrap: str, **kw) -> Any:
    return fk.sources.kafka(t, schema=SCHEMA, bootstrap=bootstrap, metadata=["timestamp"], partition_watermarks=False, **kw)


def realtime(spark, tmp_path, build, out: str, bootstrap: str, expected: int, name: str) -> list[dict]:
    """Run ``build(env)`` (returning the stream to write) in real-time mode until ``out`` holds ``expected`` records."""
    env = fk.StreamEnvironment(app=f"rt-{name}", spark=spark, checkpoint_dir=str(tmp_path / f"rt-{name}"))
    env.set_latency_mode("realtime")
    stream, key = build(env)
    stream.sink_to(fk.sinks.kafka(out, bootstrap=bootstrap, key=key, delivery="at-least-once"), uid="out")
    assert "funke plan (streaming, real-time)" in env.explain()
    job = env.execute()
    got: list = []
    deadline = time.monotonic() + 300
    while len(got) < expected:
        assert time.monotonic() < deadline, f"{len(got)} of {expected} records in {out} after 300 s"
        job.wait(timeout=0.5)  # raises if the job failed
        got = read_topic(bootstrap, out)
    job.stop()
    assert [q for q in spark.streams.active if q.name and q.name.startswith(f"rt-{name}")] == []
    return [json.loads(v) for _, v, _ in read_topic(bootstrap, out)]


def micro_batch(spark, tmp_path, build, name: str) -> list[dict]:
    """The same job's rows in micro-batches, to the end of the ``events=N`` input."""
    env = fk.StreamEnvironment(app=f"mb-{name}", spark=spark, checkpoint_dir=str(tmp_path / f"mb-{name}"))
    stream, _ = build(env)
    out = stream.collect()
    finish(env.execute())
    return [_as_json(r) for r in out.rows]


def _as_json(row: dict) -> dict:
    """A collected row as the Kafka sink writes it (timestamps in ISO-8601, Z)."""
    return {k: (v.strftime("%Y-%m-%dT%H:%M:%SZ") if hasattr(v, "strftime") else v) for k, v in row.items()}


def test_select_filter_expressions_union_and_lookup_join_give_the_micro_batch_rows(spark, tmp_path, bootstrap, topic):
    a, b, out = topic(2), topic(2), topic(2)
    records(a, bootstrap)
    records(b, bootstrap, offset=5)
    names = fk.table([("k0", "zero"), ("k1", "one"), ("k2", "two")], "k string, name string")

    def build(env, events=None):
        left = env.from_source(source(a, bootstrap, events=events)).select("k", "v", "'a' AS side")
        right = env.from_source(source(b, bootstrap, events=events)).select("k", "v", "'b' AS side")
        joined = left.union(right).filter(fk.col("v") % 3 != 0).select("k", "side", "v * 10 + 1 AS w").join(names, on="k")
        return joined, None

    micro = micro_batch(spark, tmp_path, lambda e: build(e, N), "join")
    rows = realtime(spark, tmp_path, build, out, bootstrap, expected=len(micro), name="join")
    assert Counter(json.dumps(r, sort_keys=True) for r in rows) == Counter(json.dumps(r, sort_keys=True) for r in micro)
    assert {r["name"] for r in rows} == {"zero", "one", "two"}  # k3 has no match: the inner join drops it


@pytest.mark.parametrize("fn", ["count", "sum", "max"])
def test_rolling_aggregates_emit_flinks_update_per_element_and_end_at_the_bounded_value(spark, tmp_path, bootstrap, topic, fn):
    t, out = topic(2), topic(2)
    records(t, bootstrap)

    def build(env, events=None):
        keyed = env.from_source(source(t, bootstrap, events=events)).select("k", "v").key_by("k")
        return (keyed.count() if fn == "count" else getattr(keyed, fn)("v")), "k"

    micro = micro_batch(spark, tmp_path, lambda e: build(e, N), f"rolling-{fn}")
    rows = realtime(spark, tmp_path, build, out, bootstrap, expected=N, name=f"rolling-{fn}")
    # one row per element (not coalesced), each key's in its elements' order: exactly Flink's updates
    assert len(rows) == N == len(micro)
    per_key_rt, per_key_mb = defaultdict(list), defaultdict(list)
    for r in rows:
        per_key_rt[r["k"]].append(r)
    for r in micro:
        per_key_mb[r["k"]].append(r)
    assert per_key_rt == per_key_mb
    bounded = fk.StreamEnvironment(app=f"bounded-{fn}", spark=spark)
    final = build(bounded, N)[0].collect()
    finish(bounded.execute(bounded=True))
    # the bounded run's final value per key (counts and sums of values >= 0 only grow: their largest)
    field = "count" if fn == "count" else "v"
    final_values = {k: max(r[field] for r in rs) for k, rs in _by_key(final.rows).items()}
    assert {k: v[-1][field] for k, v in per_key_rt.items()} == final_values


def _by_key(rows: list[dict]) -> dict[str, list[dict]]:
    out = defaultdict(list)
    for r in rows:
        out[r["k"]].append(r)
    return out


@pytest.mark.parametrize("assigner", ["tumbling", "sliding"])
def test_windows_are_an_upsert_stream_whose_last_update_is_the_micro_batch_result(spark, tmp_path, bootstrap, topic, assigner):
    t, out = topic(2), topic(2)
    records(t, bootstrap)
    windows = (TumblingEventTimeWindows.of(fk.seconds(10)) if assigner == "tumbling"
               else SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5)))  # fmt: skip

    def build(env, events=None):
        keyed = env.from_source(source(t, bootstrap, events=events), WM).key_by("k").window(windows)
        return keyed.sum("v").select("k", "window_start", "window_end", "v"), ["k", "window_start"]

    micro = micro_batch(spark, tmp_path, lambda e: build(e, N), f"window-{assigner}")
    per_element = N * (1 if assigner == "tumbling" else 2)  # every element updates each of its windows
    rows = realtime(spark, tmp_path, build, out, bootstrap, expected=per_element, name=f"window-{assigner}")
    assert len(rows) == per_element
    updates = defaultdict(list)
    for r in rows:
        updates[(r["k"], r["window_start"])].append(r["v"])
    # the last update of each (key, window) is the micro-batch result, and there is no window it lacks
    assert {w: v[-1] for w, v in updates.items()} == {(r["k"], r["window_start"]): r["v"] for r in micro}
    # each update adds the next element of the key: a running sum, never a step back
    assert all(v == sorted(v) for v in updates.values())


def test_a_deduplication_passes_each_keys_first_element_once_as_the_micro_batch_and_bounded_runs_do(spark, tmp_path, bootstrap, topic):
    t, out = topic(2), topic(2)
    records(t, bootstrap)
    # each (k, v % 5)'s first element: its key's elements are in one partition, in the order written
    first: dict[tuple[str, int], int] = {}
    for i in range(N):
        first.setdefault((f"k{i % 4}", (7 * i) % 23 % 5), (7 * i) % 23)
    expected = sorted((k, b, v) for (k, b), v in first.items())

    def build(env, events=None):
        rows = env.from_source(source(t, bootstrap, events=events)).select("k", "v % 5 AS b", "v")
        return rows.key_by(["k", "b"]).deduplicate(), ["k", "b"]

    def triples(rows: list[dict]) -> list[tuple]:
        return sorted((r["k"], r["b"], r["v"]) for r in rows)

    assert triples(micro_batch(spark, tmp_path, lambda e: build(e, N), "dedup")) == expected
    bounded = fk.StreamEnvironment(app="bounded-dedup", spark=spark)
    final = build(bounded, N)[0].collect()
    finish(bounded.execute(bounded=True))
    assert triples(final.rows) == expected
    rows = realtime(spark, tmp_path, build, out, bootstrap, expected=len(expected), name="dedup")
    assert triples(rows) == expected  # (no later element of a key, and each key once)


def test_slots_are_planned_and_a_job_the_session_cannot_hold_is_refused_saying_what_is_missing(spark, tmp_path, bootstrap, topic):
    from funke.spark.realtime import free_slots, local_slots, needed_slots

    wide = topic(3)
    env = fk.StreamEnvironment(app="rt-slots", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    env.set_latency_mode("realtime")
    counted = env.from_source(source(wide, bootstrap)).key_by("k").count()
    counted.sink_to(fk.sinks.kafka(wide, bootstrap=bootstrap, key="k", delivery="at-least-once"))
    # 3 partitions + 2 shuffle partitions + the dead letters' one = 6, and the session has 5
    assert needed_slots(env.sinks, 2) == (6, "the dead letters: 1; sink: 3 Kafka partition(s) + 1 x 2 shuffle partitions")
    assert free_slots(spark) == (5, 5)
    with pytest.raises(UnsupportedError, match=r"needs 6 task slots at once .* has 5 free of 5: start the session with local\[6\]"):
        env.execute()
    assert spark.streams.active == []
    # a local master funke starts gets the slots: local[*] on this machine's cores, local[6] for this job
    assert local_slots("local[2]", 6) == "local[6]" and local_slots("local[8]", 6) is None
    assert local_slots("spark://host:7077", 6) is None


def test_what_the_mode_cannot_run_is_refused_before_any_query_starts(spark, tmp_path, bootstrap, topic):
    t = topic(1)
    env = fk.StreamEnvironment(app="rt-refused", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    env.set_latency_mode("realtime")
    env.from_source(source(t, bootstrap)).map(lambda r: r).sink_to(fk.sinks.kafka(t, bootstrap=bootstrap, delivery="at-least-once"))
    with pytest.raises(UnsupportedError, match=r"map \S*<lambda> .* it runs a Python function"):
        env.execute()
    assert spark.streams.active == []
    # Spark's shortest real-time checkpoint interval is 5 s
    short = fk.StreamEnvironment(app="rt-short", spark=spark, checkpoint_dir=str(tmp_path / "ck2"), checkpoint_interval=fk.seconds(1))
    short.set_latency_mode("realtime")
    short.from_source(source(t, bootstrap)).sink_to(fk.sinks.kafka(t, bootstrap=bootstrap, delivery="at-least-once"))
    with pytest.raises(fk.PlanError, match="checkpoint_interval 1000 ms is below the shortest real-time checkpoint interval"):
        short.execute()
    assert spark.streams.active == []


def test_a_real_time_job_killed_mid_stream_loses_nothing_and_its_keyed_counts_end_exact(bootstrap, tmp_path):
    """SIGKILL of the job's process group between real-time checkpoints, then a restart on the checkpoint
    (``funke bench chaos --mode realtime``): every kind's counts 1..n arrive, the last one n; what was written
    after the last checkpoint is written again (at-least-once): counted, not failed."""
    from funke.bench.chaos_realtime import run

    steps: list[str] = []
    result = run(bootstrap, kills=1, events=1_200, workdir=str(tmp_path), job="rolling count", on_step=steps.append)
    figures = result.figures()
    assert (figures["kills"], figures["runs"]) == (1, 2), (figures, steps)
    assert figures["lost"] == 0 and figures["wrong"] == [] and figures["received"] >= 1_200, (figures, steps)
    assert figures["received"] == figures["expected"] + figures["duplicates"]
