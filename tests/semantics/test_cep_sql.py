"""SQL conditions in CEP patterns, and dropping the events no condition accepts (funke.cep.sql).

The rule under test: when ``prefilter(pattern)`` gives a filter, the operator fed only the events
the filter keeps gives the same matches and time-outs as the operator fed every event, under the
same watermarks. The property test builds random patterns of the shapes the rule admits.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import funke as fk
from funke.cep import CEP, Pattern, PatternProcessFunction, TimedOutPartialMatchHandler
from funke.cep.sql import SqlCondition, _compile, bind, drops_nothing_a_match_needs, prefilter
from funke.errors import PlanError
from funke.plan.types import Schema
from funke.semantics.cep import MalformedPatternError
from funke.semantics.cep_operator import CepOperator
from funke.semantics.functions import OutputTag
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.time import MAX_WATERMARK

SCHEMA = Schema.of("id string, v int")
TIMED_OUT = OutputTag("timed-out")


class Ids(PatternProcessFunction, TimedOutPartialMatchHandler):
    def process_match(self, match, ctx):
        yield ("match", ctx.get_current_key(), tuple((n, tuple(e["id"] for e in es)) for n, es in match.items()))

    def process_timed_out_match(self, match, ctx):
        ids = tuple((n, tuple(e["id"] for e in es)) for n, es in match.items())
        ctx.output(TIMED_OUT, ("timed-out", ctx.get_current_key(), ids, ctx.timestamp()))


def test_a_sql_condition_is_true_only_when_the_expression_is_true():
    c = SqlCondition("v BETWEEN 2 AND 4 OR id = 'x'").bound(SCHEMA)
    assert [c.filter({"id": "a", "v": v}) for v in (1, 2, 4, 5, None)] == [False, True, True, False, False]
    assert c.filter({"id": "x", "v": None}) is True  # NULL OR TRUE is TRUE
    assert SqlCondition("NOT (v > 3)").bound(SCHEMA).filter({"id": "a", "v": None}) is False  # NOT NULL is NULL


def test_sql_conditions_are_checked_against_the_stream_while_planning():
    env = fk.StreamEnvironment(app="sql-cond")
    keyed = env.from_collection([("k", 1)], "id string, v int").key_by("id")
    with pytest.raises(PlanError, match="amount"):
        CEP.pattern(keyed, Pattern.begin("a").where("amount < 10")).select(lambda m: m, output_schema="id string")
    with pytest.raises(PlanError, match="a.v"):
        bind(Pattern.begin("a").where("a.v < 10"), SCHEMA)
    with pytest.raises(PlanError, match="not bound"):
        SqlCondition("v < 1").filter({"v": 0})


def test_explain_shows_the_native_filter_and_only_when_it_may_drop_events():
    env = fk.StreamEnvironment(app="sql-cond")
    wm = fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("t", unit="ms")
    keyed = env.from_collection([("k", 1, 0)], "id string, v int, t bigint", watermarks=wm).key_by("id")
    relaxed = Pattern.begin("a").where("v = 1").followed_by("b").where("v = 2")
    CEP.pattern(keyed, relaxed).select(lambda m: {"id": "x"}, output_schema="id string").collect()
    CEP.pattern(keyed, relaxed).in_processing_time().select(lambda m: {"id": "y"}, output_schema="id string").collect()
    plan = env.explain()
    assert plan.count("filter expr('(v = 1) OR (v = 2)')") == 1, plan


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (Pattern.begin("a").where("v = 1").next("b").where("v = 2"), "strict contiguity"),
        (Pattern.begin("a").where("v = 1").followed_by("b").where("v = 2").one_or_more().consecutive(), "consecutive"),
        (Pattern.begin("a").where("v = 1").followed_by("b").where(lambda e: e["v"] == 2), "is Python"),
        (Pattern.begin("a").where("v = 1").followed_by("b"), "no condition"),
        (Pattern.begin("a").where("v = 1").one_or_more().greedy().followed_by("b").where("v = 2"), "greedy"),
        (
            Pattern.begin("a").where("v = 1").not_followed_by("b").where("v = 2").followed_by("c").where("v = 3"),
            "not_followed_by",
        ),
        (Pattern.begin(Pattern.begin("a").where("v = 1")).followed_by("b").where("v = 2"), "group"),
    ],
)
def test_patterns_where_every_event_counts_get_no_filter(pattern, reason):
    assert reason in drops_nothing_a_match_needs(pattern)
    assert prefilter(pattern) is None


def test_until_and_or_conditions_are_kept_by_the_filter():
    p = Pattern.begin("a").where("v = 1").or_("v = 9").followed_by("b").where("v = 2").one_or_more().until("v = 3")
    assert prefilter(p) == "((v = 1) OR (v = 9)) OR (v = 2) OR (v = 3)"


FAST = [
    "v < 3",
    "v >= 2 AND v < 5",
    "NOT (v > 3) OR id = 'e1'",
    "v BETWEEN 1 AND 4",
    "v IN (1, 2, 7)",
    "id IS NULL OR v IS NULL",
    "-v + 1 <> -2",
    "v * 2 > w - 1.5",
    "NOT (v = 1 AND w = 2.0)",
    "(v < 2 OR w > 3) AND NOT id > 'e5'",
]


@settings(max_examples=200, deadline=None)
@given(
    sql=st.sampled_from(FAST),
    event=st.fixed_dictionaries(
        {
            "id": st.one_of(st.none(), st.sampled_from(["e1", "e5", "e9"])),
            "v": st.one_of(st.none(), st.integers(-3, 8)),
            "w": st.one_of(st.none(), st.floats(-4, 4, allow_nan=False)),
        }
    ),
)
def test_the_compiled_conditions_agree_with_the_sql_evaluator_on_nulls_and_values(sql, event):
    schema = Schema.of("id string, v int, w double")
    fast, closures = _compile(sql, schema), _compile(sql, schema, fast=False)
    assert fast.__code__.co_filename == "<sql condition>"  # (the fast path took it)
    assert fast(event) is closures(event)


# -- the rule, on random patterns


def _stage(p, draw, name):
    values = draw(st.lists(st.integers(0, 5), min_size=1, max_size=2, unique=True))
    contiguity = draw(st.sampled_from(["followed_by", "followed_by_any"])) if p is not None else None
    p = Pattern.begin(name) if p is None else getattr(p, contiguity)(name)
    p = p.where(f"v IN ({', '.join(map(str, values))})")
    quantifier = draw(st.sampled_from(["single", "one_or_more", "times", "optional", "times_or_more"]))
    if quantifier == "one_or_more":
        p = p.one_or_more()
    elif quantifier == "times":
        p = p.times(1, draw(st.integers(1, 3)))
    elif quantifier == "times_or_more":
        p = p.times_or_more(2)
    elif quantifier == "optional":
        p = p.optional()
    if quantifier in ("one_or_more", "times", "times_or_more"):
        if draw(st.booleans()):
            p = p.allow_combinations()
        if quantifier != "times" and draw(st.booleans()):
            p = p.until(f"v = {draw(st.integers(0, 6))}")
    return p


@st.composite
def patterns(draw):
    p, n = None, draw(st.integers(2, 4))
    try:
        for i in range(n):
            p = _stage(p, draw, "abcd"[i])
        if draw(st.booleans()):
            p = p.within(draw(st.integers(3, 30)))
        return p.validate()
    except MalformedPatternError:
        assume(False)


def run(pattern, events, schedule):
    op = KeyedProcessOperator(CepOperator(pattern, Ids()))
    got = []
    for step in schedule:
        if step[0] == "element":
            _, k, e, t = step
            if e in events:
                got += op.process_element(k, events[e], t)
        else:
            got += op.advance_watermark(step[1])
    got += op.advance_watermark(MAX_WATERMARK)
    return sorted(r.value for r in got)


@settings(max_examples=150, deadline=None)
@given(pattern=patterns(), seed=st.integers(0, 10**6))
def test_dropping_the_events_no_condition_accepts_changes_no_match_and_no_time_out(pattern, seed):
    pattern = bind(pattern, SCHEMA)
    kept = prefilter(pattern)
    assert kept is not None, drops_nothing_a_match_needs(pattern)
    keep = SqlCondition(kept, SCHEMA)
    rnd = random.Random(seed)
    events, schedule, t, watermark = {}, [], 0, -1
    for i in range(50):
        t += rnd.randrange(0, 4)
        ts = max(watermark + 1, t - rnd.randrange(0, 5))
        events[f"e{i}"] = {"id": f"e{i}", "v": rnd.choice([0, 1, 2, 3, 4, 5, 6, 7, None])}
        schedule.append(("element", rnd.choice("xy"), f"e{i}", ts))
        if rnd.random() < 0.3:
            watermark = max(watermark, t - 5)
            schedule.append(("watermark", watermark))
    every = run(pattern, events, schedule)
    dropped = {k for k, e in events.items() if not keep.filter(e)}
    kept_only = run(pattern, {k: e for k, e in events.items() if k not in dropped}, schedule)
    assert [r for r in kept_only if r[0] == "match"] == [r for r in every if r[0] == "match"]
    # the same partial matches time out, each at first + within; how many times each is reported is
    # not the same (see test_time_outs_are_reported_once_per_run...), so no filter when time-outs are handled
    assert {r for r in kept_only if r[0] == "timed-out"} == {r for r in every if r[0] == "timed-out"}
