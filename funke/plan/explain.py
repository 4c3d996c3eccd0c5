"""``explain()``: the plan as a tree, each node with its uid, path and reason."""

from __future__ import annotations

from funke.plan.capabilities import Placement, place
from funke.plan.changelog import describe_modes
from funke.plan.nodes import Node, SideOutput, Sink, walk
from funke.plan.realtime import NOTES as REALTIME_NOTES
from funke.plan.realtime import REALTIME, check_realtime, why_realtime


def explain(sinks: list[Sink] | tuple[Sink, ...], *, mode: str = "streaming", latency_mode: str = "micro-batch") -> str:
    """The plan as a tree; in real-time mode (``set_latency_mode("realtime")``) the job is first checked
    against what that mode runs (``funke.plan.realtime``), and refused there when it cannot."""
    realtime = mode == "streaming" and latency_mode == "realtime"
    if realtime:
        check_realtime(walk(sinks))
    lines = [f"funke plan ({mode}{', real-time' if realtime else ''}), {len(sinks)} sink(s)"]
    seen: set[int] = set()
    changes = describe_modes(walk(sinks))  # (each node's changelog mode, where the plan has updating results)

    def render(node: Node, prefix: str, last: bool, top: bool) -> None:
        p = Placement(REALTIME, why_realtime(node)) if realtime else place(node)
        branch = "" if top else ("└─ " if last else "├─ ")
        again = " (shown above)" if id(node) in seen else ""
        lines.append(f"{prefix}{branch}{node.label()}  [{node.uid}] {p.path}{again}")
        child_prefix = prefix + ("" if top else ("   " if last else "│  "))
        if again:
            return
        seen.add(id(node))
        lines.append(f"{child_prefix}{'│  ' if node.inputs else '   '}  why: {p.why}")
        if node.schema is not None:
            lines.append(f"{child_prefix}{'│  ' if node.inputs else '   '}  out: {node.schema}")
        if changes:
            lines.append(f"{child_prefix}{'│  ' if node.inputs else '   '}  changes: {changes[id(node)]}")
        for i, child in enumerate(node.inputs):
            render(child, child_prefix, i == len(node.inputs) - 1, False)

    for s in sinks:
        render(s, "", True, True)
    lines.append("")
    lines.extend(REALTIME_NOTES if realtime else NOTES[mode])
    if mode == "streaming" and latency_mode == "latency-first":
        lines.extend(LATENCY_FIRST_NOTES)
    return "\n".join(lines)


def plan_graph(sinks: list[Sink] | tuple[Sink, ...]) -> list[dict[str, object]]:
    """The plan as data for the dashboard: one entry per node (upstream first), with its inputs'
    uids and the queries (sink uids) it runs in."""
    # Keyed by uid: equal operators over the same input (two key_by("k") of one stream) are one node.
    nodes: dict[str, dict[str, object]] = {}
    order: list[str] = []

    def visit(node: Node, query: str) -> None:
        entry = nodes.get(node.uid)
        if entry is None:
            for child in node.inputs:
                visit(child, query)
            p = place(node)
            entry = {"uid": node.uid, "label": node.label(), "kind": type(node).__name__, "path": p.path, "why": p.why,
                     "inputs": [c.uid for c in node.inputs], "queries": []}  # fmt: skip
            if isinstance(node, SideOutput):
                entry["tag"] = node.tag.name
            nodes[node.uid] = entry
            order.append(node.uid)
        elif query in entry["queries"]:  # type: ignore[operator]
            return
        else:
            for child in node.inputs:
                visit(child, query)
        entry["queries"].append(query)  # type: ignore[union-attr]

    for s in sinks:
        visit(s, s.uid)
    return [nodes[i] for i in order]


NOTES = {
    "streaming": [
        "notes (Spark vs Flink):",
        "- one watermark per query: the minimum over all sources, recomputed after each micro-batch;",
        "- the watermark from micro-batch n is emitted after batch n+1's elements: a window result appears",
        "  one micro-batch after the watermark passes its end, and a row is late only for windows closed earlier;",
        "- a finite source ends with a watermark at +infinity, so every open window fires (Flink's MAX_WATERMARK);",
        "- late_rows_dropped: Spark's windows count late rows per key, window and batch; funke's operators count elements.",
    ],
    "batch": [
        "notes: bounded run on Spark batch; the watermark is +infinity at the end, so every window fires once",
        "with exactly the results of the unbounded run over the same events (no element is late in batch).",
    ],
}

LATENCY_FIRST_NOTES = [
    "- latency-first: funke's one-input operators on Spark's watermark (windows, process functions) also move each",
    "  key bucket's watermark to its largest event time - bound - 1 after a batch's elements, so a window result leaves",
    "  in the micro-batch whose elements pass its end; two-input operators keep the schedule above.",
]
