"""The YSB generator's events written into a Redis Stream or a Kafka topic at a given rate.

Event ``i`` is the one ``examples.ysb.events`` generates in Spark (the benchmark's settings:
``funke.bench.reference.EVENTS_PER_SECOND`` and ``MAX_DISORDER_MS``), computed here with
numpy and the reference's re-implementation of Spark's ``xxhash64``. Each entry's fields are
the YSB columns as text, ``event_time`` as integer milliseconds.

To Kafka (``funke ysb produce --to kafka``), event ``i`` is one record in partition ``i % P``, no key, its value
the same fields as one JSON object (``event_time`` a number); the record's timestamp is the
time it was produced. The producer batches (``linger.ms``) and compresses (lz4 by default)
as a throughput-minded Kafka producer does, and is idempotent but not transactional, so the
topic holds no commit markers: offsets ``0 .. n-1`` of the partitions are exactly the events.

No end marker is written: the stream or topic holds events only, and a reader declares where
it ends (``fk.sources.redis_stream(..., events=N)``, ``fk.sources.kafka(..., events=N)``), so
one stream serves bounded runs over any prefix and unbounded runs alike.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from funke.errors import FunkeError, SourceError

if TYPE_CHECKING:
    import pyarrow as pa

#: Fields of an entry, in the order ``examples.ysb.events`` declares the columns.
FIELDS = ("user_id", "page_id", "ad_id", "ad_type", "event_type", "event_time", "ip_address")


@functools.cache
def _names(prefix: str, n: int, width: int = 0) -> pa.Array:
    """``prefix`` + the numbers ``0 .. n-1`` (zero-padded to ``width``) as an Arrow table to ``take`` from."""
    import pyarrow as pa
    import pyarrow.compute as pc

    digits = pc.utf8_lpad(pc.cast(pa.array(range(n), pa.int64()), pa.string()), width, "0")
    return pc.binary_join_element_wise(prefix, digits, "")


def ysb_columns(lo: int, hi: int) -> dict[str, pa.Array]:
    """Events ``lo .. hi-1`` as Arrow string columns, equal to ``ysb.events`` in Spark (numpy and Arrow kernels, no Python per event)."""
    from fractions import Fraction

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    import examples.ysb as y
    from funke.bench.reference import EVENTS_PER_SECOND, MAX_DISORDER_MS, xxhash64

    i = np.arange(lo, hi, dtype=np.int64)

    def h(salt: int, modulo: int) -> np.ndarray:
        return np.mod(xxhash64(i, salt), modulo)

    step = Fraction(1000, EVENTS_PER_SECOND)  # the generator's (i * 1000) div events_per_second
    event_time = y.START_MS + (i * step.numerator) // step.denominator - h(6, MAX_DISORDER_MS + 1)
    ads = y.CAMPAIGNS * y.ADS_PER_CAMPAIGN
    octet = _names("", 256)
    return {
        "user_id": _names("user-", 1_000_000).take(h(1, 1_000_000)),
        "page_id": _names("page-", 100_000).take(h(2, 100_000)),
        "ad_id": _names("ad-", ads, y.id_widths()[0]).take(h(3, ads)),
        "ad_type": pa.array(y.AD_TYPES).take(h(4, len(y.AD_TYPES))),
        "event_type": pa.array(y.EVENT_TYPES).take(h(5, len(y.EVENT_TYPES))),
        "event_time": pc.cast(pa.array(event_time), pa.string()),
        "ip_address": pc.binary_join_element_wise(*(octet.take(h(salt, 256)) for salt in (7, 8, 9, 10)), "."),
    }


def ysb_events(lo: int, hi: int) -> dict[str, list[bytes]]:
    """Events ``lo .. hi-1`` as each field's values (UTF-8 text), equal to ``ysb.events`` in Spark."""
    import pyarrow as pa

    return {name: column.cast(pa.binary()).to_pylist() for name, column in ysb_columns(lo, hi).items()}


def json_values(lo: int, hi: int) -> list[bytes]:
    """Events ``lo .. hi-1`` as JSON objects, the fields of :func:`ysb_events` in order, ``event_time`` a number.

    >>> import json; json.loads(json_values(0, 1)[0])["event_time"]
    1704067198349
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    parts: list[object] = []
    for k, (name, column) in enumerate(ysb_columns(lo, hi).items()):
        quote = "" if name == "event_time" else '"'
        parts += [("{" if k == 0 else ",") + f'"{name}":{quote}', column, quote]
    parts[-1] = f"{parts[-1]}}}"
    return pc.binary_join_element_wise(*parts, "").cast(pa.binary()).to_pylist()


def xadd_commands(stream: str, lo: int, hi: int) -> bytes:
    """``XADD stream * field value ...`` for events ``lo .. hi-1``, packed by hiredis as one payload."""
    from itertools import repeat

    import hiredis

    columns = ysb_events(lo, hi)
    commands = zip(repeat("XADD"), repeat(stream), repeat("*"), *(c for f in FIELDS for c in (repeat(f), columns[f])))
    return b"".join(map(hiredis.pack_command, commands))


@dataclass(frozen=True)
class Produced:
    #: The Redis Stream's key or the Kafka topic.
    stream: str
    events: int
    seconds: float
    #: The Kafka topic's partitions (0 for a Redis Stream).
    partitions: int = 0

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else float("inf")


def produce(
    url: str,
    stream: str,
    *,
    events: int,
    rate: float | None,
    reset: bool = False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Produced:
    """Write events ``0 .. events-1`` to ``stream``, paced so event ``i`` is sent at ``i / rate`` seconds.

    Events go out in pipelined chunks of about 1/20 s of the rate (at most 5 000); each
    chunk waits until its first event is due, so the rate holds over any stretch longer
    than a chunk. ``rate=None`` writes as fast as Redis takes them. ``reset`` deletes the
    stream first; otherwise the events are appended to what it holds.
    """
    import redis

    from funke.connectors.redis_streams import RedisAddress, connect

    if events < 0:
        raise FunkeError(f"ysb produce: --events must be >= 0, got {events}")
    if rate is not None and rate <= 0:
        raise FunkeError(f"ysb produce: --rate must be positive (or 0 for unpaced), got {rate}")
    chunk = 5_000 if rate is None else max(1, min(5_000, int(rate / 20)))
    address = RedisAddress.parse(url)
    with connect(address) as client:
        if reset:
            client.delete(stream)
        # A redis-py pipeline spends ~15 µs an XADD in Python; the connection's own send and
        # read calls keep up with the default 100 k events/s.
        connection = client.connection
        start = clock()
        for lo in range(0, events, chunk):
            if rate is not None:
                wait = start + lo / rate - clock()
                if wait > 0:
                    sleep(wait)
            hi = min(events, lo + chunk)
            connection.send_packed_command([xadd_commands(stream, lo, hi)])
            try:
                for _ in range(hi - lo):
                    connection.read_response()
            except redis.ResponseError as e:
                raise SourceError(f"Redis at {address} refused XADD to '{stream}' at event {lo}: {e}") from None
        return Produced(stream, events, clock() - start)


COMPRESSIONS = ("lz4", "none", "zstd", "snappy", "gzip")
#: Most events built (numpy, Arrow) and handed to the producer at once when unpaced.
KAFKA_CHUNK = 50_000


def producer_config(bootstrap: str, compression: str = "lz4") -> dict[str, object]:
    """librdkafka settings for writing many small records fast: batches of up to 1 MiB sent after at
    most 20 ms, ``compression``, idempotent; delivery reports only for records that failed."""
    from funke.connectors.kafka_client import client_config

    return client_config(bootstrap, {
        "linger.ms": 20, "batch.size": 1 << 20, "compression.type": compression, "enable.idempotence": True,
        "queue.buffering.max.messages": 1_000_000, "queue.buffering.max.kbytes": 1 << 20,
        "delivery.report.only.error": True,
    })  # fmt: skip


def prepare_topic(bootstrap: str, topic: str, partitions: int, *, reset: bool = False) -> int:
    """Create ``topic`` with ``partitions`` unless it exists (``reset``: delete it first); its partitions."""
    from funke.connectors.kafka_client import admin, ensure_topic, topic_partitions

    where = "ysb produce"
    client = admin(bootstrap, None, where, SourceError)
    if reset and topic_partitions(client, topic, bootstrap, where, SourceError) is not None:
        client.delete_topics([topic])[topic].result(30)
        deadline = time.monotonic() + 60
        while topic_partitions(client, topic, bootstrap, where, SourceError) is not None:
            if time.monotonic() > deadline:
                raise SourceError(f"Kafka at {bootstrap}: topic '{topic}' was deleted but still listed after 60 s")
            time.sleep(0.1)
    ensure_topic(client, topic, bootstrap, where, SourceError, partitions=partitions)
    # Deleted a moment ago, a topic may be created again before the broker forgot the old one.
    deadline = time.monotonic() + 60
    while (found := topic_partitions(client, topic, bootstrap, where, SourceError)) is None:
        if time.monotonic() > deadline:
            raise SourceError(f"Kafka at {bootstrap}: topic '{topic}' not listed 60 s after its creation")
        time.sleep(0.1)
    return found


def produce_kafka(
    bootstrap: str,
    topic: str,
    *,
    events: int,
    rate: float | None,
    partitions: int = 2,
    reset: bool = False,
    compression: str = "lz4",
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Produced:
    """Write events ``0 .. events-1`` to ``topic`` (event ``i`` to partition ``i % P``), paced as :func:`produce`.

    The topic is created with ``partitions`` when missing (``reset``: deleted first, so it holds
    exactly these events); an existing topic keeps its own partition count. Returns once the
    broker has acknowledged every record; ``SourceError`` if any failed.
    """
    from confluent_kafka import KafkaException, Producer

    if events < 0:
        raise FunkeError(f"ysb produce: --events must be >= 0, got {events}")
    if rate is not None and rate <= 0:
        raise FunkeError(f"ysb produce: --rate must be positive (or 0 for unpaced), got {rate}")
    if partitions <= 0:
        raise FunkeError(f"ysb produce: --partitions must be positive, got {partitions}")
    if compression not in COMPRESSIONS:
        raise FunkeError(f"ysb produce: --compression must be one of {', '.join(COMPRESSIONS)}, got {compression!r}")
    count = prepare_topic(bootstrap, topic, partitions, reset=reset)
    failed: list[str] = []

    def report(err: object, msg: object) -> None:  # called for failed records only
        if err is not None and len(failed) < 5:
            failed.append(str(err))

    producer = Producer({**producer_config(bootstrap, compression), "on_delivery": report})
    chunk = KAFKA_CHUNK if rate is None else max(1, min(KAFKA_CHUNK, int(rate / 20)))
    send, poll = producer.produce, producer.poll
    start = clock()
    try:
        for lo in range(0, events, chunk):
            if rate is not None:
                wait = start + lo / rate - clock()
                if wait > 0:
                    sleep(wait)
            values = json_values(lo, min(events, lo + chunk))
            for k in range(min(count, len(values))):
                partition = (lo + k) % count
                for value in values[k::count]:
                    while True:
                        try:
                            send(topic, value, partition=partition)
                            break
                        except BufferError:  # the local queue is full: let librdkafka send some
                            poll(0.01)
            poll(0)
            if failed:
                break
        left = producer.flush(120)
    except KafkaException as e:
        raise SourceError(f"Kafka at {bootstrap}: producing to '{topic}' failed: {e}") from None
    if failed or left:
        why = "; ".join(failed) or f"{left:,} records not acknowledged after 120 s"
        raise SourceError(f"Kafka at {bootstrap}: producing to '{topic}' failed: {why}")
    return Produced(topic, events, clock() - start, count)
