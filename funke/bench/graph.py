"""``funke bench graph``: PageRank and connected components on a generated graph, funke against networkx.

The graph: ``vertices`` ids and ``edges`` directed edges whose ends are drawn uniformly with a
seeded numpy generator (repeated edges and self-loops are kept, as drawn; vertices that no edge
touches stay in the graph, dangling for PageRank). Both systems get it from the same arrays:

* funke: ``funke.graph.Graph`` over two DataFrames made from the arrays and ``localCheckpoint``-ed
  before the clock starts; each time is until the algorithm's result DataFrame is computed;
* networkx: ``nx.DiGraph`` (PageRank, ``weight=None``) and ``nx.Graph`` (components) built from the
  arrays, each time including building its graph; ``nx.pagerank`` is scipy's sparse power
  iteration, ``nx.connected_components`` a BFS in Python.

Both use the same PageRank rule and stopping test (damping 0.85, L1 change < N * 1e-6), so the
ranks must agree to rounding (checked: at most ``PAGERANK_TOLERANCE`` apart); the components
must be the same partition (checked exactly). A run whose results differ raises and writes no line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

PAGERANK_TOLERANCE = 1e-9


@dataclass(frozen=True)
class GraphBench:
    vertices: int
    edges: int
    seed: int
    funke_pagerank_s: float
    networkx_pagerank_s: float
    funke_components_s: float
    networkx_components_s: float
    pagerank_max_difference: float
    components: int
    largest_component: int


def generate(vertices: int, edges: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``edges`` (src, dst) pairs over ids ``0 .. vertices - 1``, uniform, seeded."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, vertices, edges, dtype=np.int64), rng.integers(0, vertices, edges, dtype=np.int64)


def run_graph_bench(
    spark: Any, edges: int, vertices: int, seed: int = 18, on_step: Callable[[str], None] | None = None
) -> GraphBench:
    """Both systems on the same generated graph; raises ``AssertionError`` when their results differ."""
    import networkx as nx
    import pandas as pd

    from funke.graph import Graph

    say = on_step or (lambda _s: None)
    src, dst = generate(vertices, edges, seed)
    ids = spark.createDataFrame(pd.DataFrame({"id": np.arange(vertices, dtype=np.int64)})).localCheckpoint(eager=True)
    links = spark.createDataFrame(pd.DataFrame({"src": src, "dst": dst})).localCheckpoint(eager=True)
    g = Graph(ids, links)
    pairs = list(zip(src.tolist(), dst.tolist(), strict=True))

    say(f"PageRank, funke: {vertices:,} vertices, {edges:,} edges")
    started = time.monotonic()
    ranks = g.pagerank(damping=0.85, tolerance=1e-6, max_iterations=100)
    funke_pr = time.monotonic() - started
    ours = {r["id"]: r["rank"] for r in ranks.collect()}
    say("PageRank, networkx")
    started = time.monotonic()
    digraph = nx.DiGraph()
    digraph.add_nodes_from(range(vertices))
    digraph.add_edges_from(pairs)
    theirs = nx.pagerank(digraph, alpha=0.85, tol=1e-6, max_iter=100, weight=None)
    nx_pr = time.monotonic() - started
    if ours.keys() != theirs.keys():
        raise AssertionError("funke's and networkx's PageRank rank different vertices")
    difference = max(abs(ours[v] - theirs[v]) for v in theirs)
    if difference > PAGERANK_TOLERANCE:
        raise AssertionError(f"funke's and networkx's PageRank differ by up to {difference:.3g} (> {PAGERANK_TOLERANCE})")

    say("connected components, funke")
    started = time.monotonic()
    labels = g.connected_components()
    funke_cc = time.monotonic() - started
    ours_cc = {r["id"]: r["component"] for r in labels.collect()}
    say("connected components, networkx")
    started = time.monotonic()
    undirected = nx.Graph()
    undirected.add_nodes_from(range(vertices))
    undirected.add_edges_from(pairs)
    parts = list(nx.connected_components(undirected))
    nx_cc = time.monotonic() - started
    theirs_cc = {v: min(part) for part in parts for v in part}
    if ours_cc != theirs_cc:
        wrong = sum(ours_cc.get(v) != c for v, c in theirs_cc.items())
        raise AssertionError(f"funke's and networkx's connected components differ at {wrong:,} vertices")
    return GraphBench(
        vertices, edges, seed, funke_pr, nx_pr, funke_cc, nx_cc, difference, len(parts), max(map(len, parts), default=0)
    )


def _s(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 10 else f"{seconds:.2f} s"


def graph_summary(b: GraphBench) -> str:
    """One line for docs/benchmarks.md."""
    return (
        f"{b.vertices:,} vertices, {b.edges:,} uniform random directed edges (seed {b.seed}): PageRank (damping 0.85, "
        f"tolerance 1e-6) funke {_s(b.funke_pagerank_s)}, networkx {_s(b.networkx_pagerank_s)}, funke/networkx "
        f"**{b.funke_pagerank_s / b.networkx_pagerank_s:.0f}x** the time, ranks at most {b.pagerank_max_difference:.1g} apart; "
        f"weakly connected components funke {_s(b.funke_components_s)}, networkx {_s(b.networkx_components_s)}, "
        f"funke/networkx **{b.funke_components_s / b.networkx_components_s:.0f}x** the time, the same {b.components:,} "
        f"components (largest {b.largest_component:,} vertices)"
    )
