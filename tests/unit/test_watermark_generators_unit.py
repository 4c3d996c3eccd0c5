"""User watermark generators without Spark: the semantics, one micro-batch through the Spark
adapter's pandas step, placement, and the plans funke refuses."""

from __future__ import annotations

import datetime as dt
import pickle

import pandas as pd
import pytest

import funke as fk
from funke.functions import JoinFunction
from funke.plan.capabilities import GENERAL, NATIVE, place
from funke.plan.facts import analyse
from funke.plan.generators import check_generators
from funke.semantics.generators import GeneratorRun, make_generator
from funke.semantics.time import MAX_WATERMARK, MIN_WATERMARK
from funke.testing import TestStream
from funke.windows import TumblingEventTimeWindows

T = dt.datetime(2024, 1, 1)


class Punctuated(fk.WatermarkGenerator):
    def on_event(self, event, event_timestamp, output):
        if event.get("marker"):
            output.emit_watermark(fk.Watermark(event_timestamp))


class Periodic(fk.WatermarkGenerator):
    """Remembers what it saw, and emits the largest timestamp so far minus 100 on each periodic emit."""

    def __init__(self):
        self.seen, self.emits, self.top = [], 0, None

    def on_event(self, event, event_timestamp, output):
        self.seen.append((event, event_timestamp))
        self.top = event_timestamp if self.top is None else max(self.top, event_timestamp)

    def on_periodic_emit(self, output):
        self.emits += 1
        if self.top is not None:
            output.emit_watermark(self.top - 100)


def test_punctuated_watermarks_come_only_from_markers_and_never_move_back():
    run = GeneratorRun(Punctuated())
    assert run.run_batch([({"marker": False}, 50_000)]) == MIN_WATERMARK
    assert run.run_batch([({"marker": True}, 7_000), ({"marker": False}, 1)]) == 7_000
    assert run.run_batch([({"marker": True}, 3_000)]) == 7_000  # lower: ignored
    assert run.run_batch([], end_of_input=True) == MAX_WATERMARK


def test_periodic_emit_runs_once_per_batch_after_its_records_in_order():
    gen = Periodic()
    run = GeneratorRun(gen)
    assert run.run_batch([]) == MIN_WATERMARK and gen.emits == 1
    assert run.run_batch([("a", 1_000), ("b", 5_000), ("c", 2_000)]) == 4_900
    assert gen.emits == 2 and [e for e, _ in gen.seen] == ["a", "b", "c"]
    assert run.run_batch([("d", 3_000)]) == 4_900


def test_built_in_generators_match_the_bounded_out_of_orderness_strategy():
    strategy = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(2))
    run = GeneratorRun(fk.BoundedOutOfOrdernessWatermarks(fk.seconds(2)))
    assert run.run_batch([]) == strategy.current_watermark(None) == MIN_WATERMARK
    assert run.run_batch([(None, 10_000), (None, 4_000)]) == strategy.current_watermark(10_000) == 7_999
    asc = GeneratorRun(fk.AscendingTimestampsWatermarks())
    assert asc.run_batch([(None, 10_000)]) == 9_999


def test_for_generator_takes_what_makes_a_generator():
    class Supplier(fk.WatermarkGeneratorSupplier):
        def create_watermark_generator(self, context=None):
            return Punctuated()

    for supplier in (Punctuated, lambda: Punctuated(), Supplier()):
        s = fk.WatermarkStrategy.for_generator(supplier).with_timestamp_assigner("t")
        assert isinstance(make_generator(s.generator), Punctuated)
    with pytest.raises(
        TypeError, match=r"not a generator: for_generator\(Punctuated\) or for_generator\(lambda: Punctuated\(...\)\)"
    ):
        fk.WatermarkStrategy.for_generator(Punctuated())
    with pytest.raises(TypeError, match="a callable that makes a WatermarkGenerator"):
        fk.WatermarkStrategy.for_generator(42)
    with pytest.raises(TypeError, match="has no on_event/on_periodic_emit"):
        make_generator(lambda: "nope")
    with pytest.raises(fk.UnsupportedError, match="with_idleness"):
        fk.WatermarkOutput().mark_idle()
    with pytest.raises(TypeError, match="takes a Watermark"):
        fk.WatermarkOutput().emit_watermark(1.5)


def test_one_micro_batch_through_the_spark_adapter_in_read_order():
    from funke.spark import generated as gen

    kinds = {"k": "", "n": "int", "at": "ts"}
    batch = pd.DataFrame(
        {
            gen._BEAT: [False, True, False, False],
            gen._END: [False, None, False, False],
            gen._POS: [(1 << 40) + 0, None, 1, 0],  # partition 0's rows first, each in its order
            gen._TS: [3_000, None, 2_000, 1_000],
            "k": ["p1", None, "p0b", "p0a"],
            "n": [1.0, None, None, 7.0],  # nulls made pandas use floats
            "at": [3_000_000, None, 2_000_000, 1_000_000],
        }
    )
    run, wm = gen.run_batch(None, Periodic, kinds, batch)
    assert wm == 2_900
    assert run.generator.seen == [
        ({"k": "p0a", "n": 7, "at": dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)}, 1_000),
        ({"k": "p0b", "n": None, "at": dt.datetime(1970, 1, 1, 0, 0, 2, tzinfo=dt.UTC)}, 2_000),
        ({"k": "p1", "n": 1, "at": dt.datetime(1970, 1, 1, 0, 0, 3, tzinfo=dt.UTC)}, 3_000),
    ]
    assert type(run.generator.seen[0][0]["n"]) is int
    # the state survives pickling; a heartbeat alone runs one periodic emit; the end row means +infinity
    from pyspark import cloudpickle

    run = pickle.loads(cloudpickle.dumps(run))
    beat = batch.iloc[[1]]
    run, wm = gen.run_batch(run, Periodic, kinds, beat)
    assert (wm, run.generator.emits) == (2_900, 2)
    end = pd.DataFrame(
        {gen._BEAT: [False], gen._END: [True], gen._POS: [5], gen._TS: [0], "k": [None], "n": [None], "at": [None]}
    )
    run, wm = gen.run_batch(run, Periodic, kinds, end)
    assert wm == MAX_WATERMARK and len(run.generator.seen) == 3
    _, none_yet = gen.run_batch(None, Punctuated, kinds, beat)
    assert none_yet is None


GEN = fk.WatermarkStrategy.for_generator(Punctuated).with_timestamp_assigner("ts")
BOUNDED = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")


def _stream(env, strategy):
    return env.from_collection([{"k": "a", "v": 1, "ts": T}], "k string, v bigint, ts timestamp", watermarks=strategy)


def test_operators_downstream_of_a_generator_run_on_the_general_path():
    env = fk.StreamEnvironment(app="unit")
    s = _stream(env, GEN)
    w = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()
    assert place(w.node).path == GENERAL
    assert "user WatermarkGenerator (for_generator)" in place(w.node).why
    assert place(w.node.input.input).path == GENERAL  # the watermark node: the generator's operator
    assert "on_periodic_emit once per micro-batch" in place(w.node.input.input).why
    native = _stream(env, BOUNDED).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()
    assert place(native.node).path == NATIVE
    other = _stream(env, GEN)
    j = s.key_by("k").interval_join(other.key_by("k")).between(fk.seconds(0), fk.seconds(1)).select("left.v")
    assert place(j.node).path == GENERAL
    w.collect(), j.collect()
    check_generators(analyse(env._sinks))  # both inputs of the join have a generator: accepted
    assert "WatermarkGenerator Punctuated on ts" in env.explain()


class Both(JoinFunction):
    def join(self, left, right):
        return {"v": left["v"]}


def test_what_funke_cannot_run_exactly_with_a_generator_is_refused_with_what_to_do():
    def refused(build, match):
        env = fk.StreamEnvironment(app="unit")
        build(env).collect()
        with pytest.raises(fk.UnsupportedError, match=match):
            check_generators(analyse(env._sinks))

    refused(
        lambda env: _stream(env, GEN).union(_stream(env, BOUNDED)),
        "merged with 1 other watermarked stream.*assign the generator after the union",
    )
    refused(
        lambda env: _stream(env, GEN).join(_stream(env, BOUNDED)).where("k").equal_to("k")
        .window(TumblingEventTimeWindows.of(fk.seconds(10))).apply(Both(), output_schema="v bigint"),
        r"input 1 takes its watermark from a WatermarkGenerator and input 2 does not.*give input 2 WatermarkStrategy.for_generator",
    )  # fmt: skip
    refused(
        lambda env: _stream(env, BOUNDED).assign_timestamps_and_watermarks(GEN),
        "already has a watermark strategy.*assign one strategy per stream",
    )
    idle = fk.WatermarkStrategy.for_generator(Punctuated).with_timestamp_assigner("ts").with_idleness(fk.seconds(1))
    refused(
        lambda env: _stream(env, idle).join(_stream(env, GEN)).where("k").equal_to("k")
        .window(TumblingEventTimeWindows.of(fk.seconds(10))).apply(Both(), output_schema="v bigint"),
        "with_idleness on a WatermarkGenerator's stream is not honoured where inputs meet",
    )  # fmt: skip
    script = TestStream(schema="k string, v bigint").add_elements([("a", 1)], timestamps=[1_000])
    refused(
        lambda env: env.from_source(script).assign_timestamps_and_watermarks(
            fk.WatermarkStrategy.for_generator(Punctuated).with_timestamp_assigner("event_time")
        ),
        "a TestStream scripts the watermark itself",
    )
