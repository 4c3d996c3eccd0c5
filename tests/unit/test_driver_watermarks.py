"""funke's driver-side watermark of a two-input operator (Flink's rule, idleness included), step by step."""

from __future__ import annotations

import json

import pytest

from funke.runtime.watermarks import Clock
from funke.semantics.time import MIN_WATERMARK


def test_minimum_over_inputs_minus_infinity_until_each_has_data_and_idle_inputs_skipped(tmp_path):
    path = tmp_path / "clock.json"
    clock = Clock(str(path), (("a", 1_000, None), ("b", 0, 500)), started=0.0)
    # a has data, b none yet and not quiet for 500 ms: b holds the watermark at -infinity
    assert clock.update({"a": {"max_event_time": 10_000, "rows": 3}}, now=0.1) == MIN_WATERMARK
    assert json.loads(path.read_text())["watermark"] is None
    # b's first row: the minimum of a's 10000 - 1000 - 1 and b's 4000 - 0 - 1
    assert clock.update({"b": {"max_event_time": 4_000, "rows": 1}}, now=0.2) == 3_999
    # b quiet for 500 ms: idle, a alone decides
    assert clock.update({"a": {"max_event_time": 12_000, "rows": 1}}, now=0.8) == 10_999
    # b sends again, with an older time: it holds again, but the watermark never moves back
    assert clock.update({"b": {"max_event_time": 5_000, "rows": 1}}, now=0.9) == 10_999
    assert (
        clock.update({"b": {"max_event_time": 20_000, "rows": 1}, "a": {"max_event_time": 15_000, "rows": 1}}, now=1.0) == 13_999
    )
    assert json.loads(path.read_text())["watermark"] == 13_999


def test_all_inputs_idle_keeps_the_watermark(tmp_path):
    clock = Clock(str(tmp_path / "c.json"), (("a", 0, 100), ("b", 0, 100)), started=0.0)
    assert clock.update({"a": {"max_event_time": 5_000, "rows": 1}, "b": {"max_event_time": 6_000, "rows": 1}}, now=0.0) == 4_999
    assert clock.update({}, now=10.0) == 4_999


def test_an_operator_on_funke_s_clock_ignores_spark_s_watermark():
    """Spark's query watermark skips an input that has not sent a row; funke's clock holds at -infinity."""
    import dataclasses

    import pandas as pd

    from funke.semantics.joins import IntervalJoinOperator, ProcessJoinFunction
    from funke.spark.general.program import CONTROL, SECOND_PREFIX, SIDE, TS, WM, Output, Program, SecondInput
    from funke.spark.general.run import run_bucket

    class Both(ProcessJoinFunction):
        def process_element(self, left, right, ctx):
            yield {"k": left["k"]}

    types = {"k": "string"}
    program = Program(
        "joined", lambda: IntervalJoinOperator(Both(), lower=0, upper=0), ("k",), ("k",), (Output(None, (("k", "string"),)),),
        user_rows=True, types=types, second=SecondInput(("k",), ("k",), frozenset(), types), clock=True,
    )  # fmt: skip

    def batch(wm):
        return pd.DataFrame(
            {
                CONTROL: [False, True],
                SIDE: [0, None],
                TS: [1_000, None],
                WM: [None, wm],
                "k": ["a", None],
                SECOND_PREFIX + "k": [None, None],
            }
        )

    _, snap = run_bucket(program, None, batch(None), spark_watermark=9_000, processing_time=0)
    assert snap["operator"]["watermark"] == MIN_WATERMARK  # Spark says 8999; the clock says nothing yet
    _, snap = run_bucket(program, snap, batch(3_000), spark_watermark=9_000, processing_time=0)
    assert snap["operator"]["watermark"] == 3_000
    _, spark_led = run_bucket(
        dataclasses.replace(program, clock=False), None, batch(None), spark_watermark=9_000, processing_time=0
    )
    assert spark_led["operator"]["watermark"] == 8_999


def test_the_clock_source_hands_each_micro_batch_the_watermark_folded_from_every_earlier_one(tmp_path, monkeypatch):
    """Batch n+1's read waits for the driver's fold of batch n (the listener may lag behind the
    next trigger): the watermark after batch n reaches batch n+1, Spark's own schedule."""
    from funke.spark import datasources

    path = tmp_path / "clock.json"
    clock = Clock(str(path), (("a", 0, None),), started=0.0)
    clock.write()
    reader = datasources._Clock(str(path), buckets=2)
    rows, end = reader.read(reader.initialOffset())  # the first micro-batch: nothing to wait for
    assert list(rows) == [(0, None), (1, None)]

    folds = []

    def listener_lags(_seconds):  # the fold of batch 0 lands while batch 1's read waits for it
        if not folds:
            folds.append(clock.update({"a": {"max_event_time": 7_000, "rows": 2}}, now=0.1))

    monkeypatch.setattr(datasources.time, "sleep", listener_lags)
    rows, end = reader.read(end)
    assert folds == [6_999] and list(rows) == [(0, 6_999), (1, 6_999)]
    # a replay of that micro-batch gets the very rows it had, from its offsets
    assert list(reader.readBetweenOffsets({"batch": 1}, end)) == [(0, 6_999), (1, 6_999)]
    # a restarted driver counts its folds afresh: the first read after it takes the file as it is
    restarted = Clock(str(path), (("a", 0, None),), started=0.0)
    restarted.write()
    monkeypatch.setattr(datasources.time, "sleep", lambda _s: pytest.fail("waited for a fold of another run"))
    rows, _ = reader.read(end)
    assert list(rows) == [(0, None), (1, None)]


def test_the_clock_source_following_the_commit_log_sends_rows_only_when_something_moved_or_is_due(tmp_path, monkeypatch):
    """With the query's commit log to follow, the clock waits until every committed batch is folded,
    then sends time rows only when the watermark or an input's maximum moved, at a new run, or
    when a processing-time timer or an input's idleness is due; otherwise Spark sees no new data."""
    from funke.runtime.watermarks import DueTimers
    from funke.spark import datasources

    commits = tmp_path / "commits"
    commits.mkdir()
    path = tmp_path / "clock.json"
    clock = Clock(str(path), (("a", 0, None),), started=0.0, timers=DueTimers(2, "late"), commits=str(commits))
    clock.write()
    reader = datasources._Clock(str(path), buckets=2)
    rows, end = reader.read(reader.initialOffset())  # a new run: rows
    assert list(rows) == [(0, None), (1, None)]
    assert reader.read(end)[1] is end  # nothing moved: no new offset

    (commits / "0").write_text("v1")  # batch 0 committed; its fold lands while the read waits for it
    folds = []

    def listener_lags(_seconds):
        if not folds:
            folds.append(clock.update({"a": {"max_event_time": 7_000, "rows": 2}}, now=0.1, batch=0))

    monkeypatch.setattr(datasources.time, "sleep", listener_lags)
    rows, end = reader.read(end)
    assert folds == [6_999] and list(rows) == [(0, 6_999), (1, 6_999)]
    monkeypatch.setattr(datasources.time, "sleep", lambda _s: pytest.fail("waited though every committed batch is folded"))
    assert reader.read(end)[1] is end

    clock.update({"late": {"runs": 1, "pt_due": 1}}, now=0.2, batch=0)  # a processing-time timer, due long ago
    rows, fired = reader.read(end)
    assert list(rows) == [(0, 6_999), (1, 6_999)] and fired["fired"] == 1
    assert reader.read(fired)[1] is fired  # fired once, not again until the driver reports another


def test_the_beat_source_beats_at_a_new_run_when_the_driver_wants_one_and_when_a_timer_is_due(tmp_path):
    from funke.runtime.watermarks import Beat, DueTimers
    from funke.spark import datasources

    path = tmp_path / "beat.json"
    reader = datasources._Beat(str(path), buckets=3)
    start = reader.initialOffset()
    rows, end = reader.read(start)  # no file (a Connect server elsewhere): every micro-batch, as before
    assert list(rows) == [(0, None), (1, None), (2, None)] and end["beat"] == 1
    beat = Beat(str(path), DueTimers(3, "late"), ends=("funke_src_a",))
    beat.write()
    rows, end = reader.read(end)  # a new run
    assert list(rows) == [(0, None), (1, None), (2, None)]
    assert reader.read(end)[1] is end
    beat.update({}, "2024-01-01T00:00:00.000Z")  # the watermark's first move: Spark runs no batch for it
    rows, end = reader.read(end)
    assert list(rows) == [(0, None), (1, None), (2, None)] and reader.read(end)[1] is end
    beat.update({"late": {"runs": 1, "pt_due": 5}}, "2024-01-01T00:00:01.000Z")  # later moves: Spark's own batches
    rows, end = reader.read(end)
    assert end["fired"] == 5 and reader.read(end)[1] is end
    assert list(reader.readBetweenOffsets(start, end)) == [(0, None), (1, None), (2, None)]  # (a replay: the same rows)


def test_the_beat_source_says_the_end_of_input_once_every_finite_source_of_the_query_has_ended(tmp_path):
    """The operator then fires every timer, processing-time ones too (its rows' watermark is the end
    of input); the driver learns from the source's offset that a micro-batch has read that beat."""
    from funke.runtime.watermarks import Beat, DueTimers
    from funke.spark import datasources

    path = tmp_path / "beat.json"
    beat = Beat(str(path), DueTimers(2, "late"), ends=("funke_src_a", "funke_src_b"))
    beat.write()
    reader = datasources._Beat(str(path), buckets=2)
    _, end = reader.read(reader.initialOffset())
    beat.update({"funke_src_a": {"rows": 3, "eos": 1}}, None)  # one source ended: a beat, not yet the end
    rows, end = reader.read(end)
    assert list(rows) == [(0, None), (1, None)] and not end["end"]
    beat.saw([{"endOffset": json.dumps(end)}])
    assert beat.linked and not beat.closed
    beat.update({"funke_src_b": {"rows": 0, "eos": 1}}, None)
    rows, last = reader.read(end)
    assert list(rows) == [(0, datasources.END_OF_INPUT_MS), (1, datasources.END_OF_INPUT_MS)] and last["end"]
    assert list(reader.readBetweenOffsets(end, last)) == [(0, datasources.END_OF_INPUT_MS), (1, datasources.END_OF_INPUT_MS)]
    assert reader.read(last)[1] is last  # said once
    beat.saw([{"endOffset": json.dumps(last)}])
    assert beat.closed


def test_the_beat_source_reads_the_watermark_s_first_move_in_the_commit_log(tmp_path):
    """Spark writes the watermark it passes on in the commit log before it asks the sources again:
    the beat for the first move comes in the very next micro-batch, with no listener to wait for."""
    from funke.runtime.watermarks import Beat, DueTimers
    from funke.spark import datasources

    commits = tmp_path / "commits"
    commits.mkdir()
    path = tmp_path / "beat.json"
    beat = Beat(str(path), DueTimers(2, "late"), commits=str(commits))
    beat.write()
    reader = datasources._Beat(str(path), buckets=2)
    _, end = reader.read(reader.initialOffset())  # the run's first beat
    (commits / "0").write_text('v1\n{"nextBatchWatermarkMs":0}')
    assert reader.read(end)[1] is end
    (commits / "1").write_text('v1\n{"nextBatchWatermarkMs":1704067200000}')
    rows, end = reader.read(end)
    assert list(rows) == [(0, None), (1, None)] and end["moved"] is True
    beat.update({}, "2024-01-01T00:00:00.000Z")  # the listener's report changes nothing here
    (commits / "2").write_text('v1\n{"nextBatchWatermarkMs":1704067201000}')
    assert reader.read(end)[1] is end and beat.want == 0
