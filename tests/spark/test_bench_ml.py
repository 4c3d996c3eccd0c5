"""funke bench ml, tiny: the four runs score the same rows, and the checks catch a wrong score (scikit-learn and MLlib)."""

from __future__ import annotations

import copy

import pytest

from funke.bench import ml
from funke.ml.predict import is_mllib

pytestmark = pytest.mark.spark


def test_the_scoring_bench_runs_both_systems_and_checks_their_scores(spark, monkeypatch):
    runs = ml.run_ml_bench(spark, 20_000)
    assert [r.system for r in runs] == [
        "funke fk.ml.predict",
        "plain PySpark pandas_udf",
        "funke fk.ml.predict, Spark MLlib",
        "plain PySpark MLlib transform",
    ]
    assert runs[0].checksum == runs[1].checksum and runs[0].checksum[0] == 20_000
    assert [r.checksum[:2] for r in runs[2:]] == [runs[0].checksum[:2]] * 2
    line = ml.ml_summary(runs)
    assert "20,000 rows scored" in line and "target >= 1,000,000 rows/s" in line and "Spark MLlib" in line

    off = ml.run_funke  # funke scoring with a model one off the plain side's: the check must catch it

    def run_off(spark, rows, path, m):
        if not is_mllib(m):
            m = copy.deepcopy(m)
            m.intercept_ += 1.0
        return off(spark, rows, path, m)

    monkeypatch.setattr(ml, "run_funke", run_off)
    with pytest.raises(AssertionError, match="differ"):
        ml.run_ml_bench(spark, 20_000)
    monkeypatch.setattr(ml, "run_funke", off)

    fitted = ml.mllib_model  # an MLlib model fitted otherwise (regularized) than the scikit-learn one: caught too
    monkeypatch.setattr(ml, "mllib_model", lambda spark: fitted(spark, regParam=0.5))
    with pytest.raises(AssertionError, match="Spark MLlib's scores and the scikit-learn model's differ"):
        ml.run_ml_bench(spark, 20_000)
