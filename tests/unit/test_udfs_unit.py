"""What a Python scalar function's Arrow UDF does with one Arrow batch (``funke.spark.udfs``), called here
directly, without Spark: each kind's calls and results, the arguments' Python values, async functions,
and the messages of a function that raises or returns what its type cannot hold."""

from __future__ import annotations

import asyncio
import datetime as dt

import pandas as pd
import pyarrow as pa
import pytest

from funke.errors import UserFunctionError
from funke.plan.functions import PythonScalar
from funke.spark.udfs import _batch, _run, arrow_type


def run(fn, result_type, *columns, kind="general", name="f", **more):
    spec = PythonScalar.of(name, fn, kind=kind, result_type=result_type, arity=len(columns), **more)
    return _batch(spec, arrow_type(result_type), tuple(pa.array(c) for c in columns), 0, 3).to_pylist()


def test_a_row_function_gets_python_values_and_its_results_become_the_declared_type():
    assert run(lambda a, b: None if a is None else a * b, "bigint", [1, 2, None], [3, 4, 5]) == [3, 8, None]
    assert run(lambda t: t.isoformat(), "string", pa.array([dt.datetime(2024, 1, 1, 12)], pa.timestamp("us", tz="UTC"))) == [
        "2024-01-01T12:00:00"
    ]
    assert run(lambda m: sorted(m), "array<string>", pa.array([[("b", 1), ("a", 2)]], pa.map_(pa.string(), pa.int64()))) == [
        ["a", "b"]
    ]
    assert run(lambda v: (v, str(v)), "struct<n:int,s:string>", [7]) == [{"n": 7, "s": "7"}]
    assert run(lambda v: {"s": str(v), "n": v}, "struct<n:int,s:string>", [7]) == [{"n": 7, "s": "7"}]
    assert run(lambda v: v / 4, "float", [1]) == [0.25]


def test_pandas_and_arrow_functions_get_whole_batches():
    assert run(lambda s: pd.Series([len(s)] * len(s)), "bigint", [1, 2, 3], kind="pandas") == [3, 3, 3]
    assert run(lambda a: pa.compute.add(a, 1), "int", pa.array([1, 2], pa.int32()), kind="arrow") == [2, 3]
    naive = run(lambda t: t.dt.hour, "int", pa.array([dt.datetime(2024, 1, 1, 5)], pa.timestamp("us", tz="UTC")), kind="pandas")
    assert naive == [5]


def test_an_async_function_runs_its_batch_concurrently():
    in_flight, most = [0], [0]

    async def lookup(v):
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        await asyncio.sleep(0)  # (yields to the loop once: every call of the batch starts before any ends)
        in_flight[0] -= 1
        return v * 10

    assert run(lookup, "bigint", [1, 2, 3]) == [10, 20, 30]
    assert most[0] == 3  # (one call after another would have had at most 1 in flight)

    async def broken(v):
        if v == 2:
            raise KeyError("two")
        return v

    with pytest.raises(
        UserFunctionError,
        match=r"Python function f raised KeyError: 'two' on row 1 of Arrow batch 0 of Spark partition 3, arguments \(2,\)",
    ):
        run(broken, "bigint", [1, 2, 3])


def test_failures_name_the_function_the_row_and_the_arguments():
    with pytest.raises(
        UserFunctionError,
        match=r"Python function inverse raised ZeroDivisionError: division by zero on row 1 of Arrow batch 0 of Spark partition 3, arguments \(0,\)",
    ):
        run(lambda v: 1 / v, "double", [2, 0], name="inverse")
    with pytest.raises(
        UserFunctionError,
        match=r"Python function label returned 'x' \(str\) on row 0 of Arrow batch 0 of Spark partition 3, arguments \(1,\), but its result_type is INT",
    ):
        run(lambda v: "x", "int", [1], name="label", declared="INT")
    with pytest.raises(
        UserFunctionError,
        match=r"Python function half \(pandas\) returned 1 values on Arrow batch 0 of Spark partition 3 of 2 rows",
    ):
        run(lambda s: pd.Series([1.0]), "double", [1, 2], kind="pandas", name="half")
    with pytest.raises(
        UserFunctionError,
        match=r"Python function words \(pandas\) returned values of type object .* but its result_type is BIGINT",
    ):
        run(lambda s: pd.Series(["a", "b"]), "bigint", [1, 2], kind="pandas", name="words", declared="BIGINT")


def test_open_and_close_run_around_a_tasks_batches():
    events: list[str] = []

    class Counting:
        def open(self, context):
            events.append(f"open {context.get_job_parameter('p', '?')}")

        def eval(self, v):
            return v

        def close(self):
            events.append("close")

    from funke.table import FunctionContext

    fn = Counting()
    spec = PythonScalar.of(
        "c", fn.eval, kind="general", result_type="bigint", arity=1, owner=fn, context=FunctionContext({"p": "1"})
    )
    out = list(_run(spec, pa.int64(), iter([(pa.array([1]),), (pa.array([2]),)])))
    assert [a.to_pylist() for a in out] == [[1], [2]] and events == ["open 1", "close"]


def test_an_async_function_is_a_row_function_and_a_scalar_one():
    from funke.errors import PlanError
    from funke.table import AsyncScalarFunction, udf, udtf
    from funke.table.udf import as_function

    class Lookup(AsyncScalarFunction):
        async def eval(self, v):
            return v

    async def lookup(v):
        return v

    with pytest.raises(
        PlanError, match=r"udf lookup: an async function runs row at a time \(func_type='general'\), not 'pandas'"
    ):
        udf(lookup, result_type="BIGINT", func_type="pandas")
    with pytest.raises(
        PlanError, match=r"udtf\(\) takes a function or a TableFunction; Lookup is a scalar function: use udf\(\)"
    ):
        udtf(Lookup(), result_types=["BIGINT"])
    with pytest.raises(
        PlanError, match=r"function l: a Lookup needs its result type: register udf\(Lookup\(\), result_type=...\)"
    ):
        as_function(Lookup(), "l")
    assert udf(Lookup(), result_type="BIGINT").kind == "scalar"
