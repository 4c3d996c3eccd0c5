"""Keyed state (each type, TTL with the injectable clock, export/import) and the timer service."""

from __future__ import annotations

import pytest

from funke.semantics.clock import ManualClock, SystemClock
from funke.semantics.functions import ReduceFunction, SumAggregate
from funke.semantics.state import (
    VOID_NAMESPACE,
    AggregatingStateDescriptor,
    KeyedStateBackend,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
    decode_namespace,
    encode_namespace,
)
from funke.semantics.time import MIN_WATERMARK, seconds
from funke.semantics.timers import InternalTimerService, KeyedTimerService, TimeDomain
from funke.semantics.windows import GlobalWindow, TimeWindow


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(0)


@pytest.fixture
def backend(clock: ManualClock) -> KeyedStateBackend:
    b = KeyedStateBackend(clock)
    b.current_key = "a"
    return b


def ttl(ms: int, **kw) -> StateTtlConfig:
    builder = StateTtlConfig.new_builder(ms)
    if kw.get("on_read"):
        builder.update_ttl_on_read_and_write()
    if kw.get("return_expired"):
        builder.return_expired_if_not_cleaned_up()
    return builder.build()


# --------------------------------------------------------------------------- state types


def test_value_state_is_per_key_and_update_none_clears(backend):
    state = backend.get_state(ValueStateDescriptor("v", int))
    state.update(1)
    backend.current_key = "b"
    assert state.value() is None
    state.update(2)
    backend.current_key = "a"
    assert state.value() == 1
    state.update(None)
    assert state.value() is None
    backend.current_key = "b"
    assert state.value() == 2


def test_list_state(backend):
    state = backend.get_state(ListStateDescriptor("l"))
    assert state.get() == []
    state.add(1)
    state.add_all([2, 3])
    assert state.get() == [1, 2, 3]
    state.update([9])
    assert state.get() == [9]
    with pytest.raises(ValueError, match="cannot add None"):
        state.add(None)
    state.clear()
    assert state.get() == [] and backend.is_empty()


def test_map_state(backend):
    state = backend.get_state(MapStateDescriptor("m", str, int))
    state.put("x", 1)
    state.put_all({"y": 2, "z": 3})
    assert state.get("x") == 1 and state.get("nope") is None
    assert state.contains("y") and not state.contains("nope")
    state.remove("y")
    assert state.keys() == ["x", "z"] and state.values() == [1, 3] and state.items() == [("x", 1), ("z", 3)]
    assert not state.is_empty()
    state.clear()
    assert state.is_empty()


def test_reducing_state_with_callable_and_reduce_function(backend):
    class Max(ReduceFunction):
        def reduce(self, a, b):
            return max(a, b)

    summed = backend.get_state(ReducingStateDescriptor("sum", lambda a, b: a + b))
    biggest = backend.get_state(ReducingStateDescriptor("max", Max()))
    for v in (3, 9, 4):
        summed.add(v)
        biggest.add(v)
    assert (summed.get(), biggest.get()) == (16, 9)


def test_aggregating_state(backend):
    state = backend.get_state(AggregatingStateDescriptor("total", SumAggregate("v")))
    assert state.get() is None
    state.add({"v": 2})
    state.add({"v": 5})
    assert state.get() == 7


def test_namespaces_separate_state(backend):
    d = ValueStateDescriptor("v")
    backend.get_state(d, TimeWindow(0, 10)).update("w1")
    backend.get_state(d, TimeWindow(10, 20)).update("w2")
    assert backend.get_state(d, TimeWindow(0, 10)).value() == "w1"
    assert backend.get_state(d).value() is None


def test_descriptor_errors_say_what_to_do(backend):
    backend.get_state(ValueStateDescriptor("x"))
    with pytest.raises(TypeError, match="already exists as value state"):
        backend.get_state(ListStateDescriptor("x"))
    with pytest.raises(TypeError, match="needs a reduce function"):
        ReducingStateDescriptor("r", 5)
    with pytest.raises(TypeError, match="needs an AggregateFunction"):
        AggregatingStateDescriptor("a", object())
    with pytest.raises(TypeError, match="non-empty name"):
        ValueStateDescriptor("")
    fresh = KeyedStateBackend(ManualClock())
    with pytest.raises(ValueError, match="while a key is being processed"):
        fresh.get_state(ValueStateDescriptor("x")).value()


# --------------------------------------------------------------------------- TTL


def test_ttl_config_builder_and_validation():
    cfg = StateTtlConfig.new_builder(seconds(5)).update_ttl_on_read_and_write().return_expired_if_not_cleaned_up().build()
    assert cfg == StateTtlConfig(
        5_000, StateTtlConfig.UpdateType.OnReadAndWrite, StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp
    )
    with pytest.raises(ValueError, match="positive"):
        StateTtlConfig(0)
    d = ValueStateDescriptor("v")
    assert d.enable_time_to_live(cfg) is d and d.ttl_config is cfg


def test_value_ttl_expires_on_create_and_write_only(backend, clock):
    state = backend.get_state(ValueStateDescriptor("v").enable_time_to_live(ttl(10)))
    state.update("x")
    clock.advance_to(5)
    assert state.value() == "x"  # a read does not extend OnCreateAndWrite
    clock.advance_to(9)
    assert state.value() == "x"
    clock.advance_to(10)
    assert state.value() is None  # expired when last_write + ttl <= now
    assert backend.is_empty()  # and cleaned up by the read


def test_value_ttl_on_read_and_write_extends_on_read(backend, clock):
    state = backend.get_state(ValueStateDescriptor("v").enable_time_to_live(ttl(10, on_read=True)))
    state.update("x")
    clock.advance_to(5)
    assert state.value() == "x"
    clock.advance_to(14)
    assert state.value() == "x"
    clock.advance_to(24)
    assert state.value() is None


def test_ttl_return_expired_if_not_cleaned_up_returns_it_once(backend, clock):
    state = backend.get_state(ValueStateDescriptor("v").enable_time_to_live(ttl(10, return_expired=True)))
    state.update("stale")
    clock.advance_to(50)
    assert state.value() == "stale"
    assert state.value() is None


def test_list_ttl_is_per_element(backend, clock):
    state = backend.get_state(ListStateDescriptor("l").enable_time_to_live(ttl(10)))
    state.add("old")
    clock.advance_to(5)
    state.add("new")
    clock.advance_to(12)
    assert state.get() == ["new"]
    clock.advance_to(15)
    assert state.get() == [] and backend.is_empty()


def test_map_ttl_is_per_entry(backend, clock):
    state = backend.get_state(MapStateDescriptor("m").enable_time_to_live(ttl(10)))
    state.put("old", 1)
    clock.advance_to(5)
    state.put("new", 2)
    clock.advance_to(10)
    assert state.items() == [("new", 2)] and not state.contains("old") and state.get("old") is None


def test_reducing_ttl_restarts_an_expired_accumulator(backend, clock):
    state = backend.get_state(ReducingStateDescriptor("sum", lambda a, b: a + b).enable_time_to_live(ttl(10)))
    state.add(1)
    clock.advance_to(12)
    state.add(2)
    assert state.get() == 2


# --------------------------------------------------------------------------- export / import


def test_export_import_round_trip_keeps_values_and_ttl(backend, clock):
    value_d = ValueStateDescriptor("v").enable_time_to_live(ttl(10))
    list_d, map_d = ListStateDescriptor("l"), MapStateDescriptor("m")
    agg_d = AggregatingStateDescriptor("s", SumAggregate())
    backend.get_state(value_d).update("x")
    backend.get_state(list_d, TimeWindow(0, 10)).add_all([1, 2])
    backend.get_state(map_d, GlobalWindow()).put("k", {"nested": True})
    backend.current_key = ("b", 2)
    backend.get_state(agg_d).add(5)
    rows = backend.export_rows()
    assert {(r["state"], r["kind"], r["key"], r["namespace"]) for r in rows} == {
        ("v", "value", "a", "void"),
        ("l", "list", "a", "window:0:10"),
        ("m", "map", "a", "global"),
        ("s", "aggregating", ("b", 2), "void"),
    }

    restored = KeyedStateBackend(clock)
    restored.import_rows(rows)
    assert restored.export_rows() == rows
    restored.current_key = "a"
    assert restored.get_state(list_d, TimeWindow(0, 10)).get() == [1, 2]
    assert restored.get_state(map_d, GlobalWindow()).get("k") == {"nested": True}
    clock.advance_to(10)
    assert restored.get_state(value_d).value() is None  # the write time travelled with the row
    restored.current_key = ("b", 2)
    assert restored.get_state(agg_d).get() == 5


def test_import_rejects_rows_that_are_not_state_rows():
    with pytest.raises(ValueError, match="lacks"):
        KeyedStateBackend(ManualClock()).import_rows([{"state": "x"}])


def test_namespace_encoding_round_trips():
    for ns in (VOID_NAMESPACE, GlobalWindow(), TimeWindow(-5, 10)):
        assert decode_namespace(encode_namespace(ns)) == ns
    with pytest.raises(ValueError, match="not an exported state namespace"):
        decode_namespace("window:1")


# --------------------------------------------------------------------------- timers


def test_timers_have_set_semantics_and_fire_in_order(clock):
    timers = InternalTimerService(clock)
    timers.register_event_time_timer("b", VOID_NAMESPACE, 5)
    timers.register_event_time_timer("a", VOID_NAMESPACE, 5)
    timers.register_event_time_timer("a", VOID_NAMESPACE, 3)
    timers.register_event_time_timer("a", VOID_NAMESPACE, 3)
    timers.register_event_time_timer("a", VOID_NAMESPACE, 9)
    timers.delete_event_time_timer("a", VOID_NAMESPACE, 9)
    timers.delete_event_time_timer("zzz", VOID_NAMESPACE, 1)  # deleting nothing is fine
    fired = []
    timers.advance_watermark(100, lambda t: fired.append((t.key, t.timestamp, t.domain)))
    assert fired == [("a", 3, TimeDomain.EVENT_TIME), ("b", 5, TimeDomain.EVENT_TIME), ("a", 5, TimeDomain.EVENT_TIME)]
    assert timers.current_watermark == 100


def test_timers_registered_while_firing_fire_in_the_same_advance_if_due(clock):
    timers = InternalTimerService(clock)
    timers.register_event_time_timer("k", VOID_NAMESPACE, 1)
    fired = []

    def chain(timer):
        fired.append(timer.timestamp)
        timers.register_event_time_timer("k", VOID_NAMESPACE, timer.timestamp + 4)

    timers.advance_watermark(10, chain)
    assert fired == [1, 5, 9]
    assert timers.event_time_timers() == [(13, "k", VOID_NAMESPACE)]


def test_processing_timers_fire_by_the_clock(clock):
    timers = InternalTimerService(clock)
    assert timers.current_watermark == MIN_WATERMARK
    timers.register_processing_time_timer("k", VOID_NAMESPACE, 100)
    timers.register_processing_time_timer("k", VOID_NAMESPACE, 50)
    assert timers.next_processing_time() == 50
    fired = []
    timers.fire_processing_timers(lambda t: fired.append(t.timestamp))
    assert fired == []
    clock.advance_to(60)
    timers.fire_processing_timers(lambda t: fired.append(t.timestamp))
    assert fired == [50]
    assert timers.processing_time_timers() == [(100, "k", VOID_NAMESPACE)]


def test_timer_export_import_and_keyed_facade(clock):
    timers = InternalTimerService(clock)
    current = {"key": "a"}
    facade = KeyedTimerService(timers, lambda: current["key"])
    facade.register_event_time_timer(7)
    facade.register_processing_time_timer(8)
    current["key"] = "b"
    facade.register_event_time_timer(3)
    facade.delete_event_time_timer(7)  # b has no timer at 7: a's stays
    rows = timers.export_rows()
    assert rows == [
        {"domain": "event_time", "key": "b", "namespace": "void", "timestamp": 3},
        {"domain": "event_time", "key": "a", "namespace": "void", "timestamp": 7},
        {"domain": "processing_time", "key": "a", "namespace": "void", "timestamp": 8},
    ]
    copy = InternalTimerService(clock)
    copy.import_rows(rows)
    assert copy.export_rows() == rows
    with pytest.raises(TypeError, match="int epoch milliseconds"):
        timers.register_event_time_timer("a", VOID_NAMESPACE, 1.5)


def test_clocks():
    clock = ManualClock(10)
    clock.advance(seconds(1))
    assert clock.now_ms() == 1_010
    with pytest.raises(ValueError, match="cannot go back"):
        clock.advance_to(5)
    assert SystemClock().now_ms() > 1_600_000_000_000
