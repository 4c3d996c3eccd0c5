"""``funke bench general``'s row-function and process-function harnesses at a tiny size: both systems run the same function
over the same rows, and their outputs are compared (a difference fails the bench)."""

from __future__ import annotations

import pytest

from funke.bench import rowmap

pytestmark = pytest.mark.spark


def test_funke_map_and_the_plain_udf_give_the_same_rows_and_a_summary(spark, monkeypatch):
    runs = rowmap.run_map_bench(spark, 3_000)
    assert [r.system for r in runs] == ["funke map", "plain PySpark Arrow UDF"]
    want = (3_000, sum(range(1, 3_001)), sum(i * 0.5 * 2 for i in range(3_000)))
    assert all(r.checksum[:3] == want for r in runs)
    assert "funke/plain **" in rowmap.map_summary(runs)
    # a side whose output differs fails the bench
    monkeypatch.setattr(rowmap, "run_plain", lambda spark, rows, path: rowmap.MapRun("plain PySpark Arrow UDF", rows, 1.0, (rows, 0, 0.0, 0)))
    with pytest.raises(AssertionError, match="differ"):
        rowmap.run_map_bench(spark, 100)


def test_process_function_bench_checks_both_systems_against_a_batch_group_by(spark):
    from funke.bench import process

    runs = process.run_process_bench(spark, 22_000, keys=50, rows_per_batch=11_000)
    assert [r.system for r in runs] == ["funke KeyedProcessFunction", "plain PySpark transformWithStateInPandas", "funke KeyedProcessFunction (process_batch)"]
    assert sum(n for _, _, n in runs[0].rows) == 22_000 and runs[1].rows <= runs[0].rows and runs[2].rows == runs[0].rows
    assert "funke/plain **" in process.process_summary(runs, 50) and "the per-element one" in process.process_summary(runs, 50)


def test_both_sessions_jobs_of_the_general_bench_equal_the_numpy_sessions(spark, tmp_path):
    from funke.bench import general
    from funke.bench.reference import reference_sessions

    # 200 users' clicks over ~1.2 s of event time (up to 1 s out of order), a 20 ms gap: many sessions per user,
    # and hundreds of clicks exactly one gap apart (sessions that touch merge, in Flink and in Spark's session_window)
    expected = reference_sessions(20_000, keys=200, events_per_second=general.SESSION_EVENTS_PER_SECOND, gap_ms=20)
    assert len(expected) > 1_000
    funke = general._sessions(20_000, str(tmp_path / "sessions"), expected, keys=200, gap_ms=20)
    plain = general._plain_sessions(spark, 20_000, str(tmp_path / "plain"), expected, keys=200, gap_ms=20)
    assert funke.problems == () and plain.problems == ()
    assert funke.checked == plain.checked == f"{len(expected):,} sessions equal to the reference"
    assert plain.job == "sessions, 200 users (plain PySpark)"
