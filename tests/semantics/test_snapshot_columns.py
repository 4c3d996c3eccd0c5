"""An operator snapshot's state and timers as columns (``funke.semantics.snapshot_columns``): what an
``export_columns`` gives, pickled and imported, is the very backend and timer service ``export_rows``
describes, and the rows of older snapshots still import."""

from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.clock import ManualClock
from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.snapshot_columns import StateColumns, TimerColumns
from funke.semantics.state import (
    VOID_NAMESPACE,
    KeyedStateBackend,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
    encode_namespace,
)
from funke.semantics.timers import InternalTimerService
from funke.semantics.windows import GlobalWindow, TimeWindow

NAMESPACES = st.sampled_from([VOID_NAMESPACE, GlobalWindow(), TimeWindow(0, 10), TimeWindow(10, 20)])
KEYS = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b", ("a", 1)]))
WRITES = st.lists(
    st.tuples(st.sampled_from(["value", "list", "map", "reducing"]), KEYS, NAMESPACES, st.integers(-5, 5), st.integers(0, 50)),
    max_size=40,
)
TIMERS = st.lists(st.tuples(st.booleans(), KEYS, NAMESPACES, st.integers(0, 6), st.booleans()), max_size=40)


def backend_of(writes) -> KeyedStateBackend:
    clock = ManualClock()
    backend = KeyedStateBackend(clock)
    descriptors = {
        "value": ValueStateDescriptor("v"),
        "list": ListStateDescriptor("l"),
        "map": MapStateDescriptor("m", int, int),
        "reducing": ReducingStateDescriptor("r", lambda a, b: a + b),
    }
    for kind, key, namespace, value, now in writes:
        clock.advance_to(max(clock.now_ms(), now))  # (the access times differ between entries)
        backend.current_key = key
        state = backend.get_state(descriptors[kind], namespace, scope="user:" if value % 2 else "")
        if kind == "value":
            state.update(value)
        elif kind == "list" or kind == "reducing":
            state.add(value)
        else:
            state.put(value % 3, value)
    return backend


def rows_of(writes) -> list[dict]:
    """The rows ``writes`` leave, worked out here: tables and entries in order of first write, a value's
    last-access time the clock at its last write (no TTL: nothing refreshes it on a read)."""
    tables: dict = {}
    now = 0
    for kind, key, namespace, value, at in writes:
        now = max(now, at)
        name = ("user:" if value % 2 else "") + {"value": "v", "list": "l", "map": "m", "reducing": "r"}[kind]
        entry = tables.setdefault(name, (kind, {}))[1].setdefault((key, encode_namespace(namespace)), [None, None])
        if kind == "value":
            entry[:] = [value, now]
        elif kind == "list":
            entry[:] = [[*(entry[0] or []), value], [*(entry[1] or []), now]]
        elif kind == "reducing":
            entry[:] = [value if entry[0] is None else entry[0] + value, now]
        else:
            entry[:] = [{**(entry[0] or {}), value % 3: value}, {**(entry[1] or {}), value % 3: now}]
    return [
        {"state": name, "kind": kind, "key": key, "namespace": ns, "value": v, "last_access": t}
        for name, (kind, entries) in tables.items()
        for (key, ns), (v, t) in entries.items()
    ]


def timer_rows_of(ops) -> list[dict]:
    """The pending timers ``ops`` leave, worked out here: event time first, each domain by time, then registration."""
    live: dict = {}
    for number, (event, key, namespace, at, delete) in enumerate(ops):
        ident = ("event_time" if event else "processing_time", key, encode_namespace(namespace), at)
        if delete:
            live.pop(ident, None)
        else:
            live.setdefault(ident, number)
    ordered = sorted(live.items(), key=lambda item: (item[0][0] != "event_time", item[0][3], item[1]))
    return [{"domain": d, "key": k, "namespace": ns, "timestamp": at} for (d, k, ns, at), _ in ordered]


def timers_of(ops) -> InternalTimerService:
    timers = InternalTimerService(ManualClock())
    for event, key, namespace, at, delete in ops:
        register, remove = (
            (timers.register_event_time_timer, timers.delete_event_time_timer)
            if event
            else (timers.register_processing_time_timer, timers.delete_processing_time_timer)
        )
        (remove if delete else register)(key, namespace, at)
    return timers


@settings(max_examples=300, deadline=None)
@given(WRITES)
def test_state_columns_read_as_the_rows_and_import_to_the_same_backend(writes):
    backend = backend_of(writes)
    columns = backend.export_columns()
    assert list(columns) == rows_of(writes) and len(columns) == len(rows_of(writes))
    for form in (columns, pickle.loads(pickle.dumps(columns)), backend.export_rows()):
        again = KeyedStateBackend(ManualClock())
        again.import_rows(form)
        assert again.export_rows() == backend.export_rows()
        assert again.export_columns() == columns


@settings(max_examples=300, deadline=None)
@given(TIMERS, st.integers(0, 7))
def test_timer_columns_fire_as_the_timers_they_were_taken_from(ops, up_to):
    timers = timers_of(ops)
    columns = timers.export_columns()
    assert list(columns) == timer_rows_of(ops)
    again = InternalTimerService(ManualClock())
    again.import_rows(pickle.loads(pickle.dumps(columns)))
    assert again.export_rows() == timers.export_rows()
    fired = [[], []]
    for service, out in ((timers, fired[0]), (again, fired[1])):  # (ties fire in registration order in both)
        service.advance_watermark(up_to, lambda t, out=out: out.append((t.timestamp, t.key, t.namespace)))
    assert fired[0] == fired[1]
    again.register_event_time_timer("late", VOID_NAMESPACE, up_to + 1)  # (registered after the import: fires after its equals)
    timers.register_event_time_timer("late", VOID_NAMESPACE, up_to + 1)
    assert again.export_rows() == timers.export_rows()


class _Tally(KeyedProcessFunction):
    def open(self, ctx):
        self.n = ctx.get_state(ValueStateDescriptor("n"))

    def process_element(self, value, ctx):
        self.n.update((self.n.value() or 0) + value)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 5)

    def on_timer(self, timestamp, ctx):
        yield (ctx.get_current_key(), timestamp, self.n.value())


def test_an_operator_restores_from_the_rows_of_an_older_snapshot_as_from_its_columns():
    op = KeyedProcessOperator(_Tally())
    for key, value, ts in (("a", 1, 1), ("b", 2, 2), ("a", 3, 2)):
        op.process_element(key, value, ts)
    snap = op.snapshot()
    assert isinstance(snap["state"], StateColumns) and isinstance(snap["timers"], TimerColumns)
    older = {**snap, "state": list(snap["state"]), "timers": list(snap["timers"])}  # (what funke wrote before columns)
    fired = []
    for form in (snap, older):
        again = KeyedProcessOperator(_Tally())
        again.restore(pickle.loads(pickle.dumps(form)))
        fired.append([r.value for r in again.advance_watermark(10)])
    assert fired[0] == fired[1] == [("a", 6, 4), ("b", 7, 2), ("a", 7, 4)]
