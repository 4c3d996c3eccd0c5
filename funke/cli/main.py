"""The ``funke`` command: ``run`` and ``explain`` a job found by import string; ``bench`` measures."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from funke.cli.ysb_produce import ysb
from funke.errors import FunkeError

app = typer.Typer(help="funke: Flink's stream-processing model for Python, on Apache Spark.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def _options(events: int | None, output: str | None, rate: float | None, opts: list[str] | None = None) -> dict[str, object]:
    """The job function's options: the common ones, plus any ``--opt KEY=VALUE``."""
    out: dict[str, object] = {"events": events, "output": output, "rate": rate}
    for o in opts or []:
        key, sep, value = o.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{o!r} is not KEY=VALUE", param_hint="--opt")
        out[key.replace("-", "_")] = value
    return out


@app.command()
def run(
    target: Annotated[str, typer.Argument(help="MODULE:JOB, e.g. examples.ysb:job")],
    events: Annotated[Optional[int], typer.Option(help="events the job's generator produces (job option)")] = None,
    output: Annotated[Optional[str], typer.Option(help="directory for the results as Parquet (job option)")] = None,
    rate: Annotated[Optional[float], typer.Option(help="generator rows per second (job option)")] = None,
    bounded: Annotated[bool, typer.Option("--bounded", help="run as a bounded (batch) job over the same input")] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="start from the beginning instead of resuming the job's last checkpoint")] = False,
    live: Annotated[bool, typer.Option(help="show live progress")] = True,
    json_summary: Annotated[bool, typer.Option("--json", help="print the final metrics as JSON")] = False,
    opt: Annotated[Optional[list[str]], typer.Option(help="another job option, KEY=VALUE (repeatable)")] = None,
) -> None:
    """Run a job on local Spark (or the cluster FUNKE_MASTER / FUNKE_REMOTE names) until its input ends."""
    from funke.cli.live import follow
    from funke.cli.locate import build

    try:
        env = build(target, _options(events, output, rate, opt))
        handle = env.execute(bounded=bounded, fresh=fresh)
        metrics = follow(handle, console) if live else handle.wait().metrics()
    except FunkeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None
    if json_summary:
        console.print_json(json.dumps(metrics))
        return
    t = Table(title="summary", show_header=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    for k, v in metrics.items():
        t.add_row(k, f"{v:,}" if isinstance(v, int) else str(v))
    console.print(t)


@app.command()
def explain(
    target: Annotated[str, typer.Argument(help="MODULE:JOB")],
    bounded: Annotated[bool, typer.Option("--bounded", help="explain the bounded (batch) plan")] = False,
    events: Annotated[Optional[int], typer.Option(help="job option")] = None,
    output: Annotated[Optional[str], typer.Option(help="job option")] = None,
    opt: Annotated[Optional[list[str]], typer.Option(help="another job option, KEY=VALUE (repeatable)")] = None,
) -> None:
    """Print the plan: each node, its uid, the path it runs on (native/general) and why."""
    from funke.cli.locate import build

    try:
        env = build(target, _options(events, output, None, opt))
        typer.echo(env.explain(bounded=bounded))
    except FunkeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None


app.add_typer(ysb, name="ysb")

bench = typer.Typer(help="Measure funke against plain PySpark: same input, same Spark session, same run.", no_args_is_help=True)
app.add_typer(bench, name="bench")


@bench.command("ysb")
def bench_ysb(
    events: Annotated[int, typer.Option(help="events generated, the same ones for both systems")] = 20_000_000,
    variant: Annotated[str, typer.Option(help="base: 100 campaigns (cardinality, trigger: not yet)")] = "base",
    bounded: Annotated[bool, typer.Option("--bounded", help="funke's bounded run against a plain PySpark batch job")] = False,
    batch_rows: Annotated[int, typer.Option(help="events per micro-batch (streaming)")] = 1_000_000,
    latency_seconds: Annotated[float, typer.Option(help="also measure latency past the watermark, this long per system")] = 0,
    rate: Annotated[float, typer.Option(help="events/s of the latency runs")] = 100_000,
    exactly_once: Annotated[bool, typer.Option("--exactly-once", help="kill and restart mid-run, then check (not yet)")] = False,
    rounds: Annotated[int, typer.Option(help="measure each system this many times, alternating which goes first (median)")] = 1,
    warmup: Annotated[bool, typer.Option(help="run each system once over up to 1 M events first, unmeasured")] = True,
    write: Annotated[bool, typer.Option(help="append the figures as a row to --doc")] = True,
    doc: Annotated[Path, typer.Option(help="the benchmarks page the row goes to")] = Path("docs/benchmarks.md"),
) -> None:
    """The Yahoo! Streaming Benchmark on funke and on plain PySpark; both results checked against a reference."""
    from funke.bench import report
    from funke.bench.ysb import check_options, run_ysb, session

    try:
        check_options(variant=variant, bounded=bounded, exactly_once=exactly_once, latency_seconds=latency_seconds)
    except FunkeError as e:
        raise typer.BadParameter(str(e)) from None
    if write and not doc.parent.is_dir():
        message = f"{doc.parent} does not exist: run from the funke checkout, pass --doc PATH or --no-write"
        raise typer.BadParameter(message, param_hint="--doc")
    canonical = ["funke", "bench", "ysb", "--events", str(events), "--variant", variant, *(["--bounded"] if bounded else [])]
    canonical += ["--batch-rows", str(batch_rows)] if not bounded else []
    canonical += ["--latency-seconds", f"{latency_seconds:g}", "--rate", f"{rate:g}"] if latency_seconds else []
    canonical += ["--rounds", str(rounds)] if rounds != 1 else []
    canonical += [] if warmup else ["--no-warmup"]
    command = shlex.join(["funke", *sys.argv[1:]]) if Path(sys.argv[0]).name == "funke" else shlex.join(canonical)
    try:
        spark = session()
        setup = report.setup(spark)
        result = run_ysb(
            spark, events=events, variant=variant, bounded=bounded, rows_per_batch=batch_rows, latency_seconds=latency_seconds,
            rate=rate, warmup=warmup, rounds=rounds, on_step=lambda step: err.print(f"[dim]{step}[/dim]"),
        )
    except FunkeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None
    console.print(report.table(result, setup))
    if write:
        report.append_row(doc, report.markdown_row(result, setup, command))
        console.print(f"appended a row to {doc}")


@bench.command("general")
def bench_general(
    events: Annotated[int, typer.Option(help="events per job (>= 5 M: the first two micro-batches are not counted)")] = 10_000_000,
    sessions: Annotated[bool, typer.Option("--sessions", help="also the 100 000-user session-window job")] = False,
) -> None:
    """The general path (YSB with the data Artisans trigger) against the native YSB, in one run."""
    from rich.table import Table

    from funke.bench.general import run_general

    rows = run_general(events, sessions=sessions, on_step=lambda step: err.print(f"[dim]{step}[/dim]"))
    table = Table("job", "steady events/s", "batch p50 / p99 ms", "general / native", "load")
    for r in rows:
        table.add_row(r["job"], f"{r['steady_rows_per_s'] or 0:,}", f"{r['batch_ms_p50']} / {r['batch_ms_p99']}", str(r["ratio_to_native"]), str(r["load"]))
    console.print(table)


@bench.command("chaos")
def bench_chaos(
    kills: Annotated[int, typer.Option(help="how many times to kill the job (timer, during a sink write, after it, in turn)")] = 20,
    events: Annotated[int, typer.Option(help="events of the self-checking job")] = 60_000,
    rows_per_batch: Annotated[int, typer.Option(help="events per micro-batch")] = 500,
    dsn: Annotated[str, typer.Option(help="PostgreSQL the job writes to")] = "host=127.0.0.1 port=5432 dbname=test",
    seed: Annotated[int, typer.Option(help="seed of the kill moments")] = 0,
    source: Annotated[str, typer.Option(help="generator, redis (a Redis Stream written first) or files (JSON files written first)")] = "generator",
    redis: Annotated[str, typer.Option(help="the Redis server of --source redis")] = "redis://127.0.0.1:6379/0",
    write: Annotated[bool, typer.Option(help="append the figures to --doc")] = True,
    doc: Annotated[Path, typer.Option(help="the benchmarks page")] = Path("docs/benchmarks.md"),
) -> None:
    """Kill the self-checking job (examples/chaos.py) again and again; PostgreSQL must hold the failure-free result."""
    import datetime as dt
    import tempfile

    from examples.chaos import SOURCES
    from funke.bench.chaos import run_chaos, summary

    if source not in SOURCES:
        raise typer.BadParameter(f"choose one of {', '.join(SOURCES)}", param_hint="--source")
    with tempfile.TemporaryDirectory(prefix="funke-chaos-") as workdir:
        result = run_chaos(
            dsn, kills=kills, events=events, rows_per_batch=rows_per_batch, workdir=workdir, seed=seed, source=source, redis=redis,
            on_step=lambda s: err.print(f"[dim]{s}[/dim]"),
        )
    figures = summary(result)
    console.print_json(json.dumps(figures))
    if write:
        command = shlex.join(["funke", *sys.argv[1:]]) if Path(sys.argv[0]).name == "funke" else f"funke bench chaos --kills {kills}"
        line = (
            f"- {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} `{command}` (source: {source}): {figures['kills']} kills "
            f"({', '.join(f'{k} {v}' for k, v in figures['kills_by_mode'].items())}), {figures['runs']} runs, "
            f"{figures['records']:,} records, lost {figures['lost']}, duplicated {figures['duplicated']}, "
            f"alerts {figures['alerts']}, totals {'right' if figures['totals_ok'] else 'WRONG'}{' (no end: none)' if source == 'files' else ''}, "
            f"{figures['wall_s']} s"
        )
        with doc.open("a") as f:
            f.write(("\n## Chaos (exactly-once under kills)\n\n" if "## Chaos" not in doc.read_text() else "") + line + "\n")
        console.print(f"appended to {doc}")
    if not result.exact:
        raise typer.Exit(1)


def main() -> None:
    app()
