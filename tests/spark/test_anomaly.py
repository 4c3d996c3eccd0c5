"""examples/anomaly.py on Spark: per-host baselines learned online (fk.ml.online) find the injected
anomalies, the alerts land in PostgreSQL exactly once, and the baselines survive a savepoint.

Thresholds: the telemetry is deterministic, and plain Python (``anomaly.reference``) finds every
injected anomaly and nothing else at the example's THRESHOLD (precision = recall = 1.0 over 3,200
readings: 14 anomalies). The test asks for precision >= 0.9 and recall >= 0.9, the level an operator
would accept from a detector, so that retuning the example's baseline within reason keeps passing;
and, separately, for exactly the alerts plain Python gives, which pins the job to the reference.
"""

from __future__ import annotations

import time
import uuid

import pytest

import funke as fk
from examples import anomaly
from funke.ml.online import MODEL_STATE, SEEN_STATE
from funke.savepoints import read
from funke.savepoints.general import decode_key, decode_value
from tests.servers import ensure_postgres

pytestmark = pytest.mark.spark
EVENTS = 3_200
#: The savepoint run: paced so that it is stopped mid-input.
PACED_EVENTS, RATE, PER_BATCH = 1_600, 400, 200


def test_alerts_in_postgres_find_the_injected_anomalies(spark, tmp_path):
    dsn = ensure_postgres()
    table = f"anomaly_{uuid.uuid4().hex[:8]}"
    env = anomaly.job(EVENTS, dsn=dsn, table=table, spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    handle = env.execute().wait(300)
    assert handle.done, handle.metrics()
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(f"SELECT host, i, score FROM {table}").fetchall()
        conn.execute(f"DROP TABLE {table}")
    alerts = {(h, i) for h, i, _ in rows}
    assert len(alerts) == len(rows), "an alert was written twice"
    injected = anomaly.injected(EVENTS)
    hits = len(alerts & injected)
    precision, recall = hits / len(alerts), hits / len(injected)
    assert len(injected) >= 12 and precision >= 0.9 and recall >= 0.9, (precision, recall, len(alerts), len(injected))
    want = {
        (r["host"], r["i"]): r["score"]
        for r in anomaly.reference(EVENTS)
        if r["score"] is not None and r["score"] > anomaly.THRESHOLD
    }
    assert {(h, i): s for h, i, s in rows} == want  # the job's scores are plain Python's, to the bit


def paced(spark, tmp_path):
    env = fk.StreamEnvironment(app="anomaly-savepoint", spark=spark, checkpoint_dir=str(tmp_path / f"ck-{time.monotonic_ns()}"))
    scored = anomaly.build(env, anomaly.telemetry(PACED_EVENTS, rate=RATE, rows_per_batch=PER_BATCH))
    return env, scored.sink_to(fk.sinks.collect(), uid="scored")


def wait_for_batches(handle, at_least: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while handle.checkpoints.last_committed("scored") < at_least:
        assert not handle.done, "the job ended before the savepoint: raise PACED_EVENTS or lower RATE"
        assert time.monotonic() < deadline, "the job committed no micro-batch in time"
        handle.wait(timeout=0.2)


def test_a_job_resumed_from_a_savepoint_keeps_every_host_s_baseline(spark, tmp_path):
    want = {r["i"]: r["score"] for r in anomaly.reference(PACED_EVENTS)}

    env, first = paced(spark, tmp_path)
    handle = env.execute(name="anomaly-pause")
    wait_for_batches(handle, 4)
    sp = read(handle.stop(savepoint=str(tmp_path / "sps")).path)
    query = sp.manifest["queries"]["scored"]
    cut = query["source_offsets"][0]["i"]
    assert anomaly.HOSTS * anomaly.WARM_UP < cut < PACED_EVENTS, "the job was not stopped mid-input, past the warm-up"

    # the savepoint, in its open format: each host's baseline is the one plain Python learns from the host's
    # first `seen` readings (the ones the watermark passed; the others wait in state `pending`)
    (op,) = [op for op in query["operators"] if op["uid"] == "baseline"]
    state = sp.table(op["tables"]["state"])
    models = {
        decode_key(k): decode_value(v)
        for k, s, v in zip(state["key"], state["state"], state["value"], strict=True)
        if s == MODEL_STATE
    }
    seen = {
        decode_key(k): decode_value(v)
        for k, s, v in zip(state["key"], state["state"], state["value"], strict=True)
        if s == SEEN_STATE
    }
    assert set(models) == {anomaly.host(h) for h in range(anomaly.HOSTS)}
    for h in range(anomaly.HOSTS):
        learned = seen[anomaly.host(h)]
        assert anomaly.WARM_UP < learned <= len(range(h, cut, anomaly.HOSTS))
        reference = anomaly.Baseline()
        for i in range(h, learned * anomaly.HOSTS, anomaly.HOSTS):
            r = anomaly.reading(i)
            reference.learn_one({"cpu": r["cpu"], "latency_ms": r["latency_ms"]})
        assert repr(models[anomaly.host(h)]) == repr(reference)
        assert {k: m.get() for k, m in models[anomaly.host(h)].level.items()} == {k: m.get() for k, m in reference.level.items()}

    env2, second = paced(spark, tmp_path)
    resumed = env2.execute(name="anomaly-pause", from_savepoint=str(sp.path)).wait(300)
    assert resumed.done and resumed.metrics()["resumed"] is True
    before = [r for b, rows in first.batches if b <= sp.batches["scored"] for r in rows]
    after = second.rows
    assert sorted(r["i"] for r in before + after) == list(range(PACED_EVENTS))  # each reading once
    assert min(r["i"] for r in after) < cut  # readings pending at the cut were scored after the resume
    # the resumed job scores every reading as an uninterrupted run does (a fresh baseline would score null, then otherwise)
    assert {r["i"]: r["score"] for r in before + after} == want
