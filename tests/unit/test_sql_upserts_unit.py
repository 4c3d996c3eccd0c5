"""An updating result written by a key (no Spark): an upsert sink takes the changes as they come where the
result's upsert key is within the sink's primary key, and through Flink's sink upsert materializer
elsewhere; ``to_changelog_stream(changelog_mode="upsert")``; ``explain()`` names each node's changelog mode."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funke as fk
from funke.plan import nodes
from funke.table import StreamTableEnvironment
from funke.table.changelog import ROW_KIND
from funke.table.upsert import UpsertMaterializer

JDBC = "WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://h/db', 'table-name' = 'x')"


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="sql-upserts-unit")
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("a", env.from_collection([], "k string, x int"))
    t_env.create_temporary_view("b", env.from_collection([], "k string, y int"))
    return t_env


def materializers(sink_or_stream) -> list:
    node = getattr(sink_or_stream, "node", sink_or_stream)
    return [x.function for x in nodes.walk([node]) if isinstance(x, nodes.KeyedProcess) and isinstance(x.function, UpsertMaterializer)]


def test_an_upsert_sink_takes_the_changes_as_they_come_where_its_key_holds_the_results_upsert_key(t_env):
    t_env.execute_sql(f"CREATE TABLE by_k (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) {JDBC}")
    t_env.execute_sql(f"CREATE TABLE by_n (n BIGINT, k STRING, PRIMARY KEY (n) NOT ENFORCED) {JDBC}")
    t_env.execute_script("INSERT INTO by_k SELECT k, COUNT(*) FROM a GROUP BY k;")
    assert materializers(t_env.env._sinks[-1]) == []  # (each k's changes come from its key of the aggregation, in order)
    # a key other than the result's: each n's rows come from several k, in any order: materialized per n first
    t_env.execute_script("INSERT INTO by_n SELECT n, k FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k);")
    (m,) = materializers(t_env.env._sinks[-1])
    assert m.key == ("n",)
    # a join of an updating result has no upsert key (b has none): materialized by the sink's key
    t_env.execute_script(
        "INSERT INTO by_k SELECT t.k, t.n FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) t JOIN b ON t.k = b.k;"
    )
    # (two inserts into by_k: one sink of their union where the first stands; only the second's materialized)
    assert [s.explicit_uid for s in t_env.env._sinks] == ["insert-by_k", "insert-by_n"]
    assert [m.key for m in materializers(t_env.env._sinks[0])] == [("k",)]


def test_to_changelog_stream_in_upsert_mode_sends_one_row_per_key(t_env):
    counts = t_env.sql_query("SELECT k, COUNT(*) AS n FROM a GROUP BY k")
    stream = t_env.to_changelog_stream(counts, changelog_mode="upsert")
    assert stream.columns == ("row_kind", "k", "n") and [m.key for m in materializers(stream)] == [("k",)]
    assert [m.key for m in materializers(t_env.to_changelog_stream(counts, changelog_mode="upsert", key=["n"]))] == [("n",)]
    inserts = t_env.to_changelog_stream(t_env.sql_query("SELECT k, x FROM a"), changelog_mode="upsert", key=["k"])
    assert inserts.columns == ("row_kind", "k", "x")  # (an insert-only table by a key: a later row of a key updates it)
    with pytest.raises(fk.errors.PlanError, match="the table has no upsert key .*: name the columns that identify a row, key="):
        t_env.to_changelog_stream(
            t_env.sql_query("SELECT n FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k)"), changelog_mode="upsert"
        )
    with pytest.raises(fk.errors.PlanError, match="changelog_mode is 'all' .* or 'upsert'"):
        t_env.to_changelog_stream(counts, changelog_mode="retract-ish")


def test_explain_names_each_nodes_changelog_mode(t_env):
    plan = t_env.sql_query("SELECT k, MAX(x) AS m FROM a GROUP BY k").explain()
    assert "changes: [+I, -U, +U] upsert key (k)" in plan and "changes: insert-only" in plan
    assert "changes:" not in t_env.sql_query("SELECT k FROM a WHERE x > 1").explain()  # (an insert-only plan says nothing)


@st.composite
def changes_of_one_key(draw):
    """A valid changelog of rows of one sink key coming from several upstream keys: retractions of held rows only."""
    held: list[int] = []
    out = []
    for _ in range(draw(st.integers(0, 25))):
        if held and draw(st.booleans()):
            out.append((draw(st.sampled_from(("-U", "-D"))), held.pop(draw(st.integers(0, len(held) - 1)))))
        else:
            v = draw(st.integers(0, 3))
            held.append(v)
            out.append((draw(st.sampled_from(("+I", "+U"))), v))
    return out


@settings(max_examples=300, deadline=None)
@given(changes_of_one_key())
def test_the_materializer_keeps_a_key_at_one_of_the_rows_the_changelog_holds_for_it(changes):
    m = UpsertMaterializer(("k",))
    rows: list = []
    held: list[int] = []
    written = None  # what an upsert sink holds for the key
    for kind, v in changes:
        rows, out = m.step(rows, {ROW_KIND: kind, "k": "a", "v": v})
        if kind in ("-U", "-D"):
            held.remove(v)
        else:
            held.append(v)
        for c in out:
            assert c[ROW_KIND] in ("+I", "+U", "-D")
            assert (c[ROW_KIND] == "+I") == (written is None) or c[ROW_KIND] == "-D"
            written = None if c[ROW_KIND] == "-D" else c["v"]
        assert (written is None) == (not held) and (written is None or written in held)
