"""The general path on Spark: funke operators on transformWithStateInPandas, streaming and bounded."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.semantics.functions import OutputTag
from funke.windows import TumblingEventTimeWindows

T0 = dt.datetime(2024, 1, 1)


def at(ms: int) -> dt.datetime:
    return T0 + dt.timedelta(milliseconds=ms)


def main_sink_uid(job) -> str:
    return next(s.sink.uid for s in job.states if s.sink.uid != "dead-letters")


def ms(t: dt.datetime) -> int:
    return int((t - T0) / dt.timedelta(milliseconds=1))


@pytest.mark.parametrize("bounded", [False, True])
def test_rolling_sum_count_and_reduce(env, bounded):
    rows = [{"k": k, "v": v, "x": i} for i, (k, v) in enumerate([("a", 1), ("b", 10), ("a", 2), ("a", 3), ("b", 20)])]
    s = env.from_collection(rows, "k string, v bigint, x bigint", rows_per_batch=2).key_by("k")
    sums = s.sum("v").collect()
    counts = s.count().collect()
    longest = s.reduce(lambda a, b: {**b, "v": max(a["v"], b["v"]) * 1}).collect()
    env.execute(bounded=bounded).wait(120)
    by = lambda r: (r["k"], r.get("count", 0), r["v"])  # noqa: E731
    # Flink: the running sum, other fields from the key's first element
    assert sorted((r["k"], r["v"], r["x"]) for r in sums.rows) == [("a", 1, 0), ("a", 3, 0), ("a", 6, 0), ("b", 10, 1), ("b", 30, 1)]
    assert sorted((r["k"], r["count"]) for r in counts.rows) == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2)]
    assert sorted(by(r) for r in longest.rows) == [("a", 0, 1), ("a", 0, 2), ("a", 0, 3), ("b", 0, 10), ("b", 0, 20)]


def test_lateness_late_firing_and_late_side_output_in_one_query(env):
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    # Two rows per micro-batch; each batch's elements, then the watermark (max ts of the batch before).
    # Batch 3 fires [0, 10 s) with 2 elements; in batch 4, a@3 s is late but allowed (re-fires: 3)
    # and b@-20 s is too late: side output.
    rows = [
        {"k": "a", "ts": at(1_000), "v": 1},
        {"k": "a", "ts": at(2_000), "v": 1},
        {"k": "a", "ts": at(15_000), "v": 1},
        {"k": "b", "ts": at(16_000), "v": 1},
        {"k": "b", "ts": at(17_000), "v": 1},
        {"k": "b", "ts": at(18_000), "v": 1},
        {"k": "a", "ts": at(3_000), "v": 1},
        {"k": "b", "ts": at(-20_000), "v": 7},
    ]
    late = OutputTag("late")
    s = env.from_collection(rows, "k string, ts timestamp, v bigint", rows_per_batch=2, watermarks=wm)
    w = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).allowed_lateness(fk.seconds(10)).side_output_late_data(late).count()
    main = w.collect()
    lates = w.get_side_output(late).collect()
    job = env.execute().wait(180)
    got = sorted((r["k"], ms(r["window_start"]), r["count"]) for r in main.rows)
    assert got == [("a", 0, 2), ("a", 0, 3), ("a", 10_000, 1), ("b", 10_000, 3)]
    assert [(r["k"], r["v"]) for r in lates.rows] == [("b", 7)]
    # one query for both outputs (and one for the dead letters: the key column may hold nulls)
    assert [s.sink.uid for s in job.states] == [main_sink_uid(job), "dead-letters"]


class HeapFrozen(fk.functions.KeyedProcessFunction):
    """Each element with whether its Python worker's heap is frozen (``gc.freeze``) when the function sees it."""

    def process_element(self, value, ctx):
        import gc

        yield {"k": value["k"], "frozen": gc.get_freeze_count() > 0}


@pytest.mark.parametrize("bounded", [False, True])
def test_workers_running_a_general_operator_freeze_their_heap(env, bounded):
    """PySpark runs a full garbage collection after every task of a reused worker; the worker's modules
    are frozen out of it the first time a general operator runs there (funke.spark.general)."""
    rows = [{"k": f"k{i % 5}", "v": i} for i in range(20)]
    out = env.from_collection(rows, "k string, v bigint", rows_per_batch=10).key_by("k").process(
        HeapFrozen(), output_schema="k string, frozen boolean"
    ).collect()
    env.execute(bounded=bounded).wait(120)
    assert len(out.rows) == 20 and all(r["frozen"] for r in out.rows)


class RunningCount(fk.functions.KeyedProcessFunction):
    """Per key of ``column``: how many rows it has had so far."""

    def __init__(self, column: str) -> None:
        self.column, self.count = column, fk.state.ValueStateDescriptor("n")

    def __repr__(self) -> str:  # (the plan's uid: two of them are two operators)
        return f"RunningCount({self.column!r})"

    def process_element(self, value, ctx):
        state = ctx.get_state(self.count)
        n = (state.value() or 0) + 1
        state.update(n)
        yield {"k": value[self.column], "n": n}


def test_a_keyed_process_after_an_operator_two_sinks_share_keeps_its_state_across_micro_batches(env):
    """Two sinks reading one general operator share its query, and what follows it runs per micro-batch:
    a stateful operator there would start empty in every batch. Its sink gets its own query instead."""
    rows = [{"k": k} for k in "aabbab"]
    counts = env.from_collection(rows, "k string", rows_per_batch=2).key_by("k").process(RunningCount("k"), output_schema="k string, n bigint")
    recounted = counts.with_column("g", "'all'").key_by("g").process(RunningCount("g"), output_schema="k string, n bigint")
    first, second = counts.collect(), recounted.collect()
    env.execute().wait(300)
    assert sorted((r["k"], r["n"]) for r in first.rows) == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    assert sorted(r["n"] for r in second.rows) == [1, 2, 3, 4, 5, 6]  # (without the fix: 1, 2 in every batch)


class BatchedCount(fk.functions.KeyedProcessFunction):
    """Per key: each element's running count, and its total at ``report_at`` (an event-time timer); written with
    ``process_batch``, so each micro-batch's elements come grouped by key (process_element is never called)."""

    def __init__(self, report_at: int) -> None:
        self.report_at = report_at

    def open(self, ctx):
        self.count = ctx.get_state(fk.state.ValueStateDescriptor("n"))

    def process_element(self, value, ctx):
        raise AssertionError("process_batch takes every element")

    def process_batch(self, key_groups, ctx):
        for group in key_groups:
            n = self.count.value() or 0
            for _ in group.values:
                n += 1
                yield {"k": group.key, "n": n, "kind": "element"}
            self.count.update(n)
            ctx.timer_service().register_event_time_timer(self.report_at)

    def on_timer(self, timestamp, ctx):
        yield {"k": ctx.get_current_key(), "n": self.count.value(), "kind": f"total at {timestamp}"}


@pytest.mark.parametrize("bounded", [False, True])
def test_a_keyed_process_function_taking_batches_gives_the_per_element_results(env, bounded):
    keys = "abacbbacab"
    rows = [{"k": k, "ts": at(i * 300)} for i, k in enumerate(keys)]
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    report_at = int(at(60_000).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)  # (after every element)
    out = env.from_collection(rows, "k string, ts timestamp", rows_per_batch=3, watermarks=wm).key_by("k").process(
        BatchedCount(report_at), output_schema="k string, n bigint, kind string"
    ).collect()
    env.execute(bounded=bounded).wait(300)
    seen: dict[str, int] = {}
    expected = []
    for k in keys:  # (what process_element would give, one element at a time)
        seen[k] = seen.get(k, 0) + 1
        expected.append((k, seen[k], "element"))
    expected += [(k, n, f"total at {report_at}") for k, n in seen.items()]
    got = sorted((r["k"], r["n"], r["kind"]) for r in out.rows)
    assert got == sorted(expected)
