"""``funke bench join`` at a tiny size: every system runs, write exactly numpy's pairs, and are measured.

Timings are never asserted (they live in docs/benchmarks.md); only that they were measured.
"""

from __future__ import annotations

import pytest

from funke.bench import join
from funke.bench.ysb import BenchMismatchError

pytestmark = pytest.mark.spark


def test_join_bench_runs_both_systems_over_the_same_events_and_checks_their_pairs(spark):
    result = join.run_join_bench(spark, events=6_000, keys=50, rows_per_batch=2_000, warmup=False)
    expected = join.reference(6_000, 50)
    assert result.reference_pairs == expected[0] > 0
    assert len(result.general_runs) == 1
    for run in (*result.funke_runs, *result.plain_runs, *result.general_runs):
        assert (run.pairs, run.checksum) == expected and run.events == 12_000 and run.wall_s > 0
    assert result.ratio > 0 and result.general_ratio > 0
    assert "funke/plain **" in join.summary(result) and "general/plain **" in join.summary(result)


def test_a_wrong_result_is_caught(spark, monkeypatch):
    right = join.reference
    monkeypatch.setattr(join, "reference", lambda events, keys: (right(events, keys)[0] + 1, 0))
    with pytest.raises(BenchMismatchError, match="numpy finds"):
        join.run_join_bench(spark, events=2_000, keys=50, rows_per_batch=1_000, warmup=False, general=False)
