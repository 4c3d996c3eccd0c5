"""Flink SQL's semi and anti joins (IN and EXISTS subqueries, INTERSECT, EXCEPT) without Spark: the
operator's changelogs derived by hand, a property test against the answer over the materialized inputs,
what the planner makes of each query, and each refusal naming its construct."""

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
from funke.table.changelog import ROW_KIND
from funke.table.semi_joins import MultisetJoin, PairCondition, SemiAntiJoin


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="sql-subqueries-unit")
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("a", env.from_collection([], "k string, x int"))
    t_env.create_temporary_view("b", env.from_collection([], "k string, y bigint"))
    return t_env


def joins(table) -> list[SemiAntiJoin]:
    return [x.function for x in n.walk([table._stream.node]) if isinstance(x, CoProcess) and isinstance(x.function, SemiAntiJoin)]


def kinds(records) -> list[tuple]:
    return [(r.value.get(ROW_KIND, "+I"), r.value["x"]) for r in records]


# -- the operator: changelogs derived by hand ------------------------------------------------------


def test_a_semi_join_inserts_the_kept_rows_when_the_first_partner_comes_and_deletes_them_when_the_last_goes():
    op = KeyedCoProcessOperator(SemiAntiJoin(["x"], updating=(False, True)))
    assert kinds(op.process_element1("k", {"x": 1})) == []  # (no partner yet: kept)
    assert kinds(op.process_element2("k", {ROW_KIND: "+I"})) == [("+I", 1)]
    assert kinds(op.process_element2("k", {ROW_KIND: "+I"})) == []  # (a second partner changes nothing)
    assert kinds(op.process_element1("k", {"x": 2})) == [("+I", 2)]
    assert kinds(op.process_element2("k", {ROW_KIND: "-D"})) == []
    assert kinds(op.process_element2("k", {ROW_KIND: "-U"})) == [("-D", 1), ("-D", 2)]  # (its last partner went)


def test_an_anti_join_deletes_its_rows_when_a_partner_comes_and_with_an_insert_only_right_side_forgets_them():
    fn = SemiAntiJoin(["x"], anti=True)
    op = KeyedCoProcessOperator(fn)
    assert kinds(op.process_element1("k", {"x": 1})) == [("+I", 1)]
    assert kinds(op.process_element2("k", {})) == [("-D", 1)]
    assert kinds(op.process_element1("k", {"x": 2})) == []  # (the key has a partner for ever)
    assert op.state_backend.keys("user:left") == []  # (nor does it keep a row it will never send)
    semi = KeyedCoProcessOperator(SemiAntiJoin(["x"]))
    assert kinds(semi.process_element1("k", {"x": 1})) == []
    assert semi.state_backend.keys("user:left") == ["k"]
    assert kinds(semi.process_element2("k", {})) == [("+I", 1)]
    assert kinds(semi.process_element1("k", {"x": 2})) == [("+I", 2)]  # (insert-only: no kind column)
    assert semi.state_backend.keys("user:left") == []
    assert all(ROW_KIND not in r.value for r in semi.process_element1("k", {"x": 3}))


def test_an_updating_left_side_keeps_its_kinds():
    op = KeyedCoProcessOperator(SemiAntiJoin(["x"], updating=(True, False)))
    op.process_element2("k", {})
    assert kinds(op.process_element1("k", {ROW_KIND: "+I", "x": 1})) == [("+I", 1)]
    assert kinds(op.process_element1("k", {ROW_KIND: "-U", "x": 1})) == [("-U", 1)]
    assert kinds(op.process_element1("k", {ROW_KIND: "+U", "x": 2})) == [("+U", 2)]


@st.composite
def arrivals(draw):
    """Rows of two changelogs on keys 0-1: a retraction only of a row its side holds."""
    held: list[Counter] = [Counter(), Counter()]
    out = []
    for _ in range(draw(st.integers(0, 25))):
        side = draw(st.integers(0, 1))
        k, v = draw(st.integers(0, 1)), draw(st.integers(0, 2))
        if +held[side] and draw(st.booleans()):
            k, v = draw(st.sampled_from(sorted(+held[side])))
            held[side][(k, v)] -= 1
            out.append((side, draw(st.sampled_from(("-U", "-D"))), k, v))
        else:
            held[side][(k, v)] += 1
            out.append((side, draw(st.sampled_from(("+I", "+U"))), k, v))
    return out


@settings(max_examples=300, deadline=None)
@given(arrivals(), st.booleans(), st.booleans())
def test_a_semi_or_anti_join_of_two_changelogs_materializes_to_the_rows_with_or_without_partners(rows, anti, right_updates):
    if not right_updates:
        rows = [r for r in rows if r[0] == 0 or r[1] in ("+I", "+U")]
    op = KeyedCoProcessOperator(SemiAntiJoin(["k", "v"], anti=anti, updating=(True, right_updates)))
    result: Counter = Counter()
    held: list[Counter] = [Counter(), Counter()]
    for side, kind, k, v in rows:
        for record in (op.process_element2 if side else op.process_element1)(k, {ROW_KIND: kind, "k": k, "v": v}):
            row = (record.value["k"], record.value["v"])
            if record.value[ROW_KIND] in ("+I", "+U"):
                result[row] += 1
            else:
                assert result[row] > 0, (record.value, result)  # (a retraction takes a row the result holds)
                result[row] -= 1
        held[side][(k, v)] += -1 if kind in ("-U", "-D") else 1
        partners = {key for key, _ in +held[1]}
        expected = Counter({(key, v): c for (key, v), c in (+held[0]).items() if (key in partners) != anti})
        assert +result == expected


@settings(max_examples=300, deadline=None)
@given(arrivals(), st.booleans(), st.booleans(), st.booleans())
def test_a_semi_or_anti_join_with_a_correlated_condition_counts_only_the_partners_each_row_meets(rows, anti, left_updates, right_updates):
    """EXISTS (SELECT ... WHERE b.k = a.k AND b.v > a.v): each left row's answer is its own."""
    for side, flag in ((0, left_updates), (1, right_updates)):
        if not flag:
            rows = [r for r in rows if r[0] != side or r[1] in ("+I", "+U")]
    condition = PairCondition("`r` > `l`", Schema.of("l int, r int"), ("l",), ("r",))
    op = KeyedCoProcessOperator(SemiAntiJoin(["k", "v"], anti=anti, updating=(left_updates, right_updates), condition=condition))
    result: Counter = Counter()
    held: list[Counter] = [Counter(), Counter()]
    for side, kind, k, v in rows:
        value = {ROW_KIND: kind, "k": k, "v": v, "r": v} if side else {ROW_KIND: kind, "k": k, "v": v, "l": v}
        for record in (op.process_element2 if side else op.process_element1)(k, value):
            row = (record.value["k"], record.value["v"])
            assert "l" not in record.value
            if record.value.get(ROW_KIND, "+I") in ("+I", "+U"):
                result[row] += 1
            else:
                assert result[row] > 0, (record.value, result)
                result[row] -= 1
        held[side][(k, v)] += -1 if kind in ("-U", "-D") else 1
        met = lambda key, v: any(kb == key and w > v for kb, w in +held[1])
        assert +result == Counter({(key, v): c for (key, v), c in (+held[0]).items() if met(key, v) != anti})


def test_a_pair_condition_is_compiled_again_after_pickling_and_holds_only_when_true():
    import pickle

    c = PairCondition("`r` BETWEEN `l` - 1 AND `l` + 1", Schema.of("l int, r int"), ("l",), ("r",))
    assert c.holds({"l": 5}, {"r": 6}) and not c.holds({"l": 5}, {"r": 7}) and not c.holds({"l": None}, {"r": 7})
    copy = pickle.loads(pickle.dumps(c))
    assert copy._fn is None and copy.holds({"l": 5}, {"r": 4})


@settings(max_examples=200, deadline=None)
@given(arrivals(), st.booleans())
def test_intersect_all_and_except_all_hold_each_row_min_m_n_and_m_minus_n_times(rows, except_):
    op = KeyedCoProcessOperator(MultisetJoin(["k", "v"], except_=except_, updating=(True, True)))
    result: Counter = Counter()
    held: list[Counter] = [Counter(), Counter()]
    for side, kind, k, v in rows:
        for record in (op.process_element2 if side else op.process_element1)((k, v), {ROW_KIND: kind, "k": k, "v": v}):
            row = (record.value["k"], record.value["v"])
            assert record.value[ROW_KIND] in ("+I", "-D")
            result[row] += 1 if record.value[ROW_KIND] == "+I" else -1
            assert result[row] >= 0
        held[side][(k, v)] += -1 if kind in ("-U", "-D") else 1
        m, n = held
        assert +result == Counter({r: max(m[r] - n[r], 0) if except_ else min(m[r], n[r]) for r in m if (m[r] - n[r] if except_ else min(m[r], n[r])) > 0})


# -- the planner -------------------------------------------------------------------------------------


def test_a_correlated_condition_other_than_an_equality_is_the_semi_join_s_condition_each_side_computing_its_own_part(t_env):
    t = t_env.sql_query("SELECT k, x FROM a t WHERE NOT EXISTS (SELECT * FROM b WHERE b.k = t.k AND UPPER(b.k) > t.k AND b.y BETWEEN t.x - 1 AND t.x + 1)")
    (fn,) = joins(t)
    assert fn.anti and t.columns == ("k", "x") and fn.condition is not None
    # (UPPER(b.k), t.x - 1 and t.x + 1 are hidden columns of their side's rows, computed by Spark; Python compares them)
    assert "UPPER" not in fn.condition.sql and "BETWEEN" in fn.condition.sql
    assert len(fn.condition.left) == 3 and len(fn.condition.right) == 2
    assert [f.dtype for f in fn.condition.schema.fields] == ["string", "string", "int", "int", "bigint"]
    uncorrelated_key = t_env.sql_query("SELECT k, x FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.y > a.x)")
    (fn,) = joins(uncorrelated_key)
    assert not fn.anti and fn.condition is not None and not uncorrelated_key.updating  # (one key for all rows)
    with pytest.raises(fk.errors.SchemaError, match="unknown column 'q'; available columns: k, x$"):
        t_env.sql_query("SELECT k, x FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.y > a.q)")


def test_in_and_exists_are_semi_joins_and_not_exists_an_anti_join(t_env):
    t = t_env.sql_query("SELECT k, x FROM a WHERE x > 1 AND x IN (SELECT y FROM b WHERE y < 9)")
    (fn,) = joins(t)
    assert not fn.anti and t.columns == ("k", "x") and changelog_mode(t._stream.node).describe() == "insert-only"
    both = t_env.sql_query(
        "SELECT * FROM a t WHERE EXISTS (SELECT 1 FROM b WHERE b.k = t.k) AND NOT EXISTS (SELECT 1 FROM b WHERE b.y = t.x)"
    )
    assert sorted(f.anti for f in joins(both)) == [False, True]
    assert both.columns == ("k", "x") and changelog_mode(both._stream.node).describe() == "[+I, -D] no upsert key"
    grouped = t_env.sql_query("SELECT k, x FROM a WHERE k IN (SELECT k FROM b GROUP BY k HAVING SUM(y) > 2)")
    (fn,) = joins(grouped)
    assert fn.inputs_update == (False, True) and grouped.updating
    sets = {q: t_env.sql_query(f"SELECT k FROM a {q} SELECT k FROM b") for q in ("INTERSECT", "EXCEPT", "UNION")}
    assert [f.anti for f in joins(sets["INTERSECT"])] == [False] and [f.anti for f in joins(sets["EXCEPT"])] == [True]
    assert all(t.columns == ("k",) for t in sets.values())
    # (the distinct rows of insert-only ones are insert-only: a deduplication; EXCEPT's anti join deletes)
    assert [q for q, t in sets.items() if t.updating] == ["EXCEPT"]
    bags = {q: t_env.sql_query(f"SELECT k, x FROM a {q} ALL SELECT k, y FROM b") for q in ("INTERSECT", "EXCEPT")}
    assert changelog_mode(bags["INTERSECT"]._stream.node).describe() == "insert-only"  # (min(m, n) only grows)
    assert changelog_mode(bags["EXCEPT"]._stream.node).describe() == "[+I, -D] no upsert key"


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT * FROM a WHERE (k, x) NOT IN (SELECT k, y FROM b)", "NOT IN with several values .* write NOT EXISTS"),
        ("SELECT * FROM a WHERE x NOT IN (SELECT y FROM b WHERE b.k = a.k)", "a correlated NOT IN subquery"),
        ("SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE CONCAT(b.k, a.k) = 'x')", r"the condition CONCAT\(b.k, a.k\) = 'x' of two relations' columns \(at line 1, column \d+\).*any function of one side's columns runs"),
        ("SELECT k FROM a INTERSECT ALL SELECT k FROM b ORDER BY k", "ORDER BY on a INTERSECT ALL"),
        (
            "SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k GROUP BY b.k)",
            "a correlated subquery with a join, GROUP BY",
        ),
        (
            "SELECT * FROM a JOIN b ON a.k = b.k WHERE a.x IN (SELECT y FROM b)",
            "IN or EXISTS with a subquery in the WHERE of a join",
        ),
        ("SELECT * FROM a WHERE x IN (SELECT y FROM b) OR x > 1", "a subquery outside FROM"),
        (
            "SELECT * FROM a WHERE EXISTS (SELECT a.x FROM b WHERE b.k = a.k)",
            "the outer query's column in a subquery's SELECT list",
        ),
        ("SELECT * FROM a WHERE x > (SELECT MAX(y) FROM b WHERE b.y < a.x)", r"the correlated condition b.y < a.x without an equality"),
        (
            "SELECT * FROM a WHERE x > (SELECT MAX(y) FROM b WHERE b.k = a.k AND (b.y < a.x OR a.x IS NULL))",
            r"the correlated condition .* \(it may hold for a NULL of the outer row\)",
        ),
        ("SELECT * FROM a WHERE x > (SELECT MAX(y) FROM b WHERE b.k = a.k GROUP BY k)", "a scalar subquery other than one aggregation"),
        ("SELECT * FROM a WHERE x > (SELECT y FROM b)", "a scalar subquery other than one aggregation without GROUP BY"),
        ("SELECT * FROM a WHERE x > (SELECT MAX(y) FROM b GROUP BY k)", "a scalar subquery other than one aggregation"),
        ("SELECT k, COUNT(*) - (SELECT COUNT(*) FROM b) AS d FROM a GROUP BY k", "a scalar subquery in the SELECT list or HAVING of an aggregation"),
        ("SELECT * FROM a JOIN b ON a.k = b.k WHERE x > (SELECT MAX(y) FROM b)", "a scalar subquery in a query with a join"),
    ],
)
def test_each_refusal_names_its_construct(t_env, sql, message):
    with pytest.raises(fk.errors.UnsupportedError, match=message):
        t_env.sql_query(sql)


def test_a_correlated_scalar_subquery_with_a_condition_besides_the_key_aggregates_per_distinct_outer_values(t_env):
    t = t_env.sql_query("SELECT k, x, (SELECT MAX(y) FROM b WHERE b.k = a.k AND b.y <= a.x - 1) AS m FROM a")
    assert t.columns == ("k", "x", "m") and t.updating
    functions = [type(getattr(x, "function", None)).__name__ for x in n.walk([t._stream.node])]
    # (the distinct outer values (a SELECT DISTINCT), their pairs with b's rows, MAX per values, the LEFT join back)
    assert functions.count("RegularJoin") == 2 and functions.count("GroupAggregate") == 1
    assert sum(isinstance(x, n.Deduplicate) or type(getattr(x, "function", None)).__name__ == "GroupAggregate" for x in n.walk([t._stream.node])) == 2


def test_a_scalar_subquery_is_a_left_join_with_its_one_row_and_updates_as_its_value_changes(t_env):
    t = t_env.sql_query("SELECT k, x, (SELECT COUNT(*) FROM b) AS n FROM a WHERE x > (SELECT MIN(y) FROM b WHERE k IS NOT NULL)")
    assert t.columns == ("k", "x", "n") and t.updating  # (a row is retracted and joined again when a value changes)
    functions = [type(getattr(x, "function", None)).__name__ for x in n.walk([t._stream.node])]
    assert functions.count("GroupAggregate") == 2 and functions.count("RegularJoin") == 2
    grouped = t_env.sql_query("SELECT k, COUNT(*) AS n FROM a WHERE x > (SELECT AVG(y) FROM b) GROUP BY k")
    assert grouped.columns == ("k", "n") and grouped.updating  # (an aggregation over the joined rows retracts)
    with pytest.raises(fk.errors.PlanError, match="gives 2 columns; it must give one"):
        t_env.sql_query("SELECT * FROM a WHERE x > (SELECT MIN(y), MAX(y) FROM b)")


def test_not_in_is_three_anti_joins_by_value_with_the_nulls_and_with_any_row(t_env):
    t = t_env.sql_query("SELECT k, x FROM a WHERE x NOT IN (SELECT y FROM b WHERE k <> 'z') AND x > 0")
    assert t.columns == ("k", "x") and changelog_mode(t._stream.node).describe() == "[+I, -D] no upsert key"
    assert [j.anti for j in joins(t)] == [True, True, True]
    with pytest.raises(fk.errors.PlanError, match="NOT IN at .* compares 1 value with 2 column"):
        t_env.sql_query("SELECT * FROM a WHERE x NOT IN (SELECT y, k FROM b)")


def test_a_wrong_shape_or_an_unknown_column_is_an_error_not_a_refusal(t_env):
    with pytest.raises(fk.errors.PlanError, match="compares 1 value.* 2 column"):
        t_env.sql_query("SELECT * FROM a WHERE x IN (SELECT y, k FROM b)")
    with pytest.raises(fk.errors.PlanError, match="INTERSECT .* of 2 column.* and 1"):
        t_env.sql_query("SELECT k, x FROM a INTERSECT SELECT k FROM b")
    with pytest.raises(fk.errors.PlanError, match="yy"):
        t_env.sql_query("SELECT * FROM a WHERE x IN (SELECT yy FROM b)")


def test_a_correlated_scalar_subquery_is_a_left_join_with_its_rows_aggregated_per_correlated_key(t_env):
    """As Flink decorrelates it: the subquery's rows grouped by the correlated columns, LEFT-joined on the
    equalities; COUNT over no rows is 0, so ``COUNT(*) + 1`` of a row no partner meets is 1 (a CASE on the
    group's own row count), MAX over none NULL (no CASE)."""
    t = t_env.sql_query("SELECT k, x, (SELECT COUNT(*) + 1 FROM b WHERE b.k = a.k AND b.y > 0) AS n FROM a WHERE x >= (SELECT MAX(y) FROM b WHERE b.k = a.k)")
    assert t.columns == ("k", "x", "n") and t.updating
    nodes = list(n.walk([t._stream.node]))
    functions = [type(getattr(x, "function", None)).__name__ for x in nodes]
    assert functions.count("GroupAggregate") == 2 and functions.count("RegularJoin") == 2
    assert sum("IS NULL THEN 0 + 1 ELSE" in repr(e) for x in nodes if isinstance(x, n.Select) for e in x.exprs) == 1
