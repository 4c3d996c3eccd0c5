"""The Redis Streams source on Spark, against the real Redis on 127.0.0.1:6379.

Typed rows from several streams, the per-batch limit, a bounded run over the same
entries, a restart on the same checkpoint that neither loses nor repeats an entry while
trimming only committed ones, clear errors, and the YSB producer end to end.
"""

from __future__ import annotations

import datetime as dt
import socket
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

import pytest
import redis
from typer.testing import CliRunner

import funke as fk
from examples import ysb
from funke.bench.reference import reference_counts
from funke.cli.main import app
from funke.connectors.sinks import CollectSink
from funke.errors import SourceError
from funke.runtime.job import JobHandle
from funke.semantics.time import timestamp_to_millis
from funke.spark.sources import source_frame
from tests.servers import ensure_redis

pytestmark = pytest.mark.spark
TYPED = "seq bigint, name string, x double, ok boolean, ts timestamp, d date, amt decimal(10,2), absent string"


@pytest.fixture
def r() -> redis.Redis:
    return redis.Redis.from_url(ensure_redis())


@pytest.fixture
def new_key(r):
    """A fresh stream key per call; the keys are deleted after the test."""
    made: list[str] = []

    def make() -> str:
        made.append(f"funke-test:{uuid.uuid4().hex}")
        return made[-1]

    yield make
    if made:
        r.delete(*made)


def add(r: redis.Redis, key: str, seqs: range, *, zone: str = "Z") -> None:
    p = r.pipeline(transaction=False)
    for i in seqs:
        ts = (dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i)).isoformat() + zone
        ok = "true" if i % 2 == 0 else "false"
        d = f"2024-01-{1 + i % 28:02d}"
        p.xadd(key, {"seq": i, "name": f"{key[-4:]}-{i}", "x": i / 4, "ok": ok, "ts": ts, "d": d, "amt": f"{i}.25"})
    p.execute()


def expected(key: str, i: int) -> dict:
    return {
        "seq": i,
        "name": f"{key[-4:]}-{i}",
        "x": i / 4,
        "ok": i % 2 == 0,
        "ts": dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i),
        "d": dt.date(2024, 1, 1 + i % 28),
        "amt": Decimal(f"{i}.25"),
        "absent": None,
    }


def test_typed_rows_from_two_streams_in_limited_batches_and_bounded(spark, tmp_path, r, new_key):
    a, b = new_key(), new_key()
    add(r, a, range(80))
    add(r, b, range(80), zone="")  # timestamps without an offset are UTC
    src = fk.sources.redis_stream([a, b], schema=TYPED, url=ensure_redis(), events=80, max_rows_per_batch=100)
    env = fk.StreamEnvironment(app="redis-typed", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    out = env.from_source(src).collect()
    env.execute().wait(timeout=120)
    want = sorted(([expected(a, i) for i in range(80)] + [expected(b, i) for i in range(80)]), key=lambda x: x["name"])
    assert sorted(out.rows, key=lambda x: x["name"]) == want
    assert [len(rows) for _, rows in sorted(out.batches) if rows] == [100, 60]  # 50 a stream, then the rest

    bounded = fk.StreamEnvironment(app="redis-typed-b", spark=spark)
    again = bounded.from_source(src).collect()
    bounded.execute(bounded=True).wait(timeout=120)
    assert sorted(again.rows, key=lambda x: x["name"]) == want


@dataclass(eq=False)
class PresenceSink(CollectSink):
    """Collects rows and notes any row whose entry was already gone from Redis when its batch was written."""

    client: redis.Redis | None = None
    key: str = ""
    gone: list[int] = field(default_factory=list)

    def add_batch(self, batch_id: int, rows: list[dict]) -> None:
        held = {int(fv[b"seq"]) for _, fv in self.client.xrange(self.key)}
        self.gone.extend(x["seq"] for x in rows if x["seq"] not in held)
        super().add_batch(batch_id, rows)


def test_restart_on_the_checkpoint_neither_loses_nor_repeats_and_trims_only_committed(spark, tmp_path, r, new_key):
    key = new_key()
    add(r, key, range(300))
    url = ensure_redis()
    src = fk.sources.redis_stream(key, schema="seq bigint, name string", url=url, events=600, max_rows_per_batch=100, trim=True)
    sink = PresenceSink(client=r, key=key)

    def run() -> JobHandle:
        env = fk.StreamEnvironment(app="redis-restart", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        env.from_source(src).sink_to(sink, uid="rows")
        return env.execute()

    first = run()
    deadline = time.monotonic() + 90
    while len(sink.batches) < 2 and time.monotonic() < deadline:
        first.wait(timeout=0.2)
    first.stop()  # mid-stream: only 300 of the 600 entries exist yet
    add(r, key, range(300, 600))
    run().wait(timeout=120)  # the same CollectSink: a replayed batch replaces its rows
    assert sorted(x["seq"] for x in sink.rows) == list(range(600))
    assert all(len(rows) <= 100 for _, rows in sink.batches)
    assert sink.gone == []  # every batch's entries were still there when it was written
    left = [int(fv[b"seq"]) for _, fv in r.xrange(key)]
    assert left == list(range(600 - len(left), 600)) and len(left) < 200  # committed batches trimmed, in order


def test_unreachable_redis_fails_before_any_query_starts(env, spark):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env.from_source(fk.sources.redis_stream("k", schema="v bigint", url=f"redis://127.0.0.1:{port}/0")).collect()
    with pytest.raises(SourceError, match=rf"cannot reach Redis at 127\.0\.0\.1:{port} \(Connection refused\)"):
        env.execute()
    assert spark.streams.active == []


def test_producer_writes_the_ysb_events_and_the_ysb_job_reads_them(spark, tmp_path, r, new_key):
    key, n = new_key(), 3_000
    args = ["ysb", "produce", "--rate", "1000000", "--events", str(n), "--stream", key, "--redis", ensure_redis()]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert f"wrote {n:,} events to '{key}'" in done.output
    generated = source_frame(spark, ysb.events(n), streaming=False, cores=2).collect()
    written = [{k.decode(): v.decode() for k, v in fv.items()} for _, fv in r.xrange(key)]
    assert written == [{k: str(v) for k, v in row.asDict().items()} for row in generated]

    env = fk.StreamEnvironment(app="ysb-redis", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    src = fk.sources.redis_stream(key, schema=ysb.events(1).schema, url=ensure_redis(), events=n, max_rows_per_batch=n)
    out = ysb.pipeline(env, src).collect()
    env.execute().wait(timeout=120)
    ms = timestamp_to_millis
    got = Counter({(x["campaign_id"], ms(x["window_start"]), ms(x["window_end"])): x["count"] for x in out.rows})
    assert got == reference_counts(n)
