"""The Nexmark benchmark's 24 queries (q0 to q23) on funke, over the ``nexmark`` connector's events.

Two sets of query files run the same way:

* funke's own formulation of each query (``nexmark_queries/``, written for funke; the default);
* the unchanged files of a checkout of the Nexmark repository (``Suite(directory)``, ``funke bench
  nexmark --queries DIR``, e.g. ``nexmark/nexmark-flink/src/main/resources/queries``), read when
  they run. funke carries none of them.

Both are in Nexmark's layout, and a query runs as Nexmark's runner runs one: ``ddl_gen.sql`` (the
events table), ``ddl_views.sql`` (the ``person``, ``auction`` and ``bid`` views) and ``qN.sql`` (its
sink table and its ``INSERT INTO``), with the runner's ``${...}`` settings filled in (:class:`Settings`),
as one SQL script. Nexmark's runner also submits ``ddl_kafka.sql``, the table its events are read
from when they come from Kafka; funke's runner generates them (``NEXMARK_TABLE`` is ``datagen``)
and leaves that file out.

Results are checked against plain-Python references (``funke.bench.nexmark_reference``) by
:func:`run_collected` and ``funke.bench.nexmark_check``; timed by ``funke.bench.nexmark_bench``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from funke.errors import PlanError

#: funke's formulation of the suite.
BUILTIN_DIR = Path(__file__).with_name("nexmark_queries")
#: The queries of Nexmark's Flink suite (its README lists q0-q22; q23, a three-way join, came later).
QUERIES = tuple(f"q{n}" for n in range(24))


class Refusal(NamedTuple):
    """Why funke's formulation of a query does not run yet."""

    #: The constructs it waits for.
    needs: str
    #: A phrase of the error funke raises while planning it.
    phrase: str


#: funke's formulation of these queries is refused while planning, today: what it needs, and a phrase of
#: the refusal (``tests/unit/test_nexmark_unit.py`` checks each is refused with it, and that every other
#: query plans; ``tests/spark/test_nexmark.py`` that every other one equals its reference). A query leaves
#: this table when the construct it waits for lands.
REFUSED: dict[str, Refusal] = {
    "q6": Refusal("an OVER aggregation (ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) over an updating result (the winning bids, "
                  "a Top-1); Flink does not run q6 either (FLINK-19059)", "an OVER window"),
}  # fmt: skip
#: The queries funke runs from its own formulation.
RUNS = tuple(q for q in QUERIES if q not in REFUSED)


@dataclass(frozen=True)
class Settings:
    """The runner's ``${...}`` settings, under Nexmark's names.

    >>> Settings(events=10, tps=5).fill("'events.num' = '${EVENTS_NUM}', '${TPS}'")
    "'events.num' = '10', '5'"
    >>> Settings().fill("${KEEP_ALIVE}", "ddl_gen.sql")
    Traceback (most recent call last):
    ...
    funke.errors.PlanError: ddl_gen.sql uses the setting ${KEEP_ALIVE}, which funke's Nexmark runner does not have; it fills in AUCTION_PROPORTION, BID_PROPORTION, BOOTSTRAP_SERVERS, EVENTS_NUM, FLINK_HOME, NEXMARK_DIR, NEXMARK_TABLE, PERSON_PROPORTION, SUBMIT_TIME, TPS
    """

    events: int = 100_000  # EVENTS_NUM (0: unbounded)
    tps: int = 10_000  # TPS: first-event.rate and next-event.rate, events per second of event time
    person: int = 1  # PERSON_PROPORTION
    auction: int = 3  # AUCTION_PROPORTION
    bid: int = 46  # BID_PROPORTION
    #: NEXMARK_DIR and FLINK_HOME: the run's working directory (q10 writes under it; q13's side input is
    #: its data/side_input.txt, where Nexmark's runner has it under FLINK_HOME). Set by the runner.
    workdir: str = "/tmp/funke-nexmark"
    #: SUBMIT_TIME: when the job started, as Nexmark's runner writes it but with '-' for ':', which Hadoop
    #: paths cannot hold (q10 writes to a directory named after it).
    submit_time: str = "1970-01-01T00-00-00"

    def variables(self) -> dict[str, str]:
        return {"TPS": str(self.tps), "EVENTS_NUM": str(self.events), "PERSON_PROPORTION": str(self.person),
                "AUCTION_PROPORTION": str(self.auction), "BID_PROPORTION": str(self.bid), "NEXMARK_TABLE": "datagen",
                "NEXMARK_DIR": self.workdir, "FLINK_HOME": self.workdir, "SUBMIT_TIME": self.submit_time,
                "BOOTSTRAP_SERVERS": ""}  # fmt: skip

    def fill(self, text: str, source: str = "the script") -> str:
        """``text`` with each ``${NAME}`` replaced by its setting; a name the runner does not have is refused."""
        values = self.variables()
        for name in dict.fromkeys(re.findall(r"\$\{([^}]*)\}", text)):
            if name not in values:
                raise PlanError(
                    f"{source} uses the setting ${{{name}}}, which funke's Nexmark runner does not have; it fills in "
                    f"{', '.join(sorted(values))}"
                )
        return re.sub(r"\$\{([^}]*)\}", lambda m: values[m.group(1)], text)

    def started_now(self, workdir: str | Path) -> Settings:
        """These settings for a run starting now in ``workdir``."""
        return replace(self, workdir=str(workdir), submit_time=f"{dt.datetime.now():%Y-%m-%dT%H-%M-%S}")


class Suite:
    """A directory of query files in Nexmark's layout: ``ddl_gen.sql``, ``ddl_views.sql``, ``q0.sql`` ...

    >>> suite = Suite()
    >>> suite.queries == QUERIES, suite.builtin
    (True, True)
    >>> Suite("/nonexistent")
    Traceback (most recent call last):
    ...
    funke.errors.PlanError: /nonexistent is not a directory of Nexmark query files (it needs ddl_gen.sql, ddl_views.sql and qN.sql files, as nexmark-flink/src/main/resources/queries in a checkout of github.com/nexmark/nexmark has them)
    """

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory is not None else BUILTIN_DIR
        self.builtin = self.directory.resolve() == BUILTIN_DIR.resolve()
        found = {p.stem for p in self.directory.glob("q*.sql")} if self.directory.is_dir() else set()
        needed = ("ddl_gen.sql", "ddl_views.sql")
        if not found or not all((self.directory / f).is_file() for f in needed):
            raise PlanError(
                f"{self.directory} is not a directory of Nexmark query files (it needs {', '.join(needed)} and qN.sql files, as "
                "nexmark-flink/src/main/resources/queries in a checkout of github.com/nexmark/nexmark has them)"
            )
        #: The queries of the suite it holds, in order.
        self.queries = tuple(q for q in QUERIES if q in found)

    def __repr__(self) -> str:
        return f"Suite({str(self.directory)!r})"

    def _read(self, name: str, settings: Settings) -> str:
        return settings.fill((self.directory / name).read_text(), str(self.directory / name))

    def tables(self, settings: Settings) -> str:
        """The script's first part, shared by every query: the events table and the views."""
        return self._read("ddl_gen.sql", settings) + "\n" + self._read("ddl_views.sql", settings)

    def query(self, query: str, settings: Settings) -> str:
        """The query's own file, settings filled in."""
        if query not in self.queries:
            raise PlanError(f"{self.directory} has no {query}.sql; it has {', '.join(self.queries)}")
        return self._read(f"{query}.sql", settings)

    def script(self, query: str, settings: Settings) -> str:
        """The SQL script Nexmark's runner submits for ``query``: the table, the views, the query."""
        return self.tables(settings) + "\n" + self.query(query, settings)


def chosen(suite: Suite, which: str) -> tuple[str, ...]:
    """The queries ``which`` names (``q0,q5``, or ``all``: every query the suite holds that is not refused
    while planning; in funke's own formulation, the ones not in ``REFUSED``).

    >>> chosen(Suite(), "q5,q0")
    ('q5', 'q0')
    >>> chosen(Suite(), "q24")
    Traceback (most recent call last):
    ...
    funke.errors.PlanError: no query q24 in funke's formulation of Nexmark; it has q0 to q23
    """
    if which.strip() in ("", "all"):
        return tuple(q for q in suite.queries if not (suite.builtin and q in REFUSED))
    names = tuple(q.strip() for q in which.split(",") if q.strip())
    for q in names:
        if q not in suite.queries:
            where = "funke's formulation of Nexmark" if suite.builtin else str(suite.directory)
            raise PlanError(f"no query {q} in {where}; it has {suite.queries[0]} to {suite.queries[-1]}")
    return names


def prepare_workdir(workdir: Path) -> None:
    """What the queries read from the working directory: q13's side input, ``data/side_input.txt``."""
    from funke.bench.nexmark_reference.simple import side_input_rows

    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "side_input.txt").write_text("".join(f"{k},{v}\n" for k, v in side_input_rows()))


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


def plan_collected(t_env: Any, suite: Suite, queries: tuple[str, ...], settings: Settings) -> dict[str, Any]:
    """Add each query's ``INSERT INTO`` to ``t_env``'s job, its sink swapped for a collecting one: per query
    the ``CollectSink`` (its rows are what the query's table would be given), or the refusal's text when
    funke refuses the query while planning. ``t_env`` must have the suite's tables already."""
    from funke.connectors.sinks import CollectSink
    from funke.errors import FunkeError

    env = t_env.env
    out: dict[str, Any] = {}
    for q in queries:
        before = len(env.sinks)
        try:
            t_env.execute_script(suite.query(q, settings))
        except FunkeError as refused:
            out[q] = str(refused)
            continue
        added = env._sinks[before:]  # (the environment's job: its sinks are a list it owns)
        if len(added) != 1:
            raise PlanError(f"{suite.directory / q}.sql writes {len(added)} tables; a Nexmark query writes one")
        collect = CollectSink()
        env._sinks[before] = replace(added[0], spec=collect)
        out[q] = collect
    return out


def run_collected(
    spark: Any,
    suite: Suite,
    queries: tuple[str, ...],
    settings: Settings,
    *,
    bounded: bool,
    workdir: Path,
    timeout_s: float = 900,
) -> dict[str, list[dict[str, Any]] | str]:
    """The queries as one job over ``settings.events`` events: per query the rows its table was given (an
    updating result's with their ``row_kind``), or the refusal's text."""
    import funke as fk
    from funke.table import StreamTableEnvironment

    prepare_workdir(workdir)
    settings = settings.started_now(workdir)
    env = fk.StreamEnvironment(app=f"nexmark-{'-'.join(queries)}"[:60], spark=spark, checkpoint_dir=str(workdir / "checkpoint"))
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_script(suite.tables(settings))
    planned = plan_collected(t_env, suite, queries, settings)
    if env.sinks:
        handle = env.execute(bounded=bounded).wait(timeout_s)
        if not handle.done:
            handle.stop()
            raise TimeoutError(f"Nexmark {', '.join(queries)} did not finish within {timeout_s:.0f} s")
    return {q: got if isinstance(got, str) else got.rows for q, got in planned.items()}
