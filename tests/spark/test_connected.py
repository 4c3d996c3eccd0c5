"""Connected streams on Spark: keyed co-process (shared keyed state, timers, side outputs), co-map,
and the broadcast state pattern with a rule that changes while the job runs. Every input is a
TestStream with its own watermark steps; expected rows are derived by hand in each test."""

from __future__ import annotations

import time

import pytest

import funke as fk
from funke.functions import (
    BroadcastProcessFunction,
    CoGroupFunction,
    CoMapFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    OutputTag,
)
from funke.plan.capabilities import place
from funke.semantics.time import timestamp_to_millis
from funke.state import MapStateDescriptor, ValueStateDescriptor
from funke.testing import TestStream, assert_rows, run
from funke.windows import TumblingEventTimeWindows

from .helpers import wait_settled

pytestmark = pytest.mark.spark

UNPAID = OutputTag("unpaid", "k string, order_id string, due bigint")


class Checkout(KeyedCoProcessFunction):
    """Orders (input 1) wait 5 s of event time for their payment (input 2)."""

    def open(self, ctx):
        self.order = ctx.get_state(ValueStateDescriptor("order", str))
        self.paid = ctx.get_state(ValueStateDescriptor("paid", str))

    def process_element1(self, order, ctx):
        if self.paid.value() is not None:
            yield {"k": ctx.get_current_key(), "order_id": order["id"], "payment_id": self.paid.value()}
            self.paid.clear()
            return
        self.order.update(order["id"])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 5_000)

    def process_element2(self, payment, ctx):
        if self.order.value() is None:
            self.paid.update(payment["id"])
            return
        yield {"k": ctx.get_current_key(), "order_id": self.order.value(), "payment_id": payment["id"]}
        self.order.clear()

    def on_timer(self, timestamp, ctx):
        if self.order.value() is not None:
            ctx.output(UNPAID, {"k": ctx.get_current_key(), "order_id": self.order.value(), "due": timestamp})
            self.order.clear()


def test_keyed_co_process_shares_state_between_inputs_and_fires_timers_at_the_minimum_watermark(env):
    """Step 0: o1 (a) and o2 (b) wait; p1 pays a in the same micro-batch (input 1's rows go first).
    Step 1: orders' watermark 3 s, payments' 10 s: the operator's is 3 s, no timer is due. Step 2: p3
    for c comes before its order (kept in state); orders' watermark 8 s, so the operator's is 8 s: b's
    timer at 7 s fires and o2 goes to the side output (a's at 6 s finds nothing). Step 3: o3 finds c's
    payment."""
    orders = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "o1"), ("b", "o2")], timestamps=[1_000, 2_000])
        .advance_watermark_to(3_000)
        .advance_watermark_to(8_000)
        .add_elements([("c", "o3")], timestamps=[8_500])
    )
    payments = (
        TestStream(schema="k string, id string")
        .add_elements([("a", "p1")], timestamps=[1_500])
        .advance_watermark_to(10_000)
        .add_elements([("c", "p3")], timestamps=[11_000])
    )
    out = (
        env.from_source(orders)
        .connect(env.from_source(payments))
        .key_by("k", "k")
        .process(Checkout(), output_schema="k string, order_id string, payment_id string")
    )
    assert place(out.node).path == "general"
    result = run(env, out, UNPAID)
    assert_rows(
        result[out],
        [
            {"k": "a", "order_id": "o1", "payment_id": "p1", "_step": 0},
            {"k": "c", "order_id": "o3", "payment_id": "p3", "_step": 3},
        ],
        ignore=(),
    )
    assert_rows(result[UNPAID], [{"k": "b", "order_id": "o2", "due": 7_000, "_step": 2}], ignore=())


class Tag(CoMapFunction):
    def map1(self, row):
        return {"k": row["k"], "source": "left"}

    def map2(self, row):
        return {"k": row["k"], "source": "right"}


def test_co_map_maps_each_input_with_its_own_function(env):
    left = TestStream(schema="k string, id string").add_elements([("a", "x"), ("b", "y")], timestamps=[1, 2])
    right = TestStream(schema="k string, n bigint").add_elements([("c", 1)], timestamps=[3])
    out = env.from_source(left).connect(env.from_source(right)).map(Tag(), output_schema="k string, source string")
    assert place(out.node).path == "native"  # stateless: each input's map, then a union
    result = run(env, out)
    assert_rows(result[out], [{"k": "a", "source": "left"}, {"k": "b", "source": "left"}, {"k": "c", "source": "right"}])


LIMITS = MapStateDescriptor("limits", str, float)
ALERTS = ValueStateDescriptor("alerts", int)


class OverLimit(KeyedBroadcastProcessFunction):
    """Alerts on amounts over the broadcast limit; counts alerts per key since the last limit change."""

    def open(self, ctx):
        self.alerts = ctx.get_state(ALERTS)

    def process_broadcast_element(self, rule, ctx):
        ctx.get_broadcast_state(LIMITS).put("limit", rule["limit"])
        ctx.apply_to_keyed_state(ALERTS, lambda key, state: state.clear())

    def process_element(self, tx, ctx):
        limit = ctx.get_broadcast_state(LIMITS).get("limit")
        if limit is not None and tx["amount"] > limit:
            n = (self.alerts.value() or 0) + 1
            self.alerts.update(n)
            yield {"k": ctx.get_current_key(), "amount": tx["amount"], "n": n}


class OverLimitUnkeyed(BroadcastProcessFunction):
    def process_broadcast_element(self, rule, ctx):
        ctx.get_broadcast_state(LIMITS).put("limit", rule["limit"])

    def process_element(self, tx, ctx):
        limit = ctx.get_broadcast_state(LIMITS).get("limit")
        if limit is not None and tx["amount"] > limit:
            yield {"k": tx["k"], "amount": tx["amount"]}


def test_a_broadcast_rule_applies_to_every_later_element_keyed_and_unkeyed(env):
    """Limit 10 from step 0: a 15 (step 0) and b 12 (step 1) alert, a 5 does not. Step 2 brings limit 6,
    applied before that micro-batch's transactions, and resets every key's alert count
    (apply_to_keyed_state): a 12 and b 7 alert, each the first since the change."""
    txs = (
        TestStream(schema="k string, amount double")
        .add_elements([("a", 5.0), ("a", 15.0)], timestamps=[1_000, 2_000])
        .add_elements([("b", 12.0)], timestamps=[3_000])
        .add_elements([("a", 12.0), ("b", 7.0)], timestamps=[4_000, 5_000])
    )
    rules = (
        TestStream(schema="limit double")
        .add_elements([(10.0,)], timestamps=[0])
        .advance_watermark_to(1_000)
        .add_elements([(6.0,)], timestamps=[3_000])
    )
    t, r = env.from_source(txs), env.from_source(rules)
    keyed = t.key_by("k").connect(r.broadcast(LIMITS)).process(OverLimit(), output_schema="k string, amount double, n int")
    unkeyed = t.connect(r.broadcast(LIMITS)).process(OverLimitUnkeyed(), output_schema="k string, amount double")
    assert "broadcast state" in place(keyed.node).why
    result = run(env, keyed, unkeyed)
    assert_rows(
        result[keyed],
        [
            {"k": "a", "amount": 15.0, "n": 1, "_step": 0},
            {"k": "b", "amount": 12.0, "n": 1, "_step": 1},
            {"k": "a", "amount": 12.0, "n": 1, "_step": 2},
            {"k": "b", "amount": 7.0, "n": 1, "_step": 2},
        ],
        ignore=(),
    )
    assert_rows(
        result[unkeyed],
        [{"k": "a", "amount": 15.0}, {"k": "b", "amount": 12.0}, {"k": "a", "amount": 12.0}, {"k": "b", "amount": 7.0}],
    )


def test_connect_refuses_the_wrong_function_kind_with_what_to_do(env):
    a = env.from_collection([{"k": "a"}], "k string")
    b = env.from_collection([{"k": "b"}], "k string")
    with pytest.raises(fk.PlanError, match=r"takes a CoProcessFunction.*key_by\(key1, key2\)"):
        a.connect(b).process(Checkout(), output_schema="k string")
    with pytest.raises(fk.PlanError, match="MapStateDescriptor"):
        b.broadcast(ValueStateDescriptor("x", int))
    with pytest.raises(fk.PlanError, match="takes a KeyedBroadcastProcessFunction"):
        a.key_by("k").connect(b.broadcast(LIMITS)).process(OverLimitUnkeyed(), output_schema="k string")


class Timers(KeyedCoProcessFunction):
    """An event-time timer at each element's time, on either input; each firing is a row."""

    def process_element1(self, row, ctx):
        ctx.timer_service().register_event_time_timer(ctx.timestamp())

    def process_element2(self, row, ctx):
        ctx.timer_service().register_event_time_timer(ctx.timestamp())

    def on_timer(self, timestamp, ctx):
        yield {"k": ctx.get_current_key(), "t": timestamp}


def test_an_idle_input_stops_holding_the_two_input_watermark_back(spark, tmp_path):
    """Input b sends one row at 0.5 s and then nothing (its directory is monitored: it never ends).
    Flink's two-input watermark is the minimum of both inputs', so b would hold it at 0.499 s and
    no timer of a would fire; with_idleness(500 ms) on b lets it go once b has been quiet that long,
    and funke's watermark then follows a's alone: every timer fires, b's at 0.5 s too."""
    from .helpers import ts

    src = tmp_path / "b"
    spark.createDataFrame([("b", ts(500))], "k string, t timestamp").coalesce(1).write.json(str(src))
    env = fk.StreamEnvironment(app="idle", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    bound0 = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("t")
    a = env.from_collection(
        [{"k": "a", "t": ts(1_000 * i)} for i in range(1, 9)], "k string, t timestamp", rows_per_batch=1, watermarks=bound0
    )
    quiet = fk.sources.files(str(src), schema="k string, t timestamp", format="json", monitor_continuously=fk.milliseconds(200))
    b = env.from_source(quiet, watermarks=bound0.with_idleness(fk.milliseconds(500)))
    fired = a.connect(b).key_by("k", "k").process(Timers(), output_schema="k string, t bigint").collect()
    assert "skip an input idle that long" in env.explain()
    handle = env.execute()
    try:
        deadline = time.monotonic() + 240
        while len(fired.rows) < 9 and time.monotonic() < deadline:
            handle.wait(timeout=0.5)
    finally:
        handle.stop()
    assert sorted((r["k"], r["t"]) for r in fired.rows) == [("a", 1_000 * i) for i in range(1, 9)] + [("b", 500)]


class Sizes(CoGroupFunction):
    def co_group(self, lefts, rights):
        yield {"n_a": len(lefts), "n_b": len(rights)}


def _add_file(directory, name, rows):
    """A JSON-lines file appears whole in ``directory`` (written beside it, then renamed in)."""
    import json
    import os

    part = directory.parent / f".{name}.part"
    part.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(part, directory / name)


def test_a_two_input_watermark_is_the_minimum_of_its_own_inputs_minus_infinity_until_each_has_sent(spark, tmp_path):
    """Flink: a two-input operator's watermark is the minimum of its inputs', -infinity until each has
    one. Input a sends x at 1 s, 2 s, ... 8 s (bound 0); b sends nothing yet: no timer and no co-group
    window fires. Then b sends x at 5 s: the watermark is min(8000 - 1, 5000 - 1) = 4999, so the timers
    at 1, 2, 3 and 4 s fire (not the one at 5 s), and the co-group windows [0, 2 s) (a: 1 element) and
    [2 s, 4 s) (a: 2), no other.

    The timers' query also holds a third watermarked stream c, unioned after the operator, that never
    sends: Spark's query watermark (the minimum over every watermarked input of the query, 0 for one
    without rows) stays at 0 there, and the timers used to wait for it forever; Flink's operator does
    not read c."""
    dirs = {name: tmp_path / name for name in "abc"}
    for d in dirs.values():
        d.mkdir()
    _add_file(dirs["a"], "a.json", [{"k": "x", "t": 1_000 * i} for i in range(1, 9)])
    env = fk.StreamEnvironment(app="min-wm", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    bound0 = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("t", unit="ms")
    a, b, c = (
        env.from_source(
            fk.sources.files(str(d), schema="k string, t bigint", format="json", monitor_continuously=fk.milliseconds(200)),
            watermarks=bound0,
        )
        for d in dirs.values()
    )
    timers = a.connect(b).key_by("k", "k").process(Timers(), output_schema="k string, t bigint")
    fired = timers.union(c.select(fk.col("k"), fk.col("t").cast("bigint").alias("t"))).collect()
    windows = (
        a.co_group(b).where("k").equal_to("k").window(TumblingEventTimeWindows.of(fk.seconds(2)))
        .apply(Sizes(), output_schema="n_a int, n_b int").collect()
    )  # fmt: skip
    assert "-infinity until each has sent a row" in env.explain()
    handle = env.execute()
    queries = [s for s in handle.states if not s.plan.lazy]

    def until(condition, what):
        deadline = time.monotonic() + 300
        while not condition():
            handle.wait(timeout=0.2)
            assert time.monotonic() < deadline, f"waited 300 s for {what}"

    try:
        until(lambda: all(s.input_rows >= 8 for s in queries), "a's rows")
        wait_settled(handle)  # the watermark computed from them has reached the operators
        assert fired.rows == [] and windows.rows == []
        _add_file(dirs["b"], "b.json", [{"k": "x", "t": 5_000}])
        until(lambda: len(fired.rows) >= 4 and len(windows.rows) >= 2, "the firings at 4999")
        wait_settled(handle)
    finally:
        handle.stop()
    assert sorted((r["k"], r["t"]) for r in fired.rows) == [("x", 1_000), ("x", 2_000), ("x", 3_000), ("x", 4_000)]
    got = sorted(
        (r["k"], timestamp_to_millis(r["window_start"]), timestamp_to_millis(r["window_end"]), r["n_a"], r["n_b"]) for r in windows.rows
    )
    assert got == [("x", 0, 2_000, 1, 0), ("x", 2_000, 4_000, 2, 0)]


def test_a_restarted_job_goes_on_from_the_two_input_watermark_it_had(spark, tmp_path):
    """Co-group windows of 2 s. Run 1: a sends x at 1, 3 and 7 s, b x at 5 s: the watermark is
    min(6999, 4999) = 4999, [0, 2 s) and [2 s, 4 s) fire; the job stops. b then sends x at 9 s and the
    job restarts from its checkpoint: the operator's watermark goes on from each input's maximum kept
    in its clock's offsets, min(6999, 8999) = 6999, so [4 s, 6 s) (b's 5 s) fires, as in a run never
    stopped; a, which sends nothing after the restart, does not hold it at -infinity."""
    dirs = {name: tmp_path / name for name in "ab"}
    for d in dirs.values():
        d.mkdir()
    _add_file(dirs["a"], "a.json", [{"k": "x", "t": t} for t in (1_000, 3_000, 7_000)])
    _add_file(dirs["b"], "b1.json", [{"k": "x", "t": 5_000}])
    bound0 = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("t", unit="ms")

    def start():
        env = fk.StreamEnvironment(app="restart-wm", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        a, b = (
            env.from_source(
                fk.sources.files(str(d), schema="k string, t bigint", format="json", monitor_continuously=fk.milliseconds(200)),
                watermarks=bound0,
            )
            for d in dirs.values()
        )
        windows = (
            a.co_group(b).where("k").equal_to("k").window(TumblingEventTimeWindows.of(fk.seconds(2)))
            .apply(Sizes(), output_schema="n_a int, n_b int").collect()
        )  # fmt: skip
        return env.execute(name="restart-wm"), windows

    def rows(windows):
        return sorted(
            (r["k"], timestamp_to_millis(r["window_start"]), timestamp_to_millis(r["window_end"]), r["n_a"], r["n_b"])
            for r in windows.rows
        )

    def settle(handle, condition):
        deadline = time.monotonic() + 300
        while not condition():
            handle.wait(timeout=0.2)
            assert time.monotonic() < deadline, "waited 300 s"
        wait_settled(handle)

    handle, windows = start()
    try:
        settle(handle, lambda: len(windows.rows) >= 2)
    finally:
        handle.stop()
    assert rows(windows) == [("x", 0, 2_000, 1, 0), ("x", 2_000, 4_000, 1, 0)]
    _add_file(dirs["b"], "b2.json", [{"k": "x", "t": 9_000}])
    handle, windows = start()
    try:
        assert handle.metrics()["resumed"] is True
        settle(handle, lambda: len(windows.rows) >= 1)
    finally:
        handle.stop()
    assert rows(windows) == [("x", 4_000, 6_000, 0, 1)]
