"""Real PostgreSQL and Redis on loopback for the tests: started when they are not running.

Each ``ensure_*`` returns connection details, starting the server the way this machine
kind does (``pg_ctlcluster`` / ``redis-server --daemonize``) when nothing answers, and
fails the test with the command it tried when it cannot get one up.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
PG_DSN = os.environ.get("FUNKE_TEST_PG_DSN", "host=127.0.0.1 port=5432 dbname=test user=postgres")


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait(host: str, port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _listening(host, port):
            return True
        time.sleep(0.2)
    return False


def ensure_redis() -> str:
    """Redis URL of a running server on 127.0.0.1:6379 (started when down)."""
    if not _listening(REDIS_HOST, REDIS_PORT):
        cmd = ["redis-server", "--daemonize", "yes", "--bind", REDIS_HOST, "--port", str(REDIS_PORT), "--save", "", "--appendonly", "no"]
        if shutil.which("redis-server") is None:
            pytest.fail("Redis is not running on 127.0.0.1:6379 and redis-server is not installed (apt-get install -y redis-server)")
        subprocess.run(cmd, check=False, capture_output=True)
        if not _wait(REDIS_HOST, REDIS_PORT, 15):
            pytest.fail(f"Redis did not come up on 127.0.0.1:6379 after: {' '.join(cmd)}")
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/0"


def ensure_postgres() -> str:
    """psycopg DSN of a running PostgreSQL on 127.0.0.1:5432, database ``test`` (started when down)."""
    if not _listening("127.0.0.1", 5432):
        versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
        if not versions:
            pytest.fail("PostgreSQL is not running on 127.0.0.1:5432 and no cluster is installed under /etc/postgresql")
        cmd = ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "start"]
        subprocess.run(cmd, check=False, capture_output=True)
        if not _wait("127.0.0.1", 5432, 30):
            pytest.fail(f"PostgreSQL did not come up on 127.0.0.1:5432 after: {' '.join(cmd)}")
    return PG_DSN
