"""Python UDFs of funke's Flink SQL and Table API, without Spark: the function makers and types, the
catalog and CREATE/DROP FUNCTION, how queries calling them are planned, what is refused while planning
(with which message), and the aggregate and table aggregate functions' changelogs, derived by hand."""

from __future__ import annotations

import pytest

import funke as fk
from funke.errors import PlanError, UnsupportedError, UserFunctionError
from funke.plan import nodes as n
from funke.plan.functions import LateralTable, PythonScalar, calls_in, fingerprint, python_calls
from funke.plan.types import Schema
from funke.table import (
    AggregateFunction,
    DataTypes,
    FunctionContext,
    ScalarFunction,
    StreamTableEnvironment,
    TableFunction,
    udaf,
    udf,
    udtaf,
    udtf,
)
from funke.table.aggregate import AggregateCall, GroupAggregate, WindowAggregates
from funke.table.catalog import FunctionCatalog
from funke.table.changelog import ROW_KIND
from funke.table.data_types import spark_type
from funke.table.udf_runtime import PythonAggregate, TableAggregate, TableFunctionRows
from tests.spark.sql_udf_functions import Top2


class Total(AggregateFunction):
    def create_accumulator(self):
        return [0, 0]  # sum, count

    def accumulate(self, acc, v):
        if v is not None:
            acc[0] += v
            acc[1] += 1

    def retract(self, acc, v):
        if v is not None:
            acc[0] -= v
            acc[1] -= 1

    def merge(self, acc, others):
        for o in others:
            acc[0] += o[0]
            acc[1] += o[1]

    def get_value(self, acc):
        return acc[0] if acc[1] else None


@udf(result_type="BIGINT")
def plus(a, b):
    return a + b


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split(s):
    for w in s.split():
        yield w, len(w)


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="udf-unit")
    t_env = StreamTableEnvironment.create(env)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    t_env.create_temporary_view("ev", env.from_collection([], "k string, s string, ts timestamp, v int", watermarks=wm))
    t_env.create_temporary_function("plus", plus)
    t_env.create_temporary_function("split", split)
    t_env.create_temporary_function("total", udaf(Total(), result_type="BIGINT"))
    t_env.create_temporary_function("half", udf(lambda v: v / 2, result_type=DataTypes.FLOAT(), func_type="pandas"))
    t_env.create_temporary_function("top2", udtaf(Top2(), result_type="ROW<v INT, rank INT>"))
    return t_env


def nodes_of(table) -> list[n.Node]:
    return n.walk([table._stream.node])


# -- types and makers -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("declared", "column_type"),
    [
        (DataTypes.BIGINT(), "bigint"), (DataTypes.FLOAT(), "float"), (DataTypes.DOUBLE(), "double"), ("FLOAT", "float"),
        (DataTypes.DECIMAL(10, 2), "decimal(10,2)"), (DataTypes.TIMESTAMP(3), "timestamp"), (DataTypes.TIMESTAMP_LTZ(3), "timestamp"),
        (DataTypes.ARRAY(DataTypes.STRING()), "array<string>"), (DataTypes.MAP(DataTypes.STRING(), DataTypes.BIGINT()), "map<string,bigint>"),
        (DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT()), DataTypes.FIELD("b", "STRING")]), "struct<a:int,b:string>"),
        ("ROW<a INT, tags ARRAY<STRING>>", "struct<a:int,tags:array<string>>"), ("BYTES", "binary"), ("varchar(10)", "string"),
        ("MAP<STRING, ARRAY<DOUBLE>>", "map<string,array<double>>"), ("INT NOT NULL", "int"),
    ],
)  # fmt: skip
def test_flink_types_and_datatypes_are_funke_column_types(declared, column_type):
    assert spark_type(declared) == column_type


def test_types_funke_cannot_hold_are_refused_by_name():
    with pytest.raises(PlanError, match="cannot read the type 'BIGGINT'"):
        spark_type("BIGGINT")


def test_a_time_is_sparks_time_of_milliseconds_at_most_and_no_python_result():
    """Flink's runtime keeps a TIME's milliseconds at most; Spark's Arrow exchange takes Python's times as
    TIME(6) only, so a Python function returning a TIME is refused."""
    assert (DataTypes.TIME().spark_type, DataTypes.TIME(6).spark_type, spark_type("TIME(2)")) == ("time(0)", "time(3)", "time(2)")
    assert DataTypes.TIME(3).as_summary_string() == "TIME(3)"
    with pytest.raises(UnsupportedError, match="udf clock: a result of type TIME is not supported by funke yet"):
        udf(lambda v: v, result_type=DataTypes.TIME(), name="clock")


def test_the_makers_take_functions_instances_and_classes_as_calls_and_decorators():
    class Half(ScalarFunction):
        def eval(self, v):
            return v / 2

    assert udf(Half(), result_type="DOUBLE").arity == 1 and udf(Half, result_type="DOUBLE").name == "Half"
    assert udf(lambda a, b, c=1: a, result_type="INT").arity == 2
    assert udf(lambda *a: a, result_type="INT").arity is None
    assert udf(plus.function, input_types=["INT", "INT", "INT"], result_type="INT").arity == 3  # (declared types say)
    assert split.result_names == ("f0", "f1") and split.result_spark_types == ("string", "int")
    named = udtf(lambda s: [], result_types="ROW<word STRING, n INT>")
    assert named.result_names == ("word", "n")
    agg = udaf(Total(), result_type="BIGINT")
    assert (agg.kind, agg.arity, agg.result_spark_type) == ("aggregate", 1, "bigint")
    pandas_mean = udaf(lambda v: v.mean(), result_type="DOUBLE", func_type="pandas")
    assert (pandas_mean.kind, pandas_mean.arity) == ("aggregate", 1)
    assert udtaf(Top2(), result_type="ROW<v INT, rank INT>").result_names == ("v", "rank")


def test_the_makers_refuse_what_cannot_run_naming_it():
    with pytest.raises(PlanError, match="udf lambda: give its result_type"):
        udf(lambda v: v)
    with pytest.raises(PlanError, match="func_type must be 'general', 'pandas' or 'arrow'"):
        udf(lambda v: v, result_type="INT", func_type="numpy")

    class Words(TableFunction):
        def eval(self, s):
            yield from s.split()

    with pytest.raises(PlanError, match="Words is a table function: use udtf"):
        udf(Words(), result_type="STRING")
    with pytest.raises(PlanError, match="udaf Top2: takes an AggregateFunction"):
        udaf(Top2(), result_type="INT")
    with pytest.raises(PlanError, match="Flink has no pandas table aggregate functions"):
        udtaf(Top2(), result_type="INT", func_type="pandas")
    with pytest.raises(PlanError, match="a Words needs its result type: register udtf"):
        StreamTableEnvironment.create(fk.StreamEnvironment(app="x")).create_temporary_function("w", Words())


def test_function_context_reads_job_parameters_and_refuses_metrics():
    ctx = FunctionContext({"threshold": "5"})
    assert ctx.get_job_parameter("threshold", "0") == "5" and ctx.get_job_parameter("other", "7") == "7"
    with pytest.raises(UnsupportedError, match=r"get_metric_group\(\) is not supported by funke"):
        ctx.get_metric_group()


# -- catalog and DDL ------------------------------------------------------------------------------------
def test_names_resolve_temporary_system_then_temporary_then_catalog_case_insensitively():
    a, b, c = (udf(lambda v, i=i: v + i, result_type="INT", name=f"f{i}") for i in range(3))
    catalog = FunctionCatalog()
    catalog.create("f", c)
    assert catalog.resolve("F") is c
    catalog.create_temporary("f", b)
    assert catalog.resolve("f") is b
    catalog.create_temporary_system("F", a)
    assert catalog.resolve("f") is a
    catalog.drop("temporary_system", "f")
    assert catalog.resolve("f") is b
    with pytest.raises(PlanError, match="a temporary function named 'f' exists already"):
        catalog.create_temporary("f", a)


def test_create_and_drop_function_statements(t_env):
    t_env.execute_sql(
        "CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS sys_shout AS 'tests.spark.sql_udf_functions.shout' LANGUAGE PYTHON"
    )
    t_env.execute_sql("CREATE FUNCTION longest AS 'tests.spark.sql_udf_functions.Longest' LANGUAGE PYTHON")  # (a class)
    t_env.execute_sql(
        "CREATE TEMPORARY FUNCTION IF NOT EXISTS plus AS 'tests.spark.sql_udf_functions.shout' LANGUAGE PYTHON"
    )  # kept
    assert t_env.list_user_defined_functions() == ["half", "longest", "plus", "split", "sys_shout", "top2", "total"]
    assert t_env._functions.resolve("plus") is plus and t_env._functions.resolve("longest").kind == "aggregate"
    t_env.execute_script(
        "DROP FUNCTION longest; DROP TEMPORARY SYSTEM FUNCTION sys_shout; DROP TEMPORARY FUNCTION IF EXISTS nothing;"
    )
    assert "longest" not in t_env.list_user_defined_functions() and "sys_shout" not in t_env.list_user_defined_functions()
    with pytest.raises(
        PlanError, match=r"DROP FUNCTION pluss: there is no temporary function of that name \(did you mean 'plus'\?\)"
    ):
        t_env.execute_sql("DROP TEMPORARY FUNCTION pluss")
    with pytest.raises(UnsupportedError, match="LANGUAGE JAVA is not supported by funke"):
        t_env.execute_sql("CREATE FUNCTION j AS 'com.example.Fn' LANGUAGE JAVA")
    with pytest.raises(PlanError, match="module tests.spark.sql_udf_functions has no 'nope'; it has"):
        t_env.execute_sql("CREATE FUNCTION n AS 'tests.spark.sql_udf_functions.nope' LANGUAGE PYTHON")
    with pytest.raises(PlanError, match="cannot import 'no_such_module'"):
        t_env.execute_sql("CREATE FUNCTION n AS 'no_such_module.f' LANGUAGE PYTHON")
    with pytest.raises(UnsupportedError, match="USING JAR"):
        t_env.execute_sql("CREATE FUNCTION n AS 'tests.spark.sql_udf_functions.shout' LANGUAGE PYTHON USING JAR 'x.jar'")


# -- planning ---------------------------------------------------------------------------------------------
def test_a_scalar_call_is_a_spark_call_by_a_stable_name_in_the_expression_around_it(t_env):
    t = t_env.sql_query(
        "SELECT k, UPPER(k) || CAST(plus(v, 1) AS STRING) AS p, plus(v, v) AS q, half(v) AS h FROM ev WHERE plus(v, 2) > 3"
    )
    select = t._stream.node
    specs = python_calls(select)
    assert [(s.name, s.kind, s.result_type, s.arity) for s in specs] == [
        ("plus", "general", "bigint", 2),
        ("half", "pandas", "float", 1),
    ]
    assert dict(zip(t.columns, (f.dtype for f in t.get_schema()), strict=True)) == {
        "k": "string",
        "p": "string",  # (|| of two strings)
        "q": "bigint",
        "h": "float",
    }
    again = t_env.sql_query("SELECT plus(v, 1) AS q FROM ev")
    assert (
        python_calls(again._stream.node)[0].spark_name == specs[0].spark_name
    )  # (the same function, the same name: stable uids)
    explained = t.explain()
    assert "plus (Arrow UDF, one Python call per row over Arrow batches)" in explained
    assert "half (Arrow UDF, one call per Arrow batch with pandas Series)" in explained


def test_fingerprints_follow_code_constants_and_closures_not_identity():
    def make(n):
        return lambda v: v + n

    assert fingerprint(make(1)) == fingerprint(make(1)) != fingerprint(make(2))
    assert fingerprint(lambda v: v + 1) != fingerprint(lambda v: v * 1)
    spec = PythonScalar.of("f", make(1), kind="general", result_type="int", arity=1, deterministic=False)
    assert calls_in(f"{spec.spark_name.upper()}(a)") == [spec] and "non-deterministic" in spec.describe()


def test_wrong_calls_are_refused_while_planning_naming_the_call_and_where(t_env):
    with pytest.raises(
        PlanError, match=r"(?i)plus\(v\) at line 1, column 11 passes 1 argument\(s\), but the Python function plus takes 2"
    ):
        t_env.sql_query("SELECT k, plus(v) FROM ev")
    typed = udf(lambda a: a, input_types=[DataTypes.BIGINT()], result_type="BIGINT", name="typed")
    t_env.create_temporary_function("typed", typed)
    with pytest.raises(
        PlanError, match=r"(?i)argument 1 of typed\(k\) at line 1, column 8 is STRING, but the Python function typed takes BIGINT"
    ):
        t_env.sql_query("SELECT typed(k) FROM ev")
    with pytest.raises(PlanError, match=r"unknown function pluss at line 1, column 8 \(did you mean 'plus'\?\)"):
        t_env.sql_query("SELECT pluss(v, 1) FROM ev")
    with pytest.raises(PlanError, match="split is a table function; use it in LATERAL TABLE"):
        t_env.sql_query("SELECT split(s) FROM ev")
    with pytest.raises(PlanError, match="plus is a scalar function, not a table function"):
        t_env.sql_query("SELECT * FROM ev, LATERAL TABLE(plus(v, 1))")
    with pytest.raises(PlanError, match=r"top2 is a table aggregate function; use it in the Table API's flat_aggregate"):
        t_env.sql_query("SELECT top2(v) FROM ev")
    with pytest.raises(PlanError, match=r"unknown table function splitt at .* \(did you mean 'split'\?\)"):
        t_env.sql_query("SELECT * FROM ev, LATERAL TABLE(splitt(s))")
    with pytest.raises(PlanError, match=r"names 1 column\(s\) \(w\), but split gives 2"):
        t_env.sql_query("SELECT * FROM ev, LATERAL TABLE(split(s)) AS T(w)")
    with pytest.raises(PlanError, match=r"UNNEST\(v\) at .* is of INT: UNNEST takes an ARRAY or a MAP"):
        t_env.sql_query("SELECT * FROM ev CROSS JOIN UNNEST(v) AS u(x)")
    with pytest.raises(PlanError, match="a pandas function takes at least one argument"):
        t_env.create_temporary_function("now_p", udf(lambda: 1, result_type="INT", func_type="pandas"))
        t_env.sql_query("SELECT now_p() FROM ev")
    with pytest.raises(UnsupportedError, match=r"LEFT JOIN LATERAL \.\.\. ON v > 1.*only ON TRUE"):
        t_env.sql_query("SELECT * FROM ev LEFT JOIN LATERAL TABLE(split(s)) AS T(w, n) ON v > 1")


def test_a_lateral_table_is_a_spark_lateral_join_node_and_unnest_stays_in_the_jvm(t_env):
    t = t_env.sql_query("SELECT e.k, T.w, n FROM ev AS e, LATERAL TABLE(split(UPPER(e.s))) AS T(w, n) WHERE n > 1")
    lateral = next(x for x in nodes_of(t) if isinstance(x, LateralTable))
    assert (lateral.function_name, lateral.outer, str(lateral.result)) == ("split", False, "w string, n int")
    assert lateral.args[0].startswith("_fk_")  # (UPPER(s) computed in the JVM first)
    assert t.columns == ("k", "w", "n")
    assert "Spark lateral join with the Python table function split as an Arrow UDTF" in t.explain()
    left = t_env.sql_query("SELECT k, w FROM ev LEFT JOIN LATERAL TABLE(split(s)) AS T(w, n) ON TRUE")
    assert next(x for x in nodes_of(left) if isinstance(x, LateralTable)).outer
    words = udf(lambda s: s.split(), result_type="ARRAY<STRING>", name="words")
    t_env.create_temporary_function("words", words)
    u = t_env.sql_query("SELECT k, x, o FROM ev CROSS JOIN UNNEST(words(s)) WITH ORDINALITY AS u(x, o)")
    assert not any(isinstance(x, (LateralTable, n.PythonFunction)) for x in nodes_of(u))
    assert dict(zip(u.columns, (f.dtype for f in u.get_schema()), strict=True)) == {"k": "string", "x": "string", "o": "int"}


def test_aggregate_functions_join_the_group_and_the_window_aggregations(t_env):
    grouped = t_env.sql_query("SELECT k, total(v) AS t, COUNT(*) AS n FROM ev GROUP BY k")
    process = next(x for x in nodes_of(grouped) if isinstance(x, n.KeyedProcess))
    assert isinstance(process.function, GroupAggregate)
    assert [type(f).__name__ for f in process.function.functions] == ["PythonAggregate", "Count"]
    assert next((c.name, c.args) for c in process.function.aggregates) == ("total", ("v",))
    assert grouped.columns == ("k", "t", "n") and grouped.updating
    windowed = t_env.sql_query(
        "SELECT k, window_start, total(v + 1) AS t, AVG(v) AS a FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, k"
    )
    window = next(x for x in nodes_of(windowed) if isinstance(x, n.WindowAggregate))
    calls = window.function.aggregate_fn
    assert isinstance(calls, WindowAggregates) and not window.aggregates  # (funke's window operator, all aggregates in one function)
    assert [type(f).__name__ for f in calls.functions] == ["PythonAggregate", "Avg"]
    assert dict(zip(windowed.columns, (f.dtype for f in windowed.get_schema()), strict=True))["t"] == "bigint"


def test_the_table_api_calls_python_functions_by_their_registered_or_own_names(t_env):
    t = t_env.sql_query("SELECT * FROM ev")
    shout = udf(lambda s: s.upper(), result_type="STRING", name="shout")
    out = t.select("k", plus(fk.col("v"), 1).alias("p"), shout("s").alias("loud"))
    assert out.columns == ("k", "p", "loud")
    assert [s.name for s in python_calls(out._stream.node)] == ["plus", "shout"]
    assert "shout" in t_env._functions.inline and "shout" not in t_env.list_user_defined_functions()
    lateral = t.join_lateral(split(fk.col("s")).alias("w", "n"))
    assert lateral.columns == ("k", "s", "ts", "v", "w", "n")
    assert t.flat_map(split).columns == ("f0", "f1")  # (the whole row: one argument)
    assert t.group_by("k").select("k", udaf(Total(), result_type="BIGINT")(fk.col("v")).alias("t")).columns == ("k", "t")
    top = t.group_by("k").flat_aggregate(udtaf(Top2(), result_type="ROW<v INT, rank INT>")("v")).select("k", "v", "rank")
    assert top.columns == ("k", "v", "rank") and top.updating


# -- what runs per row ----------------------------------------------------------------------------------------
def test_a_python_aggregate_changes_its_accumulator_in_place_after_the_result_before_the_row_is_read():
    call = AggregateCall("t", "total", ("v",), function=PythonAggregate(udaf(Total(), result_type="BIGINT")))
    agg = GroupAggregate(("k",), (call,))
    state, out = None, []
    for v in (3, None, 4):
        state, emitted = agg.step(state, {"k": "a", "v": v})
        out += [(r[ROW_KIND], r["t"]) for r in emitted]
    assert out == [("+I", 3), ("-U", 3), ("+U", 7)]  # (the NULL changes nothing: no update)
    total = PythonAggregate(udaf(Total(), result_type="BIGINT"))
    a, b = total.create_accumulator(), total.create_accumulator()
    total.accumulate(a, 2)
    total.accumulate(b, 5)
    total.merge(a, [b])
    assert total.get_value(a) == 7
    total.retract(a, 2)
    assert total.get_value(a) == 5


def test_a_python_aggregate_reports_its_failures_and_wrong_results_by_name():
    class Broken(Total):
        def accumulate(self, acc, v):
            raise ZeroDivisionError("no")

    agg = PythonAggregate(udaf(Broken(), result_type="BIGINT"))
    with pytest.raises(
        UserFunctionError, match=r"Python aggregate function Broken.accumulate raised ZeroDivisionError: no, arguments \(1,\)"
    ):
        agg.accumulate(agg.create_accumulator(), 1)
    wrong = PythonAggregate(udaf(Total(), result_type="STRING"))
    acc = wrong.create_accumulator()
    wrong.accumulate(acc, 2)
    with pytest.raises(UserFunctionError, match=r"returned 2 \(int\), but its result_type is string"):
        wrong.get_value(acc)


def test_a_python_aggregate_s_row_result_is_read_by_name_or_by_position():
    from funke.pyflink.common.types import Row

    class Pair(Total):
        def __init__(self, make):
            self.make = make

        def get_value(self, acc):
            return self.make(acc[1], acc[0])

    for make in (lambda n, s: Row(n, s), lambda n, s: Row(cnt=n, sum=s), lambda n, s: (n, s)):
        pair = PythonAggregate(udaf(Pair(make), result_type="ROW<cnt BIGINT, sum BIGINT>"))
        acc = pair.create_accumulator()
        pair.accumulate(acc, 5)
        assert pair.get_value(acc) == {"cnt": 1, "sum": 5}
    short = PythonAggregate(udaf(Pair(lambda n, s: Row(n)), result_type="ROW<cnt BIGINT, sum BIGINT>"))
    with pytest.raises(UserFunctionError, match=r"returned <Row\(0\)> \(Row\), but its result_type is struct<cnt:bigint,sum:bigint>"):
        short.get_value(short.create_accumulator())


def test_a_pandas_aggregate_sees_all_its_rows_as_series():
    median = PythonAggregate(udaf(lambda v: float(v.median()), result_type="DOUBLE", func_type="pandas"))
    acc = median.create_accumulator()
    for v in (5, 1, 3, 9):
        median.accumulate(acc, v)
    assert median.get_value(acc) == 4.0
    median.retract(acc, 9)
    assert median.get_value(acc) == 3.0


def test_a_table_aggregate_retracts_its_rows_and_emits_them_anew_per_key():
    fn = TableAggregate(udtaf(Top2(), result_type="ROW<v INT, rank INT>"), ("k",), ("v",), ("v", "rank"))
    kept, out = None, []
    for kind, v in (("+I", 5), ("+I", 7), ("+I", 1), ("-U", 7), ("-D", 5), ("-D", 1)):
        kept, emitted = fn.step(kept, {ROW_KIND: kind, "k": "a", "v": v})
        out.append([(r[ROW_KIND], r["v"], r["rank"]) for r in emitted])
    assert out == [
        [("+I", 5, 1)],
        [("-D", 5, 1), ("+I", 7, 1), ("+I", 5, 2)],
        [("-D", 7, 1), ("-D", 5, 2), ("+I", 7, 1), ("+I", 5, 2)],
        [("-D", 7, 1), ("-D", 5, 2), ("+I", 5, 1), ("+I", 1, 2)],  # (7 retracted)
        [("-D", 5, 1), ("-D", 1, 2), ("+I", 1, 1)],
        [("-D", 1, 1)],  # (the key's last row retracted: nothing more, state cleared)
    ]
    assert kept is None


def test_table_function_rows_pad_a_left_join_and_check_their_values():
    result = Schema.of("w string, n int")
    inner = TableFunctionRows(split, result, outer=False)
    inner.start()
    assert inner.rows(("a bb",)) == [("a", 1), ("bb", 2)] and inner.rows(("",)) == []
    assert TableFunctionRows(split, result, outer=True).rows(("",)) == [(None, None)]
    bad = TableFunctionRows(udtf(lambda s: [(s, "x")], result_types=["STRING", "INT"], name="bad"), result, outer=False)
    with pytest.raises(
        UserFunctionError,
        match=r"bad produced 'x' \(str\) for its column n of type int on row 0 of its Spark task, arguments \('q',\)",
    ):
        bad.rows(("q",))
    boom = TableFunctionRows(udtf(lambda s: 1 / 0, result_types=["STRING", "INT"], name="boom"), result, outer=False)
    with pytest.raises(
        UserFunctionError, match=r"boom raised ZeroDivisionError: division by zero on row 0 of its Spark task, arguments \('q',\)"
    ):
        boom.rows(("q",))


def test_a_python_aggregate_without_retract_is_refused_over_an_updating_input(t_env):
    class OnlyAdds(AggregateFunction):
        def create_accumulator(self):
            return [0]

        def accumulate(self, acc, v):
            acc[0] += v

        def get_value(self, acc):
            return acc[0]

    t_env.create_temporary_function("only_adds", udaf(OnlyAdds(), result_type="BIGINT"))
    t_env.create_temporary_view("per_key", t_env.sql_query("SELECT k, SUM(v) AS s FROM ev GROUP BY k"))
    assert t_env.sql_query("SELECT k, only_adds(v) AS t FROM ev GROUP BY k").updating  # (an insert-only input: no retract needed)
    with pytest.raises(PlanError, match=r"the aggregate function only_adds runs over an updating result here and has no retract"):
        t_env.sql_query("SELECT only_adds(s) AS t FROM per_key")
