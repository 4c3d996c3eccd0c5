"""``funke bench ml``: scoring a stream with a scikit-learn model, funke against plain PySpark,
and with a Spark MLlib model.

The same fitted ``LinearRegression`` on 10 feature columns, over the same generated rows, in one
SparkSession, each writing Parquet (issue 18's scoring target: >= 1 M rows/s):

* funke: ``env.from_source(generator(...)).map(fk.ml.predict(model, features))``, run bounded (a
  scoring map costs the same per row in a stream; a bounded run has no micro-batch overhead);
* plain PySpark: a ``pandas_udf`` over the 10 columns calling ``model.predict``, as a Spark user
  writes it;
* funke with a Spark MLlib ``LinearRegressionModel`` fitted on the same 1,000 rows (in the JVM), and
  the same model as a plain PySpark user runs it (``VectorAssembler`` then ``model.transform``).

Both scikit-learn outputs are checked against each other (count, sum of the ids and of the scores)
and against the model on a sample of rows; the MLlib outputs against each other and the
scikit-learn ones (count, ids; the sum of the scores within 1e-9 of it, relative, beyond the
checksum's rounding: the two fits agree to about 1e-12 a row) and against the MLlib model's own transform of a sample. Rows/s is rows over the wall
time of the write.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

from funke.ml.predict import is_mllib

FEATURES = [f"f{j}" for j in range(10)]
#: Feature j of row i: a deterministic spread of values in [-1, 1).
COLUMNS = {"i": "i", **{f: f"(pmod(xxhash64(i, {j}), 2000) - 1000) / 1000.0" for j, f in enumerate(FEATURES)}}
SCHEMA = "i bigint, " + ", ".join(f"{f} double" for f in FEATURES)


def model() -> Any:
    """A linear model fitted on 1,000 rows of the generator's features (the weights 1..10)."""
    from sklearn.linear_model import LinearRegression

    x, y = training()
    return LinearRegression().fit(x, y)


def training() -> tuple[Any, Any]:
    """1,000 rows of features in [-1, 1) and their target: the weights 1..10, intercept 0.5, no noise."""
    import numpy as np

    x = np.random.default_rng(18).uniform(-1, 1, size=(1000, len(FEATURES)))
    return x, x @ np.arange(1, len(FEATURES) + 1) + 0.5


def mllib_model(spark: Any, **params: Any) -> Any:
    """A Spark MLlib ``LinearRegressionModel`` fitted on the same 1,000 rows (``params``: the estimator's)."""
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import LinearRegression

    x, y = training()
    df = spark.createDataFrame(
        [[*map(float, row), float(t)] for row, t in zip(x, y, strict=True)],
        ", ".join(f"{f} double" for f in [*FEATURES, "label"]),
    )
    return LinearRegression(**params).fit(VectorAssembler(inputCols=FEATURES, outputCol="features").transform(df))


@dataclass(frozen=True)
class ScoreRun:
    system: str
    rows: int
    seconds: float
    checksum: tuple[int, int, float]

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


def _checksum(spark: Any, path: str) -> tuple[int, int, float]:
    from pyspark.sql import functions as F

    row = spark.read.parquet(path).agg(F.count(F.lit(1)), F.sum("i"), F.sum("score")).first()
    return int(row[0]), int(row[1] or 0), round(float(row[2] or 0.0), 3)


def _features(spark: Any, rows: int) -> Any:
    return spark.range(rows).withColumnRenamed("id", "i").selectExpr(*(f"{sql} AS {name}" for name, sql in COLUMNS.items()))


def _check_sample(spark: Any, path: str, m: Any) -> None:
    import numpy as np

    sample = spark.read.parquet(path).join(_features(spark, 1000), "i").orderBy("i").toPandas()
    if is_mllib(m):  # its own transform of the same rows
        expected = _mllib_scores(_features(spark, 1000), m).orderBy("i").toPandas()["score"].to_numpy()
    else:
        expected = m.predict(sample[FEATURES].to_numpy())
    if len(sample) != 1000 or not np.allclose(sample["score"].to_numpy(), expected, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"{path}: the scores of rows 0-999 differ from the model's own on the same rows")


def _mllib_scores(df: Any, m: Any) -> Any:
    from pyspark.ml.feature import VectorAssembler

    return m.transform(VectorAssembler(inputCols=FEATURES, outputCol="features").transform(df)).selectExpr(
        "i", "prediction AS score"
    )


def run_funke(spark: Any, rows: int, path: str, m: Any) -> ScoreRun:
    import funke as fk

    env = fk.StreamEnvironment(app="bench-ml", spark=spark)
    src = fk.sources.generator(COLUMNS, schema=SCHEMA, events=rows)
    scored = env.from_source(src).map(fk.ml.predict(m, FEATURES, "score")).select("i", "score")
    scored.sink_to(fk.sinks.files(path, overwrite=True), uid="scored")
    started = time.monotonic()
    env.execute(bounded=True).wait()
    system = "funke fk.ml.predict, Spark MLlib" if is_mllib(m) else "funke fk.ml.predict"
    return ScoreRun(system, rows, time.monotonic() - started, _checksum(spark, path))


def run_plain_mllib(spark: Any, rows: int, path: str, m: Any) -> ScoreRun:
    out = _mllib_scores(_features(spark, rows), m)
    started = time.monotonic()
    out.write.mode("overwrite").parquet(path)
    return ScoreRun("plain PySpark MLlib transform", rows, time.monotonic() - started, _checksum(spark, path))


def run_plain(spark: Any, rows: int, path: str, m: Any) -> ScoreRun:
    from pyspark.sql import functions as F

    @F.pandas_udf("double")  # type: ignore[call-overload]
    def score(features: pd.DataFrame) -> pd.Series:
        return pd.Series(m.predict(features.to_numpy()))

    out = _features(spark, rows).select("i", score(F.struct(*FEATURES)).alias("score"))
    started = time.monotonic()
    out.write.mode("overwrite").parquet(path)
    return ScoreRun("plain PySpark pandas_udf", rows, time.monotonic() - started, _checksum(spark, path))


def run_ml_bench(spark: Any, rows: int, rounds: int = 1) -> list[ScoreRun]:
    """The four runs in turn, ``rounds`` times after a small warm-up; raises when outputs differ."""
    root = tempfile.mkdtemp(prefix="funke-bench-ml-")
    m, jvm = model(), mllib_model(spark)
    try:
        run_funke(spark, min(rows, 100_000), os.path.join(root, "warm-f"), m)
        run_plain(spark, min(rows, 100_000), os.path.join(root, "warm-p"), m)
        run_funke(spark, min(rows, 100_000), os.path.join(root, "warm-fm"), jvm)
        runs = []
        for r in range(rounds):
            f = run_funke(spark, rows, os.path.join(root, f"funke-{r}"), m)
            p = run_plain(spark, rows, os.path.join(root, f"plain-{r}"), m)
            if f.checksum != p.checksum:
                raise AssertionError(f"funke's scores and plain PySpark's differ: {f.checksum} != {p.checksum}")
            _check_sample(spark, os.path.join(root, f"funke-{r}"), m)
            fm = run_funke(spark, rows, os.path.join(root, f"funke-mllib-{r}"), jvm)
            pm = run_plain_mllib(spark, rows, os.path.join(root, f"plain-mllib-{r}"), jvm)
            for got in (fm, pm):  # (the checksums' sums are rounded to 0.001)
                if got.checksum[:2] != p.checksum[:2] or abs(got.checksum[2] - p.checksum[2]) > 0.001 + 1e-9 * abs(p.checksum[2]):
                    raise AssertionError(
                        f"{got.system}'s scores and the scikit-learn model's differ: {got.checksum} != {p.checksum}"
                    )
            _check_sample(spark, os.path.join(root, f"funke-mllib-{r}"), jvm)
            runs += [f, p, fm, pm]
        return runs
    finally:
        shutil.rmtree(root, ignore_errors=True)


def ml_summary(runs: list[ScoreRun], target: float = 1_000_000) -> str:
    """One line for docs/benchmarks.md: both systems' rows/s (best round each), the ratio, the target."""
    best: dict[str, ScoreRun] = {}
    for r in runs:
        if r.system not in best or r.rows_per_s > best[r.system].rows_per_s:
            best[r.system] = r
    f, p = best["funke fk.ml.predict"], best["plain PySpark pandas_udf"]
    fm, pm = best["funke fk.ml.predict, Spark MLlib"], best["plain PySpark MLlib transform"]
    return (
        f"{f.rows:,} rows scored by a scikit-learn LinearRegression on {len(FEATURES)} features, outputs equal (and equal to "
        f"the model's own on 1,000 rows): funke fk.ml.predict {f.rows_per_s:,.0f} rows/s ({f.seconds:.1f} s), plain PySpark "
        f"pandas_udf {p.rows_per_s:,.0f} rows/s ({p.seconds:.1f} s), funke/plain **{f.rows_per_s / p.rows_per_s:.2f}**; "
        f"target >= {target:,.0f} rows/s: **{f.rows_per_s / target:.2f}** of it. The same rows scored by a Spark MLlib "
        f"LinearRegressionModel fitted on the same 1,000 rows (in the JVM; outputs equal to the scikit-learn ones within "
        f"1e-9 and to the model's own transform): funke fk.ml.predict {fm.rows_per_s:,.0f} rows/s ({fm.seconds:.1f} s), "
        f"plain PySpark VectorAssembler + transform {pm.rows_per_s:,.0f} rows/s ({pm.seconds:.1f} s), funke/plain "
        f"**{fm.rows_per_s / pm.rows_per_s:.2f}**"
    )
