"""Exactly-once under failures: the self-checking job killed mid-run once over each replayable source, PostgreSQL
holds the failure-free result; Kafka to Kafka killed inside a transaction, the output topics read read_committed
hold it. Kills of every kind (at a random moment, inside a sink transaction, right after its commit) and longer
runs: ``funke bench chaos --kills N`` (its three kinds need three kills; that run left the suite for its time)."""

from __future__ import annotations

import pytest

from funke.bench.chaos import run_chaos, summary
from tests.servers import ensure_kafka, ensure_postgres, ensure_redis

pytestmark = pytest.mark.spark


def test_redis_stream_source_killed_mid_stream_loses_and_repeats_nothing(tmp_path):
    dsn, url = ensure_postgres(), ensure_redis()
    steps: list[str] = []
    result = run_chaos(
        dsn,
        kills=1,
        events=6_000,
        rows_per_batch=800,
        workdir=str(tmp_path),
        seed=11,
        timer_s=(3, 10),
        source="redis",
        redis=url,
        on_step=steps.append,
    )
    figures = summary(result)
    assert (figures["source"], figures["kills"]) == ("redis", 1), (figures, steps)
    assert (figures["lost"], figures["duplicated"], figures["alerts"], figures["totals_ok"]) == (0, 0, 0, True), (figures, steps)


def test_file_source_killed_mid_directory_replays_exactly(tmp_path):
    """A directory read one file per micro-batch (bounded: the files present at start): killed mid-run,
    then left to read the rest and end, with every window and every total exact."""
    dsn = ensure_postgres()
    steps: list[str] = []
    result = run_chaos(
        dsn,
        kills=1,
        events=6_000,
        rows_per_batch=500,
        workdir=str(tmp_path),
        seed=5,
        timer_s=(3, 10),
        source="files",
        on_step=steps.append,
    )
    figures = summary(result)
    assert (figures["source"], figures["kills"]) == ("files", 1), (figures, steps)
    assert (figures["lost"], figures["duplicated"], figures["alerts"], figures["totals_ok"]) == (0, 0, 0, True), (figures, steps)


def test_kafka_to_kafka_killed_inside_a_transaction_read_committed_holds_the_exact_result(tmp_path):
    """Kafka in (two partitions), Kafka out (the transactional sink): killed with a batch's records flushed to
    the broker in a transaction not yet committed; a read_committed read of both output topics holds exactly
    the failure-free result."""
    bootstrap = ensure_kafka()
    steps: list[str] = []
    result = run_chaos(
        "",
        kills=1,
        events=6_000,
        rows_per_batch=800,
        workdir=str(tmp_path),
        seed=3,
        source="kafka",
        sink="kafka",
        bootstrap=bootstrap,
        modes=("during",),
        on_step=steps.append,
    )
    figures = summary(result)
    assert (figures["source"], figures["sink"], figures["kills_by_mode"]["during"]) == ("kafka", "kafka", 1), (figures, steps)
    assert (figures["lost"], figures["duplicated"], figures["alerts"], figures["totals_ok"]) == (0, 0, 0, True), (figures, steps)
