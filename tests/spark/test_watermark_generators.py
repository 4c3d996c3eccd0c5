"""A user WatermarkGenerator drives funke's windows on Spark: windows fire when the generator says so."""

from __future__ import annotations

import pytest

import funke as fk
from funke.functions import JoinFunction
from funke.semantics.time import timestamp_to_millis
from funke.testing import run
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark


class Punctuated(fk.WatermarkGenerator):
    """Emits a watermark only on marker events, at the marker's time; never periodically."""

    def on_event(self, event, event_timestamp, output):
        if event["marker"]:
            output.emit_watermark(fk.Watermark(event_timestamp))

    def on_periodic_emit(self, output):
        pass


def _events(rows):
    return [{"k": k, "t": t, "marker": m} for k, t, m in rows]


# Two rows a micro-batch (the last one also carries the end of input). The generator's watermark
# after each batch: none, none, 10500, 10500, 30000, +infinity. A bounded-out-of-orderness
# strategy would have fired [0, 10 s) and [10 s, 20 s) already after batch 1 (max 25 s).
ON_TIME = [
    ("a", 1_000, False), ("a", 12_000, False),    # 0
    ("a", 3_000, False), ("b", 25_000, False),    # 1
    ("a", 15_000, False), ("m", 10_500, True),    # 2: watermark 10500: a [0, 10 s) fires
    ("b", 18_000, False), ("a", 19_000, False),   # 3: nothing new
    ("m", 30_000, True), ("b", 31_000, False),    # 4: watermark 30000: [10 s, 20 s) and [20 s, 30 s) fire
    ("a", 35_000, False), ("c", 41_000, False),   # 5: end of input: the rest fires
]  # fmt: skip
EXPECTED = sorted(
    [
        ("a", 0, 10_000, 2, 2),
        ("a", 10_000, 20_000, 3, 4),
        ("b", 10_000, 20_000, 1, 4),
        ("m", 10_000, 20_000, 1, 4),
        ("b", 20_000, 30_000, 1, 4),
        ("a", 30_000, 40_000, 1, 5),
        ("b", 30_000, 40_000, 1, 5),
        ("m", 30_000, 40_000, 1, 5),
        ("c", 40_000, 50_000, 1, 5),
    ]
)


def _counts(env, rows, strategy):
    s = env.from_collection(_events(rows), "k string, t bigint, marker boolean", rows_per_batch=2, watermarks=strategy)
    return s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()


def _got(rows, with_step=True):
    return sorted(
        (r["k"], timestamp_to_millis(r["window_start"]), timestamp_to_millis(r["window_end"]), r["count"])
        + ((r["_step"],) if with_step else ())
        for r in rows
    )


def test_windows_fire_when_the_punctuated_generator_says_so_streaming_and_bounded(spark, tmp_path):
    strategy = fk.WatermarkStrategy.for_generator(Punctuated).with_timestamp_assigner("t", unit="ms")
    env = fk.StreamEnvironment(app="gen", spark=spark, checkpoint_dir=str(tmp_path / "s"))
    out = _counts(env, ON_TIME, strategy)
    streamed = run(env, out)[out]
    text = env.explain()
    assert "WatermarkGenerator Punctuated on t (ms)" in text
    assert "user WatermarkGenerator (for_generator), which Spark's watermark cannot follow" in text
    assert _got(streamed) == EXPECTED

    env = fk.StreamEnvironment(app="gen-b", spark=spark, checkpoint_dir=str(tmp_path / "b"))
    out = _counts(env, ON_TIME, strategy)
    bounded = run(env, out, bounded=True)[out]
    assert _got(bounded, with_step=False) == _got(streamed, with_step=False)


def test_an_element_behind_the_generator_s_watermark_is_late(spark, tmp_path):
    late = [
        ("a", 1_000, False), ("m", 5_000, True),      # 0: watermark 5000
        ("a", 4_000, False), ("a", 6_000, False),     # 1: 4000 <= 5000 is late for [0, 5 s); 6000 is not
        ("a", 2_000, False), ("m", 20_000, True),     # 2: 2000 late; watermark 20000, then the end: the rest fires
    ]  # fmt: skip
    env = fk.StreamEnvironment(app="gen-late", spark=spark, checkpoint_dir=str(tmp_path / "l"))
    tag = fk.OutputTag("late", "k string, t timestamp, marker boolean")
    strategy = fk.WatermarkStrategy.for_generator(lambda: Punctuated()).with_timestamp_assigner("t", unit="ms")
    s = env.from_collection(_events(late), "k string, t bigint, marker boolean", rows_per_batch=2, watermarks=strategy)
    out = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(5))).side_output_late_data(tag).count()
    result = run(env, out, tag)
    assert _got(result[out]) == [
        ("a", 0, 5_000, 1, 0),
        ("a", 5_000, 10_000, 1, 2),
        ("m", 5_000, 10_000, 1, 2),
        ("m", 20_000, 25_000, 1, 2),
    ]
    assert sorted((timestamp_to_millis(r["t"]), r["_step"]) for r in result[tag]) == [(2_000, 2), (4_000, 1)]


class Pair(JoinFunction):
    def join(self, left, right):
        return {"l": left["id"], "r": right["id"]}


def test_a_window_join_follows_the_minimum_of_both_inputs_generators(spark, tmp_path):
    """Left's generator says 12 s after batch 0, right's nothing until its marker at 10 s in batch 1:
    [0, 10 s) fires at step 1 (Flink's minimum, -infinity until both have one), [10 s, 20 s) at the end."""
    left = [
        ("a", 1_000, False, "L1"), ("m", 12_000, True, "Lm"),
        ("a", 5_000, False, "L2"), ("a", 15_000, False, "L3"),
        ("a", 18_000, False, "L4"), ("z", 30_000, False, "Lz"),
    ]  # fmt: skip
    right = [
        ("a", 2_000, False, "R1"), ("a", 11_000, False, "R2"),
        ("m", 10_000, True, "Rm"), ("a", 16_000, False, "R3"),
        ("a", 19_000, False, "R4"), ("y", 31_000, False, "Ry"),
    ]  # fmt: skip
    env = fk.StreamEnvironment(app="gen-join", spark=spark, checkpoint_dir=str(tmp_path / "j"))
    strategy = fk.WatermarkStrategy.for_generator(Punctuated).with_timestamp_assigner("t", unit="ms")

    def stream(rows):
        data = [{"k": k, "t": t, "marker": m, "id": i} for k, t, m, i in rows]
        return env.from_collection(data, "k string, t bigint, marker boolean, id string", rows_per_batch=2, watermarks=strategy)

    pairs = (
        stream(left).join(stream(right)).where("k").equal_to("k")
        .window(TumblingEventTimeWindows.of(fk.seconds(10))).apply(Pair(), output_schema="l string, r string")
    )  # fmt: skip
    got = sorted((r["l"], r["r"], r["_step"]) for r in run(env, pairs)[pairs])
    late = [(x, y, 2) for x in ("L3", "L4") for y in ("R2", "R3", "R4")] + [("Lm", "Rm", 2)]
    assert got == sorted([("L1", "R1", 1), ("L2", "R1", 1), *late])
