"""Flink SQL's sorts without a window on Spark (funke.table.sort): in a stream, ``ORDER BY`` a time attribute
ascending (rows out of order within the watermark's bound come out in order, ties by the rest of the
ORDER BY), streaming and bounded; in batch mode, any ``ORDER BY`` of columns with ``LIMIT`` and
``OFFSET``, over insert-only and updating input. Orders derived by hand from the rows below."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal

import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from tests.spark.helpers import materialize

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


def test_order_by_an_expression_a_position_or_a_column_not_selected_sorts_as_flink_does(spark):
    """ORDER BY ``COUNT(*)`` (an expression of the SELECT list), ``2`` (a position), ``amt`` (a column the SELECT leaves
    out) or ``id * -1`` (an expression of neither): each sorts the result as Flink does, the result keeping its own
    columns only (they were refused, "ORDER BY ... (an expression)"). A SELECT DISTINCT sorts only on what its columns
    give, and a position past the last column is refused, as in Flink. Every expected list is PyFlink 2.3's for the same
    query (batch mode, parallelism 1)."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, 'a', 1.5), (2, 'b', 2.25), (3, 'a', 3.0), (4, 'c', 0.5), (5, 'b', 1.0)) AS x(id, k, amt)")
    cases = {
        "SELECT k, COUNT(*) FROM v GROUP BY k ORDER BY COUNT(*) DESC, k LIMIT 2": [("a", 2), ("b", 2)],
        "SELECT k, COUNT(*) AS c FROM v GROUP BY k ORDER BY 2 DESC, 1": [("a", 2), ("b", 2), ("c", 1)],
        "SELECT id FROM v ORDER BY amt DESC": [(3,), (2,), (1,), (5,), (4,)],
        "SELECT k, id FROM v ORDER BY id * -1 LIMIT 2": [("b", 5), ("c", 4)],
        "SELECT k FROM v GROUP BY k ORDER BY SUM(amt) DESC": [("a",), ("b",), ("c",)],
        "SELECT DISTINCT k FROM v ORDER BY UPPER(k)": [("a",), ("b",), ("c",)],
        "SELECT v.k FROM v ORDER BY v.id DESC LIMIT 1": [("b",)],
        "SELECT k, SUM(amt) AS s FROM v GROUP BY k ORDER BY SUM(amt)": [("c", Decimal("0.50")), ("b", Decimal("3.25")), ("a", Decimal("4.50"))],
        "SELECT * FROM v ORDER BY 3 DESC LIMIT 2": [(3, "a", Decimal("3.00")), (2, "b", Decimal("2.25"))],
        "SELECT * FROM v ORDER BY amt * 2 LIMIT 2": [(4, "c", Decimal("0.50")), (5, "b", Decimal("1.00"))],
        "SELECT k AS kk, id FROM v ORDER BY kk DESC, id LIMIT 3": [("c", 4), ("b", 2), ("b", 5)],
    }  # fmt: skip
    for query, expected in cases.items():
        assert [tuple(r) for r in t_env.execute_sql(query).collect()] == expected, query
    for query, message in [
        ("SELECT DISTINCT k FROM v ORDER BY id", "ORDER BY id at line 1, column 35: expression 'id' is not in the select clause"),
        ("SELECT k, id FROM v ORDER BY 3", "ORDER BY 3 at line 1, column 30: ordinal out of range (the result has 2 columns)"),
    ]:
        with pytest.raises(fk.errors.PlanError, match=re.escape(message)):
            t_env.execute_sql(query)


def test_a_stream_s_top_n_by_an_aggregate_of_its_select_list(env):
    """``ORDER BY COUNT(*) DESC LIMIT 2`` in a stream: Flink's Top-N over the updating aggregation, ordered by the
    aggregate's own column (no second count kept): what its changelog leaves is the two largest counts."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"id": i, "v": v} for i, _, v in ROWS]
    t_env.create_temporary_view("s", env.from_collection(rows, "id bigint, v int", rows_per_batch=4))
    table = t_env.sql_query("SELECT v, COUNT(*) AS n FROM s GROUP BY v ORDER BY COUNT(*) DESC, v LIMIT 2")
    assert table.get_schema().names == ("v", "n")
    top = t_env.to_changelog_stream(table).collect()
    env.execute().wait(300)
    assert materialize(top.rows, ("v", "n")) == Counter({(5, 3): 1, (None, 1): 1})  # (NULL first among the counts of 1: PyFlink 2.3 too)


TOP_N_ROWS = [(1, "a", "x", 1), (2, "b", "x", 2), (3, "a", "y", 3), (4, "a", "x", 4), (5, "c", "y", 6), (6, "b", "y", 7), (7, "b", "y", 8), (8, "c", "x", 12)]


def test_a_top_n_whose_query_aggregates_ranks_the_aggregation_as_flink_plans_it(spark, tmp_path):
    """``ROW_NUMBER() OVER (PARTITION BY c ORDER BY COUNT(*) DESC) ... GROUP BY c, k`` (an aggregate in the OVER, in
    the SELECT list or only in HAVING; a window aggregation's window Top-N; no PARTITION BY): the aggregation is ranked
    as its own subquery, as Flink's planner does (it was refused, "an aggregation in the query of a Top-N"). Each
    expected list is PyFlink 2.3's for the same script (batch mode), and so is each schema's names."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "d.csv").write_text("".join(f"{i},{k},{c},2024-01-01 00:00:{s:02d}.000\n" for i, k, c, s in TOP_N_ROWS))
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(
        "CREATE TABLE v (id INT, k STRING, c STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'in'}', 'format' = 'csv')"
    )
    t0 = datetime(2024, 1, 1)
    cases = {
        "SELECT * FROM (SELECT c, k, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY c ORDER BY COUNT(*) DESC, k) AS rn FROM v GROUP BY c, k) "
        "WHERE rn <= 1": (("c", "k", "n", "rn"), [("x", "a", 2, 1), ("y", "b", 2, 1)]),
        "SELECT c, k, rn FROM (SELECT c, k, ROW_NUMBER() OVER (PARTITION BY c ORDER BY SUM(id) DESC) AS rn FROM v GROUP BY c, k "
        "HAVING COUNT(*) > 1) WHERE rn = 1": (("c", "k", "rn"), [("x", "a", 1), ("y", "b", 1)]),
        "SELECT * FROM (SELECT window_start, k, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY COUNT(*) DESC, k) "
        "AS rn FROM TABLE(TUMBLE(TABLE v, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k) WHERE rn <= 2": (
            ("window_start", "k", "n", "rn"),
            [(t0, "a", 3, 1), (t0, "b", 1, 2), (t0 + timedelta(seconds=5), "b", 2, 1), (t0 + timedelta(seconds=5), "c", 1, 2), (t0 + timedelta(seconds=10), "c", 1, 1)],
        ),
        "SELECT * FROM (SELECT k, COUNT(*), ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, k) AS rn FROM v GROUP BY k) WHERE rn <= 2": (
            ("k", "EXPR$1", "rn"), [("a", 3, 1), ("b", 3, 2)],
        ),
    }  # fmt: skip
    for query, (names, expected) in cases.items():
        assert tuple(t_env.sql_query(query).get_schema().get_field_names()) == names, query
        assert Counter(tuple(r) for r in t_env.execute_sql(query).collect()) == Counter(expected), query


def test_a_stream_s_top_n_over_its_own_aggregation_keeps_the_best_of_each_partition(env):
    """The same in a stream: the Top-N over the updating aggregation (a retractable one), what its changelog leaves
    the best-counted key per partition (ties by key)."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"id": i, "k": k, "c": c} for i, k, c, _ in TOP_N_ROWS]
    t_env.create_temporary_view("v", env.from_collection(rows, "id int, k string, c string", rows_per_batch=3))
    query = "SELECT * FROM (SELECT c, k, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY c ORDER BY COUNT(*) DESC, k) AS rn FROM v GROUP BY c, k) WHERE rn <= 1"
    top = t_env.to_changelog_stream(t_env.sql_query(query)).collect()
    env.execute().wait(300)
    assert materialize(top.rows, ("c", "k", "n", "rn")) == Counter({("x", "a", 2, 1): 1, ("y", "b", 2, 1): 1})
