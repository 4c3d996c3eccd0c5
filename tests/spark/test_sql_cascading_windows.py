"""Flink SQL's cascading window aggregation: a window TVF over a windowed view's ``window_time``, the time attribute
of a window aggregation's results (Flink's: each result's window's last millisecond)."""

from __future__ import annotations

import datetime as dt
import re

import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from tests.spark.test_sql_window_table import batch_csv_table

pytestmark = pytest.mark.spark

T0 = dt.datetime(2024, 1, 1)
# (k, time, v): a row every 2 s for 28 s, keys alternating
ROWS = [(f"k{i % 2}", T0 + dt.timedelta(seconds=2 * i), i) for i in range(15)]
INNER = (
    "SELECT window_start AS ws5, window_end AS we5, window_time AS rowtime, k, SUM(v) AS s{extra} "
    "FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, window_time, k"
)
OUTER = {
    "SELECT window_start, window_end, k, SUM(s) AS s2, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE w1, DESCRIPTOR(rowtime), "
    "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k": [
        (0, 10, "k0", 6, 2), (0, 10, "k1", 4, 2), (10, 20, "k0", 14, 2), (10, 20, "k1", 21, 2), (20, 30, "k0", 36, 2), (20, 30, "k1", 24, 2),
    ],
    "SELECT window_start, window_end, SUM(s) AS s2 FROM TABLE(HOP(TABLE w1, DESCRIPTOR(rowtime), INTERVAL '5' SECOND, "
    "INTERVAL '15' SECOND)) GROUP BY window_start, window_end": [
        (-10, 5, 3), (-5, 10, 10), (0, 15, 28), (5, 20, 42), (10, 25, 68), (15, 30, 77), (20, 35, 60), (25, 40, 27),
    ],
}  # fmt: skip


def seconds(t: dt.datetime) -> int:
    return int((t - T0).total_seconds())


def test_a_window_over_a_window_s_window_time_in_batch_mode_as_pyflink_gives_it(spark, tmp_path):
    """The rows are PyFlink 2.3.0's for the same script (batch and streaming mode alike, by hand); the view's
    ``rowtime`` is its time attribute, as DESCRIBE shows in Flink. It was refused ('needs a view with a time
    attribute')."""
    t_env = batch_csv_table(tmp_path, "src (k STRING, ts TIMESTAMP(3), v INT", [f"{k},{t:%Y-%m-%d %H:%M:%S}.000,{v}" for k, t, v in ROWS])
    t_env.execute_sql(f"CREATE VIEW w1 AS {INNER.format(extra='')}")
    assert [list(r)[:3] for r in t_env.execute_sql("DESCRIBE w1").collect()][:3] == [
        ["ws5", "TIMESTAMP(3)", False], ["we5", "TIMESTAMP(3)", False], ["rowtime", "TIMESTAMP(3) *ROWTIME*", False],
    ]  # fmt: skip
    for query, expected in OUTER.items():
        got = sorted((seconds(r[0]), seconds(r[1]), *r[2:]) for r in t_env.execute_sql(query).collect())
        assert got == sorted(expected), query


@pytest.mark.parametrize(("first", "second"), [("native", "native"), ("general", "native"), ("native", "general")])
def test_a_window_over_a_window_s_window_time_in_a_stream(env, first, second):
    """Three rows a micro-batch, a watermark 1 s behind: each result of the 5 s windows reaches the 10 s and the hopping
    windows in time (none is late: its time is its window's last millisecond, which the watermark that fires the
    window has only just passed), and the end of input closes both levels. Each level on Spark's window operator
    (SUM), or on funke's (a COUNT(DISTINCT ...) beside it, which Spark's has not). The rows are PyFlink 2.3.0's (as in
    the batch test)."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": k, "ts": t, "v": v} for k, t, v in ROWS]
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    t_env.create_temporary_view("src", env.from_collection(rows, "k string, ts timestamp, v int", rows_per_batch=3, watermarks=wm))
    t_env.execute_sql(f"CREATE VIEW w1 AS {INNER.format(extra=', COUNT(DISTINCT v) AS d' if first == 'general' else '')}")
    distinct = ", COUNT(DISTINCT s) AS ds" if second == "general" else ""
    queries = {q.replace(" FROM TABLE(", f"{distinct} FROM TABLE(", 1): expected for q, expected in OUTER.items()}
    tables = {q: t_env.sql_query(q) for q in queries}
    for table in tables.values():  # (the outer window, then the inner one)
        assert re.findall(r"window \w+Windows\(.*\]\s+(native|general)", table.explain()) == [second, first]
    sinks = {q: t_env.to_data_stream(table).collect() for q, table in tables.items()}
    env.execute().wait(300)
    for query, expected in queries.items():
        values = [[v for c, v in r.items() if c != "ds"] for r in sinks[query].rows]
        assert sorted((seconds(r[0]), seconds(r[1]), *r[2:]) for r in values) == sorted(expected), query
