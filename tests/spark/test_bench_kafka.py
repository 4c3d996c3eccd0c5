"""The Kafka benchmarks at a tiny size, against the real broker: results checked, never timings.

``funke bench ysb --source kafka``: funke and plain PySpark read one topic (both through Spark's
Kafka connector, which the test session has) and both match the reference. ``funke bench latency --source kafka``: every record and every closed window
arrives exactly once through funke's exactly-once Kafka sink.
"""

from __future__ import annotations

import pytest

from funke.bench.latency_kafka import run_latency
from funke.bench.reference import reference_counts
from funke.bench.ysb_kafka import run_ysb_kafka
from tests.servers import ensure_kafka

pytestmark = pytest.mark.spark
EVENTS = 3_000


def test_ysb_from_kafka_measures_both_systems_over_one_topic_and_checks_them(spark):
    result = run_ysb_kafka(spark, events=EVENTS, rows_per_batch=1_000, bootstrap=ensure_kafka(), warmup=False)
    expected = dict(reference_counts(EVENTS))
    assert result.correct and result.source == "kafka" and result.partitions == 2
    assert [r.system for r in result.runs] == ["funke", "plain PySpark"]
    for run in result.runs:
        assert run.mode == "streaming" and run.events == EVENTS and run.late_rows_dropped == 0
        assert dict(run.windows) == expected
        # at most 1 000 records per micro-batch (Spark's connector shares them out over the partitions by their
        # backlog, so a batch may read one less), then the windows fire
        assert max(b.events for b in run.batches) <= 1_000 and sum(b.events >= 990 for b in run.batches) >= 2
        assert run.cpu_s and run.events_per_cpu_s and run.steady_events_per_s
    assert result.ratio is not None and result.ratio > 0


def test_latency_from_kafka_to_kafka_delivers_every_record_and_window_exactly_once(spark):
    filtered, windowed = run_latency(spark, rate=1_000, seconds=4, warmup_s=2, bootstrap=ensure_kafka())
    assert filtered.job == "filter/map" and filtered.produced == 6_000
    # Every id that is not a purchase (i % 3 == 2), once; nothing else.
    assert (filtered.expected, filtered.received, filtered.missing, filtered.duplicates) == (4_000, 4_000, 0, 0)
    assert filtered.exact and filtered.samples_ms and filtered.batch_ms
    # Each window the watermark closed, once, with exactly the records produced in it.
    assert windowed.job == "window" and windowed.exact and windowed.expected > 0
    assert windowed.received >= windowed.expected and windowed.wrong == ()
