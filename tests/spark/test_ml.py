"""fk.ml.predict on Spark: a stream scored by a fitted model, streaming and bounded, equals the
model's own predictions on the same rows; rows with a null feature get a null score."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

import funke as fk

pytestmark = pytest.mark.spark
FEATURES = ["x0", "x1", "x2"]


def data(n: int = 300) -> tuple[np.ndarray, list[dict]]:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(n, 3))
    rows = [{"id": i, "x0": float(a), "x1": float(b), "x2": int(c * 10)} for i, (a, b, c) in enumerate(x)]
    rows[5]["x1"] = None  # not scored: null
    matrix = np.array([[r["x0"], r["x1"] if r["x1"] is not None else np.nan, r["x2"]] for r in rows])
    return matrix, rows


@pytest.mark.parametrize("bounded", [False, True])
def test_a_stream_scored_by_scikit_learn_models_equals_their_predictions(env, bounded):
    x, rows = data()
    ok = ~np.isnan(x).any(axis=1)
    y = x[ok] @ [1.5, -2.0, 0.25] + 3.0
    reg = LinearRegression().fit(x[ok], y)
    clf = LogisticRegression().fit(x[ok], np.where(y > 3.0, "high", "low"))
    s = env.from_collection(rows, "id bigint, x0 double, x1 double, x2 int", rows_per_batch=100)
    scored = s.map(fk.ml.predict(reg, FEATURES, "score")).map(fk.ml.predict(clf, FEATURES, "label"))
    sink = scored.map(fk.ml.predict(clf, FEATURES, "p", method="predict_proba")).collect()
    env.execute(bounded=bounded).wait(timeout=180)

    got = {r["id"]: r for r in sink.rows}
    assert sorted(got) == list(range(len(rows)))
    ids = np.flatnonzero(ok)
    np.testing.assert_allclose([got[i]["score"] for i in ids], reg.predict(x[ok]), rtol=1e-9)
    assert [got[i]["label"] for i in ids] == list(clf.predict(x[ok]))
    np.testing.assert_allclose([got[i]["p"] for i in ids], clf.predict_proba(x[ok]), rtol=1e-9)
    assert got[5]["score"] is None and got[5]["label"] is None and got[5]["p"] is None
    assert {k: got[7][k] for k in ("id", "x0", "x1", "x2")} == rows[7]  # the input columns go through


def test_an_onnx_model_scores_the_stream(env, tmp_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.array([[0.5], [-1.0], [2.0]], dtype=np.float32)
    b = np.array([0.25], dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Y"])],
        "linear",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")],
    )
    path = tmp_path / "linear.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    x, rows = data(50)
    sink = env.from_collection(rows, "id bigint, x0 double, x1 double, x2 int").map(fk.ml.predict(str(path), FEATURES)).collect()
    env.execute(bounded=True).wait(timeout=180)
    got = {r["id"]: r["score"] for r in sink.rows}
    ok = ~np.isnan(x).any(axis=1)
    expected = (x[ok].astype(np.float32) @ w + b)[:, 0]
    np.testing.assert_allclose([got[i] for i in np.flatnonzero(ok)], expected, rtol=1e-5)
    assert got[5] is None
