"""Flink SQL's sorts without a window on Spark (funke.table.sort): in a stream, ``ORDER BY`` a time attribute
ascending (rows out of order within the watermark's bound come out in order, ties by the rest of the
ORDER BY), streaming and bounded; in batch mode, any ``ORDER BY`` of columns with ``LIMIT`` and
``OFFSET``, over insert-only and updating input. Orders derived by hand from the rows below."""

from __future__ import annotations

from collections import Counter
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


def test_batch_mode_gives_an_updating_query_s_final_rows_each_an_insert(spark, tmp_path):
    """In batch mode Flink's operators give a result's final rows only: a GROUP BY (its upsert key the group's),
    a correlated scalar subquery (a LEFT join of an aggregation: no key known, one group) and a ROW_NUMBER Top-N
    end as their last rows, every one ``+I``."""
    env = fk.StreamEnvironment(app="test", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"), runtime_mode="batch")
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    queries = {
        "grouped": "SELECT v, COUNT(*) AS n FROM s GROUP BY v",
        "correlated": "SELECT id, (SELECT COUNT(*) FROM s AS o WHERE o.v = s.v AND o.id <> 3) AS n FROM s",
        "top": "SELECT id, v FROM (SELECT id, v, ROW_NUMBER() OVER (ORDER BY v DESC) AS rn FROM s) WHERE rn <= 2",
    }
    sinks = {name: t_env.to_changelog_stream(t_env.sql_query(sql)).collect() for name, sql in queries.items()}
    env.execute().wait(300)
    values = {i: v for i, _, v in ROWS}
    got = {name: sorted(((r["row_kind"], *(v for k, v in r.items() if k != "row_kind")) for r in sink.rows), key=repr) for name, sink in sinks.items()}
    counts = Counter(values.values())
    assert got["grouped"] == sorted((("+I", v, n) for v, n in counts.items()), key=repr)
    kept = Counter(v for i, v in values.items() if i != 3 and v is not None)
    assert got["correlated"] == sorted((("+I", i, kept[v] if v is not None else 0) for i, v in values.items()), key=repr)
    best = sorted((v, i) for i, v in values.items() if v is not None)[::-1][:2]
    assert sorted(v for _, _, v in got["top"]) == sorted(v for v, _ in best) and {k for k, *_ in got["top"]} == {"+I"}


def test_a_stream_keeps_a_rank_range_and_limit_offset_as_a_top_n_from_rank_m_plus_1(env):
    """``rn BETWEEN 2 AND 3`` and ``LIMIT 2 OFFSET 2`` in a stream: Flink's Top-N with a rank range, its changes those
    of the ranks in the range (``-U``/``+U`` as rows move through them), the row number shown or not."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"id": i, "v": v} for i, _, v in ROWS]
    t_env.create_temporary_view("s", env.from_collection(rows, "id bigint, v int", rows_per_batch=4))  # (two micro-batches)
    ranked = "SELECT id, v, rn FROM (SELECT id, v, ROW_NUMBER() OVER (ORDER BY v DESC) AS rn FROM s) WHERE rn BETWEEN 2 AND 3"
    second = t_env.to_changelog_stream(t_env.sql_query(ranked)).collect()
    paged = t_env.to_changelog_stream(t_env.sql_query("SELECT id, v FROM s ORDER BY v LIMIT 2 OFFSET 2")).collect()
    env.execute().wait(300)
    # values in arrival order: 5, 8, 1, 5, 2, 5, NULL (ids 1 to 7); DESC puts NULL last: 8 then 5 makes 5 rank 2,
    # 1 lands at rank 3, the second 5 ties with the first and pushes 1 out of rank 3; 2, 5 and NULL rank below 3
    assert [(r["row_kind"], r["id"], r["rn"]) for r in second.rows] == [("+I", 1, 2), ("+I", 3, 3), ("-U", 3, 3), ("+U", 4, 3)]
    # ascending, NULL first; ranks 3 and 4: 8 is third once 1 arrives; the second 5 takes rank 3 and 8 moves to 4;
    # 2 enters below 1 (rank 2): the 5s move down, 8 leaves; the third 5 ties with the worst and stays out;
    # NULL comes first: 2 and the first 5 move down into ranks 3 and 4
    assert [(r["row_kind"], r["id"]) for r in paged.rows] == [
        ("+I", 2), ("-U", 2), ("+U", 4), ("+I", 2), ("-U", 4), ("+U", 1), ("-U", 2), ("+U", 4), ("-U", 1), ("+U", 5), ("-U", 4), ("+U", 1),
    ]  # fmt: skip
