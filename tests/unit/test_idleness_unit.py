"""with_idleness is never accepted and then ignored: where it changes nothing (one input) explain()
says so; where several watermarked inputs meet with idleness (a window over a union, an interval join) the
operator runs on the general path, on a watermark funke computes with Flink's rule."""

from __future__ import annotations

import funke as fk
from funke.plan.capabilities import check_idleness, place
from funke.plan.facts import analyse
from funke.windows import TumblingEventTimeWindows

SCHEMA = "k string, ts timestamp"


def _wm(idle: bool) -> fk.WatermarkStrategy:
    s = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    return s.with_idleness(fk.seconds(30)) if idle else s


def test_one_input_with_idleness_is_explained():
    env = fk.StreamEnvironment(app="idle")
    env.from_collection([], SCHEMA, watermarks=_wm(True)).print()
    check_idleness(analyse(env.sinks))
    assert "idleness 30000 ms: no effect with this one input, as in Flink" in env.explain()


def test_a_window_over_a_union_with_an_idle_input_runs_on_funke_s_clock():
    env = fk.StreamEnvironment(app="idle")
    a = env.from_collection([], SCHEMA, watermarks=_wm(True))
    b = env.from_collection([("x", None)], SCHEMA, watermarks=_wm(False))
    counts = a.union(b).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()
    counts.print()
    check_idleness(analyse(env.sinks))
    where = place(counts.node)
    assert where.path == "general"
    assert "with_idleness(30000 ms) on watermark, one of 2 watermarked inputs meeting here" in where.why
    assert "funke computes this operator's watermark on the driver" in env.explain()
    # without idleness the same window is Spark's own
    plain = b.union(env.from_collection([], SCHEMA, watermarks=_wm(False))).key_by("k")
    assert place(plain.window(TumblingEventTimeWindows.of(fk.seconds(10))).count().node).path == "native"


def test_an_interval_join_with_an_idle_input_runs_on_the_general_path_even_when_native_is_asked_for():
    env = fk.StreamEnvironment(app="idle")
    a = env.from_collection([], SCHEMA, watermarks=_wm(True)).key_by("k")
    b = env.from_collection([], SCHEMA, watermarks=_wm(False)).key_by("k")
    joined = a.interval_join(b).between(fk.seconds(-1), fk.seconds(1)).on_path("native").select("left.k", rt="right.ts")
    joined.print()
    check_idleness(analyse(env.sinks))
    where = place(joined.node)
    assert where.path == "general"
    assert where.why.startswith("on_path('native') asked for Spark's join, but with_idleness(30000 ms)")
    both = env.from_collection([], SCHEMA, watermarks=_wm(False)).key_by("k")
    native = both.interval_join(b).between(fk.seconds(-1), fk.seconds(1)).on_path("native").select("left.k")
    assert place(native.node).path == "native"


def test_two_inputs_without_idleness_pass():
    env = fk.StreamEnvironment(app="idle")
    a = env.from_collection([], SCHEMA, watermarks=_wm(False))
    b = env.from_collection([("x", None)], SCHEMA, watermarks=_wm(False))
    a.union(b).print()
    check_idleness(analyse(env.sinks))
