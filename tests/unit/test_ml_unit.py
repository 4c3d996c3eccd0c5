"""fk.ml.predict without Spark: what it adds to a batch, and every refusal while the job is built."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.linear_model import LinearRegression

import funke as fk
from funke.errors import PlanError
from funke.ml.predict import Predict
from funke.plan.types import Schema

SCHEMA = Schema.of("id bigint, a double, b int, name string")


def fitted(n_features: int = 2) -> LinearRegression:
    x = np.arange(20.0 * n_features).reshape(20, n_features) % 7
    return LinearRegression().fit(x, x.sum(axis=1) * 2 + 1)


def test_a_batch_gets_the_model_s_scores_and_rows_with_a_null_feature_get_null():
    p = fk.ml.predict(fitted(), ["a", "b"])
    frame = pd.DataFrame({"id": [1, 2, 3], "a": [1.0, None, 3.0], "b": [2, 5, 1], "name": ["x", "y", "z"]})
    out = p(frame)
    assert list(out.columns) == ["id", "a", "b", "name", "score"]
    assert out["score"][0] == pytest.approx(7.0) and out["score"][2] == pytest.approx(9.0)
    assert pd.isna(out["score"][1])
    assert p.output_schema(SCHEMA).names == ("id", "a", "b", "name", "score")
    assert str(p.output_schema(SCHEMA).get("score")) == "score double"
    assert p(frame.iloc[[1]])["score"].isna().all()  # a batch with nothing to score


def test_transform_gives_one_array_a_row():
    km = KMeans(n_clusters=2, n_init=1, random_state=0).fit(np.array([[0.0, 0], [0, 1], [9, 9], [9, 8]]))
    p = fk.ml.predict(km, ["a", "b"], "distances", method="transform")
    assert p.output_type == "array<double>"
    out = p(pd.DataFrame({"a": [0.0], "b": [0]}))
    np.testing.assert_allclose(out["distances"][0], km.transform([[0.0, 0.0]])[0])


def test_a_pickled_scorer_scores_alike():
    p = fk.ml.predict(fitted(), ["a", "b"])
    frame = pd.DataFrame({"a": [1.0], "b": [2]})
    assert pickle.loads(pickle.dumps(p))(frame)["score"][0] == pytest.approx(p(frame)["score"][0])


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: fk.ml.predict(fitted(), ["a", "zz"]).output_schema(SCHEMA), "no column zz"),
        (lambda: fk.ml.predict(fitted(), ["a", "name"]).output_schema(SCHEMA), r"name \(string\) are not"),
        (lambda: fk.ml.predict(fitted(), ["a", "b"], "id").output_schema(SCHEMA), "already has a column 'id'"),
        (lambda: fk.ml.predict(fitted(3), ["a", "b"]), "fitted on 3 features"),
        (lambda: fk.ml.predict(LinearRegression(), ["a", "b"]), "not fitted"),
        (lambda: fk.ml.predict(LinearRegression, ["a", "b"]), "not the class"),
        (lambda: fk.ml.predict(fitted(), ["a", "b"], method="predict_proba"), "no method predict_proba"),
        (lambda: fk.ml.predict(fitted(), []), "names of the feature columns"),
        (lambda: fk.ml.predict(fitted(), ["a", "a"]), "named twice"),
        (
            lambda: fk.ml.predict(type("PipelineModel", (), {"__module__": "pyspark.ml.pipeline"})(), ["a"]),
            "is not a fitted Spark MLlib model",
        ),
        (lambda: fk.ml.predict(type("PipelineModel", (), {"__module__": "pyspark.ml.pipeline"})(), ["a", "a"]), "named twice"),
        # the scorer run in Python (also fk.ml.serve's) takes no MLlib model: it would be pickled to the workers
        (
            lambda: Predict(type("LinearRegressionModel", (), {"__module__": "pyspark.ml.regression"})(), ("a",), "s", "predict"),
            "holds a JVM object",
        ),
    ],
)
def test_refusals_name_what_is_wrong(build, message):
    with pytest.raises(PlanError, match=message):
        build()


def test_a_stream_map_takes_the_scorer_s_schema_and_checks_it_while_building():
    env = fk.StreamEnvironment(app="ml-unit")
    s = env.from_collection([{"id": 1, "a": 1.0, "b": 2, "name": "x"}], SCHEMA)
    scored = s.map(fk.ml.predict(fitted(), ["a", "b"]))
    assert list(scored.columns) == ["id", "a", "b", "name", "score"]
    with pytest.raises(PlanError, match="no column c"):
        s.map(fk.ml.predict(fitted(), ["a", "c"]))


def test_explain_says_a_python_model_scores_arrow_batches_in_a_udf():
    env = fk.StreamEnvironment(app="ml-unit")
    env.from_collection([{"id": 1, "a": 1.0, "b": 2, "name": "x"}], SCHEMA).map(fk.ml.predict(fitted(), ["a", "b"])).print()
    text = env.explain()
    assert "map predict(LinearRegression.predict(a, b) -> score) [Arrow batches]" in text
    assert "why: Spark scalar Arrow UDF over the feature columns alone" in text


def test_a_model_failing_on_a_batch_names_itself():
    class Broken:
        n_features_in_ = 1

        def predict(self, x):
            raise ValueError("boom")

    with pytest.raises(
        RuntimeError, match=r"predict\(Broken.predict\(a\) -> score\) failed on a batch of 1 rows: ValueError: boom"
    ):
        fk.ml.predict(Broken(), ["a"])(pd.DataFrame({"a": [1.0]}))


def test_onnx_refusals(tmp_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])],
        "linear",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])],
        [numpy_helper.from_array(np.ones((2, 1), dtype=np.float32), "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    p = fk.ml.predict(model, ["a", "b"])
    assert p(pd.DataFrame({"a": [1.0], "b": [2]}))["score"][0] == pytest.approx(3.0)
    assert pickle.loads(pickle.dumps(p))(pd.DataFrame({"a": [1.0], "b": [1]}))["score"][0] == pytest.approx(2.0)
    with pytest.raises(PlanError, match="takes 2 features; features= names 3"):
        fk.ml.predict(model, ["a", "b", "c"])
    with pytest.raises(PlanError, match="method= is for scikit-learn"):
        fk.ml.predict(model, ["a", "b"], method="predict_proba")
    onnx.save(model, str(tmp_path / "m.onnx"))
    assert fk.ml.predict(str(tmp_path / "m.onnx"), ["a", "b"]).output_type == "double"
