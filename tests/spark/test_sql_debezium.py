"""Flink SQL's debezium-json format on a kafka table, against the real broker: each Debezium change record read as the
changes it holds (``c``/``r`` an insert, ``u`` the row before and after, ``d`` a delete), the tombstone after a delete
skipped. Every expected row is what PyFlink 2.3.0 gave for the same table and records (Flink's Kafka connector
5.0.0-2.2, by hand); where Flink fails the job on a record, funke sends it to the dead letters."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from tests.spark.test_sql_upsert_kafka import run, send, topics

pytestmark = pytest.mark.spark

row = lambda i, n, p: {"id": i, "name": n, "price": p}
CHANGES = [  # (the second row's price a number's text: Flink's JSON rules read it)
    {"before": None, "after": row(1, "a", 1.5), "op": "c"},
    {"before": None, "after": row(2, "b", "2.5"), "op": "r"},
    {"before": row(1, "a", 1.5), "after": row(1, "a2", 1.75), "op": "u"},
    {"before": row(2, "b", 2.5), "after": None, "op": "d"},
    None,  # (Debezium's tombstone after a delete)
    {"before": None, "after": row(3, "c", 3), "op": "c", "source": {"db": "x"}, "ts_ms": 123},
]
D = Decimal
FLINK = [("+I", 1, "a", D("1.50")), ("+I", 2, "b", D("2.50")), ("-U", 1, "a", D("1.50")), ("+U", 1, "a2", D("1.75")),
         ("-D", 2, "b", D("2.50")), ("+I", 3, "c", D("3.00"))]  # fmt: skip


def table(name: str, topic: str, bootstrap: str, extra: str = "") -> str:
    return (
        f"CREATE TABLE {name} (id INT, name STRING, price DECIMAL(10, 2)) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'debezium-json', 'scan.startup.mode' = 'earliest-offset'{extra})"
    )


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_debezium_records_are_read_as_their_changes_as_flink_reads_them(spark, tmp_path, bounded):
    """The changes of six records (one a tombstone), plain and inside Debezium's {"schema", "payload"} envelope
    (debezium-json.schema-include), and an aggregation over them ending where Flink's ends. The format was refused
    ('kafka format 'debezium-json' is not supported by funke')."""
    with topics(2) as (bootstrap, (plain, wrapped)):
        send(bootstrap, plain, [(None, None if c is None else json.dumps(c).encode()) for c in CHANGES])
        send(bootstrap, wrapped, [(None, json.dumps({"schema": {"type": "struct"}, "payload": c}).encode()) for c in CHANGES if c])
        env = fk.StreamEnvironment(app="debezium", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        t_env = StreamTableEnvironment.create(env)
        t_env.execute_sql(table("p", plain, bootstrap))
        t_env.execute_sql(table("w", wrapped, bootstrap, ", 'debezium-json.schema-include' = 'true'"))
        queries = ["SELECT * FROM p", "SELECT * FROM w", "SELECT SUM(price) AS s, COUNT(*) AS n FROM p"]
        outs = [t_env.to_changelog_stream(t_env.sql_query(q)).collect() for q in queries]
        last = lambda: outs[2].rows[-1] if outs[2].rows else {}
        run(env, bounded, lambda: [len(o.rows) for o in outs[:2]] == [6, 6] and (last().get("s"), last().get("n")) == (D("4.75"), 2))
    for out in outs[:2]:
        assert [(r["row_kind"], r["id"], r["name"], r["price"]) for r in out.rows] == FLINK
    assert (last()["row_kind"], last()["s"], last()["n"]) == ("+U", D("4.75"), 2)


def test_a_record_flink_fails_on_is_a_dead_letter_with_its_reason(spark, tmp_path):
    """An unknown op, an update without its 'before' (Flink names Postgres's REPLICA IDENTITY), a record that is no JSON
    and a row value that fits no JSON rule fail a Flink job; in funke each is a dead letter and the others are read.
    With debezium-json.ignore-parse-errors the value is NULL and its row kept, as in Flink."""
    bad = [{"before": None, "after": row(9, "z", 1), "op": "x"}, {"before": None, "after": row(1, "a", 2), "op": "u"}, "no json",
           {"before": None, "after": row(5, "e", "five"), "op": "c"}]  # fmt: skip
    records = [{"before": None, "after": row(1, "a", 1.5), "op": "c"}, *bad, {"before": None, "after": row(4, "d", 4), "op": "c"}]
    with topics(1) as (bootstrap, (topic,)):
        send(bootstrap, topic, [(None, (r if isinstance(r, str) else json.dumps(r)).encode()) for r in records])
        outs, deads = [], []
        for extra in ("", ", 'debezium-json.ignore-parse-errors' = 'true'"):
            deads.append(fk.sinks.collect())
            env = fk.StreamEnvironment(app="debezium-dead", spark=spark, checkpoint_dir=str(tmp_path / f"ck{len(extra)}"), dead_letters=deads[-1])
            t_env = StreamTableEnvironment.create(env)
            t_env.execute_sql(table("p", topic, bootstrap, extra))
            outs.append(t_env.to_changelog_stream(t_env.sql_query("SELECT * FROM p")).collect())
            run(env, True, lambda: False)
    assert [(r["row_kind"], r["id"], r["price"]) for r in outs[0].rows] == [("+I", 1, D("1.50")), ("+I", 4, D("4.00"))]
    assert [(r["row_kind"], r["id"], r["price"]) for r in outs[1].rows] == [("+I", 1, D("1.50")), ("+I", 5, None), ("+I", 4, D("4.00"))]
    reasons = {r["raw"]: r["reason"].split(": ", 1)[1] for r in deads[0].rows}
    raw = [json.dumps(b) if not isinstance(b, str) else b for b in bad]
    assert reasons == {
        raw[0]: "unknown op x (Flink fails the job)",
        raw[1]: "the 'before' of an op 'u' or 'd' record is null (Debezium's Postgres connector: set the table's REPLICA IDENTITY to FULL) (Flink fails the job)",
        raw[2]: "malformed json or a value that does not fit the schema",
        raw[3]: "malformed json or a value that does not fit the schema",
    }
    assert sorted(r["raw"] for r in deads[1].rows) == sorted(raw[:3])
