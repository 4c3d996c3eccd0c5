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

from funke.bench.measure import LatencyRun, Run
from funke.bench.ysb import YsbBench

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

| date (UTC) | command | versions | machine | funke | plain PySpark | funke / plain |
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
    except Exception:  # Spark Connect: no JVM in this process
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


def table(result: YsbBench, s: Setup) -> Table:
    mode = "bounded" if result.bounded else "streaming"
    rounds = f", median of {result.rounds} rounds" if result.rounds > 1 else ""
    t = Table(title=f"YSB ({result.variant}, {mode}): {result.events:,} events, same input, same run{rounds}")
    t.add_column("")
    t.add_column("funke", justify="right")
    t.add_column("plain PySpark", justify="right")
    t.add_column("funke / plain", justify="right")
    f, p = result.funke, result.plain

    def ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:.2f}" if a and b else "—"

    headline = f"{result.ratio:.2f}" if result.ratio else "—"
    if not result.bounded:
        t.add_row("events/s, steady", *(_rate(r.steady_events_per_s) for r in (f, p)), headline)
        t.add_row("micro-batch p50", _ms(f.batch_ms_p50), _ms(p.batch_ms_p50), ratio(f.batch_ms_p50, p.batch_ms_p50))
        t.add_row("micro-batch p99", _ms(f.batch_ms_p99), _ms(p.batch_ms_p99), ratio(f.batch_ms_p99, p.batch_ms_p99))
        t.add_row("micro-batches", f"{len(f.batches):,}", f"{len(p.batches):,}", "")
    whole_ratio = headline if result.bounded else ratio(f.events_per_s, p.events_per_s)
    t.add_row("events/s, whole run", _rate(f.events_per_s), _rate(p.events_per_s), whole_ratio)
    t.add_row("wall time", f"{f.wall_s:.1f} s", f"{p.wall_s:.1f} s", ratio(f.wall_s, p.wall_s))
    t.add_row("events read", f"{f.events:,}", f"{p.events:,}", "")
    t.add_row("windows = reference", *(f"{len(r.windows):,} = {result.reference_windows:,}" for r in (f, p)), "")
    if result.rounds > 1:
        t.add_row("funke / plain per round", "", "", ", ".join(f"{x:.2f}" for x in result.round_ratios))
    if result.latency:
        la, lb = result.latency_of("funke"), result.latency_of("plain PySpark")
        t.add_row("latency past watermark p50 / p99", _latency(la), _latency(lb), ratio(la and la.p50_ms, lb and lb.p50_ms))
    t.caption = f"{s.versions}; {s.machine}. Results checked against the reference: {'equal' if result.correct else 'DIFFERENT'}."
    return t


def _rate(x: float | None) -> str:
    return "—" if x is None else f"{human(x)} ev/s"


def _cell(r: Run, latency: LatencyRun | None, rounds: int) -> str:
    median = f" (median of {rounds} rounds)" if rounds > 1 else ""
    parts = [f"**{_rate(r.headline_events_per_s)}**" + (" steady" if r.mode == "streaming" else "") + median]
    if r.mode == "streaming":
        if r.batch_ms_p50 is not None:
            parts.append(f"batch p50 / p99 {r.batch_ms_p50:,.0f} / {r.batch_ms_p99:,.0f} ms")
        parts.append(f"{human(r.events)} events in {r.wall_s:.1f} s ({len(r.batches)} batches)")
    else:
        parts.append(f"{human(r.events)} events in {r.wall_s:.1f} s")
    if latency is not None:
        parts.append(f"latency p50 / p99 {_latency(latency)}")
    return "; ".join(parts)


def markdown_row(result: YsbBench, s: Setup, command: str, when: dt.datetime | None = None) -> str:
    when = when or dt.datetime.now(dt.timezone.utc)
    ratio = f"**{result.ratio:.2f}**" if result.ratio else "—"
    if result.rounds > 1:
        ratio += f" (median of rounds {', '.join(f'{x:.2f}' for x in result.round_ratios)})"
    la, lb = result.latency_of("funke"), result.latency_of("plain PySpark")
    if la and lb and la.p50_ms and lb.p50_ms:
        ratio += f" (latency p50: {la.p50_ms / lb.p50_ms:.2f})"
    figures = [_cell(result.funke, la, result.rounds), _cell(result.plain, lb, result.rounds)]
    cells = [when.strftime("%Y-%m-%d %H:%M"), f"`{command}`", s.versions, s.machine, *figures, ratio]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def append_row(path: Path, row: str) -> None:
    """Add ``row`` to the runs table in ``path``, creating the section at the end the first time."""
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path.parent} does not exist: run from the funke checkout or pass --doc PATH")
    lines = path.read_text().splitlines() if path.exists() else ["# Benchmarks"]
    if SECTION not in lines:
        lines += ["", SECTION, "", *_INTRO.rstrip("\n").splitlines()]
    at = lines.index(SECTION) + 1
    while at < len(lines) and not lines[at].startswith("|"):
        at += 1
    while at < len(lines) and lines[at].startswith("|"):
        at += 1
    lines.insert(at, row)
    path.write_text("\n".join(lines) + "\n")
