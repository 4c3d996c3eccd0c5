"""Flink SQL's regular joins over updating inputs, joins of more than two relations, and aggregations
and Top-Ns over joined rows (no Spark): the operator's changelogs derived by hand, a property test
against joining the materialized inputs, and what the planner makes of each query."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funke as fk
from funke.plan import nodes as n
from funke.plan.changelog import changelog_mode
from funke.plan.connect import CoProcess
from funke.plan.types import Schema
from funke.semantics.co_process import KeyedCoProcessOperator
from funke.table import StreamTableEnvironment
from funke.table.aggregate import GroupAggregate
from funke.table.changelog import ROW_KIND
from funke.table.joins import RegularJoin
from funke.table.pair_condition import PairCondition
from funke.table.rank import TopN


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="sql-joins-unit")
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("a", env.from_collection([], "k string, x int"))
    t_env.create_temporary_view("b", env.from_collection([], "k string, y int"))
    t_env.create_temporary_view("c", env.from_collection([], "k string, z int, x int"))
    return t_env


def nodes(table, kind) -> list:
    return [x for x in n.walk([table._stream.node]) if isinstance(x, kind)]


def changes(records) -> list[tuple]:
    return [(r.value[ROW_KIND], r.value["x"], r.value["y"]) for r in records]


# -- the operator: changelogs derived by hand ------------------------------------------------------


def test_an_inner_join_forwards_its_inputs_kinds_and_retracts_the_pairs_of_a_retracted_row():
    op = KeyedCoProcessOperator(RegularJoin([("x", "x")], [("y", "y")], updating=(True, False)))
    assert changes(op.process_element1("k", {ROW_KIND: "+I", "x": 1})) == []
    assert changes(op.process_element2("k", {"y": 7})) == [("+I", 1, 7)]
    assert changes(op.process_element2("k", {"y": 8})) == [("+I", 1, 8)]
    # the left row is updated: its pairs with the same kinds, in the right rows' order
    assert changes(op.process_element1("k", {ROW_KIND: "-U", "x": 1})) == [("-U", 1, 7), ("-U", 1, 8)]
    assert changes(op.process_element1("k", {ROW_KIND: "+U", "x": 2})) == [("+U", 2, 7), ("+U", 2, 8)]
    assert changes(op.process_element1("k", {ROW_KIND: "-D", "x": 2})) == [("-D", 2, 7), ("-D", 2, 8)]
    assert changes(op.process_element2("k", {"y": 9})) == []  # (no left row is held any more)


def test_a_full_join_pads_a_row_again_when_its_last_partner_is_retracted():
    op = KeyedCoProcessOperator(RegularJoin([("x", "x")], [("y", "y")], outer=(True, True), updating=(True, True)))
    assert changes(op.process_element1("k", {ROW_KIND: "+I", "x": 1})) == [("+I", 1, None)]
    assert changes(op.process_element2("k", {ROW_KIND: "+I", "y": 7})) == [("-D", 1, None), ("+I", 1, 7)]
    assert changes(op.process_element2("k", {ROW_KIND: "+I", "y": 8})) == [("+I", 1, 8)]
    assert changes(op.process_element2("k", {ROW_KIND: "-U", "y": 7})) == [("-D", 1, 7)]  # (1 keeps a partner)
    assert changes(op.process_element2("k", {ROW_KIND: "-D", "y": 8})) == [("-D", 1, 8), ("+I", 1, None)]
    assert changes(op.process_element1("k", {ROW_KIND: "-D", "x": 1})) == [("-D", 1, None)]
    assert changes(op.process_element2("k", {ROW_KIND: "+U", "y": 9})) == [("+I", None, 9)]


# -- a property: the changelog, materialized, is the join of the materialized inputs -----------------


@st.composite
def two_changelogs(draw):
    """Arrivals (side, kind, key, value) making a valid changelog on each side (retractions of held rows only)."""
    held: list[list[tuple[str, int]]] = [[], []]
    out = []
    for _ in range(draw(st.integers(0, 25))):
        side = draw(st.sampled_from((0, 1)))
        if held[side] and draw(st.booleans()):
            gone = held[side].pop(draw(st.integers(0, len(held[side]) - 1)))
            out.append((side, draw(st.sampled_from(("-U", "-D"))), *gone))
        else:
            row = (draw(st.sampled_from("ab")), draw(st.integers(0, 2)))  # (equal rows come twice: a multiset)
            held[side].append(row)
            out.append((side, draw(st.sampled_from(("+I", "+U"))), *row))
    return out


@settings(max_examples=300, deadline=None)
@given(two_changelogs(), st.sampled_from([(False, False), (True, False), (False, True), (True, True)]))
def test_a_join_of_two_changelogs_materializes_to_the_join_of_what_they_hold(arrivals, outer):
    op = KeyedCoProcessOperator(
        RegularJoin([("k", "lk"), ("v", "l")], [("k", "rk"), ("v", "r")], outer=outer, updating=(True, True))
    )
    result: Counter = Counter()
    held: list[Counter] = [Counter(), Counter()]
    for side, kind, k, v in arrivals:
        for record in (op.process_element2 if side else op.process_element1)(k, {ROW_KIND: kind, "k": k, "v": v}):
            r = record.value
            row = (r["lk"], r["l"], r["rk"], r["r"])
            if r[ROW_KIND] in ("+I", "+U"):
                result[row] += 1
            else:
                assert result[row] > 0, (r, result)  # (a retraction takes a row the result holds)
                result[row] -= 1
        held[side][(k, v)] += -1 if kind in ("-U", "-D") else 1
        expected: Counter = Counter()
        for (lk, lv), ln in (+held[0]).items():
            partners = [(rv, rn) for (rk, rv), rn in (+held[1]).items() if rk == lk]
            for rv, rn in partners:
                expected[(lk, lv, lk, rv)] += ln * rn
            if outer[0] and not partners:
                expected[(lk, lv, None, None)] += ln
        for (rk, rv), rn in (+held[1]).items():
            if outer[1] and not any(lk == rk for lk, _ in +held[0]):
                expected[(None, None, rk, rv)] += rn
        assert +result == expected


@settings(max_examples=300, deadline=None)
@given(two_changelogs(), st.sampled_from([(True, False), (False, True), (True, True)]))
def test_an_outer_join_with_a_condition_besides_its_keys_pairs_only_the_rows_that_meet_it(arrivals, outer):
    """``a LEFT|RIGHT|FULL JOIN b ON a.k = b.k AND b.v >= a.v``: a row is padded while no partner meets the condition."""
    condition = PairCondition("`rv` >= `lv`", Schema.of("lv int, rv int"), ("lv",), ("rv",))
    op = KeyedCoProcessOperator(
        RegularJoin([("k", "lk"), ("v", "l")], [("k", "rk"), ("v", "r")], outer=outer, updating=(True, True), condition=condition)
    )
    result: Counter = Counter()
    held: list[Counter] = [Counter(), Counter()]
    for side, kind, k, v in arrivals:
        value = {ROW_KIND: kind, "k": k, "v": v, ("rv" if side else "lv"): v}
        for record in (op.process_element2 if side else op.process_element1)(k, value):
            r = record.value
            assert "lv" not in r and "rv" not in r
            row = (r["lk"], r["l"], r["rk"], r["r"])
            if r[ROW_KIND] in ("+I", "+U"):
                result[row] += 1
            else:
                assert result[row] > 0, (r, result)
                result[row] -= 1
        held[side][(k, v)] += -1 if kind in ("-U", "-D") else 1
        expected: Counter = Counter()
        meets = lambda lk, lv, rk, rv: lk == rk and rv >= lv
        for (lk, lv), ln in (+held[0]).items():
            partners = [(rv, rn) for (rk, rv), rn in (+held[1]).items() if meets(lk, lv, rk, rv)]
            for rv, rn in partners:
                expected[(lk, lv, lk, rv)] += ln * rn
            if outer[0] and not partners:
                expected[(lk, lv, None, None)] += ln
        for (rk, rv), rn in (+held[1]).items():
            if outer[1] and not any(meets(lk, lv, rk, rv) for lk, lv in +held[0]):
                expected[(None, None, rk, rv)] += rn
        assert +result == expected


# -- the planner -------------------------------------------------------------------------------------



def test_an_outer_join_s_on_besides_its_keys_is_the_join_s_condition_and_where_still_filters_its_result(t_env):
    t = t_env.sql_query("SELECT a.x, b.y FROM a FULL JOIN b ON a.k = b.k AND b.y >= a.x AND UPPER(b.k) <> 'Z' WHERE a.x IS NOT NULL")
    (fn,) = [x.function for x in n.walk([t._stream.node]) if isinstance(getattr(x, "function", None), RegularJoin)]
    assert fn.outer == (True, True) and fn.condition is not None and "UPPER" not in fn.condition.sql
    assert [f.dtype for f in fn.condition.schema.fields] == ["int", "int", "boolean"]  # (a.x; b.y, UPPER(b.k) <> 'Z')
    assert t.columns == ("x", "y") and t.updating
    assert "NULL" not in fn.condition.sql  # (WHERE is no part of it: it filters the join's rows after)
    # a part whose type only Spark knows is fine: the condition reads it, nothing writes it out
    untyped = t_env.sql_query("SELECT a.x, b.y FROM a LEFT JOIN b ON a.k = b.k AND CHAR_LENGTH(b.k) + a.x <= 6")
    assert untyped.columns == ("x", "y")

def test_a_join_of_an_updating_result_retracts_and_keeps_the_sides_upsert_keys(t_env):
    t_env.create_temporary_view("totals", t_env.sql_query("SELECT k, SUM(x) AS s FROM a GROUP BY k"))
    t = t_env.sql_query("SELECT t.k, t.s, b.y FROM totals t JOIN b ON t.k = b.k WHERE b.y > t.s")
    (join,) = nodes(t, CoProcess)
    assert join.function.inputs_update == (True, False) and t.updating
    assert changelog_mode(t._stream.node).describe() == "[+I, -U, +U] no upsert key"  # (b has none; the kinds are totals')
    both = t_env.sql_query(
        "SELECT t.k, t.s, m.k AS mk, m.y FROM totals t LEFT JOIN (SELECT k, MAX(y) AS y FROM b GROUP BY k) m ON t.k = m.k"
    )
    # (Flink's kinds: +I and -D for the outer side's changes, the inner side's -U forwarded; a pair is one row of each side)
    assert changelog_mode(both._stream.node).describe() == "[+I, -U, -D] upsert key (k, mk)"
    assert both.columns == ("k", "s", "mk", "y")
    dropped = t_env.sql_query("SELECT t.k, m.y FROM totals t LEFT JOIN (SELECT k, MAX(y) AS y FROM b GROUP BY k) m ON t.k = m.k")
    assert changelog_mode(dropped._stream.node).upsert_key is None  # (m.k projected away)


def test_a_join_of_three_relations_is_a_chain_whose_first_join_is_a_view(t_env):
    t = t_env.sql_query(
        "SELECT a.k, b.y, c.z, a.x, c.x AS cx FROM a JOIN b ON a.k = b.k JOIN c ON c.k = b.k WHERE a.x > 1 AND c.z < b.y"
    )
    assert t.columns == ("k", "y", "z", "x", "cx") and not t.updating
    first, second = sorted(nodes(t, CoProcess), key=lambda x: len(n.walk([x])))
    assert [i.keys for i in first.inputs] == [("k",), ("k",)]  # a and b on k
    assert second.inputs[1].keys == ("k",) and second.inputs[0].keys[0].startswith("_fk_")  # (the view's b.k, then c's k)
    # comma joins: each join's keys are in WHERE
    comma = t_env.sql_query("SELECT * FROM a, b, c WHERE a.k = b.k AND b.k = c.k")
    assert comma.columns == ("k", "x", "k0", "y", "k1", "z", "x0") and len(nodes(comma, CoProcess)) == 2
    left = t_env.sql_query("SELECT a.x, b.y, c.z FROM a LEFT JOIN b ON a.k = b.k LEFT JOIN c ON a.k = c.k")
    assert left.updating and len(nodes(left, CoProcess)) == 2
    with pytest.raises(fk.errors.PlanError, match="a and c have a column 'x'"):
        t_env.sql_query("SELECT x FROM a JOIN b ON a.k = b.k JOIN c ON c.k = b.k")


def test_an_aggregation_and_a_top_n_over_a_join_read_the_join_as_a_view(t_env):
    agg = t_env.sql_query("SELECT a.k, MAX(b.y) AS top, COUNT(*) AS n FROM a, b WHERE a.k = b.k AND b.y > a.x GROUP BY a.k")
    assert agg.columns == ("k", "top", "n") and agg.updating
    (fn,) = [x.function for x in nodes(agg, n.KeyedProcess)]
    assert isinstance(fn, GroupAggregate) and not fn.retracting  # (an inner join of insert-only rows is insert-only)
    top = t_env.sql_query(
        "SELECT * FROM (SELECT a.*, b.y, ROW_NUMBER() OVER (PARTITION BY a.k ORDER BY b.y DESC) AS rn FROM a JOIN b ON a.k = b.k) WHERE rn <= 1"
    )
    assert top.columns == ("k", "x", "y", "rn") and top.updating
    (ranked,) = [x.function for x in nodes(top, n.KeyedProcess)]
    assert isinstance(ranked, TopN) and ranked.limit == 1
    distinct = t_env.sql_query("SELECT DISTINCT a.k, b.y FROM a JOIN b ON a.k = b.k")
    assert distinct.columns == ("k", "y") and not distinct.updating and nodes(distinct, n.Deduplicate)  # (of insert-only pairs)


def test_star_and_a_relations_star_in_a_join_of_two(t_env):
    assert t_env.sql_query("SELECT * FROM a JOIN b ON a.k = b.k").columns == ("k", "x", "k0", "y")
    assert t_env.sql_query("SELECT b.*, a.x, a.k FROM a JOIN b ON a.k = b.k").columns == ("k", "y", "x", "k0")
    with pytest.raises(fk.errors.PlanError, match="no relation 'z' in this join"):
        t_env.sql_query("SELECT z.* FROM a JOIN b ON a.k = b.k")
