"""Ingestion time: each record's event time is when it entered funke (its micro-batch's start)."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.errors import PlanError
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark


def test_records_are_stamped_as_they_enter_and_windows_use_that_time(env):
    s = env.from_collection([{"k": "a", "v": i} for i in range(9)], "k string, v bigint", rows_per_batch=3,
                            watermarks=fk.WatermarkStrategy.for_ingestion_time())  # fmt: skip
    assert str(s.schema) == "k string, v bigint, ingestion_time timestamp"
    rows = s.collect()
    counts = s.key_by("k").window(TumblingEventTimeWindows.of(fk.hours(24))).count().collect()
    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    env.execute().wait(300)
    after = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    stamps = {r["v"]: r["ingestion_time"] for r in rows.rows}
    assert sorted(stamps) == list(range(9))
    assert all(before <= t <= after for t in stamps.values())
    # one time per micro-batch of three, later batches later
    batches = [{stamps[v] for v in range(b, b + 3)} for b in (0, 3, 6)]
    assert all(len(b) == 1 for b in batches)
    assert [b.pop() for b in batches] == sorted(stamps[v] for v in (0, 3, 6))
    # the windows of that time (all in one day, or two when the run straddles midnight) hold every record
    assert sum(r["count"] for r in counts.rows) == 9
    assert "watermark ingestion time into ingestion_time" in env.explain()


def test_ingestion_time_needs_a_new_column():
    env = fk.StreamEnvironment(app="ingest")
    with pytest.raises(PlanError, match="already has 'v': name another"):
        env.from_collection([{"k": "a", "v": 1}], watermarks=fk.WatermarkStrategy.for_ingestion_time("v"))
