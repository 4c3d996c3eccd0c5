"""Flink SQL's built-in functions while planning (``funke.dialect.functions``): every call is a Flink
built-in, a Python function of the environment, or refused with a reason; an unknown name gets
did-you-mean; the table in docs/sql.md is the one funke plans by."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlglot import exp

import funke as fk
from funke.dialect.functions import BUILTINS, DIFFERS, FLINK, PLANNER, REFUSED, REWRITTEN, call_name, calls, markdown
from funke.dialect.syntax import parse
from funke.errors import PlanError, UnsupportedError
from funke.table import StreamTableEnvironment, udf
from funke.table.planner import Planner

DOCS = Path(__file__).resolve().parents[2] / "docs" / "sql.md"


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="functions"))
    t_env.execute_sql(
        "CREATE TABLE t (s STRING, n INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen')"
    )
    return t_env


def _spark(expression: str) -> str:
    sql = f"SELECT {expression}"
    planner = Planner({}, sql)
    tree = parse(sql)
    return planner.spark_sql(tree.expressions[0], None)


def test_the_docs_table_is_the_table_funke_plans_by():
    text = DOCS.read_text()
    found = re.search(r"<!-- functions:begin -->\n(.*?)\n<!-- functions:end -->", text, re.DOTALL)
    assert found, "docs/sql.md lacks the built-in function table (python -m funke.dialect.functions prints it)"
    assert found.group(1) == markdown()


def test_every_builtin_has_a_status_and_those_not_flinks_say_why():
    for name, builtin in BUILTINS.items():
        assert builtin.status in (FLINK, REWRITTEN, PLANNER, DIFFERS, REFUSED), name
        if builtin.status in (REWRITTEN, DIFFERS, REFUSED):
            assert builtin.note, f"{name} says nothing of how Spark differs or why it is refused"
        if builtin.status == REFUSED:
            assert builtin.rewrite is None, name


def test_names_are_read_as_spelled_not_as_sqlglots_nodes():
    sql = "SELECT CHAR_LENGTH(s), CHARACTER_LENGTH(s), IFNULL(a, 1), COALESCE(a, 1), TRIM(BOTH 'x' FROM s), CAST(a AS INT), CASE WHEN a THEN 1 END, a AND b"
    names = [name for _, name in calls(parse(sql), sql)]
    assert names == ["CHAR_LENGTH", "CHARACTER_LENGTH", "IFNULL", "COALESCE", "TRIM", "CAST", "CASE", "CASE"]
    assert call_name(exp.column("a"), sql) is None


def test_an_unknown_function_is_refused_with_did_you_mean(t_env):
    with pytest.raises(PlanError, match=r"unknown function UPPPER at line 1, column 8 \(did you mean 'UPPER'\?\)"):
        t_env.sql_query("SELECT UPPPER(s) FROM t")


def test_a_function_of_sparks_own_is_not_flink_sql(t_env):
    with pytest.raises(PlanError, match=r"unknown function ARRAY_SIZE .*Spark's own functions are not Flink SQL"):
        t_env.sql_query("SELECT ARRAY_SIZE(SPLIT(s, ',')) FROM t")


def test_a_refused_builtin_says_why(t_env):
    with pytest.raises(
        UnsupportedError,
        match=r"BITMAP_CARDINALITY \(at line 1, column 8\) is not supported by funke yet: Spark has no BITMAP type",
    ):
        t_env.sql_query("SELECT BITMAP_CARDINALITY(n) FROM t")
    # (an aggregate sqlglot reads as a plain call: refused too, not left to Spark as a global aggregation)
    with pytest.raises(UnsupportedError, match=r"BITMAP_BUILD_AGG \(at line 1, column 8\) is not supported by funke yet: Spark has no BITMAP type"):
        t_env.sql_query("SELECT BITMAP_BUILD_AGG(n) FROM t")
    with pytest.raises(PlanError, match=r"JSON_ARRAYAGG at line 1, column 8 with 2 argument\(s\) is no call of Flink's JSON_ARRAYAGG"):
        t_env.sql_query("SELECT JSON_ARRAYAGG(n, s) FROM t")


def test_convert_tz_takes_zone_literals_and_refuses_what_it_cannot_give_as_flink():
    """CONVERT_TZ's zones are resolved while planning, as Java's TimeZone.getTimeZone does (tests/spark/
    test_sql_functions.py runs it against PyFlink 2.3's answers)."""
    with pytest.raises(PlanError, match=r"CONVERT_TZ\(\.\.\., s, \.\.\.\): funke takes the time zones as string literals"):
        _spark("CONVERT_TZ('2020-01-01 00:00:00', s, 'UTC')")
    with pytest.raises(UnsupportedError, match=r"CONVERT_TZ with the zone 'SystemV/EST5' is not supported by funke yet: a JDK-only zone id"):
        _spark("CONVERT_TZ(s, 'UTC', 'SystemV/EST5')")
    with pytest.raises(PlanError, match=r"CONVERT_TZ with 2 arguments \(funke gives Flink's CONVERT_TZ for 3\)"):
        _spark("CONVERT_TZ(s, 'UTC')")
    assert "RAISE_ERROR(CONCAT('CONVERT_TZ: funke gives no instant before 1900-01-02" in _spark("CONVERT_TZ(s, 'UTC', 'Asia/Kolkata')")
    # (Flink's Java zones follow Casablanca's recurring rule after 2037, the tz database lists Ramadan transitions)
    assert "after 2037 in Africa/Casablanca" in _spark("CONVERT_TZ(s, 'Africa/Casablanca', 'UTC')")
    assert "after 2037" not in _spark("CONVERT_TZ(s, 'America/New_York', 'UTC')")


def test_json_predicates_are_read_as_calls_with_their_clauses():
    """``s IS [NOT] JSON kind`` and JSON_EXISTS's ON ERROR clause reach the rewrite (tests/spark/test_sql_functions.py
    runs them against PyFlink 2.3's answers)."""
    assert _spark("s IS NOT JSON OBJECT") == r"NOT COALESCE(NOT TRY_PARSE_JSON((s)) IS NULL AND (s) RLIKE '^[ \t\n\r]*[{]', FALSE)"
    assert "RAISE_ERROR" in _spark("JSON_EXISTS(s, 'strict $.a' ERROR ON ERROR)")
    assert "RAISE_ERROR" not in _spark("JSON_EXISTS(s, 'lax $.a' ERROR ON ERROR)")  # (lax mode has no errors)
    assert "'$.a'" in _spark("JSON_EXISTS(s, 'LAX $.a')")


@pytest.mark.parametrize("path", ["$.*", "$..a", "$.a[-1]", "$[?(@.a > 1)]", "$.a[*]", "lax$.a", "$ .a"])
def test_json_exists_refuses_paths_spark_cannot_follow(path):
    with pytest.raises(PlanError, match=rf"JSON_EXISTS\(\.\.\., '{re.escape(path)}'\): funke takes a path literal of `\$` and `\.key`"):
        _spark(f"JSON_EXISTS(s, '{path}')")


def test_json_clauses_funke_does_not_read_are_refused_not_ignored(t_env):
    with pytest.raises(PlanError, match=r"JSON_EXISTS\(\.\.\., s\): funke takes a path literal"):
        _spark("JSON_EXISTS(s, s)")
    with pytest.raises(PlanError, match=r"SQL syntax error at line 1, column \d+: Flink SQL's JSON_EXISTS takes a text, a path and \{TRUE"):
        _spark("JSON_EXISTS(s, '$.a' TRUE ON EMPTY)")  # (no clause of Flink's JSON_EXISTS)
    with pytest.raises(PlanError, match=r"Flink SQL's IS JSON takes no \[WITH \| WITHOUT\] UNIQUE KEYS"):
        _spark("s IS JSON WITH UNIQUE KEYS")
    with pytest.raises(UnsupportedError, match=r"JSON_STRING\(CAST\(n AS DOUBLE\)\) is not supported by funke yet: .*this one is double"):
        t_env.sql_query("SELECT JSON_STRING(CAST(n AS DOUBLE)) FROM t")
    # (a type the planner cannot tell: Spark's typeof decides when the job runs, failing it for a DOUBLE)
    assert "RAISE_ERROR(CONCAT('JSON_STRING: funke writes the JSON of a STRING, an integer" in _spark("JSON_STRING(UPPER(s))")
    assert t_env.sql_query("SELECT JSON_STRING(n) AS j, JSON_QUOTE(s) AS q FROM t").get_schema().names == ("j", "q")
    # (JSON(s) is a value of JSON_OBJECT or JSON_ARRAY only: PyFlink 2.3 refuses both of these too)
    for call in ("JSON(s)", "JSON_STRING(JSON('1'))", "UPPER(JSON(s))"):
        with pytest.raises(PlanError, match=r"JSON\(\.\.\.\) at line 1, column \d+ is a value of JSON_OBJECT or JSON_ARRAY only"):
            t_env.sql_query(f"SELECT {call} FROM t")
    assert t_env.sql_query("SELECT JSON_ARRAY(JSON(s)) AS a FROM t").get_schema().names == ("a",)


def test_json_query_reads_its_clauses_and_refuses_what_funke_cannot_give_as_flink(t_env):
    call = parse("SELECT JSON_QUERY(s, 'lax $.a' RETURNING ARRAY<STRING> WITH CONDITIONAL ARRAY WRAPPER EMPTY ARRAY ON EMPTY ERROR ON ERROR)")
    clauses = [a.name for a in call.expressions[0].expressions[2:]]
    assert clauses == ["RETURNING ARRAY<STRING>", "WITH CONDITIONAL ARRAY WRAPPER", "EMPTY ARRAY ON EMPTY", "ERROR ON ERROR"]
    plain = parse("SELECT JSON_QUERY(s, '$' RETURNING VARCHAR WITH WRAPPER NULL ON ERROR)").expressions[0].expressions[2:]
    assert [a.name for a in plain] == ["RETURNING STRING", "WITH UNCONDITIONAL ARRAY WRAPPER", "NULL ON ERROR"]
    assert t_env.sql_query("SELECT JSON_QUERY(s, '$.a') AS q, JSON_QUERY(s, '$' RETURNING ARRAY<STRING>) AS a FROM t").get_schema().names == ("q", "a")
    assert "RAISE_ERROR('JSON_QUERY: Empty result of JSON_QUERY function is not allowed')" in _spark("JSON_QUERY(s, 'lax $.a' ERROR ON EMPTY)")
    with pytest.raises(UnsupportedError, match=r"JSON_QUERY\(\.\.\. RETURNING VARCHAR\(3\)\) is not supported by funke yet: .*STRING .* or ARRAY<STRING>"):
        _spark("JSON_QUERY(s, '$.a' RETURNING VARCHAR(3))")
    with pytest.raises(PlanError, match=r"JSON_QUERY\(\.\.\. EMPTY OBJECT ON EMPTY\) is not allowed when returning ARRAY<STRING>"):
        _spark("JSON_QUERY(s, 'lax $.a' RETURNING ARRAY<STRING> EMPTY OBJECT ON EMPTY)")
    with pytest.raises(PlanError, match=r"JSON_QUERY\(\.\.\., '\$\.a\[\*\]'\): funke takes a path literal of `\$`"):
        _spark("JSON_QUERY(s, '$.a[*]')")
    with pytest.raises(PlanError, match=r"Flink SQL's JSON_QUERY takes a text, a path, then RETURNING, a WRAPPER clause"):
        _spark("JSON_QUERY(s, '$.a' NULL ON ERROR WITH WRAPPER)")


def test_json_constructors_refuse_values_and_keys_funke_cannot_write_as_flink(t_env):
    names = t_env.sql_query("SELECT JSON_OBJECT('b' VALUE n, 'a' VALUE JSON_ARRAY(s, n NULL ON NULL) ABSENT ON NULL) AS o FROM t")
    assert names.get_schema().names == ("o",)
    with pytest.raises(UnsupportedError, match=r"JSON_OBJECT with the key s is not supported by funke yet: .*string literals as keys"):
        t_env.sql_query("SELECT JSON_OBJECT(s VALUE n) FROM t")
    with pytest.raises(UnsupportedError, match=r"JSON_ARRAY with the value CAST\(n AS DOUBLE\) .*\(this one is double: CAST it"):
        t_env.sql_query("SELECT JSON_ARRAY(CAST(n AS DOUBLE)) FROM t")
    with pytest.raises(UnsupportedError, match=r"JSON_OBJECT with the value ts .*\(this one is timestamp"):
        t_env.sql_query("SELECT JSON_OBJECT('t' VALUE ts) FROM t")
    with pytest.raises(PlanError, match=r"SQL syntax error at line 1, column \d+: Expecting VALUE after a JSON_OBJECT key"):
        t_env.sql_query("SELECT JSON_OBJECT('a', n) FROM t")


def test_hash_code_of_a_type_whose_java_hash_code_spark_cannot_give_is_refused(t_env):
    assert t_env.sql_query("SELECT HASH_CODE(s) AS a, HASH_CODE(n) AS b FROM t").get_schema().names == ("a", "b")
    with pytest.raises(UnsupportedError, match=r"HASH_CODE\(CAST\(n AS DOUBLE\)\) is not supported by funke yet: .*\(this one is double: CAST it"):
        t_env.sql_query("SELECT HASH_CODE(CAST(n AS DOUBLE)) FROM t")
    with pytest.raises(UnsupportedError, match=r"HASH_CODE\(ts\) .*\(this one is timestamp"):
        t_env.sql_query("SELECT HASH_CODE(ts) FROM t")


def test_a_map_constructor_without_whole_pairs_is_refused_as_in_flink(t_env):
    for wrong in ("MAP['a']", "MAP['a', 1, 'b']"):
        with pytest.raises(PlanError, match=r"MAP\[...\] takes one or more pairs of a key and a value"):
            t_env.sql_query(f"SELECT {wrong} AS m FROM t")


def test_a_binary_literal_is_read_and_a_malformed_one_is_a_syntax_error(t_env):
    assert t_env.sql_query("SELECT X'6869' AS b, DECODE(x'6869', 'UTF-8') AS s FROM t").get_schema().names == ("b", "s")
    with pytest.raises(PlanError, match=r"SQL syntax error: .*X'\.\.\.' literal of other than hex digits"):
        t_env.sql_query("SELECT X'6G' FROM t")


def test_a_python_function_is_no_unknown_function(t_env):
    t_env.create_temporary_function("shout", udf(lambda s: s.upper() + "!", result_type="STRING"))
    assert t_env.sql_query("SELECT shout(s) AS x FROM t").get_schema().names == ("x",)
    with pytest.raises(PlanError, match="unknown function shoutt at line 1, column 8 \\(did you mean 'shout'\\?\\)"):
        t_env.sql_query("SELECT shoutt(s) FROM t")


def test_a_rewrite_takes_only_the_argument_counts_it_knows():
    with pytest.raises(UnsupportedError, match=r"SPLIT_INDEX with 2 arguments \(funke gives Flink's SPLIT_INDEX for 3\)"):
        _spark("SPLIT_INDEX('a,b', ',')")


def test_rewrites_reach_nested_calls():
    """A rewritten call's arguments get Flink's meaning too (a SPLIT_INDEX inside REGEXP_EXTRACT)."""
    spark = _spark("REGEXP_EXTRACT(SPLIT_INDEX('a-1,b-2', ',', 1), '[0-9]')")
    assert "SPLIT_INDEX" not in spark.upper() and "TRY_ELEMENT_AT" in spark.upper()


@pytest.mark.parametrize("value", ["CURRENT_TIMESTAMP", "CURRENT_ROW_TIMESTAMP()", "LOCALTIMESTAMP", "NOW()"])
def test_a_current_time_as_a_string_has_three_fraction_digits_as_in_flink(value):
    """Spark's CAST leaves out trailing zeros of the fraction (``.12``, where Flink writes ``.120``): the one
    spelling it has is funke's ``DATE_FORMAT`` with ``.SSS`` (tests/spark/test_sql_functions.py runs it)."""
    assert "yyyy-MM-dd HH:mm:ss.SSS" in _spark(f"CAST({value} AS STRING)")


def test_match_recognize_functions_are_its_compilers_to_read(t_env):
    query = """SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES LAST(A.n) AS last_n, MATCH_ROWTIME() AS mt
               ONE ROW PER MATCH PATTERN (A B) DEFINE B AS B.n > PREV(B.n))"""
    assert "last_n" in t_env.sql_query(query).get_schema().names


def test_a_computed_column_calls_flinks_functions_too(t_env):
    t_env.execute_sql("CREATE TABLE c (s STRING, u AS UPPER(s), bad AS DATE_ADD(s, 1)) WITH ('connector' = 'datagen')")
    with pytest.raises(PlanError, match="unknown function DATE_ADD"):
        t_env.sql_query("SELECT u FROM c")


def test_batch_mode_window_functions_plan_with_flinks_types_and_a_stream_refuses_them_as_flink_does(t_env):
    """Types and refusals checked against PyFlink 2.3: NTILE and the ranks BIGINT, CUME_DIST and PERCENT_RANK DOUBLE,
    LEAD its value's type; in streaming mode "... Function is not supported in stream mode"; in batch mode a frame
    with a ranking function or LEAD, and no ORDER BY with RANK or CUME_DIST, are refused (NTILE takes both)."""
    for f in ("LEAD(n)", "NTILE(2)", "CUME_DIST()", "PERCENT_RANK()"):
        name = f.split("(")[0]
        with pytest.raises(UnsupportedError, match=rf"Flink runs no {name} in streaming mode .*run it in batch mode"):
            t_env.sql_query(f"SELECT s, {f} OVER (PARTITION BY s ORDER BY ts) AS r FROM t")
    batch = StreamTableEnvironment.create(fk.StreamEnvironment(app="functions", runtime_mode="batch"))
    batch.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES ('a', 1, 10), ('a', 2, CAST(NULL AS INT))) AS v(k, o, x)")
    w = "OVER (PARTITION BY k ORDER BY o DESC, x)"
    table = batch.sql_query(
        f"SELECT k, LEAD(x, 2, -1) {w} AS l, LEAD(CAST(o AS BIGINT), -1, 0) {w} AS l2, NTILE(3) {w} + 1 AS nt, CUME_DIST() {w} AS cd, "
        f"PERCENT_RANK() {w} AS pr, RANK() {w} AS rk, DENSE_RANK() {w} AS dr, ROW_NUMBER() {w} AS rn, SUM(x) {w} AS s FROM v"
    )
    assert [(f.name, f.dtype) for f in table.get_schema().fields] == [
        ("k", "string"), ("l", "int"), ("l2", "bigint"), ("nt", "bigint"), ("cd", "double"), ("pr", "double"),
        ("rk", "bigint"), ("dr", "bigint"), ("rn", "bigint"), ("s", "int"),
    ]  # fmt: skip
    assert batch.sql_query("SELECT k, NTILE(2) OVER (PARTITION BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS n FROM v").get_schema().names == ("k", "n")
    # (two windows in one SELECT, as Flink's batch mode takes them: an operator each)
    two = batch.sql_query("SELECT k, SUM(x) OVER (PARTITION BY k ORDER BY o ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s, LEAD(x) OVER (ORDER BY o) AS l FROM v")
    assert two.get_schema().names == ("k", "s", "l") and str(two.explain()).count("OverAtEnd") == 2
    for sql, refused in [
        ("SELECT RANK() OVER (PARTITION BY k ORDER BY o ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM v", "a frame for RANK.*no ROWS/RANGE"),
        ("SELECT LEAD(x) OVER (PARTITION BY k ORDER BY o ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM v", "a frame for LEAD"),
        ("SELECT CUME_DIST() OVER (PARTITION BY k) FROM v", r"CUME_DIST\(\) OVER \(\.\.\.\) without ORDER BY"),
        ("SELECT NTILE(0) OVER (PARTITION BY k ORDER BY o) FROM v", "NTILE's argument 0 .*a positive integer literal"),
        ("SELECT NTILE(o) OVER (PARTITION BY k ORDER BY o) FROM v", "NTILE's argument o"),
        ("SELECT LEAD(x, o) OVER (PARTITION BY k ORDER BY o) FROM v", "LEAD's offset o .*an integer literal"),
    ]:
        with pytest.raises(UnsupportedError, match=refused):
            batch.sql_query(sql)


def test_a_time_is_sparks_time_of_flinks_precision():
    """Flink's TIME(p) keeps milliseconds at most and is TIME(0) unless written otherwise; a literal's precision
    is its fraction's digits (past milliseconds cut off), as Flink types it."""
    assert _spark("TIME '12:34:56.1239'") == "CAST('12:34:56.123' AS TIME(3))"
    assert _spark("TIME '1:2:3'") == "CAST('01:02:03' AS TIME(0))"
    assert _spark("CAST(TIMESTAMP '2020-01-01 12:34:56' AS TIME(6))").endswith("AS TIME(3))")
    assert _spark("CAST(TIME '12:34:56' AS TIMESTAMP)").startswith("MAKE_TIMESTAMP(CAST('1970-01-01' AS DATE)")
    assert _spark("LOCALTIME") == _spark("CURRENT_TIME") == "CURRENT_TIME(0)"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("TIME '12:00:00' - TIME '11:00:00'", "Flink has no TIME - TIME"),
        ("TIMESTAMP '2020-01-01 00:00:00' + TIME '01:00:00'", "a TIME takes \\+ or - an INTERVAL literal"),
        ("CAST(TIME '12:34:56' AS INT)", "Flink CASTs a TIME to a STRING, TIME or TIMESTAMP, not to INT"),
        ("CAST(DATE '2020-01-01' AS TIME)", "Flink CASTs a STRING, TIME or TIMESTAMP to a TIME, not a DATE"),
        ("DATE_FORMAT(TIME '12:34:56', 'HH:mm')", "Flink's DATE_FORMAT takes no TIME argument"),
        ("CONCAT('a', TIME '12:34:56')", "Flink's CONCAT takes no TIME argument"),
        ("YEAR(TIME '12:34:56')", "Flink's YEAR takes no TIME argument"),
        ("TIME '12:34:56' LIKE '12%'", "Flink's LIKE takes no TIME"),
        ("EXTRACT(DAY FROM TIME '12:34:56')", "Flink EXTRACTs HOUR, MINUTE, SECOND, MILLISECOND from a TIME"),
        ("FLOOR(TIME '12:34:56' TO HOUR)", "FLOOR\\(... TO HOUR\\) of a TIME is not supported by funke yet"),
        ("TIME '12:34'", "Illegal TIME literal '12:34'"),
        ("TIME '24:00:00'", "Illegal TIME literal '24:00:00'"),
    ],
)
def test_what_flink_does_not_do_with_a_time_is_refused_while_planning(expression, message):
    with pytest.raises(PlanError, match=message):
        _spark(expression)




def test_a_like_pattern_s_invalid_escape_is_refused_as_flink_refuses_it(t_env):
    """PyFlink 2.3 refuses these three while planning; a valid ESCAPE runs (tests/spark/test_sql_functions' cases)."""
    for pattern, escape in (("a!", "!"), ("a!b", "!"), ("ab", "xy")):
        with pytest.raises(PlanError, match="invalid escape sequence|must be one character"):
            t_env.sql_query(f"SELECT s LIKE '{pattern}' ESCAPE '{escape}' FROM t")
    assert "RLIKE" in _spark("s NOT LIKE 'a!_' ESCAPE '!'") and "LIKE" in _spark("s LIKE s")


def test_timestampadd_takes_flink_s_units_only(t_env):
    """PyFlink 2.3 refuses MICROSECOND and DAYOFYEAR (and MILLISECOND), which Spark's TIMESTAMPADD takes."""
    for unit in ("MICROSECOND", "DAYOFYEAR", "MILLISECOND"):
        with pytest.raises(PlanError, match=f"TIMESTAMPADD takes the units .* not {unit}"):
            t_env.sql_query(f"SELECT TIMESTAMPADD({unit}, 1, ts) FROM t")
