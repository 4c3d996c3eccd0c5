"""Job management commands: ``funke list``, ``savepoint``, ``savepoints``, ``stop``, ``state``.

They read the job registry of ``FUNKE_HOME``. A savepoint or stop request goes to the
running job through a request file it polls (``funke.runtime.control``); a savepoint of a
job that is not running is cut from its checkpoint by this process.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from funke.errors import FunkeError

console = Console()
err = Console(stderr=True)


def _fail(e: Exception) -> typer.Exit:
    err.print(f"[red]error:[/red] {e}")
    return typer.Exit(1)


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def list_jobs(as_json: Annotated[bool, typer.Option("--json", help="print the jobs as JSON (with each running job's HTTP address)")] = False) -> None:
    """The jobs run under this funke home (FUNKE_HOME), with their status."""
    import json

    from funke.savepoints.registry import registry

    reg = registry()
    jobs = reg.jobs()
    if as_json:
        rows = [
            {"name": j.name, "status": j.status, "alive": j.alive, "started_at": _when(j.started_at), "checkpoint": j.checkpoint,
             "plan": j.fingerprint, "http": reg.endpoint(j.name) if j.alive else None, "spark_ui": reg.spark_ui(j.name) if j.alive else None}
            for j in jobs
        ]  # fmt: skip
        typer.echo(json.dumps(rows, indent=2))
        return
    rows = [
        (j.name, j.status if j.status != "running" or j.alive else "running? (its process is gone: killed)", (reg.endpoint(j.name) or "") if j.alive else "",
         _when(j.started_at), j.checkpoint, j.fingerprint)
        for j in jobs
    ]  # fmt: skip
    console.print(*_fitted(rows))


#: ``funke list``'s columns, and the order they are left out in when the terminal is too narrow for all.
LIST_COLUMNS = ("job", "status", "http", "started (UTC)", "checkpoint", "plan")
LEFT_OUT_FIRST = ("plan", "checkpoint", "started (UTC)")


def _fitted(rows: list[tuple[str, ...]]) -> list[Any]:
    """The job table at the console's width: an address is never cut (its column does not wrap and
    is as wide as the longest one); the less useful columns go when all would not fit, and a
    note says which (``--json`` has them)."""
    columns = list(LIST_COLUMNS)
    for drop in (None, *LEFT_OUT_FIRST):
        if drop is not None:
            columns.remove(drop)
        t = _table(columns, rows)
        if console.measure(t, options=console.options.update_width(10_000)).maximum <= console.width:
            break
    gone = [c for c in LIST_COLUMNS if c not in columns]
    note = f"[dim]({', '.join(gone)} left out at this width: funke list --json shows every field)[/dim]" if gone else None
    return [t] if note is None else [t, note]


def _table(columns: list[str], rows: list[tuple[str, ...]]) -> Table:
    t = Table()
    widest = max((len(r[2]) for r in rows), default=0)
    for c in columns:
        if c == "http":  # an address is copied and clicked: whole, on one line
            t.add_column(c, no_wrap=True, min_width=max(len(c), widest))
        else:
            t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*(r[LIST_COLUMNS.index(c)] for c in columns))
    return t


def savepoint(
    job: Annotated[str | None, typer.Argument(help="the job's name")] = None,
    directory: Annotated[str | None, typer.Argument(help="where the savepoint goes (default: the job's home)")] = None,
    dispose: Annotated[str | None, typer.Option(help="delete this savepoint instead")] = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the running job's answer")] = 600,
) -> None:
    """Take a savepoint of a job while it runs (without stopping it), or --dispose one."""
    from funke import savepoints as sp

    try:
        if dispose is not None:
            sp.dispose(dispose)
            console.print(f"disposed {dispose}")
            return
        if job is None:
            raise typer.BadParameter("name the job (or --dispose PATH)")
        path = _savepoint(job, directory, timeout)
    except FunkeError as e:
        raise _fail(e) from None
    typer.echo(path)  # plain: scripts read it


def _savepoint(job: str, directory: str | None, timeout: float) -> str:
    from funke.config import settings
    from funke.runtime.control import ask
    from funke.savepoints.registry import Registry

    home = settings().home
    record = Registry(home).job(job)
    if record.alive:
        return ask(home, job, "savepoint", directory, alive=lambda: Registry(home).job(job).process_alive, timeout_s=timeout)["savepoint"]
    # Not running: cut the savepoint from its checkpoint here (Spark only to write the state tables).
    from funke.savepoints import take
    from funke.spark.session import get_session

    spark = get_session(settings(), {}, f"funke-savepoint-{job}")
    target = directory or str(Path(home) / "jobs" / job / "savepoints")
    taken = take(record.checkpoint, job=job, target=target, spark=spark)
    Registry(home).add_savepoint(str(taken.path), job, batches=taken.batches, size_bytes=taken.manifest["size_bytes"], took_ms=taken.manifest["took_ms"])
    return str(taken.path)


def savepoints(job: Annotated[str, typer.Argument(help="the job's name")]) -> None:
    """The savepoints taken of a job, oldest first: one per line, its path first."""
    from funke.savepoints.registry import registry

    for s in registry().savepoints(job):
        there = "" if Path(s.path).is_dir() else "  (gone)"
        batches = ", ".join(f"{k} batch {v}" for k, v in sorted(s.batches.items()))
        typer.echo(f"{s.path}  taken {_when(s.created_at)} UTC  {batches}  {s.size_bytes / 1e6:.1f} MB  {s.took_ms} ms{there}")


def stop(
    job: Annotated[str, typer.Argument(help="the job's name")],
    savepoint_dir: Annotated[str | None, typer.Option("--savepoint", help="take a savepoint into DIR as it stops")] = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the job's answer")] = 600,
) -> None:
    """Stop a running job, optionally with a savepoint of where it stopped; say what was done."""
    from funke.config import settings
    from funke.runtime.control import ask
    from funke.savepoints.registry import Registry

    home = settings().home
    try:
        registry = Registry(home)
        record = registry.job(job)
        if not record.alive:
            gone = " (its process is gone: killed)" if record.status == "running" else f" since {_when(record.updated_at)} UTC"
            raise FunkeError(f"nothing to stop: job {job!r} is not running (status: {record.status}{gone})")
        with_sp = f" with a savepoint into {savepoint_dir}" if savepoint_dir else ""
        err.print(f"stopping job {job!r} (pid {record.pid}){with_sp}…")
        answer = ask(home, job, "stop", savepoint_dir, alive=lambda: registry.job(job).process_alive, timeout_s=timeout)
    except FunkeError as e:
        raise _fail(e) from None
    batches = answer.get("batches") or {}
    where = ", ".join(f"{q} after micro-batch {b}" for q, b in sorted(batches.items())) or "before its first micro-batch"
    typer.echo(f"stopped job {job!r}: {where}" + (f"; savepoint at {answer['savepoint']}" if answer.get("savepoint") else ""))


def register(app: typer.Typer) -> None:
    app.command("list")(list_jobs)
    app.command("savepoint")(savepoint)
    app.command("savepoints")(savepoints)
    app.command("stop")(stop)
    app.command("state")(state)


def state(
    job: Annotated[str, typer.Argument(help="the job's name")],
    uid: Annotated[str, typer.Argument(help="the stateful operator's uid (explain shows them)")],
    key: Annotated[str | None, typer.Argument(help="one key (JSON for a composite key); default: list the keys")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the job's answer")] = 120,
) -> None:
    """A running job's keyed state, as of its last committed micro-batch (asked of the job's HTTP server)."""
    import json

    try:
        answer = ask_http(job, f"/jobs/{job}/state/{uid}", {"key": key} if key is not None else {}, timeout=timeout)
    except FunkeError as e:
        raise _fail(e) from None
    if as_json:
        typer.echo(json.dumps(answer, indent=2, sort_keys=True))
        return
    if key is None:
        console.print(f"{job} / {uid}, batch {answer['batch']}: {len(answer['keys'])} keys")
        for k in answer["keys"]:
            typer.echo(json.dumps(k) if not isinstance(k, str) else k)
        return
    rows = answer["rows"]
    t = Table(*(rows[0].keys() if rows else ["(no state for this key)"]), title=f"{job} / {uid} / {key}, batch {answer['batch']}")
    for r in rows:
        t.add_row(*(str(v) for v in r.values()))
    console.print(t)


def ask_http(job: str, path: str, params: dict[str, str], *, timeout: float, method: str = "GET") -> Any:
    """GET (or POST) ``path`` of a running job's HTTP server, with its token when it has one; the JSON answer."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    from funke.config import settings
    from funke.runtime.server import read_token
    from funke.savepoints.registry import Registry

    home = settings().home
    registry = Registry(home)
    if not registry.job(job).alive:
        raise FunkeError(f"job {job!r} is not running (status: {registry.job(job).status}): queryable state is served by the running job")
    address = registry.endpoint(job)
    if address is None:
        raise FunkeError(f"job {job!r} runs without an HTTP server (FUNKE_HTTP=false)")
    url = address + urllib.parse.quote(path) + ("?" + urllib.parse.urlencode(params) if params else "")
    request = urllib.request.Request(url, method=method)
    token = read_token(home, job)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        try:
            body = json.loads(body).get("error", body)
        except ValueError:
            pass
        raise FunkeError(f"job {job!r} answered {e.code}: {body}") from None
    except urllib.error.URLError as e:
        raise FunkeError(f"job {job!r} did not answer at {address}: {e.reason}") from None
