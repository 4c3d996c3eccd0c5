"""The plan's facts (``funke.plan.facts``), worked out in one pass, equal what each question asked of the
plan on its own gives (the definitions the compiler read before there was one pass). No Spark runs."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.functions import KeyedProcessFunction, ProcessJoinFunction
from funke.plan import nodes
from funke.plan.capabilities import GENERAL, idle_inputs, place, watermarks_meeting
from funke.plan.facts import analyse
from funke.plan.joins import IntervalJoin
from funke.windows import SlidingEventTimeWindows, TumblingEventTimeWindows

T = dt.datetime(2024, 1, 1)
SCHEMA = "k string, v bigint, ts timestamp"
LATE = fk.OutputTag("late", SCHEMA)


def _wm(bound_s: int = 5, idle: bool = False) -> fk.WatermarkStrategy:
    s = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(bound_s)).with_timestamp_assigner("ts")
    return s.with_idleness(fk.seconds(30)) if idle else s


class Pairs(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield {"k": left["k"], "v": left["v"], "ts": left["ts"]}


class Tagging(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.output(LATE, value)
        yield value


def _source(env: fk.StreamEnvironment, bound_s: int = 5, idle: bool = False) -> fk.DataStream:
    return env.from_collection([{"k": "a", "v": 1, "ts": T}], SCHEMA, watermarks=_wm(bound_s, idle))


def _plans() -> dict[str, fk.StreamEnvironment]:
    """Plans with what the facts distinguish: unions, two-input operators with their own clock, a window
    over idle inputs, side outputs read, one operator read by several sinks, sinks reading different sources."""
    plans = {}
    env = fk.StreamEnvironment(app="facts")
    a, b, c = _source(env), _source(env, 3, idle=True), _source(env, 1)
    u = a.union(b)
    u.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    joined = a.key_by("k").interval_join(c.key_by("k")).between(-1000, 1000).process(Pairs(), output_schema=SCHEMA)
    joined.assign_timestamps_and_watermarks(_wm(2)).key_by("v").window(SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5))).count().collect()
    tagged = c.key_by("k").process(Tagging(), output_schema=SCHEMA)
    tagged.collect()
    tagged.get_side_output(LATE).collect()
    plans["union, idle input, general interval join, side output"] = env
    env = fk.StreamEnvironment(app="facts")
    a, b, c = _source(env), _source(env, 2), _source(env, 4)
    c.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    b.select("k", "ts").collect()
    a.key_by("k").interval_join(b.key_by("k")).between(0, 1).on_path("native").select("left.v").collect()
    plans["native interval join beside a window of another source"] = env
    return plans


@pytest.mark.parametrize("name", list(_plans()))
def test_each_fact_equals_its_definition_over_the_plan(name):
    env = _plans()[name]
    sinks = tuple(env.sinks)
    facts = analyse(sinks)
    assert list(facts.nodes) == nodes.walk(sinks)
    for node in facts.nodes:
        assert facts.place(node) == place(node), node.where()
        assert facts.meeting(node) == watermarks_meeting(node), node.where()
        assert idle_inputs(node, facts.meeting) == idle_inputs(node), node.where()
        upstream = nodes.walk([node])
        assert list(facts.watermarks(node)) == [x for x in upstream if isinstance(x, nodes.Watermark)], node.where()
        assert set(map(id, facts.sources(node))) == {id(x) for x in upstream if isinstance(x, nodes.Source)}
        readers = [s for s in sinks if any(x is node for x in nodes.walk([s]))]
        assert list(facts.readers(node)) == readers, node.where()
        marks = {id(x) for s in readers for x in nodes.walk([s]) if isinstance(x, nodes.Watermark)}
        assert facts.query_watermarks(node) == marks, node.where()
        read = {x.tag.name for x in facts.nodes if isinstance(x, nodes.SideOutput) and x.input is node}
        assert {t.name for t in facts.side_tags.get(id(node), ())} == read
    assert analyse(sinks, streaming=False).query_watermarks(sinks[0]) == set()  # (a bounded run has no watermarks)


def test_the_plans_cover_what_the_facts_distinguish():
    """(So that the test above cannot pass on plans too plain to tell a wrong fact from a right one.)"""
    first, second = (analyse(env.sinks) for env in _plans().values())
    assert any(facts_idle := [n for n in first.nodes if idle_inputs(n, first.meeting)]), facts_idle
    general_join = next(n for n in first.nodes if isinstance(n, IntervalJoin) and first.place(n).path == GENERAL)
    assert len(first.meeting(general_join)) == 2  # (and what is downstream of it meets none of those: its own clock)
    assert all(not set(map(id, first.meeting(n))) & set(map(id, first.meeting(general_join))) for n in first.nodes if general_join in n.inputs)
    assert any(len(first.readers(n)) == 2 for n in first.nodes if isinstance(n, nodes.KeyedProcess))
    assert first.side_tags and not first.join_watermarks
    assert len(second.join_watermarks) == 2


def test_a_window_reading_a_native_interval_join_s_watermark_is_refused_in_a_stream_only():
    env = fk.StreamEnvironment(app="facts")
    a, b = _source(env), _source(env, 2)
    a.key_by("k").interval_join(b.key_by("k")).between(0, 1).on_path("native").select("left.v").collect()
    a.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    with pytest.raises(fk.UnsupportedError, match="reads the same watermark as a native interval join"):
        analyse(env.sinks)
    assert analyse(env.sinks, streaming=False).join_watermarks == frozenset()
