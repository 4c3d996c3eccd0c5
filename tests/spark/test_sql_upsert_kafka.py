"""Flink SQL's upsert-kafka tables read against the real broker: each record an upsert of its key's row, a record with
no value (a tombstone) a delete, normalized into a changelog of whole rows as Flink's planner does (ChangelogNormalize),
and read as they come by an event-time temporal join. Every expected row is what PyFlink 2.3.0 gave for the same
tables and records (Flink's Kafka connector 5.0.0-2.2, by hand)."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from tests.servers import ensure_kafka
from tests.spark.test_kafka_source import produce

pytestmark = pytest.mark.spark

T = lambda s: dt.datetime(2024, 1, 1, 0, 0, s)
key = lambda k: json.dumps({"k": k}).encode()


@contextmanager
def topics(n: int) -> Iterator[tuple[str, list[str]]]:
    """``n`` new one-partition topics (deleted afterwards) and the broker's address."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = ensure_kafka()
    names = [f"funke-test-{uuid.uuid4().hex[:12]}" for _ in range(n)]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, 1, 1) for t in names]).values():
        f.result(30)
    try:
        yield bootstrap, names
    finally:
        admin.delete_topics(names)


def send(bootstrap: str, topic: str, records: list[tuple[bytes | None, bytes | None]]) -> None:
    produce(bootstrap, topic, [(0, k, v, 1_700_000_000_000 + i) for i, (k, v) in enumerate(records)])


def upsert_table(name: str, columns: str, topic: str, bootstrap: str, fmt: str = "json", extra: str = "") -> str:
    return (
        f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'upsert-kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', 'value.format' = '{fmt}'{extra})"
    )


def run(env: fk.StreamEnvironment, bounded: bool, done: Callable[[], bool]) -> None:
    """Run the job: bounded to its end, or streaming until ``done()`` (a condition; a failed job raises)."""
    job = env.execute(bounded=bounded)
    try:
        deadline = time.monotonic() + 240
        while not job.done and not done() and time.monotonic() < deadline:
            job.wait(0.2)
    finally:
        if bounded:
            job.wait(300)
        else:
            job.stop()


def per_key(rows: list[dict], key_column: str) -> dict:
    """Each key's changes in order, as (kind, *values) tuples (funke's micro-batches keep a key's order, not the order
    between keys)."""
    out: dict = {}
    for r in rows:
        out.setdefault(r[key_column], []).append((r["row_kind"], *(v for c, v in r.items() if c != "row_kind")))
    return out


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_upsert_kafka_tables_are_read_as_changelogs_of_whole_rows_as_flink_reads_them(spark, tmp_path, bounded):
    """A key's first record is +I, a new value -U/+U, an equal one nothing, a tombstone -D of the whole row (nothing for a
    key not held); with value.fields-include ALL a key column in the value wins over the record's key; EXCEPT_KEY reads
    the key's columns from the key alone; a csv value. An aggregation over the changelog ends where Flink's ends. It was
    refused ('table up (upsert-kafka) can only be written')."""
    with topics(4) as (bootstrap, (t_all, t_over, t_ek, t_csv)):
        v = lambda k, n, s: json.dumps({"k": k, "v": n, "ts": f"2024-01-01 00:00:{s:02d}"}).encode()
        send(bootstrap, t_all, [(key("a"), v("a", 1, 1)), (key("b"), v("b", 10, 2)), (key("a"), v("a", 2, 3)), (key("b"), v("b", 10, 2)),
                                (key("a"), None), (key("c"), None), (key("a"), v("a", 3, 5)), (key("b"), v("b", 11, 6))])  # fmt: skip
        send(bootstrap, t_over, [(key("a"), b'{"k": "z", "v": 5}'), (key("c"), b'{"k": "c", "v": 1}'), (key("c"), b'{"k": "c", "v": "2"}'),
                                 (key("z"), None)])  # fmt: skip
        send(bootstrap, t_ek, [(key("a"), b'{"v": 1}'), (key("a"), b'{"v": 2, "k": "q"}'), (key("b"), b'{"v": 3}'), (key("a"), None)])
        send(bootstrap, t_csv, [(key("a"), b"1,a"), (key("b"), b"2,b"), (key("a"), b"3,a"), (key("b"), None)])
        env = fk.StreamEnvironment(app="upsert-kafka", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        t_env = StreamTableEnvironment.create(env)
        t_env.execute_sql(upsert_table("up", "k STRING, v INT, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED", t_all, bootstrap))
        t_env.execute_sql(upsert_table("over", "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED", t_over, bootstrap))
        t_env.execute_sql(upsert_table("ek", "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED", t_ek, bootstrap, extra=", 'value.fields-include' = 'EXCEPT_KEY'"))
        t_env.execute_sql(upsert_table("c", "v INT, k STRING, PRIMARY KEY (k) NOT ENFORCED", t_csv, bootstrap, fmt="csv"))
        queries = ["SELECT * FROM up", "SELECT * FROM over", "SELECT * FROM ek", "SELECT * FROM c", "SELECT SUM(v) AS s, COUNT(*) AS n FROM up"]
        outs = [t_env.to_changelog_stream(t_env.sql_query(q)).collect() for q in queries]
        last = lambda: outs[4].rows[-1] if outs[4].rows else {}
        run(env, bounded, lambda: [len(o.rows) for o in outs[:4]] == [8, 5, 5, 5] and (last().get("s"), last().get("n")) == (14, 2))
    assert per_key(outs[0].rows, "k") == {
        "a": [("+I", "a", 1, T(1)), ("-U", "a", 1, T(1)), ("+U", "a", 2, T(3)), ("-D", "a", 2, T(3)), ("+I", "a", 3, T(5))],
        "b": [("+I", "b", 10, T(2)), ("-U", "b", 10, T(2)), ("+U", "b", 11, T(6))],
    }  # fmt: skip
    assert per_key(outs[1].rows, "k") == {"z": [("+I", "z", 5), ("-D", "z", 5)], "c": [("+I", "c", 1), ("-U", "c", 1), ("+U", "c", 2)]}
    assert per_key(outs[2].rows, "k") == {"a": [("+I", "a", 1), ("-U", "a", 1), ("+U", "a", 2), ("-D", "a", 2)], "b": [("+I", "b", 3)]}
    assert per_key(outs[3].rows, "k") == {"a": [("+I", 1, "a"), ("-U", 1, "a"), ("+U", 3, "a")], "b": [("+I", 2, "b"), ("-D", 2, "b")]}
    total: dict = {}
    for r in outs[4].rows:  # (materialized: the changes between keys come in another order than Flink's, the end is the same)
        total = {} if r["row_kind"] in ("-U", "-D") else {"s": r["s"], "n": r["n"]}
    assert total == {"s": 14, "n": 2}


def test_a_record_flink_fails_on_is_a_dead_letter_and_the_others_are_read(spark, tmp_path):
    """A record with no key, a key or value that is no JSON, and a NULL in the primary key (a value of ALL fields without
    it: Flink's NOT NULL key fails the job) go to the dead letters, each with its reason; the other records are read."""
    with topics(1) as (bootstrap, (topic,)):
        bad = [(None, b'{"k": "x", "v": 1}'), (b"{", b'{"k": "y", "v": 1}'), (key("m"), b"nope"), (key("n"), b'{"v": 1}')]
        send(bootstrap, topic, [(key("a"), b'{"k": "a", "v": 1}'), *bad, (key("a"), b'{"k": "a", "v": 2}')])
        dead = fk.sinks.collect()
        env = fk.StreamEnvironment(app="upsert-kafka-dead", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
        t_env = StreamTableEnvironment.create(env)
        t_env.execute_sql(upsert_table("up", "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED", topic, bootstrap))
        out = t_env.to_changelog_stream(t_env.sql_query("SELECT * FROM up")).collect()
        run(env, True, lambda: False)
    assert [(r["row_kind"], r["k"], r["v"]) for r in out.rows] == [("+I", "a", 1), ("-U", "a", 1), ("+U", "a", 2)]
    reasons = sorted((r["raw"], r["reason"].split(": ", 1)[1]) for r in dead.rows)
    assert reasons == sorted([
        ("", "record with no key (upsert-kafka reads the primary key from it)"),
        ("{", "malformed json key or one that does not fit the primary key"),
        ("nope", "malformed json or a value that does not fit the schema"),
        ('{"v": 1}', "a NULL in the primary key (k), which is NOT NULL (Flink fails the job)"),
    ])  # fmt: skip


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_an_event_time_temporal_join_reads_an_upsert_table_s_records_as_its_versions(spark, tmp_path, bounded):
    """Orders joined with the rate of their time in an upsert-kafka table, INNER and LEFT. As Flink's planner gives the
    join the upsert source's records as they come (no ChangelogNormalize), a tombstone, whose time is NULL, is never the
    version in force: USD's orders after its tombstone meet its last rate, as in PyFlink."""
    with topics(2) as (bootstrap, (rates, orders)):
        rate = lambda c, r, s: json.dumps({"currency": c, "rate": r, "update_time": f"2024-01-01 00:00:{s:02d}"}).encode()
        send(bootstrap, rates, [(b'{"currency": "EUR"}', rate("EUR", 1.10, 1)), (b'{"currency": "USD"}', rate("USD", 1.00, 1)),
                                (b'{"currency": "EUR"}', rate("EUR", 1.20, 5)), (b'{"currency": "USD"}', None),
                                (b'{"currency": "GBP"}', rate("GBP", 0.9, 4)), (b'{"currency": "GBP"}', rate("GBP", 0.8, 30))])  # fmt: skip
        order = lambda i, c, s: json.dumps({"order_id": i, "currency": c, "price": 10 * i, "order_time": f"2024-01-01 00:00:{s:02d}"}).encode()
        send(bootstrap, orders, [(None, order(i, c, s)) for i, c, s in
                                 ((1, "EUR", 2), (2, "EUR", 6), (3, "USD", 3), (4, "USD", 7), (5, "GBP", 3), (6, "GBP", 5), (7, "EUR", 30))])  # fmt: skip
        env = fk.StreamEnvironment(app="upsert-kafka-temporal", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        t_env = StreamTableEnvironment.create(env)
        t_env.execute_sql(upsert_table("rates", "currency STRING, rate DOUBLE, update_time TIMESTAMP(3), WATERMARK FOR update_time AS update_time, "
                                       "PRIMARY KEY (currency) NOT ENFORCED", rates, bootstrap))  # fmt: skip
        t_env.execute_sql(
            "CREATE TABLE orders (order_id INT, currency STRING, price INT, order_time TIMESTAMP(3), WATERMARK FOR order_time AS order_time) "
            f"WITH ('connector' = 'kafka', 'topic' = '{orders}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json', "
            "'scan.startup.mode' = 'earliest-offset')"
        )
        join = "FROM orders AS o {} JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency"
        inner = t_env.to_data_stream(t_env.sql_query("SELECT o.order_id, o.price * r.rate AS amount, r.update_time " + join.format(""))).collect()
        left = t_env.to_data_stream(t_env.sql_query("SELECT o.order_id, r.rate " + join.format("LEFT"))).collect()
        run(env, bounded, lambda: (len(inner.rows), len(left.rows)) == (6, 7))
    assert sorted((r["order_id"], r["amount"], r["update_time"]) for r in inner.rows) == [
        (1, 11.0, T(1)), (2, 24.0, T(5)), (3, 30.0, T(1)), (4, 40.0, T(1)), (6, 54.0, T(4)), (7, 84.0, T(5)),
    ]  # fmt: skip
    assert sorted((r["order_id"], r["rate"]) for r in left.rows) == [(1, 1.1), (2, 1.2), (3, 1.0), (4, 1.0), (5, None), (6, 0.9), (7, 1.2)]
