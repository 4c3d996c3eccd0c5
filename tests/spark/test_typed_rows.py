"""Dataclass and pydantic schemas and rows on Spark: a source, a Python map and a keyed process
function that all speak in class instances."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pydantic
import pytest

import funke as fk
from funke.functions import KeyedProcessFunction
from funke.state import ValueStateDescriptor

pytestmark = pytest.mark.spark


@dataclass
class Click:
    user: str
    page: str
    ts: dt.datetime


class Visit(pydantic.BaseModel):
    user: str
    page: str
    nth: int


@dataclass
class Tagged:
    user: str
    page: str
    nth: int
    first: bool


class Number(KeyedProcessFunction):
    def process_element(self, value, ctx):
        seen = ctx.get_state(ValueStateDescriptor("seen", "bigint"))
        n = (seen.value() or 0) + 1
        seen.update(n)
        yield Visit(user=value["user"], page=value["page"], nth=n)


def test_class_schemas_and_instances_through_a_job(env):
    t0 = dt.datetime(2024, 1, 1)
    clicks = [Click("a", "/", t0), Click("b", "/x", t0), Click("a", "/y", t0 + dt.timedelta(seconds=1))]
    visits = env.from_collection(clicks, rows_per_batch=2).key_by("user").process(Number(), output_schema=Visit)
    tagged = visits.map(lambda v: Tagged(user=v["user"], page=v["page"], nth=v["nth"], first=v["nth"] == 1), output_schema=Tagged)
    sink = tagged.collect()
    assert env.execute().wait(300).done  # (a finite stream's job ends, though no watermark moves at its end)
    assert sorted((r["user"], r["page"], r["nth"], r["first"]) for r in sink.rows) == [
        ("a", "/", 1, True), ("a", "/y", 2, False), ("b", "/x", 1, True),
    ]  # fmt: skip
    assert str(tagged.schema) == "user string, page string, nth bigint, first boolean"
