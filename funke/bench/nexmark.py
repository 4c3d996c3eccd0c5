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
    "q4": ("an aggregation over a join (MAX per auction of a join, then AVG per category of that updating result)", "an aggregation over a join"),
    "q5": ("a join of an updating result (the most bids per window: a GROUP BY without a window over a window aggregation)", "a join over an updating result"),
    "q6": ("an OVER aggregation (AVG(...) OVER (... ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)) over a Top-N of a join", "PARTITION BY"),
    "q9": ("a Top-N over a join in one SELECT", "a Top-N (ROW_NUMBER) over a join"),
    "q10": ("PARTITIONED BY in CREATE TABLE (a partitioned filesystem sink)", "PARTITIONED BY"),
    "q12": ("a processing-time attribute (PROCTIME()) and a window over it", "PROCTIME()"),
    "q13": ("the legacy connector.type options of its side-input table, and a lookup join on processing time of a file", "connector.type"),
    "q14": ("CREATE FUNCTION (a Java user-defined function)", "CREATE FUNCTION"),
    "q15": ("GROUP BY an expression (DATE_FORMAT(...)), COUNT(DISTINCT ...) and FILTER (WHERE ...)", "GROUP BY DATE_FORMAT"),
    "q16": ("GROUP BY an expression (DATE_FORMAT(...)), COUNT(DISTINCT ...) and FILTER (WHERE ...)", "GROUP BY DATE_FORMAT"),
    "q17": ("GROUP BY an expression (DATE_FORMAT(...)) and FILTER (WHERE ...)", "GROUP BY DATE_FORMAT"),
    "q23": ("a join of three relations", "a join of more than two relations"),
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
