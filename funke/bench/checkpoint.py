"""``funke bench checkpoint``: what exactly-once costs funke's streaming YSB, measured in one run.

funke's streaming YSB (``examples/ysb.py``, the base variant) runs with ``exactly_once``
on and off in turn, over the same events, in one process and one SparkSession: ``rounds``
rounds after a warm-up of each, alternating which goes first. On: Spark's file sink with
its ``_spark_metadata`` log, the checkpoint on disk. Off: a ``foreachBatch`` appending
plain Parquet (at-least-once), the checkpoint on tmpfs. Spark writes its offset and
commit logs every micro-batch either way; there is no switching those off. Both runs'
windows must equal the numpy reference, else ``BenchMismatchError``. The ratio on / off is
the median of the per-round ratios of steady events/s: 1.0 means exactly-once is free.
"""

from __future__ import annotations

import dataclasses
import shutil
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funke.bench.measure import Run
from funke.bench.reference import reference_counts
from funke.bench.resources import filesystem
from funke.bench.ysb import (
    SYSTEM,
    BenchMismatchError,
    Job,
    check_reference,
    check_run,
    check_sizes,
    checkpoint_root,
    median_run,
    round_ratios,
    run_once,
    session,
    warmup_job,
)

MODES = ("on", "off")


@dataclass(frozen=True)
class CheckpointBench:
    """funke's runs with exactly-once on and off (one of each per round), and what they were checked against."""

    events: int
    rows_per_batch: int
    on_runs: tuple[Run, ...]
    off_runs: tuple[Run, ...]
    reference_windows: int
    #: Filesystem of the checkpoints, per mode (``ext4`` for on, ``tmpfs`` for off here).
    on_fs: str
    off_fs: str
    mismatches: tuple[str, ...] = ()

    @property
    def rounds(self) -> int:
        return len(self.on_runs)

    @property
    def on(self) -> Run:
        return median_run(self.on_runs)

    @property
    def off(self) -> Run:
        return median_run(self.off_runs)

    @property
    def correct(self) -> bool:
        return not self.mismatches

    @property
    def round_ratios(self) -> tuple[float, ...]:
        """Per round, steady events/s with exactly-once on over off (< 1: exactly-once costs)."""
        return round_ratios(self.on_runs, self.off_runs)

    @property
    def ratio(self) -> float | None:
        return statistics.median(self.round_ratios) if self.round_ratios else None


def run_checkpoint(
    spark: Any = None,
    *,
    events: int = 5_000_000,
    rows_per_batch: int = 1_000_000,
    rounds: int = 3,
    warmup: bool = True,
    timeout_s: float | None = None,
    on_step: Callable[[str], None] | None = None,
    check: bool = True,
) -> CheckpointBench:
    """funke's streaming YSB with exactly-once on and off, ``rounds`` times each, alternating which goes first."""
    check_sizes(events=events, rows_per_batch=rows_per_batch, rounds=rounds)
    step = on_step or (lambda _: None)
    spark = spark or session()
    base = Job(
        events,
        rows_per_batch,
        partitions=max(1, spark.sparkContext.defaultParallelism),
        timeout_s=timeout_s or 300 + events / 20_000,
    )
    jobs = {mode: dataclasses.replace(base, exactly_once=mode == "on") for mode in MODES}
    workdir = Path(tempfile.mkdtemp(prefix="funke-bench-checkpoint-"))
    roots = {mode: checkpoint_root(jobs[mode].exactly_once, workdir) for mode in MODES}
    try:
        step(f"reference: counting views per campaign and window in numpy over {events:,} events")
        reference = reference_counts(events)
        mismatches = check_reference(sum(reference.values()), events)
        if mismatches and check:
            raise BenchMismatchError(mismatches[0])
        if warmup:
            for mode in MODES:
                warm = warmup_job(jobs[mode])
                step(f"warm-up: funke, exactly-once {mode}, {warm.events:,} events (JIT, code generation)")
                run_once(spark, SYSTEM, warm, workdir / f"{mode}-warm-up", roots[mode] / f"{mode}-warm-up")
        runs: dict[str, list[Run]] = {mode: [] for mode in MODES}
        for k in range(rounds):
            for mode in MODES if k % 2 == 0 else MODES[::-1]:
                step(
                    f"funke, exactly-once {mode}: {events:,} events, {rows_per_batch:,} per micro-batch (round {k + 1} of {rounds})"
                )
                run = run_once(spark, SYSTEM, jobs[mode], workdir / f"{mode}-{k}", roots[mode] / f"{mode}-{k}")
                runs[mode].append(run)
                mismatches += [f"exactly-once {mode}: {line}" for line in check_run(run, reference, events)]
        on_fs, off_fs = filesystem(roots["on"]), filesystem(roots["off"])
    finally:
        for path in (workdir, *roots.values()):
            shutil.rmtree(path, ignore_errors=True)
    result = CheckpointBench(
        events, rows_per_batch, tuple(runs["on"]), tuple(runs["off"]), len(reference), on_fs, off_fs, tuple(mismatches)
    )
    if check and mismatches:
        raise BenchMismatchError("the benchmark's results are wrong, so its figures are not kept:\n- " + "\n- ".join(mismatches))
    return result
