"""Flink SQL's wrapper statements (funke.table.statements), planned without Spark: EXPLAIN in execute_sql and
explain_sql, the statement sets' and EXECUTE's forms read off a script, and what is refused, as Flink refuses it."""

from __future__ import annotations

import pytest

from funke.errors import PlanError
from funke.pyflink.table import EnvironmentSettings, ResultKind, TableEnvironment
from funke.table.statements import read_script


@pytest.fixture()
def t_env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TABLE s (id INT, name STRING) WITH ('connector'='datagen', 'number-of-rows'='3')")
    t_env.execute_sql("CREATE TABLE k (name STRING) WITH ('connector'='blackhole')")
    return t_env


@pytest.mark.parametrize("statement", [
    "EXPLAIN SELECT name FROM s", "EXPLAIN PLAN FOR SELECT name FROM s", "explain changelog_mode, plan_advice select name from s",
    "EXPLAIN PLAN FOR INSERT INTO k SELECT name FROM s", "EXPLAIN JSON_EXECUTION_PLAN INSERT INTO k SELECT name FROM s",
    "EXPLAIN STATEMENT SET BEGIN INSERT INTO k SELECT name FROM s; INSERT INTO k SELECT 'x' FROM s; END",
    "EXPLAIN EXECUTE STATEMENT SET BEGIN INSERT INTO k SELECT name FROM s; END;",
    "-- a comment first\nEXPLAIN WITH a AS (SELECT name FROM s) SELECT name FROM a",
])  # fmt: skip
def test_explain_gives_one_row_of_funke_s_plan(t_env, statement, capsys):
    result = t_env.execute_sql(statement)
    assert result.get_result_kind() == ResultKind.SUCCESS_WITH_CONTENT
    assert str(result.get_table_schema()) == "root\n |-- result: STRING\n"  # (as PyFlink 2.3's)
    with result.collect() as rows:
        [plan] = [r[0] for r in rows]
    sinks = statement.upper().count("INSERT INTO")
    assert plan.startswith(f"funke plan (streaming), {max(sinks, 1)} sink(s)") and "source generator(3 events" in plan
    assert plan.count("sink blackhole") == sinks
    result.print()  # (the plan's text, then a blank line, as PyFlink prints an EXPLAIN's result)
    assert capsys.readouterr().out == plan.rstrip("\n") + "\n\n"


def test_explain_sql_and_a_statement_set_s_explain_plan_inserts(t_env):
    assert t_env.explain_sql("INSERT INTO k SELECT name FROM s").count("sink blackhole") == 1
    both = t_env.create_statement_set().add_insert_sql("INSERT INTO k SELECT name FROM s").add_insert_sql("INSERT INTO k SELECT 'x' FROM s")
    assert both.explain().startswith("funke plan (streaming), 2 sink(s)")
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.execute_sql("CREATE TABLE s (id INT) WITH ('connector'='datagen', 'number-of-rows'='3')")
    assert batch.explain_sql("SELECT id FROM s").startswith("funke plan (batch)")


@pytest.mark.parametrize(("statement", "message"), [
    ("EXPLAIN ESTIMATED_COST, ESTIMATED_COST SELECT 1", "Duplicate EXPLAIN DETAIL is not allowed"),  # (Flink's words)
    ("EXPLAIN CREATE TABLE x (a INT) WITH ('connector'='blackhole')", "EXPLAIN takes a query, an INSERT INTO or a statement set"),
    ("EXPLAIN SELECT 1; SELECT 2", "EXPLAIN takes a query, an INSERT INTO or a statement set"),
    ("EXECUTE STATEMENT SET BEGIN SELECT name FROM s; END", "a statement set holds INSERT INTO statements only"),
    ("EXECUTE STATEMENT SET BEGIN INSERT INTO k SELECT name FROM s;", "a statement set has no END"),
    ("EXECUTE STATEMENT SET BEGIN STATEMENT SET BEGIN INSERT INTO k SELECT name FROM s; END; END", "a statement set inside a statement set"),
])  # fmt: skip
def test_what_flink_refuses_is_refused(t_env, statement, message):
    with pytest.raises(PlanError, match=message):
        t_env.execute_sql(statement)


def test_a_script_s_wrappers_are_blanked_where_they_stand():
    """Line and column of what is left are the script's: a message about a statement points into the script."""
    script = read_script("BEGIN STATEMENT SET;\n  -- x\nINSERT INTO k SELECT 1;\nEND;\nEXPLAIN SELECT 2;\nEXECUTE INSERT INTO k SELECT 3")
    assert script.text == "                   ;\n  -- x\nINSERT INTO k SELECT 1;\n   ;\n        SELECT 2;\n        INSERT INTO k SELECT 3"
    assert script.explained == [None, (), None] and script.statement_set
    assert read_script("SELECT CASE WHEN a THEN 1 END; SELECT 'a;b'").explained == [None, None]  # (CASE's END; a string's ;)


def test_a_values_statement_is_a_query_of_expr_columns(t_env):
    """``VALUES (1, 'a'), (3, 'bb')`` on its own is a query, its columns ``EXPR$0``, ``EXPR$1`` as in Flink (PyFlink
    2.3 prints the same rows; refused before), and EXPLAIN takes it."""
    assert t_env.sql_query("VALUES (1, 'a'), (3, 'bb')").get_schema().get_field_names() == ["EXPR$0", "EXPR$1"]
    with t_env.execute_sql("EXPLAIN VALUES (1)").collect() as rows:
        assert next(iter(rows))[0].startswith("funke plan (streaming), 1 sink(s)")
