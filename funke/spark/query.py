"""A job's Spark queries: ``compile_job`` runs the plan's analyses and the compiler over every sink and
groups the results into queries (``QueryPlan``): one per sink, one for sinks sharing a general operator
(split per micro-batch by ``compile_batch_split``), one for the dead letters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from funke.errors import PlanError, UnsupportedError
from funke.plan import nodes
from funke.plan.capabilities import check_idleness
from funke.plan.facts import PlanFacts, analyse
from funke.plan.generators import check_generators
from funke.plan.realtime import check_realtime
from funke.spark import kafka_source, realtime
from funke.spark.compiled import Compiled
from funke.spark.compiler import NO_CONNECTOR, Compiler


@dataclass
class QueryPlan:
    """One Spark query of a job: its frame and the sinks it feeds.

    A query with ``split`` set runs a general operator shared by several sinks: its frame is
    the operator's tagged output, and each micro-batch is split into the sinks' rows there
    (one query, so the operator's state is kept once).
    """

    sinks: list[nodes.Sink]
    compiled: Compiled
    split: nodes.Node | None = None
    #: Started only once a bad row has been seen (the dead letters): it reads its sources from the start.
    lazy: bool = False
    #: Run under Spark's real-time trigger (``set_latency_mode("realtime")``).
    realtime: bool = False
    #: Its own micro-batch interval, where it is not the job's (the dead letters beside real-time queries).
    interval_ms: int = 0
    #: A split query's facts for compiling its sinks per micro-batch (``compile_batch_split``), worked out once.
    split_facts: PlanFacts | None = None


def compile_job(
    spark: SparkSession,
    sinks: tuple[nodes.Sink, ...],
    *,
    mode: str,
    cores: int,
    job: str = "funke",
    dead_letters: Any = None,
    operator_metrics: bool = False,
    latency_mode: str = "micro-batch",
    buckets: tuple[int, ...] | None = None,
    time_ordered: bool = False,
) -> list[QueryPlan]:
    """The job's Spark queries: one per sink (or per shared general operator), plus one for the
    dead letters when some check can fail (``dead_letters``: where they go). ``latency_mode``:
    the environment's (``"latency-first"``: same-batch firing, ``Compiler.latency_first``). ``buckets``:
    the ``fk_b`` values of the general operators' key buckets (default: ``0..default_buckets(cores)-1``).
    ``time_ordered`` (a bounded run in Flink's BATCH runtime mode): each general operator reads a key's elements
    in timestamp order, as Flink's BATCH execution sorts a keyed operator's input by key and timestamp."""
    facts = analyse(sinks, streaming=mode == "streaming")  # (the one pass over the plan: funke.plan.facts)
    check_generators(facts)
    if mode == "streaming":
        check_idleness(facts)
    c = Compiler(spark, mode=mode, cores=cores, buckets=buckets, facts=facts)
    c.operator_metrics = operator_metrics
    c.latency_first = latency_mode == "latency-first"
    c.realtime = mode == "streaming" and latency_mode == "realtime"
    c.bounded_run = mode != "streaming"
    c.time_ordered = time_ordered and c.bounded_run
    if c.realtime:
        check_realtime(facts.nodes)
        if not kafka_source.kafka_jvm.has_connector(spark):
            raise UnsupportedError(f"set_latency_mode('realtime') reads Kafka through Spark's Kafka connector only, and {NO_CONNECTOR}")
    compiled = [(s, c.compile(s)) for s in sinks]
    dead = c.dead_letter_frame(job)
    extra = []
    if dead is not None and dead_letters is not None:
        first_source = next(x for x in facts.nodes if isinstance(x, nodes.Source))
        sink = nodes.Sink((first_source,), spec=dead_letters, explicit_uid="dead-letters", explicit_name="dead letters")
        if c.realtime:  # real-time mode reports metrics once per checkpoint interval: its dead letters cannot wait for them
            dead.frame = realtime.dead_letter_frame(dead.frame)
        interval = realtime.DEAD_LETTER_INTERVAL_MS if c.realtime else 0
        extra = [QueryPlan([sink], dead, lazy=not c.realtime, interval_ms=interval)]
    if mode != "streaming":
        return [QueryPlan([s], x) for s, x in compiled] + extra
    users: dict[int, list[nodes.Sink]] = {}
    general: dict[int, nodes.Node] = {}
    for node in facts.nodes:
        done = c.done.get(id(node))
        if done is not None and done.tagged is not None:
            users[id(node)] = list(facts.readers(node))
            general[id(node)] = node
    plans: list[QueryPlan] = []
    grouped: set[int] = set()
    for key, group in users.items():
        node = general[key]
        # (a stateful operator after the shared one would run per micro-batch in the split, without its state:
        # each sink then runs its operators in its own query instead, the shared one's state kept per query)
        if len(group) < 2 or any(_stateful_after(s, node, general) for s in group):
            continue
        if any(id(s) in grouped for s in group):
            raise PlanError(f"sinks {', '.join(s.where() for s in group)} read several shared stateful operators; split the job")
        plans.append(QueryPlan(group, c.done[key], split=node))
        grouped.update(id(s) for s in group)
    plans += [QueryPlan([s], x, realtime=c.realtime) for s, x in compiled if id(s) not in grouped]
    return plans + extra


def _stateful_after(sink: nodes.Sink, split: nodes.Node, general: dict[int, nodes.Node]) -> bool:
    """Whether an operator with state (or of several inputs) runs between a shared operator and ``sink``:
    after a split only per-row operators may run (they run per batch)."""
    node: nodes.Node = sink
    while node is not split:
        if isinstance(node, nodes.SPARK_STATEFUL) or id(node) in general or len(node.inputs) != 1:
            return True
        node = node.input
    return False


def compile_batch_split(spark: SparkSession, plan: QueryPlan, batch: DataFrame, cores: int) -> list[tuple[nodes.Sink, DataFrame]]:
    """The sinks' frames for one micro-batch of a split query's tagged output."""
    assert plan.split is not None
    if plan.split_facts is None:
        plan.split_facts = analyse(plan.sinks, streaming=False)
    c = Compiler(spark, mode="batch", cores=cores, seeds={id(plan.split): (batch, plan.compiled.program)}, facts=plan.split_facts)
    return [(s, c.compile(s).frame) for s in plan.sinks]
