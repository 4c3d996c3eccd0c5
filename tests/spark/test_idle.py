"""A general-path job whose input goes quiet goes quiet too, and still fires what comes due.

Its time rows come only when something is due (``funke_beat``): the start, the watermark's
first move, a processing-time timer. Watermark moves after that wake the buckets through
Spark's event-time timers. Idle is checked the way Spark reports it (``helpers.settled``: the
query is waiting for data, no source has any and no operator asked for another batch), never
by timing; a heartbeat in every micro-batch never lets the query get there.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import Any

import pytest
import redis

import funke as fk
from funke.functions import KeyedCoProcessFunction, KeyedProcessFunction
from funke.windows import EventTimeSessionWindows
from tests.servers import ensure_redis

from .helpers import settled

pytestmark = pytest.mark.spark
T0 = dt.datetime(2024, 1, 1)
LIMIT_S = 180  # a cap against hanging, not the measure of anything


@pytest.fixture
def stream():
    client = redis.Redis.from_url(ensure_redis())
    key = f"funke-test:{uuid.uuid4().hex}"
    yield client, key
    client.delete(key)


def add(client: redis.Redis, key: str, rows: list[tuple[str, int]]) -> None:
    p = client.pipeline(transaction=False)
    for k, ms in rows:
        p.xadd(key, {"k": k, "ts": (T0 + dt.timedelta(milliseconds=ms)).isoformat() + "Z"})
    p.execute()


def until(what: str, ok: Any) -> Any:
    deadline = time.monotonic() + LIMIT_S
    while not (got := ok()):
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)
    return got


def committed(job) -> int:
    """The last micro-batch the job's query committed (its checkpoint's commit log)."""
    return job.checkpoints.last_committed(job.states[0].sink.uid)


def test_a_session_job_goes_idle_once_its_input_is_quiet_and_fires_on_the_next_watermark(env, stream):
    client, key = stream
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    src = fk.sources.redis_stream(key, schema="k string, ts timestamp", url=ensure_redis())
    sessions = env.from_source(src, watermarks=wm).key_by("k").window(EventTimeSessionWindows.with_gap(fk.seconds(1))).count()
    out = sessions.collect()
    add(client, key, [("a", 0), ("a", 500), ("b", 1_000)])
    job = env.execute()
    try:
        until("the first rows read", lambda: job.states[0].input_rows >= 3)
        until("the query idle after the first rows", lambda: settled(job))
        assert out.rows == []  # the watermark (1 s) closed no session yet
        quiet = committed(job)

        add(client, key, [("c", 10_000)])  # the watermark moves to 10 s: both sessions close
        until("the sessions fired", lambda: len(out.rows) == 2)
        assert sorted((r["k"], r["count"]) for r in out.rows) == [("a", 2), ("b", 1)]
        until("the query idle again", lambda: settled(job))
        # The arrival's batch and Spark's batch for the watermark it moved (which fires the sessions).
        assert committed(job) - quiet == 2
    finally:
        job.stop()


class RemindLater(KeyedProcessFunction):
    """A processing-time timer 300 ms after each element; it says so when it fires."""

    def process_element(self, value: dict[str, Any], ctx: Any) -> None:
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 300)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield {"k": ctx.get_current_key(), "at": timestamp}


def test_a_processing_time_timer_fires_in_a_quiet_job(env, stream):
    client, key = stream
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    src = fk.sources.redis_stream(key, schema="k string, ts timestamp", url=ensure_redis())
    fired = env.from_source(src, watermarks=wm).key_by("k").process(RemindLater(), output_schema="k string, at bigint").collect()
    add(client, key, [("a", 0), ("b", 0)])
    job = env.execute()
    try:
        until("both timers fired", lambda: len(fired.rows) == 2)
        assert sorted(r["k"] for r in fired.rows) == ["a", "b"]
        until("the query idle after the timers", lambda: settled(job))
    finally:
        job.stop()


class Pair(KeyedCoProcessFunction):
    """Each key's element of either input: an event-time timer 1 s on, and a processing-time one 300 ms on."""

    def process_element1(self, value: dict[str, Any], ctx: Any) -> None:
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1_000)
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 300)

    process_element2 = process_element1

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield {"k": ctx.get_current_key(), "domain": ctx.time_domain().name}


def test_a_connected_job_on_funkes_clock_goes_idle_and_fires_both_kinds_of_timers(env, stream):
    """Two inputs: the operator's watermark is funke's (the minimum over them), sent in its time
    rows only when it moved, a processing-time timer is due or an input's maximum changed."""
    client, key = stream
    other = f"{key}-2"
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    src = lambda k: fk.sources.redis_stream(k, schema="k string, ts timestamp", url=ensure_redis())  # noqa: E731
    a, b = env.from_source(src(key), watermarks=wm), env.from_source(src(other), watermarks=wm)
    fired = a.connect(b).key_by("k", "k").process(Pair(), output_schema="k string, domain string").collect()
    add(client, key, [("a", 0)])
    add(client, other, [("b", 0)])
    job = env.execute()
    try:
        until("both processing-time timers fired", lambda: len(fired.rows) == 2)
        until("the query idle", lambda: settled(job))
        assert sorted((r["k"], r["domain"]) for r in fired.rows) == [("a", "PROCESSING_TIME"), ("b", "PROCESSING_TIME")]
        add(client, key, [("c", 5_000)])
        add(client, other, [("c", 5_000)])  # the operator's watermark: 5 s, past a's and b's timers at 1 s
        until("the event-time timers fired", lambda: sum(r["domain"] == "EVENT_TIME" for r in fired.rows) == 2)
        until("c's processing-time timer fired", lambda: ("c", "PROCESSING_TIME") in {(r["k"], r["domain"]) for r in fired.rows})
        until("the query idle again", lambda: settled(job))
        assert sorted(r["k"] for r in fired.rows if r["domain"] == "EVENT_TIME") == ["a", "b"]  # c's is at 6 s
    finally:
        job.stop()
        client.delete(other)
