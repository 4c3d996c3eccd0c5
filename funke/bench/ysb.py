"""``funke bench ysb``: the Yahoo! Streaming Benchmark on funke and on plain PySpark, in one run.

Both systems read the same generated events (event ``i`` is a pure function of ``i``),
in the same process, on the same SparkSession with the same Spark settings, one after the
other (funke first), and write their windows as Parquet. Each first runs once, unmeasured,
over up to 1 M events: whichever system runs first in a fresh JVM otherwise pays ~10 s of
JIT and code generation in its first micro-batch. Each system's window results must equal
a reference computed without Spark (``funke.bench.reference``); otherwise the run fails
with ``BenchMismatchError`` and no figures are kept.

* streaming: funke's ``examples/ysb.py`` pipeline (``execute()``) against
  ``funke.bench.plain.streaming``; throughput in steady state (first two micro-batches
  left out), micro-batch duration p50/p99.
* ``bounded=True``: funke's bounded run (``execute(bounded=True)``) against a plain
  PySpark batch job over ``spark.range``; events/s over the whole job.
* ``latency_seconds > 0`` (streaming): both jobs over a wall-clock-paced source whose event
  time is the wall clock; per window row, the time it was written minus (window end + 5 s).
  ``latency_mode="latency-first"``: funke's latency job runs in that mode (same-batch firing;
  ``StreamEnvironment.set_latency_mode``); plain PySpark's is unchanged.

Variants (``VARIANTS``): ``base`` (100 campaigns), ``cardinality`` (1 M campaigns, so
about a million window keys open at once) and ``trigger`` (the data Artisans trigger on
funke's general path against plain PySpark's update mode). ``exactly_once="off"`` takes
away what Spark lets one take away, on both systems alike: the sink's protocol (a
``foreachBatch`` appending plain Parquet instead of the file sink and its
``_spark_metadata`` log) and durable checkpoint storage (the checkpoint on tmpfs). Spark
still writes its offset and commit logs every micro-batch. Every run also records the
memory peaks while it ran and the bytes of its state store on disk.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import funke as fk
from examples import ysb
from funke.bench import plain
from funke.bench.latency import LatencyRun, arrivals, latency_run
from funke.bench.measure import Batch, Run
from funke.bench.progress import ProgressLog
from funke.bench.reference import WindowKey, reference_counts
from funke.bench.resources import MemorySampler, filesystem, state_bytes
from funke.bench.sinks import AppendParquetSink, BatchParquetSink
from funke.bench.window_rows import batch_window_rows, diff_windows, parquet_windows, split_firings
from funke.errors import FunkeError, JobFailedError, PlanError, UnsupportedError

SYSTEM = "funke"
SYSTEMS = (SYSTEM, plain.SYSTEM)
WARMUP_EVENTS = 1_000_000
EXACTLY_ONCE = ("on", "off")
#: Heap the lookup table's broadcast needs per ad, roughly (10 M ads: 2.7 GiB in use, measured).
HEAP_PER_AD = 400


@dataclass(frozen=True)
class Variant:
    """What a ``--variant`` changes: the campaigns (so the window keys) and the trigger."""

    name: str
    campaigns: int
    trigger: bool
    about: str
    #: ``spark.driver.memory`` the variant needs in local Spark (None: funke's default).
    driver_memory: str | None = None


VARIANTS = {
    v.name: v
    for v in (
        Variant("base", ysb.CAMPAIGNS, False, "100 campaigns × 10 ads"),
        Variant(
            "cardinality",
            1_000_000,
            False,
            "1 M campaigns × 10 ads: about a million window keys open at once, a 10 M-row lookup table",
            driver_memory="6g",
        ),
        Variant(
            "trigger",
            ysb.CAMPAIGNS,
            True,
            "data Artisans trigger (early result every 1 s of processing time, fire-and-purge at the end) "
            "against plain PySpark's update mode on a 1 s trigger",
        ),
    )
}


class BenchMismatchError(FunkeError, AssertionError):
    """A system's window results differ from the reference: its figures measure a wrong job."""


#: funke's latency modes the latency runs take (``StreamEnvironment.set_latency_mode``).
LATENCY_MODES = ("micro-batch", "latency-first")


def check_options(
    *, variant: str, bounded: bool, exactly_once: str, latency_seconds: float, latency_mode: str = "micro-batch"
) -> None:
    """Refuse what the harness does not measure, before Spark starts."""
    if latency_mode not in LATENCY_MODES:
        raise PlanError(f"--latency-mode takes {' or '.join(LATENCY_MODES)}, got {latency_mode!r}")
    if latency_mode != "micro-batch" and latency_seconds <= 0:
        raise PlanError(f"--latency-mode {latency_mode} is funke's mode for the latency runs: give --latency-seconds too")
    if variant not in VARIANTS:
        raise PlanError(f"unknown variant {variant!r}: choose one of {', '.join(VARIANTS)}")
    if exactly_once not in EXACTLY_ONCE:
        raise PlanError(f"--exactly-once takes on or off, got {exactly_once!r}")
    if bounded and latency_seconds > 0:
        raise PlanError("latency past the watermark is measured by streaming runs only: drop --bounded, or --latency-seconds 0")
    if latency_seconds < 0:
        raise PlanError(f"--latency-seconds must be >= 0, got {latency_seconds}")
    if bounded and exactly_once == "off":
        raise PlanError(
            "--exactly-once off switches off a streaming job's sink protocol and durable checkpoint, and a bounded run "
            "has neither: drop --bounded, or --exactly-once off"
        )
    if bounded and VARIANTS[variant].trigger:
        raise PlanError(
            "--variant trigger measures early firings in processing time, which only streaming runs have: drop --bounded"
        )
    if latency_seconds > 0 and variant != "base":
        raise PlanError(f"--latency-seconds is measured on --variant base only, not {variant}: drop one of them")


@dataclass(frozen=True)
class Job:
    """What one run of one system is asked to do."""

    events: int
    rows_per_batch: int
    bounded: bool = False
    #: funke's micro-batches sized adaptively to take about this long (None: ``rows_per_batch`` each).
    batch_seconds: float | None = None
    campaigns: int = ysb.CAMPAIGNS
    trigger: bool = False
    exactly_once: bool = True
    partitions: int = 2
    timeout_s: float = 600.0
    #: funke counts rows out of every operator (settings.operator_metrics), native ones too.
    operator_metrics: bool = False

    @property
    def mode(self) -> str:
        return "bounded" if self.bounded else "streaming"


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
    exactly_once: str = "on"
    campaigns: int = ysb.CAMPAIGNS
    #: Filesystem the streaming checkpoints were on (``ext4``, ``tmpfs``); "" when bounded.
    checkpoint_fs: str = ""
    #: Where both systems read the events: ``generator`` (Spark generates them) or ``kafka`` (a topic).
    source: str = "generator"

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
        return round_ratios(self.funke_runs, self.plain_runs)

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


def round_ratios(a: tuple[Run, ...], b: tuple[Run, ...]) -> tuple[float, ...]:
    """Per round, run ``a``'s throughput over run ``b``'s (rounds where either has none left out)."""
    rates = [(x.headline_events_per_s, y.headline_events_per_s) for x, y in zip(a, b, strict=True)]
    return tuple(x / y for x, y in rates if x and y)


def run_ysb(
    spark: Any = None,
    *,
    events: int = 20_000_000,
    variant: str = "base",
    bounded: bool = False,
    rows_per_batch: int = 1_000_000,
    batch_seconds: float | None = None,
    latency_seconds: float = 0.0,
    rate: float = 100_000,
    latency_mode: str = "micro-batch",
    exactly_once: str = "on",
    warmup: bool = True,
    rounds: int = 1,
    timeout_s: float | None = None,
    on_step: Callable[[str], None] | None = None,
    check: bool = True,
    campaigns: int | None = None,
    operator_metrics: bool = False,
) -> YsbBench:
    """Run YSB on funke and on plain PySpark over the same ``events`` events; compare, then measure.

    ``spark``: an existing SparkSession (funke's local defaults otherwise). ``warmup``: run
    each system once over up to 1 M events first, unmeasured. ``rounds``: measure each
    system this many times, alternating which goes first; figures are the median. ``check``: raise
    BenchMismatchError when a system's windows differ from the reference (else only record it).
    ``campaigns``: another campaign count than the variant's (small tests of the cardinality variant).
    ``operator_metrics``: funke counts rows out of every operator (what that costs).
    ``latency_mode``: funke's latency job's (``set_latency_mode``).
    """
    check_options(
        variant=variant, bounded=bounded, exactly_once=exactly_once, latency_seconds=latency_seconds, latency_mode=latency_mode
    )
    check_sizes(events=events, rows_per_batch=rows_per_batch, rounds=rounds)
    step = on_step or (lambda _: None)
    spark = spark or session(variant)
    v = VARIANTS[variant]
    job = Job(
        events,
        rows_per_batch,
        bounded=bounded,
        batch_seconds=batch_seconds,
        campaigns=campaigns or v.campaigns,
        trigger=v.trigger,
        exactly_once=exactly_once == "on",
        partitions=max(1, spark.sparkContext.defaultParallelism),
        timeout_s=timeout_s or 300 + events / 20_000,
        operator_metrics=operator_metrics,
    )
    check_heap(spark, job.campaigns)
    workdir = Path(tempfile.mkdtemp(prefix="funke-bench-"))
    checkpoints = checkpoint_root(job.exactly_once, workdir)
    per_batch_text = "" if bounded else f", {rows_per_batch:,} per micro-batch"
    try:
        step(f"reference: counting views per campaign and window in numpy over {events:,} events")
        reference = reference_counts(events, job.campaigns)
        mismatches = check_reference(sum(reference.values()), events)
        if mismatches and check:
            raise BenchMismatchError(mismatches[0])
        if warmup:
            warm = warmup_job(job)
            step(f"warm-up: both jobs once over {warm.events:,} events (JIT, code generation)")
            for system in SYSTEMS:
                run_once(spark, system, warm, workdir / f"{system_slug(system)}-warm-up", checkpoints / f"{system_slug(system)}-warm-up")
        runs: dict[str, list[Run]] = {system: [] for system in SYSTEMS}
        for k in range(rounds):
            label = f" (round {k + 1} of {rounds})" if rounds > 1 else ""
            # Alternate who goes first, so a load that drifts during a round favours neither.
            for system in SYSTEMS if k % 2 == 0 else SYSTEMS[::-1]:
                step(f"{system}, {job.mode}: {events:,} events{per_batch_text}{label}")
                run = run_once(spark, system, job, workdir / f"{system_slug(system)}-{k}", checkpoints / f"{system_slug(system)}-{k}")
                runs[system].append(run)
                mismatches += check_run(run, reference, events)
        latency: tuple[LatencyRun, ...] = ()
        if latency_seconds > 0:
            mode = "" if latency_mode == "micro-batch" else f", {latency_mode}"
            step(f"funke, latency{mode}: {latency_seconds:.0f} s at {rate:,.0f} events/s, event time = wall clock")
            a = funke_latency(spark, rate, latency_seconds, str(workdir / "funke-latency"), latency_mode=latency_mode)
            step(f"plain PySpark, latency: {latency_seconds:.0f} s at {rate:,.0f} events/s, event time = wall clock")
            b = plain.latency(spark, rate, latency_seconds, job.partitions, str(workdir / "plain-latency"))
            latency = (a, b)
        checkpoint_fs = "" if bounded else filesystem(checkpoints)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(checkpoints, ignore_errors=True)
    result = YsbBench(
        events,
        variant,
        bounded,
        rows_per_batch,
        job.partitions,
        tuple(runs[SYSTEM]),
        tuple(runs[plain.SYSTEM]),
        len(reference),
        sum(reference.values()),
        latency,
        tuple(mismatches),
        exactly_once,
        job.campaigns,
        checkpoint_fs,
    )
    if check and mismatches:
        raise BenchMismatchError("the benchmark's results are wrong, so its figures are not kept:\n- " + "\n- ".join(mismatches))
    return result


def session(variant: str = "base") -> Any:
    """A SparkSession with funke's local defaults (``FUNKE_*`` settings), shared by both systems.

    A variant that needs a larger driver heap gets it, unless ``FUNKE_DRIVER_MEMORY`` says otherwise.
    """
    from funke.config import settings
    from funke.spark.session import get_session

    need = VARIANTS[variant].driver_memory if variant in VARIANTS else None
    chosen = settings(driver_memory=need) if need and "FUNKE_DRIVER_MEMORY" not in os.environ else settings()
    return get_session(chosen, {}, "funke-bench")


def tmpfs_dir() -> str:
    """Where a checkpoint that need not survive the machine goes: ``/dev/shm`` when it is there and writable, else the temp dir."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else tempfile.gettempdir()


def checkpoint_root(exactly_once: bool, workdir: Path) -> Path:
    """The directory the runs' checkpoints go under: the work dir on disk, or a fresh one on tmpfs when exactly-once is off."""
    if exactly_once:
        return workdir
    return Path(tempfile.mkdtemp(prefix="funke-bench-checkpoints-", dir=tmpfs_dir()))


def warmup_job(job: Job) -> Job:
    """The unmeasured first run: the same job over at most ``WARMUP_EVENTS`` events, in at least two micro-batches."""
    warm = min(job.events, WARMUP_EVENTS)
    return dataclasses.replace(job, events=warm, rows_per_batch=max(1, min(job.rows_per_batch, warm // 2)))


def check_sizes(**sizes: int) -> None:
    """Refuse a size that is not positive, naming its command-line option."""
    flags = {"events": "--events", "rows_per_batch": "--batch-rows", "rounds": "--rounds"}
    for name, value in sizes.items():
        if value <= 0:
            raise PlanError(f"{flags[name]} must be positive, got {value}")


def check_heap(spark: Any, campaigns: int) -> None:
    """A large lookup table is broadcast every micro-batch: refuse a driver heap it cannot fit in, saying how to get one."""
    need = campaigns * ysb.ADS_PER_CAMPAIGN * HEAP_PER_AD
    try:
        heap = int(spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory())
    except AttributeError:  # Spark Connect: the server's heap is not ours to read
        return
    if heap < need:
        ads = campaigns * ysb.ADS_PER_CAMPAIGN
        raise UnsupportedError(
            f"{campaigns:,} campaigns means a {ads:,}-row ad → campaign table, broadcast every micro-batch: it needs about "
            f"{need / 2**30:.1f} GiB of driver heap and this session has {heap / 2**30:.1f} GiB; "
            "start a new process with FUNKE_DRIVER_MEMORY=6g (or more)"
        )


def system_slug(system: str) -> str:
    return system.replace(" ", "-")


def run_once(spark: Any, system: str, job: Job, workdir: Path, checkpoint: Path) -> Run:
    """One system's run of ``job``, with the memory peaks while it ran, its state on disk and the load after it."""
    with MemorySampler(spark) as memory:
        if system == SYSTEM:
            if job.bounded:
                run = funke_bounded(spark, job, str(workdir), on_finished=memory.stop)
            else:
                run = funke_streaming(spark, job, str(workdir), str(checkpoint), on_finished=memory.stop)
        elif job.bounded:
            run = plain.bounded(spark, job.events, job.partitions, str(workdir), campaigns=job.campaigns, on_finished=memory.stop)
        else:
            run = plain.streaming(
                spark,
                job.events,
                job.rows_per_batch,
                job.partitions,
                str(workdir),
                job.timeout_s,
                checkpoint=str(checkpoint),
                campaigns=job.campaigns,
                exactly_once=job.exactly_once,
                trigger=job.trigger,
                on_finished=memory.stop,
            )
    state = None if job.bounded else state_bytes(checkpoint)
    return dataclasses.replace(run, memory=memory.peak, state_bytes=state, load=os.getloadavg()[0], cpu_s=memory.cpu_s)


def check_reference(views: int, n: int) -> list[str]:
    """The reference's total of views against Spark SQL's (``ysb.expected_view_count``): a hash unlike Spark's shows here."""
    spark_views = ysb.expected_view_count(n)
    if views == spark_views:
        return []
    return [f"the reference counts {views:,} views among {n:,} events, Spark SQL {spark_views:,}: its hash is not Spark's"]


def check_run(run: Run, reference: Mapping[WindowKey, int], n: int) -> list[str]:
    """What is wrong with one run, a line each: events read, rows dropped as late, its output's problems, its windows."""
    out = []
    if run.events != n:
        out.append(f"{run.system} ({run.mode}) read {run.events:,} events, not {n:,}")
    if run.late_rows_dropped:
        out.append(f"{run.system} ({run.mode}) dropped {run.late_rows_dropped:,} rows as late; the generator makes none late")
    out += [f"{run.system} ({run.mode}): {line}" for line in (*run.problems, *diff_windows(reference, run.windows))]
    return out


# -- funke's runs ------------------------------------------------------------------------


def _environment(spark: Any, checkpoint: str | None = None, interval: Any = None, *, operator_metrics: bool = False) -> fk.StreamEnvironment:
    from funke.config import settings

    return fk.StreamEnvironment(
        app="ysb-bench", spark=spark, checkpoint_dir=checkpoint, checkpoint_interval=interval, settings_=settings(operator_metrics=operator_metrics)
    )


def _finish(handle: Any, timeout_s: float, until: Callable[[Any], bool] | None = None) -> None:
    """Wait for the job to end (``until``: to have done what it must, then stop it: a source that does not end)."""
    if until is None:
        handle.wait(timeout=timeout_s)
    else:
        deadline = time.monotonic() + timeout_s
        while not until(handle) and time.monotonic() < deadline:
            handle.wait(timeout=0.2)
        if until(handle):
            handle.stop()
    if not handle.done:
        handle.stop()
        raise JobFailedError(f"funke's YSB job did not finish within {timeout_s:.0f} s")


def _sink(job: Job, path: str) -> Any:
    """Spark's file sink (exactly-once), or a bench sink writing per micro-batch (``funke.bench.sinks``)."""
    if job.trigger:
        return BatchParquetSink(path) if job.exactly_once else AppendParquetSink(path)
    return fk.sinks.files(path, overwrite=True) if job.exactly_once else AppendParquetSink(path)


def funke_streaming(
    spark: Any,
    job: Job,
    workdir: str,
    checkpoint: str,
    *,
    on_finished: Callable[[], None] = lambda: None,
    source: Any = None,
    pipeline: Callable[..., Any] = ysb.pipeline,
    until: Callable[[Any], bool] | None = None,
) -> Run:
    """``examples/ysb.py``'s pipeline as a streaming job writing Parquet, as ``funke run examples.ysb:job --output`` does.

    With ``job.trigger``, the data Artisans trigger on a 1-second processing-time trigger
    (``examples.ysb:trigger_job``), its output split into early and final rows by the
    watermark each micro-batch ran with. ``on_finished`` runs when the job has ended,
    before its output is read. ``source``: another source of the same events than the generator (Kafka).
    ``pipeline``: another program of the same dataflow (``funke.bench.sql.pipeline``: it in Flink SQL).
    ``until``: for a source that does not end (Kafka through Spark's connector), when the job is done.
    """
    env = _environment(spark, checkpoint, fk.seconds(1) if job.trigger else None, operator_metrics=job.operator_metrics)
    source = source or dataclasses.replace(
        plain.ysb_events(job.events, job.campaigns), rows_per_batch=job.rows_per_batch, batch_seconds=job.batch_seconds
    )
    trigger = ysb.DataArtisansTrigger() if job.trigger else None
    output = f"{workdir}/out"
    counts = pipeline(env, source, trigger=trigger, campaign_table=ysb.campaigns(job.campaigns))
    counts.sink_to(_sink(job, output), uid="campaign-counts")
    progress = ProgressLog(spark) if job.trigger else None
    try:
        started = time.monotonic()
        handle = env.execute()
        _finish(handle, job.timeout_s, until)
        wall = time.monotonic() - started
    finally:
        if progress is not None:
            progress.close()
    on_finished()
    uids = sorted(s.sink.uid for s in handle.states)
    if uids not in (["campaign-counts"], ["campaign-counts", "dead-letters"]):
        raise JobFailedError(f"funke ran YSB as queries {uids}; the harness expects the counts (and the dead letters)")
    state = next(s for s in handle.states if s.sink.uid == "campaign-counts")  # the dead-letter query runs alongside
    batches = tuple(Batch(i, ms, rows) for i, (ms, rows) in enumerate(zip(state.batch_ms, state.batch_rows, strict=True)))
    m = handle.metrics()
    run = Run(SYSTEM, "streaming", m["input_rows"], wall, batches, {}, m["late_rows_dropped"])
    if progress is None:
        return dataclasses.replace(run, windows=parquet_windows(spark, output))
    firings = split_firings(batch_window_rows(spark, output), progress.watermarks(state.query.id))
    return dataclasses.replace(run, windows=firings.final, early_rows=firings.early_rows, problems=firings.problems)


def funke_bounded(spark: Any, job: Job, workdir: str, *, on_finished: Callable[[], None] = lambda: None) -> Run:
    """``examples/ysb.py``'s pipeline run bounded (one Spark batch job), writing Parquet."""
    env = _environment(spark, operator_metrics=job.operator_metrics)
    counts = ysb.pipeline(env, plain.ysb_events(job.events, job.campaigns), campaign_table=ysb.campaigns(job.campaigns))
    counts.sink_to(fk.sinks.files(f"{workdir}/out", overwrite=True), uid="campaign-counts")
    started = time.monotonic()
    handle = env.execute(bounded=True)
    _finish(handle, job.timeout_s)
    wall = time.monotonic() - started
    on_finished()
    m = handle.metrics()
    windows = parquet_windows(spark, f"{workdir}/out")
    return Run(SYSTEM, "bounded", m["input_rows"], wall, (Batch(0, round(wall * 1000), m["input_rows"]),), windows)


def funke_latency(spark: Any, rate: float, seconds: float, workdir: str, *, latency_mode: str = "micro-batch") -> LatencyRun:
    """YSB over funke's paced generator for ``seconds``; event time = the micro-batch's wall clock (``current_timestamp()``).

    ``latency_mode``: the job's (``"latency-first"``: its window on funke's operator, firing in the
    micro-batch whose elements pass the watermark)."""
    env = _environment(spark, f"{workdir}/checkpoint").set_latency_mode(latency_mode)
    paced = ysb.events(None, rate=rate)
    wall_clock = fk.expr("unix_millis(current_timestamp())")
    source = dataclasses.replace(paced, columns=tuple((k, wall_clock if k == "event_time" else e) for k, e in paced.columns))
    ysb.pipeline(env, source).sink_to(fk.sinks.files(f"{workdir}/out", overwrite=True), uid="campaign-counts")
    progress = ProgressLog(spark)
    try:
        handle = env.execute()
        try:
            handle.wait(timeout=seconds)
        finally:
            handle.stop()
    finally:
        progress.close()
    query = next(s.query for s in handle.states if s.sink.uid == "campaign-counts")
    source_name = "funke generator at a fixed rate (event time: current_timestamp())"
    if latency_mode != "micro-batch":
        source_name += f"; latency mode {latency_mode}"
    return latency_run(SYSTEM, seconds, rate, source_name, arrivals(spark, f"{workdir}/out"), progress.of(query.id))
