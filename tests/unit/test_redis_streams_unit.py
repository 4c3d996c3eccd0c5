"""The Redis Streams source without Spark: IDs and offsets, replies as Arrow, reading, trimming, the producer.

Tests that read or write entries talk to the real Redis on 127.0.0.1:6379 (started when down).
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from itertools import pairwise

import pytest
import redis

from funke.bench.reference import WINDOW_MS, reference_counts
from funke.bench.ysb_produce import produce, ysb_events
from funke.connectors import redis_streams as rs
from funke.errors import EnvironmentSetupError, PlanError, SchemaError, SourceError
from tests.servers import ensure_redis

SCHEMA = "seq bigint, name string"


@pytest.fixture
def redis_url():
    return ensure_redis()


@pytest.fixture
def client(redis_url):
    with redis.Redis.from_url(redis_url, decode_responses=False) as c:
        yield c


@pytest.fixture
def key(client):
    name = f"funke-test:{uuid.uuid4().hex}"
    yield name
    client.delete(name)


def add(client: redis.Redis, key: str, lo: int, hi: int) -> None:
    p = client.pipeline(transaction=False)
    for i in range(lo, hi):
        p.xadd(key, {"seq": i, "name": f"n{i}"})
    p.execute()


def config(key: str | tuple[str, ...], url: str, **kw) -> rs.ReaderConfig:
    keys = (key,) if isinstance(key, str) else key
    spec = rs.redis_stream(keys, schema=SCHEMA, url=url, **kw)
    return rs.ReaderConfig.of(spec, parallelism=2, eos_column="__funke_eos" if spec.events is not None else None)


def read(cfg: rs.ReaderConfig, start: dict, end: dict) -> list[dict]:
    return [r for p in rs.plan_partitions(cfg, start, end) for b in rs.read_partition(cfg, p) for r in b.to_pylist()]


# -- IDs, ranges, shares, the description -------------------------------------------------------


def test_entry_ids_order_and_successor():
    assert rs.parse_id("1700000000000-3") == (1_700_000_000_000, 3)
    assert rs.next_id("5-0") == "5-1"
    assert rs.next_id(f"5-{rs.MAX_SEQ}") == "6-0"


def test_split_range_covers_exactly_the_same_ids():
    rng = random.Random(7)
    for _ in range(200):
        ids = sorted({(rng.randrange(0, 50), rng.randrange(0, 4)) for _ in range(40)})
        a, b = sorted(rng.sample(range(len(ids)), 2))
        after, upto = (rs.format_id(*ids[a]), rs.format_id(*ids[b]))
        parts = rs.split_range(after, upto, rng.randrange(1, 5))
        assert parts[0][0] == after and parts[-1][1] == upto
        assert all(x[1] == y[0] for x, y in pairwise(parts))
        inside = [i for i in ids if any(rs.parse_id(lo) < i <= rs.parse_id(hi) for lo, hi in parts)]
        assert inside == ids[a + 1 : b + 1]
    assert rs.split_range("5-0", "5-0", 4) == []


def test_row_limit_is_shared_over_streams():
    assert rs.shares(100, 3) == [34, 33, 33]
    assert sum(rs.shares(7, 7)) == 7


def test_description_and_refusals():
    src = rs.redis_stream(["a", "b"], schema=SCHEMA, url="redis://u:p%40ss@h:7000/2", events=5, trim=True)
    assert src.address == rs.RedisAddress("h", 7000, 2, "u", "p@ss")
    assert src.describe() == "redis_stream(a, b at h:7000/2, 5 events per stream, trims committed entries)"
    with pytest.raises(SchemaError, match="field 'xs' is declared array<int>; Redis field values are strings"):
        rs.redis_stream("a", schema="xs array<int>")
    with pytest.raises(PlanError, match=r"max_rows_per_batch=1\) must be at least the number of streams \(2\)"):
        rs.redis_stream(["a", "b"], schema=SCHEMA, max_rows_per_batch=1)
    with pytest.raises(PlanError, match="stream keys repeat"):
        rs.redis_stream(["a", "a"], schema=SCHEMA)
    with pytest.raises(PlanError, match="write redis://host:port/db"):
        rs.redis_stream("a", schema=SCHEMA, url="rediss://h:1")


def test_unreachable_redis_is_a_clear_source_error():
    with pytest.raises(SourceError, match=r"cannot reach Redis at 127\.0\.0\.1:1 \(Connection refused\)"):
        rs.redis_stream("a", schema=SCHEMA, url="redis://127.0.0.1:1/0").check()


@pytest.mark.parametrize("module", ["redis", "hiredis"])
def test_without_redis_py_the_source_names_the_extra_to_install(monkeypatch, module):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else find_spec(name, *a))
    with pytest.raises(EnvironmentSetupError, match=rf"needs the '{module}' package: pip install 'funke\[redis\]'"):
        rs.redis_stream("a", schema=SCHEMA)


# -- replies as Arrow --------------------------------------------------------------------------------


def as_rows(e: rs.Entries) -> list[tuple]:
    names = sorted(e.fields)
    return [(e.ids[i], *(e.fields[n][i].as_py() for n in names)) for i in range(e.count)]


def test_uniform_replies_take_the_column_slicing_path_and_agree_with_the_per_entry_one():
    reply = [(b"%d-0" % i, [b"seq", b"%d" % i, b"name", b"x" * (i % 13)]) for i in range(1, 300)]
    fast = rs.Entries.of(reply)
    assert fast.count == 299 and fast.last_id == "299-0"
    # The same entries with one field moved: no longer uniform, read entry by entry.
    general = rs.Entries.of(reply[:-1] + [(b"299-0", [b"name", b"x" * (299 % 13), b"seq", b"299"])])
    assert as_rows(fast) == as_rows(general)
    assert rs.Entries.of([]).count == 0


@pytest.mark.parametrize(
    "reply, rows",
    [
        ([(b"1-0", [b"a", b"1"]), (b"2-0", [b"b", b"2"])], [(b"1-0", b"1", None), (b"2-0", None, b"2")]),  # fields differ
        ([(b"1-0", [b"a", b"1", b"a", b"2"])], [(b"1-0", b"2")]),  # one field twice: the last one
        # equal lengths, the names where the first entry has them, yet not the same fields
        ([(b"1-0", [b"a", b"x", b"b", b"y", b"a", b"z"]), (b"2-0", [b"b", b"w"])], [(b"1-0", b"z", b"y"), (b"2-0", None, b"w")]),
        # uniform, with values that are also field names
        ([(b"1-0", [b"a", b"1", b"b", b"2"]), (b"2-0", [b"a", b"b", b"b", b"a"])], [(b"1-0", b"1", b"2"), (b"2-0", b"b", b"a")]),
    ],
)
def test_irregular_replies_read_entry_by_entry_and_values_never_pass_for_names(reply, rows):
    assert as_rows(rs.Entries.of(reply)) == rows


def test_a_value_that_does_not_convert_names_stream_entry_field_and_value_and_mixed_timestamps_convert():
    e = rs.Entries.of([(b"1-0", [b"seq", b"1"]), (b"2-5", [b"seq", b"x2"])])
    schema = rs.Schema.of(SCHEMA)
    with pytest.raises(SourceError) as err:
        e.to_batch("clicks", schema, rs.arrow_schema(schema, None), None)
    assert str(err.value) == (
        "Redis stream 'clicks' entry 2-5: field 'seq' = 'x2' is not a valid bigint; "
        "fix the entry or declare 'seq' as string in the source schema"
    )
    # with dead-letter columns the entry is a dead letter instead: raw entry, reason, position
    dead = ("raw", "why", "at")
    batch = e.to_batch("clicks", schema, rs.arrow_schema(schema, None, dead), None, dead)
    assert batch.select(["seq", *dead]).to_pylist() == [
        {"seq": 1, "raw": None, "why": None, "at": None},
        {"seq": None, "raw": '{"seq": "x2"}', "why": "redis_stream 'clicks': field 'seq' = 'x2' is not a valid bigint", "at": "clicks@2-5"},
    ]
    both = [(b"1-0", [b"t", b"2024-01-01T01:00:00+01:00"]), (b"2-0", [b"t", b"2024-01-01 00:00:01"])]
    mixed = rs.Entries.of(both)
    ts = rs.Schema.of("t timestamp")
    assert [str(v) for v in mixed.to_batch("s", ts, rs.arrow_schema(ts, None), None).column(0).to_pylist()] == [
        "2024-01-01 00:00:00+00:00",
        "2024-01-01 00:00:01+00:00",
    ]  # with and without a zone offset (then UTC) in one reply


# -- offsets and reading against Redis -------------------------------------------------------------


def test_batches_respect_the_limit_and_replay_the_same_rows(client, key, redis_url):
    add(client, key, 0, 250)
    cfg = config(key, redis_url)
    start = rs.initial_offset(cfg)
    first = rs.latest_offset(cfg, start, 100)  # more waiting than the limit: found by scanning
    assert first["streams"][key]["pos"] == 100
    rows = read(cfg, start, first)
    assert [r["seq"] for r in rows] == list(range(100))
    add(client, key, 250, 300)  # later entries change nothing about a planned batch
    assert read(cfg, start, first) == rows
    rest = rs.latest_offset(cfg, first, 1_000)  # all that waits: the stream's last ID, no scan
    assert rest["streams"][key] == {"id": client.xinfo_stream(key)["last-generated-id"].decode(), "pos": 300}
    assert [r["seq"] for r in read(cfg, first, rest)] == list(range(100, 300))
    assert rs.latest_offset(cfg, rest, 1_000) == rest


def test_several_streams_share_the_limit_and_end_together(client, redis_url):
    keys = (f"funke-test:{uuid.uuid4().hex}", f"funke-test:{uuid.uuid4().hex}")
    try:
        add(client, keys[0], 0, 30)
        cfg = config(keys, redis_url, events=30)
        start = rs.initial_offset(cfg)  # the second stream does not exist yet
        a = rs.latest_offset(cfg, start, 40)
        assert [a["streams"][k]["pos"] for k in keys] == [20, 0] and not a["ended"]
        add(client, keys[1], 0, 35)
        b = rs.latest_offset(cfg, a, 40)
        assert [b["streams"][k]["pos"] for k in keys] == [30, 20] and not b["ended"]
        c = rs.latest_offset(cfg, b, 40)
        assert [c["streams"][k]["pos"] for k in keys] == [30, 30] and c["ended"]
        assert rs.plan_partitions(cfg, b, c)[-1] == ("end",)
        rows = read(cfg, start, a) + read(cfg, a, b) + read(cfg, b, c)
        assert sum(r["__funke_eos"] for r in rows) == 1 and rows[-1]["__funke_eos"]
        assert Counter(r["seq"] for r in rows if not r["__funke_eos"]) == Counter(list(range(30)) * 2)
        assert rs.latest_offset(cfg, c, 40) == c
        assert rs.bounded_ends(cfg) == {k: c["streams"][k]["id"] for k in keys}
    finally:
        client.delete(*keys)


def test_trim_removes_only_what_was_committed_and_positions_survive_it(client, key, redis_url):
    add(client, key, 0, 50)
    cfg = config(key, redis_url, trim=True, events=40)
    start = rs.initial_offset(cfg)
    end = rs.latest_offset(cfg, start, 20)
    rs.trim(cfg, end)
    assert client.xlen(key) == 30
    assert rs.initial_offset(cfg)["streams"][key] == {"id": "0-0", "pos": 20}  # a fresh query starts after the trimmed
    with pytest.raises(SourceError, match="its first 20 entries were trimmed"):
        rs.bounded_ends(cfg)
    client.delete(key)
    add(client, key, 0, 5)
    with pytest.raises(SourceError, match="it was deleted or recreated; start the job from a fresh checkpoint"):
        rs.latest_offset(cfg, end, 20)


def test_bounded_run_needs_all_its_entries(client, key, redis_url):
    add(client, key, 0, 3)
    with pytest.raises(SourceError, match="has had 3 entries, but a bounded run with events=5 reads exactly the first 5"):
        rs.bounded_ends(config(key, redis_url, events=5))


def test_a_key_that_is_not_a_stream_is_refused_naming_the_server(client, key, redis_url):
    client.set(key, "not a stream")
    cfg = config(key, redis_url)
    with pytest.raises(SourceError, match=r"Redis at 127\.0\.0\.1:6379 refused a command: WRONGTYPE"):
        rs.initial_offset(cfg)
    with pytest.raises(SourceError, match=rf"refused XADD to '{key}' at event 0: WRONGTYPE"):
        produce(redis_url, key, events=10, rate=None)


def test_irregular_entries_read_through_the_client(client, key, redis_url):
    client.xadd(key, {"seq": "1", "name": "a\r\nb"})
    client.xadd(key, {"seq": "2"})
    cfg = config(key, redis_url)
    rows = read(cfg, rs.initial_offset(cfg), rs.latest_offset(cfg, rs.initial_offset(cfg), None))
    assert rows == [{"seq": 1, "name": "a\r\nb"}, {"seq": 2, "name": None}]


# -- the producer -----------------------------------------------------------------------------------


def test_producer_events_give_the_reference_window_counts():
    n = 20_000
    ev = ysb_events(0, n)
    views = [i for i in range(n) if ev["event_type"][i] == b"view"]
    campaign = {f"ad-{a:04d}": f"campaign-{a // 10:03d}" for a in range(1000)}
    got: Counter = Counter()
    for i in views:
        t = int(ev["event_time"][i])
        start = t - t % WINDOW_MS
        got[(campaign[ev["ad_id"][i].decode()], start, start + WINDOW_MS)] += 1
    assert got == reference_counts(n)
    assert ysb_events(5, 9)["user_id"] == ev["user_id"][5:9]


def test_producer_paces_chunks_and_writes_exactly_the_events(client, key, redis_url):
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    done = produce(redis_url, key, events=1_000, rate=4_000, clock=lambda: now[0], sleep=sleep)
    assert (done.events, client.xlen(key)) == (1_000, 1_000)
    # 200 events a chunk (1/20 s of the rate), each sent when its first event is due
    assert slept == pytest.approx([0.05] * 4) and done.seconds == pytest.approx(0.2)
    assert [fv[b"event_time"] for _, fv in client.xrange(key, count=3)] == ysb_events(0, 3)["event_time"]
