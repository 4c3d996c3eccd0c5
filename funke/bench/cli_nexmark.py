"""``funke bench nexmark``: the Nexmark queries timed at steady state (or, with ``--check``, checked against
their references), from funke's formulation or from a Nexmark checkout's unchanged files (``--queries DIR``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from funke.bench.cli_common import DOCS, WriteDocs, append, bench_session, check_doc, console, entry, reported, step

SECTION = "Nexmark in Flink SQL (`funke bench nexmark`)"


def nexmark(
    which: Annotated[str, typer.Argument(help="the queries: q0,q5,... or all (every one funke runs)")] = "all",
    queries: Annotated[
        Path | None,
        typer.Option(
            help="a directory of Nexmark's query files (ddl_gen.sql, ddl_views.sql, qN.sql), e.g. "
            "nexmark/nexmark-flink/src/main/resources/queries in a checkout of github.com/nexmark/nexmark, run "
            "unchanged; default: funke's own formulation"
        ),
    ] = None,
    events: Annotated[
        int | None, typer.Option(help="events per query (EVENTS_NUM); default: 12 seconds of event time")
    ] = None,
    tps: Annotated[
        int | None,
        typer.Option(
            help="events per second of event time (TPS), one micro-batch's worth; default 2 M without state, 200 k with"
        ),
    ] = None,
    bounded: Annotated[
        bool, typer.Option(help="run each query as a batch job (start to end, start-up measured apart)")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            help="check each query's result against its plain-Python reference, streaming and bounded, over 2,200 events"
        ),
    ] = False,
    write_docs: WriteDocs = False,
    doc: Annotated[Path, typer.Option(help="the benchmarks page (with --write-docs)")] = DOCS,
) -> None:
    """Nexmark's queries, each as its own job over funke's generated events: events/s and per core at steady state,
    beside Flink's per-core figures from Nexmark's guide. With --check: each result against its reference."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.nexmark import Suite, chosen
    from funke.bench.nexmark_bench import FLINK_SOURCE, refuse_unrunnable, summary
    from funke.bench.ysb import session

    check_doc(write_docs, doc)
    with reported():
        if queries is not None and not queries.is_dir():
            raise typer.BadParameter(
                f"{queries} is not a directory: --queries takes the directory of Nexmark's query files; name the queries "
                "to run as the argument (funke bench nexmark q0,q5)",
                param_hint="--queries",
            )
        suite = Suite(queries)
        names = chosen(suite, which)
        if check:
            _check(session(), suite, names, events, tps)
            return
        refuse_unrunnable(suite, names)
    with bench_session() as (spark, setup):
        runs = _bench(spark, suite, names, events, tps, bounded)
    line = summary(runs, suite)
    console.print(line)
    if write_docs:
        canonical = ["funke", "bench", "nexmark", which] + (["--queries", str(queries)] if queries else [])
        canonical += (["--events", str(events)] if events else []) + (["--tps", str(tps)] if tps else [])
        canonical += ["--bounded"] if bounded else []
        append(doc, SECTION, [entry(canonical, f"{line}. Flink: {FLINK_SOURCE}", setup)])


def _check(spark: object, suite: object, names: tuple[str, ...], events: int | None, tps: int | None) -> None:
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.nexmark import Settings
    from funke.bench.nexmark_check import CHECK_SETTINGS, check_suite, table

    settings = Settings(events=events or CHECK_SETTINGS.events, tps=tps or CHECK_SETTINGS.tps)
    results = check_suite(spark, suite, names, settings, on_step=step)  # type: ignore[arg-type]
    typer.echo(table(results))  # (Markdown: not wrapped to the terminal)
    if any(r.outcome in ("differs", "failed") for r in results):
        raise typer.Exit(1)


def _bench(spark: object, suite: object, names: tuple[str, ...], events: int | None, tps: int | None, bounded: bool) -> list:
    from funke.bench.nexmark_bench import run_nexmark_bench, table  # (lazy: so the CLI starts fast)

    runs = run_nexmark_bench(spark, names, suite=suite, events=events, tps=tps, bounded=bounded, on_step=step)  # type: ignore[arg-type]
    t = Table(title=f"Nexmark, {'bounded' if bounded else 'streaming, steady state'}")
    for name in ("query", "events", "events/s", "cores", "per core", "Flink per core", "funke / Flink", "start-up"):
        t.add_column(name, justify="left" if name == "query" else "right")
    for row in table(runs):
        t.add_row(*row)
    console.print(t)
    return runs
