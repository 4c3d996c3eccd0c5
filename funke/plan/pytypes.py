"""Schemas from Python classes: a dataclass, a pydantic model or a ``TypedDict``.

Wherever a DDL string is accepted (``schema=``, ``output_schema=``, ``OutputTag``), a class
with annotated fields is too; rows that are instances of such a class become dicts::

    @dataclass
    class Click:
        user: str
        page: str
        ts: datetime.datetime
        score: float | None = None

    env.from_collection([Click("a", "/", t)], schema=Click)

Python types map to Spark's: ``str`` string, ``int`` bigint, ``float`` double, ``bool``
boolean, ``bytes`` binary, ``datetime`` timestamp, ``date`` date, ``Decimal`` decimal(38,18),
``list[X]`` array, ``dict[K, V]`` map, a nested class a struct; ``X | None`` is nullable.

>>> from dataclasses import dataclass
>>> @dataclass
... class Order:
...     id: int
...     tags: list[str]
...     note: str | None = None
>>> str(schema_of_class(Order))
'id bigint, tags array<string>, note string'
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import types
import typing
from collections.abc import Mapping
from typing import Any

from funke.errors import SchemaError

_SCALARS: dict[Any, str] = {
    str: "string",
    int: "bigint",
    float: "double",
    bool: "boolean",
    bytes: "binary",
    dt.datetime: "timestamp",
    dt.date: "date",
    decimal.Decimal: "decimal(38,18)",
}


def is_typed_class(spec: Any) -> bool:
    """A dataclass, a pydantic model or a TypedDict class (not an instance)."""
    if not isinstance(spec, type):
        return False
    return dataclasses.is_dataclass(spec) or _is_pydantic(spec) or typing.is_typeddict(spec)


def _is_pydantic(cls: type) -> bool:
    return any(base.__module__.startswith("pydantic") and base.__name__ == "BaseModel" for base in cls.__mro__)


def _fields(cls: type) -> list[tuple[str, Any]]:
    if _is_pydantic(cls):
        return [(name, f.annotation) for name, f in cls.model_fields.items()]  # type: ignore[attr-defined]
    hints = typing.get_type_hints(cls)
    if dataclasses.is_dataclass(cls):
        return [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]
    return list(hints.items())


def schema_of_class(cls: type) -> Any:
    """The funke ``Schema`` of a dataclass, pydantic model or TypedDict."""
    from funke.plan.types import Field, Schema

    out = []
    for name, annotation in _fields(cls):
        dtype, nullable = _spark_type(annotation, f"{cls.__name__}.{name}")
        out.append(Field(name, dtype, nullable))
    if not out:
        raise SchemaError(f"{cls.__name__} has no annotated fields to make a schema of")
    return Schema(tuple(out))


def _spark_type(annotation: Any, where: str) -> tuple[str, bool]:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _spark_type(args[0], where)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise SchemaError(f"{where}: a union of {', '.join(map(_name, rest))} has no Spark type; use one type (or X | None)")
        return _spark_type(rest[0], where)[0], True
    if annotation in _SCALARS:
        return _SCALARS[annotation], True
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple, set, frozenset):
        if not args or (origin is tuple and len(args) != 2 and args[-1] is not Ellipsis):
            raise SchemaError(f"{where}: {_name(annotation)} needs its element type (e.g. list[str])")
        return f"array<{_spark_type(args[0], where)[0]}>", True
    if origin in (dict, Mapping) or annotation is dict:
        if len(args) != 2:
            raise SchemaError(f"{where}: {_name(annotation)} needs its key and value types (e.g. dict[str, int])")
        return f"map<{_spark_type(args[0], where)[0]},{_spark_type(args[1], where)[0]}>", True
    if is_typed_class(annotation):
        inner = schema_of_class(annotation)
        return "struct<" + ",".join(f"{f.name}:{f.dtype}" for f in inner) + ">", True
    raise SchemaError(
        f"{where}: Python type {_name(annotation)} has no Spark type; use str, int, float, bool, bytes, datetime, date, "
        "Decimal, list[...], dict[..., ...], a nested dataclass, or a DDL string"
    )


def _name(t: Any) -> str:
    return getattr(t, "__name__", None) or repr(t)


def as_row(value: Any) -> Any:
    """An instance of a dataclass or pydantic model as a dict; anything else as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if _is_pydantic(type(value)):
        return value.model_dump()
    return value
