"""Flink SQL's window table functions without an aggregation (``SELECT * FROM TABLE(TUMBLE(...))``): each row once per
window it is in, with ``window_start``, ``window_end`` and ``window_time``, as it arrives (funke.table.planner
``_window_table``), batch mode as PyFlink gives it and streaming with no row late."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

import funke as fk
from funke.semantics.windows import CumulativeEventTimeWindows, SlidingEventTimeWindows, TumblingEventTimeWindows
from funke.table import StreamTableEnvironment

pytestmark = pytest.mark.spark
T0 = dt.datetime(2024, 1, 1)


def at(ms: int) -> dt.datetime:
    return T0 + dt.timedelta(milliseconds=ms)


# (id, key, time): one at a window's last ms, one at a start, one before 1970's next minute (a window across midnight)
ROWS = [(1, "a", "2024-01-01 00:00:01.000"), (2, "b", "2024-01-01 00:00:04.999"), (3, "a", "2024-01-01 00:00:05.000"), (4, "c", "2023-12-31 23:59:58.250")]


def batch_csv_table(tmp_path, declared: str, lines: list[str]):
    """A PyFlink batch TableEnvironment (funke's) with a csv filesystem table of ``lines``: ``declared`` is its name
    and columns up to the watermark, which is 1 s behind ``ts``."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "d.csv").write_text("".join(f"{line}\n" for line in lines))
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(
        f"CREATE TABLE {declared}, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'in'}', 'format' = 'csv')"
    )
    return t_env


def test_tumble_hop_and_cumulate_as_tables_give_each_row_its_windows_as_pyflink_does(spark, tmp_path):
    """Five queries over a CSV table; every expected row is what PyFlink 2.3 gave for the same script (batch mode):
    TUMBLE with and without an offset (and a WHERE on the window's columns), HOP with a size that is a multiple of
    the slide and one that is not (a row is then in one or two windows), CUMULATE."""
    t_env = batch_csv_table(tmp_path, "v (id INT, k STRING, ts TIMESTAMP(3)", [f"{i},{k},{t}" for i, k, t in ROWS])
    d = dt.datetime
    cases = {
        "SELECT * FROM TABLE(TUMBLE(TABLE v, DESCRIPTOR(ts), INTERVAL '5' SECOND))": [
            (1, "a", d(2024, 1, 1, 0, 0, 1), d(2024, 1, 1), d(2024, 1, 1, 0, 0, 5), d(2024, 1, 1, 0, 0, 4, 999000)),
            (2, "b", d(2024, 1, 1, 0, 0, 4, 999000), d(2024, 1, 1), d(2024, 1, 1, 0, 0, 5), d(2024, 1, 1, 0, 0, 4, 999000)),
            (3, "a", d(2024, 1, 1, 0, 0, 5), d(2024, 1, 1, 0, 0, 5), d(2024, 1, 1, 0, 0, 10), d(2024, 1, 1, 0, 0, 9, 999000)),
            (4, "c", d(2023, 12, 31, 23, 59, 58, 250000), d(2023, 12, 31, 23, 59, 55), d(2024, 1, 1), d(2023, 12, 31, 23, 59, 59, 999000)),
        ],
        "SELECT id, window_start, window_end, window_time FROM TABLE(HOP(TABLE v, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '5' SECOND))": [
            (1, d(2023, 12, 31, 23, 59, 58), d(2024, 1, 1, 0, 0, 3), d(2024, 1, 1, 0, 0, 2, 999000)),
            (1, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 5), d(2024, 1, 1, 0, 0, 4, 999000)),
            (2, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 5), d(2024, 1, 1, 0, 0, 4, 999000)),
            (2, d(2024, 1, 1, 0, 0, 2), d(2024, 1, 1, 0, 0, 7), d(2024, 1, 1, 0, 0, 6, 999000)),
            (2, d(2024, 1, 1, 0, 0, 4), d(2024, 1, 1, 0, 0, 9), d(2024, 1, 1, 0, 0, 8, 999000)),
            (3, d(2024, 1, 1, 0, 0, 2), d(2024, 1, 1, 0, 0, 7), d(2024, 1, 1, 0, 0, 6, 999000)),
            (3, d(2024, 1, 1, 0, 0, 4), d(2024, 1, 1, 0, 0, 9), d(2024, 1, 1, 0, 0, 8, 999000)),
            (4, d(2023, 12, 31, 23, 59, 54), d(2023, 12, 31, 23, 59, 59), d(2023, 12, 31, 23, 59, 58, 999000)),
            (4, d(2023, 12, 31, 23, 59, 56), d(2024, 1, 1, 0, 0, 1), d(2024, 1, 1, 0, 0, 0, 999000)),
            (4, d(2023, 12, 31, 23, 59, 58), d(2024, 1, 1, 0, 0, 3), d(2024, 1, 1, 0, 0, 2, 999000)),
        ],
        "SELECT id, window_start, window_end FROM TABLE(CUMULATE(TABLE v, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))": [
            (1, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 2)), (1, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 4)), (1, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 6)),
            (2, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 6)), (3, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 6)), (4, d(2023, 12, 31, 23, 59, 54), d(2024, 1, 1)),
        ],
        "SELECT id, k, window_end FROM TABLE(TUMBLE(TABLE v, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' SECOND)) "
        "WHERE window_start >= TIMESTAMP '2024-01-01 00:00:00' AND k = 'a'": [(1, "a", d(2024, 1, 1, 0, 0, 6)), (3, "a", d(2024, 1, 1, 0, 0, 6))],
        "SELECT id, window_start, window_end FROM TABLE(HOP(TABLE v, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '3' SECOND))": [
            (1, d(2024, 1, 1), d(2024, 1, 1, 0, 0, 3)), (2, d(2024, 1, 1, 0, 0, 2), d(2024, 1, 1, 0, 0, 5)),
            (2, d(2024, 1, 1, 0, 0, 4), d(2024, 1, 1, 0, 0, 7)), (3, d(2024, 1, 1, 0, 0, 4), d(2024, 1, 1, 0, 0, 7)),
            (4, d(2023, 12, 31, 23, 59, 56), d(2023, 12, 31, 23, 59, 59)), (4, d(2023, 12, 31, 23, 59, 58), d(2024, 1, 1, 0, 0, 1)),
        ],
    }  # fmt: skip
    for query, expected in cases.items():
        assert Counter(tuple(r) for r in t_env.execute_sql(query).collect()) == Counter(expected), query
    with pytest.raises(fk.UnsupportedError, match=r"a SESSION window TVF without GROUP BY window_start, window_end .*aggregate its rows per session"):
        t_env.execute_sql("SELECT * FROM TABLE(SESSION(TABLE v PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))")


def test_a_stream_s_rows_get_their_windows_as_they_arrive_and_none_is_late(env):
    """In a stream each row leaves with its windows in the micro-batch that reads it, a row behind the watermark too
    (Flink's window table function drops none): the rows equal each row's windows by funke's assigners."""
    t_env = StreamTableEnvironment.create(env)
    times = [1_000, 9_999, 30_000, 2_000, 31_500]  # (2 s arrives after the watermark passed 30 s - 1 s)
    rows = [{"id": i, "ts": at(ms)} for i, ms in enumerate(times)]
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    t_env.create_temporary_view("ev", env.from_collection(rows, "id int, ts timestamp", rows_per_batch=3, watermarks=wm))
    queries = {
        "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)": TumblingEventTimeWindows.of(10_000),
        "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)": SlidingEventTimeWindows.of(10_000, 5_000),
        "CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '4' SECOND, INTERVAL '1' SECOND)": CumulativeEventTimeWindows.of(4_000, 2_000, 1_000),
    }  # fmt: skip
    sinks = {tvf: t_env.to_data_stream(t_env.sql_query(f"SELECT id, window_start, window_end, window_time FROM TABLE({tvf})")).collect() for tvf in queries}
    env.execute().wait(300)
    epoch = dt.datetime(1970, 1, 1)
    ms = lambda t: (t - epoch) // dt.timedelta(milliseconds=1)
    for tvf, assigner in queries.items():
        got = Counter((r["id"], ms(r["window_start"]), ms(r["window_end"]), ms(r["window_time"])) for r in sinks[tvf].rows)
        expected = Counter((i, w.start, w.end, w.end - 1) for i, t in enumerate(times) for w in assigner.assign_windows(ms(at(t))))
        assert got == expected, tvf


@pytest.mark.parametrize("path", ["auto", "general"])
def test_a_watermark_at_the_largest_timestamp_fires_a_window_at_its_last_ms_and_drops_what_comes_after(env, path):
    """Flink SQL's ``WATERMARK FOR ts AS ts``: the watermark is the largest timestamp (not 1 ms behind it, as a
    DataStream's is), so a row at a window's last millisecond completes it, and a row of that window after it is late.
    One row per micro-batch, and funke's watermark moves after the batch that follows the one it comes from: 1 s,
    9.999 s and 5 s fill [0 s, 10 s), and the watermark reaches 9.999 s, its last ms; the second row at 9.999 s is then
    late and dropped (with a watermark 1 ms behind it would count); 12 s opens [10 s, 20 s). By Flink's rules, by hand.
    Spark's own window and funke's operator alike."""
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(
        "CREATE TABLE src (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '1')"
    )
    strategy = t_env.sql_query("SELECT * FROM src")._stream.node.watermark  # (the DDL's: the largest timestamp, a bound of -1 ms)
    assert strategy.max_out_of_orderness_ms == -1 and strategy.current_watermark(9_999) == 9_999
    times = [1_000, 9_999, 5_000, 9_999, 12_000]
    rows = [{"k": "a", "ts": at(ms)} for ms in times]
    stream = env.from_collection(rows, "k string, ts timestamp", rows_per_batch=1, watermarks=strategy)
    counts = stream.key_by("k").window(TumblingEventTimeWindows.of(10_000)).on_path(path).count().collect()
    env.execute().wait(300)
    assert sorted((r["window_start"], r["count"]) for r in counts.rows) == [(at(0), 3), (at(10_000), 1)]
