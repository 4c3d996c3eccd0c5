"""Bigints above 2**53 reach a general-path operator and leave it exactly, streaming and bounded,
one input and two: pandas makes float64 of a nullable int64 column, and the operator's frames
always hold nulls (time rows, the other input's rows, the ``DUE`` report)."""

from __future__ import annotations

import pytest

from funke.functions import KeyedCoProcessFunction, KeyedProcessFunction

pytestmark = pytest.mark.spark

BIG = 1795683994422123457  # float64 rounds it to ...520
ROWS = [{"k": "a", "id": BIG}, {"k": "b", "id": -BIG - 3}, {"k": "c", "id": None}]
SCHEMA = "k string, id bigint"
OUT = "k string, id bigint, plus_one bigint, seen string"


def _out(value):
    i = value["id"]
    return {"k": value["k"], "id": i, "plus_one": None if i is None else i + 1, "seen": repr(i)}


class Echo(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield _out(value)


class EchoBoth(KeyedCoProcessFunction):
    def process_element1(self, value, ctx):
        yield _out(value)

    def process_element2(self, value, ctx):
        yield _out({"k": value["k"], "id": value["other"]})


def _expected(rows):
    return sorted((r["k"], r["id"], None if r["id"] is None else r["id"] + 1, repr(r["id"])) for r in rows)


def _got(sink):
    return sorted((r["k"], r["id"], r["plus_one"], r["seen"]) for r in sink.rows)


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_bigints_through_one_and_two_input_functions_exactly(env, bounded):
    one = env.from_collection(ROWS, SCHEMA).key_by("k").process(Echo(), output_schema=OUT).collect()
    other = [{"k": "d", "other": BIG + 2}]
    first = env.from_collection(ROWS, SCHEMA).key_by("k")
    second = env.from_collection(other, "k string, other bigint").key_by("k")
    two = first.connect(second).process(EchoBoth(), output_schema=OUT).collect()
    assert env.execute(bounded=bounded).wait(300).done
    assert _got(one) == _expected(ROWS)
    assert _got(two) == _expected([*ROWS, {"k": "d", "id": BIG + 2}])
