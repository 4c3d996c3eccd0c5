"""``funke bench ysb --source kafka``: YSB read from a Kafka topic, funke against plain PySpark in one run.

The harness first writes the events to a fresh topic with ``funke ysb produce``'s producer
(event ``i`` to partition ``i % P``, JSON), then one flush record at the end of the last
partition (``funke.bench.plain_kafka``). Both systems then read that same topic, one after
the other in one process, on one SparkSession, through the same reader:

* where the session has Spark's Kafka connector (``funke.connectors.kafka_jvm``, sessions funke
  starts load it): funke runs ``examples.ysb:kafka_job``'s pipeline over ``fk.sources.kafka(...)``
  (Spark's connector; no end in a streaming query, so it reads the flush record too and is done
  once a micro-batch ran with its watermark), with the listed campaign table instead of Redis's
  copy and Spark's Parquet file sink instead of Redis; plain PySpark reads ``format("kafka")``;
* without it: funke reads with its Python data source (``events=N``, which stops before the flush
  record: the budget goes to the least-read partition first, and the last partition is never
  ahead of the others), plain PySpark with ``funke.bench.plain_kafka``'s minimal Python data source.

Both run the same query as ``funke.bench.plain`` and read ``rows_per_batch`` records per
micro-batch. Each first runs once over a smaller warm-up topic, unmeasured. Results are checked
against ``reference_counts`` like the generator-based bench (``funke.bench.ysb``), and reported
the same way; the topics are deleted afterwards.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import funke as fk
from examples import ysb
from funke.bench import plain_kafka
from funke.bench import ysb as bench
from funke.bench.measure import Run
from funke.bench.reference import reference_counts
from funke.bench.resources import MemorySampler, filesystem, state_bytes
from funke.errors import PlanError
from funke.spark.kafka_jvm import has_connector

log = logging.getLogger(__name__)
SYSTEM = bench.SYSTEM
SYSTEMS = bench.SYSTEMS
WARMUP_EVENTS = 500_000


def check_options(*, variant: str, bounded: bool, exactly_once: str, latency_seconds: float, batch_seconds: float | None) -> None:
    """What ``--source kafka`` measures: streaming, base variant, exactly-once on, fixed-size micro-batches."""
    refused = {
        "--bounded": bounded,
        f"--variant {variant}": variant != "base",
        "--exactly-once off": exactly_once != "on",
        "--latency-seconds (see funke bench latency --source kafka)": latency_seconds > 0,
        "--batch-seconds": bool(batch_seconds),
    }
    named = [k for k, v in refused.items() if v]
    if named:
        raise PlanError(f"--source kafka measures streaming YSB, base variant, exactly-once on only: drop {', '.join(named)}")


@dataclass(frozen=True)
class EventTopic:
    """A topic holding YSB events ``0 .. events-1`` (event ``i`` in partition ``i % partitions``) and the flush record."""

    name: str
    events: int
    partitions: int
    bootstrap: str


def event_topic(bootstrap: str, name: str, events: int, partitions: int) -> EventTopic:
    """Write the events, then the flush record as the last record of the last partition."""
    from confluent_kafka import Producer

    from funke.bench.ysb_produce import produce_kafka, producer_config
    from funke.errors import SourceError

    done = produce_kafka(bootstrap, name, events=events, rate=None, partitions=partitions, reset=True)
    producer = Producer(producer_config(bootstrap))
    producer.produce(name, plain_kafka.flush_record(), partition=done.partitions - 1)
    if producer.flush(60):
        raise SourceError(f"Kafka at {bootstrap}: the flush record to '{name}' was not acknowledged within 60 s")
    return EventTopic(name, events, done.partitions, bootstrap)


def delete_topics(bootstrap: str, names: list[str]) -> None:
    from confluent_kafka.admin import AdminClient

    from funke.connectors.kafka_client import client_config

    if not names:
        return
    admin = AdminClient(client_config(bootstrap))
    for name, f in admin.delete_topics(names).items():
        try:
            f.result(30)
        except Exception as e:  # noqa: BLE001  (a bench's leftover topic is not worth failing the figures for)
            log.warning("could not delete topic %s: %s", name, e)


def run_once(spark: Any, system: str, topic: EventTopic, job: bench.Job, workdir: Path, checkpoint: Path) -> Run:
    """One system's run over ``topic``, with memory peaks, CPU time, state on disk and the load after it."""
    job = dataclasses.replace(job, events=topic.events)
    connector = has_connector(spark)
    with MemorySampler(spark) as memory:
        if system == SYSTEM and connector:
            # Spark's connector has no end in a streaming query: the job reads the flush record too, whose
            # watermark passes every window, and is done once a micro-batch has run with that watermark
            source = fk.sources.kafka(
                topic.name, schema=ysb.events(1).schema, bootstrap=topic.bootstrap, max_rows_per_batch=job.rows_per_batch,
                partition_watermarks=False,  # Spark's, as the plain job's
            )  # fmt: skip
            run = bench.funke_streaming(spark, job, str(workdir), str(checkpoint), on_finished=memory.stop, source=source,
                                        until=_past_the_flush_record)  # fmt: skip
            batches = plain_kafka.without_flush(run.batches, topic.events)
            run = dataclasses.replace(run, events=sum(b.events for b in batches), batches=batches)
        elif system == SYSTEM:
            source = fk.sources.kafka(
                topic.name, schema=ysb.events(1).schema, bootstrap=topic.bootstrap, events=topic.events,
                max_rows_per_batch=job.rows_per_batch, partition_watermarks=False,  # Spark's, as the plain job's
            )  # fmt: skip
            run = bench.funke_streaming(spark, job, str(workdir), str(checkpoint), on_finished=memory.stop, source=source)
        else:
            run = plain_kafka.streaming(
                spark, topic.bootstrap, topic.name, topic.events, job.rows_per_batch, str(workdir), job.timeout_s,
                checkpoint=str(checkpoint), on_finished=memory.stop, connector=connector,
            )  # fmt: skip
    return dataclasses.replace(
        run, memory=memory.peak, state_bytes=state_bytes(checkpoint), load=os.getloadavg()[0], cpu_s=memory.cpu_s
    )


def _past_the_flush_record(handle: Any) -> bool:
    """A micro-batch ran with the flush record's watermark (year 9999): every window of the events is written."""
    return any((st.watermark or "").startswith("9999") for st in handle.states)


def run_ysb_kafka(
    spark: Any = None,
    *,
    events: int = 5_000_000,
    rows_per_batch: int = 500_000,
    partitions: int = 2,
    bootstrap: str = "127.0.0.1:9092",
    rounds: int = 1,
    warmup: bool = True,
    timeout_s: float | None = None,
    on_step: Callable[[str], None] | None = None,
    check: bool = True,
) -> bench.YsbBench:
    """Write ``events`` YSB events to a fresh topic of ``partitions``; run funke and plain PySpark over it; compare.

    ``rounds``: measure each system this many times, alternating which goes first (figures:
    the median). ``check``: raise ``BenchMismatchError`` when a system's windows differ from
    the reference (else only record it).
    """
    bench.check_sizes(events=events, rows_per_batch=rows_per_batch, rounds=rounds)
    if partitions <= 0:
        raise PlanError(f"--partitions must be positive, got {partitions}")
    step = on_step or (lambda _: None)
    spark = spark or bench.session("base")
    job = bench.Job(events, rows_per_batch, partitions=partitions, timeout_s=timeout_s or 300 + events / 10_000)
    workdir = Path(tempfile.mkdtemp(prefix="funke-bench-kafka-"))
    tag = uuid.uuid4().hex[:8]
    made: list[str] = []
    runs: dict[str, list[Run]] = {system: [] for system in SYSTEMS}
    try:
        step(f"reference: counting views per campaign and window in numpy over {events:,} events")
        reference = reference_counts(events)
        mismatches = bench.check_reference(sum(reference.values()), events)
        if mismatches and check:
            raise bench.BenchMismatchError(mismatches[0])
        if warmup:
            warm_events = min(events, WARMUP_EVENTS)
            step(f"warm-up: {warm_events:,} events to a Kafka topic, then both jobs once over it (JIT, code generation)")
            made.append(f"funke-bench-ysb-warmup-{tag}")
            warm = event_topic(bootstrap, made[-1], warm_events, partitions)
            warm_job = dataclasses.replace(job, rows_per_batch=max(1, min(rows_per_batch, warm_events // 2)))
            for system in SYSTEMS:
                name = bench.system_slug(system)
                run_once(spark, system, warm, warm_job, workdir / f"{name}-warm-up", workdir / f"{name}-warm-up-checkpoint")
        step(f"writing {events:,} events to a Kafka topic of {partitions} partitions at {bootstrap}")
        made.append(f"funke-bench-ysb-{tag}")
        topic = event_topic(bootstrap, made[-1], events, partitions)
        for k in range(rounds):
            label = f" (round {k + 1} of {rounds})" if rounds > 1 else ""
            for system in SYSTEMS if k % 2 == 0 else SYSTEMS[::-1]:
                step(f"{system}, streaming from Kafka: {events:,} events, {rows_per_batch:,} per micro-batch{label}")
                name = f"{bench.system_slug(system)}-{k}"
                run = run_once(spark, system, topic, job, workdir / name, workdir / f"{name}-checkpoint")
                runs[system].append(run)
                mismatches += bench.check_run(run, reference, events)
        checkpoint_fs = filesystem(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        delete_topics(bootstrap, made)
    result = bench.YsbBench(
        events, "base", False, rows_per_batch, topic.partitions, tuple(runs[SYSTEM]), tuple(runs[plain_kafka.SYSTEM]),
        len(reference), sum(reference.values()), mismatches=tuple(mismatches), checkpoint_fs=checkpoint_fs, source="kafka",
    )  # fmt: skip
    if check and mismatches:
        raise bench.BenchMismatchError(
            "the benchmark's results are wrong, so its figures are not kept:\n- " + "\n- ".join(mismatches)
        )
    return result
