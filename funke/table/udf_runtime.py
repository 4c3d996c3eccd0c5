"""What Python aggregate and table aggregate functions are when a query runs: funke operators' functions.

* ``PythonAggregate``: a user ``AggregateFunction`` (or pandas one) as one aggregate of a group or window
  aggregation (``funke.table.aggregate.AggregateCall``), in PyFlink's accumulator shape: the aggregation
  changes the accumulator in place, as Flink's does, after reading the result before the row.
* ``TableAggregate``: ``flat_aggregate`` with a ``TableAggregateFunction``, Flink's
  ``GroupTableAggFunction``: per key, each row first retracts the rows the key emitted before (``-D``),
  then the function's ``emit_value`` rows after the row are inserted (``+I``). An updating input's
  ``-U``/``-D`` rows are retracted from the accumulator; a key whose rows were all retracted emits nothing
  more and its state is cleared.

>>> from funke.table.udf import AggregateFunction, udaf
>>> class Total(AggregateFunction):
...     def create_accumulator(self): return [0]
...     def accumulate(self, acc, v): acc[0] += v
...     def retract(self, acc, v): acc[0] -= v
...     def get_value(self, acc): return acc[0]
>>> agg = PythonAggregate(udaf(Total(), result_type="BIGINT"))
>>> acc = agg.create_accumulator()
>>> agg.accumulate(acc, 3); agg.accumulate(acc, 4); before = agg.get_value(acc); agg.retract(acc, 3)
>>> before, agg.get_value(acc), agg.retracts
(7, 4, True)
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from funke.errors import UserFunctionError
from funke.plan.types import Schema, compatible, python_type_name, struct_fields
from funke.semantics.functions import KeyedProcessFunction, KeyGroup
from funke.semantics.state import ValueStateDescriptor
from funke.table.changelog import DELETE, INSERT, ROW_KIND, UPDATE_BEFORE, held_step, held_steps, with_ttl
from funke.table.udf import FunctionContext, ImperativeAggregate, PandasAggregate, UserDefinedFunctionWrapper


class _Opened:
    """A user function object, ``open(function_context)`` on its first use in a process (funke's
    operators have no end of task to call ``close()`` at: it is not called for aggregate functions)."""

    def __init__(self, wrapper: UserDefinedFunctionWrapper, context: FunctionContext | None) -> None:
        self.wrapper, self.context = wrapper, context or FunctionContext()
        self._opened = False

    @property
    def fn(self) -> Any:
        function = self.wrapper.function
        if not self._opened:
            self._opened = True
            if callable(getattr(function, "open", None)):
                function.open(self.context)
        return function

    def close(self) -> None:
        if self._opened:
            self._opened = False
            if callable(getattr(self.wrapper.function, "close", None)):
                self.wrapper.function.close()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_opened": False}


class PythonAggregate:
    """A user's aggregate function in an aggregation (``funke.table.aggregate.AggregateCall.function``), in
    PyFlink's shape as the aggregation calls it: ``accumulate``/``retract`` change the accumulator in place
    (the aggregation reads the result before a row first), ``merge``, ``get_value``. It opens the function
    on first use, names the function in what it raises, and checks each result against the result type."""

    def __init__(
        self, wrapper: UserDefinedFunctionWrapper, context: FunctionContext | None = None, name: str | None = None
    ) -> None:
        self.name = name or wrapper.name
        self.result_type = wrapper.result_spark_type
        own = getattr(type(wrapper.function), "retract", None)
        #: Whether the function takes rows back (it defines ``retract``): an updating input needs it.
        self.retracts = callable(own) and own is not getattr(ImperativeAggregate, "retract", None)
        self._user = _Opened(wrapper, context)
        #: Its arguments' SQL types, for a pandas aggregate function's Series (``for_arguments``).
        self.argument_types: tuple[str | None, ...] = ()
        self._pandas = isinstance(wrapper.function, PandasAggregate)

    def __repr__(self) -> str:  # (part of the operator's uid: stable)
        return f"PythonAggregate({self.name!r}, {self.result_type!r})"

    def create_accumulator(self) -> Any:
        return self._call("create_accumulator")

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        self._call("accumulate", accumulator, *args)

    def retract(self, accumulator: Any, *args: Any) -> None:
        self._call("retract", accumulator, *args)

    def merge(self, accumulator: Any, others: Any) -> None:
        self._call("merge", accumulator, list(others))

    def for_arguments(self, types: Sequence[str | None]) -> PythonAggregate:
        """This call with its arguments' SQL types (Spark's names) known: a pandas aggregate function's Series
        are typed as PyFlink types them (a FLOAT column is a float32 Series)."""
        self.argument_types = tuple(types)
        return self

    def get_value(self, accumulator: Any) -> Any:
        result = self._call("get_value", accumulator, *((self.argument_types,) if self._pandas else ()))
        result = result.item() if hasattr(result, "item") and not isinstance(result, (list, dict, str)) else result  # (numpy)
        fields = struct_fields(self.result_type)
        if fields and not isinstance(result, dict) and result is not None and (isinstance(result, tuple) or hasattr(result, "as_dict")):
            values = _values(result, list(fields))  # (a ROW result: a Row or a tuple, its fields by name or position)
            if len(values) == len(fields):
                result = dict(zip(fields, values, strict=True))
        if not (fields and isinstance(result, dict)) and not compatible(python_type_name(result), self.result_type):
            raise UserFunctionError(
                f"Python aggregate function {self.name} returned {result!r} ({type(result).__name__}), but its result_type is {self.result_type}"
            )
        # (a copy: a result that is the accumulator itself, or part of it, must not change with the next row)
        return copy.deepcopy(result) if isinstance(result, (list, dict)) else result

    def _call(self, method: str, *args: Any) -> Any:
        fn = getattr(self._user.fn, method)
        try:
            return fn(*args)
        except Exception as e:
            shown = args[1:] if method in ("accumulate", "retract") else ()
            raise UserFunctionError(
                f"Python aggregate function {self.name}.{method} raised {type(e).__name__}: {e}"
                + (f", arguments {shown!r}" if shown else "")
            ) from e


class TableAggregate(KeyedProcessFunction):
    """``flat_aggregate`` of a ``TableAggregateFunction`` per key (see the module's docstring)."""

    def __init__(
        self, wrapper: UserDefinedFunctionWrapper, keys: Sequence[str], columns: Sequence[str], names: Sequence[str],
        ttl_ms: int | None = None, context: FunctionContext | None = None,
    ) -> None:  # fmt: skip
        self.name, self.keys, self.columns, self.names, self.ttl_ms = (
            wrapper.name,
            tuple(keys),
            tuple(columns),
            tuple(names),
            ttl_ms,
        )
        self._user = _Opened(wrapper, context)
        self.state = with_ttl(ValueStateDescriptor("table_aggregate"), ttl_ms)

    def __repr__(self) -> str:
        return f"TableAggregate({self.name!r}, {self.keys!r}, {self.columns!r}, {self.names!r}, ttl_ms={self.ttl_ms})"

    def describe(self) -> str:
        return f"{self.name}({', '.join(self.columns)}) -> ({', '.join(self.names)})"

    def step(self, kept: tuple[Any, int] | None, value: dict[str, Any]) -> tuple[tuple[Any, int] | None, list[dict[str, Any]]]:
        """The key's new (accumulator, row count) after ``value`` (None: cleared), and the rows it emits."""
        fn = self._user.fn
        accumulator, count = kept if kept is not None else (self._call(fn.create_accumulator), 0)
        key = {k: value[k] for k in self.keys}
        out = [] if kept is None else [{ROW_KIND: DELETE, **key, **row} for row in self._emitted(fn, accumulator)]
        accumulator = copy.deepcopy(accumulator)
        args = tuple(value[c] for c in self.columns)
        if value.get(ROW_KIND) in (UPDATE_BEFORE, DELETE):
            self._call(fn.retract, accumulator, *args)
            count -= 1
        else:
            self._call(fn.accumulate, accumulator, *args)
            count += 1
        if count <= 0:
            return None, out
        return (accumulator, count), out + [{ROW_KIND: INSERT, **key, **row} for row in self._emitted(fn, accumulator)]

    def _emitted(self, fn: Any, accumulator: Any) -> list[dict[str, Any]]:
        rows = self._call(fn.emit_value, accumulator)
        out = []
        for row in rows if rows is not None else ():
            values = _values(row, self.names)
            if len(values) != len(self.names):
                raise UserFunctionError(
                    f"Python table aggregate function {self.name}.emit_value yielded {row!r}: {len(values)} values for its {len(self.names)} "
                    f"result columns ({', '.join(self.names)})"
                )
            out.append(dict(zip(self.names, values, strict=True)))
        return out

    def _call(self, method: Any, *args: Any) -> Any:
        try:
            result = method(*args)
            return list(result) if isinstance(result, Iterator) else result
        except UserFunctionError:
            raise
        except Exception as e:
            raise UserFunctionError(
                f"Python table aggregate function {self.name}.{method.__name__} raised {type(e).__name__}: {e}"
            ) from e

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from held_step(ctx, self.state, self.step, value)

    def process_batch(self, key_groups: Iterator[KeyGroup], ctx: Any) -> Iterator[dict[str, Any]]:
        return held_steps(key_groups, ctx, self.state, self.step)


def _values(row: Any, names: Sequence[str]) -> tuple[Any, ...]:
    """A result row as values in the order of ``names``: a dict by name, a tuple (a ``Row``) by position,
    a single value as one column."""
    if isinstance(row, dict):
        return tuple(row.get(n) for n in names)
    as_dict = getattr(row, "as_dict", None)
    if callable(as_dict) and not isinstance(row, tuple):
        try:
            return _values(as_dict(), names)
        except TypeError:  # (a positional Row, Row(a, b): its fields by position)
            return tuple(row)
    if isinstance(row, (tuple, list)):
        return tuple(row)
    return (row,)


class TableFunctionRows:
    """A Python table function as a lateral join's worker calls it (``funke.plan.functions.LateralTable``):
    ``start()`` opens it before a task's first row, ``rows(args)`` gives the result rows of one input row
    as tuples of the result's columns (each checked against its type; for a ``LEFT JOIN``, one row of NULLs
    when there are none), ``finish()`` closes it."""

    def __init__(
        self,
        wrapper: UserDefinedFunctionWrapper,
        result: Schema,
        outer: bool,
        context: FunctionContext | None = None,
        name: str | None = None,
    ) -> None:
        self.name, self.result, self.outer = name or wrapper.name, result, outer
        self._user = _Opened(wrapper, context)
        self._row = 0

    def __repr__(self) -> str:
        return f"TableFunctionRows({self.name!r}, {str(self.result)!r}, outer={self.outer})"

    def start(self) -> None:
        self._row = 0
        _ = self._user.fn

    def finish(self) -> None:
        self._user.close()

    def rows(self, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        self._row += 1
        fn = self._user.fn
        call = getattr(fn, "eval", fn)
        try:
            produced = call(*args)
            out = [_values(r, self.result.names) for r in (produced if produced is not None else ())]
        except Exception as e:
            raise UserFunctionError(
                f"Python table function {self.name} raised {type(e).__name__}: {e} on row {self._row - 1} of its Spark task, arguments {args!r}"
            ) from e
        for values in out:
            self._check(values, args)
        if not out and self.outer:
            out = [(None,) * len(self.result)]
        return out

    def _check(self, values: tuple[Any, ...], args: tuple[Any, ...]) -> None:
        if len(values) != len(self.result):
            raise UserFunctionError(
                f"Python table function {self.name} produced {values!r} on row {self._row - 1} of its Spark task (arguments {args!r}): "
                f"{len(values)} values for its {len(self.result)} columns ({self.result})"
            )
        for v, f in zip(values, self.result, strict=True):
            if not compatible(python_type_name(v), f.dtype) and not isinstance(v, (dict, list, tuple)):
                raise UserFunctionError(
                    f"Python table function {self.name} produced {v!r} ({type(v).__name__}) for its column {f.name} of type {f.dtype} "
                    f"on row {self._row - 1} of its Spark task, arguments {args!r}"
                )
