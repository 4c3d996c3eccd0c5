"""General-path state in a savepoint as open tables, without Spark: snapshots made by the real
operators (through ``run_bucket``, pickled as ``BucketProcessor`` stores them), decoded to
rows, written as Parquet, read back, and turned back into the same snapshots."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from funke.cep import Pattern
from funke.savepoints import Savepoint, SavepointError, is_general
from funke.savepoints.general import (
    FORMAT,
    GeneralTables,
    decode_buckets,
    decode_key,
    decode_value,
    encode_key,
    encode_tables,
    encode_value,
    table_names,
    write_tables,
)
from funke.semantics.cep_operator import CepOperator, PatternSelect
from funke.semantics.evictors import TimestampedValue
from funke.semantics.functions import CountAggregate, KeyedProcessFunction, NamedAggregates, SumAggregate
from funke.semantics.joins import IntervalJoinOperator, ProcessJoinFunction
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.rolling import RollingOperator
from funke.semantics.snapshot_columns import StateColumns, TimerColumns
from funke.semantics.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from funke.semantics.time import MIN_WATERMARK, seconds
from funke.semantics.triggers import CountTrigger
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.windows import EventTimeSessionWindows
from funke.spark.general.program import BUCKET, CONTROL, SECOND_PREFIX, SIDE, TS, Output, Program, SecondInput
from funke.spark.general.run import run_bucket


class Tally(KeyedProcessFunction):
    """Value, list and map state and an event-time timer per element."""

    def open(self, ctx):
        self.n = ctx.get_state(ValueStateDescriptor("n"))
        self.seen = ctx.get_list_state(ListStateDescriptor("seen"))
        self.by_x = ctx.get_map_state(MapStateDescriptor("by_x"))

    def process_element(self, value, ctx):
        self.n.update((self.n.value() or 0) + 1)
        self.seen.add(value["v"])
        self.by_x.put(value["x"], (self.by_x.get(value["x"]) or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10_000)


def frame(rows, program=None):
    """Elements (timestamp, k, g, v, x) as a bucket's batch; a two-input program's alternate between its inputs."""
    columns = ("k", "g", "v", "x")
    data = {CONTROL: [False] * len(rows), TS: [r[0] for r in rows]}
    if program is None or program.second is None:
        data.update({c: [r[i + 1] for r in rows] for i, c in enumerate(columns)})
        return pd.DataFrame(data)
    data[SIDE] = [i % 2 for i in range(len(rows))]
    for prefix, side in (("", 0), (SECOND_PREFIX, 1)):
        data.update({prefix + c: [r[i + 1] if j % 2 == side else None for j, r in enumerate(rows)] for i, c in enumerate(columns)})
    return pd.DataFrame(data)


TYPES = {"k": "string", "g": "bigint", "v": "double", "x": "bigint"}
PROCESS = Program("tally", lambda: KeyedProcessOperator(Tally()), ("k", "g"), ("k", "g", "v", "x"), (Output(None, (("k", "string"),)),), user_rows=True, types=TYPES)
SESSIONS = Program(
    "sessions",
    lambda: WindowOperator(
        WindowSpec.of(EventTimeSessionWindows.with_gap(seconds(1)), trigger=CountTrigger.of(5)),
        WindowAggregate(NamedAggregates((("n", CountAggregate()), ("total", SumAggregate("v"))))),
    ),
    ("k",), ("k", "v"), (Output(None, (("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("n", "bigint"), ("total", "double"))),),
    window_result=True, types=TYPES,
)  # fmt: skip
ROLLING = Program("rolling", lambda: RollingOperator.builtin("sum", "v"), ("k",), ("k", "v"), (Output(None, (("k", "string"), ("v", "double"))),), types=TYPES)



class Both(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield {"k": left["k"]}


# a two-input operator: its snapshot holds the inputs' watermarks, and buffers the tables have no place for
JOINED = Program(
    "joined", lambda: IntervalJoinOperator(Both(), lower=-1_000, upper=2_000), ("k", "g"), ("k", "g", "v", "x"),
    (Output(None, (("k", "string"),)),), user_rows=True, types=TYPES,
    second=SecondInput(("k", "g"), ("k", "g", "v", "x"), frozenset(), TYPES),
)  # fmt: skip



def low(e):
    return e["v"] < 1


def high(e):
    return e["v"] >= 1


def first_low(match):
    return {"k": match["low"][0]["k"]}


# a pattern: the automaton's partial matches and the elements waiting for the watermark are keyed state
PATTERN = Pattern.begin("low").where(low).followed_by("high").where(high).within(5_000)
CEP = Program(
    "cep", lambda: KeyedProcessOperator(CepOperator(PATTERN, PatternSelect(first_low))), ("k", "g"), ("k", "g", "v", "x"),
    (Output(None, (("k", "string"),)),), user_rows=True, types=TYPES,
)  # fmt: skip

ELEMENTS = [(1000, "a", 1, 0.5, 3), (1500, "a", 1, 1.5, 3), (3000, "b", 2, 2.0, 4)]


def stored(program, batches):
    """Per bucket (its index in ``batches``), the state value BucketProcessor writes after the batch: raw rows as exported."""
    rows = []
    for bucket, batch in enumerate(batches):
        _, snap = run_bucket(program, None, frame(batch, program), spark_watermark=1200, processing_time=5000)
        if snap is not None:
            rows.append({"partition_id": bucket % 2, BUCKET: bucket, "snapshot": pickle.dumps(snap, protocol=pickle.HIGHEST_PROTOCOL)})
    return pd.DataFrame(rows, columns=["partition_id", BUCKET, "snapshot"])


def records(df):
    return [tuple(None if v is pd.NA else v for v in r) for r in df.itertuples(index=False, name=None)]


def test_a_keyed_process_function_s_state_and_timers_become_rows():
    raw = stored(PROCESS, [ELEMENTS[:2], ELEMENTS[2:]])
    tables = decode_buckets(raw, table="tally")
    assert list(tables.state.columns) == ["key", "scope", "state", "kind", "namespace", "value", "last_access", "bucket"]
    assert records(tables.state) == [
        ('["a",1]', "user", "n", "value", "void", "2", "5000", 0),
        ('["a",1]', "user", "seen", "list", "void", "[0.5,1.5]", "[5000,5000]", 0),
        ('["a",1]', "user", "by_x", "map", "void", '{"$map":[[3,2]]}', '{"$map":[[3,5000]]}', 0),
        ('["b",2]', "user", "n", "value", "void", "1", "5000", 1),
        ('["b",2]', "user", "seen", "list", "void", "[2.0]", "[5000]", 1),
        ('["b",2]', "user", "by_x", "map", "void", '{"$map":[[4,1]]}', '{"$map":[[4,5000]]}', 1),
    ]
    assert records(tables.timers) == [
        ('["a",1]', "event_time", "void", 11000, 0),
        ('["a",1]', "event_time", "void", 11500, 0),
        ('["b",2]', "event_time", "void", 13000, 1),
    ]
    assert records(tables.buckets) == [(0, 0, 1199, None, None, None), (1, 1, 1199, None, None, None)]
    # anyone reads them with json: keys are arrays for tuple keys, the map's int keys stay ints
    assert [decode_key(k) for k in tables.state["key"]][:1] == [("a", 1)]
    assert json.loads(tables.state["value"][0]) == 2 and decode_value(tables.state["value"][2]) == {3: 2}


def test_a_window_s_contents_merging_set_and_trigger_state_become_rows():
    tables = decode_buckets(stored(SESSIONS, [ELEMENTS]), table="sessions")
    assert records(tables.state) == [
        ('"a"', "window", "contents", "aggregating", "window:1000:2000", '{"$tuple":[2,2.0]}', "5000", 0),
        ('"b"', "window", "contents", "aggregating", "window:3000:4000", '{"$tuple":[1,2.0]}', "5000", 0),
        ('"a"', "window", "merging-window-set", "value", "void", "[[1000,2500,1000,2000]]", "5000", 0),
        ('"b"', "window", "merging-window-set", "value", "void", "[[3000,4000,3000,4000]]", "5000", 0),
        ('"a"', "trigger", "count", "reducing", "window:1000:2500", "2", "5000", 0),
        ('"b"', "trigger", "count", "reducing", "window:3000:4000", "1", "5000", 0),
    ]
    assert records(tables.timers) == [('"a"', "event_time", "window:1000:2500", 2499, 0), ('"b"', "event_time", "window:3000:4000", 3999, 0)]
    assert records(tables.buckets) == [(0, 0, 1199, 0, None, None)]


def test_a_rolling_aggregate_s_accumulated_records_are_value_state_named_acc():
    tables = decode_buckets(stored(ROLLING, [ELEMENTS]), table="rolling")
    assert records(tables.state) == [
        ('"a"', "rolling", "acc", "value", "void", '{"k":"a","v":2.0}', None, 0),
        ('"b"', "rolling", "acc", "value", "void", '{"k":"b","v":2.0}', None, 0),
    ]
    assert tables.timers.empty and records(tables.buckets) == [(0, 0, None, None, None, None)]


def test_a_pattern_s_partial_matches_and_waiting_elements_become_readable_rows():
    tables = decode_buckets(stored(CEP, [ELEMENTS[:2], ELEMENTS[2:]]), table="cep")
    # watermark 1199: the element at 1000 went through the automaton (a partial match, waiting for "high"),
    # the ones at 1500 and 3000 wait for the watermark; a run is [automaton state, last event's node, start, start id]
    assert records(tables.state) == [
        ('["a",1]', "user", "partial_matches", "value", "void",
         ('{"partial":[["high",0,1000,[1000,0]],["low",null,-1,null]],"completed":[],'
          '"events":[[0,"low",1000,0,{"k":"a","g":1,"v":0.5,"x":3},null]],"next_node":1,"next_event":1,"time":1199}'), "5000", 0),
        ('["a",1]', "user", "elements", "map", "void", '{"$map":[[1500,[{"k":"a","g":1,"v":1.5,"x":3}]]]}', '{"$map":[[1500,5000]]}', 0),
        ('["b",2]', "user", "elements", "map", "void", '{"$map":[[3000,[{"k":"b","g":2,"v":2.0,"x":4}]]]}', '{"$map":[[3000,5000]]}', 1),
    ]  # fmt: skip
    # a timer per waiting timestamp, and one at the partial match's time-out (1000 + 5000)
    assert records(tables.timers) == [
        ('["a",1]', "event_time", "void", 1500, 0),
        ('["a",1]', "event_time", "void", 6000, 0),
        ('["b",2]', "event_time", "void", 3000, 1),
    ]


@pytest.mark.parametrize("program", [PROCESS, SESSIONS, ROLLING, JOINED, CEP], ids=lambda p: p.uid)
def test_the_tables_give_back_the_very_snapshots_and_the_operator_goes_on_from_them(program, tmp_path):
    raw = stored(program, [ELEMENTS[:2], ELEMENTS[2:]])
    names = table_names(program.uid)
    write_tables(decode_buckets(raw, table=program.uid), names, tmp_path / "state")
    manifest = {"queries": {"q": {"operators": [{"table": program.uid, "format": FORMAT, "tables": names}]}}}
    sp = Savepoint(tmp_path, manifest)
    assert sp.operators() == sorted(names.values())
    read_back = GeneralTables(*(sp.table(names[role]) for role in ("state", "timers", "buckets")))
    snapshots = encode_tables(read_back, table=program.uid)
    original = {b: pickle.loads(s) for b, s in zip(raw[BUCKET], raw["snapshot"], strict=True)}
    assert snapshots == original
    assert same_types(snapshots, original)  # a tuple stays a tuple, an int an int
    later = frame([(1800, "a", 1, 4.0, 3), (9000, "b", 2, 1.0, 5), (2500, "a", 1, 2.0, 3)], program)
    for b, snap in original.items():
        assert_same_run(program, snap, snapshots[b], later)


def assert_same_run(program, a, b, batch):
    out_a, snap_a = run_bucket(program, a, batch, spark_watermark=20_000, processing_time=6000)
    out_b, snap_b = run_bucket(program, b, batch, spark_watermark=20_000, processing_time=6000)
    pd.testing.assert_frame_equal(out_a, out_b)
    assert snap_a == snap_b


@dataclass(frozen=True)
class Point:
    x: int
    y: int


VALUES = [
    None, True, 0, -(2**70), 1.5, -0.0, "é", [1, [2, "x"]], (1, (2.5, None)), (), {"a": (1,)}, {},
    {1: "x", ("a", 2): [3]}, {"$tuple": 1}, {"$x": 1, "y": 2}, {1, 2}, frozenset({("a", 1)}), float("inf"), float("-inf"),
    dt.datetime(2026, 1, 2, 3, 4, 5, 6), dt.datetime(2026, 1, 2, tzinfo=dt.UTC), dt.datetime(2026, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
    dt.date(2026, 1, 2), dt.time(3, 4, 5, 6), dt.timedelta(days=-1, seconds=5, microseconds=7), decimal.Decimal("1.10"),
    b"\x00\xff", TimestampedValue({"v": 1}, 1000), TimestampedValue(2), Point(1, 2), [Point(3, 4)],
]  # fmt: skip


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_values_come_back_equal_and_of_the_same_type(value):
    text = encode_value(value)
    json.loads(text)  # plain JSON, nothing else
    back = decode_value(text)
    assert back == value and same_types(back, value)


def same_types(a, b):
    a, b = (list(x) if isinstance(x, (StateColumns, TimerColumns)) else x for x in (a, b))  # (a snapshot's columns read as its rows)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return all(same_types(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_types(a[k], b[k]) and type(k) is type(next(j for j in b if j == k)) for k in a)
    return True


def test_tagged_values_say_what_they_are():
    assert encode_value((1, "a")) == '{"$tuple":[1,"a"]}'
    assert encode_value(float("nan")) == '{"$float":"nan"}' and math.isnan(decode_value('{"$float":"nan"}'))
    assert encode_value({"$tuple": 1}) == '{"$map":[["$tuple",1]]}'  # a user's dict never reads as a tag
    assert encode_value(dt.datetime(2026, 1, 2, tzinfo=dt.UTC)) == '{"$datetime":"2026-01-02T00:00:00+00:00"}'
    assert encode_value(np.int64(7)) == "7" and encode_value(np.float64(0.25)) == "0.25"
    kept = json.loads(encode_value(Point(1, 2)))["$pickle"]
    assert kept["type"].endswith("test_savepoint_general_unit.Point") and kept["repr"] == "Point(x=1, y=2)"
    assert encode_key(("a", (1, 2))) == '["a",[1,2]]' and decode_key('["a",[1,2]]') == ("a", (1, 2))
    with pytest.raises(ValueError, match=r"unknown tag '\$nope'"):
        decode_value('{"$nope": 1}')


def test_what_cannot_be_decoded_is_refused_with_the_reason():
    unknown = decode_buckets(pd.DataFrame({BUCKET: [3], "snapshot": [pickle.dumps({"watermark": 0, "cep": [(1, "a")]})]}), table="x")
    assert json.loads(unknown.buckets["other"][0])["cep"] == [{"$tuple": [1, "a"]}]  # kept whole, as JSON
    assert encode_tables(unknown, table="x") == {3: {"watermark": 0, "cep": [(1, "a")]}}
    broken = pd.DataFrame({BUCKET: [1], "snapshot": [pickle.dumps({"state": []})[:-3] + b"xyz"]})
    with pytest.raises(SavepointError, match=r"state table 'x': the state of bucket 1 cannot be unpickled .*PYTHONPATH"):
        decode_buckets(broken, table="x")
    with pytest.raises(SavepointError, match=r"need a 'snapshot' column"):
        decode_buckets(pd.DataFrame({BUCKET: [1]}), table="x")
    empty = decode_buckets(pd.DataFrame({BUCKET: [], "snapshot": []}), table="x")
    assert empty.state.empty and empty.timers.empty and empty.buckets.empty


def test_edited_rows_in_a_bucket_the_tables_do_not_list_are_refused():
    tables = decode_buckets(stored(PROCESS, [ELEMENTS]), table="tally")
    moved = tables.state.assign(bucket=pd.array([5] * len(tables.state), dtype="Int64"))
    with pytest.raises(SavepointError, match=r"table 'tally': a state row is in bucket 5, which tally.buckets does not list"):
        encode_tables(GeneralTables(moved, tables.timers, tables.buckets), table="tally")


def test_general_operators_are_recognized_by_their_one_snapshot_variable():
    assert is_general({"spark_operator": "transformWithStateInPandasExec", "state_variables": ["operator", "$rowCounter"]})
    assert not is_general({"spark_operator": "transformWithStateInPandasExec", "state_variables": ["other"]})
    assert not is_general({"spark_operator": "stateStoreSave", "state_variables": []})
    assert MIN_WATERMARK < 0  # the watermark of a bucket that saw none yet fits the int64 column
    assert Path(table_names("t")["timers"]).name == "t.timers"


# -- edits: what transform() writes, worked out without Spark ------------------------------------


def saved_general(tmp_path, program, batches):
    """A savepoint directory holding one general-path operator's tables (no checkpoint: planning reads the tables only)."""
    raw = stored(program, batches)
    names = table_names(program.uid)
    write_tables(decode_buckets(raw, table=program.uid), names, tmp_path / "state")
    op = {
        "operator_id": 0, "spark_operator": "transformWithStateInPandasExec", "state_variables": ["$eventTimers_keyToTimestamp", "operator"],
        "table": program.uid, "uid": program.uid, "format": FORMAT, "tables": names, "rows": 1,
    }  # fmt: skip
    manifest = {"format": 1, "job": "j", "queries": {"q": {"batch": 3, "operators": [op], "layout": []}}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return Savepoint(tmp_path, manifest), {b: pickle.loads(s) for b, s in zip(raw[BUCKET], raw["snapshot"], strict=True)}


def test_an_edit_becomes_the_changed_buckets_snapshots(tmp_path):
    from funke.savepoints.edit import _plan_all

    sp, original = saved_general(tmp_path, PROCESS, [ELEMENTS[:2], ELEMENTS[2:]])

    def edit(df):  # a's count to 10, b's list state deleted
        df.loc[(df["key"] == '["a",1]') & (df["state"] == "n"), "value"] = "10"
        return df[~((df["key"] == '["b",2]') & (df["state"] == "seen"))]

    (planned,) = _plan_all(None, sp, {"tally": edit, "tally.timers": lambda df: df[df["timestamp"] != 11500]})
    assert planned.counts == {"buckets_rewritten": 2, "buckets_deleted": 0} and planned.partitions == {0: 0, 1: 1}
    a, b = original[0], original[1]
    a["state"] = list(a["state"])  # (a snapshot keeps its state as columns; as rows they can be changed)
    a["state"][0]["value"] = 10
    a["timers"] = [t for t in a["timers"] if t["timestamp"] != 11500]
    b["state"] = [r for r in b["state"] if r["state"] != "user:seen"]
    assert planned.snapshots == {0: a, 1: b}
    # the edited snapshot runs on like any other
    _, after = run_bucket(PROCESS, planned.snapshots[0], frame([(1800, "a", 1, 4.0, 3)]), spark_watermark=1200, processing_time=6000)
    assert after["state"][0]["value"] == 11
    # unchanged tables: no bucket to rewrite; a bucket's row deleted with all its rows: the bucket goes
    assert _plan_all(None, sp, {"tally": lambda df: df}).pop().snapshots == {}
    gone = _plan_all(None, sp, {
        "tally": lambda df: df[df["bucket"] != 1], "tally.timers": lambda df: df[df["bucket"] != 1], "tally.buckets": lambda df: df[df["bucket"] != 1],
    }).pop()  # fmt: skip
    assert gone.snapshots == {1: None} and gone.counts == {"buckets_rewritten": 0, "buckets_deleted": 1}


def test_edits_that_do_not_fit_a_general_operator_are_refused(tmp_path):
    from funke.savepoints.edit import _plan_all

    sp, _ = saved_general(tmp_path, PROCESS, [ELEMENTS[:2], ELEMENTS[2:]])
    cases = {
        r"table 'tally': key \[\"z\",9\] is not in the savepoint's state; transform\(\) edits the state of keys the operator already holds": (
            "tally", lambda df: pd.concat([df, df.iloc[:1].assign(key='["z",9]')])
        ),
        r"table 'tally': key \[\"a\",1\] is in bucket 0, not 1: a key's bucket cannot change": ("tally", lambda df: df.assign(bucket=1)),
        r"table 'tally' has 2 rows for state user:n of key \[\"a\",1\] in namespace void": ("tally", lambda df: pd.concat([df, df.iloc[:1]])),
        r"table 'tally' has column\(s\) \['note'\] it cannot have; lacks \['kind'\]": ("tally", lambda df: df.drop(columns="kind").assign(note=1)),
        r"table 'tally': column 'value' is null in row\(s\) \[0\]; drop the row": ("tally", lambda df: df.assign(value=[None, *df["value"][1:]])),
        r"table 'tally': column 'value' holds int values \(10\)": ("tally", lambda df: df.assign(value=10)),
        r"table 'tally': kind 'counter' is not one of value, list, map, reducing, aggregating": ("tally", lambda df: df.assign(kind="counter")),
        r"table 'tally': a row cannot be read back \(JSONDecodeError": ("tally", lambda df: df.assign(value="{n: 1}")),
        r"table 'tally': bucket 0's edited state does not load \(ValueError: list state 'user:seen' of key \('a', 1\) needs a JSON array": (
            "tally", lambda df: df.assign(value=df["value"].where(df["kind"] != "list", '"x"'), last_access=df["last_access"].where(df["kind"] != "list", "5000"))
        ),
        r"table 'tally': column 'last_access' is null in row\(s\) \[0\]; only a rolling aggregate's acc has none": (
            "tally", lambda df: df.assign(last_access=df["last_access"].where(~df.index.isin(df.index[:1])))
        ),
        r"table 'tally.buckets' lists bucket\(s\) \[7\] that the savepoint does not have": ("tally.buckets", lambda df: pd.concat([df, df.iloc[:1].assign(bucket=7)])),
        r"table 'tally': a state row is in bucket 1, which tally.buckets does not list": ("tally.buckets", lambda df: df[df["bucket"] != 1]),
        r"table 'tally.timers': column 'timestamp' holds numbers that are not whole": ("tally.timers", lambda df: df.assign(timestamp=df["timestamp"] + 0.5)),
    }
    for message, (table, edit) in cases.items():
        with pytest.raises(SavepointError, match=message):
            _plan_all(None, sp, {table: edit})


def test_savepoints_of_format_1_still_read_and_an_unknown_format_is_refused_naming_the_formats_read(tmp_path):
    from funke.savepoints import FORMAT, MANIFEST, read

    assert FORMAT == 2  # (snapshots as columns in the checkpoint: an older funke must refuse them by the format)
    for fmt in (1, 2):
        (tmp_path / MANIFEST).write_text(json.dumps({"format": fmt, "job": "j", "queries": {}}))
        assert read(tmp_path).manifest["format"] == fmt
    (tmp_path / MANIFEST).write_text(json.dumps({"format": 3, "job": "j", "queries": {}}))
    with pytest.raises(SavepointError, match="has format 3; this funke reads formats 1, 2"):
        read(tmp_path)
