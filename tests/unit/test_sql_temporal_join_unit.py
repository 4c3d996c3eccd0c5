"""Flink SQL's event-time temporal join (``JOIN r FOR SYSTEM_TIME AS OF o.ts``), no Spark: the operator's results
derived by hand and checked against the versions' meaning over random interleavings, and what the planner makes
of the join and refuses. tests/spark/test_sql_temporal_join.py runs it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funke as fk
from funke.plan import nodes
from funke.plan.changelog import changelog_mode
from funke.plan.types import Schema
from funke.semantics.co_process import KeyedCoProcessOperator
from funke.table import StreamTableEnvironment
from funke.table.pair_condition import PairCondition
from funke.table.temporal_join import TemporalJoin

L, R = [("k", "k"), ("t", "t"), ("x", "x")], [("v", "v"), ("u", "u")]


def operator(outer: bool = False) -> KeyedCoProcessOperator:
    return KeyedCoProcessOperator(TemporalJoin(L, R, "t", "u", outer=outer))


def test_each_left_row_meets_the_version_of_its_time_when_the_watermark_passes_it():
    op = operator(outer=True)
    for v, u, kind in [("a", 10, "+I"), ("b", 20, "+U"), ("gone", 30, "-D"), ("c", 40, "+I"), ("old", 10, "-U")]:
        assert list(op.process_element2(1, {"v": v, "u": u, "_fk_row_kind": kind}, u)) == []  # (a -U is not a version)
    for t, x in [(5, "before"), (10, "at"), (25, "between"), (35, "deleted"), (45, "after")]:
        assert list(op.process_element1(1, {"k": 1, "t": t, "x": x}, t)) == []  # (each waits for the watermark)
    first = [(r.value["x"], r.value["v"]) for r in op.advance_watermark(24)]
    assert first == [("before", None), ("at", "a")]  # (at its time: the version from then on)
    rest = [(r.value["x"], r.value["v"]) for r in op.advance_watermark(50)]
    assert rest == [("between", "b"), ("deleted", None), ("after", "c")]
    inner = operator()
    inner.process_element2(1, {"v": "a", "u": 10}, 10)
    inner.process_element1(1, {"k": 1, "t": 5, "x": "early"}, 5)
    inner.process_element1(1, {"k": 1, "t": 15, "x": "late"}, 15)
    assert [r.value["x"] for r in inner.advance_watermark(20)] == ["late"]  # (an inner join drops a row without one)


def test_versions_before_the_latest_one_at_the_watermark_are_let_go():
    op = operator()
    for u in (10, 20, 30):
        op.process_element2(1, {"v": u, "u": u}, u)
    op.process_element1(1, {"k": 1, "t": 25, "x": "x"}, 25)
    assert [r.value["v"] for r in op.advance_watermark(25)] == [20]
    kept = {r["state"]: r["value"] for r in op.snapshot()["state"]}
    assert sorted(kept["user:versions"]) == [20, 30] and "user:waiting" not in kept  # (10 let go; no row waits)
    op.process_element1(1, {"k": 1, "t": 22, "x": "behind"}, 22)  # (behind the watermark: joined at the next one)
    assert [r.value["v"] for r in op.advance_watermark(26)] == [20]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["L", "R", "D"]), st.integers(0, 30)), max_size=30),
    st.booleans(),
    st.booleans(),
)
def test_the_joined_rows_are_each_left_rows_version_at_its_time(events, outer, conditioned):
    """Every row and version arrive before the watermark passes them: the result is, per left row, the
    latest version at or before its time (none, or a deletion: padded or dropped). ``conditioned``: a LEFT
    join's ON besides the key (the version's number at least the row's): a row meets its version only then."""
    condition = PairCondition("`rv` >= `lx`", Schema.of("lx int, rv int"), ("lx",), ("rv",)) if conditioned else None
    op = KeyedCoProcessOperator(TemporalJoin(L, R, "t", "u", outer=outer, condition=condition))
    versions: dict[int, object] = {}
    lefts = []
    for i, (what, t) in enumerate(events):
        if what == "L":
            lefts.append((t, i))
            op.process_element1(1, {"k": 1, "t": t, "x": i, "lx": i}, t)
        else:
            op.process_element2(1, {"v": i, "u": t, "rv": i, **({"_fk_row_kind": "-D"} if what == "D" else {})}, t)
            versions[t] = None if what == "D" else i  # (a later version of the same time replaces it)
    got = sorted((r.value["x"], r.value["v"]) for r in op.advance_watermark(100))
    expected = []
    for t, i in lefts:
        at = [u for u in versions if u <= t]
        v = versions[max(at)] if at else None
        if v is not None and conditioned and v < i:
            v = None
        if v is not None or outer:
            expected.append((i, v))
    assert got == sorted(expected)


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="sql-temporal-unit")
    t_env = StreamTableEnvironment.create(env)
    wm = lambda c: fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner(c)
    t_env.create_temporary_view("orders", env.from_collection([], "id int, cur string, ts timestamp", watermarks=wm("ts")))
    t_env.create_temporary_view("rates_log", env.from_collection([], "cur string, rate int, u timestamp", watermarks=wm("u")))
    t_env.create_temporary_view("plain", env.from_collection([], "cur string, rate int"))
    t_env.create_temporary_view("rates", t_env.sql_query(
        "SELECT cur, rate, u FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cur ORDER BY u DESC) AS rn FROM rates_log) WHERE rn = 1"
    ))  # fmt: skip
    return t_env


def test_a_versioned_view_or_insert_only_rows_with_event_time_are_joined_as_of_the_left_rows_time(t_env):
    t = t_env.sql_query("SELECT o.id, r.rate FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur WHERE r.rate > 1")
    assert t.columns == ("id", "rate") and not t.updating
    fn = next(x.function for x in nodes.walk([t._stream.node]) if isinstance(getattr(x, "function", None), TemporalJoin))
    assert (fn.left_time, fn.right_time, fn.outer) == ("ts", "u", False)
    left = t_env.sql_query("SELECT o.id, r.rate FROM orders o LEFT JOIN rates_log FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur")
    assert changelog_mode(left._stream.node).describe() == "insert-only" and "TemporalJoin" in left.explain()
    on = t_env.sql_query("SELECT o.id, r.rate FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur AND r.rate > o.id - 2")
    fn = next(x.function for x in nodes.walk([on._stream.node]) if isinstance(getattr(x, "function", None), TemporalJoin))
    assert fn.outer and fn.condition is not None and on.columns == ("id", "rate") and not on.updating
    assert (fn.left_time, fn.right_time) == ("ts", "u")  # (the sides' time attributes kept beside the condition's columns)


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("SELECT o.id FROM orders o JOIN plain FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur", fk.errors.PlanError,
         "reads plain as a versioned table, which needs an event-time attribute"),
        ("SELECT o.id FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.id AS r ON o.cur = r.cur", fk.errors.UnsupportedError,
         "FOR SYSTEM_TIME AS OF o.id"),
        ("SELECT o.id FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.id = r.rate", fk.errors.PlanError,
         "must join on the versioned table's key (cur)"),
        ("SELECT o.id FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur AND CONCAT(r.cur, o.cur) = 'x'",
         fk.errors.UnsupportedError, "the condition CONCAT(r.cur, o.cur) = 'x' of two relations' columns"),
        ("SELECT o.id FROM (SELECT *, PROCTIME() AS pt FROM orders) o JOIN rates FOR SYSTEM_TIME AS OF o.pt AS r ON o.cur = r.cur",
         fk.errors.UnsupportedError, "a temporal join on processing time of a view"),
        ("SELECT o.id FROM orders o FULL JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur", fk.errors.UnsupportedError,
         "a FULL temporal join"),
    ],
)  # fmt: skip
def test_what_a_temporal_join_refuses_is_named(t_env, sql, error, message):
    with pytest.raises(error, match="Flink SQL") as e:
        t_env.sql_query(sql)
    assert message in str(e.value)
