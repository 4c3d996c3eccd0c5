"""Spark's real-time trigger for funke jobs (``set_latency_mode("realtime")``): the operators it adds to
the native path, the task slots it needs, and its writer.

What runs and what is refused is ``funke.plan.realtime``'s table; this module turns the allowed
operators into Spark's and starts the query. Spark runs a real-time query as one long-running task
per source partition plus one per shuffle partition of each stateful stage, all at once for the
whole checkpoint interval (Spark refuses to start with fewer: ``CONCURRENT_SCHEDULER_INSUFFICIENT_SLOT``).
funke plans them: a local master funke starts gets that many slots (``local[N]``); a session that
runs already (a cluster, a notebook's) is checked for free slots before the job starts, and a job
that does not fit is refused, saying how many are missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from funke.errors import UnsupportedError
from funke.plan import nodes
from funke.plan.realtime import shuffles

#: The real-time checkpoint interval when the job names none (``checkpoint_interval``): Spark's own example's.
DEFAULT_INTERVAL_MS = 5 * 60 * 1000


def rolling(df: DataFrame, node: nodes.RollingAggregate) -> DataFrame:
    """A rolling ``sum/min/max/count`` as Spark's real-time aggregation: one row per element, as Flink's.

    Spark updates a key's aggregate and emits it for every input row (update mode). The row's other
    columns are Flink's: ``first`` of each (the key's first element) for sum/min/max, ``last`` (the
    element itself: the state has just taken it) for count.
    """
    agg = node.aggregate
    assert agg is not None
    keys = list(node.input.keys or ())
    fn = {"count": lambda: F.count(F.lit(1)), "sum": lambda: F.sum(agg.column), "min": lambda: F.min(agg.column),
          "max": lambda: F.max(agg.column)}[agg.fn]  # fmt: skip
    pick = F.last if agg.fn == "count" else F.first
    others = [c for c in df.columns if c not in keys and c != agg.alias and c != agg.column]
    grouped = df.groupBy(*keys).agg(*(pick(c).alias(c) for c in others), fn().alias(agg.alias))
    return grouped.select(*(df.columns if agg.alias in df.columns else [*df.columns, agg.alias]))


# -- task slots -----------------------------------------------------------------------------------


#: The dead-letter query's micro-batch interval beside real-time queries. Back to back, its batches (a
#: plan, an offset log and a commit each, a few records in each) took a core's worth of the driver from
#: the real-time tasks on a 2-core machine; once a second, a bad row is reported within a second.
DEAD_LETTER_INTERVAL_MS = 1000


def dead_letter_frame(frame: DataFrame) -> DataFrame:
    """The dead-letter query of a real-time job: micro-batches (its sink need not be Kafka) of one task at a time.

    It runs beside the real-time queries from the start (their metrics, which would start it when a bad
    row shows, come once per checkpoint interval), in the one slot ``needed_slots`` keeps for it: one task
    (no shuffle in it), so it never takes a slot a real-time task needs when Spark starts their next batch.
    """
    return frame.coalesce(1)


def needed_slots(sinks: Sequence[nodes.Sink], shuffle_partitions: int) -> tuple[int, str]:
    """The task slots the job's real-time queries hold at once (and the dead-letter query's one), and how
    they add up (for messages)."""
    from funke.spark.kafka_source import partition_keys

    total, parts = 1, ["the dead letters: 1"]
    for sink in sinks:
        sources = [x for x in nodes.walk([sink]) if isinstance(x, nodes.Source)]
        reads = sum(len(partition_keys(s.spec)) for s in sources)
        stages = shuffles([sink])
        total += reads + stages * shuffle_partitions
        shuffle = f" + {stages} x {shuffle_partitions} shuffle partitions" if stages else ""
        parts.append(f"{sink.where()}: {reads} Kafka partition(s){shuffle}")
    return total, "; ".join(parts)


def free_slots(spark: SparkSession) -> tuple[int, int] | None:
    """(free, total) task slots of the session's executors now, or None where Spark does not say (Spark Connect)."""
    from funke.spark.session import is_connect

    if is_connect(spark):
        return None
    sc = spark.sparkContext._jsc.sc()
    total = int(sc.maxNumConcurrentTasks(sc.resourceProfileManager().defaultResourceProfile()))
    running = sum(int(e.numRunningTasks()) for e in sc.statusTracker().getExecutorInfos())
    return max(0, total - running), total


def check_interval(spark: SparkSession, interval_ms: int) -> None:
    """Refuse a real-time checkpoint interval below the session's minimum (Spark's, 5 s by default)."""
    from funke.errors import PlanError

    conf = "spark.sql.streaming.realTimeMode.minBatchDuration"
    text = spark.conf.get(conf, "5s") or "5s"
    try:
        minimum = int(spark.sparkContext._jvm.org.apache.spark.network.util.JavaUtils.timeStringAsMs(text))
    except Exception:  # noqa: BLE001  # Spark Connect: no JVM here; Spark checks it when the query starts
        return
    if interval_ms and interval_ms < minimum:
        raise PlanError(
            f"set_latency_mode('realtime'): checkpoint_interval {interval_ms} ms is below the shortest real-time "
            f"checkpoint interval Spark takes ({text}, {conf}): give a longer one"
        )


def check_slots(spark: SparkSession, sinks: Sequence[nodes.Sink]) -> None:
    """Refuse a real-time job the session cannot hold, naming what is missing."""
    needed, detail = needed_slots(sinks, int(spark.conf.get("spark.sql.shuffle.partitions")))
    slots = free_slots(spark)
    if slots is None or slots[0] >= needed:
        return
    free, total = slots
    master = spark.sparkContext.master
    fix = (
        f"start the session with local[{needed + total - free}] (funke sizes the local master it starts itself)"
        if master.startswith("local")
        else f"give the cluster {needed - free} more executor core(s), or stop jobs that hold them"
    )
    raise UnsupportedError(
        f"set_latency_mode('realtime'): the job needs {needed} task slots at once ({detail}), and the session "
        f"({master}) has {free} free of {total}: {fix}"
    )


def sized_session(settings: Any, spark_conf: dict[str, str], sinks: Sequence[nodes.Sink], *, given: bool) -> tuple[Any, dict[str, str]]:
    """The settings and confs of the session to start for a real-time job: a local master with a slot for
    every task the job holds at once, its other defaults (shuffle partitions, parallelism) those of the
    master asked for. Unchanged where funke starts no session (one given, one running, Spark Connect)."""
    from funke.spark.session import local_cores

    if given or settings.remote or SparkSession.getActiveSession() is not None:
        return settings, spark_conf
    cores = local_cores(settings.master)
    shuffle = int(spark_conf.get("spark.sql.shuffle.partitions") or settings.shuffle_partitions or cores)
    master = local_slots(settings.master, needed_slots(sinks, shuffle)[0])
    if master is None:
        return settings, spark_conf
    conf = {"spark.sql.shuffle.partitions": str(shuffle), "spark.default.parallelism": str(cores), **spark_conf}
    return settings.model_copy(update={"master": master}), conf


def local_slots(master: str, needed: int) -> str | None:
    """The local master that gives ``needed`` slots where ``master`` gives fewer (None: it suffices, or not local)."""
    from funke.spark.session import local_cores

    if not master.startswith("local"):
        return None
    return f"local[{needed}]" if local_cores(master) < needed else None


# -- the writer -----------------------------------------------------------------------------------


def writer(df: DataFrame, sink: Any, *, name: str, checkpoint: str, interval_ms: int) -> Any:
    """The real-time query writing ``df`` to the Kafka ``sink`` (update mode: every update is a record)."""
    from funke.spark.kafka_jvm import stream_writer

    interval = interval_ms or DEFAULT_INTERVAL_MS
    return (
        stream_writer(df, sink)
        .outputMode("update")
        .queryName(name)
        .option("checkpointLocation", checkpoint)
        .trigger(realTime=f"{interval} milliseconds")
    )
