"""A query's schema in Flink's words (``funke.table.flink_schema``, no Spark): the type and NOT NULL that
``print_schema()`` prints for each column. Every expected schema is what PyFlink 2.3 printed for the same
statement (run by hand in a side venv); where funke prints otherwise the test says so and why."""

from __future__ import annotations

import pytest

from funke.pyflink.table import EnvironmentSettings, TableEnvironment

SOURCE = (
    "CREATE TABLE src (k STRING NOT NULL, n INT NOT NULL, v INT, s STRING, b BIGINT NOT NULL, d DOUBLE NOT NULL, "
    "m DECIMAL(10, 2), w DECIMAL(38, 10), f FLOAT, sm SMALLINT, t TINYINT, "
    "ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen')"
)


@pytest.fixture(scope="module")
def t_env():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(SOURCE)
    return t_env


def schema(t_env, sql: str) -> list[str]:
    """The lines ``print_schema()`` prints for ``sql``'s columns, without the parentheses and commas."""
    return [line.strip().rstrip(",") for line in str(t_env.sql_query(sql).get_resolved_schema()).splitlines()[1:-1]]


# (select item, PyFlink 2.3's column)
EXPRESSIONS = [
    ("CASE WHEN n > 1 THEN 'a' ELSE 'b' END AS c1", "`c1` CHAR(1) NOT NULL"),
    ("n = 1 AS e1", "`e1` BOOLEAN NOT NULL"),
    ("v = 1 AS e2", "`e2` BOOLEAN"),
    ("v IS NULL AS e3", "`e3` BOOLEAN NOT NULL"),
    ("n > 1 AND v > 1 AS e4", "`e4` BOOLEAN"),
    ("n IN (1, 2) AS e5", "`e5` BOOLEAN NOT NULL"),
    ("n BETWEEN 1 AND 2 AS e6", "`e6` BOOLEAN NOT NULL"),
    ("k LIKE 'a%' AS e7", "`e7` BOOLEAN NOT NULL"),
    ("NOT (n > 1) AS e8", "`e8` BOOLEAN NOT NULL"),
    ("CAST(n AS STRING) AS t1", "`t1` STRING NOT NULL"),
    ("TRY_CAST(k AS INT) AS t2", "`t2` INT"),
    ("CAST(k AS INT) AS t3", "`t3` INT NOT NULL"),
    ("CAST(n AS VARCHAR) AS t4", "`t4` STRING NOT NULL"),
    ("CAST(n AS DECIMAL(5, 2)) AS t5", "`t5` DECIMAL(5, 2) NOT NULL"),
    ("SUBSTRING(k, 1, 1) AS f1", "`f1` STRING"),
    ("CHAR_LENGTH(k) AS f2", "`f2` INT NOT NULL"),
    ("CONCAT(k, 'a') AS f3", "`f3` STRING NOT NULL"),
    ("CONCAT(k, s) AS f4", "`f4` STRING"),
    ("REGEXP_EXTRACT(k, 'a') AS f5", "`f5` STRING"),
    ("n / 2 AS a1", "`a1` INT NOT NULL"),
    ("n % 2 AS a2", "`a2` INT NOT NULL"),
    ("MOD(n, 2) AS a3", "`a3` INT NOT NULL"),
    ("ABS(n) AS a4", "`a4` INT NOT NULL"),
    ("POWER(n, 2) AS a5", "`a5` DOUBLE NOT NULL"),
    ("ROUND(n, 1) AS a6", "`a6` INT NOT NULL"),
    ("-n AS a8", "`a8` INT NOT NULL"),
    ("n + b AS a9", "`a9` BIGINT NOT NULL"),
    ("b % 2 AS m1", "`m1` INT NOT NULL"),
    ("MOD(b, 2) AS m2", "`m2` INT NOT NULL"),
    ("n % b AS m3", "`m3` BIGINT NOT NULL"),
    ("ROUND(b, 1) AS m4", "`m4` BIGINT NOT NULL"),
    ("n * 1.5 AS x1", "`x1` DECIMAL(13, 1) NOT NULL"),
    ("n + 1.5 AS x2", "`x2` DECIMAL(12, 1) NOT NULL"),
    ("m + m AS x3", "`x3` DECIMAL(11, 2)"),
    ("m * m AS x4", "`x4` DECIMAL(21, 4)"),
    ("m / m AS x5", "`x5` DECIMAL(23, 13)"),
    ("m % 3 AS x6", "`x6` DECIMAL(10, 2)"),
    ("m - n AS x7", "`x7` DECIMAL(13, 2)"),
    ("b * m AS x8", "`x8` DECIMAL(30, 2)"),
    ("w * w AS x9", "`x9` DECIMAL(38, 6)"),
    ("w / 3 AS x10", "`x10` DECIMAL(38, 10)"),
    ("w + 1 AS x11", "`x11` DECIMAL(38, 9)"),
    ("n / 1.5 AS x12", "`x12` DECIMAL(17, 6) NOT NULL"),
    ("d * m AS x13", "`x13` DOUBLE"),
    ("n * d AS x14", "`x14` DOUBLE NOT NULL"),
    ("f * 2 AS x15", "`x15` FLOAT"),
    ("f * m AS x16", "`x16` DOUBLE"),
    ("1.5 * 2.25 AS x17", "`x17` DECIMAL(6, 3) NOT NULL"),
    ("sm * 1.5 AS x18", "`x18` DECIMAL(8, 1)"),
    ("t + m AS x19", "`x19` DECIMAL(11, 2)"),
    ("n % m AS x20", "`x20` DECIMAL(10, 2)"),
    ("-m AS x21", "`x21` DECIMAL(10, 2)"),
    ("n / b AS a10", "`a10` BIGINT NOT NULL"),
    ("ABS(d) AS a11", "`a11` DOUBLE NOT NULL"),
    ("COALESCE(v, 0) AS n1", "`n1` INT NOT NULL"),
    ("IFNULL(v, 0) AS n2", "`n2` INT NOT NULL"),
    ("NULLIF(n, 1) AS n3", "`n3` INT"),
    ("COALESCE(v, v) AS n4", "`n4` INT"),
    ("TO_TIMESTAMP(k) AS d1", "`d1` TIMESTAMP(3)"),
    ("CURRENT_TIMESTAMP AS d2", "`d2` TIMESTAMP_LTZ(3) NOT NULL"),
    ("NOW() AS d3", "`d3` TIMESTAMP_LTZ(3) NOT NULL"),
    ("LOCALTIMESTAMP AS d5", "`d5` TIMESTAMP(3) NOT NULL"),
    ("UPPER(k) AS u1", "`u1` STRING NOT NULL"),
    ("LOWER(s) AS u2", "`u2` STRING"),
    ("TRIM(k) AS u3", "`u3` STRING NOT NULL"),
    ("REPLACE(k, 'a', 'b') AS u4", "`u4` STRING NOT NULL"),
    ("SPLIT_INDEX(k, ',', 0) AS u5", "`u5` STRING"),
    ("LPAD(k, 3, 'x') AS u6", "`u6` STRING NOT NULL"),
    ("UPPER('ab') AS u7", "`u7` CHAR(2) NOT NULL"),
    ("k || s AS p1", "`p1` STRING"),
    ("k || 'a' AS p2", "`p2` STRING NOT NULL"),
    ("'ab' || 'c' AS p3", "`p3` CHAR(3) NOT NULL"),
    ("HASH_CODE(k) AS h1", "`h1` INT NOT NULL"),
    ("MD5(k) AS h2", "`h2` CHAR(32) NOT NULL"),
    ("IF(n > 1, n, 0) AS i1", "`i1` INT NOT NULL"),
    ("IF(n > 1, v, 0) AS i2", "`i2` INT"),
    ("GREATEST(n, 1) AS g1", "`g1` INT NOT NULL"),
    ("n + v AS r2", "`r2` INT"),
    ("CHR(n) AS r3", "`r3` STRING"),
    ("ASCII(k) AS r4", "`r4` INT NOT NULL"),
    ("CEIL(n) AS r5", "`r5` INT NOT NULL"),
    ("'abc' AS l1", "`l1` CHAR(3) NOT NULL"),
    ("'' AS l2", "`l2` CHAR(0) NOT NULL"),
    ("'é' AS l3", "`l3` CHAR(1) NOT NULL"),
    ("1 AS l4", "`l4` INT NOT NULL"),
    ("-1 AS l5", "`l5` INT NOT NULL"),
    ("3000000000 AS l6", "`l6` BIGINT NOT NULL"),
    ("1.50 AS l7", "`l7` DECIMAL(3, 2) NOT NULL"),
    ("1e0 AS l8", "`l8` DOUBLE NOT NULL"),
    ("TRUE AS l9", "`l9` BOOLEAN NOT NULL"),
    ("ARRAY[n, 1] AS c3", "`c3` ARRAY<INT NOT NULL> NOT NULL"),
    ("CARDINALITY(ARRAY[n]) AS c6", "`c6` INT NOT NULL"),
]


@pytest.mark.parametrize(("item", "expected"), EXPRESSIONS, ids=[e for _, e in EXPRESSIONS])
def test_an_expression_s_type_and_nullability_are_flink_s(t_env, item, expected):
    assert schema(t_env, f"SELECT {item} FROM src") == [expected]


def test_aggregates_of_a_not_null_value_are_not_null_in_a_group_by_and_may_be_null_without_one(t_env):
    grouped = (
        "SELECT k, SUM(n) AS s1, MAX(n) AS s2, AVG(n) AS s4, MIN(k) AS s5, SUM(v) AS s6, LISTAGG(k) AS s8, FIRST_VALUE(n) AS s9, "
        "LAST_VALUE(v) AS s10, STDDEV_POP(n) AS s11, SUM(n) FILTER (WHERE n > 1) AS s12, ARRAY_AGG(n) AS s14, SUM(d) AS s15, "
        "STDDEV_SAMP(d) AS s16, COUNT(v) FILTER (WHERE n > 1) AS s17, ARRAY_AGG(v) AS s18, VAR_SAMP(n) AS s19 FROM src GROUP BY k"
    )
    assert schema(t_env, grouped) == [
        "`k` STRING NOT NULL", "`s1` INT NOT NULL", "`s2` INT NOT NULL", "`s4` INT NOT NULL", "`s5` STRING NOT NULL", "`s6` INT",
        "`s8` STRING NOT NULL", "`s9` INT NOT NULL", "`s10` INT", "`s11` INT NOT NULL", "`s12` INT", "`s14` ARRAY<INT NOT NULL> NOT NULL",
        "`s15` DOUBLE NOT NULL", "`s16` DOUBLE NOT NULL", "`s17` BIGINT NOT NULL", "`s18` ARRAY<INT>", "`s19` INT NOT NULL",
    ]  # fmt: skip
    whole = "SELECT SUM(n) AS s1, MAX(n) AS s2, COUNT(n) AS s3, AVG(n) AS s4, MIN(k) AS s5, COUNT(*) AS s7, LISTAGG(k) AS s8, ARRAY_AGG(n) AS s9 FROM src"
    assert schema(t_env, whole) == [
        "`s1` INT", "`s2` INT", "`s3` BIGINT NOT NULL", "`s4` INT", "`s5` STRING", "`s7` BIGINT NOT NULL", "`s8` STRING NOT NULL",
        "`s9` ARRAY<INT NOT NULL> NOT NULL",
    ]  # fmt: skip
    assert schema(t_env, "SELECT v, SUM(n) AS s1 FROM src GROUP BY v") == ["`v` INT", "`s1` INT NOT NULL"]
    assert schema(t_env, "SELECT n + 1 AS g, SUM(n) AS s1 FROM src GROUP BY n + 1") == ["`g` INT NOT NULL", "`s1` INT NOT NULL"]
    windowed = (
        "SELECT window_start, window_end, k, SUM(n) AS s1, MAX(k) AS s2, SUM(v) AS s3, COUNT(*) AS c "
        "FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, k"
    )
    assert schema(t_env, windowed) == [
        "`window_start` TIMESTAMP(3) NOT NULL", "`window_end` TIMESTAMP(3) NOT NULL", "`k` STRING NOT NULL", "`s1` INT NOT NULL",
        "`s2` STRING NOT NULL", "`s3` INT", "`c` BIGINT NOT NULL",
    ]  # fmt: skip


def test_a_rollup_s_keys_may_be_null(t_env):
    """Flink: ``k`` STRING (a group leaves it out), ``s1`` INT NOT NULL. funke says ``s1`` may be NULL: of a
    ROLLUP, CUBE or GROUPING SETS it says NOT NULL only of a COUNT."""
    assert schema(t_env, "SELECT k, SUM(n) AS s1, COUNT(*) AS c FROM src GROUP BY ROLLUP(k)") == [
        "`k` STRING",
        "`s1` INT",
        "`c` BIGINT NOT NULL",
    ]


def test_an_outer_join_s_padded_side_may_be_null(t_env):
    assert schema(t_env, "SELECT a.k, b.n, a.n AS an FROM src a LEFT JOIN src b ON a.k = b.k") == [
        "`k` STRING NOT NULL", "`n` INT", "`an` INT NOT NULL",
    ]  # fmt: skip
    assert schema(t_env, "SELECT a.k, b.n AS bn FROM src a RIGHT JOIN src b ON a.k = b.k") == ["`k` STRING", "`bn` INT NOT NULL"]
    assert schema(t_env, "SELECT a.k, b.n AS bn FROM src a JOIN src b ON a.k = b.k") == [
        "`k` STRING NOT NULL",
        "`bn` INT NOT NULL",
    ]


def test_values_unions_with_queries_and_subqueries_carry_types_and_nullability(t_env):
    assert schema(t_env, "SELECT * FROM (VALUES (1, 'a', CAST(NULL AS INT)), (2, 'bb', 3)) AS T(x, y, z)") == [
        "`x` INT NOT NULL", "`y` VARCHAR(2) NOT NULL", "`z` INT",
    ]  # fmt: skip
    assert schema(t_env, "SELECT * FROM (VALUES (1), (3000000000)) AS T(x)") == ["`x` BIGINT NOT NULL"]
    assert schema(t_env, "SELECT * FROM (VALUES ('a', 1.5), ('b', 2.25)) AS T(x, y)") == [
        "`x` CHAR(1) NOT NULL",
        "`y` DECIMAL(3, 2) NOT NULL",
    ]
    assert schema(t_env, "SELECT UPPER(x) AS u, x || 'a' AS c FROM (VALUES ('ab'), ('cd')) AS T(x)") == [
        "`u` CHAR(2) NOT NULL",
        "`c` CHAR(3) NOT NULL",
    ]
    assert schema(t_env, "SELECT k, n FROM src UNION ALL SELECT s, n FROM src") == ["`k` STRING", "`n` INT NOT NULL"]
    assert schema(t_env, "SELECT k, n FROM src UNION SELECT s, n FROM src") == ["`k` STRING", "`n` INT NOT NULL"]
    assert schema(t_env, "SELECT x FROM (SELECT n + 1 AS x FROM src) WHERE x > 1") == ["`x` INT NOT NULL"]
    assert schema(t_env, "WITH w AS (SELECT UPPER(k) AS uk FROM src) SELECT uk FROM w") == ["`uk` STRING NOT NULL"]
    assert schema(t_env, "SELECT DISTINCT k, n FROM src") == ["`k` STRING NOT NULL", "`n` INT NOT NULL"]
    t_env.create_temporary_view("vals", t_env.sql_query("SELECT * FROM (VALUES (1, 'a'), (2, 'bb')) AS T(x, y)"))
    assert schema(t_env, "SELECT x + 1 AS p, UPPER(y) AS u, COUNT(*) AS c, SUM(x) AS s, MAX(y) AS m FROM vals GROUP BY x, y") == [
        "`p` INT NOT NULL", "`u` VARCHAR(2) NOT NULL", "`c` BIGINT NOT NULL", "`s` INT NOT NULL", "`m` VARCHAR(2) NOT NULL",
    ]  # fmt: skip


def test_a_time_attribute_renamed_stays_one(t_env):
    assert schema(t_env, "SELECT k, ts AS r1 FROM src") == ["`k` STRING NOT NULL", "`r1` TIMESTAMP(3) *ROWTIME*"]
    t_env.execute_sql("CREATE VIEW renamed (k2, t2) AS SELECT k, ts FROM src")
    assert schema(t_env, "SELECT * FROM renamed") == ["`k2` STRING NOT NULL", "`t2` TIMESTAMP(3) *ROWTIME*"]


# (a built-in function over NOT NULL arguments, then over nullable ones: PyFlink 2.3's type of the result)
FUNCTIONS = [
    ('YEAR(t2)', 'BIGINT NOT NULL'),
    ('YEAR(t3)', 'BIGINT'),
    ('MONTH(t2)', 'BIGINT NOT NULL'),
    ('MONTH(t3)', 'BIGINT'),
    ('DAYOFMONTH(t2)', 'BIGINT NOT NULL'),
    ('DAYOFMONTH(t3)', 'BIGINT'),
    ('HOUR(t2)', 'BIGINT NOT NULL'),
    ('HOUR(t3)', 'BIGINT'),
    ('MINUTE(t2)', 'BIGINT NOT NULL'),
    ('MINUTE(t3)', 'BIGINT'),
    ('SECOND(t2)', 'BIGINT NOT NULL'),
    ('SECOND(t3)', 'BIGINT'),
    ('QUARTER(t2)', 'BIGINT NOT NULL'),
    ('QUARTER(t3)', 'BIGINT'),
    ('DAYOFWEEK(d2)', 'BIGINT NOT NULL'),
    ('DAYOFWEEK(d3)', 'BIGINT'),
    ('DAYOFYEAR(d2)', 'BIGINT NOT NULL'),
    ('DAYOFYEAR(d3)', 'BIGINT'),
    ('WEEK(d2)', 'BIGINT NOT NULL'),
    ('WEEK(d3)', 'BIGINT'),
    ('TO_DATE(k)', 'DATE'),
    ('TO_DATE(s)', 'DATE'),
    ('CURRENT_DATE', 'DATE NOT NULL'),
    ('CURRENT_DATE', 'DATE NOT NULL'),
    ('FROM_UNIXTIME(b)', 'STRING'),
    ('FROM_UNIXTIME(vb)', 'STRING'),
    ("CONCAT_WS('-', k, k)", 'STRING NOT NULL'),
    ("CONCAT_WS('-', s, s)", 'STRING'),
    ("SPLIT(k, ',')", 'ARRAY<STRING> NOT NULL'),
    ("SPLIT(s, ',')", 'ARRAY<STRING>'),
    ("REGEXP_REPLACE(k, 'a', 'b')", 'STRING NOT NULL'),
    ("REGEXP_REPLACE(s, 'a', 'b')", 'STRING'),
    ('INITCAP(k)', 'STRING NOT NULL'),
    ('INITCAP(s)', 'STRING'),
    ('REVERSE(k)', 'STRING'),
    ('REVERSE(s)', 'STRING'),
    ('LEFT(k, 2)', 'STRING'),
    ('LEFT(s, 2)', 'STRING'),
    ('RIGHT(k, 2)', 'STRING'),
    ('RIGHT(s, 2)', 'STRING'),
    ("LOCATE('a', k)", 'INT NOT NULL'),
    ("LOCATE('a', s)", 'INT'),
    ("INSTR(k, 'a')", 'INT NOT NULL'),
    ("INSTR(s, 'a')", 'INT'),
    ('SQRT(d)', 'DOUBLE NOT NULL'),
    ('SQRT(vd)', 'DOUBLE'),
    ('LN(d)', 'DOUBLE NOT NULL'),
    ('LN(vd)', 'DOUBLE'),
    ('EXP(d)', 'DOUBLE NOT NULL'),
    ('EXP(vd)', 'DOUBLE'),
    ('SIN(d)', 'DOUBLE NOT NULL'),
    ('SIN(vd)', 'DOUBLE'),
    ('COS(d)', 'DOUBLE NOT NULL'),
    ('COS(vd)', 'DOUBLE'),
    ('LOG10(d)', 'DOUBLE NOT NULL'),
    ('LOG10(vd)', 'DOUBLE'),
    ('LOG2(d)', 'DOUBLE NOT NULL'),
    ('LOG2(vd)', 'DOUBLE'),
    ('RAND()', 'DOUBLE NOT NULL'),
    ('RAND()', 'DOUBLE NOT NULL'),
    ('UUID()', 'CHAR(36) NOT NULL'),
    ('UUID()', 'CHAR(36) NOT NULL'),
    ('TRUNCATE(d, 1)', 'DOUBLE NOT NULL'),
    ('TRUNCATE(vd, 1)', 'DOUBLE'),
    ('SHA256(k)', 'CHAR(64) NOT NULL'),
    ('SHA256(s)', 'CHAR(64)'),
    ('SHA1(k)', 'CHAR(40) NOT NULL'),
    ('SHA1(s)', 'CHAR(40)'),
    ('TO_BASE64(k)', 'STRING NOT NULL'),
    ('TO_BASE64(s)', 'STRING'),
    ('FROM_BASE64(k)', 'STRING NOT NULL'),
    ('FROM_BASE64(s)', 'STRING'),
    ('REPEAT(k, 2)', 'STRING NOT NULL'),
    ('REPEAT(s, 2)', 'STRING'),
    ('BIN(b)', 'STRING NOT NULL'),
    ('BIN(vb)', 'STRING'),
    ('HEX(k)', 'STRING NOT NULL'),
    ('HEX(s)', 'STRING'),
    ('SIGN(n)', 'INT NOT NULL'),
    ('SIGN(v)', 'INT'),
    ('PI()', 'DOUBLE NOT NULL'),
    ('PI()', 'DOUBLE NOT NULL'),
    ('LTRIM(k)', 'STRING NOT NULL'),
    ('LTRIM(s)', 'STRING'),
    ('RTRIM(k)', 'STRING NOT NULL'),
    ('RTRIM(s)', 'STRING'),
    ("DATE_FORMAT(t2, 'yyyy')", 'STRING'),
    ("DATE_FORMAT(t3, 'yyyy')", 'STRING'),
    ("REGEXP(k, 'a')", 'BOOLEAN NOT NULL'),
    ("REGEXP(s, 'a')", 'BOOLEAN'),
    ('DEGREES(d)', 'DOUBLE NOT NULL'),
    ('DEGREES(vd)', 'DOUBLE'),
    ('E()', 'DOUBLE NOT NULL'),
    ('E()', 'DOUBLE NOT NULL'),
    ('ATAN2(d, d)', 'DOUBLE NOT NULL'),
    ('ATAN2(vd, vd)', 'DOUBLE'),
    ('CHARACTER_LENGTH(k)', 'INT NOT NULL'),
    ('CHARACTER_LENGTH(s)', 'INT'),
    ('TIMESTAMPDIFF(DAY, t2, t2)', 'INT NOT NULL'),
    ('TIMESTAMPDIFF(DAY, t3, t3)', 'INT'),
    ("POSITION('a' IN k)", 'INT NOT NULL'),
    ("POSITION('a' IN s)", 'INT'),
    ('SUBSTRING(k FROM 2)', 'STRING'),
    ('SUBSTRING(s FROM 2)', 'STRING'),
    ("TRANSLATE(k, 'a', 'b')", 'STRING NOT NULL'),
    ("TRANSLATE(s, 'a', 'b')", 'STRING'),
    ('STR_TO_MAP(k)', 'MAP<STRING, STRING>'),
    ('STR_TO_MAP(s)', 'MAP<STRING, STRING>'),
    ("PARSE_URL(k, 'HOST')", 'STRING'),
    ("PARSE_URL(s, 'HOST')", 'STRING'),
    ('URL_ENCODE(k)', 'STRING'),
    ('URL_ENCODE(s)', 'STRING'),
    ('BTRIM(k)', 'STRING NOT NULL'),
    ('BTRIM(s)', 'STRING'),
    ("CONVERT_TZ(k, 'UTC', 'UTC')", 'STRING'),
    ("CONVERT_TZ(s, 'UTC', 'UTC')", 'STRING'),
    ('IS_ALPHA(k)', 'BOOLEAN NOT NULL'),
    ('IS_ALPHA(s)', 'BOOLEAN NOT NULL'),
    ("STARTSWITH(k, 'a')", 'BOOLEAN NOT NULL'),
    ("STARTSWITH(s, 'a')", 'BOOLEAN'),
    ("ENDSWITH(k, 'a')", 'BOOLEAN NOT NULL'),
    ("ENDSWITH(s, 'a')", 'BOOLEAN'),
    ('ARRAY_CONTAINS(ARRAY[n], 1)', 'BOOLEAN NOT NULL'),
    ('ARRAY_CONTAINS(ARRAY[v], 1)', 'BOOLEAN NOT NULL'),
    ('ARRAY_DISTINCT(ARRAY[n])', 'ARRAY<INT NOT NULL> NOT NULL'),
    ('ARRAY_DISTINCT(ARRAY[v])', 'ARRAY<INT> NOT NULL'),
    ('FLOOR(t2 TO HOUR)', 'TIMESTAMP(3) NOT NULL'),
    ('FLOOR(t3 TO HOUR)', 'TIMESTAMP(3)'),
    ('CEIL(t2 TO HOUR)', 'TIMESTAMP(3) NOT NULL'),
    ('CEIL(t3 TO HOUR)', 'TIMESTAMP(3)'),
    ('EXTRACT(DAY FROM t2)', 'BIGINT NOT NULL'),
    ('EXTRACT(DAY FROM t3)', 'BIGINT'),
    ("d2 + INTERVAL '1' DAY", 'DATE NOT NULL'),
    ("d3 + INTERVAL '1' DAY", 'DATE'),
    ("t2 + INTERVAL '1' HOUR", 'TIMESTAMP(3) NOT NULL'),
    ("t3 + INTERVAL '1' HOUR", 'TIMESTAMP(3)'),
    ("LPAD(k, 3, 'x')", 'STRING NOT NULL'),
    ("LPAD(s, 3, 'x')", 'STRING'),
]  # fmt: skip


@pytest.mark.parametrize(("call", "expected"), FUNCTIONS, ids=[c for c, _ in FUNCTIONS])
def test_a_function_s_result_has_flink_s_type_and_nullability(t_env, call, expected):
    t_env.execute_sql(
        "CREATE TABLE IF NOT EXISTS fns (k STRING NOT NULL, s STRING, n INT NOT NULL, v INT, b BIGINT NOT NULL, vb BIGINT, "
        "d DOUBLE NOT NULL, vd DOUBLE, t2 TIMESTAMP(3) NOT NULL, t3 TIMESTAMP(3), d2 DATE NOT NULL, d3 DATE) WITH ('connector' = 'datagen')"
    )
    assert schema(t_env, f"SELECT {call} AS x FROM fns") == [f"`x` {expected}"]
