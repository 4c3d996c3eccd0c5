"""``funke bench graph``: every algorithm of ``funke.graph`` on a generated graph, each result checked.

The graph: ``vertices`` ids and ``edges`` directed edges whose ends are drawn uniformly with a
seeded numpy generator (repeated edges and self-loops are kept, as drawn; vertices that no edge
touches stay in the graph, dangling for PageRank). Both sides get it from the same arrays:

* funke: ``funke.graph.Graph`` over two DataFrames made from the arrays and ``localCheckpoint``-ed
  before the clock starts; each time is until the algorithm's result DataFrame is computed
  (``localCheckpoint(eager=True)`` of it);
* the reference, each time including building its graph from the arrays: networkx's
  ``pagerank`` (scipy's sparse power iteration, on an ``nx.DiGraph``, ``weight=None``),
  ``connected_components`` (a BFS in Python, ``nx.Graph``), ``single_source_shortest_path_length``
  (a BFS from vertex 0 over the directed edges: funke's ``shortest_paths(0, weight=None)``, every
  edge weighing 1) and ``triangles`` (``nx.Graph`` without self-loops); for label propagation,
  :func:`synchronous_label_propagation` in plain Python: networkx's ``label_propagation_communities``
  is semi-synchronous (it colours the graph and updates one colour at a time) and its
  ``asyn_lpa_communities`` random, so neither gives the labels of funke's synchronous rule.

Checks: PageRank (the same rule and stopping test, damping 0.85, L1 change < N * 1e-6) at most
``PAGERANK_TOLERANCE`` apart; components, distances, labels and triangle counts exactly equal.
A run whose results differ raises and writes no line.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

PAGERANK_TOLERANCE = 1e-9
#: Rounds of label propagation (funke's default): the synchronous rule need not settle.
LPA_ROUNDS = 20


@dataclass(frozen=True)
class Timing:
    """One algorithm: funke's time, the reference's, and what the check found equal."""

    algorithm: str
    funke_s: float
    reference: str
    reference_s: float
    agreement: str


@dataclass(frozen=True)
class GraphBench:
    vertices: int
    edges: int
    seed: int
    timings: tuple[Timing, ...]


def generate(vertices: int, edges: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``edges`` (src, dst) pairs over ids ``0 .. vertices - 1``, uniform, seeded."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, vertices, edges, dtype=np.int64), rng.integers(0, vertices, edges, dtype=np.int64)


def synchronous_label_propagation(ids: Iterable[Any], pairs: Iterable[tuple[Any, Any]], max_iterations: int) -> dict[Any, Any]:
    """The rule of ``funke.graph.label_propagation`` in plain Python: all vertices at once take the
    label most of their neighbours had (edges both ways, each neighbour once, no self-loops), ties
    to the smallest label, until no label changes or after ``max_iterations`` rounds.

    >>> synchronous_label_propagation(range(4), [(0, 1), (1, 2), (2, 0), (3, 3)], 5)
    {0: 0, 1: 0, 2: 0, 3: 3}
    """
    near: dict[Any, set[Any]] = {v: set() for v in ids}
    for a, b in pairs:
        if a != b:
            near[a].add(b)
            near[b].add(a)
    labels = {v: v for v in near}
    for _ in range(max_iterations):
        new = {}
        for v, others in near.items():
            votes = Counter(labels[u] for u in others)
            top = max(votes.values(), default=0)
            new[v] = min(label for label, k in votes.items() if k == top) if votes else labels[v]
        if new == labels:
            break
        labels = new
    return labels


def run_graph_bench(
    spark: Any, edges: int, vertices: int, seed: int = 18, on_step: Callable[[str], None] | None = None
) -> GraphBench:
    """funke and the references on the same generated graph; raises ``AssertionError`` when results differ."""
    import networkx as nx
    import pandas as pd

    from funke.graph import Graph

    say = on_step or (lambda _s: None)
    src, dst = generate(vertices, edges, seed)
    ids = spark.createDataFrame(pd.DataFrame({"id": np.arange(vertices, dtype=np.int64)})).localCheckpoint(eager=True)
    links = spark.createDataFrame(pd.DataFrame({"src": src, "dst": dst})).localCheckpoint(eager=True)
    g = Graph(ids, links)
    pairs = list(zip(src.tolist(), dst.tolist(), strict=True))

    def funke(name: str, algorithm: Callable[[], Any], column: str) -> tuple[dict[Any, Any], float]:
        say(f"{name}, funke: {vertices:,} vertices, {edges:,} edges")
        started = time.monotonic()
        result = algorithm().localCheckpoint(eager=True)
        took = time.monotonic() - started
        return {r["id"]: r[column] for r in result.collect()}, took

    def reference(name: str, who: str, compute: Callable[[], Any]) -> tuple[Any, float]:
        say(f"{name}, {who}")
        started = time.monotonic()
        result = compute()
        return result, time.monotonic() - started

    def directed() -> Any:
        d = nx.DiGraph()
        d.add_nodes_from(range(vertices))
        d.add_edges_from(pairs)
        return d

    def undirected(self_loops: bool = True) -> Any:
        u = nx.Graph()
        u.add_nodes_from(range(vertices))
        u.add_edges_from(pairs)
        if not self_loops:
            u.remove_edges_from(nx.selfloop_edges(u))
        return u

    timings = []

    ours, took = funke("PageRank", lambda: g.pagerank(damping=0.85, tolerance=1e-6, max_iterations=100), "rank")
    theirs, nx_took = reference(
        "PageRank", "networkx", lambda: nx.pagerank(directed(), alpha=0.85, tol=1e-6, max_iter=100, weight=None)
    )
    if ours.keys() != theirs.keys():
        raise AssertionError("funke's and networkx's PageRank rank different vertices")
    difference = max(abs(ours[v] - theirs[v]) for v in theirs)
    if difference > PAGERANK_TOLERANCE:
        raise AssertionError(f"funke's and networkx's PageRank differ by up to {difference:.3g} (> {PAGERANK_TOLERANCE})")
    timings.append(
        Timing("PageRank (damping 0.85, tolerance 1e-6)", took, "networkx", nx_took, f"ranks at most {difference:.1g} apart")
    )

    ours, took = funke("connected components", g.connected_components, "component")
    parts, nx_took = reference("connected components", "networkx", lambda: list(nx.connected_components(undirected())))
    _same("connected components", ours, {v: min(part) for part in parts for v in part})
    largest = max(map(len, parts), default=0)
    timings.append(
        Timing(
            "weakly connected components",
            took,
            "networkx",
            nx_took,
            f"the same {len(parts):,} components (largest {largest:,} vertices)",
        )
    )

    ours, took = funke("shortest paths", lambda: g.shortest_paths(source=0, weight=None), "distance")
    hops, nx_took = reference("shortest paths", "networkx", lambda: nx.single_source_shortest_path_length(directed(), 0))
    _same("shortest paths", ours, {v: float(hops.get(v, math.inf)) for v in range(vertices)})
    farthest = max(hops.values(), default=0)
    timings.append(
        Timing(
            "shortest paths from vertex 0 (unweighted)",
            took,
            "networkx",
            nx_took,
            f"the same distances ({len(hops):,} vertices reached, the farthest {farthest} hops away)",
        )
    )

    ours, took = funke("label propagation", lambda: g.label_propagation(max_iterations=LPA_ROUNDS), "label")
    labels, py_took = reference(
        "label propagation", "plain Python", lambda: synchronous_label_propagation(range(vertices), pairs, LPA_ROUNDS)
    )
    _same("label propagation", ours, labels)
    timings.append(
        Timing(
            f"label propagation ({LPA_ROUNDS} rounds at most)",
            took,
            "plain Python",
            py_took,
            f"the same labels ({len(set(labels.values())):,} communities)",
        )
    )

    ours, took = funke("triangle count", g.triangle_count, "triangles")
    counts, nx_took = reference("triangle count", "networkx", lambda: nx.triangles(undirected(self_loops=False)))
    _same("triangle count", ours, counts)
    timings.append(
        Timing("triangle count", took, "networkx", nx_took, f"the same counts ({sum(counts.values()) // 3:,} triangles)")
    )
    return GraphBench(vertices, edges, seed, tuple(timings))


def _same(what: str, ours: dict[Any, Any], theirs: dict[Any, Any]) -> None:
    if ours != theirs:
        wrong = sum(ours.get(v) != x for v, x in theirs.items()) + len(ours.keys() - theirs.keys())
        raise AssertionError(f"funke's and the reference's {what} differ at {wrong:,} vertices")


def _s(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 10 else f"{seconds:.2f} s"


def graph_summary(b: GraphBench) -> str:
    """One line for docs/benchmarks.md."""
    parts = [
        f"{t.algorithm} funke {_s(t.funke_s)}, {t.reference} {_s(t.reference_s)}, funke/{t.reference} "
        f"**{t.funke_s / t.reference_s:.0f}x** the time, {t.agreement}"
        for t in b.timings
    ]
    return f"{b.vertices:,} vertices, {b.edges:,} uniform random directed edges (seed {b.seed}): " + "; ".join(parts)
