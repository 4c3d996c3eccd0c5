"""Flink SQL's lookup join against a jdbc (PostgreSQL) table on Spark: rows from Kafka joined with the
table as it is when their micro-batch runs (a change to the table shows in the batches after it)."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from funke.table import StreamTableEnvironment
from tests.servers import ensure_kafka, ensure_postgres
from tests.spark.test_kafka_source import produce

pytestmark = pytest.mark.spark


def test_a_lookup_join_reads_the_jdbc_table_as_it_is_in_each_micro_batch(env):
    import psycopg
    from confluent_kafka.admin import AdminClient, NewTopic

    dsn, bootstrap = ensure_postgres(), ensure_kafka()
    table, topic = f"dim_{uuid.uuid4().hex[:8]}", f"funke-test-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    with psycopg.connect(dsn) as conn:
        conn.execute(f"CREATE TABLE {table} (k text PRIMARY KEY, name text, extra int)")
        conn.execute(f"INSERT INTO {table} VALUES ('a', 'A1', 0), ('b', 'B1', 0)")
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(
        f"CREATE TABLE orders (k STRING, id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset')"
    )
    t_env.execute_sql(
        f"CREATE TABLE dim (k STRING, name STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'jdbc', "
        f"'url' = 'jdbc:postgresql://127.0.0.1:5432/test', 'table-name' = '{table}', 'username' = 'postgres')"
    )
    t = t_env.sql_query("SELECT o.id, d.name FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF PROCTIME() AS d ON o.k = d.k")
    out = t_env.to_data_stream(t).collect()

    def send(*rows):
        produce(bootstrap, topic, [(0, None, json.dumps({"k": k, "id": i}).encode(), int(time.time() * 1000)) for k, i in rows])

    def joined(n):  # (waits for the n-th row: a condition, not a duration; a failed job raises)
        deadline = time.monotonic() + 240
        while len(out.rows) < n and time.monotonic() < deadline:
            job.wait(0.2)
        return sorted((r["id"], r["name"]) for r in out.rows)

    send(("a", 1), ("b", 2))
    job = env.execute()
    try:
        assert joined(2) == [(1, "A1"), (2, "B1")]
        with psycopg.connect(dsn) as conn:  # the table changes between micro-batches
            conn.execute(f"UPDATE {table} SET name = 'A2' WHERE k = 'a'")
        send(("a", 3), ("c", 4))
        assert joined(4) == [(1, "A1"), (2, "B1"), (3, "A2"), (4, None)]  # (c: no row, LEFT keeps it)
    finally:
        job.stop()
        admin.delete_topics([topic])[topic].result(30)
        with psycopg.connect(dsn) as conn:
            conn.execute(f"DROP TABLE {table}")
