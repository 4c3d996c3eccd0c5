"""Schemas from Python classes (dataclass, pydantic model, TypedDict) and rows from their instances.

>>> from dataclasses import dataclass
>>> @dataclass
... class Click:
...     user: str
...     clicks: int
...     score: float | None = None
>>> from funke.plan.types import Schema
>>> print(Schema.of(Click))
user string, clicks bigint, score double
>>> [f.nullable for f in Schema.of(Click)]
[False, False, True]
>>> as_mapping(Click("ann", 3))
{'user': 'ann', 'clicks': 3, 'score': None}
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import types
import typing
from typing import Any

from funke.errors import SchemaError

_SIMPLE: dict[Any, str] = {
    bool: "boolean",  # before int: bool is an int subclass, but lookups here are exact
    int: "bigint",
    float: "double",
    str: "string",
    bytes: "binary",
    dt.datetime: "timestamp",
    dt.date: "date",
    decimal.Decimal: "decimal(38,18)",
}
_SUPPORTED = "bool, int, float, str, bytes, datetime, date, Decimal, list[X], dict[K, V], Optional[X] or a nested dataclass/TypedDict/pydantic model"


def is_record_class(obj: object) -> bool:
    """A class whose annotated fields describe a row: a dataclass, a pydantic model or a TypedDict."""
    if not isinstance(obj, type):
        return False
    return dataclasses.is_dataclass(obj) or typing.is_typeddict(obj) or hasattr(obj, "model_fields")


def class_fields(cls: type) -> list[tuple[str, str, bool]]:
    """(name, funke type, nullable) for each field of ``cls``, in declaration order."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception as e:  # a forward reference that does not resolve
        raise SchemaError(f"schema={cls.__name__}: its type annotations do not resolve ({e}); define the types it names at module level") from e
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in dataclasses.fields(cls)]
    elif hasattr(cls, "model_fields") and not typing.is_typeddict(cls):
        names = list(cls.model_fields)
    else:
        names = list(hints)
    out = []
    for name in names:
        dtype, nullable = _convert(hints[name], f"{cls.__name__}.{name}")
        out.append((name, dtype, nullable))
    if not out:
        raise SchemaError(f"schema={cls.__name__} has no fields: a schema needs at least one annotated field")
    return out


def _convert(tp: Any, where: str) -> tuple[str, bool]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) != 1:
            raise SchemaError(f"field {where}: a union of {tp} has no funke type; use Optional[X] of a single type ({_SUPPORTED})")
        return _convert(args[0], where)[0], True
    if origin is typing.Annotated:
        return _convert(typing.get_args(tp)[0], where)
    if tp in _SIMPLE:
        return _SIMPLE[tp], False
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset):
        args = typing.get_args(tp)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise SchemaError(f"field {where}: {tp} has no funke type; use tuple[X, ...] or list[X] for an array")
        if not args:
            raise SchemaError(f"field {where}: say the element type, e.g. list[int]")
        return f"array<{_convert(args[0], where)[0]}>", False
    if origin is dict or tp is dict:
        args = typing.get_args(tp)
        if len(args) != 2:
            raise SchemaError(f"field {where}: say the key and value types, e.g. dict[str, int]")
        return f"map<{_convert(args[0], where)[0]},{_convert(args[1], where)[0]}>", False
    if is_record_class(tp):
        inner = ",".join(f"{n}:{t}" for n, t, _ in class_fields(tp))
        return f"struct<{inner}>", False
    raise SchemaError(f"field {where}: type {getattr(tp, '__name__', tp)!r} has no funke type; supported: {_SUPPORTED}")


def as_mapping(obj: Any) -> Any:
    """A row returned as a dataclass or pydantic instance, as a dict; anything else unchanged."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    dump = getattr(obj, "model_dump", None)
    if dump is not None and not isinstance(obj, type):
        return dump()
    return obj
