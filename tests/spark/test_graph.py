"""funke.graph on Spark: each algorithm against networkx (or, for label propagation, a plain-Python run of
the same synchronous rule) on seeded random graphs, and on small graphs checked by hand."""

from __future__ import annotations

import math
import random
from collections import Counter

import networkx as nx
import pytest

from funke.graph import Graph, GraphError, iterate, iterate_delta

pytestmark = pytest.mark.spark

SCHEMA = "src long, dst long, weight double"


def graph(spark, ids, edges) -> Graph:
    """``edges``: (src, dst) or (src, dst, weight) tuples; weight 1.0 when left out."""
    rows = [(a, b, float(w[0]) if w else 1.0) for a, b, *w in edges]
    return Graph(spark.createDataFrame([(i,) for i in ids], "id long"), spark.createDataFrame(rows, SCHEMA))


def as_dict(frame, column) -> dict:
    return {r["id"]: r[column] for r in frame.collect()}


def random_edges(seed, n, m, weights=False, self_loops=0, repeats=0):
    rng = random.Random(seed)
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(m)]
    edges = [(a, b) for a, b in edges if a != b]
    edges += [(v, v) for v in rng.sample(range(n), self_loops)] + rng.sample(edges, repeats)
    return [(a, b, rng.randint(0, 9)) for a, b in edges] if weights else edges


def lpa_reference(ids, edges, max_iterations):
    """The synchronous rule of ``label_propagation``'s docstring, in plain Python."""
    near = {v: set() for v in ids}
    for a, b, *_ in edges:
        if a != b:
            near[a].add(b)
            near[b].add(a)
    labels = {v: v for v in ids}
    for _ in range(max_iterations):
        new = {}
        for v in ids:
            votes = Counter(labels[u] for u in near[v])
            top = max(votes.values(), default=None)
            new[v] = min(label for label, k in votes.items() if k == top) if votes else labels[v]
        if new == labels:
            break
        labels = new
    return labels


# Against networkx on random graphs.


def test_pagerank_matches_networkx_with_dangling_vertices_self_loops_and_repeated_edges(spark):
    n, edges = 400, random_edges(1, 300, 1_500, weights=True, self_loops=5, repeats=20)  # vertices 300..399: no edges at all
    g = graph(spark, range(n), edges)
    digraph = nx.DiGraph()
    digraph.add_nodes_from(range(n))
    digraph.add_edges_from((a, b) for a, b, _ in edges)
    expected = nx.pagerank(digraph, alpha=0.85, tol=1e-3, weight=None)
    ranks = as_dict(g.pagerank(damping=0.85, tolerance=1e-3), "rank")
    assert ranks.keys() == expected.keys()
    assert max(abs(ranks[v] - expected[v]) for v in expected) < 1e-12
    assert math.isclose(sum(ranks.values()), 1.0, abs_tol=1e-9)

    multi = nx.MultiDiGraph()  # weights of repeated edges add up, as in networkx's multigraphs
    multi.add_nodes_from(range(n))
    multi.add_weighted_edges_from(edges)
    expected = nx.pagerank(multi, alpha=0.7, tol=1e-3, weight="weight")
    ranks = as_dict(g.pagerank(damping=0.7, tolerance=1e-3, weight="weight"), "rank")
    assert max(abs(ranks[v] - expected[v]) for v in expected) < 1e-12


def test_connected_components_match_networkx_on_a_few_thousand_edges(spark):
    n, edges = 2_200, random_edges(2, 2_000, 3_000, self_loops=10, repeats=30)  # 2,000..2,199: alone
    g = graph(spark, range(n), edges)
    labels = as_dict(g.connected_components(), "component")
    undirected = nx.Graph()
    undirected.add_nodes_from(range(n))
    undirected.add_edges_from(edges)
    expected = {v: min(part) for part in nx.connected_components(undirected) for v in part}
    assert labels == expected
    assert len(set(labels.values())) > 250 and max(Counter(labels.values()).values()) > 1_500


def test_shortest_paths_match_dijkstra(spark):
    n, edges = 300, random_edges(3, 300, 1_200, weights=True, self_loops=5, repeats=20)
    g = graph(spark, range(n), edges)
    digraph = nx.DiGraph()
    digraph.add_nodes_from(range(n))
    for a, b, w in edges:  # of repeated edges the lightest counts
        if not digraph.has_edge(a, b) or digraph[a][b]["weight"] > w:
            digraph.add_edge(a, b, weight=w)
    reached = nx.single_source_dijkstra_path_length(digraph, 0, weight="weight")
    distances = as_dict(g.shortest_paths(source=0), "distance")
    assert distances == {v: float(reached.get(v, math.inf)) for v in range(n)}
    assert 1 < len(reached) < n


def test_label_propagation_matches_the_synchronous_rule_in_python(spark):
    n, edges = 300, random_edges(4, 300, 500, self_loops=5, repeats=20)
    g = graph(spark, range(n), edges)
    assert as_dict(g.label_propagation(max_iterations=8), "label") == lpa_reference(range(n), edges, 8)


def test_label_propagation_finds_cliques_as_networkx_does(spark):
    cliques = nx.disjoint_union_all([nx.complete_graph(k) for k in (3, 4, 5, 7)])
    cliques.add_edges_from([(2, 3), (6, 7)])  # weak bridges
    g = graph(spark, cliques.nodes, cliques.edges)
    labels = as_dict(g.label_propagation(), "label")
    ours = sorted(sorted(v for v in labels if labels[v] == label) for label in set(labels.values()))
    theirs = sorted(sorted(c) for c in nx.community.label_propagation_communities(cliques))
    assert ours == theirs == [list(range(3)), list(range(3, 7)), list(range(7, 12)), list(range(12, 19))]


def test_triangle_count_matches_networkx(spark):
    n, edges = 120, random_edges(5, 120, 900, self_loops=5, repeats=40)
    g = graph(spark, range(n), edges + [(b, a) for a, b in edges[:50]])
    undirected = nx.Graph(edges)
    undirected.remove_edges_from(nx.selfloop_edges(undirected))
    undirected.add_nodes_from(range(n))
    expected = nx.triangles(undirected)
    assert as_dict(g.triangle_count(), "triangles") == expected
    found = [tuple(r) for r in g.triangles().collect()]
    assert len(found) == len(set(found)) == sum(expected.values()) // 3 > 50
    assert all(a < b < c and undirected.has_edge(a, b) and undirected.has_edge(b, c) and undirected.has_edge(a, c) for a, b, c in found)


# Small graphs, checked by hand.


def test_a_star_pointing_at_its_centre(spark):
    g = graph(spark, range(5), [(leaf, 0) for leaf in range(1, 5)])
    # From 1/5 each; the centre is dangling: its rank is spread over all five. Round 1: the centre gets
    # 0.85 * (4 * 0.2 + 0.2 / 5) + 0.15 / 5 = 0.744, each leaf 0.85 * 0.2 / 5 + 0.03 = 0.064; round 2 likewise:
    # 0.85 * (4 * 0.064 + 0.744 / 5) + 0.03 = 0.37408 and 0.85 * 0.744 / 5 + 0.03 = 0.15648.
    ranks = as_dict(g.pagerank(max_iterations=2), "rank")
    assert ranks == pytest.approx({0: 0.37408, **{leaf: 0.15648 for leaf in range(1, 5)}}, abs=1e-15)
    assert as_dict(g.shortest_paths(source=1, weight=None), "distance") == {0: 1.0, 1: 0.0, 2: math.inf, 3: math.inf, 4: math.inf}
    assert set(as_dict(g.connected_components(), "component").values()) == {0}
    # Synchronous label propagation swings on a star: the centre takes the smallest leaf, the leaves the centre's label.
    assert as_dict(g.label_propagation(max_iterations=1), "label") == {0: 1, 1: 0, 2: 0, 3: 0, 4: 0}
    assert as_dict(g.label_propagation(max_iterations=4), "label") == {0: 0, 1: 1, 2: 1, 3: 1, 4: 1}


def test_a_path(spark):
    g = graph(spark, [1, 2, 3, 4], [(1, 2, 2.0), (2, 3, 0.0), (3, 4, 1.5)])
    assert as_dict(g.shortest_paths(source=1), "distance") == {1: 0.0, 2: 2.0, 3: 2.0, 4: 3.5}
    assert as_dict(g.connected_components(), "component") == {1: 1, 2: 1, 3: 1, 4: 1}
    assert as_dict(g.triangle_count(), "triangles") == {1: 0, 2: 0, 3: 0, 4: 0}


def test_disconnected_parts_self_loops_dangling_vertices_and_edges_to_nowhere(spark):
    edges = [(1, 2, 2.0), (2, 3, 3.0), (1, 3, 10.0), (3, 1, 1.0), (3, 3, 0.5), (2, 1, 7.0), (4, 5, 1.0), (7, 99, 1.0)]
    g = graph(spark, [1, 2, 3, 4, 5, 6, 7], edges)  # 99 is no vertex: its edge is left out; 6 has no edge
    assert as_dict(g.connected_components(), "component") == {1: 1, 2: 1, 3: 1, 4: 4, 5: 4, 6: 6, 7: 7}
    inf = math.inf
    assert as_dict(g.shortest_paths(source=1), "distance") == {1: 0.0, 2: 2.0, 3: 5.0, 4: inf, 5: inf, 6: inf, 7: inf}
    assert as_dict(g.triangle_count(), "triangles") == {1: 1, 2: 1, 3: 1, 4: 0, 5: 0, 6: 0, 7: 0}
    assert [tuple(r) for r in g.triangles().collect()] == [(1, 2, 3)]
    ranks = as_dict(g.pagerank(tolerance=1e-3), "rank")  # the same stopping test: the same rounds as networkx
    digraph = nx.DiGraph([(a, b) for a, b, _ in edges if b != 99])
    digraph.add_nodes_from([6, 7])
    assert ranks == pytest.approx(nx.pagerank(digraph, tol=1e-3, weight=None), abs=1e-12)
    assert as_dict(Graph.from_edges(g.edges).connected_components(), "component")[99] == 7


def test_string_ids(spark):
    g = Graph.from_edges(spark.createDataFrame([("b", "c"), ("c", "a"), ("x", "y")], "src string, dst string"))
    assert as_dict(g.connected_components(), "component") == {"a": "a", "b": "a", "c": "a", "x": "x", "y": "x"}
    assert as_dict(g.shortest_paths(source="b", weight=None), "distance") == {"a": 2.0, "b": 0.0, "c": 1.0, "x": math.inf, "y": math.inf}


def test_a_graph_from_bounded_streams_equals_the_graph_from_dataframes(spark, tmp_path):
    import funke as fk

    n, edges = 200, random_edges(6, 180, 500, weights=True, self_loops=3)  # 180..199: alone
    (tmp_path / "edges").mkdir()
    lines = [f"{a},{b},{w}" for a, b, w in edges] + ["3,x,1"]  # a bad record: to the dead letters
    (tmp_path / "edges" / "part-0.csv").write_text("\n".join(lines) + "\n")
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="graph-input", spark=spark, dead_letters=dead)
    read = env.from_source(fk.sources.files(str(tmp_path / "edges"), schema=SCHEMA, format="csv"))
    vertices = env.from_collection([{"id": i} for i in range(n)], "id long")
    from_streams = Graph(vertices, read.filter("src <> 0"))  # (a stream's operators run too)
    assert [(r["job"], r["reason"].endswith("malformed record or a value of the wrong type"), r["raw"]) for r in dead.rows] == [
        ("graph-input.graph-edges", True, "3,x,1")
    ]
    from_frames = graph(spark, range(n), [(a, b, w) for a, b, w in edges if a != 0])
    assert sorted(from_streams.edges.columns) == ["dst", "src", "weight"]
    expected = as_dict(from_frames.pagerank(weight="weight", tolerance=1e-3), "rank")
    assert as_dict(from_streams.pagerank(weight="weight", tolerance=1e-3), "rank") == pytest.approx(expected, abs=1e-15)
    expected = as_dict(Graph.from_edges(from_frames.edges).connected_components(), "component")
    assert as_dict(Graph.from_edges(read.filter("src <> 0")).connected_components(), "component") == expected


# Refusals that need the data.


def test_negative_null_or_nan_weights_and_unknown_sources_are_refused(spark):
    g = graph(spark, [1, 2, 3], [(1, 2, 1.0), (2, 3, -0.5)])
    with pytest.raises(GraphError, match=r"needs edge weights >= 0 .* column 'weight' has 2 -> 3: -0.5"):
        g.shortest_paths(source=1)
    nulls = Graph(g.vertices, spark.createDataFrame([(1, 2, None), (2, 3, float("nan"))], SCHEMA))
    with pytest.raises(GraphError, match=r"1 -> 2: None, 2 -> 3: nan"):
        nulls.shortest_paths(source=1)
    with pytest.raises(GraphError, match=r"the source 9 is not a vertex id of this graph"):
        graph(spark, [1, 2], [(1, 2)]).shortest_paths(source=9)


# The iteration helpers.


def test_iterate_stops_on_its_criterion_or_at_the_limit(spark):
    from pyspark.sql import functions as F

    start = spark.range(4).withColumn("x", F.lit(0))

    def step(frame, _round):
        return frame.select("id", (F.col("x") + F.col("id")).alias("x"))

    done = iterate(start, step, 20, until=lambda _before, after, _r: after.agg(F.max("x")).first()[0] >= 21, checkpoint_every=2)
    assert (done.iterations, done.converged) == (7, True)
    assert sorted(tuple(r) for r in done.result.collect()) == [(0, 0), (1, 7), (2, 14), (3, 21)]
    capped = iterate(start, step, 3)
    assert (capped.iterations, capped.converged) == (3, False)
    assert sorted(r["x"] for r in capped.result.collect()) == [0, 3, 6, 9]


def test_iterate_delta_updates_only_what_the_workset_touches(spark):
    from pyspark.sql import functions as F

    solution = spark.createDataFrame([(i, i) for i in range(6)], "k long, v long")

    def step(_solution, work, _round):  # count each worked-on value down to 0, one per round
        updates = work.select("k", (F.col("v") - 1).alias("v"))
        return updates, updates.where("v > 0")

    done = iterate_delta(solution, solution.where("v > 0"), step, "k", checkpoint_every=2)
    assert (done.iterations, done.converged) == (5, True)
    assert sorted(tuple(r) for r in done.result.collect()) == [(i, 0) for i in range(6)]
    capped = iterate_delta(solution, solution.where("v > 0"), step, "k", max_iterations=2)
    assert (capped.iterations, capped.converged) == (2, False)
    assert sorted(tuple(r) for r in capped.result.collect()) == [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2), (5, 3)]


def test_a_graph_from_python_lists_of_pairs_and_of_dicts(spark):
    g = Graph.from_edges([(1, 2), (2, 3), (7, 8)])  # (an AttributeError on 'list'.dtypes before)
    assert as_dict(g.connected_components(), "component") == {1: 1, 2: 1, 3: 1, 7: 7, 8: 7}
    weighted = Graph([1, 2, 3], [{"src": 1, "dst": 2, "weight": 2.5}, {"src": 2, "dst": 3, "weight": 1.0}])
    assert as_dict(weighted.shortest_paths(source=1), "distance") == {1: 0.0, 2: 2.5, 3: 3.5}
