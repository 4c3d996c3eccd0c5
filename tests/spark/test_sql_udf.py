"""Python UDFs in Flink SQL and the Table API on Spark: scalar (row-at-a-time, async, pandas, Arrow), table
functions (LATERAL TABLE) and UNNEST, aggregate functions (GROUP BY, window TVFs, pandas), table aggregate
functions (flat_aggregate), updates checked as changelogs; and a function that fails, named in the job's error.
Expected rows are derived by hand.

Kept cheap: every construct runs in ONE bounded job (a sink per construct; what a function computes does not
depend on the mode), one streaming job shows a scalar function feeding an aggregate function over two
micro-batches, and each failure is a job of its own. What the Arrow UDF does with a batch is unit-tested without
Spark (tests/unit/test_udfs_unit.py), the planning in tests/unit/test_table_udf_unit.py."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pyarrow.compute as pc
import pytest

import funke as fk
from funke.plan import nodes
from funke.plan.functions import PythonScalar
from funke.table import (
    AggregateFunction,
    DataTypes,
    ScalarFunction,
    StreamTableEnvironment,
    udaf,
    udf,
    udtaf,
    udtf,
)
from tests.spark.sql_udf_functions import Top2

pytestmark = pytest.mark.spark
T0 = dt.datetime(2024, 1, 1)
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
# (key, text, value, seconds): two micro-batches of three rows when streaming
ROWS = [("a", "x yy", 1, 1), ("b", "", 2, 2), ("a", "zzz", 3, 12), ("b", "q", 4, 13), ("a", None, 5, 14), ("c", "r s", 6, 15)]


def view(env, t_env, rows_per_batch=3):
    rows = [{"k": k, "s": s, "v": v, "ts": T0 + dt.timedelta(seconds=t)} for k, s, v, t in ROWS]
    t_env.create_temporary_view(
        "t", env.from_collection(rows, "k string, s string, v int, ts timestamp", rows_per_batch=rows_per_batch, watermarks=WM)
    )
    return t_env.sql_query("SELECT * FROM t")


class Scaled(ScalarFunction):
    """Reads its factor from the job parameters when it opens (once per Spark task)."""

    def open(self, function_context):
        self.factor = int(function_context.get_job_parameter("factor", "1"))

    def eval(self, v):
        return v * self.factor


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def batch_rows(v: pd.Series) -> pd.Series:
    """How many rows the Arrow batch it is called with has (a vectorized function sees whole batches)."""
    return pd.Series([len(v)] * len(v))


@udf(result_type="BIGINT")
def plus(a, b):
    return a + b


@udf(result_type="BIGINT")
async def lookup(v):
    """An async function (PyFlink's AsyncScalarFunction's shape): the calls of a batch run concurrently."""
    return v * 100


@udf(result_type="ROW<name STRING, n INT>")
def pair(k, v):
    return k.upper(), v * 2


@udtf(result_types=["STRING", "INT"])
def fields(row):
    """Takes a ROW argument as a dict (a Spark Row would sort as a tuple of mixed values and fail)."""
    yield ",".join(f"{key}={row[key]}" for key in sorted(row)), len(row)


@udtf(result_types=["STRING", "INT"])
def split(s):
    for w in (s or "").split():
        yield w, len(w)


class Total(AggregateFunction):
    def create_accumulator(self):
        return [0]

    def accumulate(self, acc, v):
        acc[0] += v

    def retract(self, acc, v):
        acc[0] -= v

    def merge(self, acc, others):
        for o in others:
            acc[0] += o[0]

    def get_value(self, acc):
        return acc[0]


TOP2 = udtaf(Top2(), result_type="ROW<v INT, rank INT>")


def test_every_kind_of_python_function_in_one_bounded_job(env):
    t_env = StreamTableEnvironment.create(env)
    t = view(env, t_env)
    t_env.get_config().set("pipeline.global-job-parameters", "factor:10")
    t_env.create_temporary_function("plus", plus)
    t_env.create_temporary_system_function("half", udf(lambda v: v / 2, result_type=DataTypes.FLOAT(), func_type="pandas"))
    t_env.create_temporary_function("twice", udf(lambda v: pc.multiply(v, 2), result_type="INT", func_type="arrow"))
    t_env.create_temporary_function("scaled", udf(Scaled(), result_type="BIGINT"))
    t_env.create_temporary_function("batch_rows", batch_rows)
    t_env.create_temporary_function("lookup", lookup)
    t_env.execute_sql("CREATE TEMPORARY FUNCTION shout AS 'tests.spark.sql_udf_functions.shout' LANGUAGE PYTHON")
    scalar = t_env.sql_query(
        "SELECT k, plus(v, 10) AS p, shout(k) || '-' || COALESCE(shout(s), 'none') AS loud, half(v) AS h, twice(v) AS tw, "
        "scaled(v) AS sc, lookup(v) AS lk, batch_rows(v) AS n FROM t WHERE plus(v, 0) > 1"
    )
    explained = scalar.explain()
    assert "half (Arrow UDF, one call per Arrow batch with pandas Series)" in explained
    assert "twice (Arrow UDF, one call per Arrow batch with Arrow arrays)" in explained
    assert "plus (Arrow UDF, one Python call per row over Arrow batches)" in explained
    scalar_rows = t_env.to_data_stream(scalar).collect()

    # table functions: each part tagged, in one shape
    t_env.create_temporary_function("split", split)
    t_env.create_temporary_function("pair", pair)
    t_env.create_temporary_function("fields", fields)
    t_env.create_temporary_function("chars", udf(lambda s: list(s or ""), result_type="ARRAY<STRING>"))
    t_env.create_temporary_function(
        "counts", udf(lambda s: {w: len(w) for w in (s or "").split()}, result_type="MAP<STRING, INT>")
    )
    t_env.create_temporary_view("api_left", t.left_outer_join_lateral(split(fk.col("s")).alias("w", "n")).select("k", "w"))
    words = udtf(lambda row: [(w,) for w in (row["s"] or "").split()], result_types=["STRING"], name="words")
    t_env.create_temporary_view("api_words", t.flat_map(words).alias("word"))
    length = udf(lambda s: len(s or ""), result_type="INT", name="length")
    t_env.create_temporary_view(
        "api_select", t.where("v > 1").select("k", plus(fk.col("v"), 10).alias("p"), length("s").alias("len"))
    )
    tables = t_env.sql_query(
        "SELECT 'inner' AS q, k, w AS x, n AS i FROM t, LATERAL TABLE(split(s)) AS T(w, n) WHERE n > 1 "
        "UNION ALL SELECT 'left', k, w, CAST(NULL AS INT) FROM t LEFT JOIN LATERAL TABLE(split(s)) AS T(w, n) ON TRUE WHERE v < 4 "
        "UNION ALL SELECT 'row', k, x, i FROM t, LATERAL TABLE(fields(pair(k, v))) AS F(x, i) WHERE k = 'c' "
        "UNION ALL SELECT 'chars', k, c, i FROM t CROSS JOIN UNNEST(chars(s)) WITH ORDINALITY AS u(c, i) WHERE k = 'a' "
        "UNION ALL SELECT 'pairs', k, word, len FROM t CROSS JOIN UNNEST(counts(s)) AS m(word, len) "
        "UNION ALL SELECT 'api_left', k, w, CAST(NULL AS INT) FROM api_left "
        "UNION ALL SELECT 'api_words', '', word, CAST(NULL AS INT) FROM api_words "
        "UNION ALL SELECT 'api_select', k, CAST(p AS STRING), len FROM api_select"
    )
    table_rows = t_env.to_data_stream(tables).collect()

    # aggregate functions: a GROUP BY (from SQL and the Table API: one aggregation) and a window TVF
    total = udaf(Total(), result_type="BIGINT")
    t_env.create_temporary_function("total", total)
    grouped = t_env.sql_query("SELECT k, total(v * 10) AS t, COUNT(*) AS n FROM t GROUP BY k")
    api = t.group_by("k").select("k", total(fk.col("v") * 10).alias("t"), "COUNT(*) AS n")
    aggregations = [[repr(x.function) for x in nodes.walk([q._stream.node]) if isinstance(x, nodes.KeyedProcess)] for q in (api, grouped)]
    assert aggregations[0] == aggregations[1] and len(aggregations[0]) == 1  # (the Table API's call is the SQL's aggregation)
    group_changes = t_env.to_changelog_stream(grouped).collect()
    t_env.create_temporary_function("spread", udaf(lambda v: int(v.max() - v.min()), result_type="INT", func_type="pandas"))
    t_env.execute_sql("CREATE FUNCTION longest AS 'tests.spark.sql_udf_functions.Longest' LANGUAGE PYTHON")
    windowed = t_env.sql_query(
        "SELECT k, window_start, spread(v) AS sp, longest(s) AS l, total(v) AS t, COUNT(*) AS n "
        "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k"
    )
    window_rows = t_env.to_data_stream(windowed).collect()

    # table aggregate functions: per key, and over an updating input
    per_key = t.group_by("k").flat_aggregate(TOP2(fk.col("v"))).select("k", "v", "rank")
    top_changes = t_env.to_changelog_stream(per_key).collect()
    spread_a = t.where("k = 'a'").group_by("k").select("k", "MAX(v) - 2 * MIN(v) AS m")  # a: 1-2, 3-2, 5-2: -1, 1, 3
    top_of_updates = t_env.to_changelog_stream(spread_a.flat_aggregate(TOP2("m").alias("top", "r")).select("top", "r")).collect()

    env.execute(bounded=True).wait(300)

    rows = sorted((r["k"], r["p"], r["loud"], r["h"], r["tw"], r["sc"], r["lk"]) for r in scalar_rows.rows)
    assert rows == [
        ("a", 13, "A!-ZZZ!", 1.5, 6, 30, 300), ("a", 15, "A!-none", 2.5, 10, 50, 500), ("b", 12, "B!-!", 1.0, 4, 20, 200),
        ("b", 14, "B!-Q!", 2.0, 8, 40, 400), ("c", 16, "C!-R S!", 3.0, 12, 60, 600),
    ]  # fmt: skip
    assert isinstance(scalar_rows.rows[0]["h"], float)
    assert max(r["n"] for r in scalar_rows.rows) > 1  # (the pandas function got a Series of several rows at once)

    parts: dict[str, list[tuple]] = {}
    for r in table_rows.rows:
        parts.setdefault(r["q"], []).append((r["k"], r["x"], r["i"]))
    got = {q: sorted(rows, key=repr) for q, rows in parts.items()}
    assert got["inner"] == [("a", "yy", 2), ("a", "zzz", 3)]
    assert got["left"] == [
        ("a", "x", None),
        ("a", "yy", None),
        ("a", "zzz", None),
        ("b", None, None),
    ]  # (b's empty text kept, NULL)
    assert got["row"] == [("c", "n=12,name=C", 2)]
    assert got["chars"] == sorted(
        [("a", " ", 2), ("a", "x", 1), ("a", "y", 3), ("a", "y", 4), ("a", "z", 1), ("a", "z", 2), ("a", "z", 3)], key=repr
    )
    assert got["pairs"] == [("a", "x", 1), ("a", "yy", 2), ("a", "zzz", 3), ("b", "q", 1), ("c", "r", 1), ("c", "s", 1)]
    left = [("a", "x"), ("a", "yy"), ("a", "zzz"), ("b", None), ("b", "q"), ("a", None), ("c", "r"), ("c", "s")]
    assert got["api_left"] == sorted(((k, w, None) for k, w in left), key=repr)
    assert got["api_words"] == [
        ("", w, None) for w in ("q", "r", "s", "x", "yy", "zzz")
    ]  # (flat_map: the function's columns only)
    assert got["api_select"] == sorted([("a", "13", 3), ("a", "15", 0), ("b", "12", 0), ("b", "14", 1), ("c", "16", 3)], key=repr)

    per_group: dict[str, list[tuple]] = {}
    for r in group_changes.rows:
        per_group.setdefault(r["k"], []).append((r["row_kind"], r["t"], r["n"]))
    assert per_group == {
        "a": [("+I", 10, 1), ("-U", 10, 1), ("+U", 40, 2), ("-U", 40, 2), ("+U", 90, 3)],
        "b": [("+I", 20, 1), ("-U", 20, 1), ("+U", 60, 2)],
        "c": [("+I", 60, 1)],
    }
    assert sorted((r["k"], (r["window_start"] - T0).seconds, r["sp"], r["l"], r["t"], r["n"]) for r in window_rows.rows) == [
        ("a", 0, 0, "x yy", 1, 1), ("a", 10, 2, "zzz", 8, 2), ("b", 0, 0, "", 2, 1), ("b", 10, 0, "q", 4, 1), ("c", 10, 0, "r s", 6, 1),
    ]  # fmt: skip

    tops: dict[str, list[tuple]] = {}
    for r in top_changes.rows:
        tops.setdefault(r["k"], []).append((r["row_kind"], r["v"], r["rank"]))
    assert tops == {
        "a": [("+I", 1, 1), ("-D", 1, 1), ("+I", 3, 1), ("+I", 1, 2), ("-D", 3, 1), ("-D", 1, 2), ("+I", 5, 1), ("+I", 3, 2)],
        "b": [("+I", 2, 1), ("-D", 2, 1), ("+I", 4, 1), ("+I", 2, 2)],
        "c": [("+I", 6, 1)],
    }
    # the input's changelog +I -1, -U -1, +U 1, -U 1, +U 3: each -U takes its value back (the last one: state cleared)
    assert [(r["row_kind"], r["top"], r["r"]) for r in top_of_updates.rows] == [
        ("+I", -1, 1), ("-D", -1, 1), ("+I", 1, 1), ("-D", 1, 1), ("+I", 3, 1),
    ]  # fmt: skip


def test_streaming_scalar_functions_feed_an_aggregate_function_over_micro_batches(env):
    """Two micro-batches of three rows: the row and Arrow functions run in each, the aggregate function's
    accumulators carry over, and each row that changes a key's result is a -U/+U pair."""
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t_env.create_temporary_function("plus", plus)
    t_env.create_temporary_function("twice", udf(lambda v: pc.multiply(v, 2), result_type="INT", func_type="arrow"))
    t_env.create_temporary_function("total", udaf(Total(), result_type="BIGINT"))
    grouped = t_env.sql_query("SELECT k, total(plus(v, 10)) AS t, total(twice(v)) AS w, COUNT(*) AS n FROM t GROUP BY k")
    changes = t_env.to_changelog_stream(grouped).collect()
    env.execute(bounded=False).wait(300)
    per_key: dict[str, list[tuple]] = {}
    for r in changes.rows:
        per_key.setdefault(r["k"], []).append((r["row_kind"], r["t"], r["w"], r["n"]))
    # a: v 1 (first batch), 3 and 5 (second); b: 2, then 4; c: 6. t sums v + 10, w sums 2v
    assert per_key == {
        "a": [("+I", 11, 2, 1), ("-U", 11, 2, 1), ("+U", 24, 8, 2), ("-U", 24, 8, 2), ("+U", 39, 18, 3)],
        "b": [("+I", 12, 4, 1), ("-U", 12, 4, 1), ("+U", 26, 12, 2)],
        "c": [("+I", 16, 12, 1)],
    }


def test_a_function_that_raises_fails_the_job_naming_it_the_row_and_its_arguments(env):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t_env.create_temporary_function("inverse", udf(lambda v: 1 / (v - 3), result_type="DOUBLE"))
    t_env.to_data_stream(t_env.sql_query("SELECT k, inverse(v) AS i FROM t")).collect()
    with pytest.raises(fk.JobFailedError) as e:
        env.execute(bounded=True).wait(300)
    assert "Python function inverse raised ZeroDivisionError: division by zero on row" in str(e.value)
    assert "arguments (3,)" in str(e.value)


def test_a_table_function_that_raises_fails_the_job_naming_it(env):
    t_env = StreamTableEnvironment.create(env)
    view(env, t_env)
    t_env.create_temporary_function("explode_on_b", udtf(lambda k: [(1 / (k != "b"),)], result_types=["DOUBLE"]))
    t_env.to_data_stream(t_env.sql_query("SELECT k, f0 FROM t, LATERAL TABLE(explode_on_b(k))")).collect()
    with pytest.raises(fk.JobFailedError) as e:
        env.execute(bounded=True).wait(300)
    assert "Python table function explode_on_b raised ZeroDivisionError" in str(e.value) and "arguments ('b',)" in str(e.value)


def test_a_non_deterministic_function_is_one_to_spark(spark):
    from funke.spark.udfs import scalar_udf

    spec = PythonScalar.of("dice", lambda v: v, kind="general", result_type="int", arity=1, deterministic=False)
    assert scalar_udf(spec).deterministic is False
    assert scalar_udf(PythonScalar.of("same", lambda v: v, kind="general", result_type="int", arity=1)).deterministic is True
