"""Flink SQL's sorts without a window on Spark (funke.table.sort): in a stream, ``ORDER BY`` a time attribute
ascending (rows out of order within the watermark's bound come out in order, ties by the rest of the
ORDER BY), streaming and bounded; in batch mode, any ``ORDER BY`` of columns with ``LIMIT`` and
``OFFSET``, over insert-only and updating input. Orders derived by hand from the rows below."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import funke as fk
from funke.table import StreamTableEnvironment

pytestmark = pytest.mark.spark

T0 = datetime(2024, 1, 1)
# (id, second, value): out of order by at most 2 s, two rows at second 2 and two of value 5
ROWS = [(1, 3, 5), (2, 1, 8), (3, 2, 1), (4, 2, 5), (5, 5, 2), (6, 4, 5), (7, 6, None)]


def view(env, t_env):
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(2)).with_timestamp_assigner("ts")
    rows = [{"id": i, "ts": T0 + timedelta(seconds=s), "v": v} for i, s, v in ROWS]
    t_env.create_temporary_view("s", env.from_collection(rows, "id bigint, ts timestamp, v int", watermarks=wm, rows_per_batch=2))


@pytest.mark.parametrize("bounded", [False, True])
def test_a_stream_sorts_on_its_time_attribute_then_the_rest_of_the_order(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    result = t_env.sql_query("SELECT id, ts, v FROM s ORDER BY ts, v DESC")
    assert not result.updating
    got = t_env.to_data_stream(result).collect()
    env.execute(bounded=bounded).wait(300)
    assert [r["id"] for r in got.rows] == [2, 4, 3, 1, 6, 5, 7]


def test_batch_mode_sorts_the_whole_result_with_limit_and_offset_and_an_updating_input(spark, tmp_path):
    env = fk.StreamEnvironment(app="test", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"), runtime_mode="batch")
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    by_value = t_env.to_data_stream(t_env.sql_query("SELECT id, v FROM s ORDER BY v DESC NULLS LAST, id")).collect()
    paged = t_env.to_data_stream(t_env.sql_query("SELECT id, v FROM s ORDER BY v LIMIT 3 OFFSET 2")).collect()
    skipped = t_env.to_data_stream(t_env.sql_query("SELECT id FROM s ORDER BY id OFFSET 5")).collect()
    grouped = t_env.sql_query("SELECT v, COUNT(*) AS n FROM s GROUP BY v ORDER BY n DESC, v")
    assert not grouped.updating  # (the group aggregation's changes are applied before the sort)
    counts = t_env.to_data_stream(grouped).collect()
    env.execute().wait(300)
    assert [(r["id"], r["v"]) for r in by_value.rows] == [(2, 8), (1, 5), (4, 5), (6, 5), (5, 2), (3, 1), (7, None)]
    # ascending, NULL first (Flink's default for ASC): None, 1, 2, 5, 5, 5, 8 -> skip 2, keep 3
    assert [(r["id"], r["v"]) for r in paged.rows] == [(5, 2), (1, 5), (4, 5)]
    assert [r["id"] for r in skipped.rows] == [6, 7]
    assert [(r["v"], r["n"]) for r in counts.rows] == [(5, 3), (None, 1), (1, 1), (2, 1), (8, 1)]
