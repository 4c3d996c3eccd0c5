"""What the dashboard's JSON says of a real run (``tests/unit/recorded.py``: examples.ysb:job at 20,000
rows/s, whose filter keeps the "view" third of the events): per-operator rates that are each
operator's own, "not measured" where nothing counts an operator, event-time lag against the
job's own event time, the checkpoint history, and the job table of a funke home."""

from __future__ import annotations

import sqlite3
import time

import pytest

from funke.runtime import dashboard
from funke.savepoints.registry import Registry

from .recorded import QUERY, rows, wall_time
from .recorded import replayed as replay

FILTER, WINDOW, SINK = "filter-d523a41d71", "campaign-window", "campaign-counts"
SOURCE, WATERMARK, LAST_SELECT = "ad-events", "watermark-e4883032be", "select-60dc27a58b"


def test_each_operator_shows_its_own_rate_not_the_source_s():
    ops = dashboard.operators(replay(18), now=None)  # a stopped job: its last 10 batches, 9..18
    seconds = wall_time(9, 18)
    read = rows(9, 18)
    kept = rows(9, 18, "funke_op_out_filter_d523a41d71", "rows_out")
    assert ops[SOURCE]["out"] == ops[WATERMARK]["out"] == read / seconds
    assert ops[FILTER] == {"in": read / seconds, "out": kept / seconds, "queries": ops[FILTER]["queries"]}
    assert 0.30 < ops[FILTER]["out"] / ops[SOURCE]["out"] < 0.36  # the filter keeps a third: not the source's rate
    windows = rows(9, 18, "funke_op_out_campaign_window", "rows_out")
    assert ops[WINDOW]["out"] == windows / seconds < ops[FILTER]["out"]
    assert ops[SINK]["in"] == ops[SINK]["out"] == rows(9, 18, "funke_out_campaign_counts") / seconds


def test_without_operator_metrics_a_native_operator_is_not_measured():
    ops = dashboard.operators(replay(18, without_operator_metrics=True), now=None)
    seconds = wall_time(9, 18)
    assert ops[SOURCE]["out"] == rows(9, 18) / seconds
    assert ops[FILTER]["in"] == ops[SOURCE]["out"] and ops[FILTER]["out"] is None  # its input is known; its output is not
    assert ops[WINDOW]["in"] is None and ops[WINDOW]["out"] is None
    assert ops[LAST_SELECT]["out"] == ops[SINK]["in"]  # the sink's only input gives what the sink writes


def test_watermark_lag_is_against_the_job_s_event_time_not_the_wall_clock():
    got = dashboard.details(replay(18))
    # batch 18 ran with watermark 00:00:09.398; the largest event time seen by then was 00:00:14.766 (data from 2024)
    assert got["event_time_lag_s"] == pytest.approx(14.766 - 9.398)
    assert got["lag"]["label"] == "largest event time seen minus the watermark (s)"
    lags = [s for _, s in got["lag"]["series"][SINK]]
    assert len(lags) == 17 and all(5.0 <= s < 8.0 for s in lags), lags  # batches 2..18: the 5 s bound plus a batch
    assert got["metrics"]["watermark"] == "2024-01-01T00:00:09.398Z"


def test_the_checkpoint_history_lists_each_committed_micro_batch_newest_first():
    history = dashboard.details(replay(18))["checkpoints"]
    assert [c["batch"] for c in history] == list(range(18, -1, -1))
    newest, p = history[0], QUERY["progress"][18]
    assert newest["duration_ms"] == p["durationMs"]["triggerExecution"]
    assert newest["checkpoint_ms"] == p["durationMs"]["walCommit"] + p["durationMs"]["commitOffsets"]
    assert newest["rows"] == p["observedMetrics"]["funke_wm_watermark_e4883032be"]["rows"]
    assert (newest["state_rows"], newest["state_bytes"]) == (
        p["stateOperators"][0]["numRowsTotal"],
        p["stateOperators"][0]["memoryUsedBytes"],
    )


def test_the_job_table_shows_running_and_recently_ended_jobs_only(tmp_path):
    handle = replay(18)
    handle.home = str(tmp_path)
    registry = Registry(tmp_path)
    registry.job_started("ysb", checkpoint="/c/ysb", fingerprint="f")
    registry.job_started("other", checkpoint="/c/other", fingerprint="f")  # runs (this process stands for it)
    registry.note_endpoint("other", "http://127.0.0.1:40001")
    registry.note_spark_ui("other", "http://127.0.0.1:4041")
    registry.job_started("just-ended", checkpoint="/c/a", fingerprint="f")
    registry.job_ended("just-ended", "finished")
    registry.job_started("last-week", checkpoint="/c/b", fingerprint="f")
    registry.job_ended("last-week", "failed")
    with sqlite3.connect(registry.path) as db:  # ended a week ago
        db.execute("UPDATE jobs SET updated_at = ? WHERE name = 'last-week'", (time.time() - 7 * 86400,))
    listed = dashboard.job_list(handle)
    by_name = {j["name"]: j for j in listed["jobs"]}
    assert list(by_name) == ["ysb", "other", "just-ended"] and listed["older"] == 1
    assert by_name["ysb"]["this"] and by_name["ysb"]["status"] == "stopped"
    assert (by_name["other"]["http"], by_name["other"]["spark_ui"], by_name["other"]["running"]) == (
        "http://127.0.0.1:40001",
        "http://127.0.0.1:4041",
        True,
    )
    assert by_name["just-ended"]["running"] is False and by_name["just-ended"]["ended"]


def test_a_side_output_and_its_sink_are_counted_by_its_tag():
    """A general operator's Spark query that feeds its main output's sink and a side output's: the
    operator's observe counts each tag, so each branch shows its own rows, not the query's total."""
    from funke.runtime.progress import operator_flows

    graph = [
        {"uid": "src", "kind": "Source", "inputs": [], "queries": ["main-out", "late-out"]},
        {"uid": "g", "kind": "KeyedProcess", "inputs": ["src"], "queries": ["main-out", "late-out"]},
        {"uid": "main-out", "kind": "Sink", "inputs": ["g"], "queries": ["main-out"]},
        {"uid": "late", "kind": "SideOutput", "tag": "late", "inputs": ["g"], "queries": ["late-out"]},
        {"uid": "late-out", "kind": "Sink", "inputs": ["late"], "queries": ["late-out"]},
    ]
    flows = operator_flows({"funke_src_src": 40, "out:g": 6, "tag:g:late": 1}, graph, ["main-out", "late-out"])
    assert flows[("g", "in")] == 40 and flows[("main-out", "in")] == flows[("main-out", "out")] == 6
    assert flows[("late", "in")] == flows[("late", "out")] == flows[("late-out", "in")] == flows[("late-out", "out")] == 1
    assert ("late", "in") not in operator_flows({"funke_src_src": 40, "out:g": 6}, graph, "main-out")  # (not in that query)
