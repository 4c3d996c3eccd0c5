"""with_idleness where watermarked inputs meet, on Spark: an interval join (even when on_path('native')
asks for Spark's join) and a window over a union run on the general path with funke's watermark
(Flink's rule, an idle input skipped). Inputs are monitored directories; each step waits on what the
job reports, never on a duration."""

from __future__ import annotations

import json
import os
import time

import pytest

import funke as fk
from funke.plan.capabilities import place
from funke.semantics.time import timestamp_to_millis
from funke.windows import TumblingEventTimeWindows

from .helpers import wait_settled

pytestmark = pytest.mark.spark


def add_file(directory, name, rows):
    """A JSON-lines file appears whole in ``directory`` (written beside it, then renamed in)."""
    part = directory.parent / f".{name}.part"
    part.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(part, directory / name)


def test_an_idle_input_of_an_interval_join_and_of_a_window_over_a_union_stops_holding_the_watermark(spark, tmp_path):
    """a sends x at 1, 2, ... 8 s; b sends x at 0.5 s, then nothing (idle after 500 ms). Both bounds 0.

    Without idleness the watermark where they meet would stay at min(7999, 499) = 499. With b idle it
    follows a alone to 7999: the union's tumbling 2 s windows [0, 2), [2, 4), [4, 6), [6, 8) fire with
    2, 2, 2 and 2 elements (b's 0.5 s in the first), [8, 10) waits. The interval join (right time - left
    time in [-1 s, 1 s]) pairs b's 0.5 s with a's 1 s only. Then b sends x at 2 s: below the watermark,
    late for both (Flink: an idle input that resumes is late below the operator's watermark): dropped
    and counted once per operator, no new pair (it would have met a's 1, 2 and 3 s), no window again."""
    dirs = {name: tmp_path / name for name in "ab"}
    for d in dirs.values():
        d.mkdir()
    add_file(dirs["a"], "a.json", [{"k": "x", "t": 1_000 * i} for i in range(1, 9)])
    add_file(dirs["b"], "b1.json", [{"k": "x", "t": 500}])
    env = fk.StreamEnvironment(app="idle-meet", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    bound0 = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("t", unit="ms")

    def files(d):
        return fk.sources.files(str(d), schema="k string, t bigint", format="json", monitor_continuously=fk.milliseconds(200))

    a = env.from_source(files(dirs["a"]), watermarks=bound0)
    b = env.from_source(files(dirs["b"]), watermarks=bound0.with_idleness(fk.milliseconds(500)))
    joined = (
        a.key_by("k").interval_join(b.key_by("k")).between(fk.seconds(-1), fk.seconds(1))
        .on_path("native").select(lt="left.t", rt="right.t")
    )  # fmt: skip
    windows = a.union(b).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(2))).count()
    assert place(joined.node).path == "general" and "on_path('native') asked for Spark's join, but with_idleness" in place(joined.node).why
    assert place(windows.node).path == "general" and "with_idleness(500 ms)" in place(windows.node).why
    pairs, counts = joined.collect(), windows.collect()
    handle = env.execute()
    queries = [s for s in handle.states if not s.plan.lazy]

    def until(condition, what):
        deadline = time.monotonic() + 300
        while not condition():
            handle.wait(timeout=0.2)
            assert time.monotonic() < deadline, f"waited 300 s for {what}"

    try:
        until(lambda: all(c.watermark == 7_999 for s in queries for c in s.clocks), "b idle: the watermark at a's 7999")
        wait_settled(handle)  # it has reached the operators
        first_pairs, first_counts = list(pairs.rows), list(counts.rows)
        add_file(dirs["b"], "b2.json", [{"k": "x", "t": 2_000}])
        until(lambda: handle.metrics()["late_rows_dropped"] >= 2, "b's late row dropped by both operators")
        wait_settled(handle)
    finally:
        handle.stop()
    assert [(timestamp_to_millis(r["lt"]), timestamp_to_millis(r["rt"])) for r in first_pairs] == [(1_000, 500)]
    got = sorted((r["k"], timestamp_to_millis(r["window_start"]), r["count"]) for r in first_counts)
    assert got == [("x", 0, 2), ("x", 2_000, 2), ("x", 4_000, 2), ("x", 6_000, 2)]
    assert pairs.rows == first_pairs and counts.rows == first_counts
    assert handle.metrics()["late_rows_dropped"] == 2
