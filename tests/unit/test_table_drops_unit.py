"""Flink SQL's DROP TABLE / DROP VIEW and the Table API's drops (no Spark), by Flink's rules: each outcome below is
what PyFlink 2.3.0 answered for the same statements in the same order (by hand; its messages shortened)."""

from __future__ import annotations

import pytest

import funke as fk
from funke.errors import PlanError, UnsupportedError
from funke.pyflink.table import EnvironmentSettings, TableEnvironment
from funke.table import StreamTableEnvironment

DATAGEN = "(x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3')"


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="drops-unit"))
    for sql in (f"CREATE TABLE a {DATAGEN}", f"CREATE TEMPORARY TABLE b {DATAGEN}", "CREATE VIEW va AS SELECT x FROM a",
                "CREATE TEMPORARY VIEW vb AS SELECT x FROM b"):  # fmt: skip
        t_env.execute_sql(sql)
    return t_env


def outcome(t_env, sql: str) -> str:
    try:
        t_env.execute_sql(sql)
    except PlanError as e:
        return str(e).split(": ", 2)[-1]
    return "OK"


def test_a_drop_takes_the_kind_and_the_temporariness_the_object_was_created_with(t_env):
    """Flink drops a permanent table with DROP TABLE and a temporary one with DROP TEMPORARY TABLE (views alike); the
    other kind, or the other temporariness, is refused even with IF EXISTS, which keeps only a missing name quiet. It
    was all refused ('a DROP statement')."""
    does_not_exist = "with identifier 'default_catalog.default_database.{}' does not exist"
    assert [(sql, outcome(t_env, sql)) for sql in [
        "DROP VIEW a", "DROP TABLE va", "DROP TABLE b", "DROP TABLE IF EXISTS b", "DROP TEMPORARY TABLE a", "DROP TEMPORARY VIEW b",
        "DROP TABLE a", "DROP TABLE IF EXISTS a", "DROP TABLE a", "DROP VIEW IF EXISTS nope", "DROP VIEW nope",
        "DROP TEMPORARY VIEW va", "DROP VIEW vb", "DROP VIEW va", "DROP TEMPORARY VIEW vb", "DROP TEMPORARY TABLE IF EXISTS b",
        "DROP TEMPORARY TABLE IF EXISTS b",
    ]] == [
        ("DROP VIEW a", "view " + does_not_exist.format("a")),
        ("DROP TABLE va", "table " + does_not_exist.format("va")),
        ("DROP TABLE b", ("temporary table with identifier 'default_catalog.default_database.b' exists; drop it first before "
                         "removing the permanent table (DROP TEMPORARY TABLE b)")),
        ("DROP TABLE IF EXISTS b", ("temporary table with identifier 'default_catalog.default_database.b' exists; drop it first "
                                   "before removing the permanent table (DROP TEMPORARY TABLE b)")),
        ("DROP TEMPORARY TABLE a", "temporary table or view " + does_not_exist.format("a") + " (a is a permanent table: DROP TABLE a)"),
        ("DROP TEMPORARY VIEW b", "temporary table or view " + does_not_exist.format("b")),
        ("DROP TABLE a", "OK"),
        ("DROP TABLE IF EXISTS a", "OK"),
        ("DROP TABLE a", "table " + does_not_exist.format("a")),
        ("DROP VIEW IF EXISTS nope", "OK"),
        ("DROP VIEW nope", "view " + does_not_exist.format("nope")),
        ("DROP TEMPORARY VIEW va", "temporary table or view " + does_not_exist.format("va") + " (va is a permanent view: DROP VIEW va)"),
        ("DROP VIEW vb", ("temporary view with identifier 'default_catalog.default_database.vb' exists; drop it first before "
                         "removing the permanent view (DROP TEMPORARY VIEW vb)")),
        ("DROP VIEW va", "OK"),
        ("DROP TEMPORARY VIEW vb", "OK"),
        ("DROP TEMPORARY TABLE IF EXISTS b", "OK"),
        ("DROP TEMPORARY TABLE IF EXISTS b", "OK"),
    ]  # fmt: skip
    assert t_env.list_tables() == []


def test_a_view_over_a_dropped_object_fails_when_read_and_reads_a_new_one_of_the_name(t_env):
    """Flink expands a view's query when it is read: after DROP of what it reads the view is "not found", and once an
    object of that name is created again the view reads it (through a view over a view too)."""
    t_env.execute_sql("CREATE VIEW pv AS SELECT x FROM b")
    t_env.execute_sql("CREATE VIEW pv2 AS SELECT x FROM pv")
    t_env.execute_sql("DROP VIEW pv")
    with pytest.raises(PlanError, match="no view named 'pv'"):
        t_env.sql_query("SELECT * FROM pv2")
    t_env.execute_sql("CREATE VIEW pv AS SELECT x + 1 AS x FROM b")
    assert "x + 1 AS x" in t_env.sql_query("SELECT * FROM pv2").explain()
    t_env.execute_sql("DROP TEMPORARY TABLE b")
    with pytest.raises(PlanError, match="no view named 'b'"):
        t_env.sql_query("SELECT * FROM vb")
    with pytest.raises(PlanError, match="no view named 'b'"):
        t_env.sql_query("SELECT * FROM pv2")
    t_env.execute_sql("CREATE TEMPORARY TABLE b (x BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2')")
    assert [(f.name, f.dtype) for f in t_env.sql_query("SELECT * FROM vb").get_schema().fields] == [("x", "bigint")]  # (the new b's type)


def test_the_table_api_drops_answer_whether_there_was_one_as_pyflink_s():
    """PyFlink's drop_temporary_table/view answer False for a name that is not a temporary one of that kind;
    drop_table/view (ignore_if_not_exists=True by default) False for a missing one."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(f"CREATE TABLE c {DATAGEN}")
    t_env.create_temporary_view("v", t_env.from_elements([(1,)], ["x"]))
    assert (t_env.drop_temporary_table("c"), t_env.drop_temporary_view("c"), t_env.drop_temporary_table("v")) == (False, False, False)
    assert (t_env.drop_table("c"), t_env.drop_table("c"), t_env.drop_temporary_view("v"), t_env.drop_temporary_view("v")) == (True, False, True, False)
    with pytest.raises(PlanError, match="table with identifier 'default_catalog.default_database.c' does not exist"):
        t_env.drop_table("c", ignore_if_not_exists=False)
    assert t_env.list_tables() == []


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("DROP TABLE a, b", UnsupportedError, "DROP TABLE of 2 names (at line 1, column 12) is not supported by funke"),
        ("DROP DATABASE d", UnsupportedError, "names the database 'd': funke has Flink's default database only"),
        ("DROP CATALOG c", UnsupportedError, "DROP CATALOG c names the catalog 'c': funke has Flink's default in-memory catalog only"),
        ("DROP CATALOG default_catalog", PlanError, "DROP CATALOG default_catalog: the catalog in use cannot be dropped"),
        ("DROP TABLE other_db.a", UnsupportedError, "names the database 'other_db'"),
    ],
)  # fmt: skip
def test_drops_of_what_funke_does_not_have_are_refused_naming_them(t_env, sql, error, message):
    with pytest.raises(error, match="Flink SQL") as e:
        t_env.execute_sql(sql)
    assert message in str(e.value)
