"""Schemas from dataclasses, pydantic models and TypedDicts (no Spark)."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Optional, TypedDict

import pydantic
import pytest

import funke as fk
from funke.errors import SchemaError
from funke.plan.probe import check_row
from funke.plan.types import Schema


@dataclass
class Point:
    x: float
    y: float


@dataclass
class Click:
    user: str
    n: int
    ok: bool
    raw: bytes
    ts: dt.datetime
    day: dt.date
    amount: decimal.Decimal
    tags: list[str]
    counts: dict[str, int]
    at: Point
    note: Optional[str] = None  # noqa: UP045 (both spellings of optional are accepted)
    score: float | None = None


class ClickModel(pydantic.BaseModel):
    user: str
    n: int
    ts: dt.datetime
    score: float | None = None


class ClickDict(TypedDict):
    user: str
    n: int


def test_every_supported_python_type_maps_to_its_spark_type():
    s = Schema.of(Click)
    assert [(f.name, f.dtype) for f in s] == [
        ("user", "string"), ("n", "bigint"), ("ok", "boolean"), ("raw", "binary"), ("ts", "timestamp"), ("day", "date"),
        ("amount", "decimal(38,18)"), ("tags", "array<string>"), ("counts", "map<string,bigint>"),
        ("at", "struct<x:double,y:double>"), ("note", "string"), ("score", "double"),
    ]  # fmt: skip
    assert all(f.nullable for f in s)


def test_pydantic_models_and_typed_dicts():
    assert str(Schema.of(ClickModel)) == "user string, n bigint, ts timestamp, score double"
    assert str(Schema.of(ClickDict)) == "user string, n bigint"


def test_an_unsupported_type_names_the_field():
    @dataclass
    class Bad:
        when: dt.time

    with pytest.raises(SchemaError, match=r"Bad\.when: Python type time has no Spark type"):
        Schema.of(Bad)

    @dataclass
    class Ambiguous:
        v: int | str

    with pytest.raises(SchemaError, match=r"Ambiguous\.v: a union of int, str has no Spark type"):
        Schema.of(Ambiguous)


def test_instances_are_rows_wherever_dicts_are():
    schema = Schema.of(ClickModel)
    when = dt.datetime(2024, 1, 1)
    assert check_row(ClickModel(user="a", n=1, ts=when), schema, "map") == ("a", 1, when, None)

    env = fk.StreamEnvironment(app="typed")
    s = env.from_collection([ClickModel(user="a", n=1, ts=when)], schema=ClickModel)
    assert s.schema == schema
    # schema inferred from dataclass instances, and output_schema given as a class
    @dataclass
    class Out:
        user: str
        twice: int

    t = env.from_collection([Point(1.0, 2.0)]).map(lambda r: Out(user=str(r["x"]), twice=2), output_schema=Out)
    assert str(t.schema) == "user string, twice bigint"
    with pytest.raises(SchemaError, match="column 'twice' is declared bigint"):
        env.from_collection([Point(1.0, 2.0)]).map(lambda r: Out(user="x", twice="no"), output_schema=Out)
