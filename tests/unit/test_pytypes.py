"""Schemas from dataclasses, pydantic models and TypedDicts; rows from their instances (no Spark)."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Optional, TypedDict

import pydantic
import pytest

import funke as fk
from funke.plan.probe import check_row
from funke.plan.types import Schema


@dataclass
class Every:
    b: bool
    i: int
    f: float
    s: str
    raw: bytes
    at: dt.datetime
    day: dt.date
    money: decimal.Decimal
    tags: list[str]
    counts: dict[str, int]
    maybe: Optional[int]  # noqa: UP045 (Optional is what is tested)
    pipe: float | None


def test_every_supported_python_type_maps_to_a_funke_type():
    s = Schema.of(Every)
    assert [(f.name, f.dtype, f.nullable) for f in s] == [
        ("b", "boolean", False),
        ("i", "bigint", False),
        ("f", "double", False),
        ("s", "string", False),
        ("raw", "binary", False),
        ("at", "timestamp", False),
        ("day", "date", False),
        ("money", "decimal(38,18)", False),
        ("tags", "array<string>", False),
        ("counts", "map<string,bigint>", False),
        ("maybe", "bigint", True),
        ("pipe", "double", True),
    ]


class ClickTD(TypedDict):
    user: str
    at: dt.datetime


class ClickModel(pydantic.BaseModel):
    user: str
    n: Optional[int] = None  # noqa: UP045


@dataclass
class Inner:
    x: int


@dataclass
class Outer:
    inner: Inner
    ys: tuple[float, ...]


def test_typeddict_pydantic_and_nested_classes():
    assert Schema.of(ClickTD).ddl() == "user string, at timestamp"
    assert [(f.name, f.dtype, f.nullable) for f in Schema.of(ClickModel)] == [("user", "string", False), ("n", "bigint", True)]
    assert Schema.of(Outer).ddl() == "inner struct<x:bigint>, ys array<double>"


def test_unsupported_type_error_names_the_field():
    @dataclass
    class Bad:
        ok: int
        when: dt.timedelta

    with pytest.raises(fk.SchemaError, match=r"field Bad.when: type 'timedelta' has no funke type; supported: bool, int"):
        Schema.of(Bad)

    @dataclass
    class Either:
        v: int | str

    with pytest.raises(fk.SchemaError, match=r"field Either.v: a union of .* has no funke type; use Optional\[X\]"):
        Schema.of(Either)


def test_rows_may_be_dataclass_or_pydantic_instances():
    s = Schema.of(ClickModel)
    assert check_row(ClickModel(user="ann", n=2), s, "map(f)") == ("ann", 2)
    assert check_row(Inner(7), Schema.of(Inner), "map(f)") == (7,)
    with pytest.raises(fk.SchemaError, match="column 'x' is declared bigint but the function returned 'no'"):
        check_row(Inner("no"), Schema.of(Inner), "map(f)")


def test_stream_builders_take_a_class_as_schema():
    env = fk.StreamEnvironment(app="types")
    s = env.from_collection([{"user": "ann", "n": 1}], ClickModel)
    m = s.map(lambda r: ClickModel(user=r["user"], n=r["n"] + 1), output_schema=ClickModel)
    assert m.schema.ddl() == "user string, n bigint"
