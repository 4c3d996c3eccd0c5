"""fk.ml.serve without Spark: the broadcast process function driven by funke's BroadcastProcessOperator.

An update replaces the model for every row after it; rows before any model score null; a bad update
goes to the side output with its reason and the previous model goes on serving; null features score
null; the model lives in broadcast state, so a snapshot carries it; and every refusal at build time.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

import funke as fk
from funke.errors import PlanError
from funke.ml.serve import _DECODED
from funke.plan.types import Schema
from funke.savepoints.general import decode_value, encode_value
from funke.semantics.broadcast import BroadcastProcessFunction, BroadcastProcessOperator
from funke.semantics.state import MapStateDescriptor

EVENTS = Schema.of("id bigint, x1 double, x2 int, name string")
UPDATES = Schema.of(fk.ml.MODEL_UPDATE_SCHEMA)
_X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0], [1.0, 4.0]])
V1 = LinearRegression().fit(_X, _X @ [1.0, 2.0] + 1.0)  # 1 + x1 + 2 x2
V2 = LinearRegression().fit(_X, _X @ [3.0, -1.0] + 5.0)  # 5 + 3 x1 - x2
WIDE = LinearRegression().fit(np.c_[_X, _X[:, 0]], _X @ [1.0, 1.0])  # three features


def operator(fn):
    return BroadcastProcessOperator(fn, (fk.ml.SERVED_MODEL,))


def score(op, x1, x2=1.0, t=None):
    """One row through the operator: (score, model version)."""
    (rec,) = op.process_element(None, {"id": 1, "x1": x1, "x2": x2}, t)
    assert rec.tag is None and rec.timestamp == t
    return rec.value["score"], rec.value["model_version"]


def update(op, model, version=None, t=None):
    """One update (a model and its version, or a whole row) through the operator: the rejections it sent."""
    row = model if isinstance(model, dict) else fk.ml.model_row(model, version)
    out = op.process_broadcast_element(row, t)
    assert all(r.tag == fk.ml.REJECTED_MODELS for r in out)
    return [r.value for r in out]


def plain(model, x1, x2):
    return float(model.predict(np.array([[x1, x2]]))[0])


def test_an_update_replaces_the_model_for_every_row_after_it():
    op = operator(fk.ml.serve(V1, ["x1", "x2"], version="v1"))
    assert score(op, 2.0, 3.0, t=1_000) == (pytest.approx(9.0), "v1")
    assert update(op, V2, "v2") == []
    assert score(op, 2.0, 3.0) == (pytest.approx(8.0), "v2")
    assert score(op, 0.5, -1.0) == (pytest.approx(plain(V2, 0.5, -1.0)), "v2")
    assert update(op, V1, 3) == []  # a rollback: the old bytes again, under a new (int) version
    assert score(op, 2.0, 3.0) == (pytest.approx(9.0), "3")


def test_without_an_initial_model_rows_score_null_until_the_first_update():
    op = operator(fk.ml.serve(None, ["x1", "x2"]))
    assert score(op, 2.0, 3.0) == (None, None)
    update(op, V2, "v2")
    assert score(op, 2.0, 3.0) == (pytest.approx(8.0), "v2")


def test_the_last_of_several_updates_wins_and_each_row_keeps_the_model_it_met():
    op = operator(fk.ml.serve(V1, ["x1", "x2"]))
    seen = [score(op, 1.0, 1.0)]
    update(op, V2, "v2")
    seen.append(score(op, 1.0, 1.0))
    update(op, V1, "v3")
    update(op, V2, "v4")
    seen.append(score(op, 1.0, 1.0))
    assert seen == [(pytest.approx(4.0), "initial"), (pytest.approx(7.0), "v2"), (pytest.approx(7.0), "v4")]


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        (fk.ml.model_row(WIDE, "bad"), "LinearRegression was fitted on 3 features; features= names 2"),
        ({"version": "bad", "model": b"\x80\x05junk"}, "the model bytes do not unpickle: "),
        ({"version": "bad", "model": b"not a model"}, "the model bytes are neither a pickle (protocol 2+) nor an ONNX model: "),
        (fk.ml.model_row(LinearRegression(), "bad"), "LinearRegression is not fitted"),
        (fk.ml.model_row({"a": 1}, "bad"), "dict has no method predict()"),
        ({"version": "bad", "model": None}, "the update has no model bytes"),
        ({"version": None, "model": fk.ml.model_row(V2, "x")["model"]}, "the update has no version (got None)"),
        (
            fk.ml.model_row(LogisticRegression().fit(_X, [0, 1, 0, 1, 1]), "bad"),
            "LogisticRegression gives bigint scores; the score column 'score' is double",
        ),
    ],
)
def test_a_bad_update_goes_to_the_side_output_with_its_reason_and_the_model_before_goes_on(row, reason):
    op = operator(fk.ml.serve(V1, ["x1", "x2"], version="v1"))
    update(op, V2, "v2")
    (rejected,) = update(op, row)
    assert rejected["version"] == row["version"] and rejected["serving"] == "v2"
    assert rejected["reason"].startswith(reason), rejected["reason"]
    assert score(op, 2.0, 3.0) == (pytest.approx(8.0), "v2")


def test_a_bad_update_before_any_other_names_the_initial_model_or_none_as_serving():
    (with_initial,) = update(operator(fk.ml.serve(V1, ["x1", "x2"], version="v1")), fk.ml.model_row(WIDE, "w"))
    (without,) = update(operator(fk.ml.serve(None, ["x1", "x2"])), fk.ml.model_row(WIDE, "w"))
    assert with_initial["serving"] == "v1" and without["serving"] is None


class NoWidth:
    """No n_features_in_: only scoring a row tells that it takes three features."""

    def predict(self, x):
        return x @ np.ones(3)


def test_a_model_that_fails_on_a_probe_row_is_rejected():
    op = operator(fk.ml.serve(None, ["x1", "x2"]))
    (rejected,) = update(op, NoWidth(), "nw")
    assert rejected["reason"].startswith("NoWidth fails on a row of 2 features: ValueError: matmul"), rejected["reason"]
    assert score(op, 1.0) == (None, None)


def test_a_row_with_a_null_or_nan_feature_is_not_scored():
    op = operator(fk.ml.serve(V1, ["x1", "x2"]))
    assert score(op, None) == (None, None)
    assert score(op, float("nan")) == (None, None)
    assert score(op, 1.0, 1.0) == (pytest.approx(4.0), "initial")  # the next one is


def test_a_snapshot_carries_the_served_model_to_a_restored_operator():
    fn = fk.ml.serve(V1, ["x1", "x2"], version="v1")
    op = operator(fn)
    update(op, V2, "v2")
    snapshot = pickle.loads(pickle.dumps(op.snapshot()))
    served = snapshot["broadcast"][fk.ml.SERVED_MODEL.name]
    assert served["version"] == "v2" and pickle.loads(served["model"]).coef_.tolist() == pytest.approx([3.0, -1.0])
    assert decode_value(encode_value(snapshot))["broadcast"] == snapshot["broadcast"]  # a savepoint's open format keeps it

    _DECODED.clear()  # a fresh worker: the model is loaded from the state again
    again = operator(pickle.loads(pickle.dumps(fn)))
    again.restore(snapshot)
    assert score(again, 2.0, 3.0) == (pytest.approx(8.0), "v2")
    assert score(operator(fn), 2.0, 3.0) == (pytest.approx(9.0), "v1")  # without the state: the code's model


def test_an_onnx_update_is_served():
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])],
        "linear",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])],
        [numpy_helper.from_array(np.array([[2.0], [10.0]], dtype=np.float32), "W")],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    row = fk.ml.model_row(proto, "onnx-1")
    assert row["model"] == proto.SerializeToString()
    op = operator(fk.ml.serve(V1, ["x1", "x2"]))
    assert update(op, row) == []
    assert score(op, 1.0, 2.0) == (pytest.approx(22.0), "onnx-1")


def test_probabilities_are_served_as_arrays():
    clf = LogisticRegression().fit(_X, [0, 1, 0, 1, 1])
    op = operator(fk.ml.serve(None, ["x1", "x2"], "p", method="predict_proba"))
    assert update(op, clf, "c1") == []
    (rec,) = op.process_element(None, {"x1": 1.0, "x2": 2.0})
    assert rec.value["p"] == pytest.approx(clf.predict_proba([[1.0, 2.0]])[0].tolist())


def test_the_stream_gets_the_scorer_s_columns_and_both_streams_are_checked_while_building():
    env = fk.StreamEnvironment(app="ml-serve-unit")
    events = env.from_collection([{"id": 1, "x1": 1.0, "x2": 2, "name": "a"}], EVENTS)
    updates = env.from_collection([fk.ml.model_row(V2, "v2")], fk.ml.MODEL_UPDATE_SCHEMA)
    scored = events.connect(updates.broadcast(fk.ml.SERVED_MODEL)).process(fk.ml.serve(V1, ["x1", "x2"]), uid="scorer")
    assert [str(f) for f in scored.schema.fields] == [
        "id bigint", "x1 double", "x2 int", "name string", "score double", "model_version string"
    ]  # fmt: skip
    with pytest.raises(PlanError, match=r"broadcast them as the served model's state: updates.broadcast\(fk.ml.SERVED_MODEL\)"):
        events.connect(updates.broadcast(MapStateDescriptor("rules", str, object))).process(fk.ml.serve(V1, ["x1", "x2"]))
    wrong = env.from_collection([{"version": "v", "model": "text"}], "version string, model string")
    with pytest.raises(
        PlanError, match=r"model updates are rows of version string, model binary .*has version string, model string"
    ):
        events.connect(wrong.broadcast(fk.ml.SERVED_MODEL)).process(fk.ml.serve(V1, ["x1", "x2"]))
    with pytest.raises(PlanError, match="takes a KeyedBroadcastProcessFunction"):
        events.key_by("name").connect(updates.broadcast(fk.ml.SERVED_MODEL)).process(fk.ml.serve(V1, ["x1", "x2"]))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: fk.ml.serve(V1, []), "names of the feature columns"),
        (lambda: fk.ml.serve(V1, ["x1", "x1"]), "named twice"),
        (lambda: fk.ml.serve(V1, ["x1", "x2"], output="x1"), "output= names a new column"),
        (lambda: fk.ml.serve(V1, ["x1", "x2"], output="v", version_column="v"), "both name 'v'"),
        (lambda: fk.ml.serve(None, ["x1", "x2"], version="v1"), "no model is given"),
        (
            lambda: fk.ml.serve(V1, ["x1", "x2"], output_type="bigint"),
            "initial model gives double scores, output_type= says bigint",
        ),
        (lambda: fk.ml.serve(None, ["x1"], output_type="int"), "output_type= is one of"),
        (lambda: fk.ml.serve(WIDE, ["x1", "x2"]), "fitted on 3 features"),
        (
            lambda: fk.ml.serve(V1, ["x1", "x2"]).output_schema(EVENTS.without(["x2"]), UPDATES, (fk.ml.SERVED_MODEL,)),
            "no column x2",
        ),
        (
            lambda: fk.ml.serve(V1, ["x1", "name"]).output_schema(EVENTS, UPDATES, (fk.ml.SERVED_MODEL,)),
            r"name \(string\) are not",
        ),
        (
            lambda: fk.ml.serve(V1, ["x1", "x2"], "name").output_schema(EVENTS, UPDATES, (fk.ml.SERVED_MODEL,)),
            "already has a column 'name'",
        ),
        (lambda: fk.ml.model_row(V1, ""), "non-empty string"),
        (lambda: fk.ml.model_row(LinearRegression, "v"), "not the class LinearRegression"),
    ],
)
def test_refusals_name_what_is_wrong(build, message):
    with pytest.raises(PlanError, match=message):
        build()


def test_a_batch_of_rows_is_scored_in_one_call_as_one_row_at_a_time_would_be():
    """BroadcastProcessOperator.process_elements (the general path's call for a micro-batch's rows
    after its updates) gives fk.ml.serve's rows as process_element would, each with its timestamp."""
    rng = np.random.default_rng(3)
    items = [
        (
            None,
            {"id": i, "x1": None if i % 7 == 3 else float(rng.normal()), "x2": int(rng.integers(-3, 4)), "name": "n"},
            1_000 + i,
        )
        for i in range(40)
    ]
    for initial in (V1, None):
        one, batched = operator(fk.ml.serve(initial, ["x1", "x2"])), operator(fk.ml.serve(initial, ["x1", "x2"]))
        for step in range(2):
            want = [r for key, value, ts in items for r in one.process_element(key, value, ts)]
            got = batched.process_elements(items)
            # (a batch goes through BLAS in another order than one row: scores agree to rounding)
            assert [({**r.value, "score": None}, r.timestamp, r.tag) for r in got] == [
                ({**r.value, "score": None}, r.timestamp, r.tag) for r in want
            ]
            assert [r.value["score"] for r in got] == [
                None if r.value["score"] is None else pytest.approx(r.value["score"], rel=1e-12, abs=1e-12) for r in want
            ]
            assert [r.timestamp for r in got] == [ts for _, _, ts in items]
            if step == 0:
                assert update(one, V2, "v2") == update(batched, V2, "v2") == []
        assert {r.value["model_version"] for r in got} == {"v2", None}  # the update reached both; null features: null


def test_a_vectorized_broadcast_function_must_give_rows_for_every_element():
    class Short(BroadcastProcessFunction):
        def process_element(self, value, ctx):
            yield value

        def process_elements(self, values, ctx):
            return [[v] for v in values[1:]]

    with pytest.raises(TypeError, match="gave rows for 1 elements, not the 2"):
        BroadcastProcessOperator(Short(), (fk.ml.SERVED_MODEL,)).process_elements([(None, 1, 0), (None, 2, 0)])
