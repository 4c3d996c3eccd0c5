"""``funke services``: the real servers come up on loopback through one path, and each speaks its protocol."""

from __future__ import annotations

import socket
import threading
import uuid

import pytest
from typer.testing import CliRunner

from funke import services
from funke.cli.main import app
from funke.services.kafka import Kafka
from tests.servers import ensure_kafka, ensure_postgres, ensure_redis


def test_up_brings_all_three_and_each_is_usable_by_its_own_client():
    statuses = services.up()
    assert [(s.name, s.address, s.installed, s.running) for s in statuses] == [
        ("kafka", "127.0.0.1:9092", True, True),
        ("redis", "127.0.0.1:6379", True, True),
        ("postgres", "127.0.0.1:5432", True, True),
    ]

    import psycopg
    import redis

    r = redis.Redis.from_url(ensure_redis())
    r.set("funke:services:probe", "1")
    assert r.get("funke:services:probe") == b"1"

    with psycopg.connect(ensure_postgres()) as conn:
        assert conn.execute("SELECT current_user, current_database()").fetchone() == ("postgres", "test")

    topic = f"services-{uuid.uuid4().hex[:8]}"
    _create_topic(ensure_kafka(), topic)
    _produce(topic, [b"a", b"b", b"c"])
    assert _consume(topic, 3) == [b"a", b"b", b"c"]


def test_up_is_idempotent_and_says_so():
    services.up()
    pid_before = services.status(["kafka"])[0].detail
    said: list[str] = []
    services.up(say=said.append)
    assert said == ["kafka: already running on 127.0.0.1:9092", "redis: already running on 127.0.0.1:6379", "postgres: already running on 127.0.0.1:5432"]
    assert services.status(["kafka"])[0].detail == pid_before


def test_down_then_up_restarts_each_server_and_kafka_keeps_its_topics():
    """Kafka keeps a topic's records however old their times (no time-based retention): with Kafka's default (7
    days, checked every 5 minutes) records that tests write with times of 2023 went while a job was reading them."""
    services.up(["kafka", "redis"])
    topic = f"services-{uuid.uuid4().hex[:8]}"
    _create_topic(services.KAFKA_BOOTSTRAP, topic)
    _produce(topic, [b"kept"])

    said: list[str] = []
    services.down(["kafka", "redis"], say=said.append)
    assert said[-1] == "kafka: stopped" and "redis: stopped" in said
    assert [s.running for s in services.status(["kafka", "redis"])] == [False, False]
    services.down(["redis"], say=said.append)
    assert said[-1] == "redis: not running"

    services.up(["kafka", "redis"])
    assert [s.running for s in services.status(["kafka", "redis"])] == [True, True]
    assert _consume(topic, 1) == [b"kept"]
    assert _broker_config("log.retention.ms") == "-1"


def test_cli_status_up_and_unknown_names():
    services.up(["redis"])
    runner = CliRunner()
    ok = runner.invoke(app, ["services", "status", "redis"])
    assert ok.exit_code == 0, ok.output
    assert "127.0.0.1:6379" in ok.output and "yes" in ok.output

    again = runner.invoke(app, ["services", "up", "redis"])
    assert again.exit_code == 0, again.output
    assert "redis: already running on 127.0.0.1:6379" in again.output

    bad = runner.invoke(app, ["services", "up", "zookeeper"])
    assert bad.exit_code == 1
    assert "unknown service 'zookeeper': choose from kafka, redis, postgres" in bad.output


def test_a_failed_install_names_the_step_and_the_command(tmp_path):
    broker = Kafka(tmp_path, port=_free_port(), version="0.0.0-no-such-version")
    with pytest.raises(services.ServiceError) as e:
        broker.up(lambda _: None)
    assert "install kafka 0.0.0-no-such-version failed" in str(e.value)
    assert "mvn -q -B dependency:copy-dependencies" in str(e.value)


def test_a_port_taken_by_another_program_is_refused_not_mistaken_for_the_server(tmp_path):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        stop = threading.Event()

        def accept_and_hang_up() -> None:
            other.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = other.accept()
                    conn.close()
                except OSError:
                    pass

        t = threading.Thread(target=accept_and_hang_up, daemon=True)
        t.start()
        try:
            with pytest.raises(services.ServiceError) as e:
                Kafka(tmp_path, port=port).up(lambda _: None)
        finally:
            stop.set()
            t.join()
    assert f"127.0.0.1:{port} is taken by something that does not answer as kafka" in str(e.value)


# -- a real Kafka client --------------------------------------------------------------------------


def _create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(timeout=60)


def _broker_config(name: str) -> str:
    """The running broker's value of ``name``, as it answers for it."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": services.KAFKA_BOOTSTRAP})
    resource = ConfigResource(ResourceType.BROKER, "1")
    return admin.describe_configs([resource])[resource].result(timeout=60)[name].value


def _produce(topic: str, values: list[bytes]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": services.KAFKA_BOOTSTRAP, "enable.idempotence": True})
    for v in values:
        p.produce(topic, v)
    assert p.flush(60) == 0


def _consume(topic: str, n: int) -> list[bytes]:
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": services.KAFKA_BOOTSTRAP, "group.id": f"g-{uuid.uuid4().hex}", "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    c.subscribe([topic])
    got: list[bytes] = []
    try:
        for _ in range(600):  # each poll waits for a message, at most 0.5 s: a bounded wait on the condition
            if len(got) >= n:
                break
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
    finally:
        c.close()
    return got


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_benches_start_only_the_servers_they_use_at_the_default_addresses(monkeypatch):
    from funke.bench.cli_common import local_services

    started: list[list[str]] = []
    monkeypatch.setattr(services, "up", lambda names, say=None: started.append(list(names)))
    local_services({"postgres": services.POSTGRES_DSN, "redis": "redis://10.9.9.9:6379/0", "kafka": services.KAFKA_BOOTSTRAP})
    local_services({"redis": "redis://10.9.9.9:6379/0"})
    assert started == [["postgres", "kafka"]]
