"""Flink SQL's OVER aggregations on Spark (funke.table.over), streaming and bounded: each row with the
aggregates of its frame, values derived by hand from the rows below."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import funke as fk
from funke.table import StreamTableEnvironment

pytestmark = pytest.mark.spark

T0 = datetime(2024, 1, 1)
# (key, second, value): two rows of a at second 2 (peers of a RANGE frame, in arrival order in a ROWS one)
ROWS = [("a", 1, 10), ("b", 1, 5), ("a", 2, 20), ("a", 2, 1), ("b", 4, 7), ("a", 5, 3)]


@pytest.mark.parametrize("bounded", [False, True])
def test_over_rows_and_range_frames_give_each_row_its_frame_s_aggregates(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    rows = [{"k": k, "ts": T0 + timedelta(seconds=s), "v": v} for k, s, v in ROWS]
    t_env.create_temporary_view("s", env.from_collection(rows, "k string, ts timestamp, v int", watermarks=wm, rows_per_batch=2))
    frame = "PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"
    by_rows = t_env.sql_query(f"SELECT k, ts, v, SUM(v) OVER ({frame}) AS total, COUNT(*) OVER ({frame}) AS n FROM s")
    ranged = t_env.sql_query(
        "SELECT k, ts, v, MAX(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) AS top FROM s"
    )
    assert not by_rows.updating and not ranged.updating
    got_rows, got_range = t_env.to_data_stream(by_rows).collect(), t_env.to_data_stream(ranged).collect()
    env.execute(bounded=bounded).wait(300)

    def seconds(r):
        return int((r["ts"] - T0).total_seconds())

    # ROWS: the row and the one before it (a's two rows at second 2 in arrival order)
    assert sorted((r["k"], seconds(r), r["v"], r["total"], r["n"]) for r in got_rows.rows) == sorted(
        [("a", 1, 10, 10, 1), ("a", 2, 20, 30, 2), ("a", 2, 1, 21, 2), ("a", 5, 3, 4, 2), ("b", 1, 5, 5, 1), ("b", 4, 7, 12, 2)]
    )
    # RANGE 1 s: the rows of the last second up to the row's time, its peers included
    assert sorted((r["k"], seconds(r), r["v"], r["top"]) for r in got_range.rows) == sorted(
        [("a", 1, 10, 10), ("a", 2, 20, 20), ("a", 2, 1, 20), ("a", 5, 3, 3), ("b", 1, 5, 5), ("b", 4, 7, 7)]
    )
