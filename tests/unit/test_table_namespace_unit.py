"""Flink's default catalog and database (no Spark): qualified names, USE and SHOW, as Flink answers them
(checked against PyFlink 2.3's answers for the same statements); other catalogs and databases refused."""

from __future__ import annotations

import logging

import pytest

import funke as fk
from funke.errors import PlanError, UnsupportedError
from funke.plan import nodes
from funke.pyflink.table import EnvironmentSettings, TableEnvironment
from funke.table import StreamTableEnvironment
from funke.table.udf import udf

TABLES = (
    "CREATE TABLE orders (k STRING, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    "CREATE TABLE bids (k STRING, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    "CREATE TEMPORARY VIEW ov AS SELECT k FROM orders",
)


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="namespace-unit"))
    for ddl in TABLES:
        t_env.execute_sql(ddl)
    t_env.create_temporary_view("tv", t_env.sql_query("SELECT * FROM bids"))
    return t_env


def shown(t_env, sql):
    return [tuple(r.values()) for r in t_env.execute_sql(sql).collect()]


def source_of(table) -> str:
    return next(x for x in nodes.walk([table._stream.node]) if isinstance(x, nodes.Source)).uid


def test_a_table_is_found_by_its_name_qualified_with_the_default_database_and_catalog(t_env):
    plain = source_of(t_env.sql_query("SELECT * FROM orders"))
    for name in ("default_database.orders", "default_catalog.default_database.orders", "`default_catalog`.`default_database`.`orders`"):
        assert source_of(t_env.sql_query(f"SELECT * FROM {name}")) == plain, name
    t_env.execute_sql("CREATE TABLE default_catalog.default_database.out (k STRING, v INT) WITH ('connector' = 'print')")
    t_env.execute_sql("CREATE VIEW default_database.w AS SELECT k, v FROM default_database.bids")
    assert {"out", "w"} <= set(t_env.list_tables())
    sink = t_env._insert(*_insert("INSERT INTO default_catalog.default_database.out SELECT * FROM w"))
    assert isinstance(sink, nodes.Sink)


def _insert(sql):
    from funke.dialect.syntax import parse

    return parse(sql), sql


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT * FROM hive.default_database.orders", "the catalog 'hive'"),
        ("SELECT * FROM mydb.orders", "the database 'mydb'"),
    ],
)
def test_a_query_naming_another_catalog_or_database_is_refused_naming_it(t_env, sql, named):
    with pytest.raises(UnsupportedError, match=named):
        t_env.sql_query(sql)


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("INSERT INTO mydb.orders SELECT * FROM bids", "INSERT INTO mydb.orders .* the database 'mydb'"),
        ("CREATE TABLE c.d.t (k STRING) WITH ('connector' = 'print')", "the catalog 'c'"),
        ("CREATE VIEW d.v AS SELECT * FROM bids", "CREATE VIEW d.v .* the database 'd'"),
        ("CREATE DATABASE analytics", "the database 'analytics'"),
        ("CREATE CATALOG hive WITH ('type' = 'hive')", "CREATE CATALOG hive names the catalog 'hive'"),
        ("USE CATALOG hive", "USE CATALOG hive names the catalog 'hive'"),
        ("USE analytics", "the database 'analytics'"),
        ("USE hive.default_database", "the catalog 'hive'"),
        ("SHOW TABLES FROM analytics", "the database 'analytics'"),
        ("SHOW CREATE TABLE orders", "SHOW CREATE TABLE orders is not supported by funke; it answers SHOW CATALOGS"),
    ],
)
def test_statements_naming_another_catalog_or_database_or_another_show_are_refused_naming_them(t_env, sql, named):
    with pytest.raises(UnsupportedError, match=named):
        t_env.execute_sql(sql)
    for refused in (lambda: t_env.use_catalog("hive"), lambda: t_env.use_database("analytics")):
        with pytest.raises(UnsupportedError, match="'hive'|'analytics'"):
            refused()


def test_use_of_the_defaults_is_accepted_and_show_answers_as_flink_does(t_env):
    for use in ("USE CATALOG default_catalog", "USE default_database", "USE `default_catalog`.default_database;"):
        assert t_env.execute_sql(use).content is None
    t_env.use_catalog("default_catalog")
    t_env.use_database("default_database")
    t_env.create_temporary_function("twice", udf(lambda x: x * 2, result_type="BIGINT"))
    assert shown(t_env, "SHOW TABLES") == [("bids",), ("orders",), ("ov",), ("tv",)]  # (views too, as Flink's listTables)
    assert shown(t_env, "show tables from default_catalog.default_database") == shown(t_env, "SHOW TABLES")
    assert shown(t_env, "SHOW VIEWS") == [("ov",), ("tv",)]
    assert shown(t_env, "SHOW TABLES LIKE 'o%'") == [("orders",), ("ov",)]
    assert shown(t_env, "SHOW TABLES NOT LIKE 'o%';") == [("bids",), ("tv",)]
    assert shown(t_env, "SHOW TABLES LIKE '_v'") == [("ov",), ("tv",)]
    assert shown(t_env, "SHOW TABLES LIKE 'zz%'") == []
    assert shown(t_env, "SHOW CATALOGS") == [("default_catalog",)]
    assert shown(t_env, "SHOW DATABASES") == [("default_database",)]
    assert shown(t_env, "SHOW CURRENT CATALOG") == [("default_catalog",)]
    assert shown(t_env, "SHOW CURRENT DATABASE") == [("default_database",)]
    assert shown(t_env, "SHOW USER FUNCTIONS") == [("twice",)]
    assert next(iter(t_env.execute_sql("SHOW VIEWS").collect())) == {"view name": "ov"}
    assert (t_env.list_catalogs(), t_env.list_databases(), t_env.get_current_catalog(), t_env.get_current_database()) == (
        ["default_catalog"], ["default_database"], "default_catalog", "default_database",
    )  # fmt: skip


def test_pyflink_prints_and_collects_a_show_statement_s_answer_as_flink_does(capsys):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for ddl in TABLES:
        t_env.execute_sql(ddl)
    t_env.execute_sql("SHOW TABLES").print()
    t_env.execute_sql("SHOW CURRENT DATABASE").print()
    t_env.execute_sql("SHOW TABLES LIKE 'zz%'").print()
    t_env.execute_sql("USE CATALOG default_catalog").print()
    assert capsys.readouterr().out.splitlines() == [
        "+------------+",
        "| table name |",
        "+------------+",
        "|       bids |",
        "|     orders |",
        "|         ov |",
        "+------------+",
        "3 rows in set",
        "+-----------------------+",
        "| current database name |",
        "+-----------------------+",
        "|      default_database |",
        "+-----------------------+",
        "1 row in set",
        "Empty set",
        "OK",
    ]
    rows = list(t_env.execute_sql("SHOW VIEWS").collect())
    assert [tuple(r) for r in rows] == [("ov",)]


def test_a_script_checks_its_use_statements_and_prints_its_show_statements(capsys):
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="namespace-script"))
    t_env.execute_script(f"USE CATALOG default_catalog; {TABLES[0]}; SHOW TABLES;")
    assert capsys.readouterr().out.splitlines() == [
        "+------------+",
        "| table name |",
        "+------------+",
        "|     orders |",
        "+------------+",
        "1 row in set",
    ]
    with pytest.raises(UnsupportedError, match="the catalog 'hive'"):
        t_env.execute_script("USE CATALOG hive;")
    with pytest.raises(UnsupportedError, match="CREATE CATALOG lake names the catalog 'lake'"):
        t_env.execute_script("CREATE CATALOG lake WITH ('type' = 'iceberg');")
    with pytest.raises(PlanError, match="exists already"):
        t_env.execute_sql("CREATE CATALOG default_catalog WITH ('type' = 'generic_in_memory')")


def test_sqlglot_s_warning_for_a_statement_it_reads_as_a_command_is_not_passed_on(caplog):
    """funke answers SHOW itself or refuses the statement naming it: sqlglot's 'falling back to a Command'
    warning on stderr would only repeat that, so parsing keeps it back (and nothing else sqlglot logs)."""
    from funke.dialect.syntax import parse, parse_script

    with caplog.at_level("WARNING", logger="sqlglot"):
        parse("SHOW TABLES")
        parse_script("SHOW DATABASES; SHOW CREATE TABLE t;")
        logging.getLogger("sqlglot").warning("another warning")
    assert [r.getMessage() for r in caplog.records] == ["another warning"]
