"""CEP on Spark: patterns per key on the general path equal the automaton run by hand, streaming and bounded;
late elements and timed-out partial matches go to their side outputs, exactly."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import funke as fk
from funke.cep import CEP, AfterMatchSkipStrategy, Pattern, PatternProcessFunction, TimedOutPartialMatchHandler
from funke.functions import OutputTag
from funke.semantics.cep import NFA
from funke.semantics.time import MAX_WATERMARK
from funke.testing import TestStream, assert_rows, run

from .helpers import ts

pytestmark = pytest.mark.spark


def is_a(e):
    return e["kind"] == "a"


def is_b(e):
    return e["kind"] == "b"


def is_c(e):
    return e["kind"] == "c"


def is_d(e):
    return e["kind"] == "d"


def is_b_or_c(e):
    return e["kind"] in ("b", "c")


#: Contiguity (next, followed_by, followed_by_any), quantifiers (one_or_more, times, optional), a skip
#: strategy, negation and within time-outs: each pattern one operator of the same job.
A_B_LOOP_C = Pattern.begin("a").where(is_a).followed_by("b").where(is_b).one_or_more().followed_by("c").where(is_c)
A_TWO_B_OR_C = (
    Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event()).where(is_a).followed_by_any("bc").where(is_b_or_c).times(2)
)
PATTERNS = {
    "loop": A_B_LOOP_C.within(fk.seconds(3)),
    "skip": A_TWO_B_OR_C.within(fk.seconds(2)),
    "not": Pattern.begin("a").where(is_a).not_followed_by("c").where(is_c).within(fk.milliseconds(1_500)),
    "strict": Pattern.begin("a").where(is_a).next("b").where(is_b).optional().next("d").where(is_d),
}
MATCH = "k string, pattern string, match string"
TIMED_OUT = "k string, pattern string, match string, at bigint"
BOUND_MS = 1_000


def labels(match: dict, field: str = "label") -> str:
    return " ".join(f"{name}:{e[field]}" for name, events in match.items() for e in events)


class Found(PatternProcessFunction, TimedOutPartialMatchHandler):
    """Each match as a row; each timed-out partial match as a row of ``tag``; events named by ``field``."""

    def __init__(self, name: str, tag: OutputTag, field: str = "label") -> None:
        self.name, self.tag, self.field = name, tag, field

    def process_match(self, match, ctx):
        yield {"k": ctx.get_current_key(), "pattern": self.name, "match": labels(match, self.field)}

    def process_timed_out_match(self, match, ctx):
        row = {"k": ctx.get_current_key(), "pattern": self.name, "match": labels(match, self.field), "at": ctx.timestamp()}
        ctx.output(self.tag, row)


def random_stream(seed: int, n: int, keys: int) -> list[dict]:
    """Events out of order by up to ``BOUND_MS`` behind the largest before them: with that bound, none is late."""
    rnd = random.Random(seed)
    rows, t = [], 1_000_000
    for i in range(n):
        t += rnd.randrange(0, 400)
        rows.append(
            {"k": f"k{rnd.randrange(keys)}", "kind": rnd.choice("aabcd"), "label": f"e{i}", "t": t - rnd.randrange(0, BOUND_MS)}
        )
    return rows


def reference(rows: list[dict]) -> tuple[Counter, Counter]:
    """Per key and pattern, the key's events in (timestamp, arrival) order through a fresh automaton, then time to +infinity."""
    matches: Counter = Counter()
    timed_out: Counter = Counter()
    for name, pattern in PATTERNS.items():
        nfa = NFA.compile(pattern)
        for key in sorted({r["k"] for r in rows}):
            state = nfa.initial_state()
            mine = sorted((r["t"], i, r) for i, r in enumerate(rows) if r["k"] == key)
            for out in [nfa.process(state, r, t) for t, _, r in mine] + [nfa.advance_time(state, MAX_WATERMARK)]:
                matches.update((key, name, labels(m)) for m in out.matches)
                timed_out.update((key, name, labels(m), at) for m, at in out.timed_out)
    return matches, timed_out


def spark_run(spark, checkpoint_dir: str, rows: list[dict], *, bounded: bool) -> tuple[Counter, Counter]:
    env = fk.StreamEnvironment(app="cep", spark=spark, checkpoint_dir=checkpoint_dir)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(BOUND_MS)).with_timestamp_assigner("t", unit="ms")
    keyed = env.from_collection(rows, "k string, kind string, label string, t bigint", rows_per_batch=60, watermarks=wm).key_by(
        "k"
    )
    sinks = []
    for name, pattern in PATTERNS.items():
        tag = OutputTag(f"timed-out-{name}", TIMED_OUT)
        found = CEP.pattern(keyed, pattern).process(Found(name, tag), output_schema=MATCH, uid=f"cep-{name}")
        sinks.append((found.collect(), found.get_side_output(tag).collect()))
    job = env.execute(bounded=bounded).wait(300)
    assert job.done, job.metrics()
    assert job.metrics()["late_rows_dropped"] == 0
    matches = Counter((r["k"], r["pattern"], r["match"]) for s, _ in sinks for r in s.rows)
    timed_out = Counter((r["k"], r["pattern"], r["match"], r["at"]) for _, s in sinks for r in s.rows)
    return matches, timed_out


def test_spark_matches_equal_the_automaton_per_key_in_timestamp_order_streaming_and_bounded(spark, tmp_path):
    rows = random_stream(seed=17, n=360, keys=6)
    expected = reference(rows)
    # the stream exercises every pattern, and arrival order is not timestamp order
    assert {p for _, p, _ in expected[0]} == set(PATTERNS) and {p for _, p, _, _ in expected[1]} == {"loop", "skip"}
    assert [r["t"] for r in rows] != sorted(r["t"] for r in rows)
    assert spark_run(spark, str(tmp_path / "s"), rows, bounded=False) == expected
    assert spark_run(spark, str(tmp_path / "b"), rows, bounded=True) == expected


def test_late_elements_and_timed_out_partial_matches_go_to_their_side_outputs_in_event_and_processing_time(env):
    script = (
        TestStream(schema="key string, kind string, label string")
        .add_elements(
            [("k", "a", "a1"), ("k", "b", "b1"), ("j", "a", "a2"), ("j", "b", "b2"), ("j", "b", "b3")],
            timestamps=[1_000, 2_000, 1_000, 2_000, 3_000],
        )  # 0 (processing time 0)
        .advance_watermark_to(10_999)  # 1: j's match; k's [a1 b1] waits for a second b until 1 000 + 10 000
        .add_elements([("k", "b", "b4"), ("j", "a", "a5")], timestamps=[10_000, 10_999])  # 2: both late (<= 10 999)
        .advance_watermark_to(11_000)  # 3: k's partial match times out
        .advance_processing_time(fk.seconds(10))  # 4
    )  # (the end of the script moves the watermark to +infinity)
    late, timed_out = OutputTag("late"), OutputTag("timed-out", "key string, a string, b string, at bigint")
    pattern = Pattern.begin("a").where(is_a).followed_by("b").where(is_b).times(2).within(fk.seconds(10))
    keyed = env.from_source(script).key_by("key")

    def both(m):
        return {"key": m["a"][0]["key"], "a": m["a"][0]["label"], "b": " ".join(e["label"] for e in m.get("b", []))}

    def partial(m, at):
        return {**both(m), "at": at}

    schema = "key string, a string, b string"
    matches = CEP.pattern(keyed, pattern).side_output_late_data(late).select(timed_out, partial, both, output_schema=schema)
    dropping = CEP.pattern(keyed, pattern).select(both, output_schema=schema)  # no late tag: dropped and counted
    pt_timed_out = OutputTag("pt-timed-out", "key string, a string, b string, at bigint")
    arrival = CEP.pattern(keyed, pattern).in_processing_time().select(pt_timed_out, partial, both, output_schema=schema)
    late_out, timed_out_out, pt_timed_out_out = (
        matches.get_side_output(late),
        matches.get_side_output(timed_out),
        arrival.get_side_output(pt_timed_out),
    )
    result = run(env, matches, late_out, timed_out_out, dropping, arrival, pt_timed_out_out)

    # event time: the watermark decides; late elements go aside (or are counted)
    assert_rows(result[matches], [{"key": "j", "a": "a2", "b": "b2 b3", "_step": 1}], ignore=())
    assert_rows(result[timed_out_out], [{"key": "k", "a": "a1", "b": "b1", "at": 11_000, "_step": 3}], ignore=())
    late_rows = [(r["key"], r["label"], r["event_time"], r["_step"]) for r in result[late_out]]
    assert sorted(late_rows) == [("j", "a5", ts(10_999), 2), ("k", "b4", ts(10_000), 2)]  # the input's rows
    assert_rows(result[dropping], [{"key": "j", "a": "a2", "b": "b2 b3"}])
    assert result.metrics["late_rows_dropped"] == 2  # the dropping operator's two
    # processing time: elements in arrival order as they come, nothing late; a5 (at processing time 0) times out at 10 s
    assert_rows(
        result[arrival],
        [{"key": "j", "a": "a2", "b": "b2 b3", "_step": 0}, {"key": "k", "a": "a1", "b": "b1 b4", "_step": 2}],
        ignore=(),
    )
    assert_rows(result[pt_timed_out_out], [{"key": "j", "a": "a5", "b": "", "at": 10_000, "_step": 4}], ignore=())


def kinds_in_order(a, b):
    """Flink's EventComparator: of two events with one timestamp, "a" before "b"; the same kind keeps arrival order."""
    return (a["kind"] > b["kind"]) - (a["kind"] < b["kind"])


def test_a_comparator_orders_the_events_of_one_timestamp_on_spark(env):
    script = (
        TestStream(schema="key string, kind string, label string")
        .add_elements(
            [("k", "b", "b1"), ("k", "a", "a2"), ("k", "a", "a1"), ("j", "b", "b3"), ("j", "a", "a3")],
            timestamps=[1_000, 1_000, 1_000, 2_000, 2_001],
        )  # 0 (processing time 0)
        .advance_watermark_to(5_000)  # 1
        .advance_processing_time(fk.seconds(1))  # 2
    )
    pattern = Pattern.begin("a").where(is_a).next("b").where(is_b)
    keyed = env.from_source(script).key_by("key")

    def pair(m):
        return {"key": m["a"][0]["key"], "a": m["a"][0]["label"], "b": m["b"][0]["label"]}

    schema = "key string, a string, b string"
    ordered = CEP.pattern(keyed, pattern, comparator=kinds_in_order).select(pair, output_schema=schema)
    arrival = CEP.pattern(keyed, pattern).select(pair, output_schema=schema)
    arriving = CEP.pattern(keyed, pattern, comparator=kinds_in_order).in_processing_time().select(pair, output_schema=schema)
    result = run(env, ordered, arrival, arriving)

    # k @1000: b1 a2 a1 -> a2 a1 b1 (a2, a1 compare equal: arrival order); j's b3 @2000 comes before a3 @2001 whatever the kind
    assert_rows(result[ordered], [{"key": "k", "a": "a1", "b": "b1", "_step": 1}], ignore=())
    assert_rows(result[arrival], [])
    # processing time: the step's events of a key share its millisecond, so the comparator orders all of them
    # (j's too); they wait for the processing-time timer at that millisecond, which fires with the next step
    assert_rows(
        result[arriving],
        [{"key": "j", "a": "a3", "b": "b3", "_step": 1}, {"key": "k", "a": "a1", "b": "b1", "_step": 1}],
        ignore=(),
    )
