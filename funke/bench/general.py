"""``funke bench general``: the general path against the native path, in one process and one session.

Runs, in turn over the same generated events (each writing Parquet): YSB on the native
path, YSB with the data Artisans trigger on the general path, and (``--sessions``) the
100 000-user session job. Reports steady events/s, micro-batch p50 / p99 and the ratio
general / native measured in the same run. Every job's output is checked before its
figures count: both YSB jobs' final window counts against the numpy reference
(``reference_counts``), the sessions against ``reference_sessions`` (numpy, Flink's
merging rule), each session exactly.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The sessions job of this bench: ``examples.sessions.job``'s defaults.
SESSION_KEYS = 100_000
SESSION_GAP_MS = 2_000
SESSION_EVENTS_PER_SECOND = 100_000


@dataclass(frozen=True)
class GeneralRun:
    """One job of the bench: its figures and what its output check found (empty: exact)."""

    job: str
    steady_rows_per_s: int | None
    batch_ms_p50: int | None
    batch_ms_p99: int | None
    load: float
    checked: str
    problems: tuple[str, ...] = ()
    ratio_to_native: float | None = None


def run_general(
    spark: Any,
    events: int,
    *,
    sessions: bool = False,
    session_keys: int = SESSION_KEYS,
    warmup: bool = True,
    on_step: Callable[[str], None] = lambda s: None,
) -> list[GeneralRun]:
    """Both YSB jobs (and the sessions job) over ``events`` events, each checked; the ratios are to the native YSB."""
    import dataclasses

    from funke.bench import ysb as bench
    from funke.bench.reference import reference_counts

    jobs = [("YSB native", False), ("YSB data Artisans trigger (general)", True)]
    root = Path(tempfile.mkdtemp(prefix="funke-bench-general-"))
    out: list[GeneralRun] = []
    try:
        on_step(f"reference: views per campaign and window in numpy over {events:,} events")
        reference = reference_counts(events)
        if warmup:
            on_step("warm-up: both YSB jobs, 1 M events")
            for i, (_, trigger) in enumerate(jobs):
                warm = bench.Job(1_000_000, 1_000_000, trigger=trigger, partitions=spark.sparkContext.defaultParallelism)
                bench.funke_streaming(spark, warm, str(root / f"warm-{i}"), str(root / f"warm-{i}-cp"))
        for i, (name, trigger) in enumerate(jobs):
            on_step(f"{name}: {events:,} events")
            cores = spark.sparkContext.defaultParallelism
            job = bench.Job(events, 1_000_000, trigger=trigger, partitions=cores, timeout_s=300 + events / 5_000)
            run = bench.funke_streaming(spark, job, str(root / f"job-{i}"), str(root / f"job-{i}-cp"))
            problems = tuple(bench.check_run(run, reference, events))
            p50, p99 = run.batch_ms_p50, run.batch_ms_p99
            steady = run.steady_events_per_s
            out.append(
                GeneralRun(
                    name,
                    round(steady) if steady else None,
                    round(p50) if p50 is not None else None,
                    round(p99) if p99 is not None else None,
                    round(os.getloadavg()[0], 1),
                    f"{len(run.windows):,} final windows equal to the reference",
                    problems,
                )
            )
        if sessions:
            on_step(f"sessions, {session_keys:,} users (general): {events:,} events")
            out.append(_sessions(events, str(root / "sessions"), session_keys))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    wrong = [f"{r.job}: {p}" for r in out for p in r.problems]
    if wrong:
        message = "the general bench's results are wrong, so its figures are not kept:\n- " + "\n- ".join(wrong)
        raise bench.BenchMismatchError(message)
    native = out[0].steady_rows_per_s or 0
    return [
        dataclasses.replace(r, ratio_to_native=round((r.steady_rows_per_s or 0) / native, 2) if native else None) for r in out
    ]


def _sessions(events: int, path: str, keys: int, gap_ms: int = SESSION_GAP_MS) -> GeneralRun:
    import numpy as np

    import examples.sessions as sess
    from funke.bench.reference import reference_sessions

    env = sess.job(events, path, keys=keys, gap_ms=gap_ms)
    handle = env.execute().wait()
    m = handle.metrics()
    columns = ("user_id", "unix_millis(window_start)", "unix_millis(window_end)", "count")
    got = handle.spark.read.parquet(path).selectExpr(*columns).toPandas().to_numpy()
    got = got[np.lexsort((got[:, 1], got[:, 0]))] if len(got) else got.reshape(0, 4)
    expected = reference_sessions(events, keys=keys, events_per_second=SESSION_EVENTS_PER_SECOND, gap_ms=gap_ms)
    problems = session_problems(expected, got)
    if m.get("input_rows") != events:
        problems.insert(0, f"the sessions job read {m.get('input_rows'):,} events, not {events:,}")
    if m.get("late_rows_dropped"):
        problems.insert(0, f"the sessions job dropped {m['late_rows_dropped']:,} rows as late; the generator makes none late")
    return GeneralRun(
        f"sessions, {keys:,} users (general)",
        m.get("steady_rows_per_s"),
        m.get("batch_ms_p50"),
        m.get("batch_ms_p99"),
        round(os.getloadavg()[0], 1),
        f"{len(expected):,} sessions equal to the reference",
        tuple(problems),
    )


def session_problems(expected: Any, got: Any, limit: int = 3) -> list[str]:
    """Where two session tables (rows ``user, start, end, count``, sorted) differ, a line each.

    >>> import numpy as np
    >>> a = np.array([[1, 0, 5, 2], [2, 0, 3, 1]])
    >>> session_problems(a, a)
    []
    >>> session_problems(a, np.array([[1, 0, 5, 3], [2, 0, 3, 1]]))
    ['session row 0: expected user 1 [0, 5) count 2, got user 1 [0, 5) count 3']
    >>> session_problems(a, a[:1])
    ['2 sessions expected, 1 written']
    """
    if len(expected) != len(got):
        return [f"{len(expected):,} sessions expected, {len(got):,} written"]
    differ = (expected != got).any(axis=1).nonzero()[0]
    return [
        f"session row {k}: expected user {e[0]} [{e[1]}, {e[2]}) count {e[3]}, got user {g[0]} [{g[1]}, {g[2]}) count {g[3]}"
        for k, e, g in ((int(k), expected[k], got[k]) for k in differ[:limit])
    ]


def general_summary(runs: list[GeneralRun]) -> str:
    """The bench as one line of ``docs/benchmarks.md`` (steady events/s, micro-batch times, what was checked).

    >>> a = GeneralRun("native", 400_000, 2_000, 2_500, 2.0, "exact", (), 1.0)
    >>> for part in general_summary([a, GeneralRun("trigger", 100_000, 9_000, 9_900, 3.1, "exact", (), 0.25)]).split("; "):
    ...     print(part)
    native 400,000 events/s (p50 / p99 2,000 / 2,500 ms
    exact)
    trigger 100,000 events/s (p50 / p99 9,000 / 9,900 ms
    exact), **0.25** of native
    load 2.0 to 3.1
    """
    parts = []
    for r in runs:
        ratio = "" if r is runs[0] else f", **{r.ratio_to_native}** of native"
        batches = f"p50 / p99 {r.batch_ms_p50 or 0:,} / {r.batch_ms_p99 or 0:,} ms"
        parts.append(f"{r.job} {r.steady_rows_per_s or 0:,} events/s ({batches}; {r.checked}){ratio}")
    loads = [r.load for r in runs]
    return "; ".join(parts) + f"; load {min(loads)} to {max(loads)}"
