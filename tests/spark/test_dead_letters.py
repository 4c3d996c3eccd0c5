"""Bad input never fails a job and is never lost: it goes to the dead letters, with its reason, and is counted."""

from __future__ import annotations

import json
import uuid

import pytest

import funke as fk
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts", unit="ms")


def windowed(stream):
    return stream.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).sum("v").collect()


@pytest.mark.parametrize("bounded", [False, True])
def test_bad_json_and_csv_records_go_to_the_dead_letters_with_reason_and_file(spark, tmp_path, bounded):
    (tmp_path / "json").mkdir()
    lines = [
        json.dumps({"k": "a", "v": 1, "ts": 1_000}),
        '{"k": "a", "v": 2, "ts": ',  # malformed
        json.dumps({"k": "a", "v": "two", "ts": 2_000}),  # wrong type
        json.dumps({"k": None, "v": 3, "ts": 3_000}),  # null key
        json.dumps({"k": "b", "v": 4, "ts": None}),  # null event time
        json.dumps({"k": "b", "v": 5, "ts": 10**17}),  # out of range (year ~3.2 million)
        json.dumps({"k": "b", "v": 6, "ts": 4_000}),
    ]
    (tmp_path / "json" / "part-0.json").write_text("\n".join(lines) + "\n")
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "part-0.csv").write_text("k,v,ts\na,7,5000\n\na,x,6000\n")  # a header line, a blank line (one field: Flink fails it)
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="dead", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    schema = "k string, v bigint, ts bigint"
    js = env.from_source(fk.sources.files(str(tmp_path / "json"), schema=schema, format="json"), WM)
    cs = env.from_source(fk.sources.files(str(tmp_path / "csv"), schema=schema, format="csv", header=True), WM)
    out = windowed(js.union(cs))
    # (streaming, Spark's JSON file reader refused the dead-letter query: QUERY_ONLY_CORRUPT_RECORD_COLUMN)
    job = env.execute(bounded=bounded).wait(180)
    assert sorted((r["k"], r["v"]) for r in out.rows) == [("a", 1 + 7), ("b", 6)]
    def seen(r):
        reason = r["reason"].split("): ", 1)[1] if r["reason"].startswith("files(") else r["reason"]
        position = r["position"].rsplit("/", 1)[-1] if r["position"].startswith("file:") else r["position"]
        return reason, r["raw"], position

    got = sorted(seen(r) for r in dead.rows)
    json_src, csv_src = f"files(json: {tmp_path / 'json'})", f"files(csv: {tmp_path / 'csv'})"
    bad_type = "malformed record or a value of the wrong type"
    assert got == sorted([
        (bad_type, lines[1], "part-0.json"),
        (bad_type, lines[2], "part-0.json"),
        (bad_type, "a,x,6000", "part-0.csv"),
        (bad_type, "", "part-0.csv"),
        # checks past the source see the row as it is there (event time already a timestamp) and name the source
        ("null key column(s): k", '{"v":3,"ts":"1970-01-01T00:00:03.000Z"}', f"{csv_src}, {json_src}"),
        ("null event time in column ts", '{"k":"b","v":4}', json_src),
        ("event time out of range in column ts: 100000000000000000", '{"k":"b","v":5,"ts":100000000000000000}', json_src),
    ])
    assert all(r["job"] == "dead" and r["detected_at"] is not None for r in dead.rows)
    assert job.metrics()["dead_letters"] == 7


@pytest.mark.parametrize("bounded", [False, True])
def test_null_keys_and_bad_event_times_from_a_stream(spark, tmp_path, bounded):
    rows = [
        {"k": "a", "v": 1, "ts": 1_000},
        {"k": None, "v": 2, "ts": 2_000},
        {"k": "a", "v": 3, "ts": None},
        {"k": "a", "v": 4, "ts": -10**17},
        {"k": "a", "v": 5, "ts": 12_000},
    ]
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="dead-stream", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    out = windowed(env.from_collection(rows, "k string, v bigint, ts bigint", rows_per_batch=2, watermarks=WM))
    job = env.execute(bounded=bounded).wait(180)
    assert sorted((r["k"], r["v"]) for r in out.rows) == [("a", 1), ("a", 5)]
    assert sorted(r["reason"] for r in dead.rows) == [
        "event time out of range in column ts: -100000000000000000",
        "null event time in column ts",
        "null key column(s): k",
    ]
    assert job.metrics()["dead_letters"] == 3


@pytest.mark.parametrize("kind", ["generator", "collection"])
@pytest.mark.parametrize("bounded", [False, True])
def test_event_times_are_checked_row_by_row_unless_proven_in_range(spark, tmp_path, bounded, kind):
    """A generator's event time whose expression stays in range for every index, or a collection's whose values
    all are in range (checked while planning), needs no check: bounded, the query has no observe at all (the rows
    read are the generator's events, the collection's rows). One that might be null, or that leaves the range,
    is checked row by row as any other."""
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app=f"dead-{kind}", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    times = {
        "proven": ("1000 * i", lambda i: 1000 * i),
        "maybe null": ("case when i = 3 then null else 1000 * i end", lambda i: None if i == 3 else 1000 * i),
        "too late": ("253402214400000 + i", lambda i: 253402214400000 + i),  # the end-of-input instant and after
    }
    outs = {}
    for k, (sql, value) in times.items():
        schema = "k string, v bigint, ts bigint"
        if kind == "generator":
            source = fk.sources.generator({"k": f"'{k}'", "v": "i", "ts": sql}, schema=schema, events=5, rows_per_batch=2)
            outs[k] = windowed(env.from_source(source, WM))
        else:  # (a column of its own: collections of one schema are one source to funke, as to a savepoint)
            tag = k.replace(" ", "_")
            rows = [{"k": k, "v": i, "ts": value(i), tag: 0} for i in range(5)]
            outs[k] = windowed(env.from_collection(rows, f"{schema}, {tag} int", watermarks=WM, rows_per_batch=2))
    job = env.execute(bounded=bounded).wait(180)
    assert {k: sorted(r["v"] for r in out.rows) for k, out in outs.items()} == {"proven": [10], "maybe null": [7], "too late": []}
    assert sorted(r["reason"] for r in dead.rows) == [
        *(f"event time out of range in column ts: {253402214400000 + i}" for i in range(5)), "null event time in column ts"
    ]
    assert job.metrics()["dead_letters"] == 6
    if bounded:
        assert job.metrics()["input_rows"] == 15
        proven = next(st for st in job.states if st.sink.spec is outs["proven"]).compiled.metrics
        assert [(m.known_rows, m.observation) for m in proven if m.counts_rows] == [(5, None)]  # (rows known, not observed)
        assert not [m.name for m in proven if m.name.startswith("funke_wm_")]  # (no event time checked)
        # (a collection's nullable key column keeps key_by's null-key check: its own observe)
        assert [m.name.split("_")[2] for m in proven if m.observation is not None] == ([] if kind == "generator" else ["key"])


def test_a_proven_range_holds_what_spark_computes(spark):
    from funke.connectors.index_bounds import bounds

    texts = [
        "1704067200000 + (i * 1000) div 997 - pmod(xxhash64(i, 6), 2001)",
        "i * 1000 div 7 - i % 13 * 3",
        "pmod(i - 500, 7) + -i div -3",
        "cast(i * 2 as int) - pmod(hash(i), 10) * i",
    ]
    row = spark.range(0, 1001).withColumnRenamed("id", "i").selectExpr(*(f"min({t})" for t in texts), *(f"max({t})" for t in texts)).first()
    for k, t in enumerate(texts):
        lo, hi = bounds(fk.expr(t), 0, 1000)
        assert lo <= row[k] <= row[k + len(texts)] <= hi, t


def test_default_dead_letters_are_parquet_under_the_job_home(spark, tmp_path):
    env = fk.StreamEnvironment(app="dead-default", spark=spark, settings_=fk.config.settings(home=str(tmp_path)))
    windowed(env.from_collection([{"k": None, "v": 1, "ts": 1}], "k string, v bigint, ts bigint", watermarks=WM))
    env.execute(bounded=True).wait(120)
    rows = spark.read.parquet(str(tmp_path / "jobs" / "dead-default" / "dead-letters")).collect()
    assert [r["reason"] for r in rows] == ["null key column(s): k"]


#: One record of each kind of bad input (and two good ones), as JSON objects; the expected reason of each bad one.
RECORDS = [
    ({"k": "a", "v": 1, "ts": 1_000}, None),
    ({"k": "a", "v": "two", "ts": 2_000}, "wrong type"),
    ({"k": "a", "v": 2, "ts": "yesterday"}, "wrong type"),
    ({"v": 3, "ts": 3_000}, "null key column(s): k"),
    ({"k": "b", "v": 4}, "null event time in column ts"),
    ({"k": "b", "v": 5, "ts": 10**17}, "event time out of range in column ts: 100000000000000000"),
    ({"k": "b", "v": 6, "ts": 4_000}, None),
]


def _kafka_source(tmp_path, key):
    from confluent_kafka.admin import AdminClient, NewTopic

    from tests.servers import ensure_kafka
    from tests.spark.test_kafka_source import T0, produce

    bootstrap = ensure_kafka()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(key, 1, 1)])[key].result(30)
    values = [json.dumps(r).encode() for r, _ in RECORDS] + [b'{"k": "a", "v": ']  # and a malformed one
    produce(bootstrap, key, [(0, None, v, T0) for v in values])
    source = fk.sources.kafka(key, schema="k string, v bigint, ts bigint", bootstrap=bootstrap, events=len(values))
    return source, lambda: admin.delete_topics([key])[key].result(30)


def _redis_source(tmp_path, key):
    import redis

    from tests.servers import ensure_redis

    url = ensure_redis()
    client = redis.Redis.from_url(url)
    for r, _ in RECORDS:  # a missing field is a null, as a missing JSON field is
        client.xadd(key, {k: str(v) for k, v in r.items()})
    return fk.sources.redis_stream(key, schema="k string, v bigint, ts bigint", url=url, events=len(RECORDS)), lambda: client.delete(key)


@pytest.mark.parametrize("kind", ["kafka", "redis"])
def test_every_kind_of_bad_input_from_kafka_and_redis_goes_to_the_dead_letters_streaming(spark, tmp_path, kind):
    key = f"funke-test-dead-{uuid.uuid4().hex[:10]}"
    source, cleanup = (_kafka_source if kind == "kafka" else _redis_source)(tmp_path, key)
    try:
        dead = fk.sinks.collect()
        env = fk.StreamEnvironment(app=f"dead-{kind}", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
        out = windowed(env.from_source(source, WM))
        job = env.execute().wait(180)  # (Redis: a value that did not convert failed the job)
    finally:
        cleanup()
    assert sorted((r["k"], r["v"]) for r in out.rows) == [("a", 1), ("b", 6)]
    wrong = "malformed json or a value that does not fit the schema" if kind == "kafka" else None
    want = sorted(why for _, why in RECORDS if why and why != "wrong type") + ["wrong type"] * (3 if kind == "kafka" else 2)

    def why(r):
        if r["reason"].startswith(("kafka(", "redis_stream")):
            assert r["reason"].endswith(wrong) if wrong else "is not a valid bigint" in r["reason"]
            return "wrong type"
        return r["reason"]

    assert sorted(why(r) for r in dead.rows) == want
    if kind == "redis":
        assert sorted(r["reason"].split(": ", 1)[1] for r in dead.rows if r["reason"].startswith("redis_stream")) == [
            "field 'ts' = 'yesterday' is not a valid bigint",
            "field 'v' = 'two' is not a valid bigint",
        ]
        raw = {json.loads(r["raw"])["v"]: r["position"] for r in dead.rows if r["reason"].startswith("redis_stream")}
        assert set(raw) == {"two", "2"} and all(p.startswith(f"{key}@") for p in raw.values())
    assert job.metrics()["dead_letters"] == len(want)
