"""Running users' Python functions on Spark over Arrow batches (``mapInArrow``/``mapInPandas``).

Rows reach the function as dicts (timestamps as naive UTC datetimes); every result row
is checked against the declared output schema, so a mismatch fails with a message that
names the function and the column rather than an Arrow conversion error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from funke.errors import SchemaError
from funke.plan.probe import check_row
from funke.plan.types import Schema

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
    """A ``mapInArrow`` function applying ``fn`` to each row (dict) of each batch."""
    target = arrow_schema(output, where)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = _naive(batch).to_pylist()
            if mode == "filter":
                keep = [bool(fn(r)) for r in rows]
                yield batch.filter(pa.array(keep, pa.bool_()))
                continue
            out: list[tuple[Any, ...]] = []
            if mode == "map":
                out = [check_row(fn(r), output, where) for r in rows]
            else:
                for r in rows:
                    produced = fn(r)
                    if produced is not None:
                        out.extend(check_row(o, output, where) for o in produced)
            columns = list(zip(*out)) if out else [[] for _ in target]
            yield pa.RecordBatch.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, target)], schema=target)

    return run


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
