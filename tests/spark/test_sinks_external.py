"""PostgreSQL and Redis sinks in real jobs: exactly-once results, replays skipped, clear failures, restarts lose nothing."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import psycopg
import pytest
import redis as redis_py

import funke as fk
from funke.connectors.base import BatchSink
from funke.connectors.postgres import PostgresSink
from funke.connectors.redis_sink import RedisSink
from funke.errors import SinkError
from funke.windows import TumblingEventTimeWindows
from tests.servers import ensure_postgres, ensure_redis

from .helpers import ts

pytestmark = pytest.mark.spark
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("t")
EVENTS = [("a", 1_000), ("b", 2_000), ("a", 12_000), ("a", 15_000), ("b", 31_000), ("a", 40_000)]
#: Counts per (key, window start ms) of EVENTS in 10 s tumbling windows.
EXPECTED = {("a", 0): 1, ("b", 0): 1, ("a", 10_000): 2, ("b", 30_000): 1, ("a", 40_000): 1}


@pytest.fixture(scope="module")
def dsn() -> str:
    return ensure_postgres()


@pytest.fixture(scope="module")
def redis_url() -> str:
    return ensure_redis()


@pytest.fixture
def table(dsn):
    name = f"funke_test_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg.connect(dsn) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute("DELETE FROM funke_sink_commits WHERE sink = %s", (name,))


@pytest.fixture
def prefix(redis_url):
    p = f"funke-test-{uuid.uuid4().hex[:10]}:"
    yield p
    r = redis_py.Redis.from_url(redis_url)
    for k in [*r.scan_iter(f"{p}*"), *r.scan_iter(f"funke:commits:*{p}*")]:
        r.delete(k)


def window_counts(env):
    """Counts per key of EVENTS in 10 s tumbling windows, two events per micro-batch."""
    rows = [{"k": k, "t": ts(t)} for k, t in EVENTS]
    s = env.from_collection(rows, "k string, t timestamp", rows_per_batch=2, watermarks=WM)
    return s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()


def pg_counts(dsn: str, table: str) -> list[tuple[str, int, int]]:
    """(key, window start ms, count) rows, duplicates kept."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            f"SELECT k, (extract(epoch FROM window_start) * 1000)::bigint, count FROM {table} ORDER BY 1, 2"
        ).fetchall()
    return [tuple(r) for r in rows]


def redis_counts(url: str, prefix: str) -> dict[tuple[str, int], int]:
    r = redis_py.Redis.from_url(url, decode_responses=True)
    out = {}
    for key in r.scan_iter(f"{prefix}*"):
        for start, count in r.hgetall(key).items():
            out[(key.removeprefix(prefix), int(start))] = int(count)
    return out


def markers(dsn: str, table: str) -> list[tuple[str, int]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT query_id, batch_id FROM funke_sink_commits WHERE sink = %s ORDER BY 2", (table,)).fetchall()


EXPECTED_ROWS = sorted((k, s, c) for (k, s), c in EXPECTED.items())


@dataclass(eq=False)
class Both(BatchSink):
    """Two sinks written from one ``foreachBatch`` (one Spark query, so a test runs it once), ``times`` times per batch.

    Writing a batch again with the same id is what Spark does when it replays a batch.
    """

    first: BatchSink
    second: BatchSink
    times: int = 1

    def check(self, job):
        self.first.check(job)
        self.second.check(job)

    def write_batch(self, df, batch_id, job):
        df = df.persist()  # computed once for every write, as the runtime does for several sinks
        try:
            for _ in range(self.times):
                self.first.write_batch(df, batch_id, job)
                self.second.write_batch(df, batch_id, job)
        finally:
            df.unpersist()


def test_windowed_job_reaches_postgres_and_redis_once_even_when_every_batch_is_written_twice(env, dsn, redis_url, table, prefix):
    pg = fk.sinks.postgres(table, dsn=dsn)  # append: a second write of a batch would double its rows
    rd = fk.sinks.redis(redis_url, key="k", field="window_start", value="count", prefix=prefix)
    window_counts(env).sink_to(Both(pg, rd, times=2))
    assert env.execute().wait(timeout=120).done
    assert pg_counts(dsn, table) == EXPECTED_ROWS
    assert redis_counts(redis_url, prefix) == EXPECTED  # the YSB layout: per key a hash of window start -> count
    committed = markers(dsn, table)
    assert len({q for q, _ in committed}) == 1 and len(committed) == len({b for _, b in committed}) >= 2
    r = redis_py.Redis.from_url(redis_url)
    assert r.hlen(next(r.scan_iter(f"funke:commits:test:{prefix}*"))) >= 1


def test_explain_shows_each_sink_and_its_guarantee(env, dsn, redis_url, table, prefix):
    counts = window_counts(env)
    counts.sink_to(fk.sinks.postgres(table, dsn=dsn, mode="upsert", key=["k", "window_start"]))
    counts.sink_to(fk.sinks.redis(redis_url, key="k", field="window_start", value="count", prefix=prefix))
    counts.print()
    plan = env.explain()
    assert f"postgres({table}, upsert on k, window_start, at 127.0.0.1:5432/test) (exactly-once)" in plan
    assert f"redis(HSET {prefix}<k> <window_start> <count>, at 127.0.0.1:6379/0) (exactly-once)" in plan
    assert "print(limit=20) (at-least-once)" in plan


def test_bounded_run_upserts_into_postgres_and_fills_a_redis_hash_per_key_and_window(env, dsn, redis_url, table, prefix):
    with psycopg.connect(dsn) as conn:  # an earlier result for (a, 0) and a row the job does not touch
        conn.execute(
            f"CREATE TABLE {table} (k text, window_start timestamptz, window_end timestamptz, count bigint, "
            "PRIMARY KEY (k, window_start))"
        )
        conn.execute(
            f"INSERT INTO {table} VALUES ('a', to_timestamp(0), to_timestamp(10), 99), "
            "('z', to_timestamp(0), to_timestamp(10), 7)"
        )
    counts = window_counts(env)
    counts.sink_to(fk.sinks.postgres(table, dsn=dsn, mode="upsert", key=["k", "window_start"]))
    counts.sink_to(fk.sinks.redis(redis_url, key=["k", "window_start"], prefix=prefix))
    assert env.execute(bounded=True).wait(timeout=120).done
    assert pg_counts(dsn, table) == sorted([*EXPECTED_ROWS, ("z", 0, 7)])
    r = redis_py.Redis.from_url(redis_url, decode_responses=True)
    assert {k.removeprefix(prefix): r.hgetall(k) for k in r.scan_iter(f"{prefix}*")} == {
        f"{k}:{s}": {"window_end": str(s + 10_000), "count": str(c)} for (k, s), c in EXPECTED.items()
    }


def test_existing_table_that_does_not_fit_fails_the_job_naming_table_and_column(env, dsn, table):
    with psycopg.connect(dsn) as conn:
        conn.execute(f"CREATE TABLE {table} (k text, window_start timestamp, window_end timestamptz, count text)")
    window_counts(env).sink_to(fk.sinks.postgres(table, dsn=dsn))
    with pytest.raises(fk.JobFailedError) as e:
        env.execute(bounded=True).wait(timeout=120)
    msg = str(e.value)
    assert f"table {table} does not fit the results" in msg
    assert "column 'window_start': expected timestamp with time zone (Spark timestamp), found timestamp without time zone" in msg
    assert "column 'count': expected bigint (Spark bigint), found text" in msg


def test_server_down_at_start_names_the_server_before_spark_starts(env, spark):
    window_counts(env).sink_to(fk.sinks.postgres("t", dsn="host=127.0.0.1 port=1 dbname=test user=postgres"))
    with pytest.raises(SinkError, match=r"postgres sink 't' \(PostgreSQL at 127.0.0.1:1/test\): cannot connect: .*refused"):
        env.execute()
    assert spark.streams.active == []
    other = fk.StreamEnvironment(app="test", spark=spark)
    window_counts(other).sink_to(fk.sinks.redis("redis://127.0.0.1:1/0", key="k"))
    with pytest.raises(SinkError, match=r"redis sink '\{k\}' \(Redis at 127.0.0.1:1/0\): cannot connect: .*refused"):
        other.execute()
    assert spark.streams.active == []


@dataclass(eq=False)
class CrashAfterCommit(PostgresSink):
    """The first batch with rows commits, then the driver 'crashes' before Spark records the batch: Spark replays it."""

    crashed: bool = False

    def write_table(self, data, schema, *, job, batch_id, query_id):
        written = super().write_table(data, schema, job=job, batch_id=batch_id, query_id=query_id)
        if data.num_rows and not self.crashed:
            self.crashed = True
            raise SinkError(f"simulated crash after batch {batch_id} committed")
        return written


@dataclass(eq=False)
class DownOnce(RedisSink):
    """The server is down for the first batch with rows: the write fails as a real refused connection does."""

    failed: bool = False

    def write_table(self, data, schema, *, job, batch_id, query_id):
        if data.num_rows and not self.failed:
            self.failed = True
            down = RedisSink("redis://127.0.0.1:1/0", self.key, self.field, self.value, self.prefix, self.name)
            down.write_table(data, schema, job=job, batch_id=batch_id, query_id=query_id)
        return super().write_table(data, schema, job=job, batch_id=batch_id, query_id=query_id)


def test_batches_failing_mid_run_stop_the_job_and_restarts_lose_and_repeat_nothing(
    spark, tmp_path, dsn, redis_url, table, prefix
):
    # The first batch with rows (batch 2, which also carries the end of input) commits to
    # PostgreSQL and then "crashes"; on the restart PostgreSQL skips the replay and Redis is
    # down; on the next restart Redis is back and gets the batch.
    both = Both(CrashAfterCommit(table, dsn), DownOnce(redis_url, ("k",), ("window_start",), ("count",), prefix))
    failures = []
    for _ in range(3):
        env = fk.StreamEnvironment(app="test", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"))
        window_counts(env).sink_to(both, uid="both")
        try:
            assert env.execute().wait(timeout=120).done
            break
        except fk.JobFailedError as e:
            failures.append(str(e))
    assert len(failures) == 2
    assert "simulated crash after batch 2 committed" in failures[0]
    assert "(Redis at 127.0.0.1:1/0): batch 2 of job test failed and its marker was not written" in failures[1]
    assert pg_counts(dsn, table) == EXPECTED_ROWS  # append mode: the replayed batch was skipped, not doubled
    assert redis_counts(redis_url, prefix) == EXPECTED  # the batch the server missed was written on the restart
