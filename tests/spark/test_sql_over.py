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


def test_batch_mode_window_functions_over_a_whole_partition_give_pyflinks_rows():
    """In batch mode an OVER window orders by any column; LAG, LEAD (offset 2, a default), NTILE (3 buckets over 7,
    5, 3 and 1 rows), CUME_DIST, PERCENT_RANK, RANK, DENSE_RANK, ROW_NUMBER and SUM in one SELECT, ties in ORDER BY
    (peers), a NULL value and four partitions. The expected rows are PyFlink 2.3's for the same query (checked
    against it, batch mode, parallelism 1: ties in arrival order)."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES ('a', 1, 10), ('a', 2, 20), ('a', 2, 5), ('a', 3, CAST(NULL AS INT)), ('a', 5, 7), "
        "('b', 1, 1), ('b', 1, 2), ('b', 1, 3), ('c', 4, 9), ('d', 1, 1), ('d', 2, 2), ('d', 3, 3), ('d', 4, 4), ('d', 5, 5), ('d', 6, 6), "
        "('d', 7, 7)) AS v(k, o, x)"
    )
    query = (
        "SELECT k, o, x, LAG(x) OVER w AS lg, LEAD(x) OVER w AS ld, LEAD(o, 2, -1) OVER w AS ld2, NTILE(3) OVER w AS nt, "
        "CUME_DIST() OVER w AS cd, PERCENT_RANK() OVER w AS pr, RANK() OVER w AS rk, DENSE_RANK() OVER w AS dr, "
        "ROW_NUMBER() OVER w AS rn, SUM(x) OVER w AS s FROM t WINDOW w AS (PARTITION BY k ORDER BY o)"
    )
    schema = t_env.sql_query(query).get_schema()  # (PyFlink's: the same types, NOT NULL but for lg, ld and s)
    assert [str(t) for t in schema.get_field_data_types()][3:] == ["INT", "INT", "INT", "BIGINT", "DOUBLE", "DOUBLE", "BIGINT", "BIGINT", "BIGINT", "INT"]
    with t_env.execute_sql(query).collect() as it:
        got = sorted((tuple(r) for r in it), key=repr)
    assert got == sorted([
        ("a", 1, 10, None, 20, 2, 1, 0.2, 0.0, 1, 1, 1, 10),
        ("a", 2, 20, 10, 5, 3, 1, 0.6, 0.25, 2, 2, 2, 35),
        ("a", 2, 5, 20, None, 5, 2, 0.6, 0.25, 2, 2, 3, 35),
        ("a", 3, None, 5, 7, -1, 2, 0.8, 0.75, 4, 3, 4, 35),
        ("a", 5, 7, None, None, -1, 3, 1.0, 1.0, 5, 4, 5, 42),
        ("b", 1, 1, None, 2, 1, 1, 1.0, 0.0, 1, 1, 1, 6),
        ("b", 1, 2, 1, 3, -1, 2, 1.0, 0.0, 1, 1, 2, 6),
        ("b", 1, 3, 2, None, -1, 3, 1.0, 0.0, 1, 1, 3, 6),
        ("c", 4, 9, None, None, -1, 1, 1.0, 0.0, 1, 1, 1, 9),
        ("d", 1, 1, None, 2, 3, 1, 0.14285714285714285, 0.0, 1, 1, 1, 1),
        ("d", 2, 2, 1, 3, 4, 1, 0.2857142857142857, 0.16666666666666666, 2, 2, 2, 3),
        ("d", 3, 3, 2, 4, 5, 1, 0.42857142857142855, 0.3333333333333333, 3, 3, 3, 6),
        ("d", 4, 4, 3, 5, 6, 2, 0.5714285714285714, 0.5, 4, 4, 4, 10),
        ("d", 5, 5, 4, 6, 7, 2, 0.7142857142857143, 0.6666666666666666, 5, 5, 5, 15),
        ("d", 6, 6, 5, 7, -1, 3, 0.8571428571428571, 0.8333333333333334, 6, 6, 6, 21),
        ("d", 7, 7, 6, None, -1, 3, 1.0, 1.0, 7, 7, 7, 28),
    ], key=repr)  # fmt: skip
