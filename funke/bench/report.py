"""Showing a benchmark: the setup it ran on, a rich table, and a row appended to docs/benchmarks.md.

>>> human(1_104_000), human(768_400), human(6_658), human(950.0)
('1.10 M', '768 k', '6.7 k', '950')
"""

from __future__ import annotations

import datetime as dt
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from funke.bench.checkpoint import CheckpointBench
from funke.bench.latency import LATENCY_PARTS, LatencyRun
from funke.bench.measure import TOO_SMALL, Run
from funke.bench.resources import gib, size
from funke.bench.ysb import VARIANTS, YsbBench
from funke.errors import FunkeError

SECTION = "## `funke bench ysb` runs"
_INTRO = """\
Rows appended by `funke bench ysb` (`funke/bench/`). One command runs both systems in one
process, on one SparkSession with the same Spark settings, over the same generated events:
funke's `examples/ysb.py` pipeline, and the same job hand-written in plain PySpark
(`funke/bench/plain.py`), each writing Parquet, each first warmed up once (1 M events,
unmeasured). Both systems' window results are checked against a reference computed in
numpy (`funke/bench/reference.py`); a run whose results differ fails and writes no row.
Streaming: events/s over micro-batch time after the first two micro-batches; micro-batch
p50 / p99 over the same batches. Bounded: events/s over the whole job. With `--rounds N`
both run N times, alternating which goes first: the figures are the median run's, the
ratio the median of the per-round ratios. Latency (`--latency-seconds`): when a window
row was written minus (window end + 5 s watermark delay), at a fixed input rate with
event time = wall clock (funke: its paced generator, event time `current_timestamp()`;
plain: Spark's `rate` source and its `timestamp`). funke / plain above 1: funke is faster.
Variants: `base` (100 campaigns × 10 ads), `cardinality` (1 M campaigns × 10 ads: about a
million window keys open at once, and a 10 M-row ad → campaign table broadcast every
micro-batch, in both systems), `trigger` (funke: the data Artisans trigger on the general
path, an early result per window every second of processing time and fire-and-purge at
its end; plain PySpark cannot fire early, so its closest job runs in update mode on a 1 s
trigger: not the same semantics; both write per micro-batch with `foreachBatch`, in
`batch_id=N` directories, which a replayed batch replaces when exactly-once is on (an
idempotent sink); only each window's final row is checked, early rows are counted:
funke's final row is the one written in the micro-batch whose watermark passed the
window's end, plain's a window's last update). `--exactly-once off`: see the
`funke bench checkpoint` section. Memory: peaks sampled every 0.5 s during the run: JVM
heap in use (after a GC before the run), and the resident size (RSS) of the Python driver
and of the JVM with the Python workers it started (workers by PSS, as they share pages;
both systems share these processes and RSS rarely shrinks, so a later run inherits an
earlier one's); state: bytes under the checkpoint's `state/` directories after the run
(RocksDB keeps the retained versions). Load: the 1-minute load average when each run
ended (the machine is shared).

| date (UTC) | command | versions | machine | funke | plain PySpark | funke / plain |
|---|---|---|---|---|---|---|
"""

KAFKA_SECTION = "## `funke bench ysb --source kafka` runs"
KAFKA_INTRO = """\
Rows appended by `funke bench ysb --source kafka` (`funke/bench/ysb_kafka.py`). The harness
writes the events to a fresh Kafka topic first (`funke ysb produce --to kafka`'s producer:
event `i` to partition `i % P`, JSON, lz4), then one flush record at the end of the last
partition. Both systems read that topic in one process, on one SparkSession, `--batch-rows`
records per micro-batch, each warmed up first over a 500 k-event topic: funke runs
`examples.ysb:kafka_job`'s pipeline (`fk.sources.kafka(..., events=N)`: funke's Python data
source over confluent-kafka, Arrow batches of raw records, JSON parsed by Spark's
`from_json`); plain PySpark runs `funke/bench/plain_kafka.py`, the minimal Python data
source a PySpark user writes over confluent-kafka (one task per partition, a tuple per
record, `from_json` too), since Spark's own Kafka connector is not served for pyspark
4.3.0. Both write Parquet through Spark's file sink with the listed campaign table
(`kafka_job` itself reads the campaigns from Redis and writes Redis), and both results are
checked against the numpy reference. Figures as in the section above: steady events/s
over micro-batch time after the first two micro-batches, and events per CPU second (this
process, the JVM and its Python workers; the broker's CPU is not counted).

| date (UTC) | command | versions | machine | funke | plain PySpark | funke / plain |
|---|---|---|---|---|---|---|
"""

CHECKPOINT_SECTION = "## `funke bench checkpoint` runs"
_CHECKPOINT_INTRO = """\
Rows appended by `funke bench checkpoint` (`funke/bench/checkpoint.py`): what exactly-once
costs funke's streaming YSB (base variant), measured in one process and one SparkSession.
funke runs the same events with `--exactly-once on` and `off` in turn, after a warm-up of
each, alternating which goes first; both results are checked against the numpy reference.
The ratio is the median of the per-round ratios of steady events/s, on / off (the issue's
target: at least 0.9).

What "off" means on Spark. A micro-batch engine always writes its offset log (before a
batch) and its commit log (after it) into the checkpoint; there is no switching that off.
What can be taken away is (a) the sink's exactly-once protocol: Spark's file sink records
each batch's files in its `_spark_metadata` log so a replayed batch is not seen twice;
off, a `foreachBatch` appends the batch's rows as plain Parquet (at-least-once: a
replayed batch writes its files again, `funke.bench.sinks.AppendParquetSink`); and (b)
durable checkpoint storage: on, the checkpoint (offsets, commits, RocksDB state) is on
the work dir's disk; off, it is on tmpfs (`/dev/shm`), lost with the machine. The same
`--exactly-once off` in `funke bench ysb` does both to funke and to the plain PySpark job.

| date (UTC) | command | versions | machine | exactly-once on | exactly-once off | on / off |
|---|---|---|---|---|---|---|
"""


@dataclass(frozen=True)
class Setup:
    """Versions and machine a benchmark ran on."""

    funke: str
    pyspark: str
    java: str
    python: str
    cores: int
    ram_gib: float
    cpu: str
    load: float
    master: str
    shuffle_partitions: str
    state_store: str

    @property
    def versions(self) -> str:
        return f"funke {self.funke}, pyspark {self.pyspark}, Java {self.java}, Python {self.python}"

    @property
    def machine(self) -> str:
        return (
            f"{self.cores} cores ({self.cpu}), {self.ram_gib:.1f} GiB RAM, load {self.load:.1f} at start; "
            f"Spark {self.master}, {self.shuffle_partitions} shuffle partitions, {self.state_store} state store"
        )


class TooSmallToMeasure(FunkeError, ValueError):
    """A run's figures say it was too small to measure: they do not go into the benchmarks page."""


def _measured(doc: Path, lines: list[str]) -> None:
    if any(TOO_SMALL in line for line in lines):
        raise TooSmallToMeasure(f"nothing written to {doc}: the run was {TOO_SMALL} (give more --events)")


def add_to_section(doc: Path, heading: str, lines: list[str], intro: str = "") -> None:
    r"""Put ``lines`` at the end of ``doc``'s section ``## heading`` (before the next ``## `` heading),
    making the section, with ``intro`` under its heading, at the end of the page when it is not there.

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "b.md"
    >>> _ = page.write_text("# B\n\n## One\n\n- a\n\n## Two\n\n- x\n")
    >>> add_to_section(page, "One", ["- b"]); add_to_section(page, "Three", ["- z"], intro="What.")
    >>> print(page.read_text())
    # B
    <BLANKLINE>
    ## One
    <BLANKLINE>
    - a
    - b
    <BLANKLINE>
    ## Two
    <BLANKLINE>
    - x
    <BLANKLINE>
    ## Three
    <BLANKLINE>
    What.
    <BLANKLINE>
    - z
    <BLANKLINE>
    """
    _measured(doc, lines)
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    page = text.splitlines()
    title = f"## {heading}"
    if title not in page:
        head = ["", title, ""] + ([*intro.splitlines(), ""] if intro else [])
        doc.write_text("\n".join([*page, *head, *lines]) + "\n")
        return
    end = next((i for i in range(page.index(title) + 1, len(page)) if page[i].startswith("## ")), len(page))
    while end > 0 and not page[end - 1].strip():
        end -= 1
    doc.write_text("\n".join([*page[:end], *lines, *page[end:]]) + "\n")


def setup(spark: Any) -> Setup:
    """What this process runs on: read from the JVM and /proc, not assumed."""
    import importlib.metadata as md

    import pyspark

    conf = spark.conf
    provider = conf.get("spark.sql.streaming.stateStore.providerClass", "") or ""
    return Setup(
        funke=md.version("funke"),
        pyspark=pyspark.__version__,
        java=_java(spark),
        python=platform.python_version(),
        cores=os.cpu_count() or 0,
        ram_gib=_proc_value("/proc/meminfo", "MemTotal", 0.0, lambda v: int(v.split()[0]) / 2**20),
        cpu=_proc_value("/proc/cpuinfo", "model name", platform.processor() or "unknown CPU", str.strip),
        load=os.getloadavg()[0],
        master=spark.sparkContext.master,
        shuffle_partitions=conf.get("spark.sql.shuffle.partitions", "?") or "?",
        state_store="RocksDB" if "RocksDB" in provider else "HDFS-backed (default)",
    )


def _java(spark: Any) -> str:
    try:
        return str(spark.sparkContext._jvm.java.lang.System.getProperty("java.version"))
    except Exception:  # noqa: BLE001  (Spark Connect: no JVM in this process)
        from funke.spark.session import java_version

        return str(java_version() or "unknown")


def _proc_value(path: str, key: str, default: Any, parse: Any) -> Any:
    try:
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key:
                return parse(value)
    except OSError:
        pass
    return default


def human(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e4:
        return f"{x / 1e3:.0f} k"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f} ms"


def _latency(r: LatencyRun | None) -> str:
    if r is None:
        return "—"
    if not r.samples_ms:
        return f"no window closed in {r.seconds:.0f} s"
    return f"{r.p50_ms / 1000:.2f} / {r.p99_ms / 1000:.2f} s ({len(r.samples_ms):,} window rows)"


def _latency_parts(r: LatencyRun | None) -> str:
    """The p50 of each part of the latency (:data:`funke.bench.latency.LATENCY_PARTS`), in seconds."""
    parts = r and r.parts_p50_ms
    return " / ".join(f"{x / 1000:.2f}" for x in parts) + " s" if parts else "—"


def _phases(r: LatencyRun | None) -> str:
    """Spark's batch phases, p50 ms, the whole batch (``triggerExecution``) last."""
    phases = dict(r.phases_p50_ms) if r else {}
    whole = phases.pop("triggerExecution", None)
    shown = [f"{k} {v:,.0f}" for k, v in phases.items() if v >= 1] + ([f"whole batch {whole:,.0f}"] if whole is not None else [])
    return ", ".join(shown) + " ms" if shown else "—"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "—"


def _bytes(x: int | None, show: Any = gib) -> str:
    return "—" if x is None else show(x)


def table(result: YsbBench, s: Setup) -> Table:
    mode = "bounded" if result.bounded else f"streaming, exactly-once {result.exactly_once}"
    rounds = f", median of {result.rounds} rounds" if result.rounds > 1 else ""
    variant = (
        result.variant
        if result.campaigns == VARIANTS[result.variant].campaigns
        else f"{result.variant}, {result.campaigns:,} campaigns"
    )
    origin = " from Kafka" if result.source == "kafka" else ""
    t = Table(title=f"YSB ({variant}, {mode}): {result.events:,} events{origin}, same input, same run{rounds}")
    t.add_column("")
    t.add_column("funke", justify="right")
    t.add_column("plain PySpark", justify="right")
    t.add_column("funke / plain", justify="right")
    f, p = result.funke, result.plain
    headline = f"{result.ratio:.2f}" if result.ratio else "—"
    if not result.bounded:
        t.add_row("events/s, steady", *(_rate(r.steady_events_per_s) for r in (f, p)), headline)
        t.add_row("micro-batch p50", _ms(f.batch_ms_p50), _ms(p.batch_ms_p50), _ratio(f.batch_ms_p50, p.batch_ms_p50))
        t.add_row("micro-batch p99", _ms(f.batch_ms_p99), _ms(p.batch_ms_p99), _ratio(f.batch_ms_p99, p.batch_ms_p99))
        t.add_row("micro-batches", f"{len(f.batches):,}", f"{len(p.batches):,}", "")
    whole_ratio = headline if result.bounded else _ratio(f.events_per_s, p.events_per_s)
    t.add_row("events/s, whole run", _rate(f.events_per_s), _rate(p.events_per_s), whole_ratio)
    t.add_row("wall time", f"{f.wall_s:.1f} s", f"{p.wall_s:.1f} s", _ratio(f.wall_s, p.wall_s))
    t.add_row("events read", f"{f.events:,}", f"{p.events:,}", "")
    final = "final windows" if f.early_rows is not None else "windows"
    t.add_row(f"{final} = reference", *(f"{len(r.windows):,} = {result.reference_windows:,}" for r in (f, p)), "")
    if f.early_rows is not None or p.early_rows is not None:
        t.add_row("early rows (not checked)", *(f"{r.early_rows:,}" if r.early_rows is not None else "—" for r in (f, p)), "")
    _memory_rows(t, f, p)
    if result.rounds > 1:
        t.add_row("funke / plain per round", "", "", ", ".join(f"{x:.2f}" for x in result.round_ratios))
    if result.latency:
        la, lb = result.latency_of("funke"), result.latency_of("plain PySpark")
        t.add_row("latency past watermark p50 / p99", _latency(la), _latency(lb), _ratio(la and la.p50_ms, lb and lb.p50_ms))
        t.add_row(f"latency split, p50 each: {' / '.join(LATENCY_PARTS)}", _latency_parts(la), _latency_parts(lb), "")
        t.add_row("micro-batch phases, p50 (latency runs)", _phases(la), _phases(lb), "")
    where = f" Checkpoints on {result.checkpoint_fs}." if result.checkpoint_fs else ""
    checked = "equal" if result.correct else "DIFFERENT"
    t.caption = f"{s.versions}; {s.machine}.{where} Results checked against the reference: {checked}."
    return t


def _memory_rows(t: Table, a: Run, b: Run) -> None:
    """Memory peaks, state on disk and load, one row each, when the runs recorded them."""
    if a.memory is not None and b.memory is not None:
        heaps = (a.memory.jvm_heap, b.memory.jvm_heap)
        t.add_row("JVM heap in use, peak", *(_bytes(x) for x in heaps), _ratio(*heaps))
        t.add_row("RSS peak, Python driver", gib(a.memory.python_rss), gib(b.memory.python_rss), "")
        jvm = (a.memory.jvm_rss, b.memory.jvm_rss)
        t.add_row("RSS peak, JVM + its Python workers", *(_bytes(x) for x in jvm), _ratio(*jvm))
    if a.state_bytes is not None or b.state_bytes is not None:
        t.add_row("state on disk", _bytes(a.state_bytes, size), _bytes(b.state_bytes, size), _ratio(a.state_bytes, b.state_bytes))
    if a.cpu_s is not None and b.cpu_s is not None:
        cpu = (a.events_per_cpu_s, b.events_per_cpu_s)
        t.add_row("CPU time (driver, JVM, workers)", f"{a.cpu_s:.1f} s", f"{b.cpu_s:.1f} s", _ratio(a.cpu_s, b.cpu_s))
        t.add_row("events per CPU second", *(_rate(x).replace("/s", "/CPU s") for x in cpu), _ratio(*cpu))
    if a.load is not None and b.load is not None:
        t.add_row("load average after the run", f"{a.load:.1f}", f"{b.load:.1f}", "")


def _rate(x: float | None) -> str:
    return TOO_SMALL if not x else f"{human(x)} ev/s"


def _cell(r: Run, latency: LatencyRun | None, rounds: int) -> str:
    median = f" (median of {rounds} rounds)" if rounds > 1 else ""
    parts = [f"**{_rate(r.headline_events_per_s)}**" + (" steady" if r.mode == "streaming" else "") + median]
    if r.mode == "streaming":
        if r.batch_ms_p50 is not None:
            parts.append(f"batch p50 / p99 {r.batch_ms_p50:,.0f} / {r.batch_ms_p99:,.0f} ms")
        parts.append(f"{human(r.events)} events in {r.wall_s:.1f} s ({len(r.batches)} batches)")
    else:
        parts.append(f"{human(r.events)} events in {r.wall_s:.1f} s")
    if r.early_rows is not None:
        parts.append(f"{len(r.windows):,} final windows checked, {r.early_rows:,} early rows")
    if r.memory is not None:
        heap = f"JVM heap peak {gib(r.memory.jvm_heap)}, " if r.memory.jvm_heap is not None else ""
        jvm = f" + JVM and workers {gib(r.memory.jvm_rss)}" if r.memory.jvm_rss is not None else ""
        parts.append(f"{heap}RSS peak Python {gib(r.memory.python_rss)}{jvm}")
    if r.state_bytes is not None:
        parts.append(f"state on disk {size(r.state_bytes)}")
    if r.cpu_s is not None and r.events_per_cpu_s is not None:
        parts.append(f"CPU {r.cpu_s:.1f} s ({human(r.events_per_cpu_s)} events per CPU s)")
    if r.load is not None:
        parts.append(f"load {r.load:.1f} after")
    if latency is not None:
        parts.append(f"latency p50 / p99 {_latency(latency)}")
        if latency.parts_ms:
            parts.append(f"latency split p50 ({' / '.join(LATENCY_PARTS)}) {_latency_parts(latency)}")
        if latency.timeline:
            parts.append(f"latency run's micro-batches ({len(latency.timeline)}), phases p50: {_phases(latency)}")
    return "; ".join(parts)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_row(result: YsbBench, s: Setup, command: str, when: dt.datetime | None = None) -> str:
    when = when or dt.datetime.now(dt.UTC)
    ratio = f"**{result.ratio:.2f}**" if result.ratio else "—"
    if result.rounds > 1:
        ratio += f" (median of rounds {', '.join(f'{x:.2f}' for x in result.round_ratios)})"
    la, lb = result.latency_of("funke"), result.latency_of("plain PySpark")
    if la and lb and la.p50_ms and lb.p50_ms:
        ratio += f" (latency p50: {la.p50_ms / lb.p50_ms:.2f})"
    figures = [_cell(result.funke, la, result.rounds), _cell(result.plain, lb, result.rounds)]
    machine = s.machine + (f"; checkpoints on {result.checkpoint_fs}" if result.checkpoint_fs else "")
    return _row([when.strftime("%Y-%m-%d %H:%M"), f"`{command}`", s.versions, machine, *figures, ratio])


def checkpoint_table(result: CheckpointBench, s: Setup) -> Table:
    """``funke bench checkpoint``: funke with exactly-once on and off side by side."""
    rounds = f", median of {result.rounds} rounds" if result.rounds > 1 else ""
    title = f"funke YSB, exactly-once on vs off: {result.events:,} events, {result.rows_per_batch:,} per micro-batch{rounds}"
    t = Table(title=title)
    t.add_column("")
    t.add_column(f"on (file sink, checkpoint on {result.on_fs})", justify="right")
    t.add_column(f"off (append, checkpoint on {result.off_fs})", justify="right")
    t.add_column("on / off", justify="right")
    a, b = result.on, result.off
    t.add_row(
        "events/s, steady",
        _rate(a.steady_events_per_s),
        _rate(b.steady_events_per_s),
        f"{result.ratio:.2f}" if result.ratio else "—",
    )
    t.add_row("micro-batch p50", _ms(a.batch_ms_p50), _ms(b.batch_ms_p50), _ratio(a.batch_ms_p50, b.batch_ms_p50))
    t.add_row("micro-batch p99", _ms(a.batch_ms_p99), _ms(b.batch_ms_p99), _ratio(a.batch_ms_p99, b.batch_ms_p99))
    t.add_row("micro-batches", f"{len(a.batches):,}", f"{len(b.batches):,}", "")
    t.add_row("wall time", f"{a.wall_s:.1f} s", f"{b.wall_s:.1f} s", _ratio(a.wall_s, b.wall_s))
    t.add_row("windows = reference", *(f"{len(r.windows):,} = {result.reference_windows:,}" for r in (a, b)), "")
    _memory_rows(t, a, b)
    if result.rounds > 1:
        t.add_row("on / off per round", "", "", ", ".join(f"{x:.2f}" for x in result.round_ratios))
    checked = "equal" if result.correct else "DIFFERENT"
    t.caption = f"{s.versions}; {s.machine}. Results checked against the reference: {checked}."
    return t


def checkpoint_row(result: CheckpointBench, s: Setup, command: str, when: dt.datetime | None = None) -> str:
    when = when or dt.datetime.now(dt.UTC)
    ratio = f"**{result.ratio:.2f}**" if result.ratio else "—"
    if result.rounds > 1:
        ratio += f" (median of rounds {', '.join(f'{x:.2f}' for x in result.round_ratios)})"
    on = _cell(result.on, None, result.rounds) + f"; checkpoint on {result.on_fs}"
    off = _cell(result.off, None, result.rounds) + f"; checkpoint on {result.off_fs}"
    return _row([when.strftime("%Y-%m-%d %H:%M"), f"`{command}`", s.versions, s.machine, on, off, ratio])


def append_row(path: Path, row: str, section: str = SECTION, intro: str = _INTRO) -> None:
    """Add ``row`` to the runs table of ``section`` in ``path``, creating the section (with ``intro``) at the end the first time."""
    _measured(path, [row])
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path.parent} does not exist: run from the funke checkout or pass --doc PATH")
    lines = path.read_text().splitlines() if path.exists() else ["# Benchmarks"]
    if section not in lines:
        lines += ["", section, "", *intro.rstrip("\n").splitlines()]
    at = lines.index(section) + 1
    while at < len(lines) and not lines[at].startswith("|"):
        at += 1
    while at < len(lines) and lines[at].startswith("|"):
        at += 1
    lines.insert(at, row)
    path.write_text("\n".join(lines) + "\n")


def append_checkpoint_row(path: Path, row: str) -> None:
    append_row(path, row, CHECKPOINT_SECTION, _CHECKPOINT_INTRO)
