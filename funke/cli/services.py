"""``funke services up|down|status``: PostgreSQL, Redis and Kafka on loopback for examples, tests, benchmarks."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from funke.errors import FunkeError
from funke.services.spark import SparkStandalone

app = typer.Typer(
    help="Local PostgreSQL, Redis and Kafka on loopback: installed when missing, started, stopped.", no_args_is_help=True
)
console = Console()
err = Console(stderr=True)

Names = Annotated[list[str] | None, typer.Argument(help="kafka, redis, postgres (default: all three)")]


def _say(line: str) -> None:
    err.print(f"[dim]{line}[/dim]")


def _table(statuses: list) -> None:
    t = Table(show_header=True)
    for c in ("service", "address", "installed", "running", "detail"):
        t.add_column(c)
    for s in statuses:
        t.add_row(
            s.name, s.address, "yes" if s.installed else "no", "[green]yes[/green]" if s.running else "[red]no[/red]", s.detail
        )
    console.print(t)


def _run(action: str, names: list[str] | None) -> None:
    from funke import services

    try:
        if action == "up":
            _table(services.up(names, say=_say))
        elif action == "down":
            services.down(names, say=_say)
        else:
            found = services.status(names)
            _table(found)
            if not all(s.running for s in found):
                raise typer.Exit(3)
    except FunkeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None


@app.command()
def up(names: Names = None) -> None:
    """Install what is missing, start each server on loopback and wait until it answers (idempotent)."""
    _run("up", names)


@app.command()
def down(names: Names = None) -> None:
    """Stop the servers (Kafka keeps its topics on disk; Redis keeps nothing)."""
    _run("down", names)


@app.command()
def status(names: Names = None) -> None:
    """What runs where; exits 3 when one of the servers named is not running."""
    _run("status", names)


cluster = typer.Typer(help="A Spark standalone cluster on loopback (master and workers from pyspark's spark-class).", no_args_is_help=True)


def _cluster(workers: int = 2, cores: int = 1, memory: str = "1g") -> SparkStandalone:
    from funke.config import settings

    return SparkStandalone(settings().services_root, workers=workers, cores=cores, memory=memory)


@cluster.command("up")
def cluster_up(
    workers: Annotated[int, typer.Option(help="how many workers")] = 2,
    cores: Annotated[int, typer.Option(help="cores per worker")] = 1,
    memory: Annotated[str, typer.Option(help="memory per worker")] = "1g",
) -> None:
    """Start a master on spark://127.0.0.1:7077 (UI on 8080) and the workers; run jobs with FUNKE_MASTER=spark://127.0.0.1:7077."""
    try:
        c = _cluster(workers, cores, memory)
        c.up(_say)
        _table([c.status()])
    except FunkeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None


@cluster.command("down")
def cluster_down() -> None:
    """Stop the workers (with their executors) and the master."""
    try:
        _cluster().down(_say)
    except FunkeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None


@cluster.command("status")
def cluster_status() -> None:
    """The master's address, its workers and cores; exits 3 when it is not running."""
    c = _cluster(workers=1)
    _table([c.status()])
    if not c.answers():
        raise typer.Exit(3)
