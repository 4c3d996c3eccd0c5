"""Python functions in the Table API (mixed into ``StreamTableEnvironment``, ``Table`` and ``GroupedTable``):
registering them by name, and the row-based operations Flink's Table API has for them. Each operation is
the SQL query it stands for (over the table as a hidden view), so it runs, plans and explains like that
query:

* ``t.join_lateral(f(col("s")).alias("w", "n"))``: ``FROM t, LATERAL TABLE(f(s)) AS T(w, n)``;
  ``left_outer_join_lateral`` the ``LEFT JOIN ... ON TRUE`` of it;
* ``t.flat_map(f)``: only the table function's columns; ``t.map(f)``: a scalar function's result, a ROW
  flattened into its fields;
* ``t.group_by("k").aggregate(agg(col("v")).alias("total"))`` then ``.select(...)``: ``GROUP BY k`` with
  the aggregate (a ROW result flattened), an updating result;
* ``t.group_by("k").flat_aggregate(top2(col("v")).alias("v", "rank"))`` then ``.select(...)``: a table
  aggregate function's rows per key (Flink SQL has none), an updating result: see
  ``funke.table.udf_runtime.TableAggregate``.

A function given without arguments (``t.flat_map(split)``) takes the whole row, as in PyFlink: it gets one
argument, the row made by ``t_env.row_factory(names, values)`` (a dict by default; ``funke.pyflink`` makes a
``Row``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.plan.types import Field, Schema, struct_fields
from funke.table.changelog import ROW_KIND
from funke.table.udf import FunctionCall, UserDefinedFunctionWrapper, sql_of
from funke.table.udf_runtime import TableAggregate


def dict_row(names: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    return dict(zip(names, values, strict=True))


class FunctionCalls:
    """``StreamTableEnvironment``'s methods for Python functions (PyFlink's names)."""

    _functions: Any  # funke.table.catalog.FunctionCatalog
    #: How a function that takes the whole row gets it: ``row_factory(column names, values)``.
    row_factory: Callable[[Sequence[str], Sequence[Any]], Any] = staticmethod(dict_row)

    def create_temporary_system_function(self, name: str, function: Any) -> None:
        """Register ``function`` (a ``udf``/``udtf``/``udaf``/``udtaf``) as a temporary system function:
        found before every other function of that name."""
        self._functions.create_temporary_system(name, function)

    def create_temporary_function(self, path: str, function: Any) -> None:
        """Register ``function`` as a temporary function (it shadows a catalog function of that name)."""
        self._functions.create_temporary(_path_name(path), function)

    def create_function(self, path: str, function_class_or_object: Any, ignore_if_exists: bool = False) -> None:
        """Register a catalog function: a Python function object, an aggregate function class, or the
        ``'module.attribute'`` path of one (as ``CREATE FUNCTION ... LANGUAGE PYTHON``)."""
        from funke.table.catalog import load

        function = load(function_class_or_object, path) if isinstance(function_class_or_object, str) else function_class_or_object
        self._functions.create(_path_name(path), function, ignore_if_exists)

    def drop_temporary_system_function(self, name: str) -> bool:
        return self._functions.drop("temporary_system", name)

    def drop_temporary_function(self, path: str) -> bool:
        return self._functions.drop("temporary", _path_name(path))

    def drop_function(self, path: str) -> bool:
        return self._functions.drop("catalog", _path_name(path))

    def register_function(self, name: str, function: Any) -> None:
        """PyFlink's deprecated ``register_function``: a temporary system function, replacing one of that name."""
        self._functions.drop("temporary_system", name)
        self._functions.create_temporary_system(name, function)

    def list_user_defined_functions(self) -> list[str]:
        return self._functions.list_user_defined()

    def list_temporary_functions(self) -> list[str]:
        return self._functions.list_temporary()

    def _items(self, exprs: Iterable[Any]) -> str:
        """Table API select items as SQL: strings as they are, Python function calls by their SQL names."""
        return ", ".join(sql_of(e, self._name_of) for e in exprs)

    def _select_items(self, exprs: Iterable[Any]) -> str:
        """A Table API ``select``'s items as SQL (a subclass may name the unnamed ones as its API does)."""
        return self._items(exprs)

    def _name_of(self, function: UserDefinedFunctionWrapper) -> str:
        return str(self._functions.name_of(function))

    def _call_sql(self, call: Any, table: Any, kinds: tuple[str, ...], operation: str) -> tuple[str, FunctionCall]:
        """``call`` (a ``FunctionCall``, or a function taking the whole row) as SQL over ``table``'s columns."""
        if isinstance(call, UserDefinedFunctionWrapper):
            call = FunctionCall(call, None)
        if not isinstance(call, FunctionCall):
            raise PlanError(
                f"{operation}() takes a Python function or its call (f(col('a')).alias(...)), got {type(call).__name__} {call!r}"
            )
        if call.function.kind not in kinds:
            raise PlanError(
                f"{operation}() takes a {' or '.join(k.replace('_', ' ') for k in kinds)} function; {call.function.name} is a {call.function.kind.replace('_', ' ')} function"
            )
        if call.args is None:  # the whole row, one argument
            columns = list(table.columns)
            row = _TakesRow.wrap(call.function, tuple(columns), self.row_factory)
            return f"{self._name_of(row)}({', '.join(f'`{c}`' for c in columns)})", FunctionCall(row, None, call.names)
        return call.to_sql(self._name_of), call


def _path_name(path: str) -> str:
    parts = path.split(".")
    if len(parts) > 1:
        raise PlanError(
            f"the function path {path!r}: funke has one catalog and database; give the function's name alone ({parts[-1]!r})"
        )
    return path


class _TakesRow:
    """A function that takes the whole row (``flat_map(f)``), called with the row's columns as arguments:
    it gets them as one row (``row_factory(names, values)``)."""

    def __init__(self, function: Any, names: tuple[str, ...], row_factory: Callable[[Sequence[str], Sequence[Any]], Any]) -> None:
        self.inner, self.names, self.row_factory = function, names, row_factory
        self.__name__ = getattr(function, "__name__", type(function).__name__)

    @classmethod
    def wrap(cls, wrapper: UserDefinedFunctionWrapper, names: tuple[str, ...], row_factory: Any) -> UserDefinedFunctionWrapper:
        import copy

        derived = copy.copy(wrapper)
        derived._func = cls(wrapper.function, names, row_factory)
        derived._input_types = None
        return derived

    def _row(self, values: tuple[Any, ...]) -> Any:
        return self.row_factory(self.names, values)

    def eval(self, *values: Any) -> Any:
        fn = getattr(self.inner, "eval", self.inner)
        return fn(self._row(values))

    __call__ = eval

    def accumulate(self, accumulator: Any, *values: Any) -> None:
        self.inner.accumulate(accumulator, self._row(values))

    def retract(self, accumulator: Any, *values: Any) -> None:
        self.inner.retract(accumulator, self._row(values))

    def __getattr__(self, name: str) -> Any:  # create_accumulator, get_value, emit_value, merge, open, close
        if name in ("inner", "names", "row_factory"):
            raise AttributeError(name)
        return getattr(self.inner, name)


class TableFunctions:
    """``Table``'s row-based operations with Python functions (see the module's docstring)."""

    _t_env: Any
    columns: tuple[str, ...]

    def _over(self, sql: str) -> Any:
        return self._t_env.sql_query(sql.replace("{t}", self._t_env._anonymous(self)))

    def join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> Any:
        """Each row joined with the rows the table function makes of it (``LATERAL TABLE``); a predicate
        filters the pairs."""
        return self._lateral(table_function_call, join_predicate, left=False)

    def left_outer_join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> Any:
        """As ``join_lateral``, keeping a row the function makes no rows of (its columns NULL)."""
        return self._lateral(table_function_call, join_predicate, left=True)

    def _lateral(self, call: Any, predicate: Any, left: bool) -> Any:
        operation = "left_outer_join_lateral" if left else "join_lateral"
        text, call = self._t_env._call_sql(call, self, ("table",), operation)
        names = _names(call, call.function.result_names, operation)
        on = "TRUE" if predicate is None else self._t_env._items([predicate])
        if left and on.upper() != "TRUE":
            raise PlanError(
                "left_outer_join_lateral(): Flink takes no join predicate here but TRUE; filter the result with where()"
            )
        alias = f"T_({', '.join(f'`{n}`' for n in names)})"
        return self._over(f"SELECT * FROM {{t}} {'LEFT ' if left else ''}JOIN LATERAL TABLE({text}) AS {alias} ON {on}")

    def flat_map(self, func: Any) -> Any:
        """The rows a table function makes of each row: only its columns (its result names, or the call's alias)."""
        text, call = self._t_env._call_sql(func, self, ("table",), "flat_map")
        names = _names(call, call.function.result_names, "flat_map")
        cols = ", ".join(f"`{n}`" for n in names)
        return self._over(f"SELECT {cols} FROM {{t}}, LATERAL TABLE({text}) AS T_({cols})")

    def map(self, func: Any) -> Any:
        """A scalar function's result per row: its ROW's fields as columns (or one column, ``f0``)."""
        text, call = self._t_env._call_sql(func, self, ("scalar",), "map")
        fields = struct_fields(call.function.result_spark_type)
        names = _names(call, tuple(fields) or ("f0",), "map")
        mapped = self._over(f"SELECT {text} AS `_fk_mapped` FROM {{t}}")
        picks = (
            [f"`_fk_mapped`.`{f}` AS `{n}`" for f, n in zip(fields, names, strict=True)]
            if fields
            else [f"`_fk_mapped` AS `{names[0]}`"]
        )
        return mapped._over(f"SELECT {', '.join(picks)} FROM {{t}}")

    def alias(self, field: str, *fields: str) -> Any:
        """The table with its columns renamed, in order (``t.flat_map(split).alias("word")``)."""
        names = (field, *fields)
        if len(names) != len(self.columns):
            raise PlanError(
                f"alias(): {len(names)} name(s) ({', '.join(names)}) for {len(self.columns)} column(s) ({', '.join(self.columns)})"
            )
        return self.select(*(f"`{c}`" if c == n else f"`{c}` AS `{n}`" for c, n in zip(self.columns, names, strict=True)))  # (a kept name keeps event time)

    def aggregate(self, func: Any) -> AggregatedTable:
        """An aggregate function over all rows (``group_by().aggregate``); ``select`` its result."""
        return AggregatedTable(self, (), func)

    def flat_aggregate(self, func: Any) -> FlatAggregateTable:
        """A table aggregate function over all rows; ``select`` its result."""
        return FlatAggregateTable(self, (), func)


class GroupedFunctionCalls:
    """``GroupedTable``'s ``aggregate`` and ``flat_aggregate``."""

    _table: Any
    _keys: tuple[str, ...]

    def aggregate(self, func: Any) -> AggregatedTable:
        return AggregatedTable(self._table, self._keys, func)

    def flat_aggregate(self, func: Any) -> FlatAggregateTable:
        return FlatAggregateTable(self._table, self._keys, func)


class AggregatedTable:
    """``group_by(keys).aggregate(f)``: the keys and ``f``'s result (a ROW's fields, or one column); ``select``
    from them (an updating result, as ``GROUP BY``)."""

    def __init__(self, table: Any, keys: tuple[str, ...], func: Any) -> None:
        t_env = table._t_env
        text, call = t_env._call_sql(func, table, ("aggregate",), "aggregate")
        fields = struct_fields(call.function.result_spark_type)
        names = _names(call, tuple(fields) or ("f0",), "aggregate")
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        keyed = ", ".join([*keys, ""]) if keys else ""
        grouped = t_env.sql_query(f"SELECT {keyed}{text} AS `_fk_aggregated` FROM {t_env._anonymous(table)}{group}")
        picks = (
            [f"`_fk_aggregated`.`{f}` AS `{n}`" for f, n in zip(fields, names, strict=True)]
            if fields
            else [f"`_fk_aggregated` AS `{names[0]}`"]
        )
        self._result = grouped._over(f"SELECT {', '.join([*keys, *picks])} FROM {{t}}")

    def select(self, *exprs: Any) -> Any:
        return self._result.select(*exprs)


class FlatAggregateTable:
    """``group_by(keys).flat_aggregate(f)``: the keys and the rows of ``f``'s ``emit_value`` per key;
    ``select`` from them (an updating result: a key's rows are retracted and emitted anew on each change)."""

    def __init__(self, table: Any, keys: tuple[str, ...], func: Any) -> None:
        t_env = table._t_env
        text, call = t_env._call_sql(func, table, ("table_aggregate",), "flat_aggregate")
        names = _names(call, call.function.result_names, "flat_aggregate")
        arguments = (
            t_env.sql_query(
                f"SELECT *, {', '.join(f'{a} AS `_fk_arg{i}`' for i, a in enumerate(_arguments(text)))} FROM {t_env._anonymous(table)}"
            )
            if _arguments(text)
            else table
        )
        stream = arguments._stream
        columns = [f"_fk_arg{i}" for i in range(len(_arguments(text)))]
        group = list(keys)
        if not group:
            group = ["_fk_all"]
            stream = stream.with_column("_fk_all", Sql("0", declared="int"))
        fields = [Field(ROW_KIND, "string"), *(stream.schema.field(k, node="flat_aggregate's group_by") for k in group)]
        fields += [Field(n, t) for n, t in zip(names, call.function.result_spark_types, strict=True)]
        fn = TableAggregate(call.function, group, columns, names, t_env._config.state_ttl_ms, _context(t_env))
        out = stream.key_by(group).process(fn, output_schema=Schema(tuple(fields)), name=f"flat_aggregate {call.function.name}")
        if not keys:
            out = out.select(*(f"`{f.name}`" for f in fields if f.name != "_fk_all"))
        self._result = t_env._table(t_env, out)

    def select(self, *exprs: Any) -> Any:
        return self._result.select(*exprs)


def _context(t_env: Any) -> Any:
    from funke.table.udf import FunctionContext

    return FunctionContext(t_env._config.job_parameters)


def _arguments(call_sql: str) -> list[str]:
    """The argument texts of ``name(a, b + 1, g(c))``."""
    from funke.plan.types import split_top_level

    inner = call_sql[call_sql.index("(") + 1 : call_sql.rindex(")")]
    return [a.strip() for a in split_top_level(inner)]


def _names(call: FunctionCall, default: tuple[str, ...], operation: str) -> tuple[str, ...]:
    if not call.names:
        return default
    if len(call.names) != len(default):
        raise PlanError(
            f"{operation}(): {call!r} names {len(call.names)} column(s), but {call.function.name} gives {len(default)} ({', '.join(default)})"
        )
    return call.names
