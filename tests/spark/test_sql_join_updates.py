"""Flink SQL's regular joins of updating results on Spark, streaming and bounded, and updating results written
by a key: a LEFT JOIN of an aggregation (its pairs retracted as the totals change) read as a changelog;
a join written into PostgreSQL by a primary key that is not the result's upsert key (materialized per
key first, one row per key); and ``to_changelog_stream(changelog_mode="upsert")``, one row per key."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from funke.table import StreamTableEnvironment
from tests.servers import ensure_postgres
from tests.spark.helpers import materialize

pytestmark = pytest.mark.spark

# (k, v), two rows per micro-batch: a's total changes three times, b's twice, c has no name (LEFT JOIN pads it)
ORDERS = [("a", 1), ("b", 2), ("a", 4), ("c", 3), ("b", 5), ("a", 2)]
NAMES = [("a", "anna"), ("b", "bert"), ("b", "berta")]


@pytest.mark.parametrize("bounded", [False, True])
def test_a_join_of_an_updating_result_and_updating_results_written_by_a_key(env, bounded):
    import psycopg

    dsn = ensure_postgres()
    table = f"sql_join_upserts_{uuid.uuid4().hex[:8]}"
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view(
        "o", env.from_collection([{"k": k, "v": v} for k, v in ORDERS], "k string, v bigint", rows_per_batch=2)
    )
    t_env.create_temporary_view("names", env.from_collection([{"k": k, "name": n} for k, n in NAMES], "k string, name string"))
    t_env.create_temporary_view("totals", t_env.sql_query("SELECT k, SUM(v) AS s FROM o GROUP BY k"))
    joined = t_env.sql_query("SELECT t.k, t.s, n.name FROM totals t LEFT JOIN names n ON t.k = n.k")
    changes = t_env.to_changelog_stream(joined).collect()
    upserts = t_env.to_changelog_stream(t_env.sql_query("SELECT * FROM totals"), changelog_mode="upsert").collect()
    t_env.execute_sql(
        f"CREATE TABLE by_name (name STRING, total BIGINT, PRIMARY KEY (name) NOT ENFORCED) WITH ('connector' = 'jdbc', "
        f"'url' = 'jdbc:postgresql://127.0.0.1:5432/test', 'table-name' = '{table}', 'username' = 'postgres')"
    )
    t_env.execute_script("INSERT INTO by_name SELECT n.name, t.s FROM totals t JOIN names n ON t.k = n.k;")
    env.execute(bounded=bounded).wait(600)

    totals: dict[str, int] = {}
    for k, v in ORDERS:
        totals[k] = totals.get(k, 0) + v
    names = {k: [n for kk, n in NAMES if kk == k] for k in totals}
    assert materialize(changes.rows, ("k", "s", "name")) == Counter(
        {(k, s, n): 1 for k, s in totals.items() for n in (names[k] or [None])}
    )
    # the upsert stream: +I, +U and -D only, applied by key: the totals
    assert {r["row_kind"] for r in upserts.rows} <= {"+I", "+U", "-D"}
    upserted: dict[str, int] = {}
    for r in upserts.rows:
        assert (r["k"] in upserted) == (r["row_kind"] in ("+U", "-D")), r  # (an update or delete of a row there, an insert of one not)
        if r["row_kind"] == "-D":
            del upserted[r["k"]]
        else:
            upserted[r["k"]] = r["s"]
    assert upserted == totals
    with psycopg.connect(dsn) as conn:
        written = conn.execute(f"SELECT name, total FROM {table}").fetchall()
        conn.execute(f"DROP TABLE {table}")
    assert sorted(written) == sorted((n, totals[k]) for k, n in NAMES)
