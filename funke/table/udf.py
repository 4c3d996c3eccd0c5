"""Python user-defined functions for funke's Flink SQL and Table API, in PyFlink's names and shapes.

* ``udf``: a scalar function, one value per row; ``func_type="general"`` (the default) calls it once per
  row, ``"pandas"`` once per Arrow batch with pandas Series (returning a Series), ``"arrow"`` (funke's
  own) once per batch with pyarrow arrays.
* ``udtf``: a table function, zero or more rows per row: ``LATERAL TABLE(f(x))`` in SQL,
  ``join_lateral`` / ``flat_map`` in the Table API.
* ``udaf``: an aggregate function (an ``AggregateFunction``, or with ``func_type="pandas"`` a function of
  pandas Series returning one value), in ``GROUP BY`` and window aggregations.
* ``udtaf``: a table aggregate function (``TableAggregateFunction``), the Table API's ``flat_aggregate``.

Each takes a plain function (or lambda), an instance of the matching class, or the class itself, either
as a call, ``udf(f, result_type="BIGINT")``, or as a decorator, ``@udf(result_type=DataTypes.BIGINT())``.
Types are ``funke.table.DataTypes`` or Flink SQL type strings. A function is registered by name with
``t_env.create_temporary_function(name, f)`` (or ``create_temporary_system_function``, or
``CREATE FUNCTION name AS 'module.attr' LANGUAGE PYTHON``) and called from SQL, or called directly on
column expressions in the Table API: ``t.select(add(col("a"), col("b")).alias("total"))``.

>>> @udf(result_type="BIGINT")
... def add(a, b):
...     return a + b
>>> add.kind, add.result_spark_type, add.arity, add.name
('scalar', 'bigint', 2, 'add')
>>> add("a", 1)
add(a, 1)
"""

from __future__ import annotations

import abc
import functools
import inspect
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.table.data_types import DataType, RowType, flink_name, spark_type

__all__ = [
    "AggregateFunction", "AsyncScalarFunction", "FunctionContext", "ScalarFunction", "TableAggregateFunction", "TableFunction",
    "UserDefinedFunction", "udaf", "udf", "udtaf", "udtf",
]  # fmt: skip


class FunctionContext:
    """What a function's ``open(function_context)`` gets (PyFlink's ``FunctionContext``).

    ``get_job_parameter(key, default)`` reads ``pipeline.global-job-parameters`` of the table config
    (``t_env.get_config().set("pipeline.global-job-parameters", "key:value,other:value")``), as of when
    the query was planned. ``get_index_of_this_subtask()`` is the Spark partition the function runs for,
    ``get_attempt_number()`` its task's attempt. ``get_metric_group()`` is refused: funke does not report a
    Python function's metrics anywhere yet, so a counter would count into nothing.
    """

    def __init__(self, job_parameters: dict[str, str] | None = None) -> None:
        self._job_parameters = dict(job_parameters or {})
        self._index: int | None = None
        self._attempt: int | None = None

    def get_job_parameter(self, key: str, default_value: str | None = None) -> str | None:
        return self._job_parameters.get(key, default_value)

    def get_metric_group(self) -> Any:
        raise UnsupportedError(
            "FunctionContext.get_metric_group() is not supported by funke: a Python function's metrics are not reported "
            "anywhere yet; count in the function's result (or a side table) instead"
        )

    def get_index_of_this_subtask(self) -> int | None:
        return self._index

    def get_attempt_number(self) -> int | None:
        return self._attempt

    def bind_task(self, *, index: int | None, attempt: int | None) -> None:
        """Set by the Spark worker before ``open`` (funke.spark.udfs)."""
        self._index, self._attempt = index, attempt

    def __repr__(self) -> str:  # (part of a function's fingerprint: stable)
        return f"FunctionContext({sorted(self._job_parameters.items())!r})"


class UserDefinedFunction(abc.ABC):
    """Base of the function classes: ``open(function_context)`` before the first call of a Spark task,
    ``close()`` after its last; ``is_deterministic()`` False makes Spark treat the calls as such."""

    def open(self, function_context: FunctionContext) -> None:
        return None

    def close(self) -> None:
        return None

    def is_deterministic(self) -> bool:
        return True


class ScalarFunction(UserDefinedFunction):
    """``eval(*args)`` returns one value per row (with ``func_type="pandas"``: a Series per batch)."""

    @abc.abstractmethod
    def eval(self, *args: Any) -> Any: ...


class AsyncScalarFunction(UserDefinedFunction):
    """``async def eval(*args)``: a scalar function awaiting I/O; the calls of an Arrow batch run concurrently
    (``asyncio.gather``). ``udf`` takes an ``async def`` function as well."""

    @abc.abstractmethod
    async def eval(self, *args: Any) -> Any: ...


_SCALAR_FUNCTIONS = (ScalarFunction, AsyncScalarFunction)


class TableFunction(UserDefinedFunction):
    """``eval(*args)`` yields (or returns an iterable of) rows: tuples, dicts, or single values."""

    @abc.abstractmethod
    def eval(self, *args: Any) -> Iterable[Any] | None: ...


class ImperativeAggregate(UserDefinedFunction):
    """The accumulator protocol of Flink's aggregate and table aggregate functions: ``accumulate`` (and
    ``retract``, ``merge``) change the accumulator in place."""

    @abc.abstractmethod
    def create_accumulator(self) -> Any: ...

    @abc.abstractmethod
    def accumulate(self, accumulator: Any, *args: Any) -> None: ...

    def retract(self, accumulator: Any, *args: Any) -> None:
        raise UnsupportedError(
            f"{type(self).__name__}.retract(accumulator, *args) is not implemented: an aggregation over an updating input "
            "(a changelog) needs it to take a row back"
        )

    def merge(self, accumulator: Any, accumulators: Iterable[Any]) -> None:
        raise UnsupportedError(
            f"{type(self).__name__}.merge(accumulator, accumulators) is not implemented: SESSION windows need it"
        )

    def get_result_type(self) -> DataType | str:
        raise PlanError(f"{type(self).__name__}: give udaf(..., result_type=...) or define get_result_type()")

    def get_accumulator_type(self) -> DataType | str:
        raise PlanError(f"{type(self).__name__}: give accumulator_type=... or define get_accumulator_type()")


class AggregateFunction(ImperativeAggregate):
    """Flink's ``AggregateFunction``: ``get_value(accumulator)`` is the group's (or window's) result."""

    @abc.abstractmethod
    def get_value(self, accumulator: Any) -> Any: ...


class TableAggregateFunction(ImperativeAggregate):
    """Flink's ``TableAggregateFunction``: ``emit_value(accumulator)`` yields the group's result rows."""

    @abc.abstractmethod
    def emit_value(self, accumulator: Any) -> Iterable[Any]: ...


#: The Arrow type (pyarrow's factory) of a pandas aggregate's argument by its SQL type (Spark's name), as PyFlink
#: converts it.
_ARROW_SERIES = {"float": "float32", "double": "float64", "tinyint": "int8", "smallint": "int16", "int": "int32", "bigint": "int64"}


class PandasAggregate(AggregateFunction):
    """A pandas aggregate function (``udaf(f, func_type="pandas")``): ``f`` of one Series per argument,
    returning one value. The accumulator keeps every row's arguments; ``get_value`` calls ``f`` on them."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def create_accumulator(self) -> list[tuple[Any, ...]]:
        return []

    def accumulate(self, accumulator: list[tuple[Any, ...]], *args: Any) -> None:
        accumulator.append(args)

    def retract(self, accumulator: list[tuple[Any, ...]], *args: Any) -> None:
        if args in accumulator:
            accumulator.remove(args)

    def merge(self, accumulator: list[tuple[Any, ...]], accumulators: Iterable[list[tuple[Any, ...]]]) -> None:
        for other in accumulators:
            accumulator.extend(other)

    def get_value(self, accumulator: list[tuple[Any, ...]], types: Sequence[str | None] = ()) -> Any:
        """``f`` of one Series per argument; an argument of a known SQL type (Spark's name in ``types``) is
        the Series PyFlink hands over for it (Arrow's conversion: a FLOAT is float32, an INT int32, an
        integer column with NULLs float64)."""
        import pyarrow as pa

        width = len(accumulator[0]) if accumulator else _arity(self.function) or 1
        columns = list(zip(*accumulator, strict=True)) if accumulator else [()] * width
        kinds = [*types, *[None] * (width - len(types))]
        arrow = [getattr(pa, _ARROW_SERIES[k])() if k in _ARROW_SERIES else None for k in kinds]
        return self.function(*(pa.array(list(c), type=t).to_pandas() for c, t in zip(columns, arrow, strict=True)))


class UserDefinedFunctionWrapper:
    """A Python function with what the planner needs to know of it: its ``name``, ``kind`` (scalar,
    table, aggregate, table_aggregate), ``func_type``, declared types and determinism. Calling it on
    column expressions gives a ``FunctionCall`` for the Table API."""

    kind = "function"

    def __init__(self, func: Any, input_types: Any, func_type: str, deterministic: bool | None, name: str | None) -> None:
        if inspect.isclass(func):
            func = func()
        if not isinstance(func, UserDefinedFunction) and not callable(func):
            raise PlanError(
                f"expected a function, a lambda or a {self._base().__name__} instance, got {type(func).__name__} {func!r}"
            )
        self._func = func
        self._input_types = _types_list(input_types) if input_types is not None else None
        self._func_type = func_type
        self._name = name or getattr(func, "__name__", None) or type(func).__name__
        if self._name == "<lambda>":
            self._name = "lambda"
        if deterministic is not None and isinstance(func, UserDefinedFunction) and deterministic != func.is_deterministic():
            raise PlanError(
                f"{self._name}: deterministic={deterministic} but its is_deterministic() says {func.is_deterministic()}"
            )
        self._deterministic = (
            deterministic
            if deterministic is not None
            else (func.is_deterministic() if isinstance(func, UserDefinedFunction) else True)
        )

    @staticmethod
    def _base() -> type:
        return UserDefinedFunction

    # -- what the planner reads ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def func_type(self) -> str:
        return self._func_type

    @property
    def deterministic(self) -> bool:
        return self._deterministic

    @property
    def function(self) -> Any:
        """The user's object: a function, or an instance of the function class."""
        return self._func

    @property
    def input_spark_types(self) -> tuple[str, ...] | None:
        return tuple(spark_type(t) for t in self._input_types) if self._input_types is not None else None

    @property
    def arity(self) -> int | None:
        """How many arguments a call takes (from ``input_types``, else the signature); None: any number."""
        if self._input_types is not None:
            return len(self._input_types)
        return _arity(self._entry(), skip=self._skipped())

    def _entry(self) -> Any:
        return getattr(self._func, "eval", self._func)

    def _skipped(self) -> int:
        return 0

    def __call__(self, *args: Any) -> FunctionCall:
        """The function applied to column expressions (Table API): ``f(col("a"), "b + 1", lit(2))``."""
        return FunctionCall(self, tuple(args))

    def alias(self, *names: str) -> FunctionCall:
        """PyFlink's ``f.alias("a", "b")`` for ``flat_map``/``flat_aggregate`` of the whole row."""
        return FunctionCall(self, None, tuple(names))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name}, {self.kind}, {self._func_type})"


class UserDefinedScalarFunctionWrapper(UserDefinedFunctionWrapper):
    kind = "scalar"

    def __init__(
        self, func: Any, input_types: Any, result_type: Any, func_type: str, deterministic: bool | None, name: str | None
    ) -> None:
        super().__init__(func, input_types, func_type, deterministic, name)
        if isinstance(self._func, (TableFunction, ImperativeAggregate)):
            raise PlanError(
                f"udf() takes a function or a ScalarFunction; {type(self._func).__name__} is a {_kind_of(self._func)}: use {_maker_of(self._func)}()"
            )
        if result_type is None:
            raise PlanError(f"udf {self._name}: give its result_type (DataTypes.BIGINT() or 'BIGINT')")
        if func_type != "general" and inspect.iscoroutinefunction(self._entry()):
            raise PlanError(f"udf {self._name}: an async function runs row at a time (func_type='general'), not {func_type!r}")
        self._result_type = result_type
        self.result_spark_type = _result_spark_type(result_type, f"udf {self._name}")

    @property
    def result_type(self) -> Any:
        return self._result_type


class UserDefinedTableFunctionWrapper(UserDefinedFunctionWrapper):
    kind = "table"

    def __init__(self, func: Any, input_types: Any, result_types: Any, deterministic: bool | None, name: str | None) -> None:
        super().__init__(func, input_types, "general", deterministic, name)
        if isinstance(self._func, (*_SCALAR_FUNCTIONS, ImperativeAggregate)):
            raise PlanError(
                f"udtf() takes a function or a TableFunction; {type(self._func).__name__} is a {_kind_of(self._func)}: use {_maker_of(self._func)}()"
            )
        if result_types is None:
            raise PlanError(f"udtf {self._name}: give its result_types ([DataTypes.STRING()], 'ROW<word STRING, n INT>')")
        self._result_types = result_types
        if isinstance(result_types, RowType) or (
            isinstance(result_types, str) and spark_type(result_types).startswith("struct<")
        ):
            from funke.plan.types import struct_fields

            fields = struct_fields(_result_spark_type(result_types, f"udtf {self._name}"))
            self.result_names, self.result_spark_types = tuple(fields), tuple(fields.values())
        else:
            types = _types_list(result_types)
            self.result_spark_types = tuple(_result_spark_type(t, f"udtf {self._name}") for t in types)
            self.result_names = tuple(f"f{i}" for i in range(len(types)))


class UserDefinedAggregateFunctionWrapper(UserDefinedFunctionWrapper):
    def __init__(
        self, func: Any, input_types: Any, result_type: Any, accumulator_type: Any, func_type: str,
        deterministic: bool | None, name: str | None, *, table_aggregate: bool = False,
    ) -> None:  # fmt: skip
        base = TableAggregateFunction if table_aggregate else AggregateFunction
        if func_type == "pandas" and not table_aggregate and not isinstance(func, (AggregateFunction, type)):
            func = _named(PandasAggregate(func), func)
        super().__init__(func, input_types, func_type, deterministic, name)
        if not isinstance(self._func, base):
            hint = (
                "a TableAggregateFunction (emit_value yields rows)"
                if table_aggregate
                else "an AggregateFunction, or a function of pandas Series with func_type='pandas'"
            )
            raise PlanError(
                f"{'udtaf' if table_aggregate else 'udaf'} {self._name}: takes {hint}, got {type(self._func).__name__}"
            )
        self.kind = "table_aggregate" if table_aggregate else "aggregate"
        if result_type is None:
            result_type = self._func.get_result_type()
        self._result_type = result_type
        self._accumulator_type = accumulator_type
        self.result_spark_type = _result_spark_type(result_type, f"{'udtaf' if table_aggregate else 'udaf'} {self._name}")
        if table_aggregate:
            from funke.plan.types import struct_fields

            fields = struct_fields(self.result_spark_type)
            self.result_names = tuple(fields) or ("f0",)
            self.result_spark_types = tuple(fields.values()) or (self.result_spark_type,)

    def _entry(self) -> Any:
        if isinstance(self._func, PandasAggregate):
            return self._func.function
        return self._func.accumulate

    def _skipped(self) -> int:
        return 0 if isinstance(self._func, PandasAggregate) else 1  # (accumulate's accumulator)

    @property
    def result_type(self) -> Any:
        return self._result_type


class FunctionCall:
    """A Python function applied to arguments in the Table API: each argument a SQL expression string
    (a column name is one), a funke column expression (``fk.col``, ``fk.lit``, operators), another
    ``FunctionCall``, or an object with ``to_sql(name_of)`` (``name_of(function)`` gives the SQL name a
    Python function is called by: how PyFlink's expression DSL plugs in). ``args`` None: the whole row
    (``flat_map(f)``)."""

    def __init__(self, function: UserDefinedFunctionWrapper, args: tuple[Any, ...] | None, names: tuple[str, ...] = ()) -> None:
        self.function, self.args, self.names = function, args, names

    def alias(self, *names: str) -> FunctionCall:
        """The result's column name (a scalar function), or names (a table or table aggregate function)."""
        if not names or not all(isinstance(n, str) and n for n in names):
            raise PlanError(f"alias() takes column names, got {names!r}")
        return FunctionCall(self.function, self.args, tuple(names))

    def to_sql(self, name_of: Callable[[UserDefinedFunctionWrapper], str]) -> str:
        """This call as Flink SQL (its alias not included)."""
        if self.args is None:
            raise PlanError(
                f"{self.function.name} without arguments takes the whole row: pass it to flat_map, map, aggregate or flat_aggregate"
            )
        return f"{name_of(self.function)}({', '.join(sql_of(a, name_of) for a in self.args)})"

    def __repr__(self) -> str:
        inner = "*" if self.args is None else ", ".join(a if isinstance(a, str) else repr(a) for a in self.args)
        alias = f".alias({', '.join(map(repr, self.names))})" if self.names else ""
        return f"{self.function.name}({inner}){alias}"


def sql_of(e: Any, name_of: Callable[[UserDefinedFunctionWrapper], str]) -> str:
    """A Table API argument as Flink SQL text (see ``FunctionCall``)."""
    from funke.plan import expr as x

    if isinstance(e, str):
        return e
    if isinstance(e, FunctionCall):
        text = e.to_sql(name_of)
        return f"{text} AS `{e.names[0]}`" if len(e.names) == 1 else text
    if callable(getattr(e, "to_sql", None)):
        return str(e.to_sql(name_of))
    if isinstance(e, x.Col):
        return f"`{e.name}`"
    if isinstance(e, x.Lit):
        return sql_literal(e.value)
    if isinstance(e, x.BinOp):
        op = {"==": "=", "!=": "<>", "and": "AND", "or": "OR"}.get(e.op, e.op)
        return f"({sql_of(e.left, name_of)} {op} {sql_of(e.right, name_of)})"
    if isinstance(e, x.Alias):
        return f"{sql_of(e.expr, name_of)} AS `{e.name}`"
    if isinstance(e, x.Cast):
        return f"CAST({sql_of(e.expr, name_of)} AS {e.to.upper()})"
    if isinstance(e, x.Sql):
        return e.text
    if isinstance(e, x.Call) and e.name == "not":
        return f"NOT ({sql_of(e.args[0], name_of)})"
    if isinstance(e, x.Call) and e.name in ("isnull", "isnotnull"):
        return f"({sql_of(e.args[0], name_of)} IS {'NOT ' if e.name == 'isnotnull' else ''}NULL)"
    if isinstance(e, x.Call):
        return f"{e.name.upper()}({', '.join(sql_of(a, name_of) for a in e.args)})"
    if isinstance(e, (int, float, bool)) or e is None:
        return sql_literal(e)
    raise PlanError(
        f"cannot use {type(e).__name__} {e!r} as an argument: pass a column name or SQL string, fk.col(...), fk.lit(...)"
    )


def sql_literal(v: Any) -> str:
    """A Python value as a Flink SQL literal (a string quoted, its quotes doubled; a float a DOUBLE, as the
    Table API types ``lit(1.5)``, not SQL's DECIMAL ``1.5``)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return f"CAST('{'NaN' if math.isnan(v) else 'Infinity' if v > 0 else '-Infinity'}' AS DOUBLE)"
        text = repr(v)
        return text if "e" in text else f"{text}E0"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    raise PlanError(f"cannot write {type(v).__name__} {v!r} as a SQL literal")


# -- the makers --------------------------------------------------------------------------------
def udf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    """A scalar function: ``udf(f, result_type=...)`` or ``@udf(result_type=...)``; ``func_type`` is
    ``"general"`` (one call per row), ``"pandas"`` (Series in, Series out, per Arrow batch) or ``"arrow"``
    (pyarrow arrays in and out, per batch; funke's, PyFlink has no such kind)."""
    if func_type not in ("general", "pandas", "arrow"):
        raise PlanError(f"udf(): func_type must be 'general', 'pandas' or 'arrow', got {func_type!r}")
    make = functools.partial(
        UserDefinedScalarFunctionWrapper,
        input_types=input_types,
        result_type=result_type,
        func_type=func_type,
        deterministic=deterministic,
        name=name,
    )
    return make if f is None else make(f)


def udtf(
    f: Any = None, input_types: Any = None, result_types: Any = None, deterministic: bool | None = None, name: str | None = None
) -> Any:
    """A table function: ``result_types`` a list of types (columns ``f0``, ``f1``, ...), one type, or a ROW
    type (its field names); each call yields rows (tuples, dicts, or single values)."""
    make = functools.partial(
        UserDefinedTableFunctionWrapper,
        input_types=input_types,
        result_types=result_types,
        deterministic=deterministic,
        name=name,
    )
    return make if f is None else make(f)


def udaf(
    f: Any = None, input_types: Any = None, result_type: Any = None, accumulator_type: Any = None,
    deterministic: bool | None = None, name: str | None = None, func_type: str = "general",
) -> Any:  # fmt: skip
    """An aggregate function: an ``AggregateFunction`` (``func_type="general"``), or a function of pandas
    Series returning one value (``func_type="pandas"``). ``accumulator_type`` is accepted as PyFlink's and
    not needed: accumulators are kept as Python objects (pickled) in funke's state."""
    if func_type not in ("general", "pandas"):
        raise PlanError(f"udaf(): func_type must be 'general' or 'pandas', got {func_type!r}")
    make = functools.partial(
        UserDefinedAggregateFunctionWrapper, input_types=input_types, result_type=result_type,
        accumulator_type=accumulator_type, func_type=func_type, deterministic=deterministic, name=name,
    )  # fmt: skip
    return make if f is None else make(f)


def udtaf(
    f: Any = None, input_types: Any = None, result_type: Any = None, accumulator_type: Any = None,
    deterministic: bool | None = None, name: str | None = None, func_type: str = "general",
) -> Any:  # fmt: skip
    """A table aggregate function (a ``TableAggregateFunction``); ``result_type`` a ROW type (its fields are
    the result's columns) or one type (one column, ``f0``)."""
    if func_type != "general":
        raise PlanError(
            f"udtaf(): func_type must be 'general' (Flink has no pandas table aggregate functions), got {func_type!r}"
        )
    make = functools.partial(
        UserDefinedAggregateFunctionWrapper, input_types=input_types, result_type=result_type,
        accumulator_type=accumulator_type, func_type=func_type, deterministic=deterministic, name=name, table_aggregate=True,
    )  # fmt: skip
    return make if f is None else make(f)


def as_function(value: Any, name: str) -> UserDefinedFunctionWrapper:
    """What ``create_temporary_function(name, value)`` registers: a udf/udtf/udaf/udtaf, or an aggregate
    (or table aggregate) function class or instance that says its ``get_result_type()``."""
    if isinstance(value, UserDefinedFunctionWrapper):
        return value
    instance = value() if inspect.isclass(value) and issubclass(value, UserDefinedFunction) else value
    if isinstance(instance, TableAggregateFunction):
        return udtaf(instance, name=name)
    if isinstance(instance, AggregateFunction):
        return udaf(instance, name=name)
    if isinstance(instance, (*_SCALAR_FUNCTIONS, TableFunction)):
        maker = "udf" if isinstance(instance, _SCALAR_FUNCTIONS) else "udtf"
        raise PlanError(
            f"function {name}: a {type(instance).__name__} needs its result type: register {maker}({type(instance).__name__}(), "
            f"result_type{'s' if maker == 'udtf' else ''}=...)"
        )
    raise PlanError(
        f"function {name}: expected a Python function made with udf, udtf, udaf or udtaf (funke.table), got {type(value).__name__} {value!r}"
    )


def _types_list(types: Any) -> list[Any]:
    if isinstance(types, RowType):
        return list(types.field_types())
    if isinstance(types, (DataType, str)):
        return [types]
    if isinstance(types, Sequence):
        return list(types)
    raise PlanError(f"expected a type or a list of types, got {types!r}")


def _arity(fn: Any, skip: int = 0) -> int | None:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL,) for p in params):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    return max(len(positional) - skip, 0)


def _named(obj: Any, like: Any) -> Any:
    obj.__name__ = getattr(like, "__name__", type(like).__name__)
    return obj


def _kind_of(func: Any) -> str:
    for cls, what in ((_SCALAR_FUNCTIONS, "scalar function"), (TableFunction, "table function"), (AggregateFunction, "aggregate function"),
                      (TableAggregateFunction, "table aggregate function")):  # fmt: skip
        if isinstance(func, cls):
            return what
    return "function"


def _maker_of(func: Any) -> str:
    return {
        "scalar function": "udf",
        "table function": "udtf",
        "aggregate function": "udaf",
        "table aggregate function": "udtaf",
    }[_kind_of(func)]


def describe_type(spark: str) -> str:
    """``spark`` in Flink SQL's spelling (messages)."""
    return flink_name(spark)


def _result_spark_type(result_type: Any, what: str) -> str:
    """The Spark type of a Python function's result: of no TIME, which Spark's Arrow exchange with Python
    takes as TIME(6) only (a TIME(0) result fails the job)."""
    spark = spark_type(result_type)
    if re.search(r"\btime\(", spark):
        raise UnsupportedError(
            f"{what}: a result of type TIME is not supported by funke yet (Spark takes Python's times as TIME(6)): "
            "return a STRING ('12:34:56') and CAST it AS TIME"
        )
    return spark
