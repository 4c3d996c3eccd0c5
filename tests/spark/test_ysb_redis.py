"""YSB wired to real components: events and campaigns from Redis, counts to Redis or PostgreSQL, from the CLI."""

from __future__ import annotations

import uuid

import psycopg
import pytest
import redis
from typer.testing import CliRunner

from funke.bench.reference import reference_counts
from funke.cli.main import app
from tests.servers import ensure_postgres, ensure_redis

pytestmark = pytest.mark.spark
EVENTS = 3_000


def test_ysb_from_a_redis_stream_to_redis_and_to_postgres(spark):
    url, dsn = ensure_redis(), ensure_postgres()
    stream, table = f"ysb:test:{uuid.uuid4().hex[:8]}", f"ysb_{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(url, decode_responses=True)
    runner = CliRunner()
    # redis_job writes the counts under fixed keys, as the README's Redis and Kafka examples do (tests/spark/
    # test_readme.py runs them before this test): start from none, or their windows count as this run's
    stale = client.keys("ysb:counts:campaign-*")
    if stale:
        client.delete(*stale)
    try:
        produced = runner.invoke(app, ["ysb", "produce", "--rate", "0", "--events", str(EVENTS), "--stream", stream, "--redis", url, "--reset"])
        assert produced.exit_code == 0, produced.output
        expected = {(c, start): n for (c, start, _end), n in reference_counts(EVENTS).items()}
        common = ["run", "examples.ysb:redis_job", "--events", str(EVENTS), "--no-live", "--opt", f"stream={stream}", "--opt", f"redis={url}"]
        to_redis = runner.invoke(app, [*common, "--opt", "sink=redis", "--fresh"])
        assert to_redis.exit_code == 0, to_redis.output
        got = {(key.removeprefix("ysb:counts:"), int(f)): int(v) for key in client.keys("ysb:counts:campaign-*") for f, v in client.hgetall(key).items()}
        assert got == expected
        to_pg = runner.invoke(app, [*common, "--opt", "sink=postgres", "--opt", f"dsn={dsn}", "--opt", f"table={table}", "--fresh"])
        assert to_pg.exit_code == 0, to_pg.output
        with psycopg.connect(dsn) as conn:
            rows = conn.execute(f'SELECT campaign_id, (extract(epoch FROM window_start) * 1000)::bigint, count FROM "{table}"').fetchall()
        assert {(c, int(w)): int(n) for c, w, n in rows} == expected
    finally:
        client.delete(stream, *client.keys("ysb:counts:campaign-*"))
        with psycopg.connect(dsn) as conn:
            conn.execute(f'DROP TABLE IF EXISTS "{table}"')
