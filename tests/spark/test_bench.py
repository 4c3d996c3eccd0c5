"""``funke bench ysb`` at a tiny size: both systems run on the shared session and match the reference.

Timings are never asserted here (they live in docs/benchmarks.md); only that they were measured.
How the command line shows and records a result is tested without Spark in tests/unit/test_bench_unit.py.
"""

from __future__ import annotations

import pytest

import examples.ysb as ysb
from funke.bench.reference import reference_counts
from funke.bench.ysb import _check_run, run_ysb

pytestmark = pytest.mark.spark
EVENTS = 20_000


def test_bounded_run_measures_both_systems_and_a_wrong_window_would_be_caught(spark):
    result = run_ysb(spark, events=EVENTS, bounded=True, warmup=False)
    expected = reference_counts(EVENTS)
    assert result.correct and result.rounds == 1
    assert [(r.system, r.mode, r.events) for r in result.runs] == [(s, "bounded", EVENTS) for s in ("funke", "plain PySpark")]
    for run in result.runs:
        assert dict(run.windows) == dict(expected)
        assert len(run.batches) == 1 and run.wall_s > 0 and run.headline_events_per_s == run.events_per_s
    assert result.ratio is not None and result.ratio > 0
    # The same check on the same real results, against a reference with one view moved between windows.
    first, last = min(expected), max(expected)
    expected[first] -= 1
    expected[last] += 1
    for run in result.runs:
        assert _check_run(run, expected, EVENTS) == [
            f"{run.system} (bounded): 2 window(s) with another count, e.g. "
            f"{first[0]} @ 2023-12-31 23:59:50: {run.windows[first]} (expected {run.windows[first] - 1}), "
            f"{last[0]} @ 2024-01-01 00:00:00: {run.windows[last]} (expected {run.windows[last] + 1})"
        ]


def test_streaming_run_measures_both_systems_over_the_same_events_and_checks_them(spark):
    result = run_ysb(spark, events=EVENTS, rows_per_batch=8_000, warmup=False)
    expected = dict(reference_counts(EVENTS))
    assert result.correct and result.mismatches == ()
    assert result.reference_views == ysb.expected_view_count(EVENTS) == sum(expected.values())
    assert result.reference_windows == len(expected)
    assert [r.system for r in result.runs] == ["funke", "plain PySpark"]
    for run in result.runs:
        assert run.mode == "streaming" and run.events == EVENTS and run.late_rows_dropped == 0
        assert dict(run.windows) == expected
        # 3 micro-batches of events (the last with the end-of-input row), then the one that fires the last windows.
        assert [b.events for b in run.batches][:3] == [8_000, 8_000, 4_000]
        assert len(run.batches) >= 4 and all(b.duration_ms > 0 for b in run.batches)
        assert run.steady_events_per_s is not None and run.batch_ms_p50 <= run.batch_ms_p99
    assert result.ratio is not None and result.latency == ()
