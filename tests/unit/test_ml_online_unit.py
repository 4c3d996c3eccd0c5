"""fk.ml.online without Spark: the keyed process function driven by funke's KeyedProcessOperator.

Each row is scored by its key's model as it stood before the row (prequential), then learned
from; the model lives in keyed state, so a snapshot carries it; and every refusal at build time.
"""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest
from river import anomaly, cluster, linear_model
from sklearn.linear_model import SGDRegressor

import funke as fk
from examples import anomaly as example
from funke.errors import PlanError
from funke.ml.online import MODEL_STATE, SEEN_STATE
from funke.plan.types import Schema
from funke.semantics.keyed_process import KeyedProcessOperator

SCHEMA = Schema.of("k string, x double, z double, y double, label string")


def drive(fn, rows, op=None, key="k"):
    """Every row through one operator (keyed by column ``key``), returning the scores in order (and the operator)."""
    op = op or KeyedProcessOperator(fn)
    out = []
    for r in rows:
        (rec,) = op.process_element(r[key], r)
        out.append(rec.value[fn.output])
    return out, op


def line(n, seed=0, keys=("a",)):
    """y = 2x + 1 (+ a little noise), x in [0, 1)."""
    rnd = random.Random(seed)
    rows = []
    for _ in range(n):
        x = rnd.random()
        rows.append({"k": rnd.choice(keys), "x": x, "y": 2 * x + 1 + rnd.gauss(0, 0.01)})
    return rows


def test_a_linear_model_by_sgd_scores_each_row_before_learning_from_it_and_converges():
    fn = fk.ml.online(linear_model.LinearRegression, features=["x"], target="y", output="y_hat")
    rows = line(2_000)
    scores, op = drive(fn, rows)
    # the same model, driven by hand: predict, then learn, row by row
    by_hand, want = linear_model.LinearRegression(), []
    for r in rows:
        want.append(by_hand.predict_one({"x": r["x"]}))
        by_hand.learn_one({"x": r["x"]}, r["y"])
    assert scores == want
    assert scores[0] == 0.0  # the fresh model's guess: the first row does not score itself
    late = [abs(s - r["y"]) for s, r in zip(scores[-200:], rows[-200:], strict=True)]
    assert max(late) < 0.1  # learned y = 2x + 1
    (row,) = [r for r in op.state_backend.export_rows() if r["state"] == f"user:{MODEL_STATE}"]
    assert row["key"] == "a" and row["value"].weights["x"] == pytest.approx(2.0, abs=0.1)


def test_an_sklearn_sgd_regressor_learns_by_partial_fit_and_scores_null_until_its_first_fit():
    fn = fk.ml.online(SGDRegressor(random_state=0, learning_rate="constant", eta0=0.05), features=["x"], target="y")
    rows = line(1_500, seed=1)
    scores, _ = drive(fn, rows)
    assert scores[0] is None
    by_hand = SGDRegressor(random_state=0, learning_rate="constant", eta0=0.05)
    want = [None]
    by_hand.partial_fit(np.array([[rows[0]["x"]]]), [rows[0]["y"]])
    for r in rows[1:]:
        want.append(float(by_hand.predict(np.array([[r["x"]]]))[0]))
        by_hand.partial_fit(np.array([[r["x"]]]), [r["y"]])
    assert scores == want
    assert all(isinstance(s, float) for s in scores[1:])
    assert max(abs(s - r["y"]) for s, r in zip(scores[-100:], rows[-100:], strict=True)) < 0.15


def blobs(n, seed=2):
    """Points around (0, 0) and (10, 10), for keys a and b; which blob each is from."""
    rnd = random.Random(seed)
    rows, blob = [], []
    for _ in range(n):
        c = rnd.randrange(2)
        rows.append({"k": rnd.choice("ab"), "x": 10 * c + rnd.gauss(0, 1), "z": 10 * c + rnd.gauss(0, 1)})
        blob.append(c)
    return rows, blob


def test_streaming_k_means_per_key_learns_the_two_blobs():
    fn = fk.ml.online(lambda: cluster.KMeans(n_clusters=2, halflife=0.2, sigma=3, seed=1), features=["x", "z"], output="cluster")
    assert fn.output_schema(SCHEMA).get("cluster").dtype == "bigint"
    rows, blob = blobs(1_000)
    scores, op = drive(fn, rows)
    assert all(s is None or isinstance(s, int) for s in scores)
    for key in "ab":  # after 200 rows, each key's clusters are the blobs (whatever their numbers)
        pairs = {(s, c) for s, c, r in zip(scores[200:], blob[200:], rows[200:], strict=True) if r["k"] == key}
        assert len(pairs) == 2 and len({s for s, _ in pairs}) == 2, (key, pairs)
    assert sorted(r["key"] for r in op.state_backend.export_rows() if r["state"] == f"user:{MODEL_STATE}") == ["a", "b"]


def test_keys_have_models_of_their_own():
    fn = fk.ml.online(linear_model.LinearRegression, features=["x"], target="y")
    rows = [{"k": "a", "x": 1.0, "y": 5.0}] * 50 + [{"k": "b", "x": 1.0, "y": 0.0}]
    scores, _ = drive(fn, rows)
    assert scores[-1] == 0.0 and scores[-2] > 1  # b's model is fresh, whatever a's learned


def test_a_snapshot_carries_every_key_s_model_so_a_restored_operator_scores_as_an_uninterrupted_one():
    fn = fk.ml.online(anomaly.HalfSpaceTrees(seed=3, n_trees=5, height=4, window_size=20), features=["x", "z"])
    rows, _ = blobs(600, seed=4)
    rows = [{**r, "x": r["x"] / 20 + 0.25, "z": r["z"] / 20 + 0.25} for r in rows]  # HalfSpaceTrees wants [0, 1]
    whole, _ = drive(copy.deepcopy(fn), rows)
    first, op = drive(copy.deepcopy(fn), rows[:350])
    restored = KeyedProcessOperator(copy.deepcopy(fn))
    restored.restore(pickle.loads(pickle.dumps(op.snapshot())))  # what the general path does between batches
    second, _ = drive(restored.function, rows[350:], restored)
    assert first + second == whole
    assert len(set(whole[100:])) > 10  # scores that say something, not a constant
    fresh, _ = drive(copy.deepcopy(fn), rows[350:])
    assert fresh != whole[350:]  # so a lost model would show


def test_in_event_time_order_rows_wait_for_the_watermark_and_are_learned_in_timestamp_order():
    rows = [example.reading(i) for i in range(800)]
    fn = fk.ml.online(example.Baseline, features=["cpu", "latency_ms"], warm_up=example.WARM_UP, order="event_time")
    op, got = KeyedProcessOperator(fn), {}
    rnd = random.Random(5)
    for lo in range(0, 800, 80):  # a "micro-batch" of 80 rows (10 readings a host), shuffled, then its watermark
        batch = rows[lo : lo + 80]
        rnd.shuffle(batch)
        for r in batch:
            assert op.process_element(r["host"], r, r["ts"]) == []  # held until the watermark passes it
        for rec in op.advance_watermark(max(r["ts"] for r in batch)):
            got[rec.value["i"]] = rec.value["score"]
            assert rec.timestamp == rec.value["ts"]
    assert got == {r["i"]: r["score"] for r in example.reference(800)}
    late = {**rows[0], "i": -1}
    (rec,) = op.process_element(late["host"], late, late["ts"])  # behind the watermark: taken at once
    assert rec.value["i"] == -1 and rec.value["score"] > 0
    with pytest.raises(PlanError, match="order= is 'arrival' or 'event_time', got 'time'"):
        fk.ml.online(example.Baseline, features=["cpu"], order="time")


def test_null_features_score_null_and_teach_nothing_a_null_target_is_scored_but_not_learned_and_warm_up():
    fn = fk.ml.online(linear_model.LinearRegression, features=["x"], target="y", warm_up=2)
    rows = [
        {"k": "a", "x": 1.0, "y": 3.0},  # warm-up 1
        {"k": "a", "x": None, "y": 3.0},  # not scorable: null, not learned
        {"k": "a", "x": float("nan"), "y": 3.0},  # likewise
        {"k": "a", "x": 1.0, "y": None},  # warm-up still (only one row learned): null; and not learned
        {"k": "a", "x": 1.0, "y": 3.0},  # warm-up 2
        {"k": "a", "x": 1.0, "y": None},  # scored
    ]
    scores, op = drive(fn, rows)
    assert scores[:5] == [None] * 5 and isinstance(scores[5], float) and scores[5] > 0
    seen = {r["state"]: r["value"] for r in op.state_backend.export_rows()}
    assert seen[f"user:{SEEN_STATE}"] == 2


def test_the_example_s_baseline_scores_as_its_reference_when_driven_by_the_operator():
    rows = [example.reading(i) for i in range(1_600)]
    fn = example.scorer()
    scores, _ = drive(fn, rows, key="host")
    assert scores == [r["score"] for r in example.reference(1_600)]
    alerts = {(r["host"], r["i"]) for r, s in zip(rows, scores, strict=True) if s is not None and s > example.THRESHOLD}
    assert alerts == example.injected(1_600) and alerts


def test_output_schemas_and_types():
    reg = fk.ml.online(linear_model.LinearRegression, features=["x", "z"], target="y", output="y_hat")
    assert reg.output_schema(SCHEMA).names == (*SCHEMA.names, "y_hat")
    assert reg.output_schema(SCHEMA).get("y_hat").dtype == "double"
    clf = fk.ml.online(linear_model.LogisticRegression(), features=["x"], target="label", output="guess")
    assert clf.kind == "classifier" and clf.output_schema(SCHEMA).get("guess").dtype == "string"
    det = fk.ml.online(anomaly.HalfSpaceTrees, features=["x"])
    assert det.kind == "anomaly" and det.output_schema(SCHEMA).get("score").dtype == "double"
    assert repr(det) == "online(HalfSpaceTrees, anomaly: x -> score)"


def test_refusals_say_what_is_wrong():
    with pytest.raises(PlanError, match=r"object\(\) is not a model|is not a model"):
        fk.ml.online(object(), features=["x"])
    with pytest.raises(PlanError, match="HalfSpaceTrees is an anomaly detector, it learns no target: drop target='y'"):
        fk.ml.online(anomaly.HalfSpaceTrees, features=["x"], target="y")
    with pytest.raises(PlanError, match="a feature column is named twice"):
        fk.ml.online(anomaly.HalfSpaceTrees, features=["x", "x"])
    with pytest.raises(PlanError, match="warm_up= is a number of rows"):
        fk.ml.online(anomaly.HalfSpaceTrees, features=["x"], warm_up=-1)
    with pytest.raises(PlanError, match="no column nope in the stream"):
        fk.ml.online(anomaly.HalfSpaceTrees, features=["nope"]).output_schema(SCHEMA)
    with pytest.raises(PlanError, match=r"must be numbers or booleans; label \(string\) are not"):
        fk.ml.online(anomaly.HalfSpaceTrees, features=["label"]).output_schema(SCHEMA)
    with pytest.raises(PlanError, match="the stream already has a column 'y'"):
        fk.ml.online(anomaly.HalfSpaceTrees, features=["x"], output="y").output_schema(SCHEMA)


def test_keyed_process_takes_the_output_schema_from_the_function():
    env = fk.StreamEnvironment(app="online-unit")
    keyed = env.from_collection([], SCHEMA).key_by(SCHEMA.names[0])
    scored = keyed.process(fk.ml.online(anomaly.HalfSpaceTrees, features=[SCHEMA.names[1]]), uid="baseline")
    assert list(scored.columns) == [*SCHEMA.names, "score"]


def _windows_by_hand(model, rows, size, target="y"):
    """Per key, per window of ``size`` ms in time order: score every row with the model as the window
    found it, then one partial_fit on the window's rows (the contract of window=)."""
    models, want = {}, {}
    for w in sorted({r["t"] // size for r in rows}):
        for k in sorted({r["k"] for r in rows}):
            mine = sorted((r for r in rows if r["k"] == k and r["t"] // size == w), key=lambda r: r["t"])
            if not mine:
                continue
            m = models.setdefault(k, copy.deepcopy(model))
            x = np.asarray([[r["x"]] for r in mine])
            fitted = hasattr(m, "coef_") or hasattr(m, "cluster_centers_")
            scores = m.predict(x) if fitted else [None] * len(mine)
            want.update({r["i"]: None if s is None else float(s) for r, s in zip(mine, scores, strict=True)})
            m.partial_fit(x, [r[target] for r in mine]) if target else m.partial_fit(x)
    return want


def test_window_updates_each_key_s_model_once_per_window_with_the_window_s_rows_scored_before():
    rnd = random.Random(11)
    rows = []
    for i in range(300):
        x = rnd.random()
        rows.append({"i": i, "k": rnd.choice("ab"), "x": x, "y": 3 * x - 1, "t": i * 10 + rnd.randrange(0, 40)})
    model = SGDRegressor(random_state=0, learning_rate="constant", eta0=0.05)
    fn = fk.ml.online(model, features=["x"], target="y", window=fk.milliseconds(200))
    assert "per 200 ms window" in repr(fn)
    op, got = KeyedProcessOperator(fn), {}
    for lo in range(0, 300, 50):  # micro-batches of 50 rows, each followed by its watermark
        batch = rows[lo : lo + 50]
        for r in batch:
            assert op.process_element(r["k"], r, r["t"]) == []
        for rec in op.advance_watermark(max(r["t"] for r in batch) - 40):
            got[rec.value["i"]] = rec.value["score"]
            assert rec.timestamp % 200 == 199  # a window's rows come out at its end
    for rec in op.advance_watermark(10**9):
        got[rec.value["i"]] = rec.value["score"]
    want = _windows_by_hand(model, rows, 200)
    assert got.keys() == want.keys() == {r["i"] for r in rows}
    first = {k: min(r["t"] // 200 for r in rows if r["k"] == k) for k in "ab"}
    unscored = {r["i"] for r in rows if r["t"] // 200 == first[r["k"]]}  # a key's first window: nothing learned yet
    assert {i for i, v in got.items() if v is None} == {i for i, v in want.items() if v is None} == unscored
    assert {i: v for i, v in got.items() if v is not None} == pytest.approx(
        {i: v for i, v in want.items() if v is not None}, rel=1e-12, abs=1e-12
    )


def test_mini_batch_k_means_learns_per_window_which_a_row_at_a_time_cannot():
    from sklearn.cluster import MiniBatchKMeans

    rnd = random.Random(3)
    rows = [
        {"i": i, "k": "a", "x": (0.0 if i % 2 else 10.0) + rnd.gauss(0, 0.1), "t": i} for i in range(120)
    ]  # two groups, alternating
    model = MiniBatchKMeans(n_clusters=2, random_state=0, n_init=1)
    fn = fk.ml.online(model, features=["x"], window=40)
    op = KeyedProcessOperator(fn)
    for r in rows:
        op.process_element("a", r, r["t"])
    got = {rec.value["i"]: rec.value["score"] for rec in op.advance_watermark(10**9)}
    assert got == _windows_by_hand(model, rows, 40, target=None)
    later = [got[i] for i in range(40, 120)]
    assert None not in later and len({got[i] for i in range(40, 120, 2)}) == 1 != len(set(later))  # groups apart


def test_a_late_row_is_a_window_of_its_own_and_pending_windows_survive_a_snapshot():
    model = SGDRegressor(random_state=0)
    fn = fk.ml.online(model, features=["x"], target="y", window=100)
    op = KeyedProcessOperator(fn)
    rows = [{"i": i, "k": "a", "x": i / 10, "y": i / 5, "t": i * 30} for i in range(10)]
    for r in rows[:6]:
        op.process_element("a", r, r["t"])
    first = op.advance_watermark(150)  # window [0, 100) fires
    assert [rec.value["i"] for rec in first] == [0, 1, 2, 3]
    restored = KeyedProcessOperator(copy.deepcopy(fn))
    restored.restore(pickle.loads(pickle.dumps(op.snapshot())))
    late = {"i": 99, "k": "a", "x": 0.5, "y": 1.0, "t": 10}
    (rec,) = restored.process_element("a", late, late["t"])  # behind the watermark: scored and learned at once
    assert rec.value["i"] == 99 and rec.value["score"] is not None
    for r in rows[6:]:
        restored.process_element("a", r, r["t"])
    assert [rec.value["i"] for rec in restored.advance_watermark(10**9)] == [4, 5, 6, 7, 8, 9]
    with pytest.raises(PlanError, match="drop order="):
        fk.ml.online(model, features=["x"], target="y", window=100, order="arrival")
    with pytest.raises(PlanError, match="longer than 0 ms"):
        fk.ml.online(model, features=["x"], target="y", window=0)
    with pytest.raises(PlanError, match="window= takes a duration"):
        fk.ml.online(model, features=["x"], target="y", window="10s")
