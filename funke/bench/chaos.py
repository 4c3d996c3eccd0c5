"""``funke bench chaos``: kill the self-checking job (``examples/chaos.py``) again and again, then check.

Each run is a child process in its own process group (Python, Spark's JVM, its Python
workers). A kill is one of:

* ``timer``: SIGKILL to the whole group at a random moment (before, between or inside batches);
* ``during``: the PostgreSQL sink kills the group inside a batch's transaction (after its
  rows are copied, before COMMIT);
* ``after``: the sink kills the group right after COMMIT, before Spark notes the batch done,
  so the restarted job replays a batch the sink already holds.

After the kills, one last run goes to the end of the input. Then PostgreSQL must hold
exactly what a failure-free run writes: every window count once and right, one total per
key, no alert from the keyed sequence checker.

``source``: the job reads funke's generator, a Redis Stream written before the first run,
or JSON files written before the first run (one per micro-batch; a bounded file source, so
every run lists the same files and the last one ends with them).
"""

from __future__ import annotations

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
    on_step: Callable[[str], None] = lambda _: None,
) -> ChaosResult:
    from examples.chaos import SOURCES, write_files, write_stream

    if source not in SOURCES:
        raise ValueError(f"chaos source must be one of {', '.join(SOURCES)}, got {source!r}")
    rnd = random.Random(seed)
    table = f"chaos_{uuid.uuid4().hex[:10]}"
    result = ChaosResult(events, {m: 0 for m in MODES}, table=table, source=source)
    started = time.monotonic()
    args = _args(dsn, table, events, rows_per_batch, workdir, source, redis)
    if source == "redis":
        on_step(f"writing {events:,} events to the Redis Stream chaos:{table}")
        write_stream(redis, f"chaos:{table}", events)
    elif source == "files":
        on_step(f"writing {events:,} events as JSON files of {rows_per_batch:,}")
        write_files(str(Path(workdir) / "events"), events, rows_per_batch)
    try:
        return _kill_and_finish(dsn, table, events, args, result, started, rnd, kills, timer_s, run_timeout_s, on_step)
    finally:
        if source == "redis":
            import redis as redis_py

            redis_py.Redis.from_url(redis).delete(f"chaos:{table}")


def _args(dsn: str, table: str, events: int, rows_per_batch: int, workdir: str, source: str, redis: str) -> list[str]:
    """The child job's command line (``python -m funke.bench.chaos ...``)."""
    checkpoint = str(Path(workdir) / "checkpoint")
    args = ["--events", str(events), "--rows-per-batch", str(rows_per_batch), "--dsn", dsn, "--table", table, "--checkpoint", checkpoint]
    return args + ["--source", source, "--redis", redis, "--files", str(Path(workdir) / "events")]


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
    return _finish(dsn, table, events, result, started)


def _kill_and_finish(
    dsn: str,
    table: str,
    events: int,
    args: list[str],
    result: ChaosResult,
    started: float,
    rnd: random.Random,
    kills: int,
    timer_s: tuple[float, float],
    run_timeout_s: float,
    on_step: Callable[[str], None],
) -> ChaosResult:
    k = failed_in_a_row = 0
    while k < kills:
        mode = MODES[k % len(MODES)]
        env = dict(os.environ)
        if mode != "timer":
            sink = rnd.choice([table, f"{table}_checks"])
            batch = _last_batch(dsn, sink) + rnd.randint(1, 2)
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
            return _finish(dsn, table, events, result, started)
        else:
            failed_in_a_row = _failed(result, child, failed_in_a_row, on_step)
    while True:
        on_step(f"run {result.runs + 1}: to the end of input")
        child = _child(args, dict(os.environ))
        result.runs += 1
        if _wait(child, run_timeout_s) == 0:
            return _finish(dsn, table, events, result, started)
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


def _finish(dsn: str, table: str, events: int, result: ChaosResult, started: float) -> ChaosResult:
    import psycopg

    result.wall_s = round(time.monotonic() - started, 1)
    _check(dsn, table, events, result)
    with psycopg.connect(dsn) as conn:
        conn.execute(f'DROP TABLE IF EXISTS "{table}", "{table}_checks"')
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


def _check(dsn: str, table: str, events: int, result: ChaosResult) -> None:
    import psycopg

    from examples.chaos import KEYS, SEEN_EVERY, expected_counts

    expected = expected_counts(events)
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass(%s), to_regclass(%s)", (f'"{table}"', f'"{table}_checks"')).fetchone() != (
            table,
            f"{table}_checks",
        ):
            result.lost = events  # a table is not there yet: nothing written
            return
        rows = conn.execute(f'SELECT key, (extract(epoch FROM window_start) * 1000)::bigint, count FROM "{table}"').fetchall()
        checks = conn.execute(f'SELECT kind, key, n FROM "{table}_checks"').fetchall()
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
    a = p.parse_args(argv)
    from examples.chaos import job

    env = job(a.events, a.dsn, a.table, a.rows_per_batch, a.checkpoint, source_kind=a.source, redis=a.redis, files=a.files)
    env.execute().wait()


def summary(result: ChaosResult) -> dict[str, Any]:
    return {
        "source": result.source,
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
