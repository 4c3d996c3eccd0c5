"""``funke bench general``: the general path against the native path, in one process and one session.

Runs, in turn over the same generated events (each writing Parquet): YSB on the native
path, YSB with the data Artisans trigger on the general path, and (``--sessions``) the
100 000-user session job, then the same sessions as a Spark user writes them in plain
PySpark (``withWatermark``, ``groupBy(session_window(...), user).count()``, appended to
Parquet, as many clicks per micro-batch as funke's generator reads; Spark's last sessions
are closed by ``plain``'s flush event). Reports steady events/s, micro-batch p50 / p99 and
the ratio to the job each row compares with, measured in the same run: general / native
for YSB, funke / plain PySpark for the sessions. Every job's output is checked before its
figures count: both YSB jobs' final window counts against the numpy reference
(``reference_counts``), both session jobs' against ``reference_sessions`` (numpy, Flink's
merging rule), each session exactly.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funke.bench.measure import steady_text

#: The sessions job of this bench: ``examples.sessions.job``'s defaults.
SESSION_KEYS = 100_000
SESSION_GAP_MS = 2_000
SESSION_EVENTS_PER_SECOND = 100_000
#: ``examples.sessions.job``'s watermark: bounded out-of-orderness of 1 s.
SESSION_BOUND_MS = 1_000


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
    #: steady events/s as a fraction of the job named by ``versus`` (a short name: "native", "plain PySpark")
    ratio: float | None = None
    versus: str = ""


def run_general(
    spark: Any,
    events: int,
    *,
    sessions: bool = False,
    session_keys: int = SESSION_KEYS,
    warmup: bool = True,
    on_step: Callable[[str], None] = lambda s: None,
) -> list[GeneralRun]:
    """Both YSB jobs (and both sessions jobs) over ``events`` events, each checked; the ratios are
    general / native YSB and funke / plain PySpark sessions."""
    from funke.bench import ysb as bench
    from funke.bench.reference import reference_counts, reference_sessions

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
            row = GeneralRun(
                name,
                round(steady) if steady else None,
                round(p50) if p50 is not None else None,
                round(p99) if p99 is not None else None,
                round(os.getloadavg()[0], 1),
                f"{len(run.windows):,} final windows equal to the reference",
                problems,
            )
            out.append(_versus(row, out[0], "native") if out else row)
        if sessions:
            on_step(f"reference: sessions of {session_keys:,} users in numpy over {events:,} events")
            rate = SESSION_EVENTS_PER_SECOND
            expected = reference_sessions(events, keys=session_keys, events_per_second=rate, gap_ms=SESSION_GAP_MS)
            on_step(f"sessions, {session_keys:,} users (general): {events:,} events")
            funke = _sessions(events, str(root / "sessions"), expected, session_keys)
            on_step(f"sessions, {session_keys:,} users (plain PySpark): {events:,} events")
            plain = _plain_sessions(spark, events, str(root / "plain-sessions"), expected, session_keys)
            out += [_versus(funke, plain, "plain PySpark"), plain]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    wrong = [f"{r.job}: {p}" for r in out for p in r.problems]
    if wrong:
        message = "the general bench's results are wrong, so its figures are not kept:\n- " + "\n- ".join(wrong)
        raise bench.BenchMismatchError(message)
    return out


def _versus(run: GeneralRun, baseline: GeneralRun, name: str) -> GeneralRun:
    """``run`` with its steady events/s as a fraction of ``baseline``'s (called ``name`` in the summary)."""
    base = baseline.steady_rows_per_s
    return dataclasses.replace(run, ratio=round((run.steady_rows_per_s or 0) / base, 2) if base else None, versus=name)


def _written_sessions(spark: Any, path: str) -> Any:
    """The session rows ``user, start ms, end ms, count`` written at ``path``, sorted like ``reference_sessions``."""
    import numpy as np

    columns = ("user_id", "unix_millis(window_start)", "unix_millis(window_end)", "count")
    got = spark.read.parquet(path).selectExpr(*columns).toPandas().to_numpy()
    return got[np.lexsort((got[:, 1], got[:, 0]))] if len(got) else got.reshape(0, 4)


def _sessions(events: int, path: str, expected: Any, keys: int, gap_ms: int = SESSION_GAP_MS) -> GeneralRun:
    """funke's session job (``examples.sessions``) on the general path, checked against ``expected``."""
    import examples.sessions as sess

    env = sess.job(events, path, keys=keys, gap_ms=gap_ms)
    handle = env.execute().wait()
    m = handle.metrics()
    problems = session_problems(expected, _written_sessions(handle.spark, path))
    if m.get("input_rows") != events:
        problems.insert(0, f"the sessions job read {m.get('input_rows'):,} events, not {events:,}")
    if m.get("late_rows_dropped"):
        problems.insert(0, f"the sessions job dropped {m['late_rows_dropped']:,} rows as late; the generator makes none late")
    return GeneralRun(
        f"sessions, {keys:,} users (general)",
        m.get("steady_rows_per_s"),
        m.get("steady_batch_ms_p50"),
        m.get("steady_batch_ms_p99"),
        round(os.getloadavg()[0], 1),
        f"{len(expected):,} sessions equal to the reference",
        tuple(problems),
    )


def _plain_sessions(spark: Any, events: int, workdir: str, expected: Any, keys: int, gap_ms: int = SESSION_GAP_MS) -> GeneralRun:
    """The same sessions as a Spark user writes them: ``session_window`` over the same clicks, checked against ``expected``.

    The clicks are ``examples.sessions.clicks``' own SQL over Spark's ``rate-micro-batch`` source,
    as many a micro-batch as funke's generator reads; after the last click comes ``plain``'s
    flush event (a click of some user far in the future: its session never closes, so it is
    never written), whose watermark makes Spark write every other session.
    """
    from pyspark.sql import functions as F

    import examples.sessions as sess
    from funke.bench import plain

    clicks = sess.clicks(events, keys=keys, events_per_second=SESSION_EVENTS_PER_SECOND)
    columns = plain.event_sql(clicks)
    columns["t"] = f"timestamp_millis(IF(i = {events}, {plain.FLUSH_MS}, {columns.pop('event_time')}))"
    source = plain.rate_events(spark, events + 1, clicks.rows_per_batch, columns, SESSION_BOUND_MS)
    counts = source.groupBy(F.session_window("t", f"{gap_ms} milliseconds").alias("session"), "user_id").count()
    window = [F.col("session.start").alias("window_start"), F.col("session.end").alias("window_end")]
    output, checkpoint, timeout_s = f"{workdir}/out", f"{workdir}/checkpoint", 300 + events / 5_000
    run = plain.append_until_flushed(spark, counts.select("user_id", *window, "count"), events, output, checkpoint, timeout_s)
    problems = session_problems(expected, _written_sessions(spark, output))
    if run.events != events:
        problems.insert(0, f"the plain sessions job read {run.events:,} events, not {events:,}")
    if run.late_rows_dropped:
        problems.insert(0, f"the plain sessions job dropped {run.late_rows_dropped:,} late rows; the generator makes none late")
    steady, p50, p99 = run.steady_events_per_s, run.batch_ms_p50, run.batch_ms_p99
    return GeneralRun(
        f"sessions, {keys:,} users ({plain.SYSTEM})",
        round(steady) if steady else None,
        round(p50) if p50 is not None else None,
        round(p99) if p99 is not None else None,
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

    >>> a = GeneralRun("native", 400_000, 2_000, 2_500, 2.0, "exact")
    >>> b = GeneralRun("trigger", 100_000, 9_000, 9_900, 3.1, "exact", (), 0.25, "native")
    >>> c = GeneralRun("sessions (general)", 60_000, 8_000, 9_000, 2.5, "exact", (), 0.5, "plain PySpark")
    >>> for part in general_summary([a, b, c, GeneralRun("sessions (plain PySpark)", 120_000, 4_000, 5_000, 2.4, "exact")]).split("; "):
    ...     print(part)
    native 400,000 events/s (p50 / p99 2,000 / 2,500 ms
    exact)
    trigger 100,000 events/s (p50 / p99 9,000 / 9,900 ms
    exact), **0.25** of native
    sessions (general) 60,000 events/s (p50 / p99 8,000 / 9,000 ms
    exact), **0.5** of plain PySpark
    sessions (plain PySpark) 120,000 events/s (p50 / p99 4,000 / 5,000 ms
    exact)
    load 2.0 to 3.1
    """
    parts = []
    for r in runs:
        ratio = f", **{r.ratio}** of {r.versus}" if r.versus and r.ratio else ""
        batches = f"p50 / p99 {r.batch_ms_p50 or 0:,} / {r.batch_ms_p99 or 0:,} ms"
        parts.append(f"{r.job} {steady_text(r.steady_rows_per_s)} ({batches}; {r.checked}){ratio}")
    loads = [r.load for r in runs]
    return "; ".join(parts) + f"; load {min(loads)} to {max(loads)}"
