"""``funke bench ml``: scoring a stream with a scikit-learn model, funke against plain PySpark.

The same fitted ``LinearRegression`` on 10 feature columns, over the same generated rows, in one
SparkSession, each writing Parquet (issue 18's scoring target: >= 1 M rows/s):

* funke: ``env.from_source(generator(...)).map(fk.ml.predict(model, features))``, run bounded (a
  scoring map costs the same per row in a stream; a bounded run has no micro-batch overhead);
* plain PySpark: a ``pandas_udf`` over the 10 columns calling ``model.predict``, as a Spark user
  writes it.

Both outputs are checked against each other (count, sum of the ids and of the scores) and against
the model on a sample of rows. Rows/s is rows over the wall time of the write.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

FEATURES = [f"f{j}" for j in range(10)]
#: Feature j of row i: a deterministic spread of values in [-1, 1).
COLUMNS = {"i": "i", **{f: f"(pmod(xxhash64(i, {j}), 2000) - 1000) / 1000.0" for j, f in enumerate(FEATURES)}}
SCHEMA = "i bigint, " + ", ".join(f"{f} double" for f in FEATURES)


def model() -> Any:
    """A linear model fitted on 1,000 rows of the generator's features (the weights 1..10)."""
    import numpy as np
    from sklearn.linear_model import LinearRegression

    x = np.random.default_rng(18).uniform(-1, 1, size=(1000, len(FEATURES)))
    return LinearRegression().fit(x, x @ np.arange(1, len(FEATURES) + 1) + 0.5)


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
    expected = m.predict(sample[FEATURES].to_numpy())
    if len(sample) != 1000 or not np.allclose(sample["score"].to_numpy(), expected, rtol=1e-9, atol=1e-9):
        raise AssertionError(f"{path}: the scores of rows 0-999 differ from the model's own on the same rows")


def run_funke(spark: Any, rows: int, path: str, m: Any) -> ScoreRun:
    import funke as fk

    env = fk.StreamEnvironment(app="bench-ml", spark=spark)
    src = fk.sources.generator(COLUMNS, schema=SCHEMA, events=rows)
    scored = env.from_source(src).map(fk.ml.predict(m, FEATURES, "score")).select("i", "score")
    scored.sink_to(fk.sinks.files(path, overwrite=True), uid="scored")
    started = time.monotonic()
    env.execute(bounded=True).wait()
    return ScoreRun("funke fk.ml.predict", rows, time.monotonic() - started, _checksum(spark, path))


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
    """Both systems in turn, ``rounds`` times after a small warm-up; raises when outputs differ."""
    root = tempfile.mkdtemp(prefix="funke-bench-ml-")
    m = model()
    try:
        run_funke(spark, min(rows, 100_000), os.path.join(root, "warm-f"), m)
        run_plain(spark, min(rows, 100_000), os.path.join(root, "warm-p"), m)
        runs = []
        for r in range(rounds):
            f = run_funke(spark, rows, os.path.join(root, f"funke-{r}"), m)
            p = run_plain(spark, rows, os.path.join(root, f"plain-{r}"), m)
            if f.checksum != p.checksum:
                raise AssertionError(f"funke's scores and plain PySpark's differ: {f.checksum} != {p.checksum}")
            _check_sample(spark, os.path.join(root, f"funke-{r}"), m)
            runs += [f, p]
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
    return (
        f"{f.rows:,} rows scored by a scikit-learn LinearRegression on {len(FEATURES)} features, outputs equal (and equal to "
        f"the model's own on 1,000 rows): funke fk.ml.predict {f.rows_per_s:,.0f} rows/s ({f.seconds:.1f} s), plain PySpark "
        f"pandas_udf {p.rows_per_s:,.0f} rows/s ({p.seconds:.1f} s), funke/plain **{f.rows_per_s / p.rows_per_s:.2f}**; "
        f"target >= {target:,.0f} rows/s: **{f.rows_per_s / target:.2f}** of it"
    )
