"""``funke bench latency --source kafka --mode realtime``: Kafka → job → Kafka latency in Spark's real-time mode,
funke beside the same query in plain PySpark's real-time mode and beside funke's micro-batch mode.

For each job and rate, each system in turn gets fresh topics (``partitions`` each), a producer process
writing ``rate`` records a second (``funke.bench.latency_kafka``'s: record ``i`` is ``{"id": i,
"produced_us": t, "kind": k}`` in partition ``i % P``, ``t`` the wall clock in µs, also the record's
timestamp in ms; ``k`` cycles view, click, purchase) and a consumer process reading the output topic
(``read_committed``: the micro-batch sink's transactions; the real-time sink's records are not
transactional and show as they are written). The jobs:

* ``filter/map``: drop the purchases, keep ``id`` and ``produced_us``, upper-case ``kind``. Every
  id that is not a purchase must arrive; latency = consume time − produce time, per record.
* ``rolling count``: ``key_by("kind").count()``: each element with its kind's running count (Flink's
  rolling aggregate: one output per element). Every id must arrive, and each kind's counts must be
  1..n; latency as above.
* ``window``: count per kind per 1 s tumbling window of the record timestamp (Spark's watermark 1 s
  behind). In real-time mode an upsert stream: every element emits its window's updated count and
  the latest ``produced_us`` in it; each window's counts must be 1..n exactly; latency = consume
  time − that ``produced_us`` (how long after the element that updated the window its update left).
  In micro-batch mode each window once, when the watermark passes it (``latency_kafka``'s figure:
  consume time − (window end + 1 s)), every window the watermark closed, with its exact count.

Before the measured runs, each system runs filter/map once at 1,000 records/s, unmeasured (the first
query of a session waits seconds for code generation and the JIT). The producer starts once the job reads (a real-time query's tasks all run; a micro-batch job ran its
first batch). The first ``warmup`` seconds are left out of the figures, not out of the checks; duplicates are
counted (the real-time sink is at-least-once: none without failures). The real-time queries need a
task slot per source partition and per shuffle partition at once: the session is ``local[N]`` with
enough (``session``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import funke as fk
from funke.bench import latency_kafka as lk
from funke.bench.measure import percentile
from funke.errors import JobFailedError, PlanError
from funke.windows import TumblingEventTimeWindows

JOBS = ("filter/map", "rolling count", "window")
FUNKE_RT, PLAIN_RT, FUNKE_MB = "funke real-time", "plain PySpark real-time", "funke micro-batch"
SYSTEMS = (FUNKE_RT, PLAIN_RT, FUNKE_MB)
RATES = (10_000, 100_000, 500_000)
#: The real-time checkpoint interval of both real-time systems (a query's "batch": longer than any run here).
INTERVAL = "5 minutes"
SHUFFLE_PARTITIONS = 2


@dataclass(frozen=True)
class Result:
    """One system's run of one job at one rate: what arrived, how late."""

    system: str
    job: str
    rate: float
    produced: int
    produced_rate: float
    expected: int
    received: int
    missing: int
    duplicates: int
    samples_ms: tuple[float, ...]
    wrong: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return self.missing == 0 and self.duplicates == 0 and not self.wrong

    def figures(self) -> dict[str, Any]:
        def ms(q: float) -> float | None:
            return round(percentile(self.samples_ms, q), 1) if self.samples_ms else None

        return {
            "system": self.system, "job": self.job, "rate": self.rate, "produced": self.produced,
            "produced_rate": round(self.produced_rate), "expected": self.expected, "received": self.received,
            "missing": self.missing, "duplicates": self.duplicates, "wrong": len(self.wrong), "samples": len(self.samples_ms),
            "p50_ms": ms(0.5), "p99_ms": ms(0.99), "max_ms": round(max(self.samples_ms), 1) if self.samples_ms else None,
        }  # fmt: skip


def session(partitions: int) -> Any:
    """A SparkSession with a slot for each real-time task (partitions + shuffle partitions + the dead letters')."""
    from funke.config import settings
    from funke.spark.session import default_conf, get_session, local_cores

    asked = settings()
    cores = local_cores(asked.master)
    base = asked.model_copy(update={"master": f"local[{cores}]", "shuffle_partitions": SHUFFLE_PARTITIONS})
    slots = max(cores, partitions + SHUFFLE_PARTITIONS + 1)
    return get_session(base.model_copy(update={"master": f"local[{slots}]"}), default_conf(base), "funke-bench-realtime")


# -- the jobs -------------------------------------------------------------------------------------


def funke_job(spark: Any, system: str, job: str, bootstrap: str, source: str, out: str, checkpoint: str) -> fk.StreamEnvironment:
    """The measured funke job, in real-time mode (``FUNKE_RT``) or in micro-batches (``FUNKE_MB``)."""
    realtime = system == FUNKE_RT
    if not realtime and job != "rolling count":
        return lk.job_environment(spark, job, bootstrap, source, out, checkpoint)
    env = fk.StreamEnvironment(app=f"latency-rt-{job.replace('/', '-').replace(' ', '-')}", spark=spark, checkpoint_dir=checkpoint)
    if realtime:
        env.set_latency_mode("realtime")
    delivery = "at-least-once" if realtime else "exactly-once"
    src = fk.sources.kafka(source, schema=lk.SCHEMA, bootstrap=bootstrap, metadata=["timestamp"], partition_watermarks=False)
    if job == "filter/map":
        events = env.from_source(src, name="events", uid="events")
        stream = events.filter(fk.col("kind") != "purchase").select("id", "produced_us", "upper(kind) AS kind")
        key: Any = "id"
    elif job == "rolling count":
        events = env.from_source(src, name="events", uid="events")
        stream, key = events.select("id", "produced_us", "kind").key_by("kind").count(), "kind"
    else:
        strategy = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(lk.DELAY_MS)).with_timestamp_assigner(
            "kafka_timestamp"
        )
        events = env.from_source(src, strategy, name="events", uid="events")
        windowed = events.key_by("kind").window(TumblingEventTimeWindows.of(fk.milliseconds(lk.WINDOW_MS)))
        stream = windowed.aggregate(count="count", produced_us=("max", "produced_us"))
        key = ["kind", "window_start"]
    stream.sink_to(fk.sinks.kafka(out, bootstrap=bootstrap, key=key, delivery=delivery), uid="out")
    return env


def plain_query(spark: Any, job: str, bootstrap: str, source: str, out: str, checkpoint: str) -> Any:
    """The same job as a PySpark 4.3 user writes it for Spark's real-time mode (Spark's Kafka connector)."""
    from pyspark.sql import functions as F

    raw = (
        spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", source)
        .option("startingOffsets", "earliest").load()
    )  # fmt: skip
    events = raw.select(F.from_json(F.col("value").cast("string"), lk.SCHEMA).alias("e"), "timestamp").select("e.*", "timestamp")
    if job == "filter/map":
        rows = events.where(F.col("kind") != "purchase").select("id", "produced_us", F.upper("kind").alias("kind"))
        key = F.col("id").cast("string")
    elif job == "rolling count":
        rows = events.groupBy("kind").agg(F.last("id").alias("id"), F.last("produced_us").alias("produced_us"), F.count(F.lit(1)).alias("count"))
        key = F.col("kind")
    else:
        windowed = events.withWatermark("timestamp", f"{lk.DELAY_MS} milliseconds").groupBy(
            F.window("timestamp", f"{lk.WINDOW_MS} milliseconds"), "kind"
        )
        rows = windowed.agg(F.count(F.lit(1)).alias("count"), F.max("produced_us").alias("produced_us")).select(
            "kind", F.date_format(F.col("window.start"), "yyyy-MM-dd'T'HH:mm:ss.SSSXXX").alias("window_start"), "count",
            "produced_us",
        )  # fmt: skip
        key = F.concat_ws(":", "kind", "window_start")
    return (
        rows.select(key.alias("key"), F.to_json(F.struct(*rows.columns)).alias("value"))
        .writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", out)
        .option("checkpointLocation", checkpoint).outputMode("update").trigger(realTime=INTERVAL)
    )  # fmt: skip


# -- the consumer (its own process) ---------------------------------------------------------------


def _consume(bootstrap: str, topic: str, out: str) -> None:
    """Read ``topic`` read_committed from the start until ``<out>.stop`` appears; save each record's fields and arrival."""
    consumer = lk.output_consumer(bootstrap, topic, fetch_wait_ms=1)
    lk.write_count(f"{out}.count", 0)
    rows: list[tuple[int, str]] = []
    stop = Path(f"{out}.stop")
    while not stop.exists():
        msgs = consumer.consume(10_000, timeout=0.05)
        now = time.time_ns() // 1000
        rows.extend((now, m.value().decode()) for m in msgs if m.error() is None)
        if msgs:
            lk.write_count(f"{out}.count", len(rows))
    consumer.close()
    Path(out).write_text("\n".join(f"{at}\t{value}" for at, value in rows))


def _spawn(role: str, *args: Any) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", __name__, role, json.dumps(args)])


def main(argv: list[str] | None = None) -> None:
    role, args = (argv or sys.argv[1:])[:2]
    {"consume": _consume}[role](*json.loads(args))


# -- one run --------------------------------------------------------------------------------------


def measure(
    spark: Any, system: str, job: str, *, rate: float, seconds: float, warmup_s: float, partitions: int, bootstrap: str,
    workdir: Path, on_step: Callable[[str], None],
) -> Result:  # fmt: skip
    """One system's run of one job at one rate (see the module docstring)."""
    import numpy as np

    tag = uuid.uuid4().hex[:8]
    source, out = f"funke-latency-rt-in-{tag}", f"funke-latency-rt-out-{tag}"
    lk.make_topics(bootstrap, [source, out], partitions)
    consumed, produced_file = str(workdir / f"{tag}-consumed.tsv"), str(workdir / f"{tag}-produced.npz")
    consumer = _spawn("consume", bootstrap, out, consumed)
    producer: subprocess.Popen | None = None
    handle, query = None, None
    checkpoint = str(workdir / f"{tag}-checkpoint")
    try:
        lk.wait_for("the consumer to start", lambda: lk.read_count(f"{consumed}.count") is not None, 120)
        if system == PLAIN_RT:
            query = plain_query(spark, job, bootstrap, source, out, checkpoint).start()
            alive = _query_alive(query)
        else:
            handle = funke_job(spark, system, job, bootstrap, source, out, checkpoint).execute()
            alive = lk.job_alive(handle)
        # produce once the job reads: a real-time query's tasks all run, a micro-batch job ran its first batch
        if system == FUNKE_MB:
            lk.wait_for("the job's first micro-batch", lambda: any(s.batches > 0 for s in handle.states), 300, alive)
        else:
            measured = query if query is not None else next(s.query for s in handle.states if s.sink.uid == "out")
            tasks = partitions + (SHUFFLE_PARTITIONS if job != "filter/map" else 0)
            lk.wait_for("the real-time query's tasks", lambda: _running_tasks(spark, measured) >= tasks, 300, alive)
        on_step(f"{system}, {job}: producing {rate:,.0f} records/s for {warmup_s + seconds:.0f} s ({warmup_s:.0f} s warm-up)")
        producer = lk.spawn("produce", bootstrap, source, partitions, rate, warmup_s + seconds, produced_file)
        lk.wait_for("the producer to finish", lambda: producer.poll() is not None, warmup_s + seconds + 300, alive)
        if producer.returncode != 0:
            raise JobFailedError(f"latency bench: the producer failed (exit code {producer.returncode})")
        produced = np.load(produced_file)
        firsts, stamps, total = produced["firsts"], produced["stamps"], int(produced["total"])
        ids = np.arange(total)
        produced_us = stamps[np.searchsorted(firsts, ids, side="right") - 1]
        want = _expected_count(system, job, ids, produced_us)
        on_step(f"{system}, {job}: waiting for the {want:,} expected output records")
        arrived = lambda: (lk.read_count(f"{consumed}.count") or 0) >= want  # noqa: E731
        lk.wait_for("every expected output record", arrived, 180 + seconds, alive)
    finally:
        if handle is not None:
            handle.stop()
        if query is not None:
            query.stop()
        Path(f"{consumed}.stop").touch()
        if producer is not None and producer.poll() is None:
            producer.kill()
        try:
            consumer.wait(120)
        except subprocess.TimeoutExpired:
            consumer.kill()
        lk.drop_topics(bootstrap, [source, out])
    rows = [(int(at), json.loads(v)) for at, v in (line.split("\t", 1) for line in Path(consumed).read_text().splitlines() if line)]
    measured_from = int(stamps[0]) + int(warmup_s * 1_000_000)
    common = {"system": system, "job": job, "rate": rate, "produced": total,
              "produced_rate": total / float(produced["elapsed"]) if float(produced["elapsed"]) > 0 else 0.0}  # fmt: skip
    return Result(**common, **check(system, job, rows, ids, produced_us, measured_from))


def _running_tasks(spark: Any, query: Any) -> int:
    """The query's tasks running now (a real-time query's run for its whole checkpoint interval); Spark runs a
    streaming query's jobs in a job group named by its run id."""
    tracker = spark.sparkContext.statusTracker()
    jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(str(query.runId))]
    stages = [tracker.getStageInfo(s) for job in jobs if job is not None for s in job.stageIds]
    return sum(s.numActiveTasks for s in stages if s is not None)


def _query_alive(query: Any) -> Callable[[], None]:
    def check() -> None:
        if not query.isActive and query.exception() is not None:
            raise JobFailedError(f"plain PySpark's real-time query failed: {query.exception()}")

    return check


def _true_windows(ids: Any, produced_us: Any) -> Counter:
    return lk.true_windows(ids, produced_us)


def _closing(produced_us: Any) -> int:
    """The micro-batch run's last window end the watermark passes for sure (one window of margin)."""
    return int(produced_us.max() // 1000) - lk.DELAY_MS - lk.WINDOW_MS


def _expected_count(system: str, job: str, ids: Any, produced_us: Any) -> int:
    if job == "filter/map":
        return int((ids % 3 != 2).sum())
    if job == "rolling count" or system != FUNKE_MB:
        return len(ids)  # one output per element
    closing = _closing(produced_us)
    return sum(1 for (_kind, start) in _true_windows(ids, produced_us) if start + lk.WINDOW_MS <= closing)


def check(system: str, job: str, rows: list[tuple[int, dict]], ids: Any, produced_us: Any, measured_from: int) -> dict[str, Any]:
    """Every output record checked against what was produced; the latency samples after the warm-up."""
    if job == "window" and system == FUNKE_MB:
        return _final_windows(rows, ids, produced_us, measured_from)
    if job == "window":
        return _window_updates(rows, ids, produced_us, measured_from)
    seen = Counter(int(r["id"]) for _, r in rows)
    want = set(ids[ids % 3 != 2].tolist()) if job == "filter/map" else set(ids.tolist())
    wrong: list[str] = []
    if job == "rolling count":
        counts: dict[str, list[int]] = defaultdict(list)
        for _, r in rows:
            counts[r["kind"].lower()].append(int(r["count"]))
        for k, kind in enumerate(lk.KINDS):
            n = int((ids % 3 == k).sum())
            if sorted(set(counts[kind])) != list(range(1, n + 1)):
                wrong.append(f"{kind}: counts are not 1..{n}")
    samples = tuple((at - int(r["produced_us"])) / 1000 for at, r in rows if int(r["produced_us"]) >= measured_from)
    return {"expected": len(want), "received": len(rows), "missing": len(want - set(seen)),
            "duplicates": sum(c - 1 for c in seen.values() if c > 1), "samples_ms": samples, "wrong": tuple(wrong[:5])}  # fmt: skip


def _window_start_ms(text: str) -> int:
    import datetime as dt

    return round(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _window_updates(rows: list[tuple[int, dict]], ids: Any, produced_us: Any, measured_from: int) -> dict[str, Any]:
    """Real-time windows: each (kind, window)'s updates must be the counts 1..n, each once."""
    truth = _true_windows(ids, produced_us)
    updates: dict[tuple[str, int], Counter] = defaultdict(Counter)
    for _, r in rows:
        updates[(r["kind"], _window_start_ms(r["window_start"]))][int(r["count"])] += 1
    missing = sum(len(set(range(1, n + 1)) - set(updates.get(w, {}))) for w, n in truth.items())
    duplicates = sum(c - 1 for u in updates.values() for c in u.values() if c > 1)
    wrong = [f"{w}: counts above {truth.get(w, 0)}" for w, u in updates.items() if max(u) > truth.get(w, 0)]
    samples = tuple((at - int(r["produced_us"])) / 1000 for at, r in rows if int(r["produced_us"]) >= measured_from)
    return {"expected": len(ids), "received": len(rows), "missing": missing, "duplicates": duplicates, "samples_ms": samples,
            "wrong": tuple(wrong[:5])}  # fmt: skip


def _final_windows(rows: list[tuple[int, dict]], ids: Any, produced_us: Any, measured_from: int) -> dict[str, Any]:
    """Micro-batch windows: latency_kafka's check (each window the watermark closed, once, with its exact count)."""
    truth = _true_windows(ids, produced_us)
    closing = _closing(produced_us)
    want = {w for w in truth if w[1] + lk.WINDOW_MS <= closing}
    seen = Counter((r["kind"], lk.kafka_time_ms(r["window_start"])) for _, r in rows)
    wrong = [f"{w}: {r['count']} (expected {truth.get(w, 0)})" for _, r in rows
             if int(r["count"]) != truth.get(w := (r["kind"], lk.kafka_time_ms(r["window_start"])), 0)]  # fmt: skip
    samples = tuple(
        at / 1000 - (lk.kafka_time_ms(r["window_end"]) + lk.DELAY_MS) for at, r in rows if lk.kafka_time_ms(r["window_start"]) * 1000 >= measured_from
    )
    return {"expected": len(want), "received": len(rows), "missing": len(want - set(seen)),
            "duplicates": sum(c - 1 for c in seen.values() if c > 1), "samples_ms": samples, "wrong": tuple(wrong[:5])}  # fmt: skip


def run(
    spark: Any = None,
    *,
    rates: tuple[float, ...] = RATES,
    seconds: float = 30,
    warmup_s: float = 10,
    partitions: int = 2,
    bootstrap: str = "127.0.0.1:9092",
    jobs: tuple[str, ...] = JOBS,
    systems: tuple[str, ...] = SYSTEMS,
    warm_up: bool = True,
    on_step: Callable[[str], None] | None = None,
) -> list[Result]:
    """Each job at each rate on each system, one after the other, on one SparkSession."""
    unknown = [j for j in jobs if j not in JOBS] + [s for s in systems if s not in SYSTEMS]
    if unknown:
        raise PlanError(f"unknown job(s) or system(s) {unknown}: jobs {', '.join(JOBS)}; systems {', '.join(SYSTEMS)}")
    if not rates or min(rates) <= 0 or seconds <= 0 or warmup_s < 0 or partitions <= 0:
        raise PlanError("--rates, --seconds and --partitions must be positive, --warmup at least 0")
    step = on_step or (lambda _: None)
    spark = spark or session(partitions)
    workdir = Path(tempfile.mkdtemp(prefix="funke-bench-latency-rt-"))
    try:
        if warm_up:  # the first query of a session waits seconds for code generation and the JIT: not the figures
            step("warm-up: each system once over filter/map at 1,000 records/s, unmeasured")
            for system in systems:
                measure(spark, system, "filter/map", rate=1_000, seconds=2, warmup_s=1, partitions=partitions, bootstrap=bootstrap,
                        workdir=workdir, on_step=step)  # fmt: skip
        return [
            measure(spark, system, job, rate=rate, seconds=seconds, warmup_s=warmup_s, partitions=partitions,
                    bootstrap=bootstrap, workdir=workdir, on_step=step)  # fmt: skip
            for job in jobs
            for rate in rates
            for system in systems
        ]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
