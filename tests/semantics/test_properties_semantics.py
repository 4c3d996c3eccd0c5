"""Property tests: the reference operators against brute-force definitions of the semantics."""

from __future__ import annotations

from collections import Counter, defaultdict
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.clock import ManualClock
from funke.semantics.functions import OutputTag
from funke.semantics.state import KeyedStateBackend, ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.timers import InternalTimerService
from funke.semantics.watermarks import WatermarkStrategy
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.windows import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows

from .support import results

FAST = settings(max_examples=120, deadline=None)
KEYS = st.sampled_from("abc")

# --------------------------------------------------------------------------- brute force


def brute_time_windows(events, size, slide):
    """Count per (key, start, end) over every aligned window [s, s+size) containing ts."""
    counts = Counter()
    for key, ts in events:
        first = ts - size + 1
        start = first + (-first) % slide  # the first multiple of slide that is >= first
        while start <= ts:
            counts[(key, start, start + size)] += 1
            start += slide
    return counts


def brute_sessions(events, gap):
    """Sort each key's timestamps and cut wherever the next one lies beyond the session's end."""
    by_key = defaultdict(list)
    for key, ts in events:
        by_key[key].append(ts)
    counts = Counter()
    for key, stamps in by_key.items():
        stamps.sort()
        start, end, n = stamps[0], stamps[0] + gap, 1
        for ts in stamps[1:]:
            if ts <= end:  # overlapping or touching: same session
                end, n = max(end, ts + gap), n + 1
            else:
                counts[(key, start, end)] = n
                start, end, n = ts, ts + gap, 1
        counts[(key, start, end)] = n
    return counts


def brute(kind, param, events):
    if kind == "tumbling":
        return brute_time_windows(events, param[0], param[0])
    if kind == "sliding":
        return brute_time_windows(events, *param)
    return brute_sessions(events, param[0])


def make_spec(kind, param, **kw):
    if kind == "tumbling":
        assigner = TumblingEventTimeWindows.of(param[0])
    elif kind == "sliding":
        assigner = SlidingEventTimeWindows.of(*param)
    else:
        assigner = EventTimeSessionWindows.with_gap(param[0])
    return WindowSpec.of(assigner, **kw)


windows_kinds = st.one_of(
    st.tuples(st.just("tumbling"), st.tuples(st.integers(1, 30))),
    st.tuples(st.just("sliding"), st.integers(1, 12).flatmap(lambda s: st.tuples(st.integers(s, 40), st.just(s)))),
    st.tuples(st.just("session"), st.tuples(st.integers(1, 30))),
)
events_strategy = st.lists(st.tuples(KEYS, st.integers(-60, 300)), max_size=40)


# --------------------------------------------------------------------------- properties


@FAST
@given(windows_kinds, events_strategy)
def test_default_trigger_with_final_watermark_matches_brute_force(kind_param, events):
    kind, param = kind_param
    op = WindowOperator(make_spec(kind, param), WindowAggregate.count())
    for key, ts in events:
        assert op.process_element(key, None, ts) == []
    out = results(op.advance_watermark(MAX_WATERMARK))
    assert Counter({(k, s, e): n for k, s, e, n in out}) == brute(kind, param, events)
    assert len(out) == len({(k, s, e) for k, s, e, _ in out})  # each window fires exactly once
    assert op.snapshot() == {"state": [], "timers": [], "watermark": MAX_WATERMARK, "late_records_dropped": 0}


@st.composite
def bounded_stream(draw):
    """Timestamps never older than ``max seen - bound`` (so nothing is late) and where to put watermarks.

    Timestamps are even and session gaps odd, so a session can never end exactly
    where a later element starts: that case (an element touching an already fired
    session) legitimately depends on watermark timing in Flink and has its own test.
    """
    bound = draw(st.integers(0, 20))
    deltas = draw(st.lists(st.integers(-bound, 30), max_size=40))
    keys = draw(st.lists(KEYS, min_size=len(deltas), max_size=len(deltas)))
    stamps, high = [], 0
    for delta in deltas:
        ts = high + delta - (high + delta) % 2  # even, and at most one below high - bound ...
        if ts < high - bound:
            ts += 2  # ... which this undoes: never older than the bound allows
        stamps.append(ts)
        high = max(high, ts)
    cuts = draw(st.sets(st.integers(0, max(len(stamps) - 1, 0))))
    return bound, list(zip(keys, stamps, strict=True)), cuts


odd_gap_kinds = st.one_of(
    st.tuples(st.just("tumbling"), st.tuples(st.integers(1, 30))),
    st.tuples(st.just("sliding"), st.integers(1, 12).flatmap(lambda s: st.tuples(st.integers(s, 40), st.just(s)))),
    st.tuples(st.just("session"), st.tuples(st.integers(0, 14).map(lambda g: 2 * g + 1))),
)


@FAST
@given(odd_gap_kinds, bounded_stream())
def test_results_do_not_depend_on_where_watermarks_fall(kind_param, stream):
    kind, param = kind_param
    bound, events, cuts = stream
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(bound)
    op = WindowOperator(make_spec(kind, param), WindowAggregate.count())
    out, high = [], None
    for i, (key, ts) in enumerate(events):
        out += op.process_element(key, None, ts)
        high = ts if high is None else max(high, ts)
        if i in cuts:
            out += op.advance_watermark(strategy.current_watermark(high))
    out += op.advance_watermark(MAX_WATERMARK)
    assert op.num_late_records_dropped == 0
    assert Counter({(k, s, e): n for k, s, e, n in results(out)}) == brute(kind, param, events)


@st.composite
def out_of_order_script(draw):
    """Elements with arbitrary disorder and monotone watermarks interleaved."""
    element = st.tuples(st.just("e"), KEYS, st.integers(0, 200))
    watermark_step = st.tuples(st.just("w"), st.integers(0, 40))
    steps = draw(st.lists(st.one_of(element, watermark_step), max_size=50))
    script, wm = [], 0
    for step in steps:
        if step[0] == "w":
            wm += step[1]
            script.append(("w", wm))
        else:
            script.append(step)
    return script


@FAST
@given(st.integers(1, 30), st.integers(0, 40), out_of_order_script())
def test_allowed_lateness_accounts_for_every_element(size, lateness, script):
    late = OutputTag("late")
    op = WindowOperator(
        WindowSpec.of(TumblingEventTimeWindows.of(size), allowed_lateness=lateness, late_data_tag=late),
        WindowAggregate.count(),
    )
    out, wm = [], -(2**63)
    accepted, firings, expected_late, on_time = Counter(), Counter(), [], set()
    for step in script:
        if step[0] == "w":
            wm = max(wm, step[1])
            out += op.advance_watermark(step[1])
            continue
        _, key, ts = step
        start = ts - ts % size
        window = (key, start, start + size)
        if start + size - 1 + lateness <= wm:
            expected_late.append((key, ts))
        else:
            accepted[window] += 1
            if start + size - 1 <= wm:
                firings[window] += 1  # a late-but-allowed element fires the window at once
            else:
                on_time.add(window)  # the watermark will fire it once
        out += op.process_element(key, key, ts)
    out += op.advance_watermark(MAX_WATERMARK)

    assert [(r.value, r.timestamp) for r in out if r.tag == late] == expected_late
    last_count, fired = {}, Counter()
    for key, start, end, n in results(out):
        last_count[(key, start, end)] = n
        fired[(key, start, end)] += 1
    assert last_count == dict(accepted)
    assert fired == Counter({w: firings[w] + (w in on_time) for w in accepted})


@FAST
@given(st.lists(st.tuples(KEYS, st.integers(-5, 20)), max_size=40), st.integers(1, 5), st.integers(1, 5))
def test_count_windows_match_their_definition(events, size, slide):
    tumbling = WindowOperator(WindowSpec.count_window(size), WindowAggregate.sum())
    sliding = WindowOperator(WindowSpec.count_window(size, slide), WindowAggregate.sum())
    seen = defaultdict(list)
    expected_tumbling, expected_sliding, got_tumbling, got_sliding = [], [], [], []
    for key, value in events:
        seen[key].append(value)
        n = len(seen[key])
        if n % size == 0:
            expected_tumbling.append((key, sum(seen[key][-size:])))
        if n % slide == 0:
            expected_sliding.append((key, sum(seen[key][-size:])))
        got_tumbling += [(k, v) for k, _, _, v in results(tumbling.process_element(key, value))]
        got_sliding += [(k, v) for k, _, _, v in results(sliding.process_element(key, value))]
    assert got_tumbling == expected_tumbling
    assert got_sliding == expected_sliding


@FAST
@given(
    st.lists(st.tuples(st.booleans(), KEYS, st.integers(0, 30)), max_size=60),
    st.integers(-5, 35),
)
def test_timers_fire_once_in_timestamp_order(ops, watermark):
    timers = InternalTimerService(ManualClock())
    live = set()
    for register, key, ts in ops:
        if register:
            timers.register_event_time_timer(key, "ns", ts)
            live.add((key, ts))
        else:
            timers.delete_event_time_timer(key, "ns", ts)
            live.discard((key, ts))
    fired = []
    timers.advance_watermark(watermark, lambda t: fired.append((t.key, t.timestamp)))
    assert sorted(fired) == sorted(t for t in live if t[1] <= watermark)
    assert [ts for _, ts in fired] == sorted(ts for _, ts in fired)
    assert sorted((k, ts) for ts, k, _ in timers.event_time_timers()) == sorted(t for t in live if t[1] > watermark)


class PerTimerReference:
    """Timers one at a time, by definition: each firing takes the live timer with the smallest
    (timestamp, order of adding); adding a live timer again is a no-op, removing one that is not live too."""

    def __init__(self) -> None:
        self.live: dict[tuple[str, int], int] = {}
        self.added = 0

    def register_event_time_timer(self, key: str, namespace: str, ts: int) -> None:
        if (key, ts) not in self.live:
            self.added += 1
            self.live[(key, ts)] = self.added

    def delete_event_time_timer(self, key: str, namespace: str, ts: int) -> None:
        self.live.pop((key, ts), None)

    def advance_watermark(self, watermark: int, on_timer) -> None:
        while due := [(ts, n, key) for (key, ts), n in self.live.items() if ts <= watermark]:
            ts, _, key = min(due)
            del self.live[(key, ts)]
            on_timer(SimpleNamespace(key=key, timestamp=ts))

    def event_time_timers(self) -> list[tuple[int, str, str]]:
        return [(ts, key, "ns") for (key, ts), _ in sorted(self.live.items(), key=lambda item: (item[0][1], item[1]))]


TIMER = st.tuples(st.sampled_from("abcdefghij"), st.integers(0, 40))


@FAST
@given(
    st.lists(st.tuples(st.booleans() | st.just(True), TIMER), min_size=60, max_size=300),
    st.lists(st.lists(st.tuples(st.booleans(), TIMER), max_size=3), min_size=1, max_size=20),
    st.lists(st.integers(-5, 45), min_size=1, max_size=4),
)
def test_timers_fire_in_bulk_as_one_at_a_time(ops, on_fire, watermarks):
    """The due timers are taken off the heap in bulk (a pass over it once more than a few are due); they
    fire as the per-timer reference fires them, with timers added and removed while firing (the n-th
    firing adds and removes what ``on_fire[n]`` lists, cycling), over several watermarks."""

    def run(timers) -> tuple[list[tuple[str, int]], list[tuple[int, str, str]]]:
        fired: list[tuple[str, int]] = []

        def on_timer(t) -> None:
            fired.append((t.key, t.timestamp))
            if len(fired) <= 400:  # (then no more: a timer that adds itself again would fire for ever)
                for register, (key, ts) in on_fire[len(fired) % len(on_fire)]:
                    (timers.register_event_time_timer if register else timers.delete_event_time_timer)(key, "ns", ts)

        for register, (key, ts) in ops:
            (timers.register_event_time_timer if register else timers.delete_event_time_timer)(key, "ns", ts)
        for watermark in watermarks:
            timers.advance_watermark(watermark, on_timer)
        return fired, timers.event_time_timers()

    reference = PerTimerReference()
    got, want = run(InternalTimerService(ManualClock())), run(reference)
    assert got == want


state_ops = st.lists(
    st.tuples(KEYS, st.sampled_from(["set", "clear", "add", "put", "remove"]), st.integers(0, 5)), max_size=40
)


@FAST
@given(state_ops)
def test_state_export_import_round_trip(ops):
    backend = KeyedStateBackend(ManualClock())
    value_d, list_d, map_d = ValueStateDescriptor("v"), ListStateDescriptor("l"), MapStateDescriptor("m")
    for key, op, n in ops:
        backend.current_key = key
        if op == "set":
            backend.get_state(value_d).update(n)
        elif op == "clear":
            backend.get_state(value_d).clear()
        elif op == "add":
            backend.get_state(list_d).add(n)
        elif op == "put":
            backend.get_state(map_d).put(n, str(n))
        else:
            backend.get_state(map_d).remove(n)
    restored = KeyedStateBackend(ManualClock())
    restored.import_rows(backend.export_rows())
    assert restored.export_rows() == backend.export_rows()
    for key in "abc":
        for b in (backend, restored):
            b.current_key = key
        read = [
            (b.get_state(value_d).value(), b.get_state(list_d).get(), b.get_state(map_d).items())
            for b in (backend, restored)
        ]
        assert read[0] == read[1]


@FAST
@given(out_of_order_script(), st.integers(0, 50), st.integers(1, 20), st.integers(0, 30))
def test_snapshot_restore_at_any_point_changes_nothing(script, cut, gap, lateness):
    spec = WindowSpec.of(
        EventTimeSessionWindows.with_gap(gap), allowed_lateness=lateness, late_data_tag=OutputTag("late")
    )

    def run(op, steps):
        out = []
        for step in steps:
            out += op.advance_watermark(step[1]) if step[0] == "w" else op.process_element(step[1], step[2], step[2])
        return out

    whole = run(WindowOperator(spec, WindowAggregate.sum()), [*script, ("w", MAX_WATERMARK)])
    first = WindowOperator(spec, WindowAggregate.sum())
    head = run(first, script[:cut])
    second = WindowOperator(spec, WindowAggregate.sum())
    second.restore(first.snapshot())
    assert head + run(second, [*script[cut:], ("w", MAX_WATERMARK)]) == whole
