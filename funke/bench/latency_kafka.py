"""``funke bench latency --source kafka``: end-to-end latency from Kafka through funke to Kafka, exactly once.

Three processes and the job:

* a producer (its own process) writes ``rate`` records a second for ``warmup + seconds``
  seconds to a fresh input topic: record ``i`` is ``{"id": i, "produced_us": t, "kind": k}``
  in partition ``i % P``, ``t`` the wall clock (µs) when its 1 ms chunk was handed to
  librdkafka, which is also the record's timestamp (ms); ``k`` cycles view, click, purchase.
  It batches for at most 1 ms (``linger.ms``), so batching costs little latency;
* the funke job (this process, one SparkSession) reads the topic with ``fk.sources.kafka``
  and writes the output topic with ``fk.sinks.kafka`` (exactly-once: one transaction per
  micro-batch), micro-batches back to back (no trigger interval):

  - ``filter/map``: drops purchases, keeps ``id`` and ``produced_us``, upper-cases ``kind``;
  - ``window``: counts per kind per 1 s tumbling window of the record timestamp (event time),
    watermark 1 s behind the largest timestamp seen;

* a consumer (its own process) reads the output topic ``read_committed`` (it sees a batch's
  records when its transaction commits) and notes when each record arrived.

Latency, per output record: consume time − produce time (``filter/map``), or consume time −
(window end + 1 s) for a window result: the moment the watermark could pass the window's
end, since event time is the wall clock here. The first ``warmup`` seconds of input (and
windows ending in them) are left out of the figures but not out of the checks: every
expected record must arrive exactly once (``filter/map``: each id that is not a purchase;
``window``: each window the watermark closed, with exactly the count of records produced in
it). The job's micro-batch durations and Spark's phase times show where the time goes.

Spark 4.3's real-time trigger (continuous Kafka → Kafka with millisecond latency) is not
available to funke: it is implemented by Spark's JVM Kafka connector, which Maven Central
does not serve for pyspark 4.3.0, and a Python data source cannot run under it. So the
floor here is one micro-batch: plan the offsets, start the read tasks, commit the sink's
transaction, write Spark's offset and commit logs.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import funke as fk
from funke.bench.measure import percentile
from funke.bench.progress import ProgressLog
from funke.errors import JobFailedError, PlanError
from funke.windows import TumblingEventTimeWindows

SCHEMA = "id bigint, produced_us bigint, kind string"
KINDS = ("view", "click", "purchase")
WINDOW_MS = 1_000
DELAY_MS = 1_000
JOBS = ("filter/map", "window")
#: Spark's phases of a micro-batch, as its progress reports name them (``durationMs``).
PHASES = ("latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets", "triggerExecution")


@dataclass(frozen=True)
class LatencyResult:
    """One job's run: what arrived, how late, and what the job's micro-batches took."""

    job: str
    rate: float
    seconds: float
    warmup_s: float
    partitions: int
    produced: int
    #: Records per second the producer managed (it may fall behind ``rate`` on a busy machine).
    produced_rate: float
    #: Output records (``filter/map``) or closed windows (``window``) that must arrive.
    expected: int
    received: int
    duplicates: int
    missing: int
    #: Per measured output record, its latency in ms (see the module docstring).
    samples_ms: tuple[float, ...]
    #: The job's micro-batch durations (ms), first to last.
    batch_ms: tuple[int, ...]
    #: Median ms of each Spark phase over the micro-batches that read records.
    phases: dict[str, float] = field(default_factory=dict)
    #: Windows with a wrong count (``window``), a line each.
    wrong: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return self.duplicates == 0 and self.missing == 0 and not self.wrong

    @property
    def p50_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.5) if self.samples_ms else None

    @property
    def p99_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.99) if self.samples_ms else None

    @property
    def max_ms(self) -> float | None:
        return max(self.samples_ms) if self.samples_ms else None

    @property
    def batch_ms_p50(self) -> float | None:
        return percentile(self.batch_ms, 0.5) if self.batch_ms else None


# -- the producer and the consumer (each in its own process) ------------------------------------


def _produce(bootstrap: str, topic: str, partitions: int, rate: float, seconds: float, out: str) -> None:
    """Write ``rate * seconds`` records, paced in 1 ms chunks; save each chunk's first id and time."""
    import numpy as np
    from confluent_kafka import Producer

    from funke.bench.ysb_produce import producer_config

    producer = Producer({**producer_config(bootstrap, "none"), "linger.ms": 1})
    send, poll = producer.produce, producer.poll
    total, chunk = int(rate * seconds), max(1, int(rate / 1000))
    firsts, stamps = [], []
    start = time.monotonic()
    for lo in range(0, total, chunk):
        wait = start + lo / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        us = time.time_ns() // 1000
        firsts.append(lo)
        stamps.append(us)
        for i in range(lo, min(total, lo + chunk)):
            value = b'{"id":%d,"produced_us":%d,"kind":"%s"}' % (i, us, KINDS[i % 3].encode())
            while True:
                try:
                    send(topic, value, partition=i % partitions, timestamp=us // 1000)
                    break
                except BufferError:
                    poll(0.001)
        poll(0)
    elapsed = time.monotonic() - start
    left = producer.flush(60)
    np.savez(out, firsts=np.array(firsts, np.int64), stamps=np.array(stamps, np.int64), total=total, elapsed=elapsed, left=left)


def _consume(bootstrap: str, topic: str, windows: bool, out: str) -> None:
    """Read ``topic`` read_committed from the start until the file ``<out>.stop`` appears; save each record's
    fields and arrival time (µs) to ``out``. ``<out>.count`` holds how many records came so far."""
    import numpy as np

    consumer = output_consumer(bootstrap, topic)
    write_count(f"{out}.count", 0)
    a: list[int] = []
    b: list[int] = []
    kinds: list[str] = []
    counts: list[int] = []
    arrived: list[int] = []
    stop = Path(f"{out}.stop")
    while not stop.exists():
        msgs = consumer.consume(10_000, timeout=0.05)
        now = time.time_ns() // 1000
        for m in msgs:
            if m.error() is not None:
                continue
            d = json.loads(m.value())
            if windows:
                a.append(kafka_time_ms(d["window_start"]))
                b.append(kafka_time_ms(d["window_end"]))
                kinds.append(d["kind"])
                counts.append(int(d["count"]))
            else:
                a.append(int(d["id"]))
                b.append(int(d["produced_us"]))
            arrived.append(now)
        if msgs:
            write_count(f"{out}.count", len(arrived))
    consumer.close()
    np.savez(out, a=np.array(a, np.int64), b=np.array(b, np.int64), kinds=np.array(kinds, dtype=str),
             counts=np.array(counts, np.int64), arrived=np.array(arrived, np.int64))  # fmt: skip


def output_consumer(bootstrap: str, topic: str, *, fetch_wait_ms: int = 5) -> Any:
    """A read_committed consumer of every partition of ``topic`` from its start (no group: assigned)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"funke-latency-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
        "isolation.level": "read_committed", "fetch.wait.max.ms": fetch_wait_ms, "fetch.error.backoff.ms": 5,
    })  # fmt: skip
    parts = consumer.list_topics(topic, timeout=30).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
    return consumer


def write_count(path: str, value: int) -> None:
    """Write ``value`` to ``path`` whole (a reader never sees half of it)."""
    Path(f"{path}.tmp").write_text(str(value))
    os.replace(f"{path}.tmp", path)


def read_count(path: str) -> int | None:
    try:
        return int(Path(path).read_text())
    except (OSError, ValueError):
        return None


def spawn(role: str, *args: Any) -> subprocess.Popen:
    """Run ``_produce`` or ``_consume`` in a fresh interpreter (``python -m funke.bench.latency_kafka ROLE ARGS``)."""
    return subprocess.Popen([sys.executable, "-m", __name__, role, json.dumps(args)])


def main(argv: list[str] | None = None) -> None:
    role, args = (argv or sys.argv[1:])[:2]
    {"produce": _produce, "consume": _consume}[role](*json.loads(args))


def kafka_time_ms(text: str) -> int:
    """``2026-11-25T10:00:01Z`` (the Kafka sink's timestamps) → epoch ms."""
    import datetime as dt

    return round(dt.datetime.fromisoformat(text).timestamp() * 1000)


# -- the harness --------------------------------------------------------------------------------


def make_topics(bootstrap: str, names: list[str], partitions: int) -> None:
    from funke.bench.ysb_produce import prepare_topic

    for name in names:
        prepare_topic(bootstrap, name, partitions, reset=True)


def job_environment(
    spark: Any, job: str, bootstrap: str, source_topic: str, out_topic: str, checkpoint: str
) -> fk.StreamEnvironment:
    """The measured funke job (``filter/map`` or ``window``) from ``source_topic`` to ``out_topic``."""
    env = fk.StreamEnvironment(app=f"latency-{job.replace('/', '-')}", spark=spark, checkpoint_dir=checkpoint)
    if job == "filter/map":
        source = fk.sources.kafka(source_topic, schema=SCHEMA, bootstrap=bootstrap)
        events = env.from_source(source, name="events", uid="events")
        out = events.filter(fk.col("kind") != "purchase").select("id", "produced_us", "upper(kind) AS kind")
        sink = fk.sinks.kafka(out_topic, bootstrap=bootstrap, key="id")
    else:
        # Spark's watermark and window operator (the figures are of Spark's micro-batch floor)
        source = fk.sources.kafka(source_topic, schema=SCHEMA, bootstrap=bootstrap, metadata=["timestamp"], partition_watermarks=False)
        watermarks = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(DELAY_MS)).with_timestamp_assigner(
            "kafka_timestamp"
        )
        events = env.from_source(source, watermarks, name="events", uid="events")
        windowed = events.key_by("kind").window(TumblingEventTimeWindows.of(fk.milliseconds(WINDOW_MS)))
        out = windowed.count().uid("kind-counts").select("kind", "window_start", "window_end", "count")
        sink = fk.sinks.kafka(out_topic, bootstrap=bootstrap, key="kind")
    out.sink_to(sink, uid="out")
    return env


def wait_for(what: str, ok: Callable[[], bool], timeout_s: float, *checks: Callable[[], None]) -> None:
    """Poll ``ok`` until it holds; each of ``checks`` raises when something it watches has failed."""
    deadline = time.monotonic() + timeout_s
    while not ok():
        for check in checks:
            check()
        if time.monotonic() > deadline:
            raise JobFailedError(f"latency bench: {what} did not happen within {timeout_s:.0f} s")
        time.sleep(0.05)


def job_alive(handle: Any) -> Callable[[], None]:
    def check() -> None:
        failed = [s for s in handle.states if s.query is not None and not s.query.isActive and s.query.exception()]
        if failed:
            raise JobFailedError(f"the latency job failed: {failed[0].query.exception()}")

    return check


def measure(
    spark: Any,
    job: str,
    *,
    rate: float,
    seconds: float,
    warmup_s: float,
    partitions: int,
    bootstrap: str,
    workdir: Path,
    on_step: Callable[[str], None],
) -> LatencyResult:
    """One job's latency run (see the module docstring)."""
    import numpy as np

    tag = uuid.uuid4().hex[:8]
    source_topic, out_topic = f"funke-latency-in-{tag}", f"funke-latency-out-{tag}"
    make_topics(bootstrap, [source_topic, out_topic], partitions)
    consumed_file, produced_file = str(workdir / f"{tag}-consumed.npz"), str(workdir / f"{tag}-produced.npz")
    consumer = spawn("consume", bootstrap, out_topic, job == "window", consumed_file)
    producer: subprocess.Popen | None = None
    handle = None
    progress = ProgressLog(spark)

    def alive(process: subprocess.Popen, name: str) -> Callable[[], None]:
        def check() -> None:
            if process.poll() not in (None, 0):
                raise JobFailedError(f"latency bench: the {name} failed (exit code {process.returncode})")

        return check

    try:
        wait_for("the consumer to start", lambda: read_count(f"{consumed_file}.count") is not None, 120, alive(consumer, "consumer"))
        env = job_environment(spark, job, bootstrap, source_topic, out_topic, str(workdir / f"{tag}-checkpoint"))
        handle = env.execute()
        wait_for("the job's first micro-batch", lambda: any(s.batches > 0 for s in handle.states), 300, job_alive(handle))
        on_step(f"{job}: producing {rate:,.0f} records/s for {warmup_s + seconds:.0f} s ({warmup_s:.0f} s warm-up)")
        producer = spawn("produce", bootstrap, source_topic, partitions, rate, warmup_s + seconds, produced_file)
        wait_for("the producer to finish", lambda: producer.poll() is not None, warmup_s + seconds + 300, job_alive(handle))
        alive(producer, "producer")()
        produced = np.load(produced_file)
        firsts, stamps, total = produced["firsts"], produced["stamps"], int(produced["total"])
        ids = np.arange(total)
        produced_us = stamps[np.searchsorted(firsts, ids, side="right") - 1]
        if job == "filter/map":
            expected_count = int(np.count_nonzero(ids % 3 != 2))
        else:
            windows = true_windows(ids, produced_us)
            closing = int(produced_us.max() // 1000) - DELAY_MS - WINDOW_MS  # one window of margin before the last watermark
            expected_count = sum(1 for (_kind, start) in windows if start + WINDOW_MS <= closing)
        on_step(f"{job}: waiting for the {expected_count:,} expected output records")

        def arrived() -> bool:
            return (read_count(f"{consumed_file}.count") or 0) >= expected_count

        wait_for("every expected output record", arrived, 120 + seconds, job_alive(handle), alive(consumer, "consumer"))
    finally:
        if handle is not None:
            handle.stop()
        Path(f"{consumed_file}.stop").touch()
        if producer is not None and producer.poll() is None:  # the run failed before the producer was done
            producer.kill()
        try:
            consumer.wait(120)  # it saves what it read once it sees the stop file
        except subprocess.TimeoutExpired:
            consumer.kill()
        progress_of = [
            progress.of(s.query.id) for s in (handle.states if handle else []) if s.query is not None and s.sink.uid == "out"
        ]
        progress.close()
        drop_topics(bootstrap, [source_topic, out_topic])
    got = np.load(consumed_file)
    measured_from_us = int(stamps[0]) + int(warmup_s * 1_000_000)
    state = next(s for s in handle.states if s.sink.uid == "out")
    phases = _phases(progress_of[0] if progress_of else [])
    common = {
        "job": job, "rate": rate, "seconds": seconds, "warmup_s": warmup_s, "partitions": partitions, "produced": total,
        "produced_rate": total / float(produced["elapsed"]) if float(produced["elapsed"]) > 0 else 0.0,
        "batch_ms": tuple(state.batch_ms), "phases": phases,
    }  # fmt: skip
    if job == "filter/map":
        out_ids, out_produced, arrived = got["a"], got["b"], got["arrived"]
        seen = Counter(out_ids.tolist())
        want = set(ids[ids % 3 != 2].tolist())
        keep = out_produced >= measured_from_us
        samples = tuple(((arrived[keep] - out_produced[keep]) / 1000).tolist())
        return LatencyResult(
            **common, expected=len(want), received=len(out_ids), duplicates=sum(c - 1 for c in seen.values() if c > 1),
            missing=len(want - set(seen)), samples_ms=samples,
        )  # fmt: skip
    return _window_result(common, got, windows, closing, measured_from_us)


def true_windows(ids: Any, produced_us: Any) -> Counter:
    """Records per (kind, window start ms), from what the producer wrote."""
    import numpy as np

    starts = (produced_us // 1000) // WINDOW_MS * WINDOW_MS
    out: Counter = Counter()
    for k, kind in enumerate(KINDS):
        picked = ids % 3 == k
        values, counts = np.unique(starts[picked], return_counts=True)
        out.update({(kind, int(v)): int(c) for v, c in zip(values, counts, strict=True)})
    return out


def _window_result(common: dict[str, Any], got: Any, windows: Counter, closing: int, measured_from_us: int) -> LatencyResult:
    rows = list(
        zip(
            got["kinds"].tolist(),
            got["a"].tolist(),
            got["b"].tolist(),
            got["counts"].tolist(),
            got["arrived"].tolist(),
            strict=True,
        )
    )
    seen = Counter((kind, start) for kind, start, _end, read_count, _at in rows)
    want = {w for w in windows if w[1] + WINDOW_MS <= closing}
    wrong = [
        f"{kind} @ {start}: {count} (expected {windows.get((kind, start), 0)})"
        for kind, start, _end, count, _at in rows
        if count != windows.get((kind, start), 0)
    ]
    samples = tuple((at / 1000) - (end + DELAY_MS) for _kind, start, end, read_count, at in rows if start * 1000 >= measured_from_us)
    return LatencyResult(
        **common, expected=len(want), received=len(rows), duplicates=sum(c - 1 for c in seen.values() if c > 1),
        missing=len(want - set(seen)), samples_ms=samples, wrong=tuple(wrong[:5]),
    )  # fmt: skip


def _phases(reports: list[Any]) -> dict[str, float]:
    """Median ms of each phase over the micro-batches that read records."""
    busy = [p for p in reports if int(p.numInputRows or 0) > 0]
    out = {}
    for phase in PHASES:
        values = [int((p.durationMs or {}).get(phase, 0)) for p in busy]
        if values:
            out[phase] = statistics.median(values)
    return out


def drop_topics(bootstrap: str, names: list[str]) -> None:
    from funke.bench.ysb_kafka import delete_topics

    delete_topics(bootstrap, names)


def run_latency(
    spark: Any = None,
    *,
    rate: float = 100_000,
    seconds: float = 30,
    warmup_s: float = 10,
    partitions: int = 2,
    bootstrap: str = "127.0.0.1:9092",
    jobs: tuple[str, ...] = JOBS,
    on_step: Callable[[str], None] | None = None,
) -> list[LatencyResult]:
    """Each of ``jobs`` (``filter/map``, ``window``) in turn, on one SparkSession."""
    from funke.bench.ysb import session

    unknown = [j for j in jobs if j not in JOBS]
    if unknown:
        raise PlanError(f"unknown latency job(s) {unknown}: choose from {', '.join(JOBS)}")
    if rate <= 0 or seconds <= 0 or warmup_s < 0 or partitions <= 0:
        raise PlanError("--rate, --seconds and --partitions must be positive, --warmup at least 0")
    step = on_step or (lambda _: None)
    spark = spark or session("base")
    workdir = Path(tempfile.mkdtemp(prefix="funke-bench-latency-"))
    try:
        return [
            measure(
                spark,
                job,
                rate=rate,
                seconds=seconds,
                warmup_s=warmup_s,
                partitions=partitions,
                bootstrap=bootstrap,
                workdir=workdir,
                on_step=step,
            )
            for job in jobs
        ]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def summary(r: LatencyResult) -> dict[str, Any]:
    """The figures of one run, for the terminal and docs/benchmarks.md."""

    def ms(x: float | None) -> float | None:
        return None if x is None else round(x, 1)

    return {
        "job": r.job, "rate": r.rate, "produced_rate": round(r.produced_rate), "seconds": r.seconds, "warmup_s": r.warmup_s,
        "partitions": r.partitions, "produced": r.produced, "expected": r.expected, "received": r.received,
        "duplicates": r.duplicates, "missing": r.missing, "wrong_windows": len(r.wrong), "samples": len(r.samples_ms),
        "p50_ms": ms(r.p50_ms), "p99_ms": ms(r.p99_ms), "max_ms": ms(r.max_ms), "batches": len(r.batch_ms),
        "batch_ms_p50": r.batch_ms_p50, "batch_ms_max": max(r.batch_ms, default=None), "phases_ms_p50": {k: ms(v) for k, v in r.phases.items()},
    }  # fmt: skip


if __name__ == "__main__":
    main()
