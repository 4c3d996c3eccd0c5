"""The savepoint workflow from the command line: a job run by ``funke run`` in its own process is
listed, savepointed while it runs, stopped with a savepoint, and resumed from it, exactly."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from examples import ysb
from funke.cli.main import app
from funke.savepoints import read
from funke.savepoints.registry import Registry

pytestmark = pytest.mark.spark
EVENTS, RATE = 400_000, 40_000  # about 10 s of input: time to savepoint and stop it midway


def test_savepoint_stop_and_resume_from_another_process(tmp_path, monkeypatch, spark):
    home, out = tmp_path / "home", tmp_path / "out"
    monkeypatch.setenv("FUNKE_HOME", str(home))
    env = {**os.environ, "FUNKE_HOME": str(home), "FUNKE_SHUFFLE_PARTITIONS": "2", "FUNKE_MASTER": "local[2]"}
    command = [sys.executable, "-c", "from funke.cli.main import main; main()", "run", "examples.ysb:job", "--events", str(EVENTS), "--rate", str(RATE)]
    command += ["--output", str(out), "--name", "ysb-cli", "--no-live", "--json"]
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    runner = CliRunner()
    try:
        registry = Registry(home)
        deadline = time.monotonic() + 180
        while not _committed(home / "jobs" / "ysb-cli" / "checkpoint" / "campaign-counts"):
            assert child.poll() is None, child.stdout.read()
            assert time.monotonic() < deadline, "the job committed no micro-batch in 180 s"
            time.sleep(0.2)
        listed = runner.invoke(app, ["list"])
        assert "ysb-cli" in listed.output and "running" in listed.output, listed.output

        taken = runner.invoke(app, ["savepoint", "ysb-cli", str(tmp_path / "sps")])
        assert taken.exit_code == 0, taken.output
        running_sp = read(taken.output.strip())
        assert running_sp.job == "ysb-cli" and running_sp.batches["campaign-counts"] >= 0

        stopped = runner.invoke(app, ["stop", "ysb-cli", "--savepoint", str(tmp_path / "sps")])
        assert stopped.exit_code == 0, stopped.output
        assert child.wait(120) == 0
        assert registry.job("ysb-cli").status == "stopped"
        stop_sp = [s for s in registry.savepoints("ysb-cli") if s.path != str(running_sp.path)]
        assert len(stop_sp) == 1 and stop_sp[0].batches["campaign-counts"] >= running_sp.batches["campaign-counts"]
        said = " ".join(stopped.output.split())  # what it stopped, where, and the savepoint
        assert f"stopped job 'ysb-cli': campaign-counts after micro-batch {stop_sp[0].batches['campaign-counts']}; savepoint at {stop_sp[0].path}" in said, said
        listing = runner.invoke(app, ["savepoints", "ysb-cli"])
        assert str(running_sp.path.name) in listing.output.replace("\n", ""), listing.output
    finally:
        if child.poll() is None:
            child.kill()
    # `funke resume` (in this process) runs the code and options `funke run` started it with, from
    # the stop's savepoint: the output is exactly the uninterrupted run's
    resumed = runner.invoke(app, ["resume", "ysb-cli", "--from", stop_sp[0].path, "--no-live", "--json"])
    assert resumed.exit_code == 0, resumed.output
    rows = spark.read.parquet(str(out)).collect()
    assert sum(r["count"] for r in rows) == ysb.expected_view_count(EVENTS)
    assert len({(r["campaign_id"], r["window_start"]) for r in rows}) == len(rows)  # each window once
    # disposing removes it from disk and from the list
    gone = runner.invoke(app, ["savepoint", "--dispose", str(running_sp.path)])
    assert gone.exit_code == 0 and not running_sp.path.exists()
    assert str(running_sp.path) not in {s.path for s in registry.savepoints("ysb-cli")}


def _committed(checkpoint) -> bool:
    commits = checkpoint / "commits"
    return commits.is_dir() and any(p.name.isdigit() for p in commits.iterdir())
