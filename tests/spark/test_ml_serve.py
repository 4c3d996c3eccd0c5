"""fk.ml.serve on Spark: a model update sent while the job runs replaces the model on every instance,
bad updates go to the side output and change nothing, and the served model is in the savepoint: the
resumed job scores with the replaced model, not the one its code starts with.

Events and model updates are Parquet files landing in two monitored directories, one at a time; each
step waits until the job has read the file and has nothing left to do, so every event file is read in
a later micro-batch than the update before it. Expected scores are the two models' own, called in
plain Python."""

from __future__ import annotations

import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.linear_model import LinearRegression

import funke as fk
from funke.savepoints import read
from funke.savepoints.general import decode_value

from .helpers import wait_settled

pytestmark = pytest.mark.spark

FEATURES = ["x1", "x2"]
EVENTS_SCHEMA = "id bigint, x1 double, x2 double"
_X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0], [1.0, 4.0]])
V1 = LinearRegression().fit(_X, _X @ [1.0, 2.0] + 1.0)
V2 = LinearRegression().fit(_X, _X @ [3.0, -1.0] + 5.0)
#: Fitted on three features: the scorer takes two.
WIDE = LinearRegression().fit(np.c_[_X, _X[:, 0]], _X @ [1.0, 1.0])


def land(directory, name: str, table: pa.Table) -> None:
    """A Parquet file appears whole in ``directory`` (written beside it, then renamed in)."""
    part = directory.parent / f".{name}.part"
    pq.write_table(table, part)
    os.replace(part, directory / name)


def events(ids: range, *, null_at: int | None = None) -> pa.Table:
    x1 = [float(i % 5) for i in ids]
    x2 = [None if i == null_at else float(i % 3) - 0.5 for i in ids]
    return pa.table({"id": pa.array(list(ids), pa.int64()), "x1": pa.array(x1, pa.float64()), "x2": pa.array(x2, pa.float64())})


def updates(*rows: dict) -> pa.Table:
    return pa.table(
        {
            "version": pa.array([r["version"] for r in rows], pa.string()),
            "model": pa.array([r["model"] for r in rows], pa.binary()),
        }
    )


def expected(model: LinearRegression, version: str, ids: range) -> dict[int, tuple[float, str]]:
    x = np.array([[float(i % 5), float(i % 3) - 0.5] for i in ids])
    return {i: (float(s), version) for i, s in zip(ids, model.predict(x), strict=True)}


def job(spark, tmp_path, ck: str):
    env = fk.StreamEnvironment(app="ml-serve", spark=spark, checkpoint_dir=str(tmp_path / ck))
    every = fk.milliseconds(200)
    rows = env.from_source(fk.sources.files(str(tmp_path / "events"), schema=EVENTS_SCHEMA, monitor_continuously=every))
    models = env.from_source(
        fk.sources.files(str(tmp_path / "models"), schema=fk.ml.MODEL_UPDATE_SCHEMA, monitor_continuously=every)
    )
    scored = rows.connect(models.broadcast(fk.ml.SERVED_MODEL)).process(fk.ml.serve(V1, FEATURES, version="v1"), uid="scorer")
    out = scored.sink_to(fk.sinks.collect(), uid="scored")
    rejected = scored.get_side_output(fk.ml.REJECTED_MODELS).sink_to(fk.sinks.collect(), uid="rejected")
    return env, out, rejected


def read_rows(handle, total: int) -> None:
    """Until the job has read ``total`` rows of its inputs and has nothing left to do."""
    deadline = time.monotonic() + 120
    while sum(s.input_rows for s in handle.states if s.sink.uid == "scored") < total:
        handle.wait(timeout=0.1)
        assert time.monotonic() < deadline, f"the job did not read {total} rows in time"
    wait_settled(handle, timeout=120)


def scores(sink, after: int = -1) -> dict[int, tuple[float | None, str | None]]:
    return {r["id"]: (r["score"], r["model_version"]) for r in sink.rows if r["id"] > after}


def assert_scores(got: dict, want: dict) -> None:
    """The same rows, versions and nulls; scores equal to 1e-12 (a model scoring one row or many may round the last bit apart)."""
    assert sorted(got) == sorted(want)
    for i, (score, version) in got.items():
        assert version == want[i][1] and (score is None) == (want[i][0] is None), (i, got[i], want[i])
        assert score is None or score == pytest.approx(want[i][0], rel=1e-12, abs=1e-12), (i, got[i], want[i])


def test_an_update_replaces_the_model_while_the_job_runs_and_the_savepoint_keeps_it(spark, tmp_path):
    for d in ("events", "models"):
        (tmp_path / d).mkdir()
    env, out, rejected = job(spark, tmp_path, "ck1")
    handle = env.execute(name="ml-serve")
    try:
        land(tmp_path / "events", "e1.parquet", events(range(5)))
        read_rows(handle, 5)
        assert_scores(scores(out), expected(V1, "v1", range(5)))  # the initial model

        land(tmp_path / "models", "m2.parquet", updates(fk.ml.model_row(V2, "v2")))
        read_rows(handle, 6)
        land(tmp_path / "events", "e2.parquet", events(range(5, 11), null_at=10))
        read_rows(handle, 12)
        want = {**expected(V1, "v1", range(5)), **expected(V2, "v2", range(5, 10)), 10: (None, None)}
        assert_scores(scores(out), want)  # replaced while running; a null feature is not scored

        bad = updates(fk.ml.model_row(WIDE, "v3"), {"version": "v4", "model": b"\x80not a pickle"})
        land(tmp_path / "models", "m3.parquet", bad)
        read_rows(handle, 14)
        sp = read(handle.stop(savepoint=str(tmp_path / "sps")).path)
    finally:
        handle.stop()

    # every instance (bucket) rejected both bad updates, each once, and kept v2: in its broadcast state in the savepoint
    (op,) = sp.manifest["queries"]["scored"]["operators"]  # the scorer, the query's one stateful operator
    # a two-input operator is in the query's layout, so its state is matched by its uid on restore and named after it
    assert [o["uid"] for o in sp.manifest["queries"]["scored"]["layout"]] == ["scorer"] and op["uid"] == "scorer"
    buckets = sp.table(op["tables"]["buckets"])
    served = [decode_value(other)["broadcast"]["served_model"] for other in buckets["other"]]
    assert len(served) == buckets["bucket"].nunique() >= 2 and {s["version"] for s in served} == {"v2"}
    assert all(s["model"] == fk.ml.model_row(V2, "v2")["model"] for s in served)
    reasons = {
        "v3": "LinearRegression was fitted on 3 features; features= names 2",
        "v4": "the model bytes do not unpickle: ValueError: unsupported pickle protocol: 110",
    }
    assert sorted((r["version"], r["reason"], r["serving"]) for r in rejected.rows) == sorted(
        [(v, reason, "v2") for v, reason in reasons.items()] * len(served)
    )

    env2, out2, _ = job(spark, tmp_path, "ck2")
    resumed = env2.execute(name="ml-serve", from_savepoint=str(sp.path))
    try:
        assert resumed.metrics()["resumed"] is True
        land(tmp_path / "events", "e3.parquet", events(range(11, 15)))
        read_rows(resumed, 4)
    finally:
        resumed.stop()
    assert_scores(scores(out2), expected(V2, "v2", range(11, 15)))  # the replaced model, not the code's v1 nor a bad one
