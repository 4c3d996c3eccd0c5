"""Bad input never fails a job and is never lost: it goes to the dead letters, with its reason, and is counted."""

from __future__ import annotations

import json

import pytest

import funke as fk
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts", unit="ms")


def windowed(stream):
    return stream.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).sum("v").collect()


def test_bad_json_and_csv_records_go_to_the_dead_letters_with_reason_and_file(spark, tmp_path):
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
    (tmp_path / "csv" / "part-0.csv").write_text("a,7,5000\na,x,6000\n")
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="dead", spark=spark, dead_letters=dead)
    schema = "k string, v bigint, ts bigint"
    js = env.from_source(fk.sources.files(str(tmp_path / "json"), schema=schema, format="json"), WM)
    cs = env.from_source(fk.sources.files(str(tmp_path / "csv"), schema=schema, format="csv"), WM)
    out = windowed(js.union(cs))
    job = env.execute(bounded=True).wait(120)
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
        # checks past the source see the row as it is there (event time already a timestamp) and name the source
        ("null key column(s): k", '{"v":3,"ts":"1970-01-01T00:00:03.000Z"}', f"{csv_src}, {json_src}"),
        ("null event time in column ts", '{"k":"b","v":4}', json_src),
        ("event time out of range in column ts: 100000000000000000", '{"k":"b","v":5,"ts":100000000000000000}', json_src),
    ])
    assert all(r["job"] == "dead" and r["detected_at"] is not None for r in dead.rows)
    assert job.metrics()["dead_letters"] == 6


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


def test_default_dead_letters_are_parquet_under_the_job_home(spark, tmp_path):
    env = fk.StreamEnvironment(app="dead-default", spark=spark, settings_=fk.config.settings(home=str(tmp_path)))
    windowed(env.from_collection([{"k": None, "v": 1, "ts": 1}], "k string, v bigint, ts bigint", watermarks=WM))
    env.execute(bounded=True).wait(120)
    rows = spark.read.parquet(str(tmp_path / "jobs" / "dead-default" / "dead-letters")).collect()
    assert [r["reason"] for r in rows] == ["null key column(s): k"]
