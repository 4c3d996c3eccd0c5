"""funke.pyflink without Spark: Types (conversions where PyFlink serializes, Java's text forms), Row,
Duration/Time, Configuration, the import hook, and the chains of Python functions. Expected values are
PyFlink 2.3's, as it printed them here (python -m funke.pyflink's oracle runs; see funke/bench/pyflink.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import importlib
import pickle
import sys

import pytest

from funke.pyflink.common import Configuration, Duration, Row, RowKind, Time, Types, WatermarkStrategy
from funke.pyflink.common.typeinfo import java_float
from funke.pyflink.datastream._wire import Chain, Reader, Step, Tail, dumps, key_bytes, loads, print_line


@pytest.mark.parametrize(
    "value, single, text",
    [
        (1.1, False, "1.1"), (1e7, False, "1.0E7"), (0.001, False, "0.001"), (123456789.123, False, "1.23456789123E8"),
        (1e-4, False, "1.0E-4"), (float("nan"), False, "NaN"), (float("inf"), False, "Infinity"), (2.5e10, False, "2.5E10"),
        (-0.0, False, "-0.0"), (100.0, False, "100.0"), (1.1, True, "1.1"), (1e8, True, "1.0E8"), (1e-4, True, "1.0E-4"),
    ],
)  # fmt: skip
def test_java_prints_floats_and_doubles_as_pyflink_printed_them(value, single, text):
    assert java_float(value, single=single) == text


def test_float_values_pass_through_float32_where_pyflink_serializes_them():
    assert Types.FLOAT().from_python(110.1) == 110.0999984741211
    assert Types.TUPLE([Types.STRING(), Types.FLOAT()]).from_python(("Alice", 110.1)) == ("Alice", 110.0999984741211)
    assert Types.DOUBLE().from_python(110.1) == 110.1


def test_a_row_type_makes_rows_with_field_names_and_a_tuple_type_tuples():
    named = Types.ROW_NAMED(["id", "info"], [Types.INT(), Types.STRING()]).from_python((1, "x"))
    assert (named.id, named.info, repr(named)) == (1, "x", "Row(id=1, info='x')")
    positional = Types.ROW([Types.INT(), Types.STRING()]).from_python([2, "y"])
    assert repr(positional) == "Row(f0=2, f1='y')"
    assert Types.TUPLE([Types.INT()]).from_python([3]) == (3,)


@pytest.mark.parametrize(
    "t, value, line",
    [
        (Types.ROW([Types.INT(), Types.STRING(), Types.FLOAT(), Types.BOOLEAN(), Types.STRING()]), Row(1, "a", 1.100000023841858, True, None), "+I[1,a,1.100000023841858,True,None]"),
        (Types.TUPLE([Types.STRING(), Types.INT(), Types.INT(), Types.INT()]), ("hi", -2, 3, 2), "(hi,-2,3,2)"),
        (Types.TUPLE([Types.FLOAT(), Types.DOUBLE(), Types.BOOLEAN()]), (1.1, 2.5e10, True), "(1.1,2.5E10,true)"),
        (Types.TUPLE([Types.INT(), Types.TUPLE([Types.INT(), Types.STRING()]), Types.STRING()]), (1, (2, "x"), "z"), "(1,(2,x),z)"),
        (Types.LIST(Types.INT()), [1, 2], "[1, 2]"),
        (Types.MAP(Types.STRING(), Types.INT()), {"a": 1, "b": 2, "c": 3}, "{a=1, b=2, c=3}"),
        (Types.SQL_TIMESTAMP(), dt.datetime(2024, 1, 2, 3, 4, 5, 6000), "2024-01-02 03:04:05.006"),
        (Types.SQL_TIMESTAMP(), dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05.0"),
        (Types.SQL_DATE(), dt.date(2024, 1, 2), "2024-01-02"),
        (Types.SQL_TIME(), dt.time(3, 4, 5), "03:04:05"),
        (Types.BIG_DEC(), decimal.Decimal("1.50"), "1.50"),
        (Types.BOOLEAN(), True, "true"),
        (Types.SHORT(), 3, "3"),
        (None, Row(a=1, b="x"), "Row(a=1, b='x')"),
        (None, (1, "y"), "(1, 'y')"),
        (None, [1.1, None], "[1.1, None]"),
        (None, "s", "s"),
        (Types.ROW([Types.INT(), Types.ROW([Types.STRING(), Types.INT()])]), Row(1, Row("x", 2)), "+I[1,<Row('x', 2)>]"),
    ],
)  # fmt: skip
def test_print_writes_each_value_as_pyflink_printed_it(t, value, line):
    assert print_line(value, t) == line


def test_a_value_of_the_wrong_type_is_refused_naming_the_type():
    with pytest.raises(TypeError, match=r"declared Types.STRING\(\) cannot be int 1"):
        Types.STRING().from_python(1)
    with pytest.raises(OverflowError, match=r"does not fit Types.INT\(\)"):
        Types.INT().from_python(1 << 40)
    with pytest.raises(TypeError, match="must be a Row"):
        print_line((1, "x"), Types.ROW([Types.INT(), Types.STRING()]))


def test_row_behaves_as_pyflink_s():
    r = Row(name="Alice", age=11)
    assert (r.name, r["age"], r[0], "name" in r, len(r), list(r)) == ("Alice", 11, "Alice", True, 2, ["Alice", 11])
    assert r.as_dict() == {"name": "Alice", "age": 11}
    assert Row("name", "age")("Bob", 3) == Row(name="Bob", age=3)
    assert Row(a=1, b=2) == Row(b=2, a=1) and Row(1, 2) != Row(a=1, b=2)
    deleted = Row.of_kind(RowKind.DELETE, 1)
    assert str(deleted.get_row_kind()) == "-D" and pickle.loads(pickle.dumps(deleted)).get_row_kind() is RowKind.DELETE
    with pytest.raises(AttributeError):
        r.missing  # noqa: B018


def test_durations_are_timedeltas_funke_takes():
    from funke.semantics.time import to_millis

    assert to_millis(Time.seconds(3)) == 3000 and Duration.of_minutes(1).to_milliseconds() == 60_000
    s = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(2)).with_idleness(Duration.of_seconds(5))
    assert (s.bound_ms, s.idleness_ms) == (2000, 5000)
    c = Configuration().set_string("pipeline.name", "x").set_integer("parallelism.default", 3)
    assert (c.get_string("pipeline.name"), c.get_integer("parallelism.default", 1)) == ("x", 3)


def test_keys_pickle_alike_whatever_objects_they_share():
    same = "k" * 3
    assert key_bytes((same, same)) == key_bytes(("kkk", "".join(["kk", "k"])))  # noqa: FLY002 (two distinct string objects)
    assert loads(key_bytes((1, "a"))) == (1, "a")


def test_the_import_hook_makes_pyflink_funke_s_translation():
    from funke.pyflink._hook import install

    install()
    try:
        common = importlib.import_module("pyflink.common")
        assert common is importlib.import_module("funke.pyflink.common")
        from pyflink.datastream.functions import KeyedProcessFunction  # noqa: F401 (the hook resolves it)

        assert importlib.import_module("pyflink.datastream.window").TimeWindow(0, 5).max_timestamp() == 4
        with pytest.raises(ModuleNotFoundError, match=r"pyflink.datastream.connectors.pulsar.*funke's PyFlink translation"):
            importlib.import_module("pyflink.datastream.connectors.pulsar")
    finally:
        for name in [m for m in sys.modules if m == "pyflink" or m.startswith("pyflink.")]:
            del sys.modules[name]


def _chain(steps, convert=None, tail=None):
    return Chain(Reader(), convert, tuple(steps), tail or Tail("rows"), keep_ts=False)


def test_a_chain_passes_values_between_its_functions_as_they_are_and_converts_only_at_its_start():
    seen = []

    def look(v):
        seen.append(v)
        return v

    chain = _chain([Step("map", lambda v: (v[0], v[1] * 2)), Step("map", look), Step("filter", lambda v: v[1] > 0)], convert=Types.TUPLE([Types.STRING(), Types.FLOAT()]))
    out = [loads(r["value"]) for r in chain({"value": dumps(("a", 1.1))})]
    assert out == [("a", 2.200000047683716)]  # converted once at the start; not at the map's declared type
    assert seen == [("a", 2.200000047683716)]


def test_a_flat_map_step_iterates_what_the_function_gives_and_refuses_a_string():
    chain = _chain([Step("flat_map", str.split, name="split")])
    assert [loads(r["value"]) for r in chain({"value": dumps("to be")})] == ["to", "be"]
    bad = _chain([Step("flat_map", lambda v: v, name="ident")])
    with pytest.raises(TypeError, match=r"flat_map\(ident\) must yield or return an iterable"):
        bad({"value": dumps("x")})


def test_the_key_tail_converts_the_key_to_its_type():
    chain = _chain([], tail=Tail("key", selector=lambda v: v[0], key_type=Types.STRING()))
    (row,) = chain({"value": dumps(("a", 1))})
    assert loads(row["pf_key"]) == "a" and loads(row["value"]) == ("a", 1)


def test_keyed_sum_min_max_follow_pyflink_s_rules():
    from funke.pyflink.datastream.data_stream import _Accumulate

    assert _Accumulate(1, "sum").reduce(("China", 135), ("China", 32)) == ("China", 167)
    r = _Accumulate("v", "max").reduce(Row(k="a", v=1), Row(k="b", v=5))
    assert (r.k, r.v) == ("a", 5)  # max replaces the field in the first value
    assert _Accumulate(1, "min_by").reduce(("a", 3), ("b", 1)) == ("b", 1)
    assert _Accumulate(0, "sum").reduce(2, 3) == 5
    with pytest.raises(TypeError, match="basic type can only select the 0th field"):
        _Accumulate(1, "sum").reduce(2, 3)


def test_a_timestamp_assigner_in_a_chain_stamps_each_value_and_later_values_keep_the_stamp():
    class Stamp:
        def extract_timestamp(self, value, record_timestamp):
            return value * 1000 if record_timestamp == -(1 << 63) else -1  # (no timestamp yet: Long.MIN_VALUE)

    chain = _chain(
        [Step("stamp", Stamp().extract_timestamp), Step("flat_map", lambda v: [v, v + 1], name="twice")],
        tail=Tail("key", selector=lambda v: v % 2, key_type=Types.INT()),
    )
    assert [(loads(r["pf_key"]), loads(r["value"]), r["pf_ts"]) for r in chain({"value": dumps(3)})] == [(1, 3, 3000), (0, 4, 3000)]
