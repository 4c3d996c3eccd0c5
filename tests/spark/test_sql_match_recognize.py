"""MATCH_RECOGNIZE on Spark, streaming and bounded: the examples of Flink's documentation give Flink's rows, and
the same patterns built with the Pattern API (the same automaton, the same ``CepOperator``) give the same rows.

Expected rows are derived by hand from Flink's rules (see each data set)."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.cep import CEP, AfterMatchSkipStrategy, Pattern, iterative
from funke.table import StreamTableEnvironment

pytestmark = pytest.mark.spark
T0 = dt.datetime(2011, 4, 1, 10)
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("rowtime")
SCHEMA = "symbol string, rowtime timestamp, price double"


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def ticker(env, t_env, name, prices):
    """``prices`` one a second from 10:00:00, then a row at 10:01:00 (price 100) that moves a streaming run's
    watermark past them and matches nothing; ``prices`` may also hold (second, price) pairs."""
    rows = [(i, p) if not isinstance(p, tuple) else p for i, p in enumerate(prices)] + [(60, 100.0)]
    stream = env.from_collection(
        [{"symbol": "ACME", "rowtime": at(s), "price": float(p)} for s, p in rows], SCHEMA, rows_per_batch=8, watermarks=WM
    )
    t_env.create_temporary_view(name, stream)
    return stream


# Flink's "price drop" example: the match starts at 25 (10:00:04), falls to 14 (10:00:07) and rises to 24
# (10:00:08). The partial match from 18 (10:00:05) would match too, but SKIP TO LAST PRICE_UP drops it.
DROP_SQL = """
SELECT * FROM drops MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY rowtime
    MEASURES START_ROW.rowtime AS start_tstamp, LAST(PRICE_DOWN.rowtime) AS bottom_tstamp, LAST(PRICE_UP.rowtime) AS end_tstamp
    ONE ROW PER MATCH
    AFTER MATCH SKIP TO LAST PRICE_UP
    PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
    DEFINE
        PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price)
            OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
        PRICE_UP AS PRICE_UP.price > LAST(PRICE_DOWN.price, 1)
) MR"""
DROP_PRICES = [12, 17, 19, 21, 25, 18, 15, 14, 24, 25, 19]
DROP_ROWS = [("ACME", at(4), at(7), at(8))]

# Flink's aggregation example: A+ (greedy) takes rows while their running average stays below 15; B (no DEFINE:
# any row) ends the match. 12, 17, 13, 16 (average 14.5), B = 25; past it 2, 4, 10, 15, 25, 25 (81 / 6 = 13.5), B = 30.
AVG_SQL = """
SELECT * FROM prices MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY rowtime
    MEASURES FIRST(A.rowtime) AS start_tstamp, LAST(A.rowtime) AS end_tstamp, AVG(A.price) AS avgPrice
    ONE ROW PER MATCH
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A+ B)
    DEFINE A AS AVG(A.price) < 15
) MR"""
AVG_PRICES = [12, 17, 13, 16, 25, 2, 4, 10, 15, 25, 25, 30]
AVG_ROWS = [("ACME", at(0), at(3), 14.5), ("ACME", at(5), at(10), 13.5)]

# WITHIN: a drop of more than 10 below A within 5 s. Rows at 0..5 s (20, 19, 18, 17, 16, 15) and 5.5 s (5).
# Without WITHIN the match starts at A = 20 (0 s): drop 15. With WITHIN '5' SECOND that partial match (5.5 s
# long) times out; the one from A = 19 (1 s, 4.5 s long) matches: drop 14. SKIP PAST LAST ROW then drops the rest.
WITHIN_SQL = """
SELECT symbol, dropTime, dropDiff FROM falls MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY rowtime
    MEASURES C.rowtime AS dropTime, A.price - C.price AS dropDiff
    ONE ROW PER MATCH
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A B* C) {within}
    DEFINE B AS B.price > A.price - 10, C AS C.price < A.price - 10
) AS T"""
WITHIN_PRICES = [20, 19, 18, 17, 16, 15, (5.5, 5)]


def last(ctx, name):
    rows = ctx.get_events_for_pattern(name)
    return rows[-1]["price"] if rows else None


def the_drop_pattern():
    """DROP_SQL's pattern by hand, as Flink's translation writes it."""

    @iterative
    def down(e, ctx):
        before = last(ctx, "PRICE_DOWN")
        return e["price"] < (ctx.get_events_for_pattern("START_ROW")[-1]["price"] if before is None else before)

    @iterative
    def up(e, ctx):
        downs = ctx.get_events_for_pattern("PRICE_DOWN")
        return len(downs) >= 2 and e["price"] > downs[-2]["price"]

    return (
        Pattern.begin("START_ROW", AfterMatchSkipStrategy.skip_to_last("PRICE_UP").throw_exception_on_miss())
        .next("PRICE_DOWN").where(down).one_or_more().consecutive().greedy()
        .next("PRICE_UP").where(up)
    )  # fmt: skip


def the_within_pattern():
    @iterative
    def b(e, ctx):
        return e["price"] > last(ctx, "A") - 10

    @iterative
    def c(e, ctx):
        return e["price"] < last(ctx, "A") - 10

    return (
        Pattern.begin("A", AfterMatchSkipStrategy.skip_past_last_event())
        .next("B").where(b).one_or_more().optional().consecutive().greedy()
        .next("C").where(c).within(fk.seconds(5))
    )  # fmt: skip


def rows_of(result, *cols):
    return sorted(tuple(r[c] for c in cols) for r in result.rows)


def test_flink_documentation_examples_and_the_same_patterns_built_by_hand(env):
    """Bounded: every example, and the Pattern API's matches for the same patterns."""
    t_env = StreamTableEnvironment.create(env)
    drops = ticker(env, t_env, "drops", DROP_PRICES)
    ticker(env, t_env, "prices", AVG_PRICES)
    falls = ticker(env, t_env, "falls", WITHIN_PRICES)
    drop = t_env.to_data_stream(t_env.sql_query(DROP_SQL)).collect()
    avg = t_env.to_data_stream(t_env.sql_query(AVG_SQL)).collect()
    within = t_env.to_data_stream(t_env.sql_query(WITHIN_SQL.format(within="WITHIN INTERVAL '5' SECOND"))).collect()
    unbounded = t_env.to_data_stream(t_env.sql_query(WITHIN_SQL.format(within=""))).collect()
    by_hand_drop = CEP.pattern(drops.key_by("symbol"), the_drop_pattern()).select(
        lambda m: {"symbol": m["START_ROW"][0]["symbol"], "start": m["START_ROW"][0]["rowtime"], "end": m["PRICE_UP"][-1]["rowtime"]},
        output_schema="symbol string, start timestamp, end timestamp",
    ).collect()
    by_hand_within = CEP.pattern(falls.key_by("symbol"), the_within_pattern()).select(
        lambda m: {"symbol": m["A"][0]["symbol"], "dropTime": m["C"][-1]["rowtime"], "dropDiff": m["A"][0]["price"] - m["C"][-1]["price"]},
        output_schema="symbol string, dropTime timestamp, dropDiff double",
    ).collect()
    env.execute(bounded=True).wait(300)
    assert rows_of(drop, "symbol", "start_tstamp", "bottom_tstamp", "end_tstamp") == DROP_ROWS
    assert rows_of(avg, "symbol", "start_tstamp", "end_tstamp", "avgPrice") == AVG_ROWS
    assert rows_of(within, "symbol", "dropTime", "dropDiff") == [("ACME", at(5.5), 14.0)]
    assert rows_of(unbounded, "symbol", "dropTime", "dropDiff") == [("ACME", at(5.5), 15.0)]
    assert rows_of(by_hand_drop, "symbol", "start", "end") == [(s, a, c) for s, a, _, c in DROP_ROWS]
    assert rows_of(by_hand_within, "symbol", "dropTime", "dropDiff") == rows_of(within, "symbol", "dropTime", "dropDiff")


def test_streaming_matches_wait_for_the_watermark_and_equal_the_bounded_ones(env):
    """Streaming (rows in micro-batches of 8, matched when the watermark passes them): the skip strategy and
    WITHIN examples give the rows the bounded run gives."""
    t_env = StreamTableEnvironment.create(env)
    ticker(env, t_env, "drops", DROP_PRICES)
    ticker(env, t_env, "falls", WITHIN_PRICES)
    drop = t_env.to_data_stream(t_env.sql_query(DROP_SQL)).collect()
    within = t_env.to_data_stream(t_env.sql_query(WITHIN_SQL.format(within="WITHIN INTERVAL '5' SECOND"))).collect()
    env.execute().wait(300)
    assert rows_of(drop, "symbol", "start_tstamp", "bottom_tstamp", "end_tstamp") == DROP_ROWS
    assert rows_of(within, "symbol", "dropTime", "dropDiff") == [("ACME", at(5.5), 14.0)]
