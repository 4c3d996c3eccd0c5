"""``funke bench sql``: YSB written in Flink SQL against the same job as a DataStream program
(``examples/ysb.py``) and as plain PySpark, over the same generated events, in one run.

The SQL job reads the events and the ad → campaign table as views and runs two statements:
``VIEWS`` (the lookup join and the filter) and ``COUNTS`` (the TUMBLE window aggregation over
it). Each run's final window counts are checked against the numpy reference
(``funke.bench.reference``) before its figures count. The target (issue 16): the SQL job is as
fast as the DataStream program, ≥ 0.95×, measured as steady events/s in the same run.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import funke as fk
from examples import ysb
from funke.bench.measure import TOO_SMALL, Run, steady_text

VIEWS = """
SELECT e.ad_id, e.event_time, c.campaign_id
FROM events AS e JOIN campaigns FOR SYSTEM_TIME AS OF e.event_time AS c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view'
"""
COUNTS = """
SELECT campaign_id, window_start, window_end, COUNT(*) AS `count`
FROM TABLE(TUMBLE(TABLE views, DESCRIPTOR(event_time), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, campaign_id
"""

DATASTREAM, SQL, PLAIN = "funke DataStream", "funke SQL", "plain PySpark"
SYSTEMS = (DATASTREAM, SQL, PLAIN)


def pipeline(env: fk.StreamEnvironment, source: Any, *, trigger: Any = None, campaign_table: Any = None) -> Any:
    """``examples.ysb.pipeline``'s dataflow in Flink SQL (the same watermark on the events)."""
    from funke.table import StreamTableEnvironment

    if trigger is not None:
        raise fk.PlanError("the SQL YSB has no custom trigger (Flink SQL has none)")
    t_env = StreamTableEnvironment.create(env)
    watermarks = fk.WatermarkStrategy.for_bounded_out_of_orderness(ysb.OUT_OF_ORDERNESS).with_timestamp_assigner(
        "event_time", unit="ms"
    )
    t_env.create_temporary_view("events", env.from_source(source, watermarks, name="ad-events", uid="ad-events"))
    t_env.create_temporary_view("campaigns", campaign_table or ysb.campaigns())
    t_env.create_temporary_view("views", t_env.sql_query(VIEWS))
    return t_env.to_data_stream(t_env.sql_query(COUNTS))


@dataclass
class SqlBench:
    """Each system's runs (one per round), all checked."""

    events: int
    runs: dict[str, list[Run]] = field(default_factory=dict)

    def rate(self, system: str) -> float | None:
        """The median steady rate over rounds; None when a round was too small to have one."""
        rates = [r.steady_events_per_s for r in self.runs[system]]
        return statistics.median(rates) if all(rates) else None  # type: ignore[type-var]

    def ratio(self, a: str, b: str) -> float | None:
        """Median over rounds of ``a``'s rate / ``b``'s, each round's runs taken together."""
        pairs = [(x.steady_events_per_s, y.steady_events_per_s) for x, y in zip(self.runs[a], self.runs[b], strict=True)]
        ratios = [x / y for x, y in pairs if x and y]
        return round(statistics.median(ratios), 2) if ratios else None


def run_sql_bench(
    spark: Any,
    events: int,
    *,
    rounds: int = 1,
    warmup: bool = True,
    rows_per_batch: int = 1_000_000,
    on_step: Callable[[str], None] = lambda s: None,
) -> SqlBench:
    """The three jobs over ``events`` events each round (the order turning every round), each run checked."""
    from funke.bench import plain
    from funke.bench import ysb as bench
    from funke.bench.reference import reference_counts

    root = Path(tempfile.mkdtemp(prefix="funke-bench-sql-"))
    cores = spark.sparkContext.defaultParallelism
    result = SqlBench(events, {s: [] for s in SYSTEMS})

    def run(system: str, job: Any, name: str) -> Run:
        workdir, checkpoint = str(root / name), str(root / f"{name}-cp")
        if system == PLAIN:
            return plain.streaming(
                spark, job.events, job.rows_per_batch, job.partitions, workdir, job.timeout_s, checkpoint=checkpoint
            )
        return bench.funke_streaming(spark, job, workdir, checkpoint, pipeline=pipeline if system == SQL else ysb.pipeline)

    try:
        on_step(f"reference: views per campaign and window in numpy over {events:,} events")
        reference = reference_counts(events)
        if warmup:
            on_step("warm-up: each job over 1 M events")
            for i, system in enumerate(SYSTEMS):
                run(system, bench.Job(1_000_000, 1_000_000, partitions=cores), f"warm-{i}")
        for r in range(rounds):
            order = SYSTEMS[r % 3 :] + SYSTEMS[: r % 3]
            for system in order:
                on_step(f"round {r + 1}: {system}, {events:,} events")
                job = bench.Job(events, rows_per_batch, partitions=cores, timeout_s=300 + events / 5_000)
                done = run(system, job, f"r{r}-{bench.system_slug(system)}")
                problems = bench.check_run(done, reference, events)
                if problems:
                    raise bench.BenchMismatchError(
                        f"{system}'s result is wrong, so no figures are kept:\n- " + "\n- ".join(problems)
                    )
                result.runs[system].append(done)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return result


def summary(result: SqlBench) -> str:
    """One line for docs/benchmarks.md."""
    windows = len(result.runs[SQL][0].windows)
    rates = ", ".join(f"{s} {steady_text(result.rate(s))}" for s in SYSTEMS)
    versus_ds, versus_plain = (result.ratio(SQL, other) or TOO_SMALL for other in (DATASTREAM, PLAIN))
    return (
        f"{result.events:,} events, {len(result.runs[SQL])} round(s), medians: {rates}; "
        f"SQL / DataStream {versus_ds} (target ≥ 0.95), SQL / plain {versus_plain}; "
        f"{windows:,} final windows equal to the reference in every run"
    )
