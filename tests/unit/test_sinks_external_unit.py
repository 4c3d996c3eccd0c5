"""PostgreSQL and Redis sinks without Spark: type mapping, fit checks, markers and layouts against the real servers."""

from __future__ import annotations

import datetime as dt
import decimal
import pickle
import uuid

import psycopg
import pyarrow as pa
import pytest
import redis as redis_py

import funke as fk
from funke.connectors.postgres import Column, fit_problems, pg_type
from funke.connectors.redis_sink import encode
from funke.errors import SinkError
from funke.plan.types import Schema
from tests.servers import ensure_postgres, ensure_redis

UTC = dt.UTC
SCHEMA = Schema.of("k string, window_start timestamp, count bigint")


def counts(*rows: tuple[str, int, int | None]) -> pa.Table:
    """(key, window start in seconds, count) rows as the Arrow table Spark's toArrow() gives."""
    return pa.table(
        {
            "k": pa.array([r[0] for r in rows], pa.string()),
            "window_start": pa.array([dt.datetime.fromtimestamp(r[1], UTC) for r in rows], pa.timestamp("us", "UTC")),
            "count": pa.array([r[2] for r in rows], pa.int64()),
        }
    )


# -- PostgreSQL: pure parts ------------------------------------------------------------------


def test_spark_types_map_to_postgres_types_and_other_types_are_refused():
    assert {t: pg_type(t) for t in ("string", "tinyint", "int", "bigint", "float", "double", "boolean", "date", "binary")} == {
        "string": "text",
        "tinyint": "smallint",
        "int": "integer",
        "bigint": "bigint",
        "float": "real",
        "double": "double precision",
        "boolean": "boolean",
        "date": "date",
        "binary": "bytea",
    }
    assert pg_type("timestamp") == "timestamp with time zone"  # sessions run in UTC: the instant is kept
    assert pg_type("timestamp_ntz") == "timestamp without time zone"
    assert pg_type("decimal(38,6)") == "numeric(38,6)"
    with pytest.raises(SinkError, match=r"not array<int>: turn it into a string column first \(e.g. with to_json\)"):
        pg_type("array<int>")


def test_fit_problems_name_each_column_with_expected_and_found_types():
    schema = Schema.of("k string, n int, t timestamp, x double")
    table = [
        Column("k", "character varying(10)"),
        Column("n", "bigint"),
        Column("t", "timestamp without time zone"),
        Column("extra", "text", not_null=True),
    ]
    assert fit_problems(schema, table, (), []) == [
        "column 'k': expected text (Spark string), found character varying(10)",
        "column 't': expected timestamp with time zone (Spark timestamp), found timestamp without time zone",
        "column 'x': expected double precision (Spark double), found no such column",
        "column 'extra' is NOT NULL without a default, and the results have no such column",
    ]
    wider = [
        Column("k", "text"),
        Column("n", "numeric"),
        Column("t", "timestamp with time zone"),
        Column("x", "double precision"),
        Column("id", "bigint", True, True),
    ]
    assert fit_problems(schema, wider, ("k",), [frozenset({"k"})]) == []
    assert fit_problems(schema, wider, ("k", "t"), [frozenset({"k"})]) == [
        "upsert on (k, t) needs a primary key or unique index on exactly those columns, and there is none"
    ]


def test_postgres_sink_arguments_are_checked_when_built():
    with pytest.raises(fk.PlanError, match="mode must be 'append' or 'upsert'"):
        fk.sinks.postgres("t", mode="merge")
    with pytest.raises(fk.PlanError, match=r"mode='upsert' needs key=\[...\]"):
        fk.sinks.postgres("t", mode="upsert")
    with pytest.raises(fk.PlanError, match="key=... is for mode='upsert'"):
        fk.sinks.postgres("t", key="k")
    with pytest.raises(fk.PlanError, match="cannot read the DSN"):
        fk.sinks.postgres("t", dsn="host")
    sink = fk.sinks.postgres("public.t", dsn="postgresql://u:secret@db.example:6543/ysb", name="counts")
    assert sink.describe() == "postgres(public.t, append, name counts, at db.example:6543/ysb)"  # no password
    assert sink.guarantee == "exactly-once"


def test_a_user_batch_sink_is_at_least_once_unless_it_says_otherwise():
    from funke.connectors.base import BatchSink
    from funke.plan.nodes import Sink

    class Webhook(BatchSink):
        """Posts each batch; a replayed batch is posted again."""

        def write_batch(self, df, batch_id, job):
            pass

    assert Sink((), spec=Webhook()).label() == "sink batch-sink (at-least-once)"
    assert Sink((), spec=fk.sinks.redis(key="k", field="f", value="v")).label().endswith("(exactly-once)")


# -- PostgreSQL: against the server ------------------------------------------------------------


@pytest.fixture
def dsn():
    return ensure_postgres()


@pytest.fixture
def table(dsn):
    name = f"funke_unit_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg.connect(dsn) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute("DELETE FROM funke_sink_commits WHERE sink = %s", (name,))


def rows(dsn, sql):
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql).fetchall()


def at(seconds: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, UTC)


def test_postgres_batch_with_a_committed_marker_is_skipped(dsn, table):
    sink = fk.sinks.postgres(table, dsn=dsn)
    batch = counts(("a", 0, 1), ("b", 0, 2))
    assert sink.write_table(batch, SCHEMA, job="j", batch_id=7, query_id="q1") is True
    assert sink.write_table(batch, SCHEMA, job="j", batch_id=7, query_id="q1") is False  # Spark's replay
    assert rows(dsn, f"SELECT k, window_start, count FROM {table} ORDER BY k") == [("a", at(0), 1), ("b", at(0), 2)]
    assert rows(dsn, f"SELECT job, query_id, batch_id FROM funke_sink_commits WHERE sink = '{table}'") == [("j", "q1", 7)]
    # A fresh checkpoint (new query id) numbers its batches from 0 again: not a replay.
    assert sink.write_table(batch, SCHEMA, job="j", batch_id=7, query_id="q2") is True
    # Outside a streaming query (a bounded run) nothing replays: no marker, written each time.
    assert sink.write_table(batch, SCHEMA, job="j", batch_id=0, query_id=None) is True
    assert rows(dsn, f"SELECT count(*) FROM {table}") == [(6,)]
    assert rows(dsn, f"SELECT count(*) FROM funke_sink_commits WHERE sink = '{table}'") == [(2,)]


def test_postgres_creates_the_table_with_mapped_types_and_the_key_as_primary_key(dsn, table):
    sink = fk.sinks.postgres(table, dsn=dsn, mode="upsert", key=["k", "window_start"])
    sink.write_table(counts(("a", 0, 1)), SCHEMA, job="j", batch_id=0, query_id="q")
    assert rows(
        dsn,
        f"SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        f"WHERE attrelid = '{table}'::regclass AND attnum > 0 ORDER BY attnum",
    ) == [
        ("k", "text"),
        ("window_start", "timestamp with time zone"),
        ("count", "bigint"),
    ]
    assert rows(dsn, f"SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = '{table}'::regclass") == [
        ("PRIMARY KEY (k, window_start)",)
    ]


def test_postgres_upsert_updates_by_key_and_the_last_row_of_a_key_in_a_batch_wins(dsn, table):
    sink = fk.sinks.postgres(table, dsn=dsn, mode="upsert", key=["k", "window_start"])
    sink.write_table(counts(("a", 0, 1), ("b", 0, 1)), SCHEMA, job="j", batch_id=0, query_id="q")
    sink.write_table(counts(("a", 0, 5), ("a", 0, 6), ("a", 10, 1)), SCHEMA, job="j", batch_id=1, query_id="q")
    assert rows(dsn, f"SELECT k, window_start, count FROM {table} ORDER BY 1, 2") == [
        ("a", at(0), 6),
        ("a", at(10), 1),
        ("b", at(0), 1),
    ]


def test_postgres_failed_batch_writes_nothing_and_can_be_written_again(dsn, table):
    sink = fk.sinks.postgres(table, dsn=dsn, mode="upsert", key=["k", "window_start"])
    sink.write_table(counts(("a", 0, 1)), SCHEMA, job="j", batch_id=0, query_id="q")
    with pytest.raises(
        SinkError,
        match=rf"postgres sink '{table}' \(PostgreSQL at 127.0.0.1:5432/test\): batch 1 of job j failed and its transaction "
        r"did not commit, so a restart writes it again: .*null value in column \"k\"",
    ):
        sink.write_table(counts(("b", 0, 1), (None, 0, 1)), SCHEMA, job="j", batch_id=1, query_id="q")
    assert rows(dsn, f"SELECT count(*) FROM {table}") == [(1,)]
    assert sink.write_table(counts(("b", 0, 1)), SCHEMA, job="j", batch_id=1, query_id="q") is True  # no marker was left behind


def test_postgres_existing_table_that_does_not_fit_is_refused_naming_table_column_and_types(dsn, table):
    with psycopg.connect(dsn) as conn:
        conn.execute(f"CREATE TABLE {table} (k text, window_start timestamptz, count integer)")
    sink = fk.sinks.postgres(table, dsn=dsn, mode="upsert", key=["k", "window_start"])
    with pytest.raises(SinkError) as e:
        sink.write_table(counts(("a", 0, 1)), SCHEMA, job="j", batch_id=0, query_id="q")
    assert str(e.value) == (
        f"postgres sink '{table}' (PostgreSQL at 127.0.0.1:5432/test): table {table} does not fit the results: "
        "column 'count': expected bigint (Spark bigint), found integer; "
        "upsert on (k, window_start) needs a primary key or unique index on exactly those columns, and there is none. "
        "Alter the table, or write to a new one (the sink creates a missing table)"
    )
    assert rows(dsn, f"SELECT count(*) FROM {table}") == [(0,)]


def test_postgres_round_trips_every_scalar_type(dsn, table):
    schema = Schema.of("s string, b boolean, i tinyint, f double, d decimal(10,2), day date, local timestamp_ntz, raw binary")
    data = pa.table(
        {
            "s": pa.array(['q"uo,te\nline', "", None], pa.string()),
            "b": pa.array([True, False, None]),
            "i": pa.array([1, -2, None], pa.int8()),
            "f": pa.array([float("inf"), 0.5, None]),
            "d": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-2.25"), None], pa.decimal128(10, 2)),
            "day": pa.array([dt.date(2024, 2, 29), dt.date(1970, 1, 1), None]),
            "local": pa.array([dt.datetime(2024, 1, 1, 12, 30, 0, 123456), dt.datetime(1969, 12, 31), None], pa.timestamp("us")),
            "raw": pa.array([b"\x00\xff", b"", None], pa.binary()),
        }
    )
    fk.sinks.postgres(table, dsn=dsn).write_table(data, schema, job="j", batch_id=0, query_id=None)
    got = rows(dsn, f"SELECT s, b, i, f, d, day, local, raw FROM {table} ORDER BY i DESC NULLS LAST")
    assert got == [
        (
            'q"uo,te\nline',
            True,
            1,
            float("inf"),
            decimal.Decimal("1.50"),
            dt.date(2024, 2, 29),
            dt.datetime(2024, 1, 1, 12, 30, 0, 123456),
            b"\x00\xff",
        ),
        ("", False, -2, 0.5, decimal.Decimal("-2.25"), dt.date(1970, 1, 1), dt.datetime(1969, 12, 31), b""),
        (None,) * 8,
    ]


def test_postgres_down_names_the_server_and_address(dsn, table):
    with pytest.raises(SinkError) as e:
        fk.sinks.postgres(table, dsn="host=127.0.0.1 port=1 dbname=test user=postgres").check("j")
    assert str(e.value).startswith(f"postgres sink '{table}' (PostgreSQL at 127.0.0.1:1/test): cannot connect: ")
    assert "Connection refused" in str(e.value) and str(e.value).endswith("is the server running and the DSN right?")
    fk.sinks.postgres(table, dsn=dsn).check("j")  # up: creates the marker table
    assert rows(dsn, "SELECT to_regclass('funke_sink_commits') IS NOT NULL") == [(True,)]


# -- Redis -----------------------------------------------------------------------------------


def test_redis_values_are_encoded_as_documented():
    assert encode(pa.array([dt.datetime(1970, 1, 1, 0, 0, 10, 999)], pa.timestamp("us", "UTC")), "t") == ["10000"]
    assert encode(pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us")), "t") == ["1704067200000"]
    assert encode(pa.array([dt.date(2024, 1, 2)]), "d") == ["2024-01-02"]
    assert encode(pa.array([True, None]), "b") == ["true", None]
    assert encode(pa.array([decimal.Decimal("1.50")], pa.decimal128(5, 2)), "x") == ["1.50"]
    assert encode(pa.array([3, 4], pa.int16()), "n") == ["3", "4"]
    with pytest.raises(
        SinkError,
        match=r"not column 'raw' of type binary: turn it into a string column first \(e.g. with to_json, or base64 for binary\)",
    ):
        encode(pa.array([b"x"]), "raw")


def test_redis_sink_arguments_are_checked_when_built():
    with pytest.raises(fk.PlanError, match="needs key="):
        fk.sinks.redis(key=[])
    with pytest.raises(
        fk.PlanError, match=r"with field=... writes one value per hash field: pass value='column' \(got value=\[\]\)"
    ):
        fk.sinks.redis(key="k", field="window_start")
    with pytest.raises(fk.PlanError, match=r"column\(s\) \['k'\] are both in the key/field and in value"):
        fk.sinks.redis(key="k", value=["k", "count"])
    with pytest.raises(fk.PlanError, match="must start with redis://"):
        fk.sinks.redis("http://localhost", key="k")
    sink = fk.sinks.redis("redis://:pw@cache:6380/2", key=["k", "window_start"], value=["count"], name="ysb")
    assert sink.describe() == "redis(HSET <k>:<window_start> count <count>, name ysb, at cache:6380/2)"


@pytest.fixture
def redis_url():
    return ensure_redis()


@pytest.fixture
def prefix(redis_url):
    p = f"funke-unit-{uuid.uuid4().hex[:10]}:"
    yield p
    r = redis_py.Redis.from_url(redis_url)
    for k in [*r.scan_iter(f"{p}*"), *r.scan_iter(f"funke:commits:*{p}*")]:
        r.delete(k)


def hashes(url, prefix):
    r = redis_py.Redis.from_url(url, decode_responses=True)
    return {k.removeprefix(prefix): r.hgetall(k) for k in r.scan_iter(f"{prefix}*")}


def test_redis_hash_per_key_is_the_ysb_layout_and_a_replayed_batch_is_skipped(redis_url, prefix):
    sink = fk.sinks.redis(redis_url, key="k", field="window_start", value="count", prefix=prefix)
    assert sink.write_table(counts(("a", 0, 1), ("a", 10, 2), ("b", 0, 3)), SCHEMA, job="j", batch_id=3, query_id="q") is True
    assert sink.write_table(counts(("a", 0, 100)), SCHEMA, job="j", batch_id=3, query_id="q") is False  # same batch id: skipped
    assert hashes(redis_url, prefix) == {"a": {"0": "1", "10000": "2"}, "b": {"0": "3"}}
    r = redis_py.Redis.from_url(redis_url, decode_responses=True)
    marker = r.hgetall(f"funke:commits:j:{prefix}{{k}}[window_start]:q")
    assert list(marker) == ["3"] and dt.datetime.fromisoformat(marker["3"]).tzinfo is not None
    assert sink.write_table(counts(("a", 0, None)), SCHEMA, job="j", batch_id=4, query_id="q") is True  # null: field removed
    assert hashes(redis_url, prefix) == {"a": {"10000": "2"}, "b": {"0": "3"}}
    assert sink.write_table(counts(("a", 0, 9)), SCHEMA, job="j", batch_id=4, query_id=None) is True  # bounded: no marker
    assert r.hget(f"{prefix}a", "0") == "9" and r.hlen(f"funke:commits:j:{prefix}{{k}}[window_start]:q") == 2


def test_redis_hash_per_row_key_holds_the_other_columns(redis_url, prefix):
    sink = fk.sinks.redis(redis_url, key=["k", "window_start"], prefix=prefix)
    schema = Schema.of("k string, window_start timestamp, count bigint, label string")
    data = counts(("a", 0, 1), ("a", 0, 2), ("b", 10, None)).append_column("label", pa.array(["x", "ü:é", None]))
    sink.write_table(data, schema, job="j", batch_id=0, query_id="q")
    assert hashes(redis_url, prefix) == {"a:0": {"count": "2", "label": "ü:é"}}  # the later row of a key wins; b's hash is empty


def test_redis_failing_command_leaves_no_marker_and_the_replay_writes_the_batch(redis_url, prefix):
    r = redis_py.Redis.from_url(redis_url, decode_responses=True)
    r.set(f"{prefix}b", "not a hash")
    sink = fk.sinks.redis(redis_url, key="k", field="window_start", value="count", prefix=prefix)
    with pytest.raises(
        SinkError, match=r"batch 5 of job j failed and its marker was not written, so a restart writes it again: .*WRONGTYPE"
    ):
        sink.write_table(counts(("a", 0, 1), ("b", 0, 2)), SCHEMA, job="j", batch_id=5, query_id="q")
    r.delete(f"{prefix}b")
    assert sink.write_table(counts(("a", 0, 1), ("b", 0, 2)), SCHEMA, job="j", batch_id=5, query_id="q") is True
    assert hashes(redis_url, prefix) == {"a": {"0": "1"}, "b": {"0": "2"}}


def test_redis_sink_pickles_without_its_client(redis_url):
    sink = fk.sinks.redis(redis_url, key="k")
    sink.check("j")  # opens the client
    copy = pickle.loads(pickle.dumps(sink))
    assert copy.describe() == sink.describe() and copy._client is None
    copy.check("j")


def test_redis_down_names_the_server_and_address():
    sink = fk.sinks.redis("redis://127.0.0.1:1/0", key="k", field="window_start", value="count")
    with pytest.raises(
        SinkError,
        match=r"^redis sink '\{k\}\[window_start\]' \(Redis at 127.0.0.1:1/0\): cannot connect: .*refused; "
        r"is the server running and the URL right\?$",
    ):
        sink.check("j")
    with pytest.raises(SinkError, match=r"\(Redis at 127.0.0.1:1/0\): batch 0 of job j failed .*refused"):
        sink.write_table(counts(("a", 0, 1)), SCHEMA, job="j", batch_id=0, query_id="q")
