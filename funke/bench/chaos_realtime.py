"""``funke bench chaos --source kafka --sink kafka --mode realtime``: a real-time job SIGKILLed again and again.

The job (its own process group, ``python -m funke.bench.chaos_realtime child``; funke starts its session and
sizes the local master to the job's task slots) reads topic ``in`` and writes topic ``out`` in Spark's
real-time mode, checkpointing every ``interval_ms``:

* ``filter/map``: drop the purchases, keep ``id``, upper-case ``kind`` (one record per kept input);
* ``rolling count``: ``key_by("kind").count()``, one record per input with the kind's running count.

The harness writes the input in ``kills + 1`` chunks, each paced over about a second. Before each kill it
writes a chunk, (re)starts the job, waits until the output holds half of that chunk's records and kills
the whole process group (SIGKILL: Spark's JVM and Python workers too), mid-stream, between checkpoints.
Then it writes the last chunk and runs the job until the output holds every expected record. The check:
no record lost (every id kept once at least; for the rolling count, every count 1..n of every kind and the
last one n), and the duplicates counted: the real-time Kafka sink is at-least-once, so what the job wrote
after its last checkpoint before a kill is written again; for the keyed counts, a duplicate is the same
(kind, count) row again, so a reader keeping the last value per kind still has the exact count.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOBS = ("filter/map", "rolling count")
KINDS = ("view", "click", "purchase")


@dataclass
class Result:
    job: str
    events: int
    kills: int = 0
    runs: int = 0
    expected: int = 0
    received: int = 0
    lost: int = 0
    duplicates: int = 0
    wrong: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def exact(self) -> bool:
        """Nothing lost and nothing wrong (duplicates are what at-least-once allows: reported, not failed)."""
        return self.lost == 0 and not self.wrong

    def figures(self) -> dict[str, Any]:
        return {"job": self.job, "events": self.events, "kills": self.kills, "runs": self.runs, "expected": self.expected,
                "received": self.received, "lost": self.lost, "duplicates": self.duplicates, "wrong": self.wrong[:5],
                "wall_s": self.wall_s}  # fmt: skip


# -- the job (child process) ----------------------------------------------------------------------


def child(bootstrap: str, job: str, source: str, out: str, checkpoint: str, interval_ms: int) -> None:
    """Run the real-time job until killed."""
    import funke as fk

    env = fk.StreamEnvironment(app="chaos-realtime", checkpoint_dir=checkpoint, checkpoint_interval=fk.milliseconds(interval_ms))
    env.set_latency_mode("realtime")
    src = fk.sources.kafka(source, schema="id bigint, kind string", bootstrap=bootstrap, partition_watermarks=False)
    events = env.from_source(src, uid="events")
    if job == "filter/map":
        stream, key = events.filter(fk.col("kind") != "purchase").select("id", "upper(kind) AS kind"), "id"
    else:
        stream, key = events.key_by("kind").count(), "kind"
    stream.sink_to(fk.sinks.kafka(out, bootstrap=bootstrap, key=key, delivery="at-least-once"), uid="out")
    env.execute().wait()


# -- the harness ----------------------------------------------------------------------------------


def _produce(bootstrap: str, topic: str, ids: range, seconds: float) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    start, n = time.monotonic(), len(ids)
    for j, i in enumerate(ids):
        if j % 100 == 0:
            wait = start + seconds * j / n - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        p.produce(topic, json.dumps({"id": i, "kind": KINDS[i % 3]}), partition=i % 2)
        p.poll(0)
    if p.flush(60):
        raise RuntimeError(f"chaos: the input records to {topic} were not all acknowledged")


def _read(bootstrap: str, topic: str) -> list[dict]:
    """Every record of ``topic`` now, parsed."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"chaos-rt-{uuid.uuid4().hex[:6]}", "enable.auto.commit": False,
                  "enable.partition.eof": True})  # fmt: skip
    try:
        parts = c.list_topics(topic, timeout=30).topics[topic].partitions
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
        left, out, deadline = set(parts), [], time.monotonic() + 120
        while left and time.monotonic() < deadline:
            for m in c.consume(10_000, timeout=0.5):
                if m.error() is not None and m.error().code() == KafkaError._PARTITION_EOF:
                    left.discard(m.partition())
                elif m.error() is None:
                    out.append(json.loads(m.value()))
        return out
    finally:
        c.close()


def _expected(job: str, n: int) -> int:
    return sum(1 for i in range(n) if i % 3 != 2) if job == "filter/map" else n


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-m", __name__, "child", json.dumps(args)], stdout=out, stderr=out,
                                start_new_session=True)  # fmt: skip


def _wait_for(what: str, ok: Callable[[], bool], child: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not ok():
        if child.poll() is not None:
            raise RuntimeError(f"chaos: the real-time job ended (exit code {child.returncode}) before {what}: "
                               f"{log.read_text(errors='replace')[-3000:]}")  # fmt: skip
        if time.monotonic() > deadline:
            raise RuntimeError(f"chaos: {what} did not happen within {timeout_s:.0f} s")
        time.sleep(0.2)


def run(
    bootstrap: str,
    *,
    kills: int,
    events: int,
    workdir: str,
    job: str = "filter/map",
    interval_ms: int = 5_000,  # Spark's shortest real-time checkpoint interval
    timeout_s: float = 600,
    on_step: Callable[[str], None] = lambda _: None,
) -> Result:
    """Kill the real-time job ``kills`` times, then run it until the output is complete; check it."""
    from funke.bench.ysb_kafka import delete_topics
    from funke.bench.ysb_produce import prepare_topic

    if job not in JOBS or kills < 0 or events < 2 * (kills + 1):
        raise ValueError(f"chaos realtime: job one of {', '.join(JOBS)}, kills >= 0, events >= 2 per run")
    tag = uuid.uuid4().hex[:8]
    source, out = f"chaos-rt-in-{tag}", f"chaos-rt-out-{tag}"
    for name in (source, out):
        prepare_topic(bootstrap, name, 2, reset=True)
    args = [bootstrap, job, source, out, str(Path(workdir) / "checkpoint"), interval_ms]
    log = Path(workdir) / "child.log"
    result, started = Result(job, events), time.monotonic()
    chunk = events // (kills + 1)
    child: subprocess.Popen[bytes] | None = None
    try:
        for k in range(kills + 1):
            ids = range(k * chunk, events if k == kills else (k + 1) * chunk)
            writer = threading.Thread(target=_produce, args=(bootstrap, source, ids, 1.0))
            writer.start()
            if child is None:
                child = _start(args, log)
                result.runs += 1
            if k < kills:
                target = _expected(job, k * chunk) + (_expected(job, ids.stop) - _expected(job, ids.start)) // 2
                on_step(f"run {result.runs}: kill once the output holds {target:,} records")
                _wait_for(f"{target:,} output records", lambda t=target: len(_read(bootstrap, out)) >= t, child, log, timeout_s)
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                child, result.kills = None, result.kills + 1
            writer.join()
        want = _expected(job, events)
        on_step(f"run {result.runs}: until the output holds all {want:,} expected records")
        assert child is not None
        _wait_for(f"all {want:,} output records", lambda: _complete(job, _read(bootstrap, out), events), child, log, timeout_s)
    finally:
        if child is not None and child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    result.wall_s = round(time.monotonic() - started, 1)
    check(result, _read(bootstrap, out))
    delete_topics(bootstrap, [source, out])
    return result


def _complete(job: str, rows: list[dict], events: int) -> bool:
    if job == "filter/map":
        return {r["id"] for r in rows} >= {i for i in range(events) if i % 3 != 2}
    last = {}
    for r in rows:
        last[r["kind"]] = max(r["count"], last.get(r["kind"], 0))
    return all(last.get(kind, 0) == sum(1 for i in range(events) if i % 3 == k) for k, kind in enumerate(KINDS))


def check(result: Result, rows: list[dict]) -> None:
    """Lost and duplicated records of the output (see the module docstring)."""
    n = result.events
    result.received = len(rows)
    if result.job == "filter/map":
        want = {i for i in range(n) if i % 3 != 2}
        seen = Counter(r["id"] for r in rows)
        result.expected, result.lost = len(want), len(want - set(seen))
        result.duplicates = sum(c - 1 for c in seen.values() if c > 1)
        result.wrong = [f"id {i} is a purchase" for i in seen if i not in want][:5]
        return
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        counts[r["kind"]][r["count"]] += 1
    result.expected = n
    for k, kind in enumerate(KINDS):
        total = sum(1 for i in range(n) if i % 3 == k)
        result.lost += len(set(range(1, total + 1)) - set(counts[kind]))
        result.duplicates += sum(c - 1 for c in counts[kind].values() if c > 1)
        if counts[kind] and max(counts[kind]) != total:
            result.wrong.append(f"{kind}: last count {max(counts[kind])}, expected {total}")


def main(argv: list[str] | None = None) -> None:
    role, args = (argv or sys.argv[1:])[:2]
    if role != "child":
        raise SystemExit(f"unknown role {role!r}")
    bootstrap, job, source, out, checkpoint, interval_ms = json.loads(args)
    child(bootstrap, job, source, out, checkpoint, int(interval_ms))


if __name__ == "__main__":
    main()
