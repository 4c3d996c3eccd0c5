"""A Spark standalone cluster on loopback (``funke cluster up``): YSB runs on it, and the
self-checking job loses a worker mid-run with PostgreSQL still exact."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from examples import ysb
from funke.bench.chaos import run_with_lost_worker, summary
from funke.config import settings
from funke.services.spark import SparkStandalone
from tests.servers import ensure_postgres

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def cluster():
    c = SparkStandalone(settings().services_root, workers=2, cores=1, memory="1g")
    c.up(lambda _: None)
    yield c
    c.down(lambda _: None)


def test_ysb_on_a_standalone_cluster(cluster, tmp_path, spark):
    events, out = 30_000, tmp_path / "out"
    env = {**os.environ, "FUNKE_HOME": str(tmp_path / "home"), "FUNKE_MASTER": cluster.master_url}
    cmd = [sys.executable, "-c", "from funke.cli.main import main; main()", "run", "examples.ysb:job", "--events", str(events),
           "--output", str(out), "--no-live", "--json"]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    rows = spark.read.parquet(str(out)).collect()
    assert sum(r["count"] for r in rows) == ysb.expected_view_count(events)
    assert len({(r["campaign_id"], r["window_start"]) for r in rows}) == len(rows)


def test_a_worker_killed_mid_run_loses_and_repeats_nothing(cluster, tmp_path):
    steps: list[str] = []
    result = run_with_lost_worker(
        ensure_postgres(), master=cluster.master_url, kill_worker=lambda: cluster.kill_worker(0), workdir=str(tmp_path),
        events=3_000, rows_per_batch=500, on_step=steps.append,
    )  # fmt: skip
    figures = summary(result)
    assert cluster.alive_workers() == 1
    assert (figures["lost"], figures["duplicated"], figures["alerts"], figures["totals_ok"]) == (0, 0, 0, True), (figures, steps)
