"""YSB from the CLI: streaming and bounded runs write identical Parquet; counts equal the views generated."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import examples.ysb as ysb
from funke.cli.main import app

pytestmark = pytest.mark.spark
EVENTS = 60_000


def results(spark, path):
    df = spark.read.parquet(str(path))
    assert df.columns == ["campaign_id", "window_start", "window_end", "count"]
    return sorted(tuple(r) for r in df.collect())


def test_ysb_streaming_and_bounded_agree_and_count_every_view(spark, tmp_path):
    runner = CliRunner()
    a, b = tmp_path / "a", tmp_path / "b"
    r1 = runner.invoke(app, ["run", "examples.ysb:job", "--events", str(EVENTS), "--output", str(a), "--no-live", "--json"])
    assert r1.exit_code == 0, r1.output
    assert f'"input_rows": {EVENTS}' in r1.output
    r2 = runner.invoke(app, ["run", "examples.ysb:job", "--events", str(EVENTS), "--output", str(b), "--bounded", "--no-live"])
    assert r2.exit_code == 0, r2.output
    assert "summary" in r2.output and "rows_per_s" in r2.output
    ra, rb = results(spark, a), results(spark, b)
    assert ra == rb
    assert sum(r[3] for r in ra) == ysb.expected_view_count(EVENTS)
    assert len({r[0] for r in ra}) == ysb.CAMPAIGNS


def test_ysb_explain_puts_every_node_on_the_native_path():
    r = CliRunner().invoke(app, ["explain", "examples.ysb:job"])
    assert r.exit_code == 0, r.output
    node_lines = [line for line in r.output.splitlines() if "[" in line and "]" in line and "why" not in line]
    assert len(node_lines) >= 7
    assert all(line.rstrip().endswith("native") for line in node_lines), r.output
    assert "general" not in r.output


def test_cli_errors_are_one_line_and_exit_1():
    r = CliRunner().invoke(app, ["run", "examples.nope:job"])
    assert r.exit_code == 1 and "no module 'examples.nope'" in r.output
    r = CliRunner().invoke(app, ["run", "examples.ysb:job", "--rate", "x"])
    assert r.exit_code != 0
    r = CliRunner().invoke(app, ["run", "examples.ysb:missing"])
    assert r.exit_code == 1 and "has no job 'missing'" in r.output


def test_ysb_paced_by_rate_with_the_live_view(spark, tmp_path):
    """``--rate`` paces the generator: the events arrive over several micro-batches, none is lost."""
    events, rate = 40_000, 20_000
    out = tmp_path / "paced"
    r = CliRunner().invoke(app, ["run", "examples.ysb:job", "--events", str(events), "--rate", str(rate), "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert "summary" in r.output and "micro-batches" in r.output  # the live view's table, then the summary
    rows = results(spark, out)
    assert sum(row[3] for row in rows) == ysb.expected_view_count(events)
    batches = int(next(line for line in r.output.splitlines() if line.strip().startswith("│ batches")).split("│")[2].replace(",", ""))
    assert batches >= 3  # 40 000 events at 20 000/s cannot arrive in one or two batches
    elapsed = float(next(line for line in r.output.splitlines() if "elapsed_s" in line).split("│")[2].replace(",", ""))
    assert elapsed >= events / rate  # a lower bound only: pacing holds the source back, load only slows it further



def test_ysb_with_adaptive_micro_batches_counts_every_view(spark, tmp_path):
    """``batch_seconds``: the unthrottled generator sizes each micro-batch from the last one's
    duration; sizes change from batch to batch, and no event is lost or read twice."""
    import dataclasses

    import funke as fk

    events, out = 400_000, tmp_path / "adaptive"
    env = fk.StreamEnvironment(app="ysb-adaptive", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    # A 30 s target is far above what these micro-batches cost: each is larger than the last (up to twice).
    source = dataclasses.replace(ysb.events(events, batch_seconds=30), rows_per_batch=20_000)
    ysb.pipeline(env, source).sink_to(fk.sinks.files(str(out)), uid="campaign-counts")
    handle = env.execute()
    handle.wait(timeout=300)
    rows = [r for r in handle.states[0].batch_rows if r > 0]
    assert sum(rows) == events and handle.metrics()["input_rows"] == events
    assert rows[0] == 20_000 and rows[1] > rows[0] and rows[2] > rows[1] and rows[2] <= 4 * rows[0], rows
    assert sum(row[3] for row in results(spark, out)) == ysb.expected_view_count(events)
