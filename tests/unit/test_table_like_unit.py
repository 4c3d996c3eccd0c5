"""Flink SQL's ``CREATE TABLE ... LIKE base [(options)]`` (no Spark): the merged table by Flink's rules. Every outcome is
PyFlink 2.3.0's for the same statements in the same order (by hand): DESCRIBE's rows, the options SHOW CREATE TABLE
listed, or the error (its words shortened)."""

from __future__ import annotations

import pytest

import funke as fk
from funke.errors import PlanError
from funke.table import StreamTableEnvironment

BASE = (
    "CREATE TABLE t1 (id INT, ts TIMESTAMP(3), c AS id + 1, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, "
    "PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '5')"
)
ID, ID_FREE = ["id", "INT", False, "PRI(id)", None], ["id", "INT", False, None, None]
TS, TS_PLAIN = ["ts", "TIMESTAMP(3) *ROWTIME*", True, None, None], ["ts", "TIMESTAMP(3)", True, None, None]
C = ["c", "INT", False, None, "AS `id` + 1"]
DATAGEN5 = {"connector": "datagen", "number-of-rows": "5"}


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="like-unit"))
    t_env.execute_sql(BASE)
    return t_env


@pytest.mark.parametrize(
    ("sql", "described", "options"),
    [
        ("CREATE TABLE t2 (x INT) WITH ('rows-per-second' = '7', 'number-of-rows' = '9') LIKE t1",
         [ID, TS, C, ["x", "INT", True, None, None]], {"connector": "datagen", "number-of-rows": "9", "rows-per-second": "7"}),
        ("CREATE TABLE t4 (WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) LIKE t1 (OVERWRITING WATERMARKS)", [ID, TS, C], DATAGEN5),
        ("CREATE TABLE t5 WITH ('connector' = 'print') LIKE t1 (EXCLUDING ALL)", [ID_FREE, TS_PLAIN], {"connector": "print"}),
        ("CREATE TABLE t6 WITH ('connector' = 'print') LIKE t1 (EXCLUDING OPTIONS)", ["id", "ts", "c"], {"connector": "print"}),
        ("CREATE TABLE t7 WITH ('connector' = 'print') LIKE t1 (EXCLUDING ALL INCLUDING GENERATED)", ["id", "ts", "c"], {"connector": "print"}),
        ("CREATE TABLE t10 (y INT) LIKE t1 (EXCLUDING WATERMARKS EXCLUDING CONSTRAINTS OVERWRITING OPTIONS)",
         [ID_FREE, TS_PLAIN, C, ["y", "INT", True, None, None]], DATAGEN5),
        ("CREATE TABLE t12 (c AS id + 2) LIKE t1 (OVERWRITING GENERATED)", [ID, TS, ["c", "INT", False, None, "AS `id` + 2"]], DATAGEN5),
        ("CREATE TABLE t16 (z INT) WITH ('connector' = 'print') LIKE t1 (EXCLUDING OPTIONS EXCLUDING WATERMARKS)", ["id", "ts", "c", "z"],
         {"connector": "print"}),
    ],
)  # fmt: skip
def test_a_table_like_another_merges_its_columns_watermark_key_and_options_as_flink_does(t_env, sql, described, options):
    """It was refused ('LIKE t1 in CREATE TABLE'). Where funke has no DESCRIBE of a table (a print table with a computed
    column: funke types those when it reads them), its columns' names in order stand for it."""
    t_env.execute_sql(sql)
    name = sql.split()[2]
    t = t_env._tables[name]
    if isinstance(described[0], str):
        assert list(t.names) == described
    else:
        assert [list(r.values())[:5] for r in t_env.execute_sql(f"DESCRIBE {name}").collect()] == described
    assert {"connector": t.connector, **t.options} == options


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t3 (WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) LIKE t1",
         "a watermark for column 'ts' exists already in the base table; you might want to specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS"),
        ("CREATE TABLE t8 (id BIGINT) LIKE t1", "a column named 'id' exists already in the base table"),
        ("CREATE TABLE t9 (PRIMARY KEY (ts) NOT ENFORCED) LIKE t1", "the base table has a primary key already; you might want to specify EXCLUDING CONSTRAINTS"),
        ("CREATE TABLE t11 (c AS id + 2) LIKE t1",
         "a generated column named 'c' exists already in the base table; you might want to specify EXCLUDING GENERATED or OVERWRITING GENERATED"),
        ("CREATE TABLE t13 WITH ('number-of-rows' = '3') LIKE t1 (INCLUDING OPTIONS)",
         "the base table has the option 'number-of-rows' already; you might want to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS"),
        ("CREATE TABLE t14 LIKE v", "the table v of the LIKE clause (at line 1, column 14) can not be a VIEW"),
        ("CREATE TABLE t15 LIKE nope", "the table nope of the LIKE clause (at line 1, column 14) is not found"),
        ("CREATE TABLE t17 LIKE t1 (OVERWRITING CONSTRAINTS)", "OVERWRITING CONSTRAINTS is not allowed"),
    ],
)  # fmt: skip
def test_what_flink_refuses_in_a_like_clause_is_refused(t_env, sql, message):
    t_env.execute_sql("CREATE VIEW v AS SELECT * FROM t1")
    with pytest.raises(PlanError, match="Flink SQL") as e:
        t_env.execute_sql(sql)
    assert message in str(e.value)
