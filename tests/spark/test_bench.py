"""``funke bench ysb`` and ``funke bench checkpoint`` at a tiny size: every variant and mode runs and matches the reference.

Timings are never asserted here (they live in docs/benchmarks.md); only that they were measured.
How the command line shows and records a result is tested without Spark in tests/unit/test_bench_unit.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples import ysb
from funke.bench.checkpoint import run_checkpoint
from funke.bench.reference import reference_counts
from funke.bench.ysb import Job, check_run, run_once, run_ysb

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
        assert check_run(run, expected, EVENTS) == [
            (
                f"{run.system} (bounded): 2 window(s) with another count, e.g. "
                f"{first[0]} @ 2023-12-31 23:59:50: {run.windows[first]} (expected {run.windows[first] - 1}), "
                f"{last[0]} @ 2024-01-01 00:00:00: {run.windows[last]} (expected {run.windows[last] + 1})"
            )
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


@pytest.fixture
def tmpfs_dir():
    import shutil
    import tempfile

    from funke.bench.ysb import tmpfs_dir

    path = Path(tempfile.mkdtemp(prefix="funke-test-", dir=tmpfs_dir()))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("system", ["funke", "plain PySpark"])
def test_exactly_once_off_appends_plain_parquet_and_keeps_the_checkpoint_on_tmpfs(spark, tmp_path, tmpfs_dir, system):
    job = Job(EVENTS, 8_000, exactly_once=False, partitions=2, timeout_s=120)
    run = run_once(spark, system, job, tmp_path, tmpfs_dir)
    assert check_run(run, reference_counts(EVENTS), EVENTS) == []
    # No file-sink log, one directory per micro-batch: the windows above were read from every file there.
    out = tmp_path / "out"
    assert not (out / "_spark_metadata").exists()
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(f"batch_id={b.batch_id}" for b in run.batches)
    assert [p.name for p in tmpfs_dir.rglob("commits")] == ["commits"]  # Spark's commit log, on tmpfs
    assert run.state_bytes > 0 and run.memory.python_rss > 0 and run.memory.jvm_heap > 0 and run.load is not None


def test_trigger_variant_checks_final_rows_and_counts_early_ones(spark):
    result = run_ysb(spark, events=EVENTS, variant="trigger", rows_per_batch=10_000, warmup=False)
    expected = dict(reference_counts(EVENTS))
    assert result.correct and result.variant == "trigger" and result.checkpoint_fs
    funke, plain = result.runs
    assert dict(funke.windows) == expected == dict(plain.windows)
    # funke fired every window early at least once before its end (1 s of processing time passes per batch here);
    # update mode rewrote the windows the second batch touched.
    assert funke.early_rows >= len(expected) and plain.early_rows > 0
    assert [b.events for b in plain.batches] == [10_000, 10_000]  # no flush event: update mode needs none
    assert [b.events for b in funke.batches][:2] == [10_000, 10_000] and all(b.duration_ms > 0 for b in funke.batches)
    # A final count one view off is a mismatch, whatever the early rows said.
    wrong = dict(expected)
    key = max(wrong)
    wrong[key] += 1
    assert [line.split(":")[0] for line in check_run(funke, wrong, EVENTS)] == ["funke (streaming)"]


def test_cardinality_variant_runs_many_campaigns_and_reports_memory_and_state(spark):
    result = run_ysb(spark, events=EVENTS, variant="cardinality", campaigns=20_000, rows_per_batch=10_000, warmup=False)
    expected = dict(reference_counts(EVENTS, 20_000))
    assert result.correct and result.campaigns == 20_000 and result.reference_windows == len(expected)
    assert len(expected) > 20 * len(reference_counts(EVENTS))  # far more window keys than the base variant's
    for run in result.runs:
        assert dict(run.windows) == expected
        assert run.state_bytes > 0 and run.memory.jvm_heap > 0 and run.memory.jvm_rss > 0


def test_checkpoint_bench_runs_funke_with_exactly_once_on_and_off_and_checks_both(spark):
    result = run_checkpoint(spark, events=EVENTS, rows_per_batch=8_000, rounds=1, warmup=False)
    assert result.correct and result.rounds == 1
    assert result.on_fs != "tmpfs" and result.off_fs == ("tmpfs" if Path("/dev/shm").is_dir() else result.on_fs)
    expected = dict(reference_counts(EVENTS))
    for run in (result.on, result.off):
        assert run.system == "funke" and run.events == EVENTS and dict(run.windows) == expected
    assert result.ratio is not None and result.ratio > 0
