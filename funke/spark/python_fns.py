"""Running users' Python functions on Spark over Arrow batches (``mapInArrow``/``mapInPandas``).

Rows reach the function as dicts (timestamps as naive UTC datetimes); every result row
is checked against the declared output schema, so a mismatch fails with a message that
names the function and the column rather than an Arrow conversion error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa

from funke.errors import SchemaError
from funke.plan.probe import check_row
from funke.plan.types import Schema, compatible, python_type_name
from funke.semantics.rich import Lifecycled, TaskInfo, set_current_task
from funke.spark.user_errors import GENERATED, user_calls

ARROW_TYPES = {
    "string": pa.string(),
    "bigint": pa.int64(),
    "int": pa.int32(),
    "smallint": pa.int16(),
    "tinyint": pa.int8(),
    "double": pa.float64(),
    "float": pa.float32(),
    "boolean": pa.bool_(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
    "date": pa.date32(),
    "binary": pa.binary(),
}


def arrow_schema(schema: Schema, where: str) -> pa.Schema:
    fields = []
    for f in schema:
        t = ARROW_TYPES.get(f.dtype or "")
        if t is None:
            raise SchemaError(f"{where}: column '{f.name}' of type {f.dtype} is not supported for Python functions yet")
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


#: Arrow types whose arrays without nulls become lists faster through numpy (same Python values).
_NUMPY_LISTS = frozenset(map(str, (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64())))


def column_to_list(t: pa.DataType) -> Callable[[pa.Array], list[Any]]:
    """A column of type ``t`` as a list of Python values, timestamps as naive UTC datetimes."""
    if pa.types.is_timestamp(t) and t.tz is not None:
        naive = pa.timestamp(t.unit)
        return lambda c: c.cast(naive).to_pylist()
    if str(t) in _NUMPY_LISTS:
        return lambda c: c.to_pylist() if c.null_count else c.to_numpy().tolist()
    return pa.Array.to_pylist


def column_lists(batch: pa.RecordBatch) -> list[list[Any]]:
    """A batch's columns as lists of Python values (timestamps as naive UTC datetimes)."""
    return [column_to_list(f.type)(c) for f, c in zip(batch.schema, batch.columns)]


def row_function(
    fn: Callable[[dict[str, Any]], Any], mode: str, output: Schema, where: str, uid: str = ""
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function applying ``fn`` to each row (dict) of each batch.

    Rows are built from whole columns, and results are checked a column at a time: each
    distinct Python type of a column once (``compatible``), dicts by their keys; a result
    that fails either is checked again row by row (``check_row``) for the error message.
    An exception of ``fn`` fails the job naming ``fn``, ``where`` and ``uid`` (``user_calls``).
    """
    target = arrow_schema(output, where)
    operator = f"{where} (uid {uid})" if uid else where
    to_batch = ResultColumns(output, target, where)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        apply = to_lists = None
        with in_task(fn):
            for batch in batches:
                if apply is None:
                    apply = _row_caller(tuple(batch.schema.names), mode)
                    to_lists = [column_to_list(f.type) for f in batch.schema]
                with user_calls(operator):
                    results = apply(fn, [to_list(c) for to_list, c in zip(to_lists, batch.columns)])
                yield batch.filter(pa.array(results, pa.bool_())) if mode == "filter" else to_batch(results)

    return run


@contextmanager
def in_task(fn: Any) -> Iterator[None]:
    """A Spark task's run of ``fn``: the task's index for ``RuntimeContext``; a function with a lifecycle
    (``Lifecycled``) opened before the task's first row and closed after its last, also when it fails."""
    from pyspark import TaskContext

    task = TaskContext.get()
    if task is not None:
        set_current_task(TaskInfo(task.partitionId(), task.attemptNumber()))
    if not isinstance(fn, Lifecycled):
        yield
        return
    fn.start()
    try:
        yield
    finally:
        fn.finish()


def _row_caller(names: tuple[str, ...], mode: str) -> Callable[[Callable[[dict[str, Any]], Any], list[list[Any]]], list[Any]]:
    """A function calling ``fn`` on the row dict at each position of the columns (lists), written for
    these column names: it gives ``fn``'s results (for filter, their truth; for flat_map, the rows of
    the results, one after the other). A dict display per row is about twice as fast as
    ``dict(zip(names, values))``, and calling ``fn`` in the same loop lets each row dict go (its
    memory reused for the next) as soon as ``fn`` returns."""
    if not names:
        return lambda fn, columns: []
    variables = ", ".join(f"v{i}" for i in range(len(names)))
    row = "{" + ", ".join(f"{name!r}: v{i}" for i, name in enumerate(names)) + "}"
    if mode not in ("map", "filter"):  # flat_map, a loop: each result (a generator, say) is taken before the next call
        code = f"""def call(fn, columns):
    out = []
    for {variables}, in zip(*columns):
        produced = fn({row})
        if produced is not None:
            out.extend(produced)
    return out"""
    else:
        each = f"True if fn({row}) else False" if mode == "filter" else f"fn({row})"
        code = f"def call(fn, columns):\n    return [{each} for {variables}, in zip(*columns)]"
    scope: dict[str, Any] = {}
    exec(compile(code, GENERATED, "exec"), scope)  # noqa: S102 (our code; the column names are in it as literals, by repr)
    return scope["call"]


class ResultColumns:
    """Result rows (dicts, tuples, dataclasses, pydantic models) as one Arrow batch of the declared schema."""

    def __init__(self, output: Schema, target: pa.Schema, where: str):
        self.output, self.target, self.where = output, target, where
        self.names = tuple(output.names)
        #: Per column, the Python types already found compatible with it (None always is).
        self.fine: list[set[type]] = [{type(None)} for _ in output]

    def __call__(self, out: list[Any]) -> pa.RecordBatch:
        columns = self._columns(out)
        kinds = [set(map(type, column)) for column in columns]
        for i, (column, f) in enumerate(zip(columns, self.output)):
            for t in kinds[i] - self.fine[i]:
                sample = next(v for v in column if type(v) is t)
                if not compatible(python_type_name(sample), f.dtype):
                    for o in out:  # the first bad row, as row by row: raises, naming the column and the value
                        check_row(o, self.output, self.where)
                self.fine[i].add(t)
        arrays = [_array(c, f.type, k) for c, f, k in zip(columns, self.target, kinds)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.target)

    def _columns(self, out: list[Any]) -> list[list[Any]]:
        width = len(self.names)
        if not out:
            return [[] for _ in self.names]
        kinds = set(map(type, out))
        widths = set(map(len, out)) if kinds <= {dict, tuple} else set()  # (map: no Python call per row)
        if kinds == {dict} and widths == {width}:
            try:
                return [list(map(itemgetter(name), out)) for name in self.names]
            except KeyError:
                pass  # a key is missing (another one in its place): check_row says which
        elif kinds == {tuple} and widths == {width}:
            return [list(map(itemgetter(i), out)) for i in range(width)]
        rows = [check_row(o, self.output, self.where) for o in out]
        return [list(map(itemgetter(i), rows)) for i in range(width)]


def _array(column: list[Any], t: pa.DataType, kinds: set[type]) -> pa.Array:
    """``pa.array(column, type=t)``; Python ints only (no None) into int64 through numpy, which
    reads them in about half the time (the same values; a too large one: pa.array's error)."""
    if kinds == {int} and t == pa.int64():
        try:
            return pa.array(np.fromiter(column, np.int64, len(column)))
        except OverflowError:
            pass
    return pa.array(column, type=t)


def arrow_column(fn: Callable[..., pa.Array]) -> Callable[..., pa.Array]:
    """A scalar Arrow UDF's function for ``fn`` (Arrow arrays in, one array out): typed so that
    Spark reads its kind from the hints."""

    def column(*arrays: pa.Array) -> pa.Array:
        return fn(*arrays)

    return column


def pandas_function(
    fn: Callable[[Any], Any], mode: str, output: Schema, where: str, uid: str = ""
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A ``mapInPandas`` function: ``fn`` maps a DataFrame (or, for filter, gives a boolean mask)."""
    names = list(output.names)
    operator = f"{where} (uid {uid})" if uid else where

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        for pdf in frames:
            with user_calls(operator):
                result = fn(pdf)
            if mode == "filter":
                yield pdf[result.astype(bool).values]
                continue
            missing = [c for c in names if c not in result.columns]
            if missing:
                raise SchemaError(
                    f"{where} returned columns {list(result.columns)}; missing {', '.join(missing)} (declared output: {output})"
                )
            yield result[names]

    return run
