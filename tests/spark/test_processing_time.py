"""Processing time on Spark: a DataStream processing-time window, and Flink SQL's ``PROCTIME()`` (its value,
a window on it, an OVER aggregation and the deduplications ordered by it), streaming (two rows a micro-batch) and bounded.

Which window a row lands in depends on when it was processed, so the checks are what the rows fix: each key's
total over its windows, windows of the machine's clock during the run (aligned, of their size), a
processing-time value of the run's time in milliseconds that never goes back, each key's first and last row.
A bounded run holds processing time still (Flink's batch mode): one window per key holds all its rows."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime

import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from funke.windows import TumblingProcessingTimeWindows

ROWS = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5), ("a", 6), ("c", 7), ("a", 8)]
SIZE_MS = 2_000


def _ms(t: datetime) -> int:
    return int(t.replace(tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize("bounded", [False, True])
def test_processing_time_windows_proctime_and_its_deduplications(env, bounded):
    source = env.from_collection([{"k": k, "v": v} for k, v in ROWS], "k string, v int", rows_per_batch=2)
    counted = source.key_by("k").window(TumblingProcessingTimeWindows.of(fk.milliseconds(SIZE_MS))).aggregate(n=("count", None))
    windows = counted.collect()
    # A window after a window: the second's last windows fire at the end of input too (they once waited
    # for the wall clock, and the query ended without them).
    summed = counted.key_by("k").window(TumblingProcessingTimeWindows.of(fk.milliseconds(SIZE_MS))).aggregate(n=("sum", "n")).collect()
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("raw", source)
    t_env.create_temporary_view("r", t_env.sql_query("SELECT k, v, PROCTIME() AS pt FROM raw"))
    sql_windows = t_env.to_data_stream(t_env.sql_query(
        f"SELECT k, COUNT(*) AS n, TUMBLE_START(pt, INTERVAL '{SIZE_MS}' MILLISECOND) AS s, "
        f"TUMBLE_END(pt, INTERVAL '{SIZE_MS}' MILLISECOND) AS e FROM r GROUP BY k, TUMBLE(pt, INTERVAL '{SIZE_MS}' MILLISECOND)"
    )).collect()
    stamped = t_env.to_data_stream(t_env.sql_query("SELECT v, pt FROM r")).collect()
    dedup = "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt{}) AS rn FROM r) WHERE rn = 1"
    running = t_env.to_data_stream(t_env.sql_query(
        "SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY pt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS n FROM r"
    )).collect()  # fmt: skip
    # TUMBLE_PROCTIME: each window's row gets a processing-time attribute (when the row is produced).
    stamped_windows = t_env.to_data_stream(t_env.sql_query(
        f"SELECT k, COUNT(*) AS n, TUMBLE_PROCTIME(pt, INTERVAL '{SIZE_MS}' MILLISECOND) AS p FROM r "
        f"GROUP BY k, TUMBLE(pt, INTERVAL '{SIZE_MS}' MILLISECOND)"
    )).collect()  # fmt: skip
    first = t_env.to_changelog_stream(t_env.sql_query(dedup.format(""))).collect()
    last = t_env.to_changelog_stream(t_env.sql_query(dedup.format(" DESC"))).collect()

    started = time.time_ns() // 1_000_000
    handle = env.execute(bounded=bounded).wait(300)
    ended = time.time_ns() // 1_000_000
    assert handle.done

    per_key = Counter(k for k, _ in ROWS)
    for rows, start, end in ((windows.rows, "window_start", "window_end"), (sql_windows.rows, "s", "e")):
        totals: Counter = Counter()
        for r in rows:
            s, e = _ms(r[start]), _ms(r[end])
            assert e - s == SIZE_MS and s % SIZE_MS == 0 and started - SIZE_MS < s <= ended, r
            totals[r["k"]] += r["n"]
        assert totals == per_key
        if bounded:  # processing time stands still in a batch run: every key's rows in one window
            assert len(rows) == len(per_key)

    sums: Counter = Counter()
    for r in summed.rows:
        sums[r["k"]] += r["n"]
    assert sums == per_key, summed.rows
    assert sum(r["n"] for r in stamped_windows.rows) == len(ROWS)
    assert all(started <= _ms(r["p"]) <= ended for r in stamped_windows.rows), stamped_windows.rows

    seen = sorted((r["v"], _ms(r["pt"]), r["pt"].microsecond % 1000) for r in stamped.rows)
    assert [v for v, _, _ in seen] == [v for _, v in ROWS]
    assert all(started <= at <= ended and micros == 0 for _, at, micros in seen)
    assert [at for _, at, _ in seen] == sorted(at for _, at, _ in seen)  # (never back, in arrival order)

    # an OVER aggregation on processing time: each key's rows counted in arrival order, every row once
    assert sorted((r["k"], r["v"], r["n"]) for r in running.rows) == sorted(
        (k, v, sum(1 for kk, _ in ROWS[: i + 1] if kk == k)) for i, (k, v) in enumerate(ROWS)
    )
    assert all(r["row_kind"] == "+I" for r in first.rows)  # (insert-only: Spark's dropDuplicates)
    firsts = {k: next(v for kk, v in ROWS if kk == k) for k in per_key}
    assert sorted((r["k"], r["v"]) for r in first.rows) == sorted(firsts.items())
    latest: dict[str, int] = {}
    for r in last.rows:  # (the keep-last changelog, materialized)
        if r["row_kind"] in ("+I", "+U"):
            latest[r["k"]] = r["v"]
        else:
            assert latest.pop(r["k"]) == r["v"]
    assert latest == {k: v for k, v in ROWS}  # (each key's last row)
