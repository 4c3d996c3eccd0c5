"""Flink SQL on Spark: window TVF aggregations (and the legacy group windows, ``GROUP BY TUMBLE(ts, size)``)
equal the DataStream program they lower to, streaming (with late rows dropped, as Flink SQL does) and bounded; projections and filters with Flink's integer
division. Expected rows are derived by hand."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.table import StreamTableEnvironment, Tumble
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark
T0 = dt.datetime(2024, 1, 1)
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")


def at(ms: int) -> dt.datetime:
    return T0 + dt.timedelta(milliseconds=ms)


# Two rows per micro-batch; each batch's rows, then the watermark (the maximum so far). [0 s, 10 s) of
# a closes when 15 s arrives; a@3 s in the last batch is then late, as is b@-20 s: both dropped.
ROWS = [
    ("a", 1_000, 1), ("a", 2_000, 2),
    ("a", 15_000, 4), ("b", 16_000, 8),
    ("b", 17_000, 16), ("b", 18_000, 32),
    ("a", 3_000, 64), ("b", -20_000, 128),
]  # fmt: skip
SCHEMA = "k string, ts timestamp, v int"


def view(env, t_env):
    rows = [{"k": k, "ts": at(ms), "v": v} for k, ms, v in ROWS]
    stream = env.from_collection(rows, SCHEMA, rows_per_batch=2, watermarks=WM)
    t_env.create_temporary_view("ev", stream)
    return stream


def window_rows(rows, *cols):
    return sorted((r["k"], int((r["window_start"] - T0).total_seconds()), *(r[c] for c in cols)) for r in rows)


@pytest.mark.parametrize("bounded", [False, True])
def test_a_tumble_aggregation_equals_the_datastream_window_and_drops_late_rows(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    stream = view(env, t_env)
    sql = t_env.sql_query(
        "SELECT k, window_start, window_end, window_time, COUNT(*) AS n, SUM(v) AS total, AVG(v) AS mean "
        "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k"
    )
    got = t_env.to_data_stream(sql).collect()
    program = stream.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).aggregate(n="count", total=("sum", "v")).collect()
    windowed = t_env.from_data_stream(stream).window(Tumble.over(fk.seconds(10)).on("ts").alias("w"))  # (the Table API)
    api = t_env.to_data_stream(
        windowed.group_by("w", "k").select("k", "w.start AS window_start", "COUNT(*) AS n", "SUM(v) AS total", "AVG(v) AS mean", "MAX(v) AS top")
    ).collect()
    legacy = t_env.to_data_stream(t_env.sql_query(  # (Flink SQL's legacy group window: the same query)
        "SELECT e.k, TUMBLE_START(e.ts, INTERVAL '10' SECOND) AS window_start, COUNT(*) AS n, SUM(e.v) AS total, AVG(e.v) AS mean "
        "FROM ev AS e GROUP BY TUMBLE(e.ts, INTERVAL '10' SECOND), e.k"
    )).collect()  # fmt: skip
    t_env.execute_sql("CREATE VIEW renamed (k, v, t2) AS SELECT k, v, ts AS t1 FROM ev")  # (a time attribute renamed stays one)
    renamed = t_env.to_data_stream(t_env.sql_query(
        "SELECT k, window_start, COUNT(*) AS n, SUM(v) AS total, AVG(v) AS mean "
        "FROM TABLE(TUMBLE(TABLE renamed, DESCRIPTOR(t2), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k"
    )).collect()  # fmt: skip
    by_time = t_env.to_data_stream(t_env.sql_query(  # (grouped by window_time too, as Flink allows: the same groups)
        "SELECT k, window_start, window_time, COUNT(*) AS n, SUM(v) AS total, AVG(v) AS mean "
        "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, window_time, k"
    )).collect()  # fmt: skip
    env.execute(bounded=bounded).wait(300)
    if bounded:  # no late data in a batch run: a@3 s and b@-20 s count
        expected = [("a", 0, 3, 67, 22), ("a", 10, 1, 4, 4), ("b", -20, 1, 128, 128), ("b", 10, 3, 56, 18)]
    else:
        expected = [("a", 0, 2, 3, 1), ("a", 10, 1, 4, 4), ("b", 10, 3, 56, 18)]  # AVG of INT is an INT (1.5 -> 1)
    assert window_rows(got.rows, "n", "total", "mean") == expected
    assert window_rows(program.rows, "n", "total") == [e[:4] for e in expected]
    assert window_rows(api.rows, "n", "total", "mean") == expected
    assert window_rows(legacy.rows, "n", "total", "mean") == expected
    assert window_rows(by_time.rows, "n", "total", "mean") == expected
    assert window_rows(renamed.rows, "n", "total", "mean") == expected
    assert all(r["window_time"] == r["window_end"] - dt.timedelta(milliseconds=1) for r in got.rows)
    assert all(type(r["total"]) is int and type(r["mean"]) is int for r in got.rows)


def test_hop_without_keys_and_having(env):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t = t_env.sql_query(
        "SELECT window_start, COUNT(*) AS n, MAX(v) - MIN(v) AS spread FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), "
        "INTERVAL '10' SECOND, INTERVAL '20' SECOND)) GROUP BY window_start, window_end HAVING COUNT(*) > 1"
    )
    out = t_env.to_data_stream(t).collect()
    env.execute(bounded=True).wait(300)
    # windows of 20 s every 10 s: [-10, 10) a1 a2 a3; [0, 20) all but b@-20; [10, 30) a15 b16 b17 b18; [-20, 0) b@-20 alone
    got = sorted((int((r["window_start"] - T0).total_seconds()), r["n"], r["spread"]) for r in out.rows)
    assert got == [(-10, 3, 63), (0, 7, 63), (10, 4, 28)]


def test_projection_and_filter_with_flink_integer_division(env):
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": "a", "v": 7, "p": 7.0}, {"k": "b", "v": -7, "p": -7.0}, {"k": "c", "v": 1, "p": 1.0}]
    t_env.create_temporary_view("nums", env.from_collection(rows, "k string, v int, p double"))
    t = t_env.sql_query("SELECT k, v / 2 AS half, p / 2 AS real_half, v * 10 + 1 AS x FROM nums WHERE v <> 1")
    out = t_env.to_data_stream(t).collect()
    env.execute().wait(300)
    assert sorted((r["k"], r["half"], r["real_half"], r["x"]) for r in out.rows) == [("a", 3, 3.5, 71), ("b", -3, -3.5, -69)]


def windows_ms(rows, *cols):
    ms = lambda t: round((t - T0).total_seconds() * 1000)  # noqa: E731
    return sorted((r["k"], ms(r["window_start"]), ms(r["window_end"]), *(r[c] for c in cols)) for r in rows)


# Two rows per batch; each batch's rows, then the watermark of the batch before (Spark's schedule, as in
# the DataStream program). [0, 5 s) fires after the third batch's rows (watermark 8 s), [0, 10 s) after
# the fourth's (12 s): a@4 s in the fourth batch is late for [0, 5 s) but counts in [0, 10 s), as Flink
# SQL keeps a late row for the windows that have not fired.
CUMULATE_ROWS = [
    ("a", 1_000, 1), ("a", 2_000, 2),
    ("a", 7_000, 4), ("b", 8_000, 8),
    ("a", 3_000, 16), ("b", 12_000, 32),
    ("a", 4_000, 64), ("b", 14_000, 128),
]  # fmt: skip


@pytest.mark.parametrize("bounded", [False, True])
def test_cumulate_windows_grow_by_step_and_a_late_row_counts_where_its_window_has_not_fired(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": k, "ts": at(ms), "v": v} for k, ms, v in CUMULATE_ROWS]
    t_env.create_temporary_view("ev", env.from_collection(rows, SCHEMA, rows_per_batch=2, watermarks=WM))
    t = t_env.sql_query(
        "SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), "
        "INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k"
    )
    out = t_env.to_data_stream(t).collect()
    env.execute(bounded=bounded).wait(300)
    if bounded:
        expected = [("a", 0, 5_000, 4, 83), ("a", 0, 10_000, 5, 87), ("b", 0, 10_000, 1, 8)]
    else:
        expected = [("a", 0, 5_000, 3, 19), ("a", 0, 10_000, 5, 87), ("b", 0, 10_000, 1, 8)]
    expected += [("b", 10_000, 15_000, 2, 160), ("b", 10_000, 20_000, 2, 160)]
    assert windows_ms(out.rows, "n", "s") == sorted(expected)


@pytest.mark.parametrize("bounded", [False, True])
def test_session_windows_per_partition_key(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t = t_env.sql_query(
        "SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(SESSION(TABLE ev PARTITION BY k, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end"
    )
    out = t_env.to_data_stream(t).collect()
    legacy = t_env.to_data_stream(t_env.sql_query(  # (the legacy group window: the same sessions)
        "SELECT k, SESSION_START(ts, INTERVAL '5' SECOND) AS window_start, SESSION_END(ts, INTERVAL '5' SECOND) AS window_end, "
        "COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY k, SESSION(ts, INTERVAL '5' SECOND)"
    )).collect()  # fmt: skip
    env.execute(bounded=bounded).wait(300)
    # a's session [1 s, 7 s) closes after the third batch's rows (watermark 16 s); a@3 s in the fourth then
    # opens [3 s, 8 s), already late: dropped, as is b@-20 s
    if bounded:
        expected = [("a", 1_000, 8_000, 3, 67), ("b", -20_000, -15_000, 1, 128)]
    else:
        expected = [("a", 1_000, 7_000, 2, 3)]
    expected += [("a", 15_000, 20_000, 1, 4), ("b", 16_000, 23_000, 3, 56)]
    assert windows_ms(out.rows, "n", "s") == sorted(expected)
    assert windows_ms(legacy.rows, "n", "s") == sorted(expected)


def test_union_all_subqueries_and_with_streaming_equal_bounded(env):
    """UNION ALL of two filtered branches of one view (by position, named as on the left), a window over
    it through WITH, and a subquery in FROM with its alias: the same rows bounded and streaming (no row
    is late here: every window's rows come before the watermark passes its end)."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": k, "ts": at(ms), "v": v} for k, ms, v in ROWS[:6]]  # (the last two rows are late in ROWS)
    t_env.create_temporary_view("ev", env.from_collection(rows, SCHEMA, rows_per_batch=2, watermarks=WM))
    sums = t_env.sql_query(
        "WITH ab AS (SELECT k, ts, v FROM ev WHERE k = 'a' UNION ALL SELECT k, ts, v * 100 AS w FROM ev WHERE k = 'b') "
        "SELECT k, window_start, window_end, SUM(v) AS s FROM TABLE(TUMBLE(TABLE ab, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, k"
    )
    big = t_env.sql_query(
        "SELECT t.k, w FROM (SELECT k, v * 10 AS w FROM ev WHERE k = 'a' UNION ALL SELECT k, v FROM ev WHERE k = 'b') AS t "
        "WHERE t.w > 10"
    )
    got = [t_env.to_data_stream(sums).collect(), t_env.to_data_stream(big).collect()]
    env.execute().wait(300)
    assert windows_ms(got[0].rows, "s") == [("a", 0, 10_000, 3), ("a", 10_000, 20_000, 4), ("b", 10_000, 20_000, 5_600)]
    assert sorted((r["k"], r["w"]) for r in got[1].rows) == [("a", 20), ("a", 40), ("b", 16), ("b", 32)]


def _ranked(rows, *cols):
    return sorted((int((r["window_start"] - T0).total_seconds()), *(r[c] for c in cols)) for r in rows)


@pytest.mark.parametrize("bounded", [False, True])
def test_window_top_n_over_a_tumble_tvf_ranks_each_window_once_and_drops_late_rows(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t = t_env.sql_query(
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rownum "
        "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rownum <= 2"
    )
    out = t_env.to_data_stream(t).collect()
    assert env.execute(bounded=bounded).wait(300).done
    assert list(t.columns) == ["k", "ts", "v", "window_start", "window_end", "window_time", "rownum"]
    if bounded:  # [0 s, 10 s) holds a@3 s (v 64); [-20 s, -10 s) b@-20 s
        expected = [(-20, "b", 128, 1), (0, "a", 64, 1), (0, "a", 2, 2), (10, "b", 32, 1), (10, "b", 16, 2)]
    else:  # both late rows dropped: their windows had fired
        expected = [(0, "a", 2, 1), (0, "a", 1, 2), (10, "b", 32, 1), (10, "b", 16, 2)]
    assert _ranked(out.rows, "k", "v", "rownum") == sorted(expected)
    assert all(r["window_end"] - r["window_start"] == dt.timedelta(seconds=10) for r in out.rows)


@pytest.mark.parametrize("bounded", [False, True])
def test_window_top_n_over_a_window_aggregation_with_a_condition_after_the_ranking(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t = t_env.sql_query(
        "SELECT window_start, k, total, rn FROM ("
        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn FROM ("
        "    SELECT window_start, window_end, k, SUM(v) AS total FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
        "    GROUP BY window_start, window_end, k)"
        ") WHERE rn <= 1 AND total > 3"
    )
    out = t_env.to_data_stream(t).collect()
    assert env.execute(bounded=bounded).wait(300).done
    # the best key per window, then total > 3: streaming [0 s, 10 s) has only a (1 + 2), ranked first and filtered out
    expected = [(-20, "b", 128, 1), (0, "a", 67, 1), (10, "b", 56, 1)] if bounded else [(10, "b", 56, 1)]
    assert _ranked(out.rows, "k", "total", "rn") == expected


def test_window_deduplication_keeps_the_last_row_of_each_key_in_each_hop_window(env):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t = t_env.sql_query(
        "SELECT window_start, k, v FROM (SELECT k, v, window_start, window_end, ROW_NUMBER() OVER ("
        "  PARTITION BY window_start, window_end, k ORDER BY ts DESC) AS rownum "
        "  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '20' SECOND))) WHERE rownum = 1"
    )
    out = t_env.to_data_stream(t).collect()
    assert env.execute(bounded=True).wait(300).done
    # 20 s windows every 10 s; a: 1, 2, 3 (v 64), 15 (v 4) s; b: -20 (v 128), 16, 17, 18 (v 32) s
    expected = [(-30, "b", 128), (-20, "b", 128), (-10, "a", 64), (0, "a", 4), (0, "b", 32), (10, "a", 4), (10, "b", 32)]
    assert _ranked(out.rows, "k", "v") == expected


@pytest.mark.parametrize("bounded", [False, True])
def test_current_watermark_is_the_watermark_each_row_arrives_at(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t = t_env.sql_query(
        "SELECT v, CURRENT_WATERMARK(ts) AS wm FROM ev WHERE CURRENT_WATERMARK(ts) IS NULL OR ts > CURRENT_WATERMARK(ts)"
    )
    out = t_env.to_data_stream(t).collect()
    assert env.execute(bounded=bounded).wait(300).done
    got = sorted((r["v"], None if r["wm"] is None else int((r["wm"] - T0).total_seconds() * 1000)) for r in out.rows)
    if bounded:  # one batch, no watermark before the end: every row, NULL
        assert got == [(v, None) for v in (1, 2, 4, 8, 16, 32, 64, 128)]
    else:
        # the watermark after batch n (its max - 1 ms) comes after batch n + 1's rows: batches 0 and 1 see none,
        # batch 2 sees 1 999 ms, batch 3 sees 15 999 ms, so a@3 s and b@-20 s are filtered out as late
        assert got == [(1, None), (2, None), (4, None), (8, None), (16, 1_999), (32, 1_999)]
