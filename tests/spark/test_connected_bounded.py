"""The connect / co-process / broadcast scripts of test_connected.py, run bounded: Flink's batch
result, which is the streaming result wherever Flink's batch mode gives the streaming one."""

from __future__ import annotations

import pytest

import funke as fk
from funke.testing import TestStream, assert_rows, run

from .test_connected import LIMITS, UNPAID, Checkout, OverLimit, OverLimitUnkeyed, Tag

pytestmark = pytest.mark.spark


@pytest.fixture
def bounded_env(spark, tmp_path):
    return fk.StreamEnvironment(app="bounded", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"))


def test_keyed_co_process_bounded_gives_the_streaming_pairs_and_timer(bounded_env):
    """All elements, then the watermark at +infinity: o1 meets p1, o3 (first input first) waits and p3
    finds it, b's timer at 7 s fires at the end: the streaming result, without its steps."""
    env = bounded_env
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
    result = run(env, out, UNPAID, bounded=True)
    assert_rows(result[out], [{"k": "a", "order_id": "o1", "payment_id": "p1"}, {"k": "c", "order_id": "o3", "payment_id": "p3"}])
    assert_rows(result[UNPAID], [{"k": "b", "order_id": "o2", "due": 7_000}])


def test_co_map_bounded(bounded_env):
    env = bounded_env
    left = TestStream(schema="k string, id string").add_elements([("a", "x"), ("b", "y")], timestamps=[1, 2])
    right = TestStream(schema="k string, n bigint").add_elements([("c", 1)], timestamps=[3])
    out = env.from_source(left).connect(env.from_source(right)).map(Tag(), output_schema="k string, source string")
    assert_rows(
        run(env, out, bounded=True)[out],
        [{"k": "a", "source": "left"}, {"k": "b", "source": "left"}, {"k": "c", "source": "right"}],
    )


def test_broadcast_bounded_reads_the_whole_broadcast_side_first_as_flink_s_batch_mode(bounded_env):
    """Flink's batch mode processes the broadcast side first, in its order: limit 10, then 6 (each
    resetting the alert counts), then every transaction. The same four alerts as streaming; the keyed
    counts differ where Flink's do (a 12 and b 7 are each key's second alert since the last change)."""
    env = bounded_env
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
    result = run(env, keyed, unkeyed, bounded=True)
    assert_rows(
        result[keyed],
        [
            {"k": "a", "amount": 15.0, "n": 1},
            {"k": "b", "amount": 12.0, "n": 1},
            {"k": "a", "amount": 12.0, "n": 2},
            {"k": "b", "amount": 7.0, "n": 2},
        ],
    )
    assert_rows(
        result[unkeyed],
        [{"k": "a", "amount": 15.0}, {"k": "b", "amount": 12.0}, {"k": "a", "amount": 12.0}, {"k": "b", "amount": 7.0}],
    )
