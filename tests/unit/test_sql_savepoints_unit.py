"""The state of Flink SQL's updating operators in a savepoint (no Spark): each operator's keyed state,
written as a savepoint writes it (JSON text per value and key, no pickles: readable as ordinary
tables), reads back into an operator that goes on exactly as the one that wrote it."""

from __future__ import annotations

import datetime as dt

import pytest

from funke.savepoints.general import decode_key, decode_value, encode_key, encode_value
from funke.semantics.co_process import KeyedCoProcessOperator
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.time import timestamp_to_millis
from funke.table.aggregate import AggregateCall, GroupAggregate
from funke.table.changelog import ROW_KIND
from funke.table.joins import RegularJoin
from funke.table.rank import Order, RetractableTopN
from funke.table.semi_joins import SemiAntiJoin
from funke.table.temporal_join import TemporalJoin
from funke.table.upsert import UpsertMaterializer

T = dt.datetime(2026, 1, 1)


def through_a_savepoint(op, make):
    """A new operator (``make()``) holding ``op``'s state as a savepoint's tables give it back."""
    rows = op.snapshot()["state"]
    text = [(encode_key(r["key"]), encode_value(r["value"]), encode_value(r["last_access"])) for r in rows]
    assert not any("$pickle" in v for _, v, _ in text)  # (plain values: a savepoint's tables show them)
    restored = make()
    restored.restore({**op.snapshot(), "state": [
        {**r, "key": decode_key(k), "value": decode_value(v), "last_access": decode_value(a)} for r, (k, v, a) in zip(rows, text, strict=True)
    ]})  # fmt: skip
    return restored


def kinds(records):
    return [(r.value[ROW_KIND], *(v for c, v in r.value.items() if c != ROW_KIND)) for r in records]


def one_input(make, before, after):
    op = make()
    for key, row in before:
        op.process_element(key, row)
    restored = through_a_savepoint(op, make)
    for key, row in after:
        assert kinds(restored.process_element(key, row)) == kinds(op.process_element(key, row)), row


AGGREGATE = lambda: KeyedProcessOperator(
    GroupAggregate(
        ("k",),
        (AggregateCall("n", "count"), AggregateCall("lo", "min", ("v",)), AggregateCall("d", "count", ("t",), distinct=True),
         AggregateCall("s", "sum", ("v",), filter="big")),
        retracting=True,
    )
)  # fmt: skip
STATISTICS = lambda: KeyedProcessOperator(
    GroupAggregate(
        ("k",),
        (AggregateCall("var", "var_samp", ("v",)), AggregateCall("dev", "stddev_pop", ("v",)), AggregateCall("f", "first_value", ("v",)),
         AggregateCall("l", "listagg", ("k",)), AggregateCall("a", "array_agg", ("t",))),
        retracting=True,
    )
)  # fmt: skip
TOP = lambda: KeyedProcessOperator(RetractableTopN([Order("v", descending=True)], 2, "rn", numbered=True))
MATERIALIZER = lambda: KeyedProcessOperator(UpsertMaterializer(("k",)))


def row(kind, k, v, s):
    return k, {ROW_KIND: kind, "k": k, "v": v, "t": T + dt.timedelta(seconds=s), "big": v > 2}


@pytest.mark.parametrize("make", [AGGREGATE, STATISTICS, TOP, MATERIALIZER], ids=["aggregate", "statistics", "top-n", "materializer"])
def test_an_updating_operators_state_goes_through_a_savepoint_and_the_operator_goes_on(make):
    before = [row("+I", "a", 3, 1), row("+I", "a", 1, 2), row("+I", "b", 5, 1), row("+I", "a", 3, 3)]
    after = [row("-D", "a", 1, 2), row("-U", "a", 3, 1), row("+U", "a", 7, 4), row("-D", "b", 5, 1), row("+I", "b", 2, 2)]
    one_input(make, before, after)


def test_a_regular_joins_rows_and_their_partner_counts_go_through_a_savepoint():
    make = lambda: KeyedCoProcessOperator(RegularJoin([("x", "x")], [("y", "y")], outer=(True, True), updating=(True, True)))
    op = make()
    for side, kind, v in ((0, "+I", 1), (1, "+I", 7), (1, "+I", 8), (0, "+I", 2)):
        (op.process_element2 if side else op.process_element1)("k", {ROW_KIND: kind, ("y" if side else "x"): v})
    restored = through_a_savepoint(op, make)
    for side, kind, v in ((1, "-D", 7), (1, "-U", 8), (0, "-D", 1), (1, "+I", 9)):
        name = "y" if side else "x"
        got = (restored.process_element2 if side else restored.process_element1)("k", {ROW_KIND: kind, name: v})
        want = (op.process_element2 if side else op.process_element1)("k", {ROW_KIND: kind, name: v})
        assert kinds(got) == kinds(want)


@pytest.mark.parametrize("anti", [False, True], ids=["semi", "anti"])
def test_a_semi_or_anti_joins_kept_rows_and_partner_count_go_through_a_savepoint(anti):
    make = lambda: KeyedCoProcessOperator(SemiAntiJoin(["x"], anti=anti, updating=(True, True)))
    op = make()
    for side, kind, v in ((0, "+I", 1), (1, "+I", 7), (1, "+I", 8), (0, "+I", 2)):
        (op.process_element2 if side else op.process_element1)("k", {ROW_KIND: kind, "x": v})
    restored = through_a_savepoint(op, make)
    for side, kind, v in ((1, "-D", 7), (0, "-D", 1), (1, "-U", 8), (0, "+I", 3), (1, "+I", 9)):
        got = (restored.process_element2 if side else restored.process_element1)("k", {ROW_KIND: kind, "x": v})
        want = (op.process_element2 if side else op.process_element1)("k", {ROW_KIND: kind, "x": v})
        assert kinds(got) == kinds(want)
    assert kinds(want) == ([("-D", 2), ("-D", 3)] if anti else [("+I", 2), ("+I", 3)])  # (the last step flips the key)


def test_a_temporal_joins_waiting_rows_and_versions_go_through_a_savepoint():
    make = lambda: KeyedCoProcessOperator(TemporalJoin([("k", "k"), ("t", "t")], [("v", "v"), ("u", "u")], "t", "u", outer=True))
    op = make()
    at = lambda s: T + dt.timedelta(seconds=s)
    ms = lambda s: timestamp_to_millis(at(s))
    op.process_element2("k", {"v": 1, "u": at(10)}, ms(10))
    op.process_element2("k", {"v": 2, "u": at(20)}, ms(20))
    op.process_element1("k", {"k": "k", "t": at(15)}, ms(15))
    op.process_element1("k", {"k": "k", "t": at(25)}, ms(25))
    restored = through_a_savepoint(op, make)
    for o in (op, restored):
        o.process_element2("k", {ROW_KIND: "-D", "v": 2, "u": at(22)}, ms(22))
    got = [(r.value["t"], r.value["v"]) for r in restored.advance_watermark(ms(30))]
    assert got == [(r.value["t"], r.value["v"]) for r in op.advance_watermark(ms(30))]
    assert got == [(at(15), 1), (at(25), None)]


def test_an_over_aggregations_waiting_rows_and_accumulators_with_lag_and_percentile_go_through_a_savepoint():
    from funke.table.over import Frame, OverAggregate

    calls = (
        AggregateCall("l", "lag", ("v", "one", "none")), AggregateCall("s", "sum", ("v",)), AggregateCall("a", "array_agg", ("v",), filter="big"),
        AggregateCall("p", "percentile", ("v", "half")),
    )  # fmt: skip
    make = lambda: KeyedProcessOperator(OverAggregate("t", Frame("RANGE"), calls))

    def over_row(k, v, s):
        return k, {"k": k, "v": v, "t": T + dt.timedelta(seconds=s), "one": 1, "none": None, "big": v > 2, "half": 0.5}

    op = make()
    for key, value in (over_row("a", 3, 1), over_row("a", 1, 2), over_row("b", 5, 1), over_row("a", 4, 3)):
        op.process_element(key, value, timestamp_to_millis(value["t"]))
    op.advance_watermark(timestamp_to_millis(T + dt.timedelta(seconds=2)))  # (a's third row still waits)
    restored = through_a_savepoint(op, make)
    for key, value in (over_row("a", 6, 4), over_row("b", 7, 4)):
        for o in (op, restored):
            assert o.process_element(key, value, timestamp_to_millis(value["t"])) == []  # (each waits for the watermark)
    final = timestamp_to_millis(T + dt.timedelta(seconds=10))
    got, want = restored.advance_watermark(final), op.advance_watermark(final)
    assert [r.value for r in got] == [r.value for r in want]
    assert [(r.value["k"], r.value["v"], r.value["l"], r.value["s"], r.value["a"], r.value["p"]) for r in got] == [
        ("a", 4, 1, 8, [3, 4], 3.0), ("a", 6, 4, 14, [3, 4, 6], 3.5), ("b", 7, 5, 12, [5, 7], 6.0),
    ]  # fmt: skip
