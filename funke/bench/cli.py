"""``funke bench``: the benchmarks' commands. Each states only its own options and what it runs; the shape they
share (``--write-docs``/``--doc``, the bench session, errors reported, and the two endings: ``summarized``, one summary
line; ``self_checked``, figures as JSON and exit code 1 unless exact) is funke/bench/cli_common.py. The Kafka, Nexmark and
PyFlink commands are in cli_kafka.py, cli_nexmark.py and cli_pyflink.py, mounted at the end."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from funke.bench import cli_kafka, cli_nexmark, cli_pyflink
from funke.bench.cli_common import (
    DOCS,
    Doc,
    WriteDocs,
    bench_session,
    check_doc,
    command,
    console,
    entry,
    local_services,
    now,
    reported,
    self_checked,
    step,
    summarized,
)
from funke.errors import FunkeError

bench = typer.Typer(help="Measure funke against plain PySpark: same input, same Spark session, same run.", no_args_is_help=True)

RowDoc = Annotated[Path, typer.Option(help="the benchmarks page the row goes to")]


@bench.command("ysb")
def bench_ysb(
    events: Annotated[int, typer.Option(help="events generated, the same ones for both systems")] = 20_000_000,
    variant: Annotated[
        str,
        typer.Option(
            help="base: 100 campaigns; cardinality: 1 M campaigns (large window state, 6g driver heap); "
            "trigger: the data Artisans trigger (early results every 1 s) against plain PySpark's update mode"
        ),
    ] = "base",
    bounded: Annotated[bool, typer.Option("--bounded", help="funke's bounded run against a plain PySpark batch job")] = False,
    batch_rows: Annotated[int, typer.Option(help="events per micro-batch (streaming)")] = 1_000_000,
    batch_seconds: Annotated[
        float,
        typer.Option(
            help="funke only: size its micro-batches adaptively, each to take about this long, starting at --batch-rows "
            "(plain PySpark keeps --batch-rows: rate-micro-batch has a fixed size); 0: fixed, as plain"
        ),
    ] = 0,
    latency_seconds: Annotated[float, typer.Option(help="also measure latency past the watermark, this long per system")] = 0,
    rate: Annotated[float, typer.Option(help="events/s of the latency runs")] = 100_000,
    latency_mode: Annotated[
        str,
        typer.Option(
            help="funke's latency job's mode (set_latency_mode): micro-batch, or latency-first (window results in the "
            "micro-batch whose elements pass the watermark); plain PySpark's is unchanged"
        ),
    ] = "micro-batch",
    exactly_once: Annotated[
        str,
        typer.Option(
            help="on: Spark's file sink and its _spark_metadata log (trigger variant: foreachBatch replacing each batch's "
            "directory), checkpoint on disk; off (both systems): foreachBatch appending plain Parquet (at-least-once), "
            "checkpoint on tmpfs (/dev/shm)"
        ),
    ] = "on",
    rounds: Annotated[int, typer.Option(help="measure each system this many times, alternating which goes first (median)")] = 1,
    warmup: Annotated[bool, typer.Option(help="run each system once over up to 1 M events first, unmeasured")] = True,
    operator_metrics: Annotated[
        bool, typer.Option("--operator-metrics", help="funke counts rows out of every operator, native ones too (what that costs)")
    ] = False,
    source: Annotated[
        str, typer.Option(help="generator (Spark generates the events) or kafka (written to a fresh topic first, read by both)")
    ] = "generator",
    partitions: Annotated[int, typer.Option(help="partitions of the topic (--source kafka)")] = 2,
    bootstrap: Annotated[str, typer.Option(help="Kafka bootstrap servers (--source kafka)")] = "127.0.0.1:9092",
    write: WriteDocs = False,
    doc: RowDoc = DOCS,
) -> None:
    """The Yahoo! Streaming Benchmark on funke and on plain PySpark; both results checked against a reference."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench import report
    from funke.bench.ysb import check_options, run_ysb

    if source not in ("generator", "kafka"):
        raise typer.BadParameter(f"{source!r}: choose generator or kafka", param_hint="--source")
    if source == "kafka" and latency_mode != "micro-batch":
        raise typer.BadParameter("measured with --source generator only", param_hint="--latency-mode")
    try:
        check_options(variant=variant, bounded=bounded, exactly_once=exactly_once, latency_seconds=latency_seconds,
                      latency_mode=latency_mode)  # fmt: skip
        if source == "kafka":
            from funke.bench.ysb_kafka import check_options as check_kafka

            check_kafka(variant=variant, bounded=bounded, exactly_once=exactly_once, latency_seconds=latency_seconds,
                        batch_seconds=batch_seconds)  # fmt: skip
    except FunkeError as e:
        raise typer.BadParameter(str(e)) from None
    check_doc(write, doc)
    if source == "kafka":
        cli_kafka.ysb(events=events, batch_rows=batch_rows, partitions=partitions, bootstrap=bootstrap, rounds=rounds,
                      warmup=warmup, write=write, doc=doc)  # fmt: skip
        return
    canonical = ["funke", "bench", "ysb", "--events", str(events), "--variant", variant, *(["--bounded"] if bounded else [])]
    canonical += ["--batch-rows", str(batch_rows)] if not bounded else []
    canonical += ["--batch-seconds", f"{batch_seconds:g}"] if batch_seconds and not bounded else []
    canonical += ["--exactly-once", exactly_once] if exactly_once != "on" else []
    canonical += ["--latency-seconds", f"{latency_seconds:g}", "--rate", f"{rate:g}"] if latency_seconds else []
    canonical += ["--latency-mode", latency_mode] if latency_mode != "micro-batch" else []
    canonical += ["--rounds", str(rounds)] if rounds != 1 else []
    canonical += [] if warmup else ["--no-warmup"]
    canonical += ["--operator-metrics"] if operator_metrics else []
    with bench_session(variant) as (spark, setup):
        result = run_ysb(
            spark, events=events, variant=variant, bounded=bounded, rows_per_batch=batch_rows,
            batch_seconds=batch_seconds or None, latency_seconds=latency_seconds, rate=rate, latency_mode=latency_mode,
            exactly_once=exactly_once, warmup=warmup, rounds=rounds, on_step=step, operator_metrics=operator_metrics,
        )  # fmt: skip
    console.print(report.table(result, setup))
    if write:
        report.append_row(doc, report.markdown_row(result, setup, command(canonical)))
        console.print(f"appended a row to {doc}")


@bench.command("checkpoint")
def bench_checkpoint(
    events: Annotated[int, typer.Option(help="events per run")] = 5_000_000,
    batch_rows: Annotated[int, typer.Option(help="events per micro-batch")] = 1_000_000,
    rounds: Annotated[int, typer.Option(help="runs with exactly-once on and off each, alternating which goes first")] = 3,
    warmup: Annotated[bool, typer.Option(help="run each mode once over up to 1 M events first, unmeasured")] = True,
    write: WriteDocs = False,
    doc: RowDoc = DOCS,
) -> None:
    """What exactly-once costs funke's streaming YSB: on (file sink, checkpoint on disk) against off (append, tmpfs)."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench import report
    from funke.bench.checkpoint import run_checkpoint

    check_doc(write, doc)
    canonical = ["funke", "bench", "checkpoint", "--events", str(events), "--batch-rows", str(batch_rows)]
    canonical += ["--rounds", str(rounds), *([] if warmup else ["--no-warmup"])]
    with bench_session() as (spark, setup):
        result = run_checkpoint(spark, events=events, rows_per_batch=batch_rows, rounds=rounds, warmup=warmup, on_step=step)
    console.print(report.checkpoint_table(result, setup))
    if write:
        report.append_checkpoint_row(doc, report.checkpoint_row(result, setup, command(canonical)))
        console.print(f"appended a row to {doc}")


@bench.command("savepoint")
def bench_savepoint(
    campaigns: Annotated[int, typer.Option(help="YSB campaigns: 100, or 1000000 for large state (one per process: the heap is set at start)")] = 100,
    events: Annotated[int, typer.Option(help="events per run")] = 5_000_000,
    batch_rows: Annotated[int, typer.Option(help="events per micro-batch")] = 500_000,
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """A savepoint taken while YSB runs at full speed: its time, size, state rows, and the stall it causes."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.savepoint import run_savepoint_bench
    from funke.bench.ysb import check_heap, session

    check_doc(write, doc)
    with reported():
        spark = session("cardinality" if campaigns > 100_000 else "base")
        check_heap(spark, campaigns)
        rows = [run_savepoint_bench(campaigns=campaigns, events=events, rows_per_batch=batch_rows, spark=spark, on_step=step)]

    def lines() -> list[str]:
        spelled = command(["funke", "bench", "savepoint", "--campaigns", str(campaigns), "--events", str(events), "--batch-rows", str(batch_rows)])
        return [
            f"- {now()} `{spelled}`, {r['campaigns']:,} campaigns: savepoint of batch {r['batch']} "
            f"in {r['savepoint_ms']:,} ms ({r['savepoint_wall_ms']:,} ms wall), {r['size_bytes'] / 1e6:.1f} MB, {r['state_rows']:,} state rows; "
            f"{r['batches_during']} micro-batch(es) ran meanwhile, the longest {r['batch_ms_during_max']:,} ms against a median of "
            f"{r['batch_ms_median_otherwise']:,} ms otherwise (stall {r['stall_ms']:,} ms); results {'exact' if r['results_exact'] else 'WRONG'}"
            for r in rows
        ]

    self_checked(rows, lines, exact=all(r["results_exact"] for r in rows), section="Savepoints during YSB (`funke bench savepoint`)",
            write=write, doc=doc)  # fmt: skip


@bench.command("state")
def bench_state(
    events: Annotated[int, typer.Option(help="events per run")] = 5_000_000,
    batch_rows: Annotated[int, typer.Option(help="events per micro-batch")] = 500_000,
    reads: Annotated[int, typer.Option(help="state reads (all keys, then one key) while the job runs")] = 5,
    campaigns: Annotated[int, typer.Option(help="YSB campaigns: the keys of the window state read")] = 100,
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """Queryable state read while YSB runs at full speed: each read's time, and the stall it causes the job."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.savepoint import run_state_bench

    check_doc(write, doc)
    with bench_session() as (spark, setup):
        r = run_state_bench(campaigns=campaigns, events=events, rows_per_batch=batch_rows, reads=reads, spark=spark, on_step=step)

    def lines() -> list[str]:
        canonical = ["funke", "bench", "state", "--campaigns", str(campaigns), "--events", str(events), "--batch-rows", str(batch_rows), "--reads", str(reads)]
        figures = (
            f"{r['reads']} reads of {r['keys']} keys and one key's "
            f"{r['rows_per_key']} window(s), median {r['read_ms_median']:,} ms, max {r['read_ms_max']:,} ms; {r['batches_during']} "
            f"micro-batch(es) ran meanwhile, the longest {r['batch_ms_during_max']:,} ms against a median of "
            f"{r['batch_ms_median_otherwise']:,} ms otherwise (stall {r['stall_ms']:,} ms); results {'exact' if r['results_exact'] else 'WRONG'}"
        )
        return [entry(canonical, figures, setup)]

    self_checked(r, lines, exact=r["results_exact"], section="Queryable state during YSB (`funke bench state`)", write=write, doc=doc)


@bench.command("join")
def bench_join(
    events: Annotated[int, typer.Option(help="rows of each stream (auctions and bids), the same ones for both systems")] = 2_000_000,
    keys: Annotated[int, typer.Option(help="distinct join keys")] = 1_000,
    batch_rows: Annotated[
        int,
        typer.Option(
            help="rows of each stream per micro-batch (Spark's join compares each new row with every buffered row of its "
            "key, and a batch's rows leave the buffer only at its end: a batch costs about rows² / keys)"
        ),
    ] = 50_000,
    rounds: Annotated[int, typer.Option(help="measure each system this many times, alternating which goes first (median)")] = 1,
    warmup: Annotated[bool, typer.Option(help="run each system once over a small input first, unmeasured")] = True,
    general: Annotated[bool, typer.Option(help="also the join on funke's general path (the default: no on_path('native'))")] = True,
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """funke's interval join (native and general path) against a hand-written PySpark stream-stream join; all checked against numpy."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.join import run_join_bench, summary

    canonical = ["funke", "bench", "join", "--events", str(events), "--keys", str(keys), "--batch-rows", str(batch_rows)]
    canonical += ["--rounds", str(rounds)] if rounds != 1 else []
    canonical += [] if warmup else ["--no-warmup"]
    canonical += [] if general else ["--no-general"]
    summarized(
        lambda spark: run_join_bench(spark, events=events, keys=keys, rows_per_batch=batch_rows, rounds=rounds, warmup=warmup,
                                     general=general, on_step=step),
        summary, canonical=canonical, section="Interval join (`funke bench join`)", write=write, doc=doc,
    )  # fmt: skip


@bench.command("sql")
def bench_sql(
    events: Annotated[int, typer.Option(help="events per job (>= 5 M: the first two micro-batches are not counted)")] = 10_000_000,
    rounds: Annotated[int, typer.Option(help="run the three jobs this many times, turning which goes first (medians)")] = 1,
    warmup: Annotated[bool, typer.Option(help="run each job once over 1 M events first, unmeasured")] = True,
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """YSB in Flink SQL against the same job as a DataStream program and as plain PySpark, in one run; outputs checked."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.sql import run_sql_bench, summary

    canonical = ["funke", "bench", "sql", "--events", str(events)]
    canonical += ["--rounds", str(rounds)] if rounds != 1 else []
    canonical += [] if warmup else ["--no-warmup"]
    summarized(
        lambda spark: run_sql_bench(spark, events, rounds=rounds, warmup=warmup, on_step=step), summary, canonical=canonical,
        section="Flink SQL against the DataStream program (`funke bench sql`)", write=write, doc=doc,
    )  # fmt: skip


@bench.command("cep")
def bench_cep(
    events: Annotated[int, typer.Option(help="events generated (one per key and second of event time)")] = 10_000_000,
    keys: Annotated[int, typer.Option(help="keys the pattern runs on")] = 10_000,
    batch_rows: Annotated[int, typer.Option(help="events per micro-batch (the first two are not counted in the steady rate)")] = 1_000_000,
    conditions: Annotated[str, typer.Option(help="the pattern's conditions: sql (Spark drops events no condition accepts) or python")] = "sql",
    latency_mode: Annotated[
        str, typer.Option(help="latency-first (matches leave in the micro-batch whose events complete them) or micro-batch (a batch later)")
    ] = "latency-first",
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """A three-step CEP pattern (small, then medium, then large, within 5.5 s) per key on the general path;
    its matches checked against the pure-Python automaton run per key."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.cep import run_cep_bench, summary

    canonical = ["funke", "bench", "cep", "--events", str(events), "--keys", str(keys), "--batch-rows", str(batch_rows)]
    canonical += ["--conditions", conditions, "--latency-mode", latency_mode]
    summarized(
        lambda spark: run_cep_bench(spark, events, keys, rows_per_batch=batch_rows, conditions=conditions,
                                    latency_mode=latency_mode, on_step=step),
        summary, canonical=canonical, section="CEP (`funke bench cep`)", write=write, doc=doc,
    )  # fmt: skip


@bench.command("ml")
def bench_ml(
    rows: Annotated[int, typer.Option(help="rows scored by each system")] = 10_000_000,
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """Scoring with a scikit-learn linear model on 10 features: funke's fk.ml.predict against a plain PySpark
    pandas_udf, and with a Spark MLlib one against its plain transform; same rows, outputs checked (target >= 1 M rows/s)."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.ml import ml_summary, run_ml_bench

    def scored(spark: object) -> object:
        step(f"scoring: {rows:,} rows, funke fk.ml.predict and plain PySpark, scikit-learn and Spark MLlib")
        return run_ml_bench(spark, rows)

    intro = "Issue 18: `fk.ml.predict` scoring a stream (see funke/bench/ml.py for what each side runs). Target >= 1 M rows/s."
    summarized(scored, ml_summary, canonical=["funke", "bench", "ml", "--rows", str(rows)],
               section="Scoring a stream with a model (`funke bench ml`)", write=write, doc=doc, intro=intro)  # fmt: skip


@bench.command("general")
def bench_general(
    events: Annotated[int, typer.Option(help="events per job (>= 5 M: the first two micro-batches are not counted)")] = 10_000_000,
    sessions: Annotated[bool, typer.Option("--sessions", help="also the 100 000-user session-window job")] = False,
    map_rows: Annotated[int, typer.Option(help="rows of the Python row-function job (funke map vs a plain PySpark Arrow UDF); 0: skip it")] = 5_000_000,
    process_events: Annotated[
        int, typer.Option(help="events of the KeyedProcessFunction job (funke vs plain transformWithStateInPandas); 0: skip it")
    ] = 0,
    keys: Annotated[int, typer.Option(help="keys of the KeyedProcessFunction job")] = 100_000,
    jobs: Annotated[bool, typer.Option(help="the YSB (and session) jobs; --no-jobs runs only the row function and process function")] = True,
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """The general path (YSB with the data Artisans trigger) against the native YSB, a Python row function against
    plain PySpark's, and a KeyedProcessFunction against plain transformWithStateInPandas, in one run; outputs checked."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench import report
    from funke.bench.general import general_summary, run_general
    from funke.bench.measure import steady_text
    from funke.bench.ysb import session

    check_doc(write, doc)
    with reported():
        setup = report.setup(session())  # the load before the runs
    entries = []
    if jobs:
        with reported():
            runs = run_general(session(), events, sessions=sessions, on_step=step)
        table = Table("job", "steady events/s", "batch p50 / p99 ms", "ratio", "load", "output")
        for r in runs:
            batches = f"{r.batch_ms_p50} / {r.batch_ms_p99}"
            ratio = f"{r.ratio} of {r.versus}" if r.versus and r.ratio else ""
            table.add_row(r.job, steady_text(r.steady_rows_per_s, ""), batches, ratio, str(r.load), r.checked)
        console.print(table)
        canonical = ["funke", "bench", "general", "--events", str(events), "--map-rows", "0"]
        canonical += ["--sessions"] if sessions else []
        entries.append(("The general path against the native path (`funke bench general`)", general_summary(runs), canonical))
    if map_rows > 0 or process_events > 0:
        entries += _map_and_process(map_rows, process_events, keys)
    if write and entries:
        for heading, line, canonical in entries:
            report.add_to_section(doc, heading, [entry(canonical, line, setup)])
        console.print(f"appended to {doc}")


def _map_and_process(map_rows: int, process_events: int, keys: int) -> list[tuple[str, str, list[str]]]:
    """The row-function and process-function benches: (section, summary line, command) each."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.process import process_summary, run_process_bench
    from funke.bench.rowmap import map_summary, run_map_bench
    from funke.bench.ysb import session

    entries = []
    with reported():
        spark = session()
        if map_rows > 0:
            step(f"row function: {map_rows:,} rows, funke map and a plain PySpark Arrow UDF")
            line = map_summary(run_map_bench(spark, map_rows))
            console.print(line)
            canonical = ["funke", "bench", "general", "--no-jobs", "--map-rows", str(map_rows)]
            entries.append(("A Python row function (`funke bench general --map-rows`)", line, canonical))
        if process_events > 0:
            step(f"KeyedProcessFunction: {process_events:,} events over {keys:,} keys, funke and plain transformWithStateInPandas")
            line = process_summary(run_process_bench(spark, process_events, keys=keys), keys)
            console.print(line)
            canonical = ["funke", "bench", "general", "--no-jobs", "--map-rows", "0", "--process-events", str(process_events), "--keys", str(keys)]
            entries.append(("A KeyedProcessFunction (`funke bench general --process-events`)", line, canonical))
    return entries


@bench.command("chaos")
def bench_chaos(
    kills: Annotated[int, typer.Option(help="how many times to kill the job (timer, during a sink write, after it, in turn)")] = 20,
    events: Annotated[int, typer.Option(help="events of the self-checking job")] = 60_000,
    rows_per_batch: Annotated[int, typer.Option(help="events per micro-batch")] = 500,
    dsn: Annotated[str, typer.Option(help="PostgreSQL the job writes to")] = "host=127.0.0.1 port=5432 dbname=test user=postgres",
    seed: Annotated[int, typer.Option(help="seed of the kill moments")] = 0,
    source: Annotated[str, typer.Option(help="generator, redis (a Redis Stream written first), files (JSON files written first) or kafka (a topic written first)")] = "generator",
    sink: Annotated[str, typer.Option(help="postgres (tables) or kafka (topics, transactional; checked read_committed)")] = "postgres",
    redis: Annotated[str, typer.Option(help="the Redis server of --source redis")] = "redis://127.0.0.1:6379/0",  # services.REDIS_URL
    bootstrap: Annotated[str, typer.Option(help="the Kafka broker of --source/--sink kafka")] = "127.0.0.1:9092",  # services.KAFKA_BOOTSTRAP
    mode: Annotated[str, typer.Option(help="micro-batch, or realtime (Kafka to Kafka in Spark's real-time mode: funke/bench/chaos_realtime.py)")] = "micro-batch",
    job: Annotated[str, typer.Option(help="--mode realtime: filter/map or rolling count")] = "filter/map",
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """Kill the self-checking job (examples/chaos.py) again and again; its sink must hold the failure-free result."""
    if mode == "realtime":
        figures, exact, line = cli_kafka.chaos_realtime(source=source, sink=sink, kills=kills, events=events, job=job,
                                                        bootstrap=bootstrap, write=write, doc=doc)  # fmt: skip
    elif mode == "micro-batch":
        figures, exact, line = _chaos(kills, events, rows_per_batch, dsn, seed, source, sink, redis, bootstrap)
    else:
        raise typer.BadParameter(f"{mode!r}: choose micro-batch or realtime", param_hint="--mode")
    self_checked(figures, lambda: [line()], exact=exact, section="Chaos (exactly-once under kills)", write=write, doc=doc)


def _chaos(
    kills: int, events: int, rows_per_batch: int, dsn: str, seed: int, source: str, sink: str, redis: str, bootstrap: str
) -> tuple[dict, bool, Callable[[], str]]:
    """``funke bench chaos`` in micro-batches: its figures, whether the sink was exact, and its docs line."""
    # (lazy: examples/ is the checkout's; a benchmark's modules load only when it runs, so the CLI starts fast)
    from examples.chaos import SINKS, SOURCES
    from funke.bench.chaos import run_chaos, summary

    if source not in SOURCES:
        raise typer.BadParameter(f"choose one of {', '.join(SOURCES)}", param_hint="--source")
    if sink not in SINKS:
        raise typer.BadParameter(f"choose one of {', '.join(SINKS)}", param_hint="--sink")
    wanted = {"postgres": dsn} if sink == "postgres" else {}
    wanted |= {"redis": redis} if source == "redis" else {}
    wanted |= {"kafka": bootstrap} if "kafka" in (source, sink) else {}
    local_services(wanted)
    with tempfile.TemporaryDirectory(prefix="funke-chaos-") as workdir:
        result = run_chaos(
            dsn, kills=kills, events=events, rows_per_batch=rows_per_batch, workdir=workdir, seed=seed, source=source, redis=redis,
            sink=sink, bootstrap=bootstrap, on_step=step,
        )
    figures = summary(result)

    def line() -> str:
        return (
            f"- {now()} `{command(['funke', 'bench', 'chaos', '--kills', str(kills)])}` (source: {source}, sink: {sink}): {figures['kills']} kills "
            f"({', '.join(f'{k} {v}' for k, v in figures['kills_by_mode'].items())}), {figures['runs']} runs, "
            f"{figures['records']:,} records, lost {figures['lost']}, duplicated {figures['duplicated']}, "
            f"alerts {figures['alerts']}, totals {'right' if figures['totals_ok'] else 'WRONG'}{' (no end: none)' if source == 'files' else ''}, "
            f"{figures['wall_s']} s"
        )

    return figures, result.exact, line


@bench.command("graph")
def bench_graph(
    edges: Annotated[int, typer.Option(help="directed edges of the generated graph")] = 100_000,
    vertices: Annotated[int, typer.Option(help="vertices (0: edges / 2, which leaves a giant component and many small ones)")] = 0,
    seed: Annotated[int, typer.Option(help="seed of the generated edges")] = 18,
    write: WriteDocs = False,
    doc: Doc = DOCS,
) -> None:
    """Every funke.graph algorithm on a generated graph, on Spark, against networkx (label propagation: plain Python), results checked."""
    # (lazy: a benchmark's modules load only when it runs, so the CLI starts fast)
    from funke.bench.graph import graph_summary, run_graph_bench

    vertices = vertices or max(edges // 2, 1)
    intro = (
        "Issue 18: `funke.graph` (Gelly's algorithms as DataFrame iterations on Spark) against networkx in the same "
        "process, on the same generated graph; see funke/bench/graph.py for what each side's time covers. PageRank "
        "ranks are checked to agree within 1e-9; components, shortest-path distances, triangle counts (against networkx) "
        "and label-propagation labels (against the same synchronous rule in plain Python) exactly."
    )
    summarized(
        lambda spark: run_graph_bench(spark, edges, vertices, seed=seed, on_step=step), graph_summary,
        canonical=["funke", "bench", "graph", "--edges", str(edges), "--vertices", str(vertices), "--seed", str(seed)],
        section="Graphs (`funke bench graph`)", write=write, doc=doc, intro=intro,
    )  # fmt: skip


bench.command("latency")(cli_kafka.latency)
bench.command("nexmark")(cli_nexmark.nexmark)
bench.command("pyflink")(cli_pyflink.bench_pyflink)
