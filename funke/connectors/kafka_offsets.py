"""Kafka offsets: the partitions of a source's topics and their offsets as the broker gives them (one consumer on
the driver, ``Cluster``), where a query starts and ends, and how a micro-batch's offsets are cut into ranges to read.

An offset holds, per partition (``"topic/partition"``), the next offset to read, plus the offsets the query started
from (``origin``), whether the end-of-input row has been released (``ended``) and, for a source with an end
(``kafka(ending=...)``, Flink's ``scan.bounded.mode``), the offset each partition stops before (``stop``).

>>> fill({"t/0": 0, "t/1": 0}, {"t/0": 10, "t/1": 2}, 7)
{'t/0': 5, 't/1': 2}
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from funke.errors import EnvironmentSetupError, SourceError

if TYPE_CHECKING:
    from funke.connectors.kafka import KafkaSource

#: Records per ``consume`` call, and the most in one Arrow batch: the least a range of a micro-batch is cut to.
CHUNK = 20_000


def fill(levels: Mapping[str, int], caps: Mapping[str, int], budget: int) -> dict[str, int]:
    """Spend ``budget`` offsets one at a time on the partition read least so far (ties: the first
    in order) that still has some, up to ``caps``: the new levels.

    Computed at once, not one offset at a time: find the level ``t`` every partition below
    it is raised to, then give what is left one each, in order, to those at ``t``.
    """
    keys = list(levels)
    room = sum(caps[k] - levels[k] for k in keys)
    if budget >= room:
        return dict(caps)

    def spent(t: int) -> int:
        return sum(max(0, min(t, caps[k]) - levels[k]) for k in keys)

    lo, hi = min(levels.values()), max(caps.values())
    while lo < hi:  # the highest t with spent(t) <= budget
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if spent(mid) <= budget else (lo, mid - 1)
    out = {k: max(levels[k], min(lo, caps[k])) for k in keys}
    left = budget - spent(lo)
    for k in keys:
        if left == 0:
            break
        if out[k] == lo and caps[k] > lo:
            out[k] += 1
            left -= 1
    return out


def topic_partition(key: str) -> tuple[str, int]:
    """``"topic/partition"`` as ``(topic, partition)``."""
    topic, _, part = key.rpartition("/")
    return topic, int(part)


class Cluster:
    """Partitions and their offsets, asked of the broker with one consumer (driver side)."""

    def __init__(self, spec: KafkaSource):
        self.spec = spec
        self.address = spec.bootstrap
        self.consumer = self._consumer()

    def _consumer(self) -> Any:
        from confluent_kafka import Consumer

        return Consumer(self.spec.client_config(**{
            "group.id": "funke-offsets", "enable.auto.commit": False, "isolation.level": self.spec.isolation,
            "socket.connection.setup.timeout.ms": max(1000, int(self.spec.broker_timeout_s * 1000)),
        }))

    def close(self) -> None:
        self.consumer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _timeout(self) -> float:
        return 10.0 if self.spec.on_broker_loss == "wait" else max(1.0, self.spec.broker_timeout_s)

    def _retry(self, what: str, call: Any, transient: tuple[str, ...] = ()) -> Any:
        """``call()``; a broker that does not answer fails the job after ``broker_timeout`` seconds, or is
        waited for as long as it takes (``on_broker_loss``). ``transient``: names of further errors that
        mean the same here."""
        import time

        from confluent_kafka import KafkaException

        started = time.monotonic()
        while True:
            try:
                return call()
            except KafkaException as e:
                err = e.args[0] if e.args else e
                waited = time.monotonic() - started
                if not (broker_unreachable(err) or getattr(err, "name", lambda: "")() in transient):
                    raise SourceError(f"Kafka at {self.address}: {what} failed ({error_text(err)})") from None
                if self.spec.on_broker_loss == "fail" and waited >= self.spec.broker_timeout_s:
                    raise SourceError(broker_lost(self.spec, what, waited, error_text(err))) from None
                # A fresh client: one that saw the broker go may keep its stale metadata ("unknown partition")
                # after the broker is back, and never refresh it for a topic it is not assigned.
                self.consumer.close()
                self.consumer = self._consumer()
                time.sleep(0.5)

    def partitions(self) -> list[str]:
        """Every partition of the topics, as ``"topic/partition"``; ``SourceError`` for a missing topic."""
        from confluent_kafka import KafkaError, KafkaException

        def listing() -> Any:
            meta = self.consumer.list_topics(timeout=self._timeout())
            for topic in self.spec.topics:  # a broker just back may list a topic before it has its leaders
                t = meta.topics.get(topic)
                if t is not None and t.error is not None and t.error.code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise KafkaException(t.error)
            return meta

        meta = self._retry("listing topics", listing)
        keys = []
        for topic in self.spec.topics:
            t = meta.topics.get(topic)
            if t is None or t.error is not None:
                from funke.connectors.kafka_client import missing_topic

                raise SourceError(f"kafka source: {missing_topic(topic, self.address)}")
            keys.extend(f"{topic}/{p}" for p in sorted(t.partitions))
        return keys

    def bounds(self, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Per partition, (earliest, latest) offsets (latest: the last stable offset when read_committed)."""
        from confluent_kafka import TopicPartition

        out = {}
        for key in keys:
            topic, part = topic_partition(key)
            tp = TopicPartition(topic, part)
            out[key] = self._retry(
                f"reading the offsets of {key}",
                lambda tp=tp: self.consumer.get_watermark_offsets(tp, timeout=self._timeout(), cached=False),
                # a broker shutting down still lists the topic but no longer knows the partition it just listed
                transient=("_UNKNOWN_PARTITION",),
            )
        return out

    def at_time(self, keys: Sequence[str], when: dt.datetime) -> dict[str, int]:
        """Per partition, the first offset whose record's timestamp is at or after ``when`` (the end when none)."""
        from confluent_kafka import TopicPartition

        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        ms = int(when.timestamp() * 1000)
        asked = [TopicPartition(*topic_partition(k), ms) for k in keys]
        found = self._retry("finding offsets for a time", lambda: self.consumer.offsets_for_times(asked, timeout=self._timeout()))
        ends = self.bounds(keys)
        return {k: (tp.offset if tp.offset >= 0 else ends[k][1]) for k, tp in zip(keys, found)}


#: librdkafka's errors for a broker it cannot reach or that has not answered (yet), besides those it marks retriable.
_UNREACHABLE = (
    "_TRANSPORT", "_ALL_BROKERS_DOWN", "_TIMED_OUT", "_TIMED_OUT_QUEUE", "_RESOLVE", "_WAIT_COORD",
    # a broker shutting down or starting up: its partitions have no leader for a moment
    "LEADER_NOT_AVAILABLE", "NOT_LEADER_FOR_PARTITION", "BROKER_NOT_AVAILABLE",
)  # fmt: skip


def broker_unreachable(err: Any) -> bool:
    """True for an error that means "the broker did not answer" (down, restarting, a leader not elected yet)."""
    name = getattr(err, "name", lambda: "")()
    if name in _UNREACHABLE or getattr(err, "retriable", lambda: False)():
        return True
    text = str(err).lower()
    return "timed out" in text or "transport" in text or "broker connections are down" in text


def broker_lost(spec: KafkaSource, what: str, waited: float, cause: str) -> str:
    """The message of a job that gives up on its broker (``on_broker_loss="fail"``)."""
    return (
        f"Kafka at {spec.bootstrap} did not answer for {waited:.0f} s ({what}: {cause}); with on_broker_loss='fail' "
        f"and broker_timeout={spec.broker_timeout_s:g} the job stops here: restart it on its checkpoint once the broker "
        "is back (it goes on after its last committed batch), or use on_broker_loss='wait'"
    )


def error_text(err: Any) -> str:
    return err.str() if hasattr(err, "str") else str(err)


def initial_offset(spec: KafkaSource) -> dict[str, Any]:
    """Where the query starts, by ``starting``; also its ``origin`` (for ``events``) and, with ``ending``, where each
    partition stops (``stop``: fixed here, so a restart on the checkpoint ends where the first run would have)."""
    with Cluster(spec) as cluster:
        keys = cluster.partitions()
        bounds = cluster.bounds(keys)
        at = _positions(cluster, spec, keys, bounds, spec.starting, "starting")
        offset = {"at": at, "origin": dict(at), "ended": spec.events == 0}
        if spec.ending is not None:
            offset["stop"] = {k: max(at[k], o) for k, o in _positions(cluster, spec, keys, bounds, spec.ending, "ending").items()}
    return offset


def _positions(cluster: Cluster, spec: KafkaSource, keys: list[str], bounds: dict[str, tuple[int, int]], where: Any, what: str) -> dict[str, int]:
    """``starting``'s or ``ending``'s offset of each partition: earliest, latest, the first at or after a time, or those
    given (a partition not named: its earliest; a start given before the earliest: the earliest)."""
    if where == "earliest":
        return {k: bounds[k][0] for k in keys}
    if where == "latest":
        return {k: bounds[k][1] for k in keys}
    if isinstance(where, dt.datetime):
        return cluster.at_time(keys, where)
    given = dict(where)
    missing = sorted(set(given) - set(keys))
    if missing:
        raise SourceError(f"kafka({what}=...) names partition(s) {missing} that Kafka at {spec.bootstrap} does not have")
    return {k: max(bounds[k][0], given.get(k, bounds[k][0])) for k in keys}


def latest_offset(spec: KafkaSource, start: dict[str, Any], max_rows: int | None) -> dict[str, Any]:
    """The end of the next batch: at most ``max_rows`` offsets, none past ``events`` or a partition's ``stop``.

    A partition that appears while the query runs starts at its earliest offset, unless the read has an end (it
    reads the partitions of its start only, as Flink's bounded source does not look for new ones).
    """
    if start["ended"]:
        return start
    with Cluster(spec) as cluster:
        keys = cluster.partitions()
        bounds = cluster.bounds(keys)
    at, origin, stop = dict(start["at"]), dict(start["origin"]), start.get("stop")
    for k in keys:
        if k not in at and stop is None:
            at[k] = origin[k] = bounds[k][0]
    keys = sorted(at, key=topic_partition)
    levels = {k: at[k] - origin[k] for k in keys}
    caps = {k: max(at[k], bounds.get(k, (0, at[k]))[1]) - origin[k] for k in keys}
    if stop is not None:
        caps = {k: min(caps[k], stop[k] - origin[k]) for k in keys}
    budget = max_rows if max_rows is not None else sum(caps[k] - levels[k] for k in keys)
    if spec.events is not None:
        budget = min(budget, spec.events - sum(levels.values()))
    new = fill(levels, caps, budget)
    end = {k: origin[k] + new[k] for k in keys}
    ended = spec.events is not None and sum(new.values()) >= spec.events
    ended = ended or (stop is not None and all(end[k] >= stop[k] for k in keys))
    return {"at": end, "origin": origin, "ended": ended} | ({"stop": stop} if stop is not None else {})


def plan_partitions(parallelism: int, eos_column: str | None, start: dict[str, Any], end: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The batch as offset ranges ``(key, lo, hi)``: one per partition, a large one cut so every
    core reads; plus the end row when this batch reaches the end."""
    ranges = [(k, start["at"].get(k, end["origin"][k]), hi) for k, hi in end["at"].items()]
    ranges = [(k, lo, hi) for k, lo, hi in ranges if hi > lo]
    total = sum(hi - lo for _, lo, hi in ranges)
    parts: list[tuple[Any, ...]] = []
    if total:
        piece = max(CHUNK, -(-total // max(1, parallelism)))
        for k, lo, hi in ranges:
            parts.extend(("range", k, a, min(a + piece, hi)) for a in range(lo, hi, piece))
    if eos_column and end["ended"] and not start["ended"]:
        parts.append(("end",))
    return parts


def bounded_ranges(spec: KafkaSource, parallelism: int) -> list[tuple[Any, ...]]:
    """A bounded run: from ``starting`` up to the latest offsets now (at most ``events`` in all)."""
    start = initial_offset(spec)
    end = latest_offset(spec, start, None)
    return plan_partitions(parallelism, None, start, end)



def records_behind(spec: KafkaSource, end_offset: Any) -> int | None:
    """Records in ``spec``'s partitions after ``end_offset`` (a micro-batch's end, as Spark reports it):
    how far a query reading them is behind. None when the offset is not this source's or the broker
    does not answer (the dashboard asks; it must not fail for it)."""
    at = end_offset.get("at") if isinstance(end_offset, dict) else None
    if not isinstance(at, dict) or not at or not {topic_partition(k)[0] for k in at} <= set(spec.topics):
        return None
    from dataclasses import replace

    try:  # asked while the dashboard waits: give up after two seconds whatever the job's own broker policy
        with Cluster(replace(spec, on_broker_loss="fail", broker_timeout_s=2.0)) as cluster:
            bounds = cluster.bounds(sorted(at, key=topic_partition))
        return sum(max(0, bounds[k][1] - int(v)) for k, v in at.items())
    except (SourceError, EnvironmentSetupError, KeyError, TypeError, ValueError):
        return None
