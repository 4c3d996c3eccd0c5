"""Flink SQL interval joins on Spark: ``JOIN ... ON`` keys and a time bound (or the same in ``WHERE``)
lowered onto the interval join; the streams and pairs of ``test_joins`` (derived there by hand)."""

from __future__ import annotations

import pytest

from funke.table import StreamTableEnvironment

from .test_joins import EXPECTED, LEFT, RIGHT, streams

pytestmark = pytest.mark.spark


def views(env, per_batch):
    t_env = StreamTableEnvironment.create(env)
    a, b = streams(env, LEFT, RIGHT, per_batch)
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
