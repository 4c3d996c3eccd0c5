"""``funke bench ysb --source kafka`` and ``funke bench latency --source kafka``: the Kafka benchmarks' command lines."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from funke.cli.bench_docs import WriteDocs

console = Console()
err = Console(stderr=True)

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


def _step(step: str) -> None:
    err.print(f"[dim]{step}[/dim]")


def _command(canonical: list[str]) -> str:
    return shlex.join(["funke", *sys.argv[1:]]) if Path(sys.argv[0]).name == "funke" else shlex.join(canonical)


def _services(bootstrap: str) -> None:
    """Start the local broker (``funke services up kafka``) when the bench uses the default address."""
    from funke import services
    from funke.cli.main import _local_services

    _local_services({"kafka": bootstrap} if bootstrap == services.KAFKA_BOOTSTRAP else {})


def ysb(
    *, events: int, batch_rows: int, partitions: int, bootstrap: str, rounds: int, warmup: bool, write: bool, doc: Path
) -> None:
    """``funke bench ysb --source kafka``: both systems over one topic; a row in docs/benchmarks.md."""
    from funke.bench import report
    from funke.bench.ysb import session
    from funke.bench.ysb_kafka import run_ysb_kafka
    from funke.cli.main import _reported

    canonical = ["funke", "bench", "ysb", "--source", "kafka", "--events", str(events), "--batch-rows", str(batch_rows)]
    canonical += ["--partitions", str(partitions)] if partitions != 2 else []
    canonical += ["--rounds", str(rounds)] if rounds != 1 else []
    canonical += [] if warmup else ["--no-warmup"]
    _services(bootstrap)
    with _reported():
        spark = session("base")
        setup = report.setup(spark)
        result = run_ysb_kafka(
            spark, events=events, rows_per_batch=batch_rows, partitions=partitions, bootstrap=bootstrap, rounds=rounds,
            warmup=warmup, on_step=_step,
        )  # fmt: skip
    console.print(report.table(result, setup))
    if write:
        report.append_row(doc, report.markdown_row(result, setup, _command(canonical)), report.KAFKA_SECTION, report.KAFKA_INTRO)
        console.print(f"appended a row to {doc}")


def register(bench: typer.Typer) -> None:
    @bench.command("latency")
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
        write: WriteDocs = False,
        doc: Annotated[Path, typer.Option(help="the benchmarks page")] = Path("docs/benchmarks.md"),
    ) -> None:
        """End-to-end latency Kafka → funke → Kafka (exactly-once sink, read_committed consumer), p50 / p99."""
        from funke.bench import report
        from funke.bench.latency_kafka import JOBS, run_latency, summary
        from funke.bench.ysb import session
        from funke.cli.main import _check_doc, _reported

        if source != "kafka":
            raise typer.BadParameter(
                "only kafka so far (for the generator: funke bench ysb --latency-seconds)", param_hint="--source"
            )
        jobs = tuple(job or JOBS)
        bad = [j for j in jobs if j not in JOBS]
        if bad:
            raise typer.BadParameter(f"{bad}: choose from {', '.join(JOBS)}", param_hint="--job")
        _check_doc(write, doc)
        _services(bootstrap)
        with _reported():
            spark = session("base")
            setup = report.setup(spark)
            results = run_latency(
                spark, rate=rate, seconds=seconds, warmup_s=warmup, partitions=partitions, bootstrap=bootstrap, jobs=jobs,
                on_step=_step,
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
        console.print_json(json.dumps(figures))
        if write:
            canonical = ["funke", "bench", "latency", "--source", "kafka", "--rate", f"{rate:g}", "--seconds", f"{seconds:g}"]
            command = _command(canonical)
            lines = []
            when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M")
            for f, r in zip(figures, results, strict=True):
                phases = ", ".join(f"{k} {v:g}" for k, v in f["phases_ms_p50"].items())
                lines.append(
                    f"- {when} `{command}` ({setup.versions}; {setup.machine}): **{f['job']}**: {f['produced_rate']:,} records/s "
                    f"produced, latency p50 / p99 / max **{f['p50_ms']} / {f['p99_ms']} / {f['max_ms']} ms** over {f['samples']:,} "
                    f"{'window results' if f['job'] == 'window' else 'records'} (after {f['warmup_s']:g} s warm-up); "
                    f"{f['received']:,} received of {f['expected']:,} expected, {f['missing']} missing, {f['duplicates']} "
                    f"duplicated{'' if r.exact else ' — NOT EXACT'}; {f['batches']} micro-batches, p50 {f['batch_ms_p50']} ms, "
                    f"max {f['batch_ms_max']} ms "
                    f"(phases p50 ms: {phases})"
                )
            report.add_to_section(doc, LATENCY_SECTION.removeprefix("## "), lines, intro=LATENCY_INTRO)
            console.print(f"appended to {doc}")
        if not all(r.exact for r in results):
            raise typer.Exit(1)
