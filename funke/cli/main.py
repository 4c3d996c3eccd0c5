"""The ``funke`` command: ``run`` and ``explain`` a job found by import string; ``bench`` measures."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from funke.bench.cli import bench
from funke.bench.cli_produce import ysb
from funke.cli.jobs import register as register_jobs
from funke.cli.services import app as services_app
from funke.cli.services import cluster as cluster_app
from funke.command_errors import reported
from funke.errors import FunkeError
from funke.extras import missing_extra

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
    target: Annotated[str, typer.Argument(help="MODULE:JOB, e.g. examples.ysb:job, a Flink SQL script FILE.sql, or a PyFlink script FILE.py [ARGS...]")],
    events: Annotated[Optional[int], typer.Option(help="events the job's generator produces (job option)")] = None,
    output: Annotated[Optional[str], typer.Option(help="directory for the results as Parquet (job option)")] = None,
    rate: Annotated[Optional[float], typer.Option(help="generator rows per second (job option)")] = None,
    bounded: Annotated[bool, typer.Option("--bounded", help="run as a bounded (batch) job over the same input (without it: the job's runtime mode, streaming unless it sets batch)")] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="start from the beginning instead of resuming the job's last checkpoint")] = False,
    live: Annotated[bool, typer.Option(help="show live progress")] = True,
    json_summary: Annotated[bool, typer.Option("--json", help="print the final metrics as JSON")] = False,
    opt: Annotated[Optional[list[str]], typer.Option(help="another job option, KEY=VALUE (repeatable)")] = None,
    name: Annotated[Optional[str], typer.Option(help="the job's name (checkpoints, savepoints, funke list); default: its app name")] = None,
    from_savepoint: Annotated[Optional[str], typer.Option(help="start from this savepoint (state and source positions)")] = None,
    allow_non_restored_state: Annotated[bool, typer.Option("--allow-non-restored-state", help="drop savepoint state the job no longer has")] = False,
) -> None:
    """Run a job on local Spark (or the cluster FUNKE_MASTER / FUNKE_REMOTE names) until its input ends."""
    options = _options(events, output, rate, opt)
    _start(target, options, bounded=bounded, fresh=fresh, name=name, from_savepoint=from_savepoint,
           allow_non_restored_state=allow_non_restored_state, live=live, json_summary=json_summary)  # fmt: skip


@app.command()
def sql(
    script: Annotated[str, typer.Argument(help="a Flink SQL script: CREATE TABLE ...; INSERT INTO ... SELECT ...;")],
    bounded: Annotated[bool, typer.Option("--bounded", help="run as a bounded (batch) job over the same input (without it: the job's runtime mode, streaming unless it sets batch)")] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="start from the beginning instead of resuming the job's last checkpoint")] = False,
    live: Annotated[bool, typer.Option(help="show live progress")] = True,
    json_summary: Annotated[bool, typer.Option("--json", help="print the final metrics as JSON")] = False,
    name: Annotated[Optional[str], typer.Option(help="the job's name (checkpoints, savepoints, funke list); default: the file's name")] = None,
    from_savepoint: Annotated[Optional[str], typer.Option(help="start from this savepoint (state and source positions)")] = None,
    allow_non_restored_state: Annotated[bool, typer.Option("--allow-non-restored-state", help="drop savepoint state the job no longer has")] = False,
) -> None:
    """Run a Flink SQL script as one job: its tables, and all its INSERT INTO statements together (as ``funke run FILE.sql``)."""
    _start(script, {}, bounded=bounded, fresh=fresh, name=name, from_savepoint=from_savepoint,
           allow_non_restored_state=allow_non_restored_state, live=live, json_summary=json_summary)  # fmt: skip


@app.command()
def resume(
    job: Annotated[str, typer.Argument(help="the job's name (funke list)")],
    from_savepoint: Annotated[str, typer.Option("--from", help="the savepoint to start from (funke savepoints JOB)")],
    target: Annotated[Optional[str], typer.Option(help="MODULE:JOB to run instead of the one the job was started with (an upgrade)")] = None,
    allow_non_restored_state: Annotated[bool, typer.Option("--allow-non-restored-state", help="drop savepoint state the job no longer has")] = False,
    live: Annotated[bool, typer.Option(help="show live progress")] = True,
    json_summary: Annotated[bool, typer.Option("--json", help="print the final metrics as JSON")] = False,
) -> None:
    """Start a stopped job again from a savepoint, with the code and options ``funke run`` started it with."""
    from funke.config import settings
    from funke.savepoints.registry import Registry

    with reported():
        registry = Registry(settings().home)
        record = registry.job(job)
        if record.alive:
            raise FunkeError(f"job {job!r} is running: stop it first (funke stop {job} --savepoint DIR), then resume")
        launched = registry.launch(job)
        if launched is None and target is None:
            raise FunkeError(f"job {job!r} was not started by `funke run`, so funke does not know its code: pass --target MODULE:JOB")
        recorded_target, options = launched or (target, {})
    _start(target or recorded_target, options, bounded=False, fresh=False, name=job, from_savepoint=from_savepoint,
           allow_non_restored_state=allow_non_restored_state, live=live, json_summary=json_summary)  # fmt: skip


def _start(target: str, options: dict[str, object], *, bounded: bool, fresh: bool, name: str | None, from_savepoint: str | None,
           allow_non_restored_state: bool, live: bool, json_summary: bool) -> None:  # fmt: skip
    from funke.cli.live import follow
    from funke.cli.locate import build
    from funke.savepoints.registry import Registry

    with reported():
        env = build(target, options)
        handle = env.execute(bounded=bounded or None, fresh=fresh, name=name, from_savepoint=from_savepoint, allow_non_restored_state=allow_non_restored_state)
        Registry(env.settings.home).note_launch(handle.name, target, options)
        for note in handle.restore_notes:
            err.print(f"[yellow]restore:[/yellow] {note}")
        address = getattr(handle, "http_address", None)
        if address:
            err.print(f"dashboard, metrics and state: {address}/  (funke list shows it; Ctrl-C stops the job)")
        metrics = follow(handle, console) if live else handle.wait().metrics()
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

    with reported():
        env = build(target, _options(events, output, None, opt))
        typer.echo(env.explain(bounded=bounded))


app.add_typer(ysb, name="ysb")
app.add_typer(services_app, name="services")
app.add_typer(cluster_app, name="cluster")
app.add_typer(bench, name="bench")
register_jobs(app)


def main() -> None:
    # ``funke run SCRIPT.py [ARGS...]`` with a PyFlink script: the script takes its own arguments
    # (``--output`` ...), so it is dispatched before typer parses them as funke's options.
    if len(sys.argv) > 2 and sys.argv[1] == "run" and sys.argv[2].endswith(".py"):
        from funke.pyflink._runner import imports_pyflink, run_script

        if not imports_pyflink(sys.argv[2]):
            err.print(f"[red]error:[/red] {sys.argv[2]} imports no pyflink: funke run takes a PyFlink script (FILE.py), "
                      "a Flink SQL script (FILE.sql) or MODULE:JOB")  # fmt: skip
            raise SystemExit(1)
        run_script(sys.argv[2], sys.argv[3:])
        return
    try:
        app()
    except FunkeError as e:  # (one a command did not report itself)
        err.print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)
        sys.exit(1)
    except ModuleNotFoundError as e:  # an optional dependency: one line naming its extra, no traceback
        hint = missing_extra(e)
        if hint is None:
            raise
        command = " ".join(["funke", *(a for a in sys.argv[1:3] if not a.startswith("-"))])
        err.print(f"[red]error:[/red] {escape(command)} {escape(hint)}", soft_wrap=True)
        sys.exit(1)
