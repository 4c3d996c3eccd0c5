"""PyFlink's expression DSL (``pyflink.table.expressions`` and the ``Expression`` methods) on funke: each
expression below gives what real PyFlink 2.3 gives for it (batch mode, UTC, one row ``(1, ' ab,c ', 4.0, TRUE,
'{"a": [1, 2]}')``; values as ``repr`` shows them, taken from PyFlink 2.3 run on the same script), all in one
query. The names a star import binds are PyFlink's, read from its wheel at run time."""

from __future__ import annotations

import ast
import json

import pytest

from funke.bench.pyflink import pyflink_source
from funke.errors import UnsupportedError

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("spark")]

#: (a Table API expression, PyFlink 2.3's value).
CASES = [
    ("pi()", "3.141592653589793"),
    ("e()", "2.718281828459045"),
    ('atan2(col("x"), lit(1.0))', "1.3258176636680326"),
    ('negative(col("id"))', "-1"),
    ('concat_ws("-", col("s"), "z")', "' ab,c -z'"),
    ("null_of(DataTypes.INT())", "None"),
    ('log(col("x"))', "1.3862943611198906"),
    ('log(col("x"), 2)', "2.0"),
    ('to_date("2024-02-03")', "datetime.date(2024, 2, 3)"),
    ("ts", "datetime.datetime(2024, 2, 3, 4, 5, 6)"),
    ('date_format(ts, "yyyy/MM/dd")', "'2024/02/03'"),
    ('timestamp_diff(TimePointUnit.DAY, ts, to_timestamp("2024-02-13 04:05:06"))', "10"),
    ('from_unixtime(col("id"))', "'1970-01-01 00:00:01'"),
    ('unix_timestamp("2024-02-03 04:05:06")', "1706933106"),
    ('array(col("id"), 5)', "[1, 5]"),
    ('map_("a", col("id"))', "{'a': 1}"),
    ("uuid().char_length", "36"),
    ("current_date().is_not_null", "True"),
    ("local_timestamp().is_not_null", "True"),
    ('temporal_overlaps(ts, lit(2).hours, to_timestamp("2024-02-03 05:05:06"), lit(2).hours)', "True"),
    ("current_database()", "'default_database'"),
    ('col("b").is_true', "True"),
    ('col("b").is_not_false', "True"),
    ('col("s").is_null', "False"),
    ('col("s").upper_case', "' AB,C '"),
    ('col("s").char_length', "6"),
    ('negative(col("x")).abs', "4.0"),
    ('col("x").sqrt', "2.0"),
    ('col("x").ln', "1.3862943611198906"),
    ('col("x").log2', "2.0"),
    ('col("s").reverse', "' c,ba '"),
    ('col("s").md5', "'6120341c3e84cd5e322c9f6c19a0fa19'"),
    ('col("s").sha256', "'d905d996a54b84c07b36d0de8fbebdd1e161d3f21c7f6be3cc4ab9cefef3098c'"),
    ('col("s").to_base64', "'IGFiLGMg'"),
    ('col("id").hex', "'1'"),
    ('negative(col("x")).sign', "-1.0"),
    ("array(1, 2, 3).cardinality", "3"),
    ('map_("a", 1).map_keys', "['a']"),
    ('lit("2024-02-03").to_date', "datetime.date(2024, 2, 3)"),
    ('lit("2024-02-03 04:05:06").to_timestamp', "datetime.datetime(2024, 2, 3, 4, 5, 6)"),
    ('col("s").trim()', "'ab,c'"),
    ('lit("xxaxx").trim("x")', "'a'"),
    ('col("s").trim_leading()', "'ab,c '"),
    ('lit("xxaxx").trim_trailing("x")', "'xxa'"),
    ('col("s").ltrim()', "'ab,c '"),
    ('col("s").rtrim()', "' ab,c'"),
    ('col("x").floor()', "4.0"),
    ('(col("x") + 0.5).ceil()', "5.0"),
    ("ts.floor(TimeIntervalUnit.HOUR)", "datetime.datetime(2024, 2, 3, 4, 0)"),
    ("ts.ceil(TimeIntervalUnit.DAY)", "datetime.datetime(2024, 2, 4, 0, 0)"),
    ("ts.extract(TimeIntervalUnit.MONTH)", "2"),
    ('lit("b").position(col("s"))', "3"),
    ('lit("b").locate(col("s"))', "3"),
    ('col("s").instr("c")', "5"),
    ('lit("ab").lpad(5, "*")', "'***ab'"),
    ('lit("ab").rpad(5, "*")', "'ab***'"),
    ('lit("hello").overlay("XX", 2, 1)', "'hXXllo'"),
    ('col("s").replace(",", ";")', "' ab;c '"),
    ('lit("ab").repeat(3)', "'ababab'"),
    ('col("s").regexp("a.,")', "True"),
    ('col("s").regexp_replace("[a-b]", "X")', "' XX,c '"),
    ('lit("foo123bar").regexp_extract("([a-z]+)(\\\\d+)", 2)', "'123'"),
    ('col("s").split_index(",", 1)', "'c '"),
    ('lit("hello").left(2)', "'he'"),
    ('lit("hello").right(2)', "'lo'"),
    ('lit("hello").starts_with("he")', "True"),
    ('lit("hello").ends_with("lo")', "True"),
    ('lit("hello").substr(2, 3)', "'ell'"),
    ('lit("hello").substring(2)', "'ello'"),
    ('lit("a").concat("b")', "'ab'"),
    ('col("id").not_between(2, 3)', "True"),
    ('lit("a_b").like("a!_b", "!")', "True"),
    ('lit("abc").similar("a%")', "True"),
    ('col("x").log(2)', "2.0"),
    ("lit(3.14159).truncate(2)", "3.14"),
    ("lit(3.14159).round(2)", "3.14"),
    ("array(10, 20).at(2)", "20"),
    ('map_("a", 1).at("a")', "1"),
    ("array(1, 2).array_contains(2)", "True"),
    ('lit("a,b").split(",")', "['a', 'b']"),
    ('col("s").sha2(256)', "'d905d996a54b84c07b36d0de8fbebdd1e161d3f21c7f6be3cc4ab9cefef3098c'"),
    ('lit("x1").try_cast(DataTypes.INT())', "None"),
    ('lit("a=1,b=2").str_to_map()', "{'a': '1', 'b': '2'}"),
    ('lit("http://h.com/p?q=1").parse_url("QUERY", "q")', "'1'"),
    ('lit("a b").url_encode()', "'a+b'"),
    ('lit(2).elt("a", "b")', "'b'"),
    ('lit("abc").translate("ab", "xy")', "'xyc'"),
    ('col("s").btrim()', "'ab,c'"),
    ('lit("%s-%d").printf("a", 3)', "'a-3'"),
]


def _names() -> dict:
    from funke.pyflink.table import DataTypes, expressions
    from funke.pyflink.table.expression import JsonOnNull, TimeIntervalUnit, TimePointUnit

    names = {n: getattr(expressions, n) for n in expressions.__all__}
    names.update(DataTypes=DataTypes, JsonOnNull=JsonOnNull, TimeIntervalUnit=TimeIntervalUnit, TimePointUnit=TimePointUnit)
    names["ts"] = names["to_timestamp"]("2024-02-03 04:05:06")
    return names


def test_each_expression_gives_pyflink_s_value():
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t = t_env.from_elements([(1, " ab,c ", 4.0, True, '{"a": [1, 2]}')], schema=["id", "s", "x", "b", "j"])
    names = _names()
    row = next(iter(t.select(*(eval(code, names).alias(f"c{i}") for i, (code, _) in enumerate(CASES))).execute().collect()))
    wrong = [(code, flink, repr(row[i])) for i, (code, flink) in enumerate(CASES) if repr(row[i]) != flink]
    assert not wrong, "\n".join(f"{c}: PyFlink {f}, funke {got}" for c, f, got in wrong)


def test_a_star_import_binds_pyflink_s_names():
    """``from pyflink.table.expressions import *`` binds PyFlink's names, ``json`` (an expression function)
    among them, so a script that imports the json module first sees what it sees on PyFlink."""
    from funke.pyflink.table import expressions

    tree = ast.parse(pyflink_source("pyflink/table/expressions.py"))
    declared = next(
        ast.literal_eval(node.value) for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets)
    )  # fmt: skip
    assert sorted(expressions.__all__) == sorted(declared)
    bound = {"json": json, **{name: getattr(expressions, name) for name in expressions.__all__}}  # (import json; import *)
    assert not hasattr(bound["json"], "loads")


@pytest.mark.parametrize(("code", "named"), [
    ("with_columns(range_(1, 3))", "range_"), ("without_columns(col('a'))", "without_columns"),
    ("col('a').as_argument('x')", "as_argument"), ("col('a').get(1)", "get(1)"),
    ("col('j').json_query('$.a', JsonQueryWrapper.CONDITIONAL_ARRAY)", "json_query"),
    ("col('a').bitmap_cardinality()", "bitmap_cardinality"),
])  # fmt: skip
def test_an_untranslated_expression_is_refused_naming_it(code, named):
    from funke.pyflink.table.expression import JsonQueryWrapper

    with pytest.raises(UnsupportedError, match=named.replace("(", r"\(").replace(")", r"\)")):
        eval(code, {**_names(), "JsonQueryWrapper": JsonQueryWrapper})


def test_a_time_column_of_from_elements_as_pyflink_gives_it(capsys):
    """``DataTypes.TIME(p)`` columns from ``datetime.time`` values: collected, printed and in SQL as PyFlink 2.3's
    (checked on it): a TIME(3) keeps milliseconds, a TIME(0) prints and CASTs whole seconds."""
    import datetime as dt

    from funke.pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    fields = [DataTypes.FIELD("a", DataTypes.INT()), DataTypes.FIELD("t", DataTypes.TIME(3)), DataTypes.FIELD("s", DataTypes.TIME())]
    t = t_env.from_elements([(1, dt.time(1, 2, 3, 456789), dt.time(1, 2, 3, 456789)), (2, None, None)], DataTypes.ROW(fields))
    assert str(t.get_schema()).split("\n")[1:4] == [" |-- a: INT", " |-- t: TIME(3)", " |-- s: TIME(0)"]
    assert [tuple(r)[:2] for r in t.execute().collect()] == [(1, dt.time(1, 2, 3, 456000)), (2, None)]
    t.execute().print()
    assert capsys.readouterr().out.splitlines()[1:5] == [
        "|           a |            t |        s |",
        "+-------------+--------------+----------+",
        "|           1 | 01:02:03.456 | 01:02:03 |",
        "|           2 |       <NULL> |   <NULL> |",
    ]
    t_env.create_temporary_view("v", t)
    rows = t_env.execute_sql("SELECT CAST(s AS STRING), HOUR(t), t + INTERVAL '23' HOUR, CAST(t AS TIMESTAMP) FROM v WHERE a = 1").collect()
    assert [tuple(r) for r in rows] == [("01:02:03", 1, dt.time(0, 2, 3, 456000), dt.datetime(1970, 1, 1, 1, 2, 3, 456000))]
