"""``funke resume JOB --from SAVEPOINT``: what it refuses, before any Spark starts."""

from __future__ import annotations

import os

from typer.testing import CliRunner

from funke.cli.main import app
from funke.savepoints.registry import Registry


def test_resume_refuses_a_running_job_and_one_it_cannot_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("FUNKE_HOME", str(tmp_path))
    registry = Registry(tmp_path)
    runner = CliRunner()

    unknown = runner.invoke(app, ["resume", "nope", "--from", "/sp"])
    assert unknown.exit_code == 1 and "no job named 'nope'" in _text(unknown)

    registry.job_started("live", checkpoint="/c", fingerprint="f", pid=os.getpid())
    running = runner.invoke(app, ["resume", "live", "--from", "/sp"])
    assert running.exit_code == 1
    assert "job 'live' is running: stop it first (funke stop live --savepoint DIR), then resume" in _text(running)

    registry.job_started("from-python", checkpoint="/c", fingerprint="f")
    registry.job_ended("from-python", "stopped")
    bare = runner.invoke(app, ["resume", "from-python", "--from", "/sp"])
    assert bare.exit_code == 1
    assert "was not started by `funke run`, so funke does not know its code: pass --target MODULE:JOB" in _text(bare)


def test_a_launch_is_remembered_per_job_name(tmp_path):
    registry = Registry(tmp_path)
    assert registry.launch("ysb") is None
    registry.note_launch("ysb", "examples.ysb:job", {"events": 10, "rate": None, "output": "/o"})
    registry.note_launch("ysb", "examples.ysb:job", {"events": 20, "rate": None, "output": "/o"})
    assert registry.launch("ysb") == ("examples.ysb:job", {"events": 20, "output": "/o", "rate": None})


def _text(result) -> str:
    """The command's output with rich's line wrapping undone."""
    return " ".join(result.output.split())
