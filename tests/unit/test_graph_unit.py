"""funke.graph's argument checks, without Spark: they run before any DataFrame is touched, so a stand-in
with ``columns`` and ``dtypes`` is enough; any other use of it fails the test."""

from __future__ import annotations

import pytest

from funke.errors import SchemaError
from funke.graph import Graph, GraphError, iterate, iterate_delta
from funke.graph import algorithms as alg


class Frame:
    """A DataFrame's schema and nothing else."""

    def __init__(self, schema: str) -> None:
        self.dtypes = [tuple(part.split()) for part in schema.split(", ")]
        self.columns = [name for name, _ in self.dtypes]


def graph(edges="src bigint, dst bigint, weight double", vertices="id bigint") -> Graph:
    return Graph(Frame(vertices), Frame(edges))


def test_missing_columns_are_refused_with_their_names():
    with pytest.raises(SchemaError, match=r"the vertices need a column 'id' \(did you mean 'ids'\?\); available columns: ids"):
        graph(vertices="ids bigint")
    with pytest.raises(SchemaError, match=r"the edges need a column 'dst'; available columns: src, to"):
        graph(edges="src bigint, to bigint")
    with pytest.raises(SchemaError, match=r"the edges need a column 'src'"):
        Graph.from_edges(Frame("from bigint, dst bigint"))


def test_ids_and_edge_ends_must_have_one_type():
    message = r"vertex ids and edge ends must have one type, got vertices.id string, edges.src bigint, edges.dst bigint"
    with pytest.raises(SchemaError, match=message):
        graph(vertices="id string")


def test_weights_must_be_a_numeric_column():
    g = graph(edges="src bigint, dst bigint, weight string, cost int")
    with pytest.raises(SchemaError, match=r"edge weights must be numbers: column 'weight' is string"):
        g.shortest_paths(source=1)
    with pytest.raises(SchemaError, match=r"the edges need a column 'w'; available columns: src, dst, weight, cost"):
        g.pagerank(weight="w")
    assert g.weight_type("cost") == "int"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: g.pagerank(damping=1.0), r"damping must be a number in \[0, 1\), got 1.0"),
        (lambda g: g.pagerank(damping=-0.1), r"damping must be a number in \[0, 1\)"),
        (lambda g: g.pagerank(tolerance=0), r"tolerance must be a number > 0, got 0"),
        (lambda g: g.pagerank(max_iterations=0), r"max_iterations must be a positive int, got 0"),
        (lambda g: g.label_propagation(max_iterations=None), r"max_iterations must be a positive int, got None"),
        (lambda g: g.connected_components(max_iterations=2.5), r"max_iterations must be a positive int or None, got 2.5"),
        (lambda g: g.shortest_paths(source=None), r"shortest_paths\(\) needs a source vertex id, got None"),
        (lambda g: g.shortest_paths(1, max_iterations=True), r"max_iterations must be a positive int or None, got True"),
    ],
)
def test_bad_arguments_are_refused_before_spark_runs(call, message):
    with pytest.raises(GraphError, match=message):
        call(graph())


def test_graph_errors_are_value_errors():
    assert issubclass(GraphError, ValueError)
    assert alg.pagerank.__defaults__[:3] == (0.85, 100, 1e-6)  # damping, max_iterations, tolerance: networkx's defaults


def test_iteration_helpers_check_their_limits():
    def step(frame, _round):
        return frame

    with pytest.raises(GraphError, match=r"iterate\(\) needs max_iterations"):
        iterate(Frame("id bigint"), step, None)
    with pytest.raises(GraphError, match=r"max_iterations must be a positive int \(or None for no limit\), got 0"):
        iterate(Frame("id bigint"), step, 0)
    with pytest.raises(GraphError, match=r"checkpoint_every must be a positive int, got 0"):
        iterate_delta(Frame("id bigint"), Frame("id bigint"), step, "id", checkpoint_every=0)
    with pytest.raises(GraphError, match=r"the key column\(s\) \['k'\] are not in the solution set's columns \['id', 'v'\]"):
        iterate_delta(Frame("id bigint, v double"), Frame("id bigint"), step, "k")


def test_bench_graph_is_seeded_and_its_line_says_what_was_checked():
    from funke.bench.graph import GraphBench, Timing, generate, graph_summary, synchronous_label_propagation

    a, b = generate(50, 200, seed=3), generate(50, 200, seed=3)
    assert all((x == y).all() for x, y in zip(a, b, strict=True)) and a[0].max() < 50 and len(a[1]) == 200
    timings = (
        Timing("PageRank (damping 0.85, tolerance 1e-6)", 30.0, "networkx", 3.0, "ranks at most 2e-17 apart"),
        Timing("label propagation (20 rounds at most)", 12.0, "plain Python", 0.6, "the same labels (9 communities)"),
    )
    line = graph_summary(GraphBench(20_000, 100_000, 18, timings))
    assert line == (
        "20,000 vertices, 100,000 uniform random directed edges (seed 18): PageRank (damping 0.85, tolerance 1e-6) funke 30.0 s, "
        "networkx 3.00 s, funke/networkx **10x** the time, ranks at most 2e-17 apart; label propagation (20 rounds at most) "
        "funke 12.0 s, plain Python 0.60 s, funke/plain Python **20x** the time, the same labels (9 communities)"
    )
    # the reference rule: on a star, the centre takes the smallest leaf and the leaves the centre's label, back and forth
    star = [(leaf, 0) for leaf in range(1, 5)]
    assert synchronous_label_propagation(range(5), star, 1) == {0: 1, 1: 0, 2: 0, 3: 0, 4: 0}
    assert synchronous_label_propagation(range(5), star, 4) == {0: 0, 1: 1, 2: 1, 3: 1, 4: 1}


def test_the_iterations_are_fk_iterate_and_fk_iterate_delta():
    import funke as fk
    from funke.graph import iteration

    assert (fk.iterate, fk.iterate_delta) == (iteration.iterate, iteration.iterate_delta)
    assert {"iterate", "iterate_delta"} <= set(fk.__all__)


def test_what_a_graph_is_made_of_is_said_when_it_is_given_something_else():
    takes = r"the graph's edges must be a Spark DataFrame with 'src' and 'dst' columns, a bounded funke DataStream, or a list of"
    with pytest.raises(SchemaError, match=takes + r".*; got str"):
        Graph.from_edges("edges.csv")
    with pytest.raises(SchemaError, match=takes + r".*; item 1 is \(3,\)"):
        Graph.from_edges([(1, 2), (3,)])
    with pytest.raises(SchemaError, match=r"the graph's vertices must be .*; got dict"):
        Graph({"id": 1}, [(1, 2)])
