"""CEP across a savepoint (issue 17): a pattern job stopped with a savepoint while partial matches are
open, then resumed from it, finds what an uninterrupted run finds, and the automaton per key; the
savepoint shows each key's open partial matches and buffered elements in the open format."""

from __future__ import annotations

import datetime as dt
import random
import time
from collections import Counter
from typing import Any

import pytest

import funke as fk
from funke.cep import CEP, AfterMatchSkipStrategy, Pattern
from funke.functions import OutputTag
from funke.savepoints import read
from funke.savepoints.general import decode_key, decode_value
from funke.semantics.cep import NFA
from funke.semantics.cep_operator import ELEMENTS, PARTIAL_MATCHES, export_nfa_state, next_timeout
from funke.semantics.time import MAX_WATERMARK

from . import test_cep
from .test_cep import is_a, is_b, is_b_or_c, is_c

pytestmark = pytest.mark.spark
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

# 1,200 events over 3 keys, 20 ms of event time apart, out of order by up to BOUND_MS (so a key's
# events arrive out of order, and the newest wait in the operator's buffer). At most PER_BATCH a
# micro-batch, paced at RATE: the job is stopped (once its watermark passed 1 s) a few batches
# before its end.
EVENTS, KEYS, MS_PER_EVENT, BOUND_MS, RATE, PER_BATCH = 1_200, 3, 20, 150, 300, 300
_rnd = random.Random(17)
KINDS = [_rnd.choice("aabbbcd") for _ in range(97)]
JITTER = [_rnd.randrange(BOUND_MS) for _ in range(89)]


#: A looping state (one_or_more) whose partial matches time out (within), and a bounded loop
#: (times) with a skip strategy, which holds completed matches back: both keep events in the buffer.
PATTERNS = {
    "loop": Pattern.begin("a").where(is_a).followed_by("b").where(is_b).one_or_more().followed_by("c").where(is_c)
    .within(fk.milliseconds(400)),
    "times": Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event()).where(is_a)
    .followed_by_any("bc").where(is_b_or_c).times(2, 3).within(fk.milliseconds(600)),
}  # fmt: skip
MATCH, TIMED_OUT = test_cep.MATCH, test_cep.TIMED_OUT


def event(i: int) -> dict[str, Any]:
    """Row ``i`` of the generator below, computed in Python."""
    return {"k": f"k{i % KEYS}", "kind": KINDS[i % len(KINDS)], "n": i, "t": i * MS_PER_EVENT - JITTER[i % len(JITTER)]}


def labels(match: dict) -> str:
    return test_cep.labels(match, "n")


def job(spark, tmp_path, *, paced: bool = True) -> tuple[fk.StreamEnvironment, dict[str, Any]]:
    env = fk.StreamEnvironment(app="cep-savepoint", spark=spark, checkpoint_dir=str(tmp_path / f"ck-{time.monotonic_ns()}"))
    kinds = ", ".join(f"'{k}'" for k in KINDS)
    jitter = ", ".join(str(j) for j in JITTER)
    source = fk.sources.generator(
        {
            "k": f"concat('k', cast(i % {KEYS} as string))",
            "kind": f"element_at(array({kinds}), cast(i % {len(KINDS)} as int) + 1)",
            "n": "i",
            "t": f"i * {MS_PER_EVENT} - element_at(array({jitter}), cast(i % {len(JITTER)} as int) + 1)",
        },
        schema="k string, kind string, n bigint, t bigint",
        events=EVENTS,
        rows_per_second=RATE if paced else None,
        rows_per_batch=PER_BATCH,
    )
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(BOUND_MS)).with_timestamp_assigner("t", unit="ms")
    keyed = env.from_source(source, wm, uid="events").key_by("k")
    sinks = {}
    for name, pattern in PATTERNS.items():
        tag = OutputTag(f"timed-out-{name}", TIMED_OUT)
        found = CEP.pattern(keyed, pattern).process(test_cep.Found(name, tag, "n"), output_schema=MATCH, uid=f"cep-{name}")
        sinks[f"matches-{name}"] = found.sink_to(fk.sinks.collect(), uid=f"matches-{name}")
        sinks[f"timed-out-{name}"] = found.get_side_output(tag).sink_to(fk.sinks.collect(), uid=f"timed-out-{name}")
    return env, sinks


def found(sinks: dict[str, Any], upto: dict[str, int] | None = None) -> tuple[Counter, Counter]:
    """(matches, timed-out partial matches) written, from each sink's batches up to ``upto[query]``
    (a pattern's side output is written by the query of its matches' sink)."""
    matches: Counter = Counter()
    timed_out: Counter = Counter()
    for uid, sink in sinks.items():
        query = uid.replace("timed-out-", "matches-")
        for batch, rows in sink.batches:
            if upto is None or batch <= upto[query]:
                for r in rows:
                    if "at" in r:
                        timed_out[(r["k"], r["pattern"], r["match"], r["at"])] += 1
                    else:
                        matches[(r["k"], r["pattern"], r["match"])] += 1
    return matches, timed_out


def assert_same(got: Counter, want: Counter, what: str) -> None:
    missing, extra = want - got, got - want
    assert not missing and not extra, (
        f"{what}: {sum(missing.values())} missing, e.g. {list(missing)[:3]}; {sum(extra.values())} extra, e.g. {list(extra)[:3]}"
    )


def by_key(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each key's events in timestamp order (the order the operator runs them in; a key's timestamps are unique)."""
    keys: dict[str, list[dict[str, Any]]] = {}
    for e in sorted(events, key=lambda e: e["t"]):
        keys.setdefault(e["k"], []).append(e)
    return keys


def reference() -> tuple[Counter, Counter]:
    """Per key and pattern, the key's events in timestamp order through a fresh automaton, then time to +infinity."""
    matches: Counter = Counter()
    timed_out: Counter = Counter()
    keys = by_key([event(i) for i in range(EVENTS)])
    for name, pattern in PATTERNS.items():
        nfa = NFA.compile(pattern)
        for key, mine in keys.items():
            state = nfa.initial_state()
            for out in [nfa.process(state, e, e["t"]) for e in mine] + [nfa.advance_time(state, MAX_WATERMARK)]:
                matches.update((key, name, labels(m)) for m in out.matches)
                timed_out.update((key, name, labels(m), at) for m, at in out.timed_out)
    return matches, timed_out


def in_flight(plain: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """An automaton state in plain data (``export_nfa_state``) as its runs that hold events: the
    automaton state each waits in and the events it took (``name:n``), partial and completed alike."""
    events = {node: (name, e, prev) for node, name, _ts, _seq, e, prev in plain["events"]}
    runs = []
    for state_id, node, _start, _start_id in plain["partial"] + plain["completed"]:
        path = []
        while node is not None:
            name, e, node = events[node]
            path.append(f"{name}:{e['n']}")
        if path:
            runs.append((state_id, tuple(reversed(path))))
    return sorted(runs)


def expected_at(pattern: Any, events: list[dict[str, Any]], watermark: int) -> tuple[list[Any], dict[int, list[int]], set[int]]:
    """One key's operator state after ``events`` were read and the watermark reached ``watermark``: its
    runs in flight (the events up to the watermark, through the automaton), its buffer (the rest), and
    the event-time timers it needs (one per buffered timestamp, and the earliest time-out)."""
    nfa = NFA.compile(pattern)
    state = nfa.initial_state()
    for e in events:
        if e["t"] <= watermark:
            nfa.process(state, e, e["t"])
    nfa.advance_time(state, watermark)
    buffered = {e["t"]: [e["n"]] for e in events if e["t"] > watermark}
    timeout = next_timeout(nfa, state)
    return in_flight(export_nfa_state(nfa, state)), buffered, set(buffered) | ({timeout} if timeout is not None else set())


def wait_for_watermark(handle: Any, ms: int, timeout: float = 180) -> None:
    """Until every query has committed a micro-batch whose watermark (Spark's) is past ``ms``: its
    operators then ran the events up to about ``ms`` through their automata."""
    deadline = time.monotonic() + timeout
    since_epoch = dt.timedelta(milliseconds=ms)

    def past(st: Any) -> bool:
        return st.watermark is not None and dt.datetime.fromisoformat(st.watermark) - EPOCH > since_epoch

    while not all(past(st) for st in handle.states if not st.plan.lazy):
        assert not handle.done, "the job ended before the savepoint: raise EVENTS or lower RATE"
        assert time.monotonic() < deadline, f"the watermark did not pass {ms} ms in time"
        handle.wait(timeout=0.2)


def test_stop_with_a_savepoint_while_partial_matches_are_open_then_resume_gives_the_uninterrupted_matches(spark, tmp_path):
    want = reference()
    # the input exercises both patterns, partial matches time out, and a key's timestamps are unique
    # (so timestamp order is the order the operator runs a key's events in, whatever their arrival)
    assert {p for _, p, _ in want[0]} == set(PATTERNS) and {p for _, p, _, _ in want[1]} == set(PATTERNS)
    assert all(len({e["t"] for e in mine}) == len(mine) for mine in by_key([event(i) for i in range(EVENTS)]).values())

    env, first = job(spark, tmp_path)
    handle = env.execute(name="cep-pause")
    wait_for_watermark(handle, 1_000)
    sp = read(handle.stop(savepoint=str(tmp_path / "sps")).path)

    # the savepoint: each CEP operator's state per key, in the open format, is the automaton's at the cut
    read_upto, open_events = {}, {}
    for name, pattern in PATTERNS.items():
        query = sp.manifest["queries"][f"matches-{name}"]
        read_upto[name] = query["source_offsets"][0]["i"]
        assert 0 < read_upto[name] < EVENTS, "the job was not stopped mid-input"
        (op,) = [op for op in query["operators"] if op["uid"] == f"cep-{name}"]
        assert op["format"] == "funke-general-v1"
        state, timers, buckets = (sp.table(op["tables"][role]) for role in ("state", "timers", "buckets"))
        (watermark,) = set(buckets["watermark"])  # the query's one watermark, in every bucket
        keys = by_key([event(i) for i in range(read_upto[name])])
        assert {decode_key(k) for k in state["key"]} <= set(keys)
        for key, mine in keys.items():
            rows, key_timers = state[state["key"] == f'"{key}"'], timers[timers["key"] == f'"{key}"']
            runs, buffered, needed = expected_at(pattern, mine, int(watermark))
            values = {s: decode_value(v) for s, v in zip(rows["state"], rows["value"], strict=True)}
            assert set(values) <= {PARTIAL_MATCHES, ELEMENTS}
            got_runs = in_flight(values[PARTIAL_MATCHES]) if PARTIAL_MATCHES in values else []
            assert got_runs == runs, (name, key)
            got_buffer = {int(t): [e["n"] for e in es] for t, es in values.get(ELEMENTS, {}).items()}
            assert got_buffer == buffered, (name, key)
            # every timer the key needs is pending, and none is overdue (a stale time-out may wait on)
            assert set(key_timers["domain"]) <= {"event_time"}
            assert needed <= set(key_timers["timestamp"]) and (key_timers["timestamp"] > watermark).all(), (name, key)
            open_events.setdefault(name, set()).update(int(label.split(":")[1]) for _, path in runs for label in path)
        assert open_events.get(name), f"{name}: no partial match was open at the savepoint"

    env2, second = job(spark, tmp_path)
    resumed = env2.execute(name="cep-pause", from_savepoint=str(sp.path)).wait(300)
    assert resumed.done and resumed.metrics()["resumed"] is True
    before, after = found(first, upto=sp.batches), found(second)
    assert_same(before[0] + after[0], want[0], "matches")
    assert_same(before[1] + after[1], want[1], "timed-out partial matches")
    # the loop's partial matches open at the savepoint (no skip strategy prunes them) completed, or timed
    # out, after the resume
    taken_after = {int(label.split(":")[1]) for _, p, m, *_ in [*after[0], *after[1]] if p == "loop" for label in m.split()}
    assert open_events["loop"] & taken_after

    # and an uninterrupted run (bounded, unpaced) of the same job
    env3, whole = job(spark, tmp_path, paced=False)
    assert env3.execute(bounded=True).wait(300).done
    uninterrupted = found(whole)
    assert_same(uninterrupted[0], want[0], "matches (uninterrupted)")
    assert_same(uninterrupted[1], want[1], "timed-out partial matches (uninterrupted)")
