"""``funke bench nexmark`` in small: each query as its own streaming job into its blackhole table, its steady
rate and cores measured over the micro-batches after the first two, beside Flink's per-core figure; bounded, its
start-up measured by a second, one-second run. The counts of rows given to the sink are checked (q0 passes every
bid on: 46 of every 50 events); only queries without Python operators, to keep it cheap; the figures are only checked to be there, not for their size."""

from __future__ import annotations

import pytest

from funke.bench.nexmark import Suite
from funke.bench.nexmark_bench import run_nexmark_bench, summary, table
from funke.errors import UnsupportedError

pytestmark = pytest.mark.spark


def test_the_nexmark_bench_measures_each_query_at_steady_state(spark):
    runs = run_nexmark_bench(spark, ("q0", "q2"), events=700, tps=100)  # 7 micro-batches of 100 events
    assert [r.query for r in runs] == ["q0", "q2"]
    assert [r.output_rows for r in runs] == [644, 0]  # (700 events: auctions up to 1041, none a multiple of 123)
    for r in runs:
        assert r.batches >= 7 and r.events_per_s and r.events_per_s > 0 and r.cores and r.cores > 0
        assert 0 < r.startup_s < r.seconds
    line = summary(runs, Suite())
    assert (
        line.startswith("funke's formulation, streaming, steady state: q0 ") and "× Flink's 155 k" in line and "644 rows" in line
    )
    assert [row[0] for row in table(runs)] == ["q0", "q2"] and table(runs)[1][5] == "175,210"


def test_the_bounded_bench_measures_start_up_apart_and_refuses_what_funke_does_not_run(spark):
    (run,) = run_nexmark_bench(spark, ("q2",), events=2_200, tps=1_000, bounded=True)
    assert run.bounded and run.output_rows == 4 and run.events_per_s and 0 < run.startup_s
    assert "bounded, start to end" in summary([run], Suite())
    with pytest.raises(UnsupportedError, match="q6 yet \\(it needs an OVER aggregation"):
        run_nexmark_bench(spark, ("q6",))
