"""Running users' Python functions on Spark over Arrow batches (``mapInArrow``/``mapInPandas``).

Rows reach the function as dicts (timestamps as naive UTC datetimes); every result row
is checked against the declared output schema, so a mismatch fails with a message that
names the function and the column rather than an Arrow conversion error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import Any

import pyarrow as pa

from funke.errors import SchemaError
from funke.plan.probe import check_row
from funke.plan.types import Schema, compatible, python_type_name

_ARROW = {
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
        t = _ARROW.get(f.dtype or "")
        if t is None:
            raise SchemaError(f"{where}: column '{f.name}' of type {f.dtype} is not supported for Python functions yet")
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


def _naive(batch: pa.RecordBatch) -> pa.RecordBatch:
    cols = []
    for c in batch.columns:
        if pa.types.is_timestamp(c.type) and c.type.tz is not None:
            c = c.cast(pa.timestamp(c.type.unit))
        cols.append(c)
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def row_function(fn: Callable[[dict[str, Any]], Any], mode: str, output: Schema, where: str) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function applying ``fn`` to each row (dict) of each batch.

    Rows are built from whole columns, and results are checked a column at a time: each
    distinct Python type of a column once (``compatible``), dicts by their keys; a result
    that fails either is checked again row by row (``check_row``) for the error message.
    """
    target = arrow_schema(output, where)
    to_batch = _ResultColumns(output, target, where)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        make_rows = None
        for batch in batches:
            if make_rows is None:
                make_rows = _row_maker(tuple(batch.schema.names))
            rows = make_rows([c.to_pylist() for c in _naive(batch).columns])
            if mode == "filter":
                keep = [bool(fn(r)) for r in rows]
                yield batch.filter(pa.array(keep, pa.bool_()))
                continue
            if mode == "map":
                out = [fn(r) for r in rows]
            else:
                out = []
                for r in rows:
                    produced = fn(r)
                    if produced is not None:
                        out.extend(produced)
            yield to_batch(out)

    return run


def _row_maker(names: tuple[str, ...]) -> Callable[[list[list[Any]]], list[dict[str, Any]]]:
    """A function from columns (lists) to row dicts, written for these column names: a dict
    display per row is about twice as fast as ``dict(zip(names, values))``."""
    if not names:
        return lambda columns: []
    variables = [f"v{i}" for i in range(len(names))]
    display = ", ".join(f"{name!r}: {v}" for name, v in zip(names, variables))
    return eval(f"lambda columns: [{{{display}}} for {', '.join(variables)}, in zip(*columns)]")  # the names go in as literals (repr)


class _ResultColumns:
    """Result rows (dicts, tuples, dataclasses, pydantic models) as one Arrow batch of the declared schema."""

    def __init__(self, output: Schema, target: pa.Schema, where: str):
        self.output, self.target, self.where = output, target, where
        self.names = tuple(output.names)
        #: Per column, the Python types already found compatible with it (None always is).
        self.fine: list[set[type]] = [{type(None)} for _ in output]

    def __call__(self, out: list[Any]) -> pa.RecordBatch:
        columns = self._columns(out)
        for i, (column, f) in enumerate(zip(columns, self.output)):
            for t in set(map(type, column)) - self.fine[i]:
                sample = next(v for v in column if type(v) is t)
                if not compatible(python_type_name(sample), f.dtype):
                    for o in out:  # the first bad row, as row by row: raises, naming the column and the value
                        check_row(o, self.output, self.where)
                self.fine[i].add(t)
        return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, self.target)], schema=self.target)

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


def arrow_column(fn: Callable[..., pa.Array]) -> Callable[..., pa.Array]:
    """A scalar Arrow UDF's function for ``fn`` (Arrow arrays in, one array out): typed so that
    Spark reads its kind from the hints."""

    def column(*arrays: pa.Array) -> pa.Array:
        return fn(*arrays)

    return column


def pandas_function(fn: Callable[[Any], Any], mode: str, output: Schema, where: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A ``mapInPandas`` function: ``fn`` maps a DataFrame (or, for filter, gives a boolean mask)."""
    names = list(output.names)

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        for pdf in frames:
            result = fn(pdf)
            if mode == "filter":
                yield pdf[result.astype(bool).values]
                continue
            missing = [c for c in names if c not in result.columns]
            if missing:
                raise SchemaError(f"{where} returned columns {list(result.columns)}; missing {', '.join(missing)} (declared output: {output})")
            yield result[names]

    return run
