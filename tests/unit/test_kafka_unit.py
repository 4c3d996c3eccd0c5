"""The Kafka source's offset arithmetic and the latency mode, without a broker or Spark."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import funke as fk
from funke.connectors.kafka_offsets import fill


def one_at_a_time(levels: dict[str, int], caps: dict[str, int], budget: int) -> dict[str, int]:
    """The rule itself: each offset to the partition read least so far (ties: the first) that has more."""
    out = dict(levels)
    for _ in range(budget):
        open_ = [k for k in out if out[k] < caps[k]]
        if not open_:
            break
        k = min(open_, key=lambda k: (out[k], list(out).index(k)))
        out[k] += 1
    return out


@st.composite
def partitions(draw):
    n = draw(st.integers(1, 5))
    levels = {f"t/{i}": draw(st.integers(0, 30)) for i in range(n)}
    caps = {k: v + draw(st.integers(0, 40)) for k, v in levels.items()}
    return levels, caps


@given(partitions(), st.integers(0, 120))
def test_fill_spends_the_budget_as_the_one_at_a_time_rule(parts, budget):
    levels, caps = parts
    assert fill(levels, caps, budget) == one_at_a_time(levels, caps, budget)


@given(partitions(), st.lists(st.integers(0, 40), min_size=1, max_size=5))
def test_batches_of_any_size_end_where_one_batch_of_their_total_does(parts, sizes):
    """Why streaming with events=N reads the same records as a bounded run: the cut into micro-batches does not matter."""
    levels, caps = parts
    step = dict(levels)
    for size in sizes:
        step = fill(step, caps, size)
    assert step == fill(levels, caps, sum(sizes))


def test_the_latency_modes_and_an_unknown_one():
    env = fk.StreamEnvironment()
    with pytest.raises(fk.PlanError, match="takes 'micro-batch' or 'realtime'"):
        env.set_latency_mode("continuous")
    assert env.latency_mode == "micro-batch"
    assert env.set_latency_mode("realtime").latency_mode == "realtime"


def _windowed(partition_watermarks: bool, strategy=None):
    from funke.windows import TumblingEventTimeWindows

    env = fk.StreamEnvironment(app="kafka-plan")
    src = fk.sources.kafka("t", schema="k string, ts timestamp", partition_watermarks=partition_watermarks)
    strategy = strategy or fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    return env.from_source(src, strategy).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()


def test_a_window_over_per_partition_watermarks_runs_on_the_general_path_and_says_why():
    from funke.plan.capabilities import place

    where = place(_windowed(True).node)
    assert where.path == "general" and "per partition" in where.why and "partition_watermarks=False" in where.why
    assert place(_windowed(False).node).path == "native"
    # a generator sees all partitions in read order; ingestion time is the batch's: neither is per partition
    generated = fk.WatermarkStrategy.for_generator(fk.AscendingTimestampsWatermarks).with_timestamp_assigner("ts")
    assert "per partition" not in place(_windowed(True, generated).node).why
    ingested = fk.WatermarkStrategy.for_ingestion_time("arrived")
    assert place(_windowed(True, ingested).node).path == "native"


def test_the_connector_version_is_the_pysparks_or_the_newest_below_and_a_failed_fetch_is_remembered(tmp_path, monkeypatch):
    from funke.connectors import kafka_jvm

    assert kafka_jvm.pick_version("4.3.0", ["4.2.0", "4.1.3", "4.3.0-preview1", "5.0.0"]) == "4.2.0"
    assert kafka_jvm.pick_version("4.2.0", ["4.2.0", "4.1.3"]) == "4.2.0"
    assert kafka_jvm.pick_version("4.0.0", ["3.5.7"]) is None  # not across a major version
    assert kafka_jvm.resolve(tmp_path, "python").reason == "FUNKE_KAFKA_CONNECTOR=python"

    def offline(timeout: float = 20.0):
        raise OSError("no route to Maven Central")

    monkeypatch.setattr(kafka_jvm, "served_versions", offline)
    monkeypatch.setattr(kafka_jvm.shutil, "which", lambda name: None)
    connector = kafka_jvm._resolve(tmp_path, "4.3.0")  # the checked pairing when Maven Central cannot be asked
    assert (connector.version, connector.available) == ("4.2.0", False)
    assert connector.reason == "mvn is not installed (apt-get install maven), so funke cannot fetch it"
    assert "no Spark Kafka connector (mvn is not installed" in connector.describe()
    again = kafka_jvm._resolve(tmp_path, "4.3.0")  # remembered: no network wait at the next session's start
    assert again.reason.startswith("mvn is not installed") and "tried" in again.reason
    assert kafka_jvm._resolve(tmp_path, "3.9.0").reason.startswith("Maven Central could not be asked")


@pytest.mark.parametrize("timeout", [1, 10, 30, 45, 600])
def test_the_connectors_producer_takes_any_sink_timeout_kafka_accepts(timeout):
    from funke.spark.kafka_jvm import producer_options

    sink = fk.sinks.kafka("out", delivery="at-least-once", timeout=timeout)
    o = {k.removeprefix("kafka."): int(v) for k, v in producer_options(sink).items() if k.endswith(".ms")}
    # Kafka's producer refuses to start unless delivery.timeout.ms >= linger.ms + request.timeout.ms
    assert o["delivery.timeout.ms"] >= o["linger.ms"] + o["request.timeout.ms"]
    assert o["delivery.timeout.ms"] <= max(timeout * 1000, 1_005) + 5  # (the sink's timeout, not Kafka's 120 s)
