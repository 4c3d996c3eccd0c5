"""Flink SQL's group aggregation without a window on Spark: an updating result, read as a changelog
(``to_changelog_stream``) and written to PostgreSQL by primary key, streaming and bounded. The expected
changes come from recomputing each key's aggregates from scratch after every row."""

from __future__ import annotations

import uuid

import pytest

from funke.table import StreamTableEnvironment
from tests.servers import ensure_postgres

pytestmark = pytest.mark.spark

# Two rows per micro-batch: some keys change twice in one batch, some across batches. a's third row
# is a null (COUNT(*) changes, SUM and MAX do not); b's MAX stays when 4 follows 6; c crosses the
# HAVING bound (total < 10) with its second row, and d has only nulls.
ROWS = [("a", 1), ("b", 6), ("a", 2), ("c", 5), ("a", None), ("b", 4), ("c", 7), ("d", None), ("a", 0), ("b", 6)]


def aggregates(values: list[int | None]) -> tuple[int, int | None, int | None]:
    present = [v for v in values if v is not None]
    return len(values), (sum(present) if present else None), (max(present) if present else None)


def reference_changelog() -> dict[str, list[tuple]]:
    """Per key, Flink's changes in order: +I first, then -U/+U for each row that changes the result."""
    seen: dict[str, list[int | None]] = {}
    out: dict[str, list[tuple]] = {}
    for k, v in ROWS:
        before = aggregates(seen[k]) if k in seen else None
        seen.setdefault(k, []).append(v)
        after = aggregates(seen[k])
        if before is None:
            out.setdefault(k, []).append(("+I", k, *after))
        elif before != after:
            out[k] += [("-U", k, *before), ("+U", k, *after)]
    return out


@pytest.mark.parametrize("bounded", [False, True])
def test_group_aggregation_changelog_and_upsert_into_postgres(env, bounded):
    import psycopg

    dsn = ensure_postgres()
    table = f"sql_totals_{uuid.uuid4().hex[:8]}"
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": k, "v": v} for k, v in ROWS]
    t_env.create_temporary_view("o", env.from_collection(rows, "k string, v bigint", rows_per_batch=2))
    totals = t_env.sql_query("SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS top FROM o GROUP BY k")
    assert totals.updating and totals.columns == ("k", "n", "total", "top")
    changes = t_env.to_changelog_stream(totals).collect()
    t_env.execute_sql(
        f"CREATE TABLE small (k STRING, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'jdbc', "
        f"'url' = 'jdbc:postgresql://127.0.0.1:5432/test', 'table-name' = '{table}', 'username' = 'postgres')"
    )
    # HAVING filters each change: c's update past the bound leaves its -U alone, which deletes c's row
    t_env.execute_script("INSERT INTO small SELECT k, COUNT(*), SUM(v) FROM o GROUP BY k HAVING SUM(v) < 10;")
    env.execute(bounded=bounded).wait(300)

    got: dict[str, list[tuple]] = {}
    for r in changes.rows:
        got.setdefault(r["k"], []).append((r["row_kind"], r["k"], r["n"], r["total"], r["top"]))
    assert got == reference_changelog()
    with psycopg.connect(dsn) as conn:
        written = conn.execute(f"SELECT k, n, total FROM {table}").fetchall()
        conn.execute(f"DROP TABLE {table}")
    final = {k: aggregates([v for kk, v in ROWS if kk == k]) for k, _ in ROWS}
    assert sorted(written) == sorted((k, n, s) for k, (n, s, _) in final.items() if s is not None and s < 10)
    assert "c" not in {k for k, _, _ in written}  # (it was there once: inserted, then deleted)


# (key, event time in s, value), two rows per micro-batch and out of order: a@1 arrives after a@2
DUPLICATES = [("a", 2, 1), ("b", 5, 2), ("a", 1, 3), ("a", 2, 4), ("b", 4, 5), ("b", 6, 6), ("a", 3, 7)]


def reference_dedup(keep_last: bool) -> dict[str, list[tuple]]:
    """Per key, the changes of the kept row: the latest (keep last; a tie goes to the later arrival)
    or the earliest (keep first; a tie stays with the earlier) by event time among the rows so far."""
    out: dict[str, list[tuple]] = {}
    rows: dict[str, list[tuple[int, int, int]]] = {}
    for i, (k, t, v) in enumerate(DUPLICATES):
        before = _kept(rows[k], keep_last) if k in rows else None
        rows.setdefault(k, []).append((t, i, v))
        after = _kept(rows[k], keep_last)
        if before is None:
            out[k] = [("+I", k, after[0], after[2])]
        elif after != before:
            out[k] += [("-U", k, before[0], before[2]), ("+U", k, after[0], after[2])]
    return out


def _kept(rows: list[tuple[int, int, int]], keep_last: bool) -> tuple[int, int, int]:
    return max(rows) if keep_last else min(rows)


@pytest.mark.parametrize("bounded", [False, True])
def test_deduplication_on_event_time_keeps_the_first_or_the_last_row_as_a_changelog(env, bounded):
    import datetime as dt

    import funke as fk

    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    rows = [{"k": k, "ts": dt.datetime(2024, 1, 1, 0, 0, t), "v": v} for k, t, v in DUPLICATES]
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("o", env.from_collection(rows, "k string, ts timestamp, v bigint", rows_per_batch=2, watermarks=wm))
    ranked = "SELECT k, ts, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts {}) AS rn FROM o) WHERE rn = 1"
    last = t_env.to_changelog_stream(t_env.sql_query(ranked.format("DESC"))).collect()
    first = t_env.to_changelog_stream(t_env.sql_query(ranked.format("ASC"))).collect()
    env.execute(bounded=bounded).wait(300)
    for sink, keep_last in ((last, True), (first, False)):
        got: dict[str, list[tuple]] = {}
        for r in sink.rows:
            got.setdefault(r["k"], []).append((r["row_kind"], r["k"], r["ts"].second, r["v"]))
        assert got == reference_dedup(keep_last), keep_last


# (key, value, id): ties on the value, and rows that enter the top 2 of their key late
SCORES = [("a", 5, 1), ("b", 1, 2), ("a", 7, 3), ("a", 5, 4), ("b", 3, 5), ("a", 9, 6), ("b", None, 7), ("a", 6, 8), ("b", 2, 9)]


@pytest.mark.parametrize("bounded", [False, True])
def test_a_regular_top_n_is_a_changelog_of_the_best_rows_per_key_with_or_without_their_rank(env, bounded):
    from functools import cmp_to_key

    from funke.table.rank import Order, TopN, compare

    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": k, "v": v, "id": i} for k, v, i in SCORES]
    t_env.create_temporary_view("o", env.from_collection(rows, "k string, v bigint, id bigint", rows_per_batch=2))
    ranked = "(SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM o)"
    numbered = t_env.to_changelog_stream(t_env.sql_query(f"SELECT k, id, rn FROM {ranked} WHERE rn <= 2")).collect()
    plain = t_env.to_changelog_stream(t_env.sql_query(f"SELECT k, id FROM {ranked} WHERE rn < 3")).collect()
    env.execute(bounded=bounded).wait(300)

    order = [Order("v", descending=True, nulls_first=False)]  # (Flink's default for DESC: nulls last)
    for sink, with_rank in ((numbered, True), (plain, False)):
        got: dict[str, list[tuple]] = {}
        for r in sink.rows:
            got.setdefault(r["k"], []).append((r["row_kind"], r["id"], r.get("rn")))
        # each key's changes as the function makes them, replayed here row by row
        top, expected = TopN(order, 2, "rn", numbered=with_rank), {}
        buffers: dict[str, list] = {}
        for row in rows:
            buffers[row["k"]], out = top.step(buffers.get(row["k"], []), row)
            expected.setdefault(row["k"], []).extend((c["_fk_row_kind"], c["id"], c["rn"] if with_rank else None) for c in out)
        assert got == expected, with_rank
        for k in ("a", "b"):  # and what they leave: the two best of each key, ties in arrival order
            best = sorted((r for r in rows if r["k"] == k), key=cmp_to_key(lambda x, y: compare(order, x, y)))[:2]
            held: dict = {}
            for kind, i, rank in got[k]:
                slot = rank if with_rank else i
                if kind in ("-U", "-D"):
                    del held[slot]
                else:
                    held[slot] = i
            assert sorted(held.values()) == sorted(r["id"] for r in best)


@pytest.mark.parametrize("bounded", [False, True])
def test_order_by_limit_is_a_top_n_of_the_whole_result_and_limit_alone_keeps_the_first_rows(env, bounded):
    """``ORDER BY v DESC LIMIT 2``: Flink's Top-N over the whole result (an updating one); ``LIMIT 3`` alone:
    the first three rows in arrival order, insert-only; over a group aggregation's changes, the first by
    the updated value. Changes derived by hand from the rows below."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"id": i, "v": v} for i, v in [(1, 5), (2, 3), (3, 8), (4, 5), (5, 9), (6, 1)]]
    t_env.create_temporary_view("s", env.from_collection(rows, "id bigint, v bigint", rows_per_batch=2))
    groups = [{"k": k, "v": v} for k, v in [("a", 1), ("b", 2), ("a", 3), ("b", 1)]]
    t_env.create_temporary_view("g", env.from_collection(groups, "k string, v bigint", rows_per_batch=1))
    best = t_env.to_changelog_stream(t_env.sql_query("SELECT id, v FROM s ORDER BY v DESC LIMIT 2")).collect()
    first = t_env.sql_query("SELECT id FROM s WHERE v > 1 LIMIT 3")
    assert not first.updating
    first_rows = t_env.to_data_stream(first).collect()
    top_sum = t_env.to_changelog_stream(t_env.sql_query("SELECT k, SUM(v) AS s FROM g GROUP BY k ORDER BY s DESC LIMIT 1")).collect()
    env.execute(bounded=bounded).wait(300)

    # 5 and 3 in; 8 pushes 3 out; a second 5 ties the worst of a full top 2 and stays out; 9 pushes 5 out
    assert [(r["row_kind"], r["id"]) for r in best.rows] == [("+I", 1), ("+I", 2), ("-D", 2), ("+I", 3), ("-D", 1), ("+I", 5)]
    assert [r["id"] for r in first_rows.rows] == [1, 2, 3]
    # the sums go a=1, b=2, a=4, b=3: the best is a, then b, then a again (b=3 stays behind a=4)
    held: dict = {}
    for r in top_sum.rows:
        if r["row_kind"] in ("-U", "-D"):
            assert held.pop(r["k"]) == r["s"], top_sum.rows
        else:
            held[r["k"]] = r["s"]
    assert held == {"a": 4}
    if not bounded:  # (one row per micro-batch: every change in order)
        assert [(r["row_kind"], r["k"], r["s"]) for r in top_sum.rows] == [("+I", "a", 1), ("-D", "a", 1), ("+I", "b", 2), ("-D", "b", 2), ("+I", "a", 4)]


def test_a_stream_of_changes_is_read_back_as_an_updating_table_and_a_kind_of_none_of_them_fails_the_job(env):
    """funke's ``from_changelog_stream``, the inverse of ``to_changelog_stream``: each row's kind in its ``row_kind``
    column; an aggregation over it gives PyFlink 2.3's changes for the same rows (tests/spark/test_pyflink_table_programs.py
    reads them through PyFlink's API); upsert mode normalizes by the key; a kind not Flink's fails the job, naming it."""
    import funke as fk

    schema = "row_kind string, name string, score int"
    rows = [("+I", "Alice", 12), ("+I", "Bob", 5), ("-U", "Alice", 12), ("+U", "Alice", 100), ("-D", "Bob", 5)]
    t_env = StreamTableEnvironment.create(env)
    changes = t_env.from_changelog_stream(env.from_collection([dict(zip(("row_kind", "name", "score"), r)) for r in rows], schema))
    t_env.create_temporary_view("t", changes)
    totals = t_env.to_changelog_stream(t_env.sql_query("SELECT SUM(score) AS s FROM t")).collect()
    ups = [("+I", "Alice", 12), ("+U", "Alice", 12), ("+U", "Alice", 13), ("-D", "Alice", None)]
    upserted = t_env.from_changelog_stream(env.from_collection([dict(zip(("row_kind", "name", "score"), r)) for r in ups], schema),
                                           changelog_mode="upsert", key=["name"])  # fmt: skip
    normalized = t_env.to_changelog_stream(upserted).collect()
    env.execute(bounded=True).wait(300)
    assert [(r["row_kind"], r["s"]) for r in totals.rows] == [
        ("+I", 12), ("-U", 12), ("+U", 17), ("-U", 17), ("+U", 5), ("-U", 5), ("+U", 105), ("-U", 105), ("+U", 100),
    ]  # fmt: skip
    assert [tuple(r.values()) for r in normalized.rows] == [("+I", "Alice", 12), ("-U", "Alice", 12), ("+U", "Alice", 13), ("-D", "Alice", 13)]
    bad_env = fk.StreamEnvironment(app="bad-kind", spark=env.spark, checkpoint_dir=env.checkpoint_dir + "-bad")
    bad = StreamTableEnvironment.create(bad_env).from_changelog_stream(bad_env.from_collection([{"row_kind": "+X", "name": "a", "score": 1}], schema))
    bad_env_out = StreamTableEnvironment.create(bad_env).to_changelog_stream(bad).collect()
    with pytest.raises(Exception, match=r"a row of kind \+X, not one of \+I, -U, \+U, -D"):
        bad_env.execute(bounded=True).wait(300)
    assert bad_env_out.rows == []


def test_a_script_s_set_runtime_mode_batch_runs_it_as_a_batch_job(tmp_path):
    """SET 'execution.runtime-mode' = 'batch' in a Flink SQL script (it was refused: 'not supported by funke'): its
    COUNT is planned for batch (the final count, which a file sink takes) and the job runs as a batch job when the
    runner leaves the mode to it, as ``funke run FILE.sql`` now does without --bounded. Flink's SQL client writes 3."""
    from funke.cli.locate import sql_job

    script = tmp_path / "counts.sql"
    script.write_text(
        "SET 'execution.runtime-mode' = 'batch';\n"
        "CREATE TABLE v (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');\n"
        f"CREATE TABLE out (n BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'csv');\n"
        "INSERT INTO out SELECT COUNT(*) FROM v;\n"
    )
    env = sql_job(str(script), {})
    env.checkpoint_dir = str(tmp_path / "ck")
    handle = env.execute()
    handle.wait(300)
    assert handle.mode == "batch"
    assert [line for f in sorted((tmp_path / "out").glob("part-*")) for line in f.read_text().splitlines()] == ["3"]
