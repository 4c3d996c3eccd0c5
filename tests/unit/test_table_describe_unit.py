"""DESCRIBE, SHOW COLUMNS and SHOW FUNCTIONS (no Spark). The expected tables are what PyFlink 2.3 printed for
the same statements (run by hand in a side venv); where funke says otherwise the test says why."""

from __future__ import annotations

import pytest

import funke as fk
from funke.dialect.functions import BUILTINS, REFUSED
from funke.errors import PlanError, UnsupportedError
from funke.pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from funke.pyflink.table.udf import udf
from funke.table import StreamTableEnvironment

SOURCE = """CREATE TABLE s (
    k STRING NOT NULL, v INT, d DECIMAL(10,2), f FLOAT, b BOOLEAN, ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3), dd DATE,
    vc VARCHAR(20), w AS v * 2, pt AS PROCTIME(),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECONDS, PRIMARY KEY (k) NOT ENFORCED
) WITH ('connector' = 'datagen')"""

DESCRIBED = [
    "+------+-----------------------------+-------+--------+---------------+----------------------------+",
    "| name |                        type |  null |    key |        extras |                  watermark |",
    "+------+-----------------------------+-------+--------+---------------+----------------------------+",
    "|    k |                      STRING | FALSE | PRI(k) |               |                            |",
    "|    v |                         INT |  TRUE |        |               |                            |",
    "|    d |              DECIMAL(10, 2) |  TRUE |        |               |                            |",
    "|    f |                       FLOAT |  TRUE |        |               |                            |",
    "|    b |                     BOOLEAN |  TRUE |        |               |                            |",
    "|   ts |      TIMESTAMP(3) *ROWTIME* |  TRUE |        |               | `ts` - INTERVAL '5' SECOND |",
    "|   lt |            TIMESTAMP_LTZ(3) |  TRUE |        |               |                            |",
    "|   dd |                        DATE |  TRUE |        |               |                            |",
    "|   vc |                 VARCHAR(20) |  TRUE |        |               |                            |",
    "|    w |                         INT |  TRUE |        |    AS `v` * 2 |                            |",
    "|   pt | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |        | AS PROCTIME() |                            |",
    "+------+-----------------------------+-------+--------+---------------+----------------------------+",
    "11 rows in set",
]


@pytest.fixture
def t_env():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(SOURCE)
    return t_env


def described(t_env, sql) -> list[tuple]:
    """(name, type, null) of each row of a DESCRIBE answer."""
    return [(r[0], r[1], r[2]) for r in t_env.execute_sql(sql).collect()]


def test_describe_prints_a_table_s_columns_as_flink_does(t_env, capsys):
    t_env.execute_sql("DESCRIBE s").print()
    t_env.execute_sql("DESC default_catalog.default_database.s").print()
    assert capsys.readouterr().out.splitlines() == DESCRIBED * 2
    rows = list(t_env.execute_sql("DESCRIBE s").collect())
    assert tuple(rows[0]) == ("k", "STRING", False, "PRI(k)", None, None)  # (NULLs, printed empty)
    assert repr(rows[0]) == "<Row('k', 'STRING', False, 'PRI(k)', None, None)>"  # (no field names, as PyFlink's)
    assert tuple(rows[9]) == ("w", "INT", True, None, "AS `v` * 2", None)


def test_show_columns_filters_by_name_as_like_does(t_env, capsys):
    t_env.execute_sql("SHOW COLUMNS FROM s LIKE '%t%'").print()
    assert capsys.readouterr().out.splitlines() == [
        "+------+-----------------------------+-------+-----+---------------+----------------------------+",
        "| name |                        type |  null | key |        extras |                  watermark |",
        "+------+-----------------------------+-------+-----+---------------+----------------------------+",
        "|   ts |      TIMESTAMP(3) *ROWTIME* |  TRUE |     |               | `ts` - INTERVAL '5' SECOND |",
        "|   lt |            TIMESTAMP_LTZ(3) |  TRUE |     |               |                            |",
        "|   pt | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |     | AS PROCTIME() |                            |",
        "+------+-----------------------------+-------+-----+---------------+----------------------------+",
        "3 rows in set",
    ]
    assert [r[0] for r in t_env.execute_sql("show columns in s not like '%t%'").collect()] == ["k", "v", "d", "f", "b", "dd", "vc", "w"]
    assert list(t_env.execute_sql("SHOW COLUMNS FROM s LIKE 'zz'").collect()) == []


def test_declared_types_are_written_back_with_their_defaults_and_a_key_of_two_columns():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(
        "CREATE TABLE q (a BIGINT, ts TIMESTAMP(3), r ROW<x INT, y STRING>, ti TINYINT, si SMALLINT, c CHAR(3), "
        "dl DECIMAL, ts6 TIMESTAMP, PRIMARY KEY (a, ts) NOT ENFORCED) WITH ('connector' = 'print')"
    )
    assert [(r[0], r[1], r[2], r[3]) for r in t_env.execute_sql("DESCRIBE q").collect()] == [
        ("a", "BIGINT", False, "PRI(a, ts)"),
        ("ts", "TIMESTAMP(3)", False, "PRI(a, ts)"),
        ("r", "ROW<`x` INT, `y` STRING>", True, None),
        ("ti", "TINYINT", True, None),
        ("si", "SMALLINT", True, None),
        ("c", "CHAR(3)", True, None),
        ("dl", "DECIMAL(10, 0)", True, None),
        ("ts6", "TIMESTAMP(6)", True, None),
    ]


def test_a_view_s_columns_have_its_query_s_types_and_flink_s_nullability(t_env):
    t_env.execute_sql("CREATE VIEW grouped AS SELECT k, v + 1 AS v1, COUNT(*) AS c FROM s GROUP BY k, v")
    assert described(t_env, "DESCRIBE grouped") == [("k", "STRING", False), ("v1", "INT", True), ("c", "BIGINT", False)]
    t_env.execute_sql("CREATE VIEW passed AS SELECT k, ts, pt, k || 'y' AS ky FROM s")
    assert described(t_env, "DESCRIBE passed") == [
        ("k", "STRING", False), ("ts", "TIMESTAMP(3) *ROWTIME*", True), ("pt", "TIMESTAMP_LTZ(3) *PROCTIME*", False), ("ky", "STRING", False),
    ]  # fmt: skip
    t_env.execute_sql(
        "CREATE VIEW windowed AS SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS sv "
        "FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k"
    )
    assert described(t_env, "DESCRIBE windowed") == [
        ("window_start", "TIMESTAMP(3)", False), ("window_end", "TIMESTAMP(3)", False), ("k", "STRING", False),
        ("n", "BIGINT", False), ("sv", "INT", True),
    ]  # fmt: skip
    t_env.execute_sql("CREATE VIEW renamed (a, b) AS SELECT k, v FROM s")
    assert described(t_env, "DESCRIBE renamed") == [("a", "STRING", False), ("b", "INT", True)]
    t_env.execute_sql("CREATE VIEW everything AS SELECT * FROM s")
    assert described(t_env, "DESCRIBE everything")[-3:] == [("vc", "VARCHAR(20)", True), ("w", "INT", True), ("pt", "TIMESTAMP_LTZ(3) *PROCTIME*", False)]
    assert [r[4] for r in t_env.execute_sql("DESCRIBE everything").collect()] == [None] * 11  # (a view has no computed columns)
    t_env.create_temporary_view("elements", t_env.from_elements([(1, "a", 1.5)], ["x", "y", "z"]))
    assert described(t_env, "DESCRIBE elements") == [("x", "BIGINT", True), ("y", "STRING", True), ("z", "DOUBLE", True)]


def test_a_view_s_map_array_and_row_columns_are_written_as_flink_writes_them(t_env, capsys):
    """PyFlink 2.3's DESCRIBE and print_schema() of the same view: one space after each comma (funke printed
    ``MAP<STRING,  INT>``), a ROW's field names quoted, nested types too; NOT NULL, as a constructor is never NULL
    and a CAST of it neither."""
    t_env.execute_sql(
        "CREATE VIEW nested AS SELECT CAST(MAP['a', v] AS MAP<STRING, INT>) AS m, CAST(ARRAY[MAP['a', v]] AS ARRAY<MAP<STRING, INT>>) AS am, "
        "CAST(ROW(v, k) AS ROW<x INT, y STRING>) AS r, CAST(ARRAY[MAP[k, ROW(v, d)]] AS ARRAY<MAP<STRING, ROW<x INT, y DECIMAL(10, 2)>>>) AS deep FROM s"
    )
    assert [r[1] for r in t_env.execute_sql("DESCRIBE nested").collect()] == [
        "MAP<STRING, INT>", "ARRAY<MAP<STRING, INT>>", "ROW<`x` INT, `y` STRING>", "ARRAY<MAP<STRING, ROW<`x` INT, `y` DECIMAL(10, 2)>>>",
    ]  # fmt: skip
    t_env.from_path("nested").print_schema()
    assert capsys.readouterr().out.splitlines() == [
        "(",
        "  `m` MAP<STRING, INT> NOT NULL,",
        "  `am` ARRAY<MAP<STRING, INT>> NOT NULL,",
        "  `r` ROW<`x` INT, `y` STRING> NOT NULL,",
        "  `deep` ARRAY<MAP<STRING, ROW<`x` INT, `y` DECIMAL(10, 2)>>> NOT NULL",
        ")",
    ]


def test_describe_of_an_unknown_table_says_so_with_did_you_mean_and_another_database_is_refused(t_env):
    with pytest.raises(PlanError, match=r"DESCRIBE sx: no table or view named 'sx' \(did you mean 's'\?\); tables and views: s"):
        t_env.execute_sql("DESCRIBE sx")
    with pytest.raises(PlanError, match="SHOW COLUMNS FROM nope: no table or view named 'nope'"):
        t_env.execute_sql("SHOW COLUMNS FROM nope")
    with pytest.raises(UnsupportedError, match="the database 'mydb'"):
        t_env.execute_sql("DESCRIBE mydb.s")
    with pytest.raises(UnsupportedError, match="DESCRIBE EXTENDED s is not supported by funke; it answers SHOW CATALOGS"):
        t_env.execute_sql("DESCRIBE EXTENDED s")


def test_show_functions_lists_the_built_in_functions_funke_runs_and_the_user_s(t_env):
    t_env.create_temporary_function("myF", udf(lambda x: x + 1, result_type=DataTypes.BIGINT()))
    names = [r[0] for r in t_env.execute_sql("SHOW FUNCTIONS").collect()]
    assert names == sorted(names) and "myf" in names  # (by code point: upper-case built-ins first; a user's in lower case, as Flink's)
    assert {"UPPER", "VAR_POP", "LISTAGG", "TUMBLE_START", "CHAR_LENGTH"} <= set(names)
    refused = {n for b in BUILTINS.values() if b.status == REFUSED for n in b.names}
    assert refused and not refused & set(names)
    assert "+, -, *" not in names and "||" not in names  # (operators are not functions to list)
    assert [r[0] for r in t_env.execute_sql("SHOW FUNCTIONS LIKE 'STDDEV%'").collect()] == ["STDDEV", "STDDEV_POP", "STDDEV_SAMP"]


def test_a_script_prints_its_describe_statements(capsys):
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="describe-script"))
    t_env.execute_script(f"{SOURCE}; DESCRIBE s; SHOW COLUMNS FROM s LIKE 'k';")
    out = capsys.readouterr().out.splitlines()
    assert out[: len(DESCRIBED)] == DESCRIBED
    assert out[len(DESCRIBED) + 3] == "|    k | STRING | FALSE | PRI(k) |        |           |"
