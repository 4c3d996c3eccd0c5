"""funke bench ml, tiny: both systems score the same rows, and the check catches a wrong score."""

from __future__ import annotations

import copy

import pytest

from funke.bench import ml

pytestmark = pytest.mark.spark


def test_the_scoring_bench_runs_both_systems_and_checks_their_scores(spark, monkeypatch):
    runs = ml.run_ml_bench(spark, 20_000)
    assert [r.system for r in runs] == ["funke fk.ml.predict", "plain PySpark pandas_udf"]
    assert runs[0].checksum == runs[1].checksum and runs[0].checksum[0] == 20_000
    line = ml.ml_summary(runs)
    assert "20,000 rows scored" in line and "target >= 1,000,000 rows/s" in line

    off = ml.run_funke  # funke scoring with a model one off the plain side's: the check must catch it

    def run_off(spark, rows, path, m):
        m = copy.deepcopy(m)
        m.intercept_ += 1.0
        return off(spark, rows, path, m)

    monkeypatch.setattr(ml, "run_funke", run_off)
    with pytest.raises(AssertionError, match="differ"):
        ml.run_ml_bench(spark, 20_000)
