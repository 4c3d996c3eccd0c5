"""``funke bench chaos``: kill the self-checking job (``examples/chaos.py``) again and again, then check.

Each run is a child process in its own process group (Python, Spark's JVM, its Python
workers). A kill is one of:

* ``timer``: SIGKILL to the whole group at a random moment (before, between or inside batches);
* ``during``: the PostgreSQL sink kills the group inside a batch's transaction (after its
  rows are copied, before COMMIT);
* ``after``: the sink kills the group right after COMMIT, before Spark notes the batch done,
  so the restarted job replays a batch the sink already holds.

After the kills, one last run goes to the end of the input. Then the sink must hold
exactly what a failure-free run writes: every window count once and right, one total per
key, no alert from the keyed sequence checker.

``source``: the job reads funke's generator, a Redis Stream written before the first run,
JSON files written before the first run (one per micro-batch; a bounded file source, so
every run lists the same files and the last one ends with them), or a Kafka topic written
before the first run (two partitions; ``events=N`` ends it).

``sink``: PostgreSQL tables, or Kafka topics written by the transactional sink (the kills
``during`` and ``after`` then hit a Kafka transaction); the check reads the topics
``read_committed``, as a downstream consumer would.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MODES = ("timer", "during", "after")


@dataclass
class ChaosResult:
    events: int
    kills: dict[str, int] = field(default_factory=dict)  # by mode, kills that happened
    runs: int = 0
    failures: int = 0  # runs that failed on their own and were restarted
    lost: int = 0  # events missing from the window counts, and checker rows missing
    duplicated: int = 0  # events counted more than once, and checker rows written twice
    totals_ok: bool = False
    alerts: int = 0
    wall_s: float = 0.0
    table: str = ""
    source: str = "generator"
    sink: str = "postgres"

    @property
    def exact(self) -> bool:
        return self.lost == 0 and self.duplicated == 0 and self.totals_ok and self.alerts == 0


def run_chaos(
    dsn: str,
    *,
    kills: int,
    events: int = 12_000,
    rows_per_batch: int = 1_500,
    workdir: str,
    seed: int = 0,
    timer_s: tuple[float, float] = (4.0, 30.0),
    run_timeout_s: float = 600.0,
    source: str = "generator",
    redis: str = "redis://127.0.0.1:6379/0",
    sink: str = "postgres",
    bootstrap: str = "127.0.0.1:9092",
    modes: tuple[str, ...] = MODES,
    on_step: Callable[[str], None] = lambda _: None,
) -> ChaosResult:
    """Kill the job ``kills`` times, taking the ways of ``modes`` in turn; then one run to the end and the check."""
    from examples.chaos import SINKS, SOURCES, write_files, write_stream, write_topic

    if source not in SOURCES:
        raise ValueError(f"chaos source must be one of {', '.join(SOURCES)}, got {source!r}")
    if sink not in SINKS:
        raise ValueError(f"chaos sink must be one of {', '.join(SINKS)}, got {sink!r}")
    if not modes or set(modes) - set(MODES):
        raise ValueError(f"chaos kill modes must be some of {', '.join(MODES)}, got {modes!r}")
    rnd = random.Random(seed)
    table = f"chaos_{uuid.uuid4().hex[:10]}"
    result = ChaosResult(events, {m: 0 for m in MODES}, table=table, source=source, sink=sink)
    started = time.monotonic()
    out = Output(sink, dsn, bootstrap, table)
    args = _args(dsn, table, events, rows_per_batch, workdir, source, redis) + ["--sink", sink, "--bootstrap", bootstrap]
    try:
        if source == "redis":
            on_step(f"writing {events:,} events to the Redis Stream chaos:{table}")
            write_stream(redis, f"chaos:{table}", events)
        elif source == "files":
            on_step(f"writing {events:,} events as JSON files of {rows_per_batch:,}")
            write_files(str(Path(workdir) / "events"), events, rows_per_batch)
        elif source == "kafka":
            on_step(f"writing {events:,} events to the Kafka topic {table}_in at {bootstrap}")
            write_topic(bootstrap, f"{table}_in", events)
        out.create()
        return _kill_and_finish(out, events, args, result, started, rnd, kills, modes, timer_s, run_timeout_s, on_step)
    finally:
        if source == "redis":
            import redis as redis_py

            redis_py.Redis.from_url(redis).delete(f"chaos:{table}")
        out.drop(extra_topics=[f"{table}_in"] if source == "kafka" else [])


def _args(dsn: str, table: str, events: int, rows_per_batch: int, workdir: str, source: str, redis: str) -> list[str]:
    """The child job's command line (``python -m funke.bench.chaos ...``)."""
    checkpoint = str(Path(workdir) / "checkpoint")
    args = ["--events", str(events), "--rows-per-batch", str(rows_per_batch), "--dsn", dsn, "--table", table, "--checkpoint", checkpoint]
    return args + ["--source", source, "--redis", redis, "--files", str(Path(workdir) / "events")]


@dataclass
class Output:
    """Where the job's two outputs go (``<table>`` and ``<table>_checks``): what the bench asks of them."""

    sink: str
    dsn: str
    bootstrap: str
    table: str

    @property
    def names(self) -> tuple[str, str]:
        return self.table, f"{self.table}_checks"

    def create(self) -> None:
        """Kafka: the output topics (two partitions each); PostgreSQL tables are made by the sink."""
        if self.sink == "kafka":
            from confluent_kafka.admin import AdminClient, NewTopic

            admin = AdminClient({"bootstrap.servers": self.bootstrap})
            for f in admin.create_topics([NewTopic(t, 2, 1) for t in self.names]).values():
                f.result(60)

    def drop(self, extra_topics: list[str]) -> None:
        if self.sink == "postgres":
            import psycopg

            with psycopg.connect(self.dsn) as conn:
                conn.execute(f'DROP TABLE IF EXISTS "{self.table}", "{self.table}_checks"')
        topics = [*extra_topics, *(self.names if self.sink == "kafka" else ())]
        if topics:
            from confluent_kafka import KafkaException
            from confluent_kafka.admin import AdminClient

            admin = AdminClient({"bootstrap.servers": self.bootstrap})  # kept alive until its futures are done
            for f in admin.delete_topics(topics).values():
                with contextlib.suppress(KafkaException):  # not there (never created): nothing to drop
                    f.result(60)

    def last_batch(self, sink: str) -> int:
        """The id of the last batch the sink committed (-1: none)."""
        return _last_batch_kafka(self.bootstrap, sink) if self.sink == "kafka" else _last_batch(self.dsn, sink)

    def rows(self) -> tuple[list[tuple[str, int, int]], list[tuple[str, str, int]]] | None:
        """The window counts ``(key, window start ms, count)`` and the checker's rows ``(kind, key, n)``;
        None when an output is not there yet."""
        return _rows_kafka(self.bootstrap, self.names) if self.sink == "kafka" else _rows_postgres(self.dsn, self.table)


def run_with_lost_worker(
    dsn: str,
    *,
    master: str,
    kill_worker: Callable[[], object],
    events: int = 6_000,
    rows_per_batch: int = 500,
    workdir: str,
    after_batch: int = 1,
    run_timeout_s: float = 900.0,
    on_step: Callable[[str], None] = lambda _: None,
) -> ChaosResult:
    """The self-checking job on a Spark cluster (``master``): once it has written ``after_batch``
    batches, ``kill_worker()`` takes a worker (and its executors) away; the job must finish on the
    workers left, with PostgreSQL holding exactly the failure-free result."""
    table = f"chaos_{uuid.uuid4().hex[:10]}"
    result = ChaosResult(events, {"worker": 0}, table=table)
    started = time.monotonic()
    child = _child(_args(dsn, table, events, rows_per_batch, workdir, "generator", ""), {**os.environ, "FUNKE_MASTER": master})
    result.runs = 1
    deadline = time.monotonic() + run_timeout_s
    while _last_batch(dsn, table) < after_batch:
        if child.poll() is not None:
            raise RuntimeError(f"the chaos job ended before batch {after_batch}: {_tail(child)}")
        if time.monotonic() > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            raise RuntimeError(f"the chaos job wrote no batch {after_batch} within {run_timeout_s:.0f} s: {_tail(child)}")
        time.sleep(0.5)
    on_step(f"batch {after_batch} written: killing a worker")
    kill_worker()
    result.kills["worker"] = 1
    if _wait(child, run_timeout_s) != 0:
        raise RuntimeError(f"the chaos job failed after the worker was lost: {_tail(child)}")
    out = Output("postgres", dsn, "", table)
    try:
        return _finish(out, events, result, started)
    finally:
        out.drop([])


def _kill_and_finish(
    out: Output,
    events: int,
    args: list[str],
    result: ChaosResult,
    started: float,
    rnd: random.Random,
    kills: int,
    modes: tuple[str, ...],
    timer_s: tuple[float, float],
    run_timeout_s: float,
    on_step: Callable[[str], None],
) -> ChaosResult:
    k = failed_in_a_row = 0
    while k < kills:
        mode = modes[k % len(modes)]
        env = dict(os.environ)
        if mode != "timer":
            sink = rnd.choice(out.names)
            batch = out.last_batch(sink) + rnd.randint(1, 2)
            env["FUNKE_CHAOS_KILL"] = f"{mode}:{sink}:{batch}"
            on_step(f"run {result.runs + 1}: kill {mode} the write of batch {batch} to {sink}")
        child = _child(args, env)
        result.runs += 1
        if mode == "timer":
            delay = rnd.uniform(*timer_s)
            on_step(f"run {result.runs}: kill after {delay:.1f} s")
            try:
                child.wait(delay)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
        code = _wait(child, run_timeout_s)
        if code == -signal.SIGKILL:
            result.kills[mode] += 1
            k, failed_in_a_row = k + 1, 0
        elif code == 0:  # a finished job started again would run afresh: stop here
            on_step(f"run {result.runs}: reached the end of input before the kill")
            return _finish(out, events, result, started)
        else:
            failed_in_a_row = _failed(result, child, failed_in_a_row, on_step)
    while True:
        on_step(f"run {result.runs + 1}: to the end of input")
        child = _child(args, dict(os.environ))
        result.runs += 1
        if _wait(child, run_timeout_s) == 0:
            return _finish(out, events, result, started)
        failed_in_a_row = _failed(result, child, failed_in_a_row, on_step)


def _wait(child: subprocess.Popen[bytes], timeout_s: float) -> int:
    try:
        return child.wait(timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        raise RuntimeError(f"chaos run did not end within {timeout_s:.0f} s: {_tail(child)}") from None


def _failed(result: ChaosResult, child: subprocess.Popen[bytes], in_a_row: int, on_step: Callable[[str], None]) -> int:
    """A run that failed on its own (e.g. a Python worker that did not start in time on a loaded
    machine) is restarted like a killed one, as a supervisor would; three in a row end the bench."""
    result.failures += 1
    lines = [ln for ln in _tail(child).splitlines() if "Error" in ln or "error" in ln]
    on_step(f"run {result.runs} failed on its own, restarting: {lines[-1] if lines else 'no error line'}")
    if in_a_row + 1 >= 3:
        raise RuntimeError(f"chaos run {result.runs} failed three times in a row: {_tail(child)}")
    return in_a_row + 1


def _finish(out: Output, events: int, result: ChaosResult, started: float) -> ChaosResult:
    result.wall_s = round(time.monotonic() - started, 1)
    _check(out.rows(), events, result)
    return result


def _child(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    log = open(Path(args[args.index("--checkpoint") + 1]).parent / "child.log", "ab")  # noqa: SIM115 (the child owns it)
    return subprocess.Popen(
        [sys.executable, "-m", "funke.bench.chaos", *args], env=env, stdout=log, stderr=log, start_new_session=True
    )


def _tail(child: subprocess.Popen[bytes]) -> str:
    path = Path(child.args[child.args.index("--checkpoint") + 1]).parent / "child.log"  # type: ignore[union-attr]
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def _last_batch(dsn: str, sink: str) -> int:
    import psycopg

    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('funke_sink_commits')").fetchone()[0] is None:  # type: ignore[index]
            return -1
        row = conn.execute("SELECT max(batch_id) FROM funke_sink_commits WHERE job = 'chaos' AND sink = %s", (sink,)).fetchone()
        return -1 if row is None or row[0] is None else int(row[0])


def _last_batch_kafka(bootstrap: str, sink: str) -> int:
    """The highest batch id in the committed markers of job ``chaos``'s sink ``sink`` (any query id)."""
    from funke.connectors.kafka_sink import MARKER_TOPIC

    prefix, last = f"chaos:{sink}:".encode(), -1
    for key, value in _read_committed(bootstrap, [MARKER_TOPIC], missing_ok=True):
        if key is not None and key.startswith(prefix) and value is not None:
            last = max(last, int(value))
    return last


def _read_committed(
    bootstrap: str, topics: list[str], *, missing_ok: bool = False, timeout_s: float = 120.0
) -> list[tuple[bytes | None, bytes | None]]:
    """Every committed record ``(key, value)`` of the topics, from the beginning to their end now."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "funke-chaos-check", "enable.auto.commit": False,
        "isolation.level": "read_committed", "enable.partition.eof": True,
    })  # fmt: skip
    try:
        meta = consumer.list_topics(timeout=30)
        parts = []
        for t in topics:
            found = meta.topics.get(t)
            if found is None or found.error is not None:
                if missing_ok:
                    continue
                raise RuntimeError(f"topic {t} is not at {bootstrap}")
            parts += [TopicPartition(t, p, OFFSET_BEGINNING) for p in found.partitions]
        if not parts:
            return []
        consumer.assign(parts)
        left, out = {(tp.topic, tp.partition) for tp in parts}, []
        deadline = time.monotonic() + timeout_s
        while left:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"reading {topics} at {bootstrap} read_committed: no end of {sorted(left)} within {timeout_s:.0f} s"
                )
            for m in consumer.consume(10_000, timeout=0.5):
                err = m.error()
                if err is not None and err.code() == KafkaError._PARTITION_EOF:
                    left.discard((m.topic(), m.partition()))
                elif err is not None:
                    raise RuntimeError(f"reading {m.topic()} at {bootstrap}: {err.str()}")
                else:
                    out.append((m.key(), m.value()))
        return out
    finally:
        consumer.close()


def _rows_kafka(bootstrap: str, topics: tuple[str, str]) -> tuple[list[tuple[str, int, int]], list[tuple[str, str, int]]]:
    import datetime as dt
    import json

    def ms(iso: str) -> int:
        return int(dt.datetime.fromisoformat(iso).timestamp() * 1000)  # ISO-8601 with Z: the sink's timestamps

    counts = [json.loads(v) for _, v in _read_committed(bootstrap, [topics[0]]) if v is not None]
    checks = [json.loads(v) for _, v in _read_committed(bootstrap, [topics[1]]) if v is not None]
    windows = [(r["key"], ms(r["window_start"]), int(r["count"])) for r in counts]
    return windows, [(r["kind"], r["key"], int(r["n"])) for r in checks]


def _rows_postgres(dsn: str, table: str) -> tuple[list[tuple[str, int, int]], list[tuple[str, str, int]]] | None:
    import psycopg

    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass(%s), to_regclass(%s)", (f'"{table}"', f'"{table}_checks"')).fetchone() != (
            table,
            f"{table}_checks",
        ):
            return None
        rows = conn.execute(f'SELECT key, (extract(epoch FROM window_start) * 1000)::bigint, count FROM "{table}"').fetchall()
        checks = conn.execute(f'SELECT kind, key, n FROM "{table}_checks"').fetchall()
    return rows, checks


def _check(found: tuple[list[Any], list[Any]] | None, events: int, result: ChaosResult) -> None:
    from examples.chaos import KEYS, SEEN_EVERY, expected_counts

    if found is None:
        result.lost = events  # a table is not there yet: nothing written
        return
    expected = expected_counts(events)
    rows, checks = found
    got: Counter[tuple[str, int]] = Counter()
    for key, start, count in rows:
        got[(key, int(start))] += int(count)
    result.lost = sum(max(0, n - got[k]) for k, n in expected.items())
    result.duplicated = sum(max(0, n - expected[k]) for k, n in got.items())
    totals = sorted((key, n) for kind, key, n in checks if kind == "total")
    result.totals_ok = totals == sorted(
        (f"k{k}", events // KEYS + (1 if k < events % KEYS else 0)) for k in range(KEYS)
    )
    # the checker's own output, exactly once: every SEEN_EVERY-th number of every key
    seen = Counter((key, n) for kind, key, n in checks if kind == "seen")
    want = Counter((f"k{i % KEYS}", i // KEYS) for i in range(events) if (i // KEYS) % SEEN_EVERY == 0)
    result.lost += sum((want - seen).values())
    result.duplicated += sum((seen - want).values())
    result.alerts = sum(1 for kind, _, _ in checks if kind == "alert")


def _child_main(argv: list[str]) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="funke.bench.chaos")
    for name in ("--events", "--rows-per-batch"):
        p.add_argument(name, type=int, required=True)
    for name in ("--dsn", "--table", "--checkpoint", "--source", "--redis", "--files"):
        p.add_argument(name, required=True)
    p.add_argument("--sink", default="postgres")
    p.add_argument("--bootstrap", default="127.0.0.1:9092")
    a = p.parse_args(argv)
    from examples.chaos import job

    env = job(
        a.events, a.dsn, a.table, a.rows_per_batch, a.checkpoint, source_kind=a.source, redis=a.redis, files=a.files,
        sink_kind=a.sink, bootstrap=a.bootstrap,
    )  # fmt: skip
    env.execute().wait()


def summary(result: ChaosResult) -> dict[str, Any]:
    return {
        "source": result.source,
        "sink": result.sink,
        "kills": sum(result.kills.values()),
        "kills_by_mode": result.kills,
        "runs": result.runs,
        "failures": result.failures,
        "records": result.events,
        "lost": result.lost,
        "duplicated": result.duplicated,
        "totals_ok": result.totals_ok,
        "alerts": result.alerts,
        "wall_s": result.wall_s,
        "exact": result.exact,
    }


if __name__ == "__main__":
    _child_main(sys.argv[1:])
