"""``funke bench ysb``: the Yahoo! Streaming Benchmark on funke and on plain PySpark, in one run.

Both systems read the same generated events (event ``i`` is a pure function of ``i``),
in the same process, on the same SparkSession with the same Spark settings, one after the
other (funke first), and write their windows with Spark's Parquet file sink. Each first
runs once, unmeasured, over up to 1 M events: whichever system runs first in a fresh JVM
otherwise pays ~10 s of JIT and code generation in its first micro-batch. Each system's window
results must equal a reference computed without Spark (``funke.bench.reference``);
otherwise the run fails with ``BenchMismatchError`` and no figures are kept.

* streaming: funke's ``examples/ysb.py`` pipeline (``execute()``) against
  ``funke.bench.plain.streaming``; throughput in steady state (first two micro-batches
  left out), micro-batch duration p50/p99.
* ``bounded=True``: funke's bounded run (``execute(bounded=True)``) against a plain
  PySpark batch job over ``spark.range``; events/s over the whole job.
* ``latency_seconds > 0`` (streaming): both jobs over a wall-clock-paced source whose event
  time is the wall clock; per window row, the time it was written minus (window end + 5 s).
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import examples.ysb as ysb
import funke as fk
from funke.bench import plain
from funke.bench.measure import Batch, LatencyRun, Run, arrival_latencies, diff_windows, parquet_windows
from funke.bench.reference import WindowKey, reference_counts
from funke.errors import FunkeError, JobFailedError, PlanError, UnsupportedError

SYSTEM = "funke"
SYSTEMS = (SYSTEM, plain.SYSTEM)
VARIANTS = ("base", "cardinality", "trigger")
_NOT_YET = {
    "cardinality": "--variant cardinality (many more campaigns, so far more window state) is not built yet; run --variant base",
    "trigger": "--variant trigger (a processing-time trigger interval instead of back-to-back micro-batches) is not built yet; "
    "run --variant base",
}
WARMUP_EVENTS = 1_000_000


class BenchMismatchError(FunkeError, AssertionError):
    """A system's window results differ from the reference: its figures measure a wrong job."""


def check_options(*, variant: str, bounded: bool, exactly_once: bool, latency_seconds: float) -> None:
    """Refuse what the harness does not measure (yet), before Spark starts."""
    if variant not in VARIANTS:
        raise PlanError(f"unknown variant {variant!r}: choose one of {', '.join(VARIANTS)}")
    if variant in _NOT_YET:
        raise UnsupportedError(_NOT_YET[variant])
    if exactly_once:
        raise UnsupportedError(
            "--exactly-once (a kill and restart in the middle of the run, then the results checked) is not built yet; "
            "run without it"
        )
    if bounded and latency_seconds > 0:
        raise PlanError("latency past the watermark is measured by streaming runs only: drop --bounded, or --latency-seconds 0")
    if latency_seconds < 0:
        raise PlanError(f"--latency-seconds must be >= 0, got {latency_seconds}")


@dataclass(frozen=True)
class YsbBench:
    """Both systems' runs over the same events (one per round) and the reference they were checked against."""

    events: int
    variant: str
    bounded: bool
    rows_per_batch: int
    partitions: int
    funke_runs: tuple[Run, ...]
    plain_runs: tuple[Run, ...]
    reference_windows: int
    reference_views: int
    latency: tuple[LatencyRun, ...] = ()
    mismatches: tuple[str, ...] = ()

    @property
    def rounds(self) -> int:
        return len(self.funke_runs)

    @property
    def funke(self) -> Run:
        """funke's median run (by throughput) over the rounds."""
        return median_run(self.funke_runs)

    @property
    def plain(self) -> Run:
        return median_run(self.plain_runs)

    @property
    def runs(self) -> tuple[Run, Run]:
        return (self.funke, self.plain)

    @property
    def correct(self) -> bool:
        return not self.mismatches

    @property
    def round_ratios(self) -> tuple[float, ...]:
        """Per round, funke's throughput over plain PySpark's: the two ran back to back, so load drifts cancel."""
        rates = [(f.headline_events_per_s, p.headline_events_per_s) for f, p in zip(self.funke_runs, self.plain_runs)]
        return tuple(a / b for a, b in rates if a and b)

    @property
    def ratio(self) -> float | None:
        """The median per-round ratio funke / plain PySpark (> 1: funke faster)."""
        return statistics.median(self.round_ratios) if self.round_ratios else None

    def latency_of(self, system: str) -> LatencyRun | None:
        return next((r for r in self.latency if r.system == system), None)


def median_run(runs: tuple[Run, ...]) -> Run:
    """The run with the median throughput (the lower one of the middle two for an even count)."""
    ordered = sorted(runs, key=lambda r: r.headline_events_per_s or 0.0)
    return ordered[(len(ordered) - 1) // 2]


def run_ysb(
    spark: Any = None,
    *,
    events: int = 20_000_000,
    variant: str = "base",
    bounded: bool = False,
    rows_per_batch: int = 1_000_000,
    latency_seconds: float = 0.0,
    rate: float = 100_000,
    exactly_once: bool = False,
    warmup: bool = True,
    rounds: int = 1,
    timeout_s: float | None = None,
    on_step: Callable[[str], None] | None = None,
    check: bool = True,
) -> YsbBench:
    """Run YSB on funke and on plain PySpark over the same ``events`` events; compare, then measure.

    ``spark``: an existing SparkSession (funke's local defaults otherwise). ``warmup``: run
    each system once over up to 1 M events first, unmeasured. ``rounds``: measure each
    system this many times, alternating which goes first; figures are the median. ``check``: raise
    BenchMismatchError when a system's windows differ from the reference (else only record it).
    """
    check_options(variant=variant, bounded=bounded, exactly_once=exactly_once, latency_seconds=latency_seconds)
    if events <= 0:
        raise PlanError(f"--events must be positive, got {events}")
    if rows_per_batch <= 0:
        raise PlanError(f"--batch-rows must be positive, got {rows_per_batch}")
    if rounds <= 0:
        raise PlanError(f"--rounds must be positive, got {rounds}")
    step = on_step or (lambda _: None)
    spark = spark or session()
    partitions = max(1, spark.sparkContext.defaultParallelism)
    timeout_s = timeout_s or 300 + events / 20_000
    workdir = Path(tempfile.mkdtemp(prefix="funke-bench-"))
    mode = "bounded" if bounded else "streaming"
    per_batch_text = "" if bounded else f", {rows_per_batch:,} per micro-batch"
    try:
        step(f"reference: counting views per campaign and window in numpy over {events:,} events")
        reference = reference_counts(events)
        mismatches = _check_reference(sum(reference.values()), events)
        if mismatches and check:
            raise BenchMismatchError(mismatches[0])
        measure = functools.partial(_run_once, spark, bounded=bounded, partitions=partitions, timeout_s=timeout_s)
        if warmup:
            warm = min(events, WARMUP_EVENTS)
            step(f"warm-up: both jobs once over {warm:,} events (JIT, code generation)")
            for system in SYSTEMS:
                measure(system, warm, max(1, min(rows_per_batch, warm // 2)), workdir / f"{system}-warm-up")
        runs: dict[str, list[Run]] = {system: [] for system in SYSTEMS}
        for k in range(rounds):
            label = f" (round {k + 1} of {rounds})" if rounds > 1 else ""
            # Alternate who goes first, so a load that drifts during a round favours neither.
            for system in SYSTEMS if k % 2 == 0 else SYSTEMS[::-1]:
                step(f"{system}, {mode}: {events:,} events{per_batch_text}{label}")
                run = measure(system, events, rows_per_batch, workdir / f"{system}-{k}")
                runs[system].append(run)
                mismatches += _check_run(run, reference, events)
        latency: tuple[LatencyRun, ...] = ()
        if latency_seconds > 0:
            step(f"funke, latency: {latency_seconds:.0f} s at {rate:,.0f} events/s, event time = wall clock")
            a = funke_latency(spark, rate, latency_seconds, str(workdir / "funke-latency"))
            step(f"plain PySpark, latency: {latency_seconds:.0f} s at {rate:,.0f} events/s, event time = wall clock")
            b = plain.latency(spark, rate, latency_seconds, partitions, str(workdir / "plain-latency"))
            latency = (a, b)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result = YsbBench(
        events, variant, bounded, rows_per_batch, partitions, tuple(runs[SYSTEM]), tuple(runs[plain.SYSTEM]), len(reference),
        sum(reference.values()), latency, tuple(mismatches),
    )
    if check and mismatches:
        raise BenchMismatchError("the benchmark's results are wrong, so its figures are not kept:\n- " + "\n- ".join(mismatches))
    return result


def session() -> Any:
    """A SparkSession with funke's local defaults (``FUNKE_*`` settings), shared by both systems."""
    from funke.config import settings
    from funke.spark.session import get_session

    return get_session(settings(), {}, "funke-bench")


def _run_once(
    spark: Any, system: str, events: int, rows_per_batch: int, workdir: Path, *, bounded: bool, partitions: int, timeout_s: float
) -> Run:
    if system == SYSTEM:
        if bounded:
            return funke_bounded(spark, events, str(workdir), timeout_s)
        return funke_streaming(spark, events, rows_per_batch, str(workdir), timeout_s)
    if bounded:
        return plain.bounded(spark, events, partitions, str(workdir))
    return plain.streaming(spark, events, rows_per_batch, partitions, str(workdir), timeout_s)


def _check_reference(views: int, n: int) -> list[str]:
    spark_views = ysb.expected_view_count(n)
    if views == spark_views:
        return []
    return [f"the reference counts {views:,} views among {n:,} events, Spark SQL {spark_views:,}: its hash is not Spark's"]


def _check_run(run: Run, reference: Mapping[WindowKey, int], n: int) -> list[str]:
    out = []
    if run.events != n:
        out.append(f"{run.system} ({run.mode}) read {run.events:,} events, not {n:,}")
    if run.late_rows_dropped:
        out.append(f"{run.system} ({run.mode}) dropped {run.late_rows_dropped:,} rows as late; the generator makes none late")
    out += [f"{run.system} ({run.mode}): {line}" for line in diff_windows(reference, run.windows)]
    return out


# -- funke's runs ------------------------------------------------------------------------


def _environment(spark: Any, checkpoint: str | None = None) -> fk.StreamEnvironment:
    return fk.StreamEnvironment(app="ysb-bench", spark=spark, checkpoint_dir=checkpoint)


def _finish(handle: Any, timeout_s: float) -> None:
    handle.wait(timeout=timeout_s)
    if not handle.done:
        handle.stop()
        raise JobFailedError(f"funke's YSB job did not finish within {timeout_s:.0f} s")


def funke_streaming(spark: Any, n: int, rows_per_batch: int, workdir: str, timeout_s: float) -> Run:
    """``examples/ysb.py``'s pipeline as a streaming job writing Parquet, as ``funke run examples.ysb:job --output`` does."""
    env = _environment(spark, f"{workdir}/checkpoint")
    source = dataclasses.replace(plain.ysb_events(n), rows_per_batch=rows_per_batch)
    ysb.pipeline(env, source).sink_to(fk.sinks.files(f"{workdir}/out", overwrite=True), uid="campaign-counts")
    started = time.monotonic()
    handle = env.execute()
    _finish(handle, timeout_s)
    wall = time.monotonic() - started
    uids = sorted(s.sink.uid for s in handle.states)
    if uids not in (["campaign-counts"], ["campaign-counts", "dead-letters"]):
        raise JobFailedError(f"funke ran YSB as queries {uids}; the harness expects the counts (and the dead letters)")
    state = next(s for s in handle.states if s.sink.uid == "campaign-counts")  # the dead-letter query runs alongside
    batches = tuple(Batch(i, ms, rows) for i, (ms, rows) in enumerate(zip(state.batch_ms, state.batch_rows)))
    m = handle.metrics()
    windows = parquet_windows(spark, f"{workdir}/out")
    return Run(SYSTEM, "streaming", m["input_rows"], wall, batches, windows, m["late_rows_dropped"])


def funke_bounded(spark: Any, n: int, workdir: str, timeout_s: float) -> Run:
    """``examples/ysb.py``'s pipeline run bounded (one Spark batch job), writing Parquet."""
    env = _environment(spark)
    ysb.pipeline(env, plain.ysb_events(n)).sink_to(fk.sinks.files(f"{workdir}/out", overwrite=True), uid="campaign-counts")
    started = time.monotonic()
    handle = env.execute(bounded=True)
    _finish(handle, timeout_s)
    wall = time.monotonic() - started
    m = handle.metrics()
    windows = parquet_windows(spark, f"{workdir}/out")
    return Run(SYSTEM, "bounded", m["input_rows"], wall, (Batch(0, round(wall * 1000), m["input_rows"]),), windows)


def funke_latency(spark: Any, rate: float, seconds: float, workdir: str) -> LatencyRun:
    """YSB over funke's paced generator for ``seconds``; event time = the micro-batch's wall clock (``current_timestamp()``)."""
    env = _environment(spark, f"{workdir}/checkpoint")
    paced = ysb.events(None, rate=rate)
    wall_clock = fk.expr("unix_millis(current_timestamp())")
    source = dataclasses.replace(paced, columns=tuple((k, wall_clock if k == "event_time" else e) for k, e in paced.columns))
    ysb.pipeline(env, source).sink_to(fk.sinks.files(f"{workdir}/out", overwrite=True), uid="campaign-counts")
    handle = env.execute()
    try:
        handle.wait(timeout=seconds)
    finally:
        handle.stop()
    samples = arrival_latencies(spark, f"{workdir}/out")
    source_name = "funke generator at a fixed rate (event time: current_timestamp())"
    return LatencyRun(SYSTEM, seconds, rate, source_name, samples)
