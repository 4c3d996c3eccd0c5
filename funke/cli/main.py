"""The ``funke`` command: ``run`` and ``explain`` a job found by import string."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from funke.errors import FunkeError

app = typer.Typer(help="funke: Flink's stream-processing model for Python, on Apache Spark.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def _options(events: int | None, output: str | None, rate: float | None) -> dict[str, object]:
    return {"events": events, "output": output, "rate": rate}


@app.command()
def run(
    target: Annotated[str, typer.Argument(help="MODULE:JOB, e.g. examples.ysb:job")],
    events: Annotated[Optional[int], typer.Option(help="events the job's generator produces (job option)")] = None,
    output: Annotated[Optional[str], typer.Option(help="directory for the results as Parquet (job option)")] = None,
    rate: Annotated[Optional[float], typer.Option(help="generator rows per second (job option)")] = None,
    bounded: Annotated[bool, typer.Option("--bounded", help="run as a bounded (batch) job over the same input")] = False,
    live: Annotated[bool, typer.Option(help="show live progress")] = True,
    json_summary: Annotated[bool, typer.Option("--json", help="print the final metrics as JSON")] = False,
) -> None:
    """Run a job on local Spark (or the cluster FUNKE_MASTER / FUNKE_REMOTE names) until its input ends."""
    from funke.cli.live import follow
    from funke.cli.locate import build

    try:
        env = build(target, _options(events, output, rate))
        handle = env.execute(bounded=bounded)
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
) -> None:
    """Print the plan: each node, its uid, the path it runs on (native/general) and why."""
    from funke.cli.locate import build

    try:
        env = build(target, _options(events, output, None))
        typer.echo(env.explain(bounded=bounded))
    except FunkeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None


def main() -> None:
    app()
