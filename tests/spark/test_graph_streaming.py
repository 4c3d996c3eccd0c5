"""funke.graph.streaming_connected_components on Spark: random edge streams, streaming (a TestStream with
out-of-order and late edges) and bounded (a collection with edges that have a null end). After each
window, the components replayed from the emitted changes must be networkx's components of all edges
before the window's end; late edges go to the side output, edges with a null end to the dead letters."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import networkx as nx
import pytest

import funke as fk
from funke.graph import streaming_connected_components
from funke.testing import TestStream, run

pytestmark = pytest.mark.spark

WINDOW = 1_000


def ms(t: datetime) -> int:
    return round(t.replace(tzinfo=UTC).timestamp() * 1000)


def networkx_labels(edges) -> dict:
    g = nx.Graph()
    g.add_edges_from(edges)
    return {v: min(part) for part in nx.connected_components(g) for v in part}


def check_against_networkx(rows, edges):
    """``rows``: the emitted changes; ``edges``: (src, dst, ts) of every edge the components should hold.

    Replays the changes window by window: each row changes its vertex's component (one row per vertex
    and window), only windows that had edges emit, and after every window that had edges the replayed
    components are networkx's of the edges before its end."""
    by_window: dict[int, dict] = {}
    for r in rows:
        changes = by_window.setdefault(ms(r["window_end"]), {})
        assert r["id"] not in changes, f"vertex {r['id']} twice in window {ms(r['window_end'])}"
        changes[r["id"]] = r["component"]
    ends = sorted({(ts // WINDOW + 1) * WINDOW for _, _, ts in edges})
    assert set(by_window) <= set(ends)
    replayed: dict = {}
    for end in ends:
        for vertex, component in by_window.get(end, {}).items():
            assert replayed.get(vertex) != component, f"window {end}: vertex {vertex} did not change"
            replayed[vertex] = component
        assert replayed == networkx_labels([(a, b) for a, b, ts in edges if ts < end]), f"after the window ending at {end}"
    return by_window


def test_a_streaming_run_with_out_of_order_and_late_edges(env):
    rng = random.Random(18)
    vertices = 40

    def edge(lowest, highest):
        return rng.randrange(vertices), rng.randrange(vertices), rng.randrange(lowest, highest)

    # "e<k>": window k's edges, two of window k+1's and two late ones (before the last window end passed),
    # shuffled; "w<k>": the watermark to window k's end. Windows 1 and 2 fire in one micro-batch, 3 and 4
    # at the end of input.
    plan = ["e0", "w0", "e1", "e2", "w2", "e3"]
    script = TestStream(schema="src bigint, dst bigint")
    kept, late, passed, fired_at = [], [], 0, {}
    for step in plan:
        k = int(step[1:])
        if step[0] == "w":
            passed = (k + 1) * WINDOW
            script.advance_watermark_to(passed - 1)
            fired_at[passed] = len(script.steps) - 1
            continue
        start = k * WINDOW
        own = [edge(start, start + WINDOW) for _ in range(6)] + [edge(start + WINDOW, start + 2 * WINDOW) for _ in range(2)]
        overdue = [edge(0, passed) for _ in range(2)] if passed else []
        arriving = own + overdue
        rng.shuffle(arriving)
        script.add_elements([(a, b) for a, b, _ in arriving], timestamps=[ts for _, _, ts in arriving])
        kept += own
        late += overdue
    tag = fk.OutputTag("late-edges")
    changes = streaming_connected_components(env.from_source(script), fk.milliseconds(WINDOW), late=tag, uid="components")
    late_edges = changes.get_side_output(tag)
    result = run(env, changes, late_edges)
    by_window = check_against_networkx(result[changes], kept)
    assert sorted((r["src"], r["dst"], ms(r["event_time"])) for r in result[late_edges]) == sorted(late)
    # a window's changes leave in the micro-batch whose watermark passes its end (or at the end of input)
    fired = {end: min((i for e, i in fired_at.items() if e >= end), default=len(script.steps)) for end in by_window}
    assert {ms(r["window_end"]): r["_step"] for r in result[changes]} == fired
    assert fired == {1_000: 1, 2_000: 4, 3_000: 4, 4_000: 6}  # (window 5's two edges join nothing new)


def test_a_bounded_run_and_edges_with_a_null_end_go_to_the_dead_letters(spark, tmp_path):
    rng = random.Random(3)
    edges = [(rng.randrange(60), rng.randrange(60), rng.randrange(10 * WINDOW)) for _ in range(80)]
    bad = [(None, 7, 1_500), (8, None, 2_500)]
    rows = [{"src": a, "dst": b, "ts": ts} for a, b, ts in rng.sample(edges + bad, len(edges) + len(bad))]
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="graph-bounded", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    watermarks = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts", unit="ms")
    stream = env.from_collection(rows, "src bigint, dst bigint, ts bigint", watermarks=watermarks)
    changes = streaming_connected_components(stream, fk.milliseconds(WINDOW))
    result = run(env, changes, bounded=True)
    by_window = check_against_networkx(result[changes], edges)
    assert len(by_window) == 10
    assert sorted((r["reason"], r["raw"]) for r in dead.rows) == [
        ("null key column(s): edge_ends", '{"dst":7,"ts":"1970-01-01T00:00:01.500Z"}'),
        ("null key column(s): edge_ends", '{"src":8,"ts":"1970-01-01T00:00:02.500Z"}'),
    ]
