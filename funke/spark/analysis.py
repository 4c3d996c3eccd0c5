"""Facts about a job's whole plan that the compiler reads (computed once, before any node is compiled):
which watermarks each query takes its one watermark from, which side outputs are read, which watermarks
a native interval join declares further behind.
"""

from __future__ import annotations

from typing import Any

from funke.errors import UnsupportedError
from funke.plan import nodes
from funke.plan.capabilities import GENERAL, place
from funke.plan.connect import BroadcastProcess, CoProcess
from funke.plan.joins import IntervalJoin, WindowJoin

#: Spark drops a join input row with time <= its watermark (max - delay); Flink drops time < its
#: watermark (max - bound - 1). Declared bound + 2 ms behind, Spark drops exactly Flink's late rows.
JOIN_SHIFT_MS = 2


def watermarks_of(node: nodes.Node) -> list[nodes.Watermark]:
    return [x for x in nodes.walk([node]) if isinstance(x, nodes.Watermark)]


def interval_join_watermarks(sinks: tuple[nodes.Sink, ...]) -> set[int]:
    """Watermark nodes feeding a native interval join; refused when a time-driven operator also reads them."""
    shifted: dict[int, nodes.Watermark] = {}
    for node in nodes.walk(sinks):
        if isinstance(node, IntervalJoin) and place(node).path != GENERAL:
            shifted.update((id(w), w) for i in node.inputs for w in watermarks_of(i))
    if not shifted:
        return set()
    for node in nodes.walk(sinks):
        timed = isinstance(node, (nodes.WindowAggregate, nodes.KeyedProcess, nodes.RollingAggregate, WindowJoin, CoProcess, BroadcastProcess))
        timed = timed or (isinstance(node, IntervalJoin) and place(node).path == GENERAL)
        if timed and any(id(w) in shifted for w in watermarks_of(node)):
            raise UnsupportedError(
                f"{node.where()} [{node.uid}] reads the same watermark as a native interval join, which declares it to "
                "Spark 2 ms further behind (so that Spark's late rule is Flink's); the two cannot share it in one job: "
                "give the window or process function its own source, or its own job"
            )
    return set(shifted)


def query_watermarks(sinks: tuple[nodes.Sink, ...]) -> dict[int, set[int]]:
    """Per node, the watermark nodes (ids) upstream of the sinks that read it: what the Spark query
    computing it takes its one watermark from (sinks sharing a stateful operator share a query)."""
    out: dict[int, set[int]] = {}
    for s in sinks:
        upstream = list(nodes.walk([s]))
        marks = {id(x) for x in upstream if isinstance(x, nodes.Watermark)}
        for x in upstream:
            out.setdefault(id(x), set()).update(marks)
    return out


def side_tags_read(sinks: tuple[nodes.Sink, ...]) -> dict[int, tuple[Any, ...]]:
    """For each node, the tags of its side outputs that some sink reads."""
    tags: dict[int, dict[str, Any]] = {}
    for node in nodes.walk(sinks):
        if isinstance(node, nodes.SideOutput):
            tags.setdefault(id(node.input), {})[node.tag.name] = node.tag
    return {k: tuple(v.values()) for k, v in tags.items()}
