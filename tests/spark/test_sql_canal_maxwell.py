"""Flink SQL's canal-json and maxwell-json formats on a kafka table, against the real broker: each record of Canal or
Maxwell (MySQL's change capture tools) read as the changes it holds. Every expected row is what PyFlink 2.3.0 gave for
the same table and records (Flink's Kafka connector 5.0.0-2.2, by hand); where Flink fails the job on a record, funke
sends it to the dead letters with its reason."""

from __future__ import annotations

import json

import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from tests.spark.test_sql_upsert_kafka import run, send, topics

pytestmark = pytest.mark.spark

row = lambda i, n, w: {"id": i, "name": n, "w": w}
in_t = {"database": "db", "table": "t", "isDdl": False}
CANAL = [  # (Canal writes every value as text: Flink's JSON rules read "1" as an INT)
    {"data": [row("1", "a", "1.5"), row("2", "b", "2.5")], "old": None, "type": "INSERT", **in_t, "es": 1, "ts": 2},
    {"data": [row("1", "a2", "1.5")], "old": [{"name": "a"}], "type": "UPDATE", **in_t},
    {"data": [row("2", "b", "3.5")], "old": [{"w": None}], "type": "UPDATE", **in_t},
    {"data": None, "type": "CREATE", **in_t, "isDdl": True, "sql": "CREATE TABLE t (...)"},
    {"data": [row("9", "z", "9")], "type": "INSERT", **in_t, "database": "other"},
    {"data": [row("8", "y", "8")], "type": "INSERT", **in_t, "table": "u"},
    {"data": [row("1", "a2", "1.5")], "type": "DELETE", **in_t},
    {"data": [row("3", "c", "4"), row("4", "d", "5")], "old": [{"name": "cc"}, {"w": "4.5", "name": "dd"}], "type": "UPDATE", **in_t},
]
CANAL_READ = [  # (row 3's w before is NULL: Flink takes a column from "data" only where no row of "old" names it)
    ("+I", 1, "a", 1.5), ("+I", 2, "b", 2.5), ("-U", 1, "a", 1.5), ("+U", 1, "a2", 1.5), ("-U", 2, "b", None), ("+U", 2, "b", 3.5),
    ("+I", 9, "z", 9.0), ("+I", 8, "y", 8.0), ("-D", 1, "a2", 1.5), ("-U", 3, "cc", None), ("+U", 3, "c", 4.0), ("-U", 4, "dd", 4.5),
    ("+U", 4, "d", 5.0),
]  # fmt: skip
MAXWELL = [
    {"database": "db", "table": "t", "type": "insert", "ts": 1, "data": row(1, "a", 1.5)},
    {"database": "db", "table": "t", "type": "update", "data": row(1, "a2", 1.5), "old": {"name": "a"}},
    {"database": "db", "table": "t", "type": "update", "data": row(1, "a3", 2.5), "old": {"name": "a2", "w": None}},
    {"database": "other", "table": "t", "type": "insert", "data": row(9, "z", 9)},
    {"database": "db", "table": "t", "type": "delete", "data": row(1, "a3", 2.5)},
    {"database": "db", "table": "t", "type": "insert", "data": row(2, "b", 3)},
]
MAXWELL_READ = [("+I", 1, "a", 1.5), ("-U", 1, "a", 1.5), ("+U", 1, "a2", 1.5), ("-U", 1, "a2", None), ("+U", 1, "a3", 2.5),
                ("+I", 9, "z", 9.0), ("-D", 1, "a3", 2.5), ("+I", 2, "b", 3.0)]  # fmt: skip


def table(name: str, topic: str, bootstrap: str, fmt: str, extra: str = "") -> str:
    return (
        f"CREATE TABLE {name} (id INT, name STRING, w DOUBLE) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'format' = '{fmt}', 'scan.startup.mode' = 'earliest-offset'{extra})"
    )


def changes(out) -> list[tuple]:
    return [(r["row_kind"], r["id"], r["name"], r["w"]) for r in out.rows]


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_canal_and_maxwell_records_are_read_as_their_changes_as_flink_reads_them(spark, tmp_path, bounded):
    """Inserts and deletes of one or two rows, updates paired with their "old" values, a Canal DDL record (skipped),
    and canal-json.database.include / table.include leaving out the records of another database or table. The
    formats were refused ('kafka format 'canal-json' is not supported by funke')."""
    with topics(2) as (bootstrap, (canal, maxwell)):
        send(bootstrap, canal, [(None, json.dumps(r).encode()) for r in CANAL])
        send(bootstrap, maxwell, [(None, json.dumps(r).encode()) for r in MAXWELL])
        env = fk.StreamEnvironment(app="canal-maxwell", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        t_env = StreamTableEnvironment.create(env)
        t_env.execute_sql(table("c", canal, bootstrap, "canal-json"))
        t_env.execute_sql(table("ct", canal, bootstrap, "canal-json", ", 'canal-json.database.include' = 'd.*', 'canal-json.table.include' = 't'"))
        t_env.execute_sql(table("m", maxwell, bootstrap, "maxwell-json"))
        outs = [t_env.to_changelog_stream(t_env.sql_query(f"SELECT * FROM {name}")).collect() for name in ("c", "ct", "m")]
        run(env, bounded, lambda: [len(o.rows) for o in outs] == [13, 11, 8])
    assert changes(outs[0]) == CANAL_READ
    assert changes(outs[1]) == [c for c in CANAL_READ if c[1] not in (8, 9)]
    assert changes(outs[2]) == MAXWELL_READ


def test_a_record_flink_fails_on_is_a_dead_letter_with_its_reason(spark, tmp_path):
    """Each of these fails a Flink job (PyFlink 2.3.0's error named in the reason's place); in funke each is a dead
    letter and the record after it is read: a type other than INSERT/UPDATE/DELETE (Canal's CREATE aside), an insert
    with no "data", an update with no "old", a record with no "database" where canal-json.database.include reads it,
    a row value that fits no JSON rule."""
    ok = {"canal": {"data": [row("5", "ok", "5")], "type": "INSERT", **in_t}, "maxwell": {"database": "db", "table": "t", "type": "insert", "data": row(5, "ok", 5)}}
    bad = {
        "canal": [{"data": None, "type": "ALTER", **in_t, "isDdl": True}, {"data": None, "type": "INSERT", **in_t},
                  {"data": [row("1", "a", "1")], "type": "UPDATE", **in_t}, {"data": [row("1", "a", "x")], "type": "INSERT", **in_t}],
        "maxwell": [{"database": "db", "table": "t", "type": "bootstrap-insert", "data": row(1, "a", 1)},
                    {"database": "db", "table": "t", "type": "update", "data": row(1, "a", 1)}, "no json"],
        "canal-filtered": [{"data": [row("1", "a", "1")], "type": "INSERT", "isDdl": False}],
    }  # fmt: skip
    dead = fk.sinks.collect()
    with topics(3) as (bootstrap, names):
        for topic, (kind, records) in zip(names, bad.items(), strict=True):
            records = [*records, ok[kind.split("-")[0]]]
            send(bootstrap, topic, [(None, (r if isinstance(r, str) else json.dumps(r)).encode()) for r in records])
        env = fk.StreamEnvironment(app="canal-maxwell-dead", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
        t_env = StreamTableEnvironment.create(env)
        t_env.execute_sql(table("c", names[0], bootstrap, "canal-json"))
        t_env.execute_sql(table("m", names[1], bootstrap, "maxwell-json"))
        t_env.execute_sql(table("f", names[2], bootstrap, "canal-json", ", 'canal-json.database.include' = 'db'"))
        outs = [t_env.to_changelog_stream(t_env.sql_query(f"SELECT * FROM {name}")).collect() for name in ("c", "m", "f")]
        run(env, True, lambda: False)
    assert [changes(o) for o in outs] == [[("+I", 5, "ok", 5.0)]] * 3
    reasons = sorted(r["reason"].split(": ", 1)[1] for r in dead.rows)
    assert reasons == sorted([
        "unknown type ALTER (Flink fails the job)",
        "the 'data' of a record of type INSERT is null (Flink fails the job)",
        "the 'old' of a record of type UPDATE is null (Flink fails the job)",
        "malformed json or a value that does not fit the schema",
        "unknown type bootstrap-insert (Flink fails the job)",
        "the 'old' of a record of type update is null (Flink fails the job)",
        "malformed json or a value that does not fit the schema",
        "no 'database' in the record, which canal-json.database.include reads (Flink fails the job)",
    ])  # fmt: skip
    assert {r["raw"] for r in dead.rows} == {json.dumps(r) if not isinstance(r, str) else r for rs in bad.values() for r in rs}
