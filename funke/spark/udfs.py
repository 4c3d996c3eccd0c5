"""Python scalar functions of Flink SQL on Spark: each one an Arrow UDF registered in the session under
its ``PythonScalar.spark_name`` (``funke.plan.functions``), called from the query's Spark SQL text.

Spark evaluates the expressions around a call in the JVM and sends only the call's arguments to a
Python worker, an Arrow batch at a time (``ArrowEvalPython`` in Spark's plan). The UDF is of Spark's
iterator form, so a function's ``open(function_context)`` runs once before a Spark task's first batch and
its ``close()`` after its last. Per kind:

* ``general``: the function once per row, its arguments Python values (a ROW a dict, a MAP a dict,
  timestamps naive UTC datetimes), its results gathered into one Arrow array of the declared type;
* ``pandas``: once per batch, with one pandas Series per argument, returning a Series of as many rows;
* ``arrow``: once per batch, with one Arrow array per argument, returning an array of as many rows.

A function that raises, or returns what its ``result_type`` cannot hold, fails the task with a
``UserFunctionError`` naming the function, the row (its index in the batch and the Spark partition) and
the arguments; Spark's error carries it as the last line of the Python traceback.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from funke.errors import UserFunctionError
from funke.plan.functions import LateralTable, PythonScalar, python_calls
from funke.plan.types import split_top_level, struct_fields
from funke.spark.python_fns import ARROW_TYPES, column_to_list


def register_python_functions(spark: SparkSession, node: Any) -> None:
    """Register, in ``spark``, every Python scalar function ``node``'s expressions call (again: a
    registration is a cheap call, and the session may have been given the name by another job)."""
    for spec in python_calls(node):
        spark.udf.register(spec.spark_name, scalar_udf(spec))


def scalar_udf(spec: PythonScalar) -> Any:
    """The Arrow UDF running ``spec`` (its kind: see the module's docstring)."""
    target = arrow_type(spec.result_type)
    single = spec.dummy_argument or spec.arity == 1

    def run_many(batches: Iterator[tuple[pa.Array, ...]]) -> Iterator[pa.Array]:
        yield from _run(spec, target, batches)

    def run_one(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        yield from _run(spec, target, ((b,) for b in batches))

    # (Spark reads the UDF's form from the hints: one column comes as an array, several as a tuple)
    run_one.__annotations__ = {"batches": Iterator[pa.Array], "return": Iterator[pa.Array]}
    run_many.__annotations__ = {"batches": Iterator[tuple[pa.Array, ...]], "return": Iterator[pa.Array]}
    udf = F.arrow_udf(run_one if single else run_many, spec.result_type)
    return udf if spec.deterministic else udf.asNondeterministic()


def _run(spec: PythonScalar, target: pa.DataType, batches: Iterator[tuple[pa.Array, ...]]) -> Iterator[pa.Array]:
    partition, attempt = _task()
    owner = spec.owner
    if owner is not None and callable(getattr(owner, "open", None)):
        bind = getattr(spec.context, "bind_task", None)
        if callable(bind):
            bind(index=partition, attempt=attempt)
        owner.open(spec.context)
    try:
        for number, arrays in enumerate(batches):
            if isinstance(arrays, pa.Array):  # (a function of any number of arguments, called with one)
                arrays = (arrays,)
            yield _batch(spec, target, arrays, number, partition)
    finally:
        if owner is not None and callable(getattr(owner, "close", None)):
            owner.close()


def _batch(spec: PythonScalar, target: pa.DataType, arrays: tuple[pa.Array, ...], number: int, partition: int | None) -> pa.Array:
    where = f"Arrow batch {number} of Spark partition {partition}" if partition is not None else f"Arrow batch {number}"
    if spec.kind == "general":
        return _rows(spec, target, arrays, where)
    length = len(arrays[0]) if arrays else 0
    try:
        if spec.kind == "pandas":
            result = spec.function(*(_series(a) for a in arrays))
        else:
            result = spec.function(*arrays)
    except Exception as e:
        first = tuple(a[0].as_py() for a in arrays) if length else ()
        raise UserFunctionError(
            f"Python function {spec.name} raised {type(e).__name__}: {e} on {where} ({length} rows; the first row's arguments: {first!r})"
        ) from e
    return _vector_result(spec, target, result, length, where)


def _rows(spec: PythonScalar, target: pa.DataType, arrays: tuple[pa.Array, ...], where: str) -> pa.Array:
    columns = [] if spec.dummy_argument else [_values(a) for a in arrays]
    length = len(arrays[0]) if arrays else 0
    calls = list(zip(*columns)) if columns else [()] * length
    if inspect.iscoroutinefunction(spec.function):  # (an async function: the batch's calls run concurrently)
        results = asyncio.run(_gathered(spec.function, calls))
        failed = next(((i, r) for i, r in enumerate(results) if isinstance(r, BaseException)), None)
        if failed is not None:
            i, e = failed
            raise UserFunctionError(
                f"Python function {spec.name} raised {type(e).__name__}: {e} on row {i} of {where}, arguments {calls[i]!r}"
            ) from e
    else:
        results, fn, i = [], spec.function, 0
        try:
            for i, args in enumerate(calls):
                results.append(fn(*args))
        except Exception as e:
            raise UserFunctionError(
                f"Python function {spec.name} raised {type(e).__name__}: {e} on row {i} of {where}, arguments {calls[i]!r}"
            ) from e
    return _to_arrow(spec, target, results, columns, where)


async def _gathered(fn: Any, calls: list[tuple[Any, ...]]) -> list[Any]:
    return await asyncio.gather(*(fn(*args) for args in calls), return_exceptions=True)


def _values(array: pa.Array) -> list[Any]:
    """An argument column as Python values: timestamps naive UTC, a MAP a dict per row."""
    if pa.types.is_map(array.type):
        return [dict(v) if v is not None else None for v in array.to_pylist()]
    return column_to_list(array.type)(array)


def _to_arrow(spec: PythonScalar, target: pa.DataType, results: list[Any], columns: list[list[Any]], where: str) -> pa.Array:
    if pa.types.is_struct(target):
        results = [_struct(v) for v in results]
    elif pa.types.is_map(target):
        results = [list(v.items()) if isinstance(v, dict) else v for v in results]
    try:
        return pa.array(results, type=target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        for i, v in enumerate(results):  # the first value that does not fit, for the message
            try:
                pa.array([v], type=target)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as e:
                args = tuple(c[i] for c in columns)
                raise UserFunctionError(
                    f"Python function {spec.name} returned {v!r} ({type(v).__name__}) on row {i} of {where}, arguments {args!r}, "
                    f"but its result_type is {spec.declared or spec.result_type}: {e}"
                ) from None
        raise


def _struct(value: Any) -> Any:
    """A ROW result as pyarrow takes it: a dict or a tuple (a PyFlink-style ``Row`` is a tuple or has ``as_dict``)."""
    if value is None or isinstance(value, (dict, tuple)):
        return value
    as_dict = getattr(value, "as_dict", None) or getattr(value, "_asdict", None)
    if callable(as_dict):
        try:
            return as_dict()
        except TypeError:  # (a positional PyFlink Row, Row(1, "x"): its fields by position)
            return tuple(value)
    return tuple(value) if isinstance(value, list) else value


def _series(array: pa.Array) -> Any:
    s = array.to_pandas()
    if pa.types.is_timestamp(array.type) and array.type.tz is not None:
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    return s


def _vector_result(spec: PythonScalar, target: pa.DataType, result: Any, length: int, where: str) -> pa.Array:
    what = "pandas Series" if spec.kind == "pandas" else "Arrow array"
    if isinstance(result, pa.ChunkedArray):
        result = result.combine_chunks()
    try:
        n = len(result)
    except TypeError:
        raise UserFunctionError(
            f"Python function {spec.name} ({spec.kind}) returned {type(result).__name__} {result!r} on {where}: it returns a {what} of one value per row"
        ) from None
    if n != length:
        raise UserFunctionError(
            f"Python function {spec.name} ({spec.kind}) returned {n} values on {where} of {length} rows: it returns one value per row"
        )
    try:
        if isinstance(result, pa.Array):
            return result if result.type == target else result.cast(target)
        return pa.array(result, type=target, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError, ValueError) as e:
        dtype = getattr(result, "dtype", getattr(result, "type", type(result).__name__))
        raise UserFunctionError(
            f"Python function {spec.name} ({spec.kind}) returned values of type {dtype} on {where}, but its result_type is "
            f"{spec.declared or spec.result_type}: {e}"
        ) from None


def arrow_type(t: str) -> pa.DataType:
    """funke's (Spark's) type string as an Arrow type.

    >>> arrow_type("struct<a:int,tags:array<string>>")
    StructType(struct<a: int32, tags: list<item: string>>)
    >>> arrow_type("map<string,decimal(10,2)>")
    MapType(map<string, decimal128(10, 2)>)
    """
    if t.startswith("array<"):
        return pa.list_(arrow_type(t[6:-1]))
    if t.startswith("map<"):
        k, v = split_top_level(t[4:-1])
        return pa.map_(arrow_type(k.strip()), arrow_type(v.strip()))
    if t.startswith("struct<"):
        return pa.struct([(name, arrow_type(sub)) for name, sub in struct_fields(t).items()])
    if t.startswith("decimal("):
        precision, scale = (int(x) for x in t[8:-1].split(","))
        return pa.decimal128(precision, scale)
    if t not in ARROW_TYPES:
        raise UserFunctionError(f"a Python function's result type {t} has no Arrow type in funke")
    return ARROW_TYPES[t]


def _task() -> tuple[int | None, int | None]:
    from pyspark import TaskContext

    context = TaskContext.get()
    return (context.partitionId(), context.attemptNumber()) if context is not None else (None, None)


def lateral_table(df: DataFrame, node: LateralTable) -> DataFrame:
    """``node``'s lateral join: ``df`` joined with the rows its Python table function makes of each row's
    arguments, the function as a Spark Arrow UDTF. ``node.function`` has ``start()`` (a task's first row:
    the function's ``open``), ``rows(args)`` (the result rows of one row, as tuples; for an outer join one
    row of NULLs when there are none) and ``finish()`` (``close``)."""
    function = node.function

    class Udtf:
        def __init__(self) -> None:
            function.start()

        def eval(self, *args: Any) -> Iterator[tuple[Any, ...]]:
            # (a ROW argument as a dict, as a scalar function gets it)
            yield from function.rows(tuple(a.asDict(recursive=True) if isinstance(a, Row) else a for a in args))

        def terminate(self) -> Iterator[tuple[Any, ...]]:
            function.finish()
            yield from ()

    Udtf.__name__ = Udtf.__qualname__ = node.function_name
    returns = ", ".join(f"`{f.name}`: {f.dtype}" for f in node.result)
    table_function = F.udtf(Udtf, returnType=returns, useArrow=True)
    if not node.deterministic:
        table_function = table_function.asNondeterministic()
    return df.lateralJoin(table_function(*(F.col(a).outer() for a in node.args)))
