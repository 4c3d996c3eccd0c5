"""``funke services``: the local servers examples, tests and benchmarks use, on loopback.

``up`` installs what is missing (PostgreSQL and Redis with ``apt-get``, Kafka's broker
with ``mvn``), starts each server and waits until it answers its own protocol; it is
idempotent. ``down`` stops them, ``status`` tells what runs where::

    from funke import services
    services.up(["redis"])          # -> the Redis it started or found
    services.REDIS_URL, services.POSTGRES_DSN, services.KAFKA_BOOTSTRAP

Connectors never import this package: a job names its servers itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from funke.config import settings
from funke.services.base import Say, Service, ServiceError, Status
from funke.services.kafka import KAFKA_VERSION, Kafka
from funke.services.postgres import Postgres
from funke.services.redis import Redis

NAMES = ("kafka", "redis", "postgres")
REDIS_URL = "redis://127.0.0.1:6379/0"
POSTGRES_DSN = "host=127.0.0.1 port=5432 dbname=test user=postgres"
KAFKA_BOOTSTRAP = "127.0.0.1:9092"


def services(names: Iterable[str] | None = None, *, root: Path | None = None) -> list[Service]:
    """The services named (all three when none), in a fixed order."""
    wanted = list(names or NAMES)
    unknown = [n for n in wanted if n not in NAMES]
    if unknown:
        raise ServiceError(f"unknown service {', '.join(map(repr, unknown))}: choose from {', '.join(NAMES)}")
    home = root or settings().services_root
    made: dict[str, Service] = {"kafka": Kafka(home), "redis": Redis(home), "postgres": Postgres()}
    return [made[n] for n in NAMES if n in wanted]


def _quiet(_: str) -> None:
    pass


def up(names: Iterable[str] | None = None, *, say: Say = _quiet, root: Path | None = None) -> list[Status]:
    """Install when missing, start when down, wait until each answers; their status."""
    found = services(names, root=root)
    for s in found:
        s.up(say)
    return [s.status() for s in found]


def down(names: Iterable[str] | None = None, *, say: Say = _quiet, root: Path | None = None) -> None:
    for s in reversed(services(names, root=root)):
        s.down(say)


def status(names: Iterable[str] | None = None, *, root: Path | None = None) -> list[Status]:
    return [s.status() for s in services(names, root=root)]


__all__ = [
    "KAFKA_BOOTSTRAP",
    "KAFKA_VERSION",
    "NAMES",
    "POSTGRES_DSN",
    "REDIS_URL",
    "ServiceError",
    "Status",
    "down",
    "services",
    "status",
    "up",
]
