"""The Nexmark benchmark's Flink SQL queries (``nexmark_sql/``, as the Nexmark project publishes
them for Flink) over funke's generated events (``funke.connectors.nexmark``).

A query runs as Nexmark's own runner runs it: its ``ddl_gen.sql`` (the ``datagen`` table of the
``nexmark`` connector), its ``ddl_views.sql`` (the ``person``, ``auction`` and ``bid`` views) and the
query's file, with the runner's ``${...}`` settings filled in, as one SQL script.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The query files, unchanged from the Nexmark project (Apache License 2.0; see their headers).
SQL_DIR = Path(__file__).with_name("nexmark_sql")
#: The queries of the suite, in order.
QUERIES = tuple(sorted((p.stem for p in SQL_DIR.glob("q*.sql")), key=lambda q: int(q[1:])))
#: The queries funke refuses: why, and a phrase of the refusal it raises while planning.
REFUSED = {
    "q6": ("an OVER aggregation (AVG(...) OVER (... ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)) over a Top-N of a join", "PARTITION BY"),
    "q10": ("PARTITIONED BY in CREATE TABLE (a partitioned filesystem sink)", "PARTITIONED BY"),
    "q12": ("a processing-time attribute (PROCTIME()) and a window over it", "PROCTIME()"),
    "q13": ("the legacy connector.type options of its side-input table, and a lookup join on processing time of a file", "connector.type"),
    "q14": ("CREATE FUNCTION (a Java user-defined function)", "CREATE FUNCTION"),
}
RUNS = tuple(q for q in QUERIES if q not in REFUSED)


@dataclass(frozen=True)
class Settings:
    """The runner's ``${...}`` settings (Nexmark's names)."""

    events: int = 100_000  # EVENTS_NUM (0: unbounded)
    tps: int = 10_000  # TPS: first-event.rate and next-event.rate
    person: int = 1  # PERSON_PROPORTION
    auction: int = 3  # AUCTION_PROPORTION
    bid: int = 46  # BID_PROPORTION

    def fill(self, text: str) -> str:
        values = {"TPS": self.tps, "EVENTS_NUM": self.events, "PERSON_PROPORTION": self.person,
                  "AUCTION_PROPORTION": self.auction, "BID_PROPORTION": self.bid, "NEXMARK_TABLE": "datagen"}  # fmt: skip
        for name, value in values.items():
            text = text.replace("${" + name + "}", str(value))
        return text


def query_text(query: str) -> str:
    """A query's file as Nexmark publishes it."""
    if query not in QUERIES:
        raise ValueError(f"no Nexmark query {query!r}; the suite has {', '.join(QUERIES)}")
    return (SQL_DIR / f"{query}.sql").read_text()


def script(query: str, settings: Settings = Settings()) -> str:
    """The SQL script Nexmark's runner submits for ``query``: the table, the views, the query."""
    parts = [(SQL_DIR / "ddl_gen.sql").read_text(), (SQL_DIR / "ddl_views.sql").read_text(), query_text(query)]
    return settings.fill("\n".join(parts))


def select_text(query: str) -> str:
    """The query's ``SELECT`` (what its last ``INSERT INTO ...`` writes), as the file writes it."""
    text = query_text(query)
    at = text.rfind("INSERT INTO")
    if at < 0:
        raise ValueError(f"Nexmark {query} has no INSERT INTO")
    body = text[at:].split("\n", 1)[1]  # (the line after INSERT INTO name)
    return body.strip().rstrip(";")


def events_frame(spark: Any, settings: Settings = Settings()) -> Any:
    """The ``datagen`` table's rows as a plain Spark DataFrame (bounded: ``settings.events`` rows):
    ``event_type``, ``person``, ``auction``, ``bid`` and ``dateTime``, computed by the same
    expressions as the connector's; for checking queries against other computations."""
    from pyspark.sql import functions as F

    from funke.connectors.nexmark import Nexmark

    if settings.events <= 0:
        raise ValueError("events_frame needs a bounded number of events (settings.events > 0)")
    model = Nexmark(float(settings.tps), settings.person, settings.auction, settings.bid)
    columns = model.columns()
    frame = spark.range(0, settings.events).withColumnRenamed("id", "i").select(*(F.expr(e).alias(n) for n, e in columns.items()))
    return frame.withColumn("dateTime", F.coalesce("person.dateTime", "auction.dateTime", "bid.dateTime"))


@dataclass(frozen=True)
class QueryRun:
    """One query's job over the events: its wall time (start to end, Spark's planning included) and
    the rows its ``blackhole`` sink was given."""

    query: str
    seconds: float
    output_rows: int

    def events_per_s(self, events: int) -> float:
        return events / self.seconds if self.seconds > 0 else 0.0


def run_nexmark_bench(
    spark: Any, settings: Settings, queries: tuple[str, ...] = RUNS, *, bounded: bool = False, on_step: Any = lambda s: None
) -> list[QueryRun]:
    """Each query's unchanged script as its own job over ``settings.events`` events, one after the other."""
    import shutil
    import tempfile
    import time

    import funke as fk
    from funke.table import StreamTableEnvironment

    unknown = [q for q in queries if q not in RUNS]
    if unknown:
        raise ValueError(f"funke does not run {', '.join(unknown)} (refused: {', '.join(f'{q}: {REFUSED[q][0]}' for q in unknown if q in REFUSED)})")
    if settings.events <= 0:
        raise ValueError("the benchmark needs a bounded number of events (--events > 0)")
    root = Path(tempfile.mkdtemp(prefix="funke-bench-nexmark-"))
    runs = []
    try:
        for q in queries:
            on_step(f"{q}: {settings.events:,} events, {'bounded' if bounded else 'streaming'}")
            env = fk.StreamEnvironment(app=f"nexmark-{q}", spark=spark, checkpoint_dir=str(root / q))
            StreamTableEnvironment.create(env).execute_script(script(q, settings))
            start = time.monotonic()
            handle = env.execute(bounded=bounded).wait(3_600)
            runs.append(QueryRun(q, time.monotonic() - start, int(handle.metrics()["output_rows"])))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return runs


def summary(runs: list[QueryRun], settings: Settings, bounded: bool) -> str:
    """One line for docs/benchmarks.md."""
    each = ", ".join(f"{r.query} {r.events_per_s(settings.events):,.0f} events/s ({r.output_rows:,} rows)" for r in runs)
    return f"{settings.events:,} events at {settings.tps:,} events/s of event time, {'bounded' if bounded else 'streaming'}: {each}"
