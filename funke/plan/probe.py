"""Check a Python function's output against its declared schema while planning.

funke calls the function once on a sample row built from the input schema (typed
placeholder values). If that call raises, the probe says nothing (the function may
reject placeholders); if it returns something that cannot fit the declared schema, the
mismatch is a SchemaError now, before Spark starts, rather than a task failure later.
The same check runs on every real row at run time (``check_row``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from funke.errors import SchemaError
from funke.plan.pytypes import as_mapping
from funke.plan.types import Schema, compatible, python_type_name

_SAMPLES: dict[str, Any] = {
    "string": "x",
    "bigint": 1,
    "int": 1,
    "smallint": 1,
    "tinyint": 1,
    "double": 1.0,
    "float": 1.0,
    "boolean": True,
    "timestamp": dt.datetime(2024, 1, 1),
    "timestamp_ntz": dt.datetime(2024, 1, 1),
    "date": dt.date(2024, 1, 1),
    "binary": b"x",
}


def sample_row(schema: Schema) -> dict[str, Any]:
    return {f.name: _SAMPLES.get(f.dtype or "", None) for f in schema}


def check_row(out: Any, schema: Schema, where: str) -> tuple[Any, ...]:
    """``out`` (dict, tuple, dataclass or pydantic instance) as a tuple in schema order, or a SchemaError saying what differs."""
    out = as_mapping(out)
    if isinstance(out, Mapping):
        missing = [n for n in schema.names if n not in out]
        extra = [k for k in out if k not in schema]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing {', '.join(missing)}")
            if extra:
                parts.append(f"unexpected {', '.join(map(str, extra))}")
            raise SchemaError(f"{where} returned {dict(out)!r}: {'; '.join(parts)} (declared output: {schema})")
        values = tuple(out[n] for n in schema.names)
    elif isinstance(out, tuple):
        if len(out) != len(schema):
            raise SchemaError(f"{where} returned {len(out)} values {out!r}, but the declared output has {len(schema)} columns ({schema})")
        values = out
    else:
        raise SchemaError(
            f"{where} returned {type(out).__name__} {out!r}; return a dict (or tuple) with the declared columns ({schema})"
        )
    for v, f in zip(values, schema):
        t = python_type_name(v)
        if not compatible(t, f.dtype):
            raise SchemaError(f"{where}: column '{f.name}' is declared {f.dtype} but the function returned {v!r} ({t})")
    return values


def probe(fn: Callable[..., Any], mode: str, input_schema: Schema | None, output: Schema | None, where: str) -> None:
    if input_schema is None or any(f.dtype is None for f in input_schema):
        return
    try:
        result = fn(sample_row(input_schema))
    except Exception:  # the function may reject placeholder values; run time checks every row
        return
    if mode == "filter":
        if not isinstance(result, (bool, type(None))) and type(result).__name__ != "bool_":
            raise SchemaError(f"{where} must return a bool, but returned {type(result).__name__} {result!r}")
        return
    target = output if output is not None else input_schema
    if mode == "flat_map":
        if isinstance(result, (str, bytes, Mapping)) or not isinstance(result, Iterable):
            raise SchemaError(f"{where} must return (or yield) an iterable of rows, but returned {type(result).__name__}")
        for out in list(result)[:3]:
            check_row(out, target, where)
        return
    check_row(result, target, where)
