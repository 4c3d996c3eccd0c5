"""What funke's Kafka source and sink share (confluent-kafka): client settings, a clear error when the broker
does not answer, and topic checks and creation with the admin client.

Errors are raised as the class the caller passes (``SinkError`` for a sink, ``SourceError`` for a source),
each naming the bootstrap address and saying what to do.

>>> client_config("127.0.0.1:9092", {"linger.ms": 20})["bootstrap.servers"]
'127.0.0.1:9092'
>>> missing_topic("orders", "127.0.0.1:9092")
"topic 'orders' does not exist on the Kafka cluster at 127.0.0.1:9092 (the broker does not create topics on first use here): create it (kafka-topics.sh --create --topic orders), or pass create=True"
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

log = logging.getLogger("funke.kafka")

#: Seconds a client waits for the cluster to answer before funke calls the broker down.
CONNECT_TIMEOUT = 10.0


def client_config(bootstrap: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """librdkafka settings every funke client uses, then ``extra`` (the user's own: security, tuning).

    librdkafka's own log lines (a refused connection is retried and logged every second) go to the
    ``funke.kafka`` logger instead of stderr; funke raises its own error naming the address.
    """
    return {
        "bootstrap.servers": bootstrap,
        "client.id": "funke",
        "logger": log,
        "socket.connection.setup.timeout.ms": int(CONNECT_TIMEOUT * 1000),
        **(extra or {}),
    }


def broker_down(where: str, bootstrap: str, cause: object) -> str:
    """The message for a cluster that does not answer at ``bootstrap``."""
    return (
        f"{where}: cannot reach the Kafka broker at {bootstrap}: {cause}; "
        "is it running (funke services up kafka) and the bootstrap address right?"
    )


def missing_topic(topic: str, bootstrap: str) -> str:
    return (
        f"topic '{topic}' does not exist on the Kafka cluster at {bootstrap} (the broker does not create topics on first use here): "
        f"create it (kafka-topics.sh --create --topic {topic}), or pass create=True"
    )


def admin(
    bootstrap: str, config: Mapping[str, Any] | None, where: str, error: type[Exception], timeout: float = CONNECT_TIMEOUT
) -> AdminClient:
    """An admin client whose cluster answered a metadata request; ``error`` naming the address when it does not."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    refused = _unreachable(bootstrap, timeout)
    if refused is not None:  # fail at once: librdkafka would retry a refused connection until the timeout
        raise error(broker_down(where, bootstrap, refused))
    client = AdminClient(client_config(bootstrap, config))
    try:
        client.list_topics(timeout=timeout)
    except KafkaException as e:
        raise error(broker_down(where, bootstrap, _reason(e))) from e
    return client


def topic_partitions(
    client: AdminClient, topic: str, bootstrap: str, where: str, error: type[Exception], timeout: float = CONNECT_TIMEOUT
) -> int | None:
    """The topic's number of partitions, None when it does not exist."""
    from confluent_kafka import KafkaError, KafkaException

    try:
        meta = client.list_topics(topic=topic, timeout=timeout).topics.get(topic)
    except KafkaException as e:
        raise error(broker_down(where, bootstrap, _reason(e))) from e
    if meta is None or (meta.error is not None and meta.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
        return None
    if meta.error is not None:
        raise error(f"{where}: cannot read topic '{topic}' at {bootstrap}: {meta.error.str()}")
    return len(meta.partitions)


def ensure_topic(
    client: AdminClient,
    topic: str,
    bootstrap: str,
    where: str,
    error: type[Exception],
    *,
    partitions: int = 1,
    config: Mapping[str, str] | None = None,
    timeout: float = CONNECT_TIMEOUT,
) -> bool:
    """Create the topic unless it exists (the broker's default replication factor); True when this call created it.

    Another client creating it at the same moment is not an error.
    """
    import time

    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic

    if topic_partitions(client, topic, bootstrap, where, error, timeout) is not None:
        return False
    future = client.create_topics([NewTopic(topic, partitions, -1, config=dict(config or {}))], request_timeout=timeout)[topic]
    created = True
    try:
        future.result(timeout=timeout)
    except KafkaException as e:
        if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise error(f"{where}: cannot create topic '{topic}' at {bootstrap}: {_reason(e)}") from e
        created = False
    # Creation returns once the controller has it; wait until the metadata a producer reads shows it too.
    deadline = time.monotonic() + timeout
    while topic_partitions(client, topic, bootstrap, where, error, timeout) is None:
        if time.monotonic() > deadline:
            raise error(
                f"{where}: topic '{topic}' was created at {bootstrap} but its metadata did not show it within {timeout:g} s"
            )
        time.sleep(0.05)
    return created


def _unreachable(bootstrap: str, timeout: float) -> str | None:
    """None when some bootstrap address accepts a TCP connection, else why none did."""
    import socket

    addresses = [a.strip() for a in bootstrap.split(",") if a.strip()]
    reasons = []
    for address in addresses:
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host.strip("[]") or "localhost", int(port)), timeout=min(timeout, 5.0)).close()
            return None
        except OSError as e:
            reasons.append(e.strerror or str(e) or type(e).__name__)
        except ValueError:
            reasons.append("not host:port")
    if len(reasons) == 1:
        return reasons[0]
    return "; ".join(f"{a}: {r}" for a, r in zip(addresses, reasons, strict=True)) or "no address given"


def _reason(e: BaseException) -> str:
    """A KafkaException's own text (``Local: Broker transport failure``), not its repr."""
    err = e.args[0] if e.args else None
    return err.str() if hasattr(err, "str") else str(e)
