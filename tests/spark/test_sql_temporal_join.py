"""Flink SQL's event-time temporal join on Spark, streaming (two rows a micro-batch) and bounded: orders joined
with the currency rate valid at each order's time, from a versioned view (a deduplication keeping each
currency's latest rate) and from the rates' insert-only log, inner and LEFT; the expected rows computed here."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import funke as fk
from funke.table import StreamTableEnvironment

pytestmark = pytest.mark.spark

T0 = datetime(2026, 1, 1)
RATES = [("eur", 2, 10), ("usd", 1, 12), ("eur", 3, 20), ("usd", 5, 30), ("eur", 4, 40)]
ORDERS = [(1, "eur", 5), (2, "eur", 15), (3, "usd", 16), (4, "eur", 25), (5, "usd", 35), (6, "gbp", 36), (7, "eur", 45)]


def _rate_at(cur: str, t: int) -> int | None:
    valid = [(u, r) for c, r, u in RATES if c == cur and u <= t]
    return max(valid)[1] if valid else None


@pytest.mark.parametrize("bounded", [False, True])
def test_orders_meet_the_rate_of_their_time(env, bounded):
    t_env = StreamTableEnvironment.create(env)
    wm = lambda c: fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner(c)
    at = lambda s: T0 + timedelta(seconds=s)
    rates = [{"cur": c, "rate": r, "u": at(u)} for c, r, u in RATES]
    orders = [{"id": i, "cur": c, "ts": at(t)} for i, c, t in ORDERS]
    t_env.create_temporary_view("rates_log", env.from_collection(rates, "cur string, rate int, u timestamp", watermarks=wm("u"), rows_per_batch=2))
    t_env.create_temporary_view("orders", env.from_collection(orders, "id int, cur string, ts timestamp", watermarks=wm("ts"), rows_per_batch=2))
    t_env.create_temporary_view("rates", t_env.sql_query(
        "SELECT cur, rate, u FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cur ORDER BY u DESC) AS rn FROM rates_log) WHERE rn = 1"
    ))  # fmt: skip
    inner = t_env.to_changelog_stream(t_env.sql_query(
        "SELECT o.id, r.rate FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur"
    )).collect()  # fmt: skip
    left = t_env.to_changelog_stream(t_env.sql_query(
        "SELECT o.id, r.rate FROM orders AS o LEFT JOIN rates_log FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur"
    )).collect()  # fmt: skip
    # a LEFT join's ON besides the key decides whether a row meets its version (else it is padded)
    on = t_env.to_changelog_stream(t_env.sql_query(
        "SELECT o.id, r.rate FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur AND r.rate > o.id - 2"
    )).collect()  # fmt: skip
    handle = env.execute(bounded=bounded).wait(600)
    assert handle.done
    expected = {i: _rate_at(c, t) for i, c, t in ORDERS}
    assert sorted((r["row_kind"], r["id"], r["rate"]) for r in left.rows) == sorted(("+I", i, v) for i, v in expected.items())
    met = {i: v if v is not None and v > i - 2 else None for i, v in expected.items()}
    assert sorted((r["row_kind"], r["id"], r["rate"]) for r in on.rows) == sorted(("+I", i, v) for i, v in met.items())
    assert sorted(v for v in met.values() if v is not None) == [2, 3, 5]  # (and 4 rows padded)
    assert sorted((r["row_kind"], r["id"], r["rate"]) for r in inner.rows) == sorted(
        ("+I", i, v) for i, v in expected.items() if v is not None
    )
