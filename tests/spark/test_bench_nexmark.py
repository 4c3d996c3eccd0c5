"""``funke bench nexmark`` in small: each query's unchanged file runs as its own job into its blackhole
table, and the rows the sink was given are counted (q0 passes every bid through: 46 of every 50 events; q18, an updating result, gives its changes)."""

from __future__ import annotations

import pytest

from funke.bench.nexmark import Settings, run_nexmark_bench, summary

pytestmark = pytest.mark.spark


def test_the_nexmark_bench_runs_each_query_as_a_job_and_counts_its_rows(spark):
    settings = Settings(events=500, tps=100)
    runs = run_nexmark_bench(spark, settings, ("q0", "q18"), bounded=True)
    assert [r.query for r in runs] == ["q0", "q18"]
    assert runs[0].output_rows == 460 and runs[1].output_rows > 0  # (q18: its changelog, each change a row)
    assert all(r.seconds > 0 for r in runs)
    assert "q0" in summary(runs, settings, True) and "460 rows" in summary(runs, settings, True)
    with pytest.raises(ValueError, match="q6: an OVER aggregation"):
        run_nexmark_bench(spark, settings, ("q6",))
