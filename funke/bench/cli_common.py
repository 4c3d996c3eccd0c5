"""The shape every ``funke bench`` command shares: its ``--write-docs``/``--doc`` options, the bench's SparkSession
with its setup, how a funke error ends the command (``reported``, from funke/command_errors.py, which the ``funke``
command shares), and how figures go into docs/benchmarks.md (only with ``--write-docs``: a run for a look, or one too
small to measure, leaves the checkout's docs alone)."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from funke.command_errors import reported

if TYPE_CHECKING:
    from funke.bench.report import Setup

console = Console()
err = Console(stderr=True)

DOCS = Path("docs/benchmarks.md")

WriteDocs = Annotated[
    bool,
    typer.Option(
        "--write-docs/--no-write",
        help="append the figures to --doc; off by default: the docs take figures of full runs, with the machine stated",
    ),
]
Doc = Annotated[Path, typer.Option(help="the benchmarks page")]

Result = TypeVar("Result")


def step(text: str) -> None:
    """A benchmark's progress, on stderr (stdout keeps the figures)."""
    err.print(f"[dim]{text}[/dim]")


def command(canonical: list[str]) -> str:
    """The command as typed when run as ``funke``, else its canonical spelling (tests, ``python -m``)."""
    return shlex.join(["funke", *sys.argv[1:]]) if Path(sys.argv[0]).name == "funke" else shlex.join(canonical)


def now() -> str:
    """When a docs line was written (UTC, to the minute)."""
    return f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M}"


def check_doc(write: bool, doc: Path) -> None:
    """Refuse ``--write-docs`` before any work when the benchmarks page cannot be written."""
    if write and not doc.parent.is_dir():
        message = f"{doc.parent} does not exist: run from the funke checkout, or pass --doc PATH"
        raise typer.BadParameter(message, param_hint="--doc")


@contextmanager
def bench_session(variant: str = "base") -> Iterator[tuple[Any, Setup]]:
    """The benchmarks' SparkSession and its setup (versions, machine, the load before the run); funke errors reported."""
    # (lazy: these load pyspark, and the CLI starts without it)
    from funke.bench import report
    from funke.bench.ysb import session

    with reported():
        spark = session(variant)
        yield spark, report.setup(spark)


def local_services(wanted: dict[str, str]) -> None:
    """Start (``funke services up``) the local servers a benchmark uses at their default addresses."""
    from funke import services  # (lazy: only the benches with servers need it)

    defaults = {"postgres": services.POSTGRES_DSN, "redis": services.REDIS_URL, "kafka": services.KAFKA_BOOTSTRAP}
    names = [name for name, address in wanted.items() if address == defaults[name]]
    if names:
        with reported():
            services.up(names, say=step)


def entry(canonical: list[str], figures: str, setup: Setup) -> str:
    """A line of the benchmarks page: when, the command, its figures, then the versions and the machine."""
    return f"- {now()} `{command(canonical)}`: {figures}. {setup.versions}; {setup.machine}"


def append(doc: Path, section: str, lines: list[str], intro: str = "") -> None:
    """Add the lines to a section of the benchmarks page and say so."""
    from funke.bench import report  # (lazy: it loads pyspark)

    report.add_to_section(doc, section, lines, intro=intro)
    console.print(f"appended to {doc}")


def summarized(
    run: Callable[[Any], Result], summary: Callable[[Result], str], *, canonical: list[str], section: str, write: bool,
    doc: Path, intro: str = "",
) -> None:  # fmt: skip
    """The common bench: ``--doc`` checked first, ``run(spark)`` on the bench session, its summary line printed and,
    with ``--write-docs``, added to ``section`` of the benchmarks page."""
    check_doc(write, doc)
    with bench_session() as (spark, setup):
        result = run(spark)
    line = summary(result)
    console.print(line)
    if write:
        append(doc, section, [entry(canonical, line, setup)], intro=intro)


def self_checked(
    figures: object, lines: Callable[[], list[str]], *, exact: bool, section: str, write: bool, doc: Path, intro: str = ""
) -> None:
    """The end of a self-checking bench: its figures printed as JSON, with ``--write-docs`` its ``lines()`` added to
    ``section`` of the benchmarks page, and exit code 1 when its results were not exact."""
    console.print_json(json.dumps(figures, default=str))
    if write:
        append(doc, section, lines(), intro=intro)
    if not exact:
        raise typer.Exit(1)
