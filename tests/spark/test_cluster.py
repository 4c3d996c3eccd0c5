"""A Spark standalone cluster on loopback (``funke cluster up``): the self-checking job loses a worker mid-run
with PostgreSQL still exact. (YSB on such a cluster runs in tests/spark/test_readme.py, the README's "Clusters".)"""

from __future__ import annotations

import pytest

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


def test_a_worker_killed_mid_run_loses_and_repeats_nothing(cluster, tmp_path):
    steps: list[str] = []
    result = run_with_lost_worker(
        ensure_postgres(), master=cluster.master_url, kill_worker=lambda: cluster.kill_worker(0), workdir=str(tmp_path),
        events=3_000, rows_per_batch=500, on_step=steps.append,
    )  # fmt: skip
    figures = summary(result)
    assert cluster.alive_workers() == 1
    assert (figures["lost"], figures["duplicated"], figures["alerts"], figures["totals_ok"]) == (0, 0, 0, True), (figures, steps)
