"""What one system's benchmark run measured, and the figures derived from it.

Both systems are summarised by the same code: per micro-batch the duration Spark reports
(``triggerExecution``) and the input events it read. Steady state skips the first
``WARMUP_BATCHES`` micro-batches (JIT, state store and broadcast warm-up). Beside the
times: memory peaks sampled while a run goes (:class:`MemorySampler`), the bytes of its
state store on disk (:func:`state_bytes`) and, for outputs written per micro-batch, which
window rows were early firings and which the final one (:func:`split_firings`).

>>> run = Run("x", "streaming", 30, 1.0, tuple(Batch(b, 100, 10 if b < 3 else 0) for b in range(4)), {})
>>> run.steady_events_per_s, run.batch_ms_p50, run.events_per_s
(100.0, 100, 30.0)
>>> percentile([5, 1, 4, 2, 3], 0.5), percentile([5, 1, 4, 2, 3], 0.99)
(3, 5)
>>> gib(3 * 2**30), size(5 * 2**20), size(44_160), size(900)
('3.00 GiB', '5.0 MiB', '43 KiB', '900 B')
"""

from __future__ import annotations

import bisect
import datetime as dt
import os
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from examples import ysb
from funke.bench.reference import WindowKey
from funke.runtime.metrics import WARMUP_BATCHES, percentile  # (the job handle's steady figures use them too)

#: The watermark's delay behind the largest event time (``ysb.OUT_OF_ORDERNESS``).
WATERMARK_DELAY_MS = round(ysb.OUT_OF_ORDERNESS.total_seconds() * 1000)
#: What a figure reads when the run was too small to have it; docs/benchmarks.md takes no line that says so.
TOO_SMALL = "too small to measure"


def steady_text(rate: float | None, unit: str = "events/s") -> str:
    """A steady rate, or why a run has none (it needs micro-batches past the first ``WARMUP_BATCHES``).

    >>> steady_text(123456.7), steady_text(None)
    ('123,457 events/s', 'too small to measure (a steady rate needs micro-batches after the first 2: give more --events)')
    """
    if not rate:
        return f"{TOO_SMALL} (a steady rate needs micro-batches after the first {WARMUP_BATCHES}: give more --events)"
    return f"{rate:,.0f} {unit}".rstrip()


def finish_within(env: Any, timeout_s: float, what: str) -> float:
    """Run ``env``'s finite job from a clean checkpoint until it ends; its wall seconds.

    A job still running after ``timeout_s`` is stopped, and ``JobFailedError`` names ``what``."""
    import time

    from funke.errors import JobFailedError

    started = time.monotonic()
    handle = env.execute(fresh=True)
    handle.wait(timeout=timeout_s)
    if not handle.done:
        handle.stop()
        raise JobFailedError(f"{what} did not finish within {timeout_s:.0f} s")
    return time.monotonic() - started


@dataclass(frozen=True)
class Batch:
    batch_id: int
    duration_ms: int
    events: int


@dataclass(frozen=True)
class Memory:
    """Peaks sampled while one run went (bytes).

    Both systems run in one process and one JVM, one after the other: the JVM's heap in use
    (sampled, after a GC before the run) is the figure that belongs to a run; the resident
    sizes of the Python driver and the JVM process rarely shrink, so a later run inherits them.
    """

    python_rss: int
    #: The JVM process and the Python workers it started (see ``tree_rss``).
    jvm_rss: int | None = None
    jvm_heap: int | None = None

    @property
    def rss(self) -> int:
        """The driver's resident bytes: the Python process plus (local Spark) the JVM's process tree."""
        return self.python_rss + (self.jvm_rss or 0)


@dataclass(frozen=True)
class Run:
    """One system's run of the YSB job over the generated events, and the windows it emitted.

    ``windows`` holds the final result per window; ``early_rows`` the rows written before it
    (early firings, update-mode updates), ``problems`` what was wrong in the output beyond
    the counts (a window fired after its end, a final row missing). ``load`` is the 1-minute
    load average when the run ended.
    """

    system: str
    mode: str
    events: int
    wall_s: float
    batches: tuple[Batch, ...]
    windows: Mapping[WindowKey, int] = field(repr=False)
    late_rows_dropped: int = 0
    early_rows: int | None = None
    problems: tuple[str, ...] = ()
    memory: Memory | None = None
    state_bytes: int | None = None
    load: float | None = None
    #: CPU seconds the run used: this Python process, the JVM and its Python workers.
    #: Unlike wall time it hardly moves when other processes share the cores.
    cpu_s: float | None = None

    @property
    def events_per_s(self) -> float:
        """Events over the wall time of the whole run (start, every batch, shutdown)."""
        return self.events / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def steady(self) -> tuple[Batch, ...]:
        return self.batches[WARMUP_BATCHES:] if self.mode == "streaming" else self.batches

    @property
    def steady_events_per_s(self) -> float | None:
        """Events per second of micro-batch time, warm-up batches and batches without input left out."""
        busy = [b for b in self.steady if b.events > 0]
        ms = sum(b.duration_ms for b in busy)
        return sum(b.events for b in busy) / (ms / 1000) if busy and ms > 0 else None

    @property
    def batch_ms_p50(self) -> float | None:
        return percentile([b.duration_ms for b in self.steady], 0.5) if self.steady else None

    @property
    def batch_ms_p99(self) -> float | None:
        return percentile([b.duration_ms for b in self.steady], 0.99) if self.steady else None

    @property
    def events_per_cpu_s(self) -> float | None:
        """Events per CPU second over the whole run: the work per event, whatever else runs on the machine."""
        return self.events / self.cpu_s if self.cpu_s else None

    @property
    def headline_events_per_s(self) -> float | None:
        """The throughput compared across systems: steady state when streaming, the whole job when bounded."""
        return self.steady_events_per_s if self.mode == "streaming" else self.events_per_s


#: What a window row's latency past the watermark is made of (:func:`latency_parts`), in order.
LATENCY_PARTS = (
    "until the closing batch starts",
    "the closing batch",
    "until the emitting batch starts",
    "the emitting batch until the file",
)


@dataclass(frozen=True)
class Span:
    """One micro-batch on the wall clock (epoch ms): its start, its end, the watermark it ran with, its phases."""

    batch: int
    start_ms: int
    end_ms: int
    watermark_ms: int | None
    #: Spark's ``durationMs`` of the batch: ``latestOffset``, ``queryPlanning``, ``addBatch``, ``walCommit``, ...
    phases_ms: Mapping[str, int] = field(default_factory=dict)


def spans(reports: Iterable[Any]) -> tuple[Span, ...]:
    """A query's progress reports as :class:`Span` s, in batch order (``timestamp`` is when a batch started)."""
    out = []
    for p in sorted(reports, key=lambda p: p.batchId):
        phases = {k: int(v) for k, v in (p.durationMs or {}).items()}
        start = watermark_ms(p.timestamp)
        if start is None:
            continue
        end = start + phases.get("triggerExecution", 0)
        out.append(Span(p.batchId, start, end, watermark_ms((p.eventTime or {}).get("watermark")), phases))
    return tuple(out)


def latency_parts(arrivals: Iterable[tuple[int, int]], timeline: Sequence[Span]) -> tuple[tuple[int, int, int, int], ...]:
    """Each window row's latency split along the query's micro-batches (ms, in :data:`LATENCY_PARTS` order).

    ``arrivals``: per row, (window end, when its file was written), epoch ms. The watermark
    passes the window's end at window end + :data:`WATERMARK_DELAY_MS`, in event time, which
    these runs take from the wall clock. The *emitting* batch is the first that ran with a
    watermark at or past the window's end; the *closing* batch is the one before it: its
    events moved the watermark there (Spark computes the watermark at the end of a batch and
    uses it in the next). The four parts add up to the row's latency. A row with no emitting
    batch, or none before it, is left out.

    >>> tl = [Span(0, 1000, 1500, 0), Span(1, 10_600, 11_400, 0), Span(2, 11_500, 12_300, 5_000)]
    >>> latency_parts([(5_000, 12_100)], tl)
    ((600, 800, 100, 600),)
    >>> sum(latency_parts([(5_000, 12_100)], tl)[0]) == 12_100 - (5_000 + WATERMARK_DELAY_MS)
    True
    """
    out = []
    for end, written in arrivals:
        j = next((i for i, s in enumerate(timeline) if s.watermark_ms is not None and s.watermark_ms >= end), None)
        if not j:
            continue
        closing, emitting = timeline[j - 1], timeline[j]
        due = end + WATERMARK_DELAY_MS
        waited, closed = closing.start_ms - due, closing.end_ms - closing.start_ms
        out.append((waited, closed, emitting.start_ms - closing.end_ms, written - emitting.start_ms))
    return tuple(out)


@dataclass(frozen=True)
class LatencyRun:
    """Window results of a wall-clock-paced run: how long after the watermark passed each was written."""

    system: str
    seconds: float
    rate: float
    source: str
    #: Per window row: when it was written minus (window end + watermark delay), in ms.
    samples_ms: tuple[int, ...]
    #: Per window row its latency split along the micro-batches (:func:`latency_parts`).
    parts_ms: tuple[tuple[int, int, int, int], ...] = ()
    #: The query's micro-batches (:func:`spans`).
    timeline: tuple[Span, ...] = ()

    @property
    def p50_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.5) if self.samples_ms else None

    @property
    def p99_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.99) if self.samples_ms else None

    @property
    def parts_p50_ms(self) -> tuple[float, ...] | None:
        """The p50 of each latency part over the rows (each part on its own: they need not add up)."""
        if not self.parts_ms:
            return None
        return tuple(percentile([row[i] for row in self.parts_ms], 0.5) for i in range(len(LATENCY_PARTS)))

    @property
    def phases_p50_ms(self) -> dict[str, float]:
        """The p50 of each of Spark's batch phases over the run's micro-batches."""
        names = sorted({k for s in self.timeline for k in s.phases_ms})
        return {k: percentile([s.phases_ms[k] for s in self.timeline if k in s.phases_ms], 0.5) for k in names}


def epoch_ms(value: Any) -> int:
    """Epoch milliseconds of a timestamp collected from Spark.

    PySpark hands timestamps back as naive datetimes in the process's local time zone,
    which ``datetime.timestamp()`` reverses.
    """
    if isinstance(value, dt.datetime):
        return round(value.timestamp() * 1000)
    return int(value)


def arrivals(spark: Any, path: str) -> tuple[tuple[int, int], ...]:
    """Per window row a job wrote as Parquet: (window end, when it was written), epoch ms.

    A row reached the sink when its file was written (the file's modification time).
    """
    rows = spark.read.parquet(path).select("window_end", "_metadata.file_modification_time").collect()
    return tuple((epoch_ms(r["window_end"]), epoch_ms(r["file_modification_time"])) for r in rows)


def latency_run(
    system: str, seconds: float, rate: float, source: str, rows: Iterable[tuple[int, int]], reports: Iterable[Any]
) -> LatencyRun:
    """A :class:`LatencyRun` from the rows a job wrote (:func:`arrivals`) and its query's progress reports.

    A row's latency is how long after the watermark passed the window's end it was written:
    the watermark passed it at window end + the watermark delay, in event time, which these
    runs take from the wall clock.
    """
    rows, timeline = tuple(rows), spans(reports)
    samples = tuple(written - (end + WATERMARK_DELAY_MS) for end, written in rows)
    return LatencyRun(system, seconds, rate, source, samples, latency_parts(rows, timeline), timeline)


def window_counts(rows: Iterable[Mapping[str, Any]]) -> dict[WindowKey, int]:
    """``{(campaign_id, start ms, end ms): count}``; a window seen twice is an error, not a sum."""
    out: dict[WindowKey, int] = {}
    for r in rows:
        key = (r["campaign_id"], epoch_ms(r["window_start"]), epoch_ms(r["window_end"]))
        if key in out:
            raise ValueError(f"window {key} was emitted twice (counts {out[key]} and {r['count']})")
        out[key] = int(r["count"])
    return out


def _window_frame(spark: Any, path: str, *extra: str) -> Any:
    """The window rows under ``path`` as pandas, times as epoch ms (Arrow, not a Row per window)."""
    columns = ["campaign_id", "unix_millis(window_start) AS window_start", "unix_millis(window_end) AS window_end", "count"]
    return spark.read.parquet(path).selectExpr(*columns, *extra).toPandas()


def parquet_windows(spark: Any, path: str) -> dict[WindowKey, int]:
    """The window results a job wrote as Parquet, one row per window.

    Spark's file sink leaves a ``_spark_metadata`` log, and the reader then takes only the
    files of committed batches; without it (a ``foreachBatch`` writing plain Parquet, in
    ``batch_id=N`` directories or not) it takes every Parquet file under ``path``.
    """
    return window_counts(_window_frame(spark, path).to_dict("records"))


@dataclass(frozen=True)
class Firings:
    """A window job's output rows split into the final result per window and the rows before it."""

    final: dict[WindowKey, int]
    early_rows: int
    problems: tuple[str, ...] = ()


def batch_window_rows(spark: Any, path: str) -> list[tuple[WindowKey, int, int]]:
    """``(window, batch id, count)`` per row written in ``batch_id=N`` directories (``funke.bench.sinks``)."""
    frame = _window_frame(spark, path, "batch_id")
    keys = zip(frame["campaign_id"], frame["window_start"].astype(int), frame["window_end"].astype(int), strict=True)
    return list(zip(keys, frame["batch_id"].astype(int), frame["count"].astype(int), strict=True))


def split_firings(rows: Iterable[tuple[WindowKey, int, int]], watermarks: Mapping[int, int] | None = None) -> Firings:
    """Tell each window's final row from the rows written before it.

    Without ``watermarks`` (Spark's update mode: a row per changed window per batch) the
    final row is the window's last, and a window written twice in one batch is a problem.

    With ``watermarks`` (batch id → the watermark the batch ran with, epoch ms; a fire-and-purge
    trigger such as ``ysb.DataArtisansTrigger``) the final firing happens in the window's
    *closing batch*, the first whose watermark reached the window's last millisecond. Early
    firings come before it, and may share its batch (processing-time timers run before the
    watermark): all the window's events arrived before the watermark passed its end, so such
    rows equal the final one, which is what is checked. Problems: no row in the closing
    batch, unequal rows there, a row after it (the window was purged), an early row above the
    final count (counts only grow), a window the watermark never closed.

    >>> w = ("campaign-000", 0, 10_000)
    >>> split_firings([(w, 0, 3), (w, 1, 5), (w, 2, 5), (w, 2, 5)], {0: -1, 1: 5_000, 2: 9_999})
    Firings(final={('campaign-000', 0, 10000): 5}, early_rows=3, problems=())
    >>> split_firings([(w, 0, 3), (w, 1, 5)]).final, split_firings([(w, 0, 3), (w, 0, 4)]).problems[0]
    ({('campaign-000', 0, 10000): 5}, 'campaign-000 @ 1970-01-01 00:00:00 written 2 times in batch 0 (counts 3, 4)')
    """
    by_window: dict[WindowKey, list[tuple[int, int]]] = defaultdict(list)
    for key, batch, count in rows:
        by_window[key].append((batch, count))
    ordered = sorted(watermarks.items()) if watermarks is not None else []
    closing_marks = [wm for _, wm in ordered]
    final: dict[WindowKey, int] = {}
    early = 0
    problems: dict[str, list[str]] = defaultdict(list)
    for key, written in by_window.items():
        written.sort()
        if watermarks is None:
            last_batch = written[-1][0]
            in_last = [c for b, c in written if b == last_batch]
            if len(in_last) > 1:
                problems["twice"].append(
                    f"{_where(key)} written {len(in_last)} times in batch {last_batch} (counts {_counts(in_last)})"
                )
            final[key] = written[-1][1]
            early += len(written) - 1
            continue
        at = bisect.bisect_left(closing_marks, key[2] - 1)
        if at == len(ordered):
            problems["open"].append(f"{_where(key)}: no batch's watermark reached its end")
            continue
        closing = ordered[at][0]
        in_closing = [c for b, c in written if b == closing]
        after = [b for b, _ in written if b > closing]
        if after:
            problems["after"].append(f"{_where(key)} written in batch {after[0]}, after its closing batch {closing}")
        if not in_closing:
            problems["missing"].append(f"{_where(key)}: no row in its closing batch {closing}")
            continue
        if len(set(in_closing)) > 1:
            problems["unequal"].append(f"{_where(key)}: rows {_counts(in_closing)} in its closing batch {closing}")
        final[key] = max(in_closing)
        before = [c for b, c in written if b < closing]
        if any(c > final[key] for c in before):
            problems["above"].append(f"{_where(key)}: an early row counts {max(before)}, the final {final[key]}")
        early += len(written) - 1
    lines = tuple(v[0] if len(v) == 1 else f"{len(v)} windows, e.g. {min(v)}" for v in problems.values())
    return Firings(final, early, lines)


def _where(key: WindowKey) -> str:
    start = dt.datetime.fromtimestamp(key[1] / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"{key[0]} @ {start}"


def _counts(counts: Iterable[int]) -> str:
    return ", ".join(str(c) for c in counts)


def watermark_ms(text: str | None) -> int | None:
    """Epoch ms of a watermark as a progress report shows it (``2024-01-01T00:00:05.000Z``).

    >>> watermark_ms("1970-01-01T00:00:01.500Z"), watermark_ms(None)
    (1500, None)
    """
    if not text:
        return None
    return round(dt.datetime.fromisoformat(text).timestamp() * 1000)


def diff_windows(expected: Mapping[WindowKey, int], got: Mapping[WindowKey, int], limit: int = 5) -> list[str]:
    """What differs between two window results, one line each (at most ``limit`` examples per kind)."""
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    wrong = sorted(k for k in set(expected) & set(got) if expected[k] != got[k])
    lines = []
    if missing:
        lines.append(f"{len(missing)} window(s) missing, e.g. {', '.join(_show(k, expected[k]) for k in missing[:limit])}")
    if extra:
        lines.append(f"{len(extra)} unexpected window(s), e.g. {', '.join(_show(k, got[k]) for k in extra[:limit])}")
    if wrong:
        lines.append(
            f"{len(wrong)} window(s) with another count, e.g. "
            + ", ".join(f"{_show(k, got[k])} (expected {expected[k]})" for k in wrong[:limit])
        )
    return lines


def _show(key: WindowKey, count: int) -> str:
    return f"{_where(key)}: {count}"


# -- memory, state on disk, progress ---------------------------------------------------------


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def size(n: float) -> str:
    """Bytes in the unit that shows them best (B, KiB, MiB, GiB)."""
    if n >= 2**30:
        return gib(n)
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**10:.0f} KiB" if n >= 2**10 else f"{n:.0f} B"


def rss(pid: int) -> int | None:
    """Resident bytes of process ``pid``: psutil when installed, else ``/proc/<pid>/status``."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            return int(psutil.Process(pid).memory_info().rss)
        except psutil.Error:
            return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s children (``/proc/<pid>/task/*/children``)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:  # the process is gone (or this is not Linux)
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def pss(pid: int) -> int | None:
    """Proportional set size of ``pid`` (``/proc/<pid>/smaps_rollup``): pages shared with other processes count in part."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _descendants(pid: int) -> list[int]:
    out, todo = [], children(pid)
    while todo:
        p = todo.pop()
        if p not in out:
            out.append(p)
            todo += children(p)
    return out


def _runs_python(pid: int) -> bool:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("python")
    except OSError:
        return False


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds used by ``pid`` (and its waited-for children) and its live Python workers, from ``/proc``."""

    def ticks(p: int, waited: bool) -> int:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0
        # fields[11..14]: utime, stime, cutime, cstime (the first field after the name is index 0)
        return sum(int(x) for x in fields[11 : 15 if waited else 13])

    if not Path(f"/proc/{pid}/stat").exists():
        return None
    total = ticks(pid, True) + sum(ticks(p, False) for p in _descendants(pid) if _runs_python(p))
    return total / os.sysconf("SC_CLK_TCK")


def tree_rss(pid: int) -> int | None:
    """Resident bytes of the JVM ``pid`` plus the Python workers it started.

    Workers forked from one daemon share most pages, so they count by PSS. Other children
    are left out: a process the JVM is spawning shares the JVM's own memory until it
    executes its program, and would count the JVM twice.
    """
    own = rss(pid)
    if own is None:
        return None
    return own + sum(pss(p) or rss(p) or 0 for p in _descendants(pid) if _runs_python(p))


class MemorySampler:
    """Samples, every ``interval_s`` until ``stop()``, the driver's RSS, Spark's RSS and the JVM heap in use.

    Spark's figures need classic local Spark: the JVM is this process's child (its pid from
    PySpark's gateway; its RSS counted with the Python workers it started), its heap read
    from ``Runtime``. Under Spark Connect they stay None. A GC before the run starts every
    run's heap figure from the same floor.
    """

    def __init__(self, spark: Any, interval_s: float = 0.5):
        self.interval_s = interval_s
        self._runtime = self._jvm_pid = None
        try:
            self._runtime = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
            self._jvm_pid = spark.sparkContext._gateway.proc.pid
        except AttributeError:  # Spark Connect, or a gateway PySpark did not launch
            pass
        self._peak = {"python": 0, "jvm": 0, "heap": 0}
        self._cpu_start: float | None = None
        #: CPU seconds between ``__enter__`` and ``stop()`` (this process, the JVM, its workers).
        self.cpu_s: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="funke-bench-memory", daemon=True)

    def __enter__(self) -> Self:
        if self._runtime is not None:
            self._runtime.gc()
        self._sample()
        self._cpu_start = self._cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Take a last sample and stop sampling (before the harness reads the run's results)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        end = self._cpu()
        if end is not None and self._cpu_start is not None:
            self.cpu_s = end - self._cpu_start
        self._sample()

    def _cpu(self) -> float | None:
        own = sum(os.times()[:2])
        if not self._jvm_pid:
            return None  # Spark Connect: the server's work is not this machine's process tree to count
        jvm = cpu_seconds(self._jvm_pid)
        return None if jvm is None else own + jvm

    @property
    def peak(self) -> Memory:
        jvm, heap = self._peak["jvm"], self._peak["heap"]
        return Memory(self._peak["python"], jvm if self._jvm_pid else None, heap if self._runtime is not None else None)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        self._raise("python", rss(os.getpid()))
        if self._jvm_pid:
            self._raise("jvm", tree_rss(self._jvm_pid))
        if self._runtime is not None:
            try:
                self._raise("heap", self._runtime.totalMemory() - self._runtime.freeMemory())
            except Exception:  # noqa: BLE001  (the gateway is shutting down: keep the peaks so far)
                return

    def _raise(self, name: str, value: int | None) -> None:
        if value is not None:
            self._peak[name] = max(self._peak[name], int(value))


def state_bytes(checkpoint: Path) -> int | None:
    """Bytes of the state store files under a Spark checkpoint (every ``state`` directory in it).

    RocksDB keeps the versions Spark retains (``minBatchesToRetain``): changelogs and
    snapshots, so this is what the checkpoint holds on disk, not one version's size.
    None when the directory is not there.

    >>> import tempfile; root = Path(tempfile.mkdtemp())
    >>> (root / "q" / "state" / "0").mkdir(parents=True); _ = (root / "q" / "state" / "0" / "1.zip").write_bytes(b"x" * 10)
    >>> _ = (root / "q" / "offsets").write_bytes(b"y" * 99); state_bytes(root), state_bytes(root / "none")
    (10, None)
    """
    if not checkpoint.is_dir():
        return None
    return sum(f.stat().st_size for d in checkpoint.rglob("state") if d.is_dir() for f in d.rglob("*") if f.is_file())


def filesystem(path: str | Path) -> str:
    """The filesystem type ``path`` is on (``/proc/mounts``' longest matching mount point), e.g. ``ext4``, ``tmpfs``."""
    target = os.path.realpath(path)
    best, kind = "", "unknown"
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return kind
    for line in mounts:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, parts[2]
    return kind


class ProgressLog:
    """Every progress report, per query (``recentProgress`` keeps only the last 100)."""

    def __init__(self, spark: Any):
        from pyspark.sql.streaming import StreamingQueryListener

        self.spark = spark
        self._lock = threading.Lock()
        self._seen: dict[str, list[Any]] = {}
        outer = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                with outer._lock:
                    outer._seen.setdefault(str(event.progress.id), []).append(event.progress)

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass

        from funke.spark.listener import reading_json

        # (both systems' runs are watched this way: the same cost, next to nothing, for each)
        self._listener = reading_json(Listener())
        spark.streams.addListener(self._listener)

    def of(self, query_id: Any) -> list[Any]:
        with self._lock:
            return sorted(self._seen.get(str(query_id), []), key=lambda p: p.batchId)

    def watermarks(self, query_id: Any) -> dict[int, int]:
        """Batch id → the watermark (epoch ms) that batch ran with."""
        marks = ((p.batchId, watermark_ms((p.eventTime or {}).get("watermark"))) for p in self.of(query_id))
        return {b: w for b, w in marks if w is not None}

    def close(self) -> None:
        self.spark.streams.removeListener(self._listener)
