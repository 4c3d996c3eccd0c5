"""``funke bench nexmark``: each Nexmark query as its own streaming job, at steady state, events per second
and per core, beside the per-core figures Nexmark's guide publishes for Flink.

Steady state: a job's first micro-batches (and everything before them: planning, starting Spark's query)
are left out. The rate is the events of micro-batches 3 to the last over the wall time from the end of
the second to the end of the last; the cores are the CPU seconds this process, the JVM and its Python
workers used in that same window (sampled from ``/proc``) over its length, as Nexmark counts cores (CPU
used, not cores owned). Per core: events / (cores × seconds), Nexmark's "Throughput/Cores". A micro-batch
holds one second of event time (``--tps`` events), so a query's events are ``--tps`` times the batches
it runs. Each job's fixed cost (its wall time outside micro-batches) is reported beside its share.

Bounded (``--bounded``), a job has no micro-batches: its rate is start to end, and its start-up is
measured separately, by the same query over one second of events, and reported as a share of the run.

>>> run = QueryRun("q0", 24_000_000, 2_000_000, 30.0, 12, 2.0, 1_000_000.0, 1.6, 22_080_000)
>>> round(run.per_core), run.startup_share
(625000, 0.0667)
>>> print(flink_beside(run))
625 k/core, 4.03 × Flink's 155 k
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Self

from funke.bench.nexmark import REFUSED, Settings, Suite, prepare_workdir
from funke.errors import PlanError, UnsupportedError

#: Flink's throughput per core in Nexmark's own guide (GUIDE_V1.md of github.com/nexmark/nexmark, its example
#: result table): Flink 1.13 to 2.0, workers of 8 cores, 8 TaskManagers of one slot, parallelism 8, 100 M events
#: generated at 10 M events/s, cores measured by Nexmark's CPU collector; events / (cores × seconds). q6 and q23
#: are not in it (Flink does not run q6).
FLINK_PER_CORE = {
    "q0": 155_020, "q1": 157_940, "q2": 175_210, "q3": 152_120, "q4": 34_330, "q5": 22_140, "q7": 12_330, "q8": 146_140,
    "q9": 14_240, "q10": 57_810, "q11": 39_700, "q12": 75_670, "q13": 130_730, "q14": 161_230, "q15": 72_420,
    "q16": 18_650, "q17": 116_800, "q18": 53_700, "q19": 44_040, "q20": 18_980, "q21": 98_490, "q22": 129_960,
}  # fmt: skip
FLINK_SOURCE = "Nexmark's GUIDE_V1.md (github.com/nexmark/nexmark), its example result: Flink, 8-core workers, 100 M events"

#: Queries with no state of their own: large micro-batches, or Spark's fixed cost per batch dominates.
STATELESS = frozenset({"q0", "q1", "q2", "q10", "q14", "q21", "q22"})
#: Micro-batches a query runs by default (the first two left out of the steady figures).
BATCHES = 12


def default_settings(query: str) -> Settings:
    """A query's events by default: ``BATCHES`` micro-batches of one second of event time each."""
    tps = 2_000_000 if query in STATELESS else 200_000
    return Settings(events=BATCHES * tps, tps=tps)


@dataclass(frozen=True)
class QueryRun:
    """One query's job: its events, wall time, micro-batches, fixed cost, steady rate and cores."""

    query: str
    events: int
    tps: int
    seconds: float
    batches: int
    #: Wall seconds outside micro-batches (planning, starting and stopping the query); bounded: a
    #: one-second run of the same query.
    startup_s: float
    #: Steady events/s (bounded: start to end).
    events_per_s: float | None
    #: CPU seconds per second in the same window.
    cores: float | None
    output_rows: int
    bounded: bool = False

    @property
    def per_core(self) -> float | None:
        return self.events_per_s / self.cores if self.events_per_s and self.cores else None

    @property
    def startup_share(self) -> float:
        return round(self.startup_s / self.seconds, 4) if self.seconds > 0 else 0.0


def flink_beside(run: QueryRun) -> str:
    per_core = run.per_core
    if per_core is None:
        return "too few micro-batches to measure"
    flink = FLINK_PER_CORE.get(run.query)
    ours = f"{_k(per_core)}/core"
    return f"{ours}, {per_core / flink:.2f} × Flink's {_k(flink)}" if flink else f"{ours} (Flink: none published)"


def _k(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


class CpuSampler:
    """CPU seconds of this process, the JVM and its Python workers, sampled with the wall clock until stopped."""

    def __init__(self, spark: Any, interval_s: float = 0.2):
        from funke.bench.resources import cpu_seconds

        try:
            jvm_pid = spark.sparkContext._gateway.proc.pid
        except AttributeError:  # Spark Connect: the work is not this machine's process tree
            jvm_pid = None
        self._read = (lambda: sum(os.times()[:2]) + (cpu_seconds(jvm_pid) or 0.0)) if jvm_pid else None
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="funke-bench-nexmark-cpu", daemon=True)
        self._interval = interval_s

    def __enter__(self) -> Self:
        if self._read is not None:
            self.samples.append((time.time(), self._read()))
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._read is not None:
            self.samples.append((time.time(), self._read()))

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.samples.append((time.time(), self._read()))  # type: ignore[misc]

    def cores(self, start: float, end: float) -> float | None:
        """CPU seconds per second between two wall-clock times (interpolated between samples)."""
        if len(self.samples) < 2 or end <= start:
            return None
        return (self._at(end) - self._at(start)) / (end - start)

    def _at(self, t: float) -> float:
        s = self.samples
        if t <= s[0][0]:
            return s[0][1]
        for (t0, c0), (t1, c1) in itertools.pairwise(s):
            if t0 <= t <= t1:
                return c0 + (c1 - c0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
        return s[-1][1]


def _steady(handle: Any, cpu: CpuSampler) -> tuple[int, float, float | None, float | None]:
    """Batches, the wall seconds outside them, and the steady events/s and cores (None: too few batches)."""
    from funke.runtime.metrics import WARMUP_BATCHES

    st = max(handle.states, key=lambda s: s.batches)
    ends, rows, ms = list(st.batch_at), list(st.batch_rows), list(st.batch_ms)
    outside = max(0.0, (handle.ended or time.monotonic()) - handle.started - sum(ms) / 1000)
    last = max((i for i, r in enumerate(rows) if r > 0), default=-1)
    if last - WARMUP_BATCHES < 2:  # at least three micro-batches past the warm-up
        return len(ms), outside, None, None
    start, end = ends[WARMUP_BATCHES - 1], ends[last]
    return len(ms), outside, sum(rows[WARMUP_BATCHES : last + 1]) / (end - start), cpu.cores(start, end)


def run_query(spark: Any, suite: Suite, query: str, settings: Settings, root: Path, *, bounded: bool = False) -> QueryRun:
    """``query`` as its own job into its table (funke's formulation: a blackhole), timed."""
    import funke as fk
    from funke.table import StreamTableEnvironment

    def job(s: Settings, name: str) -> tuple[Any, float, CpuSampler]:
        workdir = root / name
        prepare_workdir(workdir)
        env = fk.StreamEnvironment(app=f"nexmark-{query}", spark=spark, checkpoint_dir=str(workdir / "checkpoint"))
        StreamTableEnvironment.create(env).execute_script(suite.script(query, s.started_now(workdir)))
        with CpuSampler(spark) as cpu:
            started = time.monotonic()
            handle = env.execute(bounded=bounded).wait(7_200)
            return handle, time.monotonic() - started, cpu

    handle, seconds, cpu = job(settings, query)
    rows = int(handle.metrics()["output_rows"])
    if bounded:
        _, startup, _ = job(replace(settings, events=settings.tps), f"{query}-startup")
        cores = cpu.cores(cpu.samples[0][0], cpu.samples[-1][0]) if cpu.samples else None
        return QueryRun(query, settings.events, settings.tps, seconds, 0, startup, settings.events / seconds, cores, rows, True)
    batches, outside, rate, cores = _steady(handle, cpu)
    return QueryRun(query, settings.events, settings.tps, seconds, batches, outside, rate, cores, rows)


def refuse_unrunnable(suite: Suite, queries: tuple[str, ...]) -> None:
    """Refuse, before any work, the queries of funke's formulation that ``REFUSED`` says funke does not run yet."""
    if suite.builtin and (refused := [q for q in queries if q in REFUSED]):
        raise UnsupportedError("funke does not run " + "; ".join(f"{q} yet (it needs {REFUSED[q].needs})" for q in refused))


def run_nexmark_bench(
    spark: Any,
    queries: tuple[str, ...],
    *,
    suite: Suite | None = None,
    events: int | None = None,
    tps: int | None = None,
    bounded: bool = False,
    on_step: Callable[[str], None] = lambda s: None,
) -> list[QueryRun]:
    """Each query as its own job, one after the other: at ``tps`` events per second of event time (one
    micro-batch's worth), ``events`` of them; each not given is the query's default (:func:`default_settings`)."""
    suite = suite or Suite()
    refuse_unrunnable(suite, queries)
    if (events is not None and events <= 0) or (tps is not None and tps <= 0):
        raise PlanError(f"the benchmark needs a positive number of events and events/s of event time, got {events} and {tps}")
    root = Path(tempfile.mkdtemp(prefix="funke-bench-nexmark-"))
    runs = []
    try:
        for q in queries:
            rate = tps or default_settings(q).tps
            s = Settings(events=events or BATCHES * rate, tps=rate)
            on_step(f"{q}: {s.events:,} events at {s.tps:,} events/s of event time, {'bounded' if bounded else 'streaming'}")
            runs.append(run_query(spark, suite, q, s, root, bounded=bounded))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return runs


def summary(runs: list[QueryRun], suite: Suite) -> str:
    """One line for docs/benchmarks.md."""
    mode = "bounded, start to end" if runs and runs[0].bounded else "streaming, steady state"
    what = "funke's formulation" if suite.builtin else f"the files in {suite.directory}"
    parts = []
    for r in runs:
        rate = f"{r.events_per_s:,.0f} events/s" if r.events_per_s else "too few micro-batches"
        cores = f", {r.cores:.2f} cores" if r.cores else ""
        parts.append(
            f"{r.query} {rate}{cores} ({flink_beside(r)}; {r.events:,} events at {r.tps:,}/s of event time, "
            f"{r.seconds:.1f} s, start-up {r.startup_s:.1f} s = {r.startup_share:.0%}, {r.output_rows:,} rows)"
        )
    return f"{what}, {mode}: " + "; ".join(parts)


def table(runs: list[QueryRun]) -> list[list[str]]:
    """Rows for the terminal: query, events, steady events/s, cores, per core, Flink's per core, ratio, start-up share."""
    out = []
    for r in runs:
        flink = FLINK_PER_CORE.get(r.query)
        out.append([
            r.query, f"{r.events:,}", f"{r.events_per_s:,.0f}" if r.events_per_s else "-", f"{r.cores:.2f}" if r.cores else "-",
            f"{r.per_core:,.0f}" if r.per_core else "-", f"{flink:,}" if flink else "-",
            f"{r.per_core / flink:.2f}" if r.per_core and flink else "-", f"{r.startup_share:.0%}",
        ])  # fmt: skip
    return out
