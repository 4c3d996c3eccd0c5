"""Shared fixtures: one SparkSession for the whole run (local[2], 2 shuffle partitions, UI off)."""

from __future__ import annotations

import os
import tempfile
import time

# PySpark turns timestamps into naive datetimes in the process's time zone: make it UTC.
os.environ["TZ"] = "UTC"
time.tzset()

import pytest

# The local servers (Kafka's jars and data among them) live in the user's funke home, which
# outlives a test run; every job in the suite keeps its checkpoints under a throwaway one.
os.environ.setdefault("FUNKE_SERVICES_HOME", os.path.join(os.environ.get("FUNKE_HOME", os.path.expanduser("~/.funke")), "services"))
os.environ.setdefault("FUNKE_HOME", tempfile.mkdtemp(prefix="funke-home-"))


@pytest.fixture(scope="session")
def spark():
    from funke.config import settings
    from funke.spark.session import default_conf, get_session

    s = settings(master="local[2]", shuffle_partitions=2)
    conf = {**default_conf(s), "spark.sql.streaming.minBatchesToRetain": "5"}
    session = get_session(s, conf, "funke-tests")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _stop_streams(request):
    yield
    if "spark" in request.fixturenames:
        session = request.getfixturevalue("spark")
        for q in session.streams.active:
            q.stop()


@pytest.fixture
def env(spark, tmp_path):
    import funke as fk

    return fk.StreamEnvironment(app="test", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"))


# PyFlink programs (run by tests/spark/test_pyflink_*.py under python -m funke.pyflink): their
# ``pyflink`` imports resolve only through funke's import hook, so pytest does not import them itself.
collect_ignore_glob = ["pyflink_programs/*.py"]
