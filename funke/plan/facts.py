"""What the compiler reads of a job's whole plan, worked out in one pass over its nodes before any
node is compiled (``analyse``).

A node knows what follows from its inputs alone (``event_time``, ``watermark``, ``keys``: cached on
the node). What needs the plan around it is here, once per node: the path it runs on
(``capabilities.place``), the watermarks its rows carry and those meeting at it, the sources and
watermarks upstream of it, the sinks that read it, which of its side outputs are read; and, for a
streaming run, which watermarks each query follows, which sources split their watermark (Kafka
partitions) and which watermarks a native interval join declares to Spark further behind.

>>> import funke as fk
>>> from funke.windows import TumblingEventTimeWindows
>>> env = fk.StreamEnvironment()
>>> s = env.from_collection([{"k": "a", "ts": 1}], "k string, ts long")
>>> marked = s.assign_timestamps_and_watermarks(fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts", unit="ms"))
>>> _ = marked.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(1))).count().sink_to(fk.sinks.collect())
>>> facts = analyse(env.sinks, streaming=True)
>>> window = next(n for n in facts.nodes if n.kind == "window")
>>> [w.kind for w in facts.meeting(window)], facts.place(window).path, len(facts.readers(window))
(['watermark'], 'native', 1)
>>> facts.query_watermarks(window) == {id(facts.meeting(window)[0])}
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from funke.errors import UnsupportedError
from funke.plan.capabilities import GENERAL, OWN_CLOCK, Placement, place, split_watermark
from funke.plan.connect import BroadcastProcess, CoProcess
from funke.plan.joins import IntervalJoin, WindowJoin
from funke.plan.nodes import KeyedProcess, Node, RollingAggregate, SideOutput, Sink, Source, Watermark, WindowAggregate, walk

__all__ = ["PlanFacts", "analyse"]

#: Operators that read the watermark (a native interval join's watermarks cannot also feed one).
_TIMED = (WindowAggregate, KeyedProcess, RollingAggregate, WindowJoin, CoProcess, BroadcastProcess)


def _ordered_union(groups: Iterable[Sequence[Any]]) -> tuple[Any, ...]:
    """The items of ``groups`` in order, each once (by identity)."""
    seen: dict[int, Any] = {}
    for group in groups:
        for x in group:
            seen.setdefault(id(x), x)
    return tuple(seen.values())


@dataclass
class PlanFacts:
    """The facts of one plan (``analyse``), by node. ``nodes``: every node, inputs before consumers."""

    sinks: tuple[Sink, ...]
    streaming: bool
    nodes: tuple[Node, ...] = ()
    _placement: dict[int, Placement] = field(default_factory=dict)
    _meeting: dict[int, tuple[Watermark, ...]] = field(default_factory=dict)
    _carried: dict[int, tuple[Watermark, ...]] = field(default_factory=dict)
    _watermarks: dict[int, tuple[Watermark, ...]] = field(default_factory=dict)
    _sources: dict[int, tuple[Source, ...]] = field(default_factory=dict)
    _readers: dict[int, tuple[Sink, ...]] = field(default_factory=dict)
    #: Per node (by id), the tags of its side outputs that some sink reads.
    side_tags: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    #: Sources (by id) whose watermark is per split (Kafka partitions); streaming only.
    split_sources: frozenset[int] = frozenset()
    #: Watermark nodes (by id) feeding a native interval join: declared to Spark ``JOIN_SHIFT_MS`` further
    #: behind (``funke.spark.compiled``); streaming only.
    join_watermarks: frozenset[int] = frozenset()

    def place(self, node: Node) -> Placement:
        """The path ``node`` runs on (``capabilities.place``, with the watermarks worked out here)."""
        known = self._placement.get(id(node))
        if known is None:  # (a node outside the plan: one compiled on its own)
            known = self._placement[id(node)] = place(node)
        return known

    def meeting(self, node: Node) -> list[Watermark]:
        """The watermark strategies whose Spark watermark the rows entering ``node`` carry (one each), up to
        operators that compute their own watermark (``capabilities.watermarks_meeting``)."""
        return list(self._meeting[id(node)])

    def watermarks(self, node: Node) -> tuple[Watermark, ...]:
        """Every watermark node upstream of ``node`` (itself included), in ``walk``'s order."""
        return self._watermarks[id(node)]

    def sources(self, node: Node) -> tuple[Source, ...]:
        """The sources ``node``'s rows come from."""
        return self._sources[id(node)]

    def readers(self, node: Node) -> tuple[Sink, ...]:
        """The sinks downstream of ``node``, in the plan's order."""
        return self._readers.get(id(node), ())

    def query_watermarks(self, node: Node) -> set[int]:
        """The watermark nodes (ids) upstream of the sinks that read ``node``: what the Spark query computing
        it takes its one watermark from (sinks sharing a stateful operator share a query); streaming only."""
        if not self.streaming:
            return set()
        return {id(w) for s in self.readers(node) for w in self.watermarks(s)}


def analyse(sinks: Iterable[Sink], *, streaming: bool = True) -> PlanFacts:
    """The facts of the plan ending in ``sinks``, each node visited once, inputs first; refuses a native interval
    join whose watermark a time-driven operator also reads (``UnsupportedError``)."""
    sinks = tuple(sinks)
    facts = PlanFacts(sinks, streaming, tuple(walk(sinks)))
    tags: dict[int, dict[str, Any]] = {}
    for node in facts.nodes:
        key, ins = id(node), node.inputs
        facts._meeting[key] = meeting = _ordered_union(facts._carried[id(i)] for i in ins)
        facts._placement[key] = placement = place(node, lambda n: list(facts._meeting[id(n)]))
        own_clock = isinstance(node, OWN_CLOCK) or (isinstance(node, IntervalJoin) and placement.path == GENERAL)
        facts._carried[key] = (node,) if isinstance(node, Watermark) else () if own_clock else meeting
        facts._watermarks[key] = _ordered_union([*(facts._watermarks[id(i)] for i in ins), (node,) if isinstance(node, Watermark) else ()])
        facts._sources[key] = (node,) if isinstance(node, Source) else _ordered_union(facts._sources[id(i)] for i in ins)
        if isinstance(node, SideOutput):
            tags.setdefault(id(node.input), {})[node.tag.name] = node.tag
    facts.side_tags = {k: tuple(v.values()) for k, v in tags.items()}
    readers: dict[int, dict[int, Sink]] = {}
    for node in reversed(facts.nodes):  # consumers before their inputs
        mine = readers.setdefault(id(node), {})
        if isinstance(node, Sink):
            mine[id(node)] = node
        for i in node.inputs:
            readers.setdefault(id(i), {}).update(mine)
    order = {id(s): n for n, s in enumerate(sinks)}
    facts._readers = {k: tuple(sorted(v.values(), key=lambda s: order[id(s)])) for k, v in readers.items()}
    if streaming:
        facts.split_sources = frozenset(id(w.input) for w in facts.nodes if split_watermark(w))
        facts.join_watermarks = _interval_join_watermarks(facts)
    return facts


def _interval_join_watermarks(facts: PlanFacts) -> frozenset[int]:
    """Watermark nodes feeding a native interval join; refused when a time-driven operator also reads them."""
    shifted = {id(w) for node in facts.nodes if isinstance(node, IntervalJoin) and facts.place(node).path != GENERAL for w in facts.watermarks(node)}
    for node in facts.nodes if shifted else ():
        timed = isinstance(node, _TIMED) or (isinstance(node, IntervalJoin) and facts.place(node).path == GENERAL)
        if timed and any(id(w) in shifted for w in facts.watermarks(node)):
            raise UnsupportedError(
                f"{node.where()} [{node.uid}] reads the same watermark as a native interval join, which declares it to "
                "Spark 2 ms further behind (so that Spark's late rule is Flink's); the two cannot share it in one job: "
                "give the window or process function its own source, or its own job"
            )
    return frozenset(shifted)
