"""Real PostgreSQL, Redis and Kafka on loopback for the tests, through ``funke services up``.

Each ``ensure_*`` returns connection details. It starts the server the one way the project
does (installing it when missing) and fails the test with the step and command that failed.
"""

from __future__ import annotations

import os

import pytest

from funke import services

PG_DSN = os.environ.get("FUNKE_TEST_PG_DSN", services.POSTGRES_DSN)


def _up(name: str) -> None:
    try:
        services.up([name])
    except services.ServiceError as e:
        pytest.fail(f"funke services up {name}: {e}")


def ensure_redis() -> str:
    """Redis URL of a running server on 127.0.0.1:6379."""
    _up("redis")
    return services.REDIS_URL


def ensure_postgres() -> str:
    """psycopg DSN of a running PostgreSQL on 127.0.0.1:5432, database ``test``, user ``postgres``."""
    if "FUNKE_TEST_PG_DSN" not in os.environ:
        _up("postgres")
    return PG_DSN


def ensure_kafka() -> str:
    """Bootstrap address of a running Kafka broker on 127.0.0.1:9092."""
    _up("kafka")
    return services.KAFKA_BOOTSTRAP
