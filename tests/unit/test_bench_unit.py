"""The benchmark harness's own logic without Spark: figures, the window check, the docs row, refused options."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import funke as fk
import funke.bench.checkpoint as checkpoint_bench
import funke.bench.ysb as bench
from examples import ysb
from funke.bench import report
from funke.bench.checkpoint import CheckpointBench, run_checkpoint
from funke.bench.latency import LatencyRun, latency_run
from funke.bench.measure import Batch, Run, percentile
from funke.bench.reference import WINDOW_MS, reference_counts
from funke.bench.resources import Memory, filesystem
from funke.bench.sinks import AppendParquetSink, BatchParquetSink
from funke.bench.window_rows import diff_windows, split_firings, window_counts
from funke.bench.ysb import VARIANTS, BenchMismatchError, YsbBench, check_heap, check_options, checkpoint_root, run_ysb
from funke.cli.main import app
from funke.errors import FunkeError, PlanError, UnsupportedError

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


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("exactly_once", ["on", "off"])
def test_every_variant_streams_with_exactly_once_on_or_off(variant, exactly_once):
    check_options(variant=variant, bounded=False, exactly_once=exactly_once, latency_seconds=0)


def test_options_the_harness_cannot_measure_are_refused_with_what_to_do():
    def refused(**options):
        with pytest.raises(PlanError) as e:
            check_options(**{"variant": "base", "bounded": False, "exactly_once": "on", "latency_seconds": 0, **options})
        return str(e.value)

    assert refused(exactly_once="yes") == "--exactly-once takes on or off, got 'yes'"
    assert refused(bounded=True, exactly_once="off").endswith("a bounded run has neither: drop --bounded, or --exactly-once off")
    assert refused(variant="trigger", bounded=True).endswith("which only streaming runs have: drop --bounded")
    assert refused(variant="cardinality", latency_seconds=5) == (
        "--latency-seconds is measured on --variant base only, not cardinality: drop one of them"
    )
    assert "streaming runs only" in refused(bounded=True, latency_seconds=10)
    assert refused(variant="huge").startswith("unknown variant 'huge': choose one of base, cardinality, trigger")
    check_options(variant="cardinality", bounded=True, exactly_once="on", latency_seconds=0)  # a batch job over 1 M campaigns
    assert issubclass(BenchMismatchError, AssertionError) and issubclass(BenchMismatchError, FunkeError)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--exactly-once", "maybe"], "takes on or off, got 'maybe'"),
        (["--bounded", "--exactly-once", "off"], "drop --bounded, or --exactly-once off"),
        (["--variant", "trigger", "--bounded"], "only streaming runs have"),
        (["--variant", "cardinality", "--latency-seconds", "5"], "--variant base only"),
        (["--bounded", "--latency-seconds", "5"], "streaming runs only"),
    ],
)
def test_cli_refuses_what_it_cannot_measure_with_exit_code_2(args, message):
    r = CliRunner().invoke(app, ["bench", "ysb", "--no-write", *args])
    assert r.exit_code == 2
    assert message in " ".join(r.output.replace("│", " ").split())


def _result(bounded=False):
    key = ("campaign-000", T0, T0 + WINDOW_MS)
    batches = [Batch(i, 1000, 1_000_000) for i in range(4)]
    f = run("funke", "streaming", batches, {key: 1}, wall=8.0)
    p = run("plain PySpark", "streaming", [Batch(i, 800, 1_000_000) for i in range(4)], {key: 1}, wall=6.0)
    lat = (LatencyRun("funke", 30, 1e5, "gen", (1500, 2500)), LatencyRun("plain PySpark", 30, 1e5, "rate", (1000, 2000)))
    return YsbBench(4_000_000, "base", bounded, 1_000_000, 2, (f,), (p,), 1, 1, lat, checkpoint_fs="ext4")


SETUP = report.Setup("0.1.0", "4.3.0", "17.0.15", "3.11.7", 2, 23.5, "Xeon", 0.5, "local[*]", "2", "RocksDB")


def test_markdown_row_carries_command_versions_machine_figures_and_ratio():
    result = _result()
    assert result.ratio == pytest.approx(0.8)
    row = report.markdown_row(result, SETUP, "funke bench ysb --events 4000000", dt.datetime(2026, 1, 2, 3, 4))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "2026-01-02 03:04"
    assert cells[1] == "`funke bench ysb --events 4000000`"
    assert cells[2] == "funke 0.1.0, pyspark 4.3.0, Java 17.0.15, Python 3.11.7"
    assert cells[3].startswith("2 cores (Xeon), 23.5 GiB RAM") and cells[3].endswith("; checkpoints on ext4")
    assert cells[4].startswith("**1.00 M ev/s** steady; batch p50 / p99 1,000 / 1,000 ms")
    assert cells[5].startswith("**1.25 M ev/s** steady")
    assert "latency p50 / p99 1.50 / 2.50 s" in cells[4]
    assert cells[6] == "**0.80** (latency p50: 1.50)"


def test_rounds_report_the_median_run_and_the_median_of_per_round_ratios():
    def streaming(system, ms):
        return run(system, "streaming", [Batch(i, ms, 1_000_000) for i in range(3)])

    result = YsbBench(
        3_000_000,
        "base",
        False,
        1_000_000,
        2,
        (streaming("funke", 1000), streaming("funke", 4000), streaming("funke", 1100)),
        (streaming("plain PySpark", 1000), streaming("plain PySpark", 1000), streaming("plain PySpark", 2000)),
        1,
        1,
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

    class sparkContext:
        defaultParallelism = 2


KEY = ("campaign-000", T0, T0 + WINDOW_MS)


def _fake_systems(monkeypatch, counts, views=5):
    """Replace Spark in run_ysb: the reference holds 5 views in KEY, each system emits ``counts[system]``."""
    calls = []

    def run_once(spark, system, job, workdir, checkpoint):
        calls.append(system)
        return Run(system, job.mode, job.events, 1.0, (Batch(0, 1000, job.events),), {KEY: counts[system]})

    monkeypatch.setattr(bench, "reference_counts", lambda n, campaigns: Counter({KEY: 5}))
    monkeypatch.setattr(bench.ysb, "expected_view_count", lambda n: views)
    monkeypatch.setattr(bench, "run_once", run_once)
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

    monkeypatch.setattr(bench, "session", lambda variant="base": _NoSpark())
    monkeypatch.setattr(bench, "run_ysb", fake_run_ysb)
    monkeypatch.setattr(report, "setup", lambda spark: SETUP)
    r = CliRunner().invoke(app, ["bench", "ysb", "--events", "4000000", "--rounds", "3", "--doc", str(doc), "--write-docs"])
    assert r.exit_code == 0, r.output
    assert "funke / plain" in r.output and "0.80" in r.output and f"appended a row to {doc}" in " ".join(r.output.split())
    assert asked["events"] == 4_000_000 and asked["rounds"] == 3 and asked["bounded"] is False and asked["warmup"] is True
    assert asked["exactly_once"] == "on" and asked["variant"] == "base"
    row = doc.read_text().splitlines()[-1]
    assert row.split(" | ")[1] == "`funke bench ysb --events 4000000 --variant base --batch-rows 1000000 --rounds 3`"
    r = CliRunner().invoke(
        app, ["bench", "ysb", "--events", "5", "--variant", "trigger", "--exactly-once", "off", "--doc", str(doc), "--write-docs"]
    )
    assert r.exit_code == 0, r.output
    assert asked["exactly_once"] == "off" and asked["variant"] == "trigger"
    row = doc.read_text().splitlines()[-1]
    assert row.split(" | ")[1] == "`funke bench ysb --events 5 --variant trigger --batch-rows 1000000 --exactly-once off`"


def test_cli_writes_the_docs_only_when_asked_and_never_a_run_too_small_to_measure(monkeypatch, tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")
    result = _result()
    monkeypatch.setattr(bench, "session", lambda variant="base": _NoSpark())
    monkeypatch.setattr(bench, "run_ysb", lambda spark, **options: result)
    monkeypatch.setattr(report, "setup", lambda spark: SETUP)
    r = CliRunner().invoke(app, ["bench", "ysb", "--events", "4000000", "--doc", str(doc)])
    assert r.exit_code == 0, r.output
    assert doc.read_text() == "# Benchmarks\n" and "appended" not in r.output  # (8c1efe1 wrote the row by default)
    # Two micro-batches: both warm-up, so no steady rate. The table says so; the docs take no row even when asked.
    small = [Batch(i, 1000, 1_000) for i in range(2)]
    key = ("campaign-000", T0, T0 + WINDOW_MS)
    f, p = run("funke", "streaming", small, {key: 1}), run("plain PySpark", "streaming", small, {key: 1})
    result = YsbBench(2_000, "base", False, 1_000, 2, (f,), (p,), 1, 1, (), checkpoint_fs="ext4")
    r = CliRunner().invoke(app, ["bench", "ysb", "--events", "2000", "--doc", str(doc), "--write-docs"], env={"COLUMNS": "300"})
    assert "too small to measure" in r.output and "None" not in r.output
    assert isinstance(r.exception, report.TooSmallToMeasure) and doc.read_text() == "# Benchmarks\n"


def test_summaries_of_a_run_too_small_to_measure_say_so():
    from funke.bench.cep import CepRun
    from funke.bench.cep import summary as cep_summary
    from funke.bench.general import GeneralRun, general_summary

    native = GeneralRun("native", None, 1_000, 1_000, 2.0, "exact")
    trigger = GeneralRun("trigger", None, 1_000, 1_000, 2.0, "exact", (), None, "native")
    line = general_summary([native, trigger])
    assert "native too small to measure" in line and "None" not in line and " 0 events/s" not in line
    line = cep_summary(CepRun(1_000, 10, 1_000, 5.0, None, 4_000, 4_500, 2, 7, 2.5))
    assert "steady too small to measure" in line and "target ≥ 200,000 events/s: too small to measure" in line


def test_cli_exits_1_and_writes_nothing_when_the_results_are_wrong(monkeypatch, tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")

    def wrong(spark, **options):
        raise BenchMismatchError("the benchmark's results are wrong, so its figures are not kept:\n- funke (streaming): ...")

    monkeypatch.setattr(bench, "session", lambda variant="base": _NoSpark())
    monkeypatch.setattr(bench, "run_ysb", wrong)
    monkeypatch.setattr(report, "setup", lambda spark: SETUP)
    r = CliRunner().invoke(app, ["bench", "ysb", "--events", "1000", "--doc", str(doc), "--write-docs"])
    assert r.exit_code == 1 and "figures are not kept" in r.output
    assert doc.read_text() == "# Benchmarks\n"


# -- early and final firings -------------------------------------------------------------------

W = ("campaign-000", T0, T0 + WINDOW_MS)
V = ("campaign-001", T0, T0 + WINDOW_MS)
#: Batch id -> the watermark it ran with: batch 2 is the first to reach W's last millisecond.
MARKS = {0: T0 - 5_000, 1: T0 + 4_000, 2: T0 + WINDOW_MS - 1, 3: T0 + 2 * WINDOW_MS}


def test_fire_and_purge_output_keeps_the_closing_batchs_row_and_counts_the_rest_as_early():
    rows = [(W, 0, 2), (W, 0, 2), (W, 1, 6), (W, 2, 7), (W, 2, 7), (V, 1, 1), (V, 2, 3)]
    firings = split_firings(rows, MARKS)
    assert firings.final == {W: 7, V: 3}
    assert firings.early_rows == 4 + 1 and firings.problems == ()


@pytest.mark.parametrize(
    "rows, problem",
    [
        ([(W, 1, 6)], "campaign-000 @ 2024-01-01 00:00:00: no row in its closing batch 2"),
        ([(W, 2, 7), (W, 3, 7)], "campaign-000 @ 2024-01-01 00:00:00 written in batch 3, after its closing batch 2"),
        ([(W, 1, 9), (W, 2, 7)], "campaign-000 @ 2024-01-01 00:00:00: an early row counts 9, the final 7"),
        ([(W, 2, 6), (W, 2, 7)], "campaign-000 @ 2024-01-01 00:00:00: rows 6, 7 in its closing batch 2"),
        ([(("campaign-000", T0 + 9 * WINDOW_MS, T0 + 10 * WINDOW_MS), 3, 1)], "no batch's watermark reached its end"),
    ],
)
def test_fire_and_purge_output_that_breaks_the_trigger_is_reported(rows, problem):
    assert problem in split_firings(rows, MARKS).problems[0]


def test_update_mode_output_keeps_each_windows_last_row_and_refuses_two_in_one_batch():
    firings = split_firings([(W, 0, 2), (W, 3, 7), (W, 1, 6), (V, 2, 1)])
    assert firings.final == {W: 7, V: 1} and firings.early_rows == 2 and firings.problems == ()
    twice = split_firings([(W, 0, 2), (W, 1, 6), (W, 1, 6), (V, 1, 1), (V, 1, 2)])
    assert twice.problems == ("2 windows, e.g. campaign-000 @ 2024-01-01 00:00:00 written 2 times in batch 1 (counts 6, 6)",)


def test_a_runs_problems_make_it_a_mismatch():
    run = Run("funke", "streaming", 10, 1.0, (Batch(0, 1, 10),), {KEY: 5}, problems=("a problem",))
    assert bench.check_run(run, {KEY: 5}, 10) == ["funke (streaming): a problem"]


# -- variants, sinks, checkpoints --------------------------------------------------------------


def test_the_base_campaigns_are_the_ones_ysb_always_had_and_more_campaigns_widen_the_ids():
    assert ysb.campaign_rows() == [(f"ad-{a:04d}", f"campaign-{a // 10:03d}") for a in range(1000)]
    assert ysb.campaigns().rows == tuple(ysb.campaign_rows())
    assert dict(ysb.events(5).columns)["ad_id"].text == "concat('ad-', lpad(cast(pmod(xxhash64(i, 3), 1000) as string), 4, '0'))"
    assert ysb.id_widths(1_000_000) == (7, 6) and ysb.campaign_id(42, 1_000_000) == "campaign-000042"
    big = ysb.campaigns(1_000_000)
    assert big.rows is None and big.loader is not None and "10,000,000 ads" in big.describe()
    assert dict(ysb.events(5, campaigns=1_000_000).columns)["ad_id"].text.endswith("10000000) as string), 7, '0'))")


def test_reference_counts_spread_views_over_the_campaigns_asked_for():
    base, many = reference_counts(30_000), reference_counts(30_000, 20_000)
    assert sum(base.values()) == sum(many.values())  # the same views, spread over other keys
    assert len(many) > 10 * len(base)
    assert all(c.startswith("campaign-") and len(c) == len("campaign-") + 5 for c, _, _ in many)


def test_bench_sinks_say_their_guarantee_and_explain_shows_it(tmp_path):
    env = fk.StreamEnvironment(app="sinks")
    ysb.pipeline(env, ysb.events(10)).sink_to(AppendParquetSink(str(tmp_path)), uid="counts")
    assert f"sink parquet-append({tmp_path}/batch_id=<batch>) (at-least-once)" in env.explain()
    assert BatchParquetSink.guarantee == "exactly-once" and AppendParquetSink.guarantee == "at-least-once"
    assert AppendParquetSink.__doc__.startswith("At-least-once:")
    assert BatchParquetSink(str(tmp_path)).batch_path(3) == f"{tmp_path}/batch_id=3"


def test_exactly_once_off_puts_checkpoints_on_tmpfs(tmp_path):
    assert checkpoint_root(True, tmp_path) == tmp_path
    off = checkpoint_root(False, tmp_path)
    try:
        assert off != tmp_path and off.is_dir() and off.name.startswith("funke-bench-checkpoints-")
        if Path("/dev/shm").is_dir():
            assert str(off).startswith("/dev/shm/") and filesystem(off) == "tmpfs"
    finally:
        off.rmdir()


def test_a_driver_heap_too_small_for_the_lookup_table_is_refused_before_running():
    def with_heap(gib):
        runtime = SimpleNamespace(maxMemory=lambda: gib * 2**30)
        jvm = SimpleNamespace(java=SimpleNamespace(lang=SimpleNamespace(Runtime=SimpleNamespace(getRuntime=lambda: runtime))))
        return SimpleNamespace(sparkContext=SimpleNamespace(_jvm=jvm))

    with pytest.raises(
        UnsupportedError, match="10,000,000-row ad → campaign table, .* start a new process with FUNKE_DRIVER_MEMORY=6g"
    ):
        check_heap(with_heap(2), 1_000_000)
    check_heap(with_heap(6), 1_000_000)
    check_heap(with_heap(2), 100)
    check_heap(_NoSpark(), 1_000_000)  # Spark Connect: nothing to read, nothing refused


# -- figures in the table and the docs row -----------------------------------------------------

MEMORY = Memory(python_rss=200 * 2**20, jvm_rss=2 * 2**30 - 200 * 2**20, jvm_heap=3 * 2**29)


def test_rows_show_memory_state_early_rows_and_the_load_after_each_run():
    result = _result()
    f = Run(
        "funke",
        "streaming",
        4_000_000,
        8.0,
        result.funke.batches,
        {KEY: 1},
        early_rows=12,
        memory=MEMORY,
        state_bytes=5 * 2**20,
        load=3.25,
    )
    result = YsbBench(4_000_000, "trigger", False, 1_000_000, 2, (f,), (result.plain,), 1, 1, exactly_once="off")
    cells = [c.strip() for c in report.markdown_row(result, SETUP, "cmd").strip("|").split("|")]
    assert (
        "1 final windows checked, 12 early rows; JVM heap peak 1.50 GiB, RSS peak Python 0.20 GiB + JVM and workers 1.80 GiB"
        in cells[4]
    )
    assert cells[4].endswith("state on disk 5.0 MiB; load 3.2 after")
    assert "early rows" not in cells[5] and "state on disk" not in cells[5]
    text = _render(report.table(result, SETUP))
    assert "YSB (trigger, streaming, exactly-once off)" in text
    assert "final windows = reference" in text and "early rows (not checked)" in text and "state on disk 5.0 MiB" in text


def _render(t):
    from rich.console import Console

    console = Console(width=300, record=True, file=io.StringIO())
    console.print(t)
    return " ".join(console.export_text().replace("│", " ").replace("┃", " ").split())


def _checkpoint_result():
    def streaming(ms, fs_load):
        return Run("funke", "streaming", 3_000_000, 5.0, tuple(Batch(i, ms, 1_000_000) for i in range(5)), {KEY: 1}, load=fs_load)

    on = (streaming(1000, 1.0), streaming(1200, 2.0), streaming(1000, 1.5))
    off = (streaming(900, 1.0), streaming(1000, 2.0), streaming(1100, 1.5))
    return CheckpointBench(3_000_000, 1_000_000, on, off, 1, "ext4", "tmpfs")


def test_checkpoint_rows_have_their_own_section_and_the_median_ratio_on_over_off(tmp_path):
    result = _checkpoint_result()
    assert result.round_ratios == pytest.approx((0.9, 1000 / 1200, 1.1))
    assert result.ratio == pytest.approx(0.9)
    row = report.checkpoint_row(result, SETUP, "funke bench checkpoint --rounds 3", dt.datetime(2026, 1, 2, 3, 4))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "`funke bench checkpoint --rounds 3`"
    assert cells[4].startswith("**1.00 M ev/s** steady (median of 3 rounds)") and cells[4].endswith("checkpoint on ext4")
    assert cells[5].endswith("checkpoint on tmpfs") and cells[6] == "**0.90** (median of rounds 0.90, 0.83, 1.10)"
    doc = tmp_path / "benchmarks.md"
    report.append_row(doc, "| ysb row |")
    report.append_checkpoint_row(doc, row)
    lines = doc.read_text().splitlines()
    assert lines.index(report.CHECKPOINT_SECTION) > lines.index("| ysb row |")
    assert lines[-1] == row and 'What "off" means on Spark.' in doc.read_text()
    assert "on / off" in _render(report.checkpoint_table(result, SETUP))


def test_run_checkpoint_alternates_the_modes_and_refuses_wrong_results(monkeypatch):
    calls = []

    def run_once(spark, system, job, workdir, checkpoint):
        calls.append(("on" if job.exactly_once else "off", job.events))
        return Run(system, "streaming", job.events, 1.0, (Batch(0, 1000, job.events),), {KEY: 5 if job.exactly_once else 4})

    monkeypatch.setattr(checkpoint_bench, "reference_counts", lambda n: Counter({KEY: 5}))
    monkeypatch.setattr(bench.ysb, "expected_view_count", lambda n: 5)
    monkeypatch.setattr(checkpoint_bench, "run_once", run_once)
    with pytest.raises(BenchMismatchError, match="exactly-once off: funke \\(streaming\\): 1 window\\(s\\) with another count"):
        run_checkpoint(_NoSpark(), events=10, rows_per_batch=5, rounds=2)
    assert calls == [("on", 10), ("off", 10), ("on", 10), ("off", 10), ("off", 10), ("on", 10)]  # warm-ups, then alternating


def test_cli_checkpoint_prints_the_table_and_appends_its_row(monkeypatch, tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")
    asked = {}

    def fake(spark, **options):
        asked.update(options)
        return _checkpoint_result()

    monkeypatch.setattr(bench, "session", lambda variant="base": _NoSpark())
    monkeypatch.setattr(checkpoint_bench, "run_checkpoint", fake)
    monkeypatch.setattr(report, "setup", lambda spark: SETUP)
    args = ["bench", "checkpoint", "--events", "3000000", "--batch-rows", "1000000", "--rounds", "3", "--doc", str(doc), "--write-docs"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert asked == {"events": 3_000_000, "rows_per_batch": 1_000_000, "rounds": 3, "warmup": True, "on_step": asked["on_step"]}
    assert "0.90" in r.output and f"appended a row to {doc}" in " ".join(r.output.split())
    row = doc.read_text().splitlines()[-1]
    assert row.split(" | ")[1] == "`funke bench checkpoint --events 3000000 --batch-rows 1000000 --rounds 3`"


def _progress(batch, start_ms, ms, watermark_ms, **phases):
    def iso(t):
        return dt.datetime.fromtimestamp(t / 1000, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    durations = {"triggerExecution": ms, **phases}
    marks = {"watermark": iso(watermark_ms)}
    return SimpleNamespace(batchId=batch, timestamp=iso(start_ms), durationMs=durations, eventTime=marks)


def test_latency_run_splits_each_row_along_the_batches_that_closed_and_emitted_its_window():
    # batch 1 reads the events past 5 s + the delay; batch 2 runs with the watermark past the window's end
    reports = [
        _progress(2, 12_000, 900, 5_000, addBatch=700, walCommit=50),
        _progress(0, 1_000, 500, 0, addBatch=300),
        _progress(1, 10_600, 800, 0, addBatch=600, walCommit=50),
    ]
    rows = [(5_000, 12_500), (5_000, 12_600), (20_000, 99_000)]  # the last window never closed in these batches
    r = latency_run("funke", 30, 1e5, "gen", rows, reports)
    assert r.samples_ms == (2_500, 2_600, 74_000)
    assert r.parts_ms == ((600, 800, 600, 500), (600, 800, 600, 600))
    assert all(sum(p) == s for p, s in zip(r.parts_ms, r.samples_ms, strict=False))
    assert [s.batch for s in r.timeline] == [0, 1, 2]
    assert r.parts_p50_ms == (600, 800, 600, 500)
    assert r.phases_p50_ms == {"addBatch": 600, "triggerExecution": 800, "walCommit": 50}
    result = dataclasses.replace(_result(), latency=(r, LatencyRun("plain PySpark", 30, 1e5, "rate", (1000,))))
    row = report.markdown_row(result, SETUP, "funke bench ysb", dt.datetime(2026, 1, 2, 3, 4))
    funke_cell = [c.strip() for c in row.strip("|").split("|")][4]
    assert "the emitting batch until the file) 0.60 / 0.80 / 0.60 / 0.50 s" in funke_cell
    assert "micro-batches (3), phases p50: addBatch 600, walCommit 50, whole batch 800 ms" in funke_cell
