"""The benchmark harness's own logic without Spark: figures, the window check, the docs row, refused options."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
from typer.testing import CliRunner

import funke.bench.ysb as bench
from funke.bench import report
from funke.bench.measure import Batch, LatencyRun, Run, diff_windows, percentile, window_counts
from funke.bench.reference import WINDOW_MS, reference_counts
from funke.bench.ysb import BenchMismatchError, YsbBench, check_options, run_ysb
from funke.cli.main import app
from funke.errors import FunkeError, UnsupportedError

T0 = 1_704_067_200_000


def run(system, mode, batches, windows=None, wall=10.0):
    return Run(system, mode, sum(b.events for b in batches), wall, tuple(batches), windows or {})


def test_steady_state_skips_two_warmup_batches_and_batches_without_input():
    batches = [Batch(0, 9000, 100), Batch(1, 5000, 100), Batch(2, 100, 100), Batch(3, 300, 100), Batch(4, 200, 0)]
    r = run("funke", "streaming", batches)
    assert r.steady_events_per_s == pytest.approx(200 / 0.4)
    assert (r.batch_ms_p50, r.batch_ms_p99) == (200, 300)
    assert r.events_per_s == pytest.approx(40.0)
    assert run("funke", "streaming", batches[:2]).steady_events_per_s is None
    bounded = run("funke", "bounded", [Batch(0, 2000, 1000)], wall=2.0)
    assert bounded.headline_events_per_s == pytest.approx(500.0)


def test_percentile_is_nearest_rank():
    assert percentile(list(range(1, 101)), 0.99) == 99
    assert percentile([7], 0.5) == 7
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_window_counts_reads_collected_rows_and_refuses_a_window_emitted_twice():
    start = dt.datetime.fromtimestamp(T0 / 1000)  # what PySpark hands back: naive local time
    end = dt.datetime.fromtimestamp((T0 + WINDOW_MS) / 1000)
    row = {"campaign_id": "campaign-001", "window_start": start, "window_end": end, "count": 3}
    assert window_counts([row]) == {("campaign-001", T0, T0 + WINDOW_MS): 3}
    with pytest.raises(ValueError, match="emitted twice"):
        window_counts([row, row])


def test_diff_names_missing_extra_and_wrong_windows():
    a, b, c = ("campaign-000", T0, T0 + WINDOW_MS), ("campaign-001", T0, T0 + WINDOW_MS), ("campaign-002", T0, T0 + WINDOW_MS)
    assert diff_windows({a: 1, b: 2}, {a: 1, b: 2}) == []
    lines = diff_windows({a: 1, b: 2}, {b: 3, c: 4})
    assert lines == [
        "1 window(s) missing, e.g. campaign-000 @ 2024-01-01 00:00:00: 1",
        "1 unexpected window(s), e.g. campaign-002 @ 2024-01-01 00:00:00: 4",
        "1 window(s) with another count, e.g. campaign-001 @ 2024-01-01 00:00:00: 3 (expected 2)",
    ]


def test_reference_counts_every_view_once_in_ten_second_windows():
    counts = reference_counts(50_000)
    assert all(end - start == WINDOW_MS and start % WINDOW_MS == 0 for _, start, end in counts)
    assert {k[0] for k in counts} <= {f"campaign-{c:03d}" for c in range(100)}
    # 100,000 events per second of event time from 2024-01-01, moved back by up to 2 s: 50,000 events
    # end 0.5 s after T0, and the earliest fall into the window before it.
    assert {s for _, s, _ in counts} == {T0 - WINDOW_MS, T0}
    assert not Counter(reference_counts(20_000)) - Counter(counts)  # a prefix of the events counts no more anywhere


def test_not_yet_variants_and_options_are_refused_with_what_to_do():
    with pytest.raises(UnsupportedError, match="cardinality .* not built yet; run --variant base"):
        check_options(variant="cardinality", bounded=False, exactly_once=False, latency_seconds=0)
    with pytest.raises(UnsupportedError, match="--exactly-once .* not built yet"):
        check_options(variant="base", bounded=False, exactly_once=True, latency_seconds=0)
    with pytest.raises(FunkeError, match="streaming runs only"):
        check_options(variant="base", bounded=True, exactly_once=False, latency_seconds=10)
    with pytest.raises(FunkeError, match="unknown variant 'huge'"):
        check_options(variant="huge", bounded=False, exactly_once=False, latency_seconds=0)
    assert issubclass(BenchMismatchError, AssertionError) and issubclass(BenchMismatchError, FunkeError)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--variant", "trigger"], "not built yet"),
        (["--variant", "cardinality"], "not built yet"),
        (["--exactly-once"], "not built yet"),
        (["--bounded", "--latency-seconds", "5"], "streaming runs only"),
    ],
)
def test_cli_refuses_what_is_not_built_with_exit_code_2(args, message):
    r = CliRunner().invoke(app, ["bench", "ysb", "--no-write", *args])
    assert r.exit_code == 2
    assert message in " ".join(r.output.replace("│", " ").split())


def _result(bounded=False):
    key = ("campaign-000", T0, T0 + WINDOW_MS)
    batches = [Batch(i, 1000, 1_000_000) for i in range(4)]
    f = run("funke", "streaming", batches, {key: 1}, wall=8.0)
    p = run("plain PySpark", "streaming", [Batch(i, 800, 1_000_000) for i in range(4)], {key: 1}, wall=6.0)
    lat = (LatencyRun("funke", 30, 1e5, "gen", (1500, 2500)), LatencyRun("plain PySpark", 30, 1e5, "rate", (1000, 2000)))
    return YsbBench(4_000_000, "base", bounded, 1_000_000, 2, (f,), (p,), 1, 1, lat)


SETUP = report.Setup("0.1.0", "4.3.0", "17.0.15", "3.11.7", 2, 23.5, "Xeon", 0.5, "local[*]", "2", "RocksDB")


def test_markdown_row_carries_command_versions_machine_figures_and_ratio():
    result = _result()
    assert result.ratio == pytest.approx(0.8)
    row = report.markdown_row(result, SETUP, "funke bench ysb --events 4000000", dt.datetime(2026, 1, 2, 3, 4))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "2026-01-02 03:04"
    assert cells[1] == "`funke bench ysb --events 4000000`"
    assert cells[2] == "funke 0.1.0, pyspark 4.3.0, Java 17.0.15, Python 3.11.7"
    assert cells[3].startswith("2 cores (Xeon), 23.5 GiB RAM")
    assert cells[4].startswith("**1.00 M ev/s** steady; batch p50 / p99 1,000 / 1,000 ms")
    assert cells[5].startswith("**1.25 M ev/s** steady")
    assert "latency p50 / p99 1.50 / 2.50 s" in cells[4]
    assert cells[6] == "**0.80** (latency p50: 1.50)"


def test_rounds_report_the_median_run_and_the_median_of_per_round_ratios():
    def streaming(system, ms):
        return run(system, "streaming", [Batch(i, ms, 1_000_000) for i in range(3)])

    result = YsbBench(
        3_000_000, "base", False, 1_000_000, 2,
        (streaming("funke", 1000), streaming("funke", 4000), streaming("funke", 1100)),
        (streaming("plain PySpark", 1000), streaming("plain PySpark", 1000), streaming("plain PySpark", 2000)),
        1, 1,
    )
    assert result.rounds == 3
    assert result.funke.batch_ms_p50 == 1100 and result.plain.batch_ms_p50 == 1000
    assert result.round_ratios == pytest.approx((1.0, 0.25, 2000 / 1100))
    assert result.ratio == pytest.approx(1.0)
    row = report.markdown_row(result, SETUP, "funke bench ysb --rounds 3")
    assert "(median of 3 rounds)" in row and "**1.00** (median of rounds 1.00, 0.25, 1.82)" in row


def test_rows_go_into_the_runs_table_even_when_text_follows_it(tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nearlier figures\n")
    report.append_row(doc, "| first |")
    text = doc.read_text()
    assert text.startswith("# Benchmarks\n\nearlier figures\n\n" + report.SECTION)
    doc.write_text(text + "\n## Later section\n")
    report.append_row(doc, "| second |")
    lines = doc.read_text().splitlines()
    assert lines.index("| second |") == lines.index("| first |") + 1
    assert lines[-1] == "## Later section"
    assert lines.count(report.SECTION) == 1


class _NoSpark:
    """Stands in for a SparkSession where the harness only asks for the parallelism."""

    class sparkContext:  # noqa: N801  (mirrors SparkSession.sparkContext)
        defaultParallelism = 2


KEY = ("campaign-000", T0, T0 + WINDOW_MS)


def _fake_systems(monkeypatch, counts, views=5):
    """Replace Spark in run_ysb: the reference holds 5 views in KEY, each system emits ``counts[system]``."""
    calls = []

    def run_once(spark, system, events, rows_per_batch, workdir, *, bounded, partitions, timeout_s):
        calls.append(system)
        return Run(system, "bounded", events, 1.0, (Batch(0, 1000, events),), {KEY: counts[system]})

    monkeypatch.setattr(bench, "reference_counts", lambda n: Counter({KEY: 5}))
    monkeypatch.setattr(bench.ysb, "expected_view_count", lambda n: views)
    monkeypatch.setattr(bench, "_run_once", run_once)
    return calls


def test_run_ysb_fails_loudly_naming_the_system_and_window_that_differ(monkeypatch):
    calls = _fake_systems(monkeypatch, {"funke": 5, "plain PySpark": 4})
    with pytest.raises(BenchMismatchError) as e:
        run_ysb(_NoSpark(), events=10, bounded=True, warmup=False, rounds=2)
    assert calls == ["funke", "plain PySpark", "plain PySpark", "funke"]  # who goes first alternates
    message = str(e.value)
    assert message.startswith("the benchmark's results are wrong, so its figures are not kept")
    wrong = "1 window(s) with another count, e.g. campaign-000 @ 2024-01-01 00:00:00: 4 (expected 5)"
    assert f"plain PySpark (bounded): {wrong}" in message
    assert "funke (bounded)" not in message
    result = run_ysb(_NoSpark(), events=10, bounded=True, warmup=False, check=False)
    assert not result.correct and len(result.mismatches) == 1


def test_run_ysb_refuses_a_reference_that_disagrees_with_spark_before_running_anything(monkeypatch):
    calls = _fake_systems(monkeypatch, {"funke": 5, "plain PySpark": 5}, views=6)
    with pytest.raises(BenchMismatchError, match="the reference counts 5 views among 10 events, Spark SQL 6"):
        run_ysb(_NoSpark(), events=10, bounded=True)
    assert calls == []


def test_cli_prints_the_table_and_appends_the_row_with_its_command(monkeypatch, tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")
    asked = {}

    def fake_run_ysb(spark, **options):
        asked.update(options)
        return _result()

    monkeypatch.setattr(bench, "session", lambda: _NoSpark())
    monkeypatch.setattr(bench, "run_ysb", fake_run_ysb)
    monkeypatch.setattr(report, "setup", lambda spark: SETUP)
    r = CliRunner().invoke(app, ["bench", "ysb", "--events", "4000000", "--rounds", "3", "--doc", str(doc)])
    assert r.exit_code == 0, r.output
    assert "funke / plain" in r.output and "0.80" in r.output and f"appended a row to {doc}" in " ".join(r.output.split())
    assert asked["events"] == 4_000_000 and asked["rounds"] == 3 and asked["bounded"] is False and asked["warmup"] is True
    row = doc.read_text().splitlines()[-1]
    assert row.split(" | ")[1] == "`funke bench ysb --events 4000000 --variant base --batch-rows 1000000 --rounds 3`"


def test_cli_exits_1_and_writes_nothing_when_the_results_are_wrong(monkeypatch, tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")

    def wrong(spark, **options):
        raise BenchMismatchError("the benchmark's results are wrong, so its figures are not kept:\n- funke (streaming): ...")

    monkeypatch.setattr(bench, "session", lambda: _NoSpark())
    monkeypatch.setattr(bench, "run_ysb", wrong)
    monkeypatch.setattr(report, "setup", lambda spark: SETUP)
    r = CliRunner().invoke(app, ["bench", "ysb", "--events", "1000", "--doc", str(doc)])
    assert r.exit_code == 1 and "figures are not kept" in r.output
    assert doc.read_text() == "# Benchmarks\n"
