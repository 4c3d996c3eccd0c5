"""Flink SQL interval joins on Spark: ``JOIN ... ON`` keys and a time bound (or the same in ``WHERE``)
lowered onto the interval join; the streams and pairs of ``test_joins`` (derived there by hand)."""

from __future__ import annotations

from collections import Counter

import pytest

from funke.table import StreamTableEnvironment

from .helpers import ts
from .test_joins import EXPECTED, LEFT, RIGHT, streams

pytestmark = pytest.mark.spark


def views(env, per_batch, left=LEFT, right=RIGHT):
    """A table environment with views ``l`` and ``r`` of those rows (``per_batch`` rows a micro-batch; None: bounded)."""
    t_env = StreamTableEnvironment.create(env)
    a, b = streams(env, left, right, per_batch)
    t_env.create_temporary_view("l", a)
    t_env.create_temporary_view("r", b)
    return t_env


def test_an_interval_join_streaming_drops_late_rows_as_the_datastream_join_does(env):
    t_env = views(env, 3)
    t = t_env.sql_query(
        "SELECT l.id AS lid, r.id AS rid, r.t FROM l JOIN r "
        "ON l.k = r.k AND r.t BETWEEN l.t - INTERVAL '1' SECOND AND l.t + INTERVAL '500' MILLISECOND WHERE r.id <> 'Ra7'"
    )
    assert t.columns == ("lid", "rid", "t")
    out = t_env.to_data_stream(t).collect()
    assert env.execute().wait(300).done
    assert sorted((r["lid"], r["rid"]) for r in out.rows) == [p for p in EXPECTED if p[1] != "Ra7"]


def test_a_bounded_interval_join_in_where_with_an_exclusive_bound_keeps_every_pair(env):
    t_env = views(env, None)
    t = t_env.sql_query(
        "SELECT * FROM l, r WHERE r.k = l.k AND l.t < r.t + INTERVAL '1' SECOND AND r.t <= l.t + INTERVAL '500' MILLISECOND"
    )
    assert t.columns == ("k", "t", "id", "k0", "t0", "id0")
    out = t_env.to_data_stream(t).collect()
    assert env.execute(bounded=True).wait(300).done
    every = sorted((li, ri) for lk, lt, li in LEFT for rk, rt, ri in RIGHT if lk == rk and -1_000 < rt - lt <= 500)
    assert ("La2", "Ra3") not in every  # (-1000 is out)
    assert sorted((r["id"], r["id0"]) for r in out.rows) == every
    assert all(r["k"] == r["k0"] for r in out.rows)


def test_a_lookup_join_then_a_window_aggregation_bounded_with_a_left_join_keeping_unmatched_rows(env):
    import funke as fk

    t_env = views(env, None)
    t_env.create_temporary_view("names", fk.table([("a", "alpha"), ("b", "beta")], "key string, name string"))
    inner = t_env.sql_query("SELECT l.id, l.t, n.name FROM l JOIN names FOR SYSTEM_TIME AS OF l.t AS n ON l.k = n.key")
    t_env.create_temporary_view("named", inner)
    per_window = t_env.sql_query(
        "SELECT name, window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE named, DESCRIPTOR(t), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, name"
    )
    left = t_env.sql_query("SELECT l.id, n.name FROM l LEFT JOIN names AS n ON l.k = n.key WHERE l.id LIKE 'L%'")
    counts, lefts = t_env.to_data_stream(per_window).collect(), t_env.to_data_stream(left).collect()
    assert env.execute(bounded=True).wait(300).done
    name = {"a": "alpha", "b": "beta"}
    expected: dict[tuple[str, int], int] = {}
    for k, t, _ in LEFT:
        if k in name:
            key = (name[k], t // 10_000 * 10)
            expected[key] = expected.get(key, 0) + 1
    assert sorted((r["name"], int(r["window_start"].timestamp()), r["c"]) for r in counts.rows) == sorted(
        (*k, v) for k, v in expected.items()
    )
    assert sorted((r["id"], r["name"]) for r in lefts.rows) == sorted((i, name.get(k)) for k, _, i in LEFT)


WINDOWED = "(SELECT * FROM TABLE(TUMBLE(TABLE {v}, DESCRIPTOR(t), INTERVAL '10' SECOND)))"
#: ``l`` and ``r`` per 10 s window, joined on the windows and the key (``side``: '', LEFT, RIGHT, FULL)
WINDOW_JOIN = (
    f"{WINDOWED.format(v='l')} L {{side}} JOIN {WINDOWED.format(v='r')} R "
    "ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k"
)


@pytest.mark.parametrize("bounded", [False, True])
def test_a_window_join_pairs_each_keys_rows_per_window_and_drops_a_row_late_for_its_window(env, bounded):
    """test_joins' streams and one more left batch, La7 at 5 s: [0 s, 10 s) fired at the end of batch 2
    (Flink's watermark 17 999 ms), so La7 is late in a stream; bounded, it pairs with Ra1."""
    left = [*LEFT, ("a", 5_000, "La7"), ("b", 25_000, "Lb3"), ("z", 1, "Lz")]
    t_env = views(env, None if bounded else 3, left)
    t = t_env.sql_query(f"SELECT L.id AS lid, R.id AS rid, L.k, L.window_start, R.window_end, L.window_time FROM {WINDOW_JOIN.format(side='')}")
    out = t_env.to_data_stream(t).collect()
    assert env.execute(bounded=bounded).wait(300).done
    pairs = {(li, ri) for lk, lt, li in left for rk, rt, ri in RIGHT if lk == rk and lt // 10_000 == rt // 10_000}
    if not bounded:
        pairs.discard(("La7", "Ra1"))
    assert len(pairs) == (28 if bounded else 27)
    assert sorted((r["lid"], r["rid"]) for r in out.rows) == sorted(pairs)
    by_id = {i: t for _, t, i in left}
    for r in out.rows:
        start = by_id[r["lid"]] // 10_000 * 10_000
        assert (r["window_start"], r["window_end"]) == (ts(start), ts(start + 10_000))
        assert r["window_time"] == ts(start + 9_999)


@pytest.mark.parametrize("bounded", [False, True])
def test_a_regular_join_pairs_every_row_of_equal_keys_late_or_not_and_null_keys_never(env, bounded):
    nulls = [(None, 30_000, "Ln")], [(None, 30_000, "Rn")]  # (NULL = NULL is not true: no pair)
    t_env = views(env, None if bounded else 3, LEFT + nulls[0], RIGHT + nulls[1])
    t = t_env.sql_query("SELECT l.id AS lid, r.id AS rid, r.t FROM l JOIN r ON l.k = r.k WHERE l.id <> 'La6'")
    assert t.columns == ("lid", "rid", "t") and not t.updating
    out = t_env.to_data_stream(t).collect()
    env.execute(bounded=bounded).wait(300)
    expected = sorted((li, ri, ts(rt)) for lk, _, li in LEFT for rk, rt, ri in RIGHT if lk == rk and li != "La6")
    assert sorted((r["lid"], r["rid"], r["t"]) for r in out.rows) == expected
    assert len(expected) == 5 * 7 + 2 * 2  # (each a with each a, b with b, late rows too; z and y have no partner)


def test_a_regular_join_keeps_rows_for_the_state_ttl_of_processing_time(env):
    import funke as fk
    from funke.testing import TestStream, run

    script = (
        TestStream(schema="side string, k string, v bigint")
        .add_elements([("L", "a", 1)], timestamps=[0])  # at processing time 0
        .advance_processing_time(fk.seconds(60))
        .add_elements([("R", "a", 10)], timestamps=[0])  # 60 s: L1 (written at 0, TTL 90 s) is alive
        .advance_processing_time(fk.seconds(60))
        .add_elements([("R", "a", 20), ("L", "a", 2)], timestamps=[0, 0])  # 120 s: L1 expired, R10 alive
    )
    t_env = StreamTableEnvironment.create(env)
    t_env.get_config().set("table.exec.state.ttl", "90 s")
    t_env.create_temporary_view("ev", env.from_source(script))
    t = t_env.sql_query(
        "SELECT l.v AS lv, r.v AS rv FROM (SELECT * FROM ev WHERE side = 'L') l JOIN (SELECT * FROM ev WHERE side = 'R') r ON l.k = r.k"
    )
    pairs = t_env.to_data_stream(t)
    result = run(env, pairs)
    assert sorted((r["lv"], r["rv"]) for r in result[pairs]) == [(1, 10), (2, 10), (2, 20)]  # not (1, 20)


@pytest.mark.parametrize(("side", "bounded"), [("FULL", False), ("LEFT", True)])
def test_an_outer_regular_join_retracts_a_padded_row_when_its_first_partner_comes(env, side, bounded):
    t_env = StreamTableEnvironment.create(env)
    orders = [("a", 1), ("b", 2), ("a", 3), (None, 4), ("c", 5), ("b", 6)]
    prices = [("b", "B1"), ("d", "D1"), ("a", "A1"), (None, "N1"), ("b", "B2"), ("e", "E1")]
    per = None if bounded else 2
    t_env.create_temporary_view("o", env.from_collection([{"k": k, "id": i} for k, i in orders], "k string, id bigint", rows_per_batch=per))
    t_env.create_temporary_view("p", env.from_collection([{"k": k, "name": n} for k, n in prices], "k string, name string", rows_per_batch=per))
    t = t_env.sql_query(f"SELECT o.id, p.name FROM o {side} JOIN p ON o.k = p.k")
    assert t.updating
    changes = t_env.to_changelog_stream(t).collect()
    # the ON's conditions besides the keys decide which rows pair up (a row meeting none is padded): one of
    # the prices' side only, one of both sides' (each side's part computed by Spark, their sum per pair)
    on = t_env.sql_query(f"SELECT o.id, p.name FROM o {side} JOIN p ON o.k = p.k AND p.name <> 'B2' AND CHAR_LENGTH(p.name) + o.id <= 6")
    on_changes = t_env.to_changelog_stream(on).collect()
    env.execute(bounded=bounded).wait(300)

    def outer_join(meets) -> Counter:
        pairs = [(i, n) for k, i in orders for kk, n in prices if k is not None and k == kk and meets(i, n)]
        lonely_orders = [(i, None) for k, i in orders if not any(k is not None and k == kk and meets(i, n) for kk, n in prices)]
        lonely_prices = [(None, n) for k, n in prices if not any(k is not None and k == kk and meets(i, n) for kk, i in orders)]
        return Counter(pairs + lonely_orders + (lonely_prices if side == "FULL" else []))

    assert _applied(changes.rows) == outer_join(lambda i, n: True)
    assert _applied(on_changes.rows) == outer_join(lambda i, n: n != "B2" and len(n) + i <= 6)


def _applied(rows) -> Counter:
    """An outer join's changelog applied in order: each -D takes back a row it inserted before."""
    table: Counter = Counter()
    for r in rows:
        row = (r["id"], r["name"])
        if r["row_kind"] == "-D":
            assert table[row] > 0, (row, rows)
            table[row] -= 1
        else:
            assert r["row_kind"] == "+I"
            table[row] += 1
    return +table


@pytest.mark.parametrize(("side", "bounded"), [("FULL", False), ("LEFT", True)])
def test_an_outer_window_join_pads_the_rows_without_a_partner_in_their_window(env, side, bounded):
    """test_joins' streams, one row late for a window that fired (La7: dropped when streaming), and a
    NULL key on each side (they meet nobody). Per window: every pair, and the rows of an outer side
    without a partner of their key in their window, padded with NULLs, window columns included."""
    from collections import Counter

    left = [*LEFT, ("a", 5_000, "La7"), ("b", 25_000, "Lb3"), (None, 31_000, "Ln")]
    right = [*RIGHT, (None, 31_000, "Rn")]
    t_env = views(env, None if bounded else 3, left, right)
    t = t_env.sql_query(f"SELECT L.id AS lid, R.id AS rid, L.window_start AS lws, R.window_start AS rws FROM {WINDOW_JOIN.format(side=side)}")
    out = t_env.to_data_stream(t).collect()
    # the ON's condition besides the window and the keys decides which rows pair up (a row meeting none is padded)
    on = t_env.sql_query(f"SELECT L.id AS lid, R.id AS rid FROM {WINDOW_JOIN.format(side=side)} AND R.t <= L.t - INTERVAL '0.5' SECOND")
    on_out = t_env.to_data_stream(on).collect()
    assert env.execute(bounded=bounded).wait(300).done
    kept = [row for row in left if bounded or row[2] != "La7"]

    def meet(x, y):
        return x[0] is not None and x[0] == y[0] and x[1] // 10_000 == y[1] // 10_000

    def outer_join(meets) -> Counter:
        expected = Counter((x[2], y[2]) for x in kept for y in right if meets(x, y))
        expected.update((x[2], None) for x in kept if not any(meets(x, y) for y in right))
        if side == "FULL":
            expected.update((None, y[2]) for y in right if not any(meets(x, y) for x in kept))
        return expected

    expected = outer_join(meet)
    assert Counter((r["lid"], r["rid"]) for r in out.rows) == expected
    assert Counter((r["lid"], r["rid"]) for r in on_out.rows) == outer_join(lambda x, y: meet(x, y) and y[1] <= x[1] - 500)
    assert expected[("Ln", None)] == 1 and expected[("Lb3", None)] == 1 and (side == "LEFT" or expected[(None, "Rn")] == 1)
    starts: dict = {}  # (an id may name rows of several windows: Lz, Ry)
    for _, t, i in (*left, *right):
        starts.setdefault(i, set()).add(ts(t // 10_000 * 10_000))
    for r in out.rows:  # (a padded side's window columns are NULL, as its other columns are)
        for i, start in ((r["lid"], r["lws"]), (r["rid"], r["rws"])):
            assert (start is None) if i is None else (start in starts[i]), r
