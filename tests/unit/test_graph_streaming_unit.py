"""funke.graph's streaming components and graphs from streams, without Spark: the summary
(``Components``) against networkx on random edge batches, its state as a savepoint keeps it, and the
checks that run while the job is built."""

from __future__ import annotations

import pickle
import random

import networkx as nx
import pytest

import funke as fk
from funke.errors import PlanError, SchemaError
from funke.graph import Graph, GraphError, streaming_connected_components
from funke.graph.streaming import Components
from funke.savepoints.general import decode_value, encode_value
from funke.windows import SlidingEventTimeWindows, TumblingEventTimeWindows

WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts", unit="ms")


def networkx_labels(edges) -> dict:
    g = nx.Graph()
    g.add_edges_from(edges)
    return {v: min(part) for part in nx.connected_components(g) for v in part}


def random_batches(seed, vertices, batches, per_batch):
    rng = random.Random(seed)
    return [
        [(rng.randrange(vertices), rng.randrange(vertices)) for _ in range(rng.randrange(per_batch + 1))] for _ in range(batches)
    ]


@pytest.mark.parametrize("seed", range(5))
def test_each_batch_reports_exactly_the_vertices_whose_component_changed(seed):
    summary, seen, before = Components(), [], {}
    for batch in random_batches(seed, vertices=60, batches=25, per_batch=6):
        changes = summary.add_edges(batch)
        seen += batch
        expected = networkx_labels(seen)
        assert summary.component == expected
        assert changes == {v: c for v, c in expected.items() if before.get(v) != c}
        assert {c: sorted(vs) for c, vs in summary.members.items()} == {
            c: sorted(v for v, k in expected.items() if k == c) for c in set(expected.values())
        }
        before = expected


def test_string_ids_self_loops_and_repeated_edges():
    summary = Components()
    assert summary.add_edges([("b", "b"), ("d", "c"), ("c", "d")]) == {"b": "b", "d": "c", "c": "c"}
    assert summary.add_edges([("c", "b"), ("b", "c")]) == {"c": "b", "d": "b"}
    assert summary.add_edges([("d", "b"), ("a", "a")]) == {"a": "a"}
    assert summary.add_edges([]) == {}
    assert len(summary) == 4


def test_the_summary_goes_on_the_same_after_a_savepoint_and_a_pickle():
    batches = random_batches(7, vertices=40, batches=12, per_batch=5)
    straight = Components()
    for batch in batches:
        straight.add_edges(batch)
    first = Components()
    for batch in batches[:6]:
        first.add_edges(batch)
    # a savepoint keeps state values as JSON (funke-general-v1); a checkpoint as a pickle
    component, members = decode_value(encode_value(first.component)), decode_value(encode_value(first.members))
    restored = Components(component, members)
    copied = pickle.loads(pickle.dumps(first))
    for batch in batches[6:]:
        assert restored.add_edges(batch) == copied.add_edges(batch)
    assert restored.component == copied.component == straight.component


def test_the_window_function_keeps_the_summary_in_keyed_state_across_windows_and_restores():
    # The job's own window (assigner, late tag, function) on funke's reference window operator.
    from funke.semantics.window_operator import WindowOperator, WindowSpec

    late = fk.OutputTag("late-edges")
    changes = streaming_connected_components(edges(fk.StreamEnvironment()), fk.seconds(1), late=late)
    node = changes.node.input
    spec = WindowSpec(node.assigner, late_data_tag=node.late_tag)

    def feed(op, edge, ts):
        return op.process_element(0, {"src": edge[0], "dst": edge[1]}, ts)

    def rows(records):
        return [
            (r.tag.name, r.value["src"], r.value["dst"])
            if r.tag
            else (r.value.window_end, r.value.value["id"], r.value.value["component"])
            for r in records
        ]

    op = WindowOperator(spec, node.function)
    assert feed(op, (5, 6), 1_500) + feed(op, (3, 4), 200) == []  # windows [1 s, 2 s) and [0 s, 1 s)
    assert rows(op.advance_watermark(1_999)) == [(1_000, 3, 3), (1_000, 4, 3), (2_000, 5, 5), (2_000, 6, 5)]
    assert rows(feed(op, (1, 6), 1_999)) == [("late-edges", 1, 6)]  # its window has fired: late, no change
    restored = WindowOperator(spec, node.function)
    restored.restore(pickle.loads(pickle.dumps(op.snapshot())))
    assert feed(restored, (4, 6), 2_100) + feed(restored, (0, 9), 2_200) == []
    assert rows(restored.advance_watermark(2_999)) == [(3_000, 5, 3), (3_000, 6, 3), (3_000, 0, 0), (3_000, 9, 0)]


def edges(env, schema="src bigint, dst bigint, ts bigint", watermarks=WM):
    return env.from_collection([], schema, watermarks=watermarks)


def test_the_changes_have_window_end_id_component_and_late_edges_keep_their_columns():
    env = fk.StreamEnvironment()
    late = fk.OutputTag("late-edges")
    stream = edges(env, "src string, dst string, ts bigint, weight double")
    changes = streaming_connected_components(stream, fk.seconds(10), late=late, uid="components")
    assert str(changes.schema) == "window_end timestamp, id string, component string"
    assert str(changes.get_side_output(late).schema) == "src string, dst string, ts timestamp, weight double"
    window = changes.node.input
    assert window.uid == "components" and window.assigner == TumblingEventTimeWindows.of(fk.seconds(10))
    with pytest.raises(
        PlanError,
        match=r"get_side_output\('other'\): streaming_connected_components sends late edges to the tag given as late= \('late-edges'\)",
    ):
        changes.get_side_output(fk.OutputTag("other"))
    named = changes.name("components out").uid("components-out")
    assert named.node.uid == "components-out" and str(named.get_side_output(late).schema) == str(
        changes.get_side_output(late).schema
    )
    no_tag = streaming_connected_components(stream, TumblingEventTimeWindows.of(fk.seconds(10), fk.seconds(2)))
    assert no_tag.node.input.assigner.offset_ms == 2_000
    with pytest.raises(PlanError, match=r"get_side_output\('late-edges'\): .* \(none: pass late=OutputTag\(...\)\)"):
        no_tag.get_side_output(late)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda env: edges(env, "src bigint, to bigint, ts bigint"),
            SchemaError,
            r"the edges need a column 'dst'; available columns: src, to, ts",
        ),
        (
            lambda env: edges(env, "src bigint, dst int, ts bigint"),
            SchemaError,
            r"src and dst must have one type, got src bigint, dst int: cast them",
        ),
        (
            lambda env: edges(env, "src bigint, dst bigint, edge_ends int, ts bigint"),
            SchemaError,
            r"column 'edge_ends' is the operator's own key; rename yours",
        ),
        (lambda env: edges(env, watermarks=None), PlanError, r"needs event time on the edges: pass watermarks= to from_source"),
    ],
)
def test_edge_streams_it_cannot_run_on_are_refused(make, error, message):
    with pytest.raises(error, match=message):
        streaming_connected_components(make(fk.StreamEnvironment()), fk.seconds(1))


def test_only_event_time_tumbling_windows():
    stream = edges(fk.StreamEnvironment())
    with pytest.raises(
        PlanError, match=r"runs on event-time tumbling windows, got SlidingEventTimeWindows\(size=10000ms, slide=5000ms\)"
    ):
        streaming_connected_components(stream, SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5)))
    with pytest.raises(PlanError, match=r"window= window size must be positive"):
        streaming_connected_components(stream, 0)
    with pytest.raises(PlanError, match=r"late= takes an OutputTag, got 'late'"):
        streaming_connected_components(stream, fk.seconds(1), late="late")


def test_a_graph_refuses_an_unbounded_stream_before_running_anything():
    env = fk.StreamEnvironment()
    endless = env.from_source(fk.sources.generator({"src": "i", "dst": "i + 1"}, schema="src bigint, dst bigint"))
    with pytest.raises(
        GraphError, match=r"a graph's edges must be a bounded stream, but it reads generator\(unbounded\), which never ends"
    ):
        Graph.from_edges(endless)
    with pytest.raises(SchemaError, match=r"the edges need a column 'dst'; available columns: src, to"):
        Graph.from_edges(env.from_collection([], "src bigint, to bigint"))
