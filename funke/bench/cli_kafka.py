"""``funke bench latency``, ``funke bench ysb --source kafka`` and ``funke bench chaos --mode realtime``: the Kafka
benchmarks' command lines."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from funke.bench.cli_common import (
    DOCS,
    Doc,
    WriteDocs,
    bench_session,
    check_doc,
    command,
    console,
    local_services,
    now,
    reported,
    self_checked,
    step,
)

LATENCY_SECTION = "## Kafka → funke → Kafka latency (`funke bench latency --source kafka`)"
LATENCY_INTRO = """\
Lines appended by `funke bench latency --source kafka` (`funke/bench/latency_kafka.py`). A
producer process writes `--rate` records a second to a fresh input topic (`--partitions`;
each record carries the wall-clock time it was handed to librdkafka, also its Kafka
timestamp; 1 ms linger, no compression). The funke job reads it with `fk.sources.kafka` and
writes a fresh output topic with `fk.sinks.kafka` (exactly-once: one transaction per
micro-batch), micro-batches back to back. A consumer process reads the output
`read_committed`. **filter/map**: drop the purchases (a third of the records), keep the id and
the produce time, upper-case the kind; latency = consume time − produce time, per record. **window**: count per key per
1 s tumbling window of the record timestamp, watermark 1 s behind; latency = consume time −
(window end + 1 s), the moment the watermark could first pass the window's end (event time
is the wall clock here). The first `--warmup` seconds are left out of the figures, not out
of the check: every expected record and every window the watermark closed (with its exact
count) must arrive exactly once. Phases: Spark's `durationMs` per micro-batch, median over
the micro-batches that read records. Spark's real-time trigger is not available (it is
part of Spark's JVM Kafka connector, not served for pyspark 4.3.0), so this is micro-batch
latency.
"""


KAFKA_JVM_SECTION = "## `funke bench ysb --source kafka` runs through Spark's Kafka connector"
KAFKA_JVM_INTRO = """\
Rows appended by `funke bench ysb --source kafka --write-docs` (`funke/bench/ysb_kafka.py`) where the session
has Spark's Kafka connector (`spark-sql-kafka-0-10`, the version `funke.connectors.kafka_jvm` picks for
the installed pyspark; sessions funke starts load it). The harness writes the events to a fresh topic
first (event `i` to partition `i % P`, JSON, lz4), then one flush record dated 9999 at the end of the
last partition. Both systems read that topic in one process, on one SparkSession, through Spark's
connector, `--batch-rows` records per micro-batch (`maxOffsetsPerTrigger`), each warmed up first over
a 500 k-event topic: funke runs `examples.ysb:kafka_job`'s pipeline over `fk.sources.kafka(...)`
(values parsed by `from_json`, dead letters checked), plain PySpark `format("kafka")` and the same
query (`funke/bench/plain_kafka.py`). The connector has no end in a streaming query, so both read the
flush record, whose watermark passes every window; a run ends with the first micro-batch that ran
with it. Both write Parquet through Spark's file sink and are checked against the numpy reference.
Figures as in the sections above.
"""


def _services(bootstrap: str) -> None:
    """Start the local broker (``funke services up kafka``) when the bench uses the default address."""
    local_services({"kafka": bootstrap})


def ysb(
    *, events: int, batch_rows: int, partitions: int, bootstrap: str, rounds: int, warmup: bool, write: bool, doc: Path
) -> None:
    """``funke bench ysb --source kafka``: both systems over one topic; a row in docs/benchmarks.md."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench import report
    from funke.bench.ysb_kafka import run_ysb_kafka
    from funke.spark.kafka_jvm import has_connector

    canonical = ["funke", "bench", "ysb", "--source", "kafka", "--events", str(events), "--batch-rows", str(batch_rows)]
    canonical += ["--partitions", str(partitions)] if partitions != 2 else []
    canonical += ["--rounds", str(rounds)] if rounds != 1 else []
    canonical += [] if warmup else ["--no-warmup"]
    _services(bootstrap)
    with bench_session() as (spark, setup):
        connector = has_connector(spark)
        result = run_ysb_kafka(
            spark, events=events, rows_per_batch=batch_rows, partitions=partitions, bootstrap=bootstrap, rounds=rounds,
            warmup=warmup, on_step=step,
        )  # fmt: skip
    console.print(report.table(result, setup))
    if write:
        section, intro = (KAFKA_JVM_SECTION, KAFKA_JVM_INTRO) if connector else (report.KAFKA_SECTION, report.KAFKA_INTRO)
        report.append_row(doc, report.markdown_row(result, setup, command(canonical)), section, intro)
        console.print(f"appended a row to {doc}")


REALTIME_SECTION = "## Kafka → Kafka in milliseconds (`funke bench latency --source kafka --mode realtime`)"
REALTIME_INTRO = """\
Lines appended by `funke bench latency --source kafka --mode realtime --write-docs` (`funke/bench/latency_realtime.py`).
Each job at each rate runs three times, one system after the other on one SparkSession with a task slot for
every real-time task: funke in real-time mode (`set_latency_mode("realtime")`, at-least-once Kafka sink),
the same query in plain PySpark's real-time mode (`trigger(realTime=...)`, Spark's Kafka connector), and
funke in micro-batches (exactly-once sink). A producer process writes `--rate` records a second to a fresh
topic (each record carries its produce time), a consumer process reads the output topic and notes each
record's arrival. **filter/map**: latency = consume − produce time per record. **rolling count**: each
element with its kind's running count (one output per element); latency as filter/map. **window**: count
per kind per 1 s window; in real-time mode every element's update (latency = consume − produce time of
the element that made it), in micro-batches each window once (latency = consume − (window end + 1 s)).
Every record is checked (missing, duplicated, counts 1..n); the warm-up is left out of the figures.
"""


def realtime_latency(
    *, seconds: float, warmup: float, partitions: int, jobs: tuple[str, ...], rates: str, bootstrap: str, write: bool, doc: Path
) -> None:
    """``funke bench latency --source kafka --mode realtime``: the three systems side by side, a table per run."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench import latency_realtime as lr
    from funke.bench import report

    try:
        asked = tuple(float(r) for r in rates.split(",") if r.strip())
    except ValueError:
        raise typer.BadParameter(f"{rates!r}: give rates as numbers, comma-separated", param_hint="--rates") from None
    bad = [j for j in jobs if j not in lr.JOBS]
    if bad:
        raise typer.BadParameter(f"{bad}: choose from {', '.join(lr.JOBS)}", param_hint="--job")
    _services(bootstrap)
    with reported():
        spark = lr.session(partitions)
        setup = report.setup(spark)
        results = lr.run(spark, rates=asked, seconds=seconds, warmup_s=warmup, partitions=partitions, bootstrap=bootstrap,
                         jobs=jobs or lr.JOBS, on_step=step)  # fmt: skip
    t = Table(title=f"Kafka → job → Kafka, {partitions} partitions, {seconds:g} s measured after {warmup:g} s warm-up")
    for name in ("job", "rate asked", "system", "produced/s", "p50 / p99 / max ms", "samples", "checked"):
        t.add_column(name, justify="left" if name in ("job", "system") else "right")
    figures = [r.figures() for r in results]
    latencies = [_latencies(f) for f in figures]
    for f, r, latency in zip(figures, results, latencies, strict=True):
        checked = "exact" if r.exact else f"{f['missing']} missing, {f['duplicates']} dup., {f['wrong']} wrong"
        t.add_row(f["job"], f"{f['rate']:,.0f}", f["system"], f"{f['produced_rate']:,}", latency, f"{f['samples']:,}", checked)
    t.caption = f"{setup.versions}; {setup.machine}."
    console.print(t)

    def lines() -> list[str]:
        canonical = ["funke", "bench", "latency", "--source", "kafka", "--mode", "realtime", "--rates", rates,
                     "--seconds", f"{seconds:g}", "--warmup", f"{warmup:g}"]  # fmt: skip
        when = now()
        return [
            f"- {when} `{command(canonical)}` ({setup.versions}; {setup.machine}): **{f['job']}** at {f['rate']:,.0f}/s asked "
            f"({f['produced_rate']:,}/s produced), {f['system']}: p50 / p99 / max **{latency} ms** "
            f"over {f['samples']:,} records; {f['received']:,} received, {f['missing']} missing, {f['duplicates']} duplicated"
            f"{'' if r.exact else ' — NOT EXACT'}"
            for f, r, latency in zip(figures, results, latencies, strict=True)
        ]

    self_checked(figures, lines, exact=all(r.exact for r in results), section=REALTIME_SECTION.removeprefix("## "),
            write=write, doc=doc, intro=REALTIME_INTRO)  # fmt: skip


def _latencies(f: dict) -> str:
    """p50 / p99 / max of a run, or why it has none (no record arrived after the warm-up; the docs take no such line)."""
    from funke.bench.measure import TOO_SMALL  # (lazy: so the CLI starts fast)

    if not f["samples"]:
        return f"{TOO_SMALL} (no record arrived after the warm-up: give more --seconds)"
    return f"{f['p50_ms']} / {f['p99_ms']} / {f['max_ms']}"


def chaos_realtime(
    *, source: str, sink: str, kills: int, events: int, job: str, bootstrap: str, write: bool, doc: Path
) -> tuple[dict, bool, Callable[[], str]]:
    """``funke bench chaos --source kafka --sink kafka --mode realtime``: SIGKILL a real-time job, count lost and
    duplicated; its figures, whether it was exact, and its docs line (``funke bench chaos`` ends both modes alike)."""
    from funke.bench import chaos_realtime  # (lazy: so the CLI starts fast)

    if (source, sink) != ("kafka", "kafka"):
        raise typer.BadParameter("real-time mode reads and writes Kafka: --source kafka --sink kafka", param_hint="--mode")
    if job not in chaos_realtime.JOBS:
        raise typer.BadParameter(f"{job!r}: choose {' or '.join(chaos_realtime.JOBS)}", param_hint="--job")
    check_doc(write, doc)
    _services(bootstrap)
    with tempfile.TemporaryDirectory(prefix="funke-chaos-rt-") as workdir:
        result = chaos_realtime.run(bootstrap, kills=kills, events=events, workdir=workdir, job=job, on_step=step)
    figures = result.figures()

    def line() -> str:
        canonical = ["funke", "bench", "chaos", "--source", "kafka", "--sink", "kafka", "--mode", "realtime", "--kills",
                     str(kills), "--events", str(events), "--job", job]  # fmt: skip
        return (
            f"- {now()} `{command(canonical)}` (real-time mode, at-least-once Kafka sink): "
            f"{figures['kills']} kills, {figures['runs']} runs, {figures['expected']:,} records expected, {figures['received']:,} "
            f"received, lost {figures['lost']}, duplicated {figures['duplicates']}{'' if result.exact else ' — WRONG'}, "
            f"{figures['wall_s']} s"
        )

    return figures, result.exact, line


def latency(
    source: Annotated[str, typer.Option(help="where the events come from: kafka (the only one so far)")] = "kafka",
    rate: Annotated[float, typer.Option(help="records per second the producer writes")] = 100_000,
    seconds: Annotated[float, typer.Option(help="seconds measured, after the warm-up")] = 30,
    warmup: Annotated[float, typer.Option(help="seconds produced first and left out of the figures (still checked)")] = 10,
    partitions: Annotated[int, typer.Option(help="partitions of the input and output topics")] = 2,
    job: Annotated[
        list[str] | None, typer.Option(help="filter/map, window (repeatable; default both, one after the other)")
    ] = None,
    bootstrap: Annotated[str, typer.Option(help="Kafka bootstrap servers")] = "127.0.0.1:9092",
    mode: Annotated[
        str,
        typer.Option(
            help="micro-batch: funke's micro-batch jobs (exactly-once sink); realtime: funke's real-time mode beside "
            "plain PySpark's real-time mode and funke's micro-batch mode, jobs filter/map, rolling count, window"
        ),
    ] = "micro-batch",
    rates: Annotated[str, typer.Option(help="--mode realtime: the rates, records/s, comma-separated")] = "10000,100000,500000",
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """End-to-end latency Kafka → funke → Kafka, p50 / p99 / max, every record checked."""
    from funke.bench.latency_kafka import JOBS, run_latency, summary  # (lazy: so the CLI starts fast)

    if source != "kafka":
        raise typer.BadParameter(
            "only kafka so far (for the generator: funke bench ysb --latency-seconds)", param_hint="--source"
        )
    if mode not in ("micro-batch", "realtime"):
        raise typer.BadParameter(f"{mode!r}: choose micro-batch or realtime", param_hint="--mode")
    if mode == "realtime":
        check_doc(write, doc)
        realtime_latency(seconds=seconds, warmup=warmup, partitions=partitions, jobs=tuple(job or ()), rates=rates,
                         bootstrap=bootstrap, write=write, doc=doc)  # fmt: skip
        return
    jobs = tuple(job or JOBS)
    bad = [j for j in jobs if j not in JOBS]
    if bad:
        raise typer.BadParameter(f"{bad}: choose from {', '.join(JOBS)}", param_hint="--job")
    check_doc(write, doc)
    _services(bootstrap)
    with bench_session() as (spark, setup):
        results = run_latency(
            spark, rate=rate, seconds=seconds, warmup_s=warmup, partitions=partitions, bootstrap=bootstrap, jobs=jobs,
            on_step=step,
        )  # fmt: skip
    figures = [summary(r) for r in results]
    t = Table(title=f"Kafka → funke → Kafka, exactly-once, {rate:,.0f} records/s asked, {partitions} partitions")
    for name in ("job", "records/s produced", "latency p50 / p99 / max", "samples", "micro-batch p50", "exact"):
        t.add_column(name, justify="left" if name == "job" else "right")
    for f, r in zip(figures, results, strict=True):
        t.add_row(
            f["job"], f"{f['produced_rate']:,}", f"{f['p50_ms']} / {f['p99_ms']} / {f['max_ms']} ms", f"{f['samples']:,}",
            f"{f['batch_ms_p50']} ms", "yes" if r.exact else f"NO: {f['missing']} missing, {f['duplicates']} duplicated",
        )  # fmt: skip
    t.caption = f"{setup.versions}; {setup.machine}."
    console.print(t)

    def lines() -> list[str]:
        canonical = ["funke", "bench", "latency", "--source", "kafka", "--rate", f"{rate:g}", "--seconds", f"{seconds:g}"]
        spelled = command(canonical)
        out = []
        when = now()
        for f, r in zip(figures, results, strict=True):
            phases = ", ".join(f"{k} {v:g}" for k, v in f["phases_ms_p50"].items())
            out.append(
                f"- {when} `{spelled}` ({setup.versions}; {setup.machine}): **{f['job']}**: {f['produced_rate']:,} records/s "
                f"produced, latency p50 / p99 / max **{f['p50_ms']} / {f['p99_ms']} / {f['max_ms']} ms** over {f['samples']:,} "
                f"{'window results' if f['job'] == 'window' else 'records'} (after {f['warmup_s']:g} s warm-up); "
                f"{f['received']:,} received of {f['expected']:,} expected, {f['missing']} missing, {f['duplicates']} "
                f"duplicated{'' if r.exact else ' — NOT EXACT'}; {f['batches']} micro-batches, p50 {f['batch_ms_p50']} ms, "
                f"max {f['batch_ms_max']} ms "
                f"(phases p50 ms: {phases})"
            )
        return out

    self_checked(figures, lines, exact=all(r.exact for r in results), section=LATENCY_SECTION.removeprefix("## "),
            write=write, doc=doc, intro=LATENCY_INTRO)  # fmt: skip
