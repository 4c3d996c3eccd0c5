"""fk.ml.predict with Spark MLlib models: scored in the JVM, streaming and bounded, equal to the
model's own ``transform`` of the same rows (and a linear model's to its coefficients by hand); a
row with a null feature gets a null score; what cannot be scored is refused while the job is built."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import funke as fk
from funke.errors import PlanError

pytestmark = pytest.mark.spark
FEATURES = ["x0", "x1", "x2"]
SCHEMA = "id bigint, x0 double, x1 double, x2 int, t bigint, name string"
NULL_ROWS = (5, 6)  # x1 null; x0 NaN


def rows() -> list[dict]:
    x = np.random.default_rng(18).normal(size=(200, 3))
    out = [
        {"id": i, "x0": float(a), "x1": float(b), "x2": int(c * 10), "t": i * 100, "name": f"r{i}"}
        for i, (a, b, c) in enumerate(x)
    ]
    out[5]["x1"], out[6]["x0"] = None, float("nan")
    return out


@pytest.fixture(scope="module")
def models(spark):
    """Fitted on the rows with every feature: a linear regression, a logistic regression, k-means, a
    scaler-then-regression pipeline (reads a vector) and a pipeline with its own VectorAssembler
    (reads the raw columns; its handleInvalid is the default "error")."""
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.clustering import KMeans
    from pyspark.ml.feature import StandardScaler, VectorAssembler
    from pyspark.ml.regression import LinearRegression

    complete = [r for r in rows() if r["id"] not in NULL_ROWS]
    df = spark.createDataFrame(complete, SCHEMA).selectExpr(
        "*", "1.5 * x0 - 2 * x1 + 0.25 * x2 + 3 AS y", "CAST(x0 + x1 > 0 AS double) AS label"
    )
    train = VectorAssembler(inputCols=FEATURES, outputCol="features").transform(df).cache()
    lr = LinearRegression(labelCol="y", regParam=0.1).fit(train)
    return {
        "lr": lr,
        "lg": LogisticRegression(maxIter=10).fit(train),
        "km": KMeans(k=3, seed=1, initMode="random", maxIter=5).fit(train),
        "pipe": Pipeline(
            stages=[
                StandardScaler(inputCol="features", outputCol="scaled", withMean=True),
                LinearRegression(featuresCol="scaled", labelCol="y"),
            ]
        ).fit(train),
        "raw": PipelineModel([VectorAssembler(inputCols=FEATURES, outputCol="features"), lr]),
    }


@pytest.fixture(scope="module")
def expected(spark, models) -> dict[str, dict[int, object]]:
    """Each model's own transform of the complete rows, on a plain batch DataFrame: per score column
    of the test's job, the value of each row id."""
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.functions import vector_to_array

    df = spark.createDataFrame([r for r in rows() if r["id"] not in NULL_ROWS], SCHEMA)
    out = VectorAssembler(inputCols=FEATURES, outputCol="features").transform(df)
    for column, model in [("lr", "lr"), ("label", "lg"), ("cluster", "km"), ("pipe", "pipe")]:
        out = models[model].transform(out).withColumnRenamed("prediction", column)
        if column == "label":
            out = out.withColumn("p", vector_to_array("probability")).drop("probability", "rawPrediction")
    got = out.select("id", "lr", "label", "p", "cluster", "pipe").collect()
    raw = {r["id"]: r["prediction"] for r in models["raw"].transform(df).select("id", "prediction").collect()}
    return {**{c: {r["id"]: r[c] for r in got} for c in ("lr", "label", "p", "cluster", "pipe")}, "raw": raw}


@pytest.mark.parametrize("bounded", [False, True])
def test_a_stream_scored_by_mllib_models_equals_their_own_transform(env, models, expected, bounded):
    # (a watermarked stream: the models transform a DataFrame with Spark's watermark upstream)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("t", unit="ms")
    s = env.from_collection(rows(), SCHEMA, rows_per_batch=100, watermarks=wm)
    scored = (
        s.map(fk.ml.predict(models["lr"], FEATURES, "lr"))
        .map(fk.ml.predict(models["lg"], FEATURES, "label"))
        .map(fk.ml.predict(models["lg"], FEATURES, "p", method="predict_proba"))
        .map(fk.ml.predict(models["km"], FEATURES, "cluster"))
        .map(fk.ml.predict(models["pipe"], FEATURES, "pipe"))
        .map(fk.ml.predict(models["raw"], FEATURES, "raw"))
    )
    assert [str(f) for f in scored.schema.fields[-6:]] == [
        "lr double",
        "label double",
        "p array<double>",
        "cluster int",
        "pipe double",
        "raw double",
    ]
    sink = scored.collect()
    env.execute(bounded=bounded).wait(timeout=180)

    got = {r["id"]: r for r in sink.rows}
    assert sorted(got) == list(range(200))
    for column, want in expected.items():
        assert len(want) == 198 and {i: got[i][column] for i in want} == want, column  # the same JVM computation: exactly equal
    lr = models["lr"]
    by_hand = {
        i: float(np.dot([got[i][f] for f in FEATURES], lr.coefficients.toArray()) + lr.intercept)
        for i in got
        if i not in NULL_ROWS
    }
    assert max(abs(got[i]["lr"] - v) for i, v in by_hand.items()) < 1e-12
    for i in NULL_ROWS:
        assert {c: got[i][c] for c in ("lr", "label", "p", "cluster", "pipe", "raw")} == dict.fromkeys(
            ("lr", "label", "p", "cluster", "pipe", "raw")
        )
    assert {k: got[7][k] for k in ("id", "x0", "x1", "x2", "name")} == {k: rows()[7][k] for k in ("id", "x0", "x1", "x2", "name")}
    assert got[5]["x1"] is None  # (the model was given 0; the stream keeps its null)


def test_explain_says_the_model_runs_in_the_jvm_and_nothing_is_pickled(env, models):
    p = fk.ml.predict(models["pipe"], FEATURES, "pipe")
    env.from_collection(rows()[:3], SCHEMA).map(p).print()
    text = env.explain()
    assert "map predict(PipelineModel.predict(x0, x1, x2) -> pipe) [JVM]" in text
    assert (
        "Spark MLlib in the JVM: the stages StandardScalerModel, LinearRegressionModel transform" in text
        and "vector column 'features'" in text
    )
    with pytest.raises(TypeError, match="runs in the JVM with the query and is never pickled"):
        pickle.dumps(p)


def test_a_spark_dataframe_is_scored_by_calling_it(spark, models, expected):
    # columns named as the models' own (features, prediction, probability, scaled) are the DataFrame's
    # and stay so: the models' columns never meet them
    df = spark.createDataFrame(rows()[:10], SCHEMA).selectExpr(
        "*", "name AS features", "-1.0 AS prediction", "'p' AS probability", "x2 AS scaled"
    )
    out = fk.ml.predict(models["lg"], FEATURES, "p", method="predict_proba")(df)
    out = fk.ml.predict(models["pipe"], FEATURES, "pipe")(out)
    assert out.columns == [*df.columns, "p", "pipe"]
    got = {r["id"]: r for r in out.collect()}
    assert got[5]["p"] is None and got[5]["pipe"] is None
    assert got[3]["p"] == expected["p"][3] and got[3]["pipe"] == expected["pipe"][3]
    assert {c: got[3][c] for c in ("features", "prediction", "probability", "scaled")} == {
        "features": "r3",
        "prediction": -1.0,
        "probability": "p",
        "scaled": rows()[3]["x2"],
    }
    # a feature named as the vector column the model reads
    renamed = df.drop("features").withColumnRenamed("x0", "features")
    got = {r["id"]: r["lr"] for r in fk.ml.predict(models["lr"], ["features", "x1", "x2"], "lr")(renamed).collect()}
    assert got[3] == expected["lr"][3] and got[5] is None


def test_refusals_name_what_is_wrong(env, spark, models):
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.classification import OneVsRestModel
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import LinearRegression

    s = env.from_collection(rows()[:3], SCHEMA)
    with pytest.raises(
        PlanError,
        match=r"LinearRegression is a Spark MLlib estimator, not a fitted model; give the model LinearRegression.fit\(df\)",
    ):
        fk.ml.predict(LinearRegression(), FEATURES)
    with pytest.raises(PlanError, match="Pipeline is a Spark MLlib estimator"):
        fk.ml.predict(Pipeline(stages=[LinearRegression()]), FEATURES)
    with pytest.raises(PlanError, match="not the class LinearRegression"):
        fk.ml.predict(LinearRegression, FEATURES)
    with pytest.raises(PlanError, match=r"features must be numbers or booleans; name \(string\) are not"):
        s.map(fk.ml.predict(models["lr"], ["x0", "x1", "name"]))
    with pytest.raises(PlanError, match="no column zz"):
        s.map(fk.ml.predict(models["lr"], ["x0", "x1", "zz"]))
    with pytest.raises(PlanError, match="the stream already has a column 'x2'"):
        s.map(fk.ml.predict(models["lr"], FEATURES, "x2"))
    with pytest.raises(PlanError, match="LinearRegressionModel was fitted on 3 features; features= names 2"):
        fk.ml.predict(models["lr"], ["x0", "x1"])
    with pytest.raises(PlanError, match="StandardScalerModel was fitted on 3 features; features= names 2"):
        fk.ml.predict(models["pipe"], ["x0", "x1"])
    with pytest.raises(PlanError, match="LinearRegressionModel gives no probabilities"):
        fk.ml.predict(models["lr"], FEATURES, method="predict_proba")
    with pytest.raises(PlanError, match="its predictionCol .method='predict'. or its probabilityCol .* not 'transform'"):
        fk.ml.predict(models["lg"], FEATURES, method="transform")
    with pytest.raises(PlanError, match="its last stage VectorAssembler gives no prediction from a features vector"):
        fk.ml.predict(VectorAssembler(inputCols=FEATURES, outputCol="v"), FEATURES)
    with pytest.raises(PlanError, match="the model reads the columns x0, x1, x2 .* features= must name exactly these"):
        fk.ml.predict(models["raw"], ["x0", "x1"])
    # a one-feature pipeline whose scaler reads a column named as the feature is given the raw column
    # (the documented contract), which the scaler refuses when the job is compiled, named
    scaler = models["pipe"].stages[0].copy().setInputCol("x0")
    one = fk.ml.predict(PipelineModel([scaler, models["pipe"].stages[1]]), ["x0"])
    with pytest.raises(PlanError, match="its stage StandardScalerModel cannot run on the DataFrame: .*x0"):
        one(spark.createDataFrame(rows()[:3], SCHEMA))
    with pytest.raises(PlanError, match="its stage OneVsRestModel cannot score a stream"):
        fk.ml.predict(OneVsRestModel(models=[models["lg"], models["lg"]]), FEATURES)
