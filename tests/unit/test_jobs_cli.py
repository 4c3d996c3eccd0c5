"""``funke list`` and ``funke stop`` as a user reads them: addresses whole at 80 columns, and a stop
that says what it did, against a registry and a running job's request loop (``funke.runtime.control``)."""

from __future__ import annotations

import io
import os
import threading
from types import SimpleNamespace

import pytest
from rich.console import Console
from typer.testing import CliRunner

from funke.cli import jobs
from funke.cli.main import app
from funke.runtime.control import serve
from funke.savepoints.registry import Registry

ADDRESS = "http://127.0.0.1:38221"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FUNKE_HOME", str(tmp_path))
    registry = Registry(tmp_path)
    # a running job (this process stands for it) with a long checkpoint path, and an ended one
    registry.job_started("clicks-per-page", checkpoint=str(tmp_path / "jobs" / "clicks-per-page" / "checkpoint"), fingerprint="6ff6623b44d3")
    registry.note_endpoint("clicks-per-page", ADDRESS)
    registry.job_started("nightly", checkpoint=str(tmp_path / "jobs" / "nightly" / "checkpoint"), fingerprint="0123456789ab", pid=os.getpid())
    registry.job_ended("nightly", "finished")
    return tmp_path


def listed(width: int, monkeypatch) -> str:
    out = io.StringIO()
    monkeypatch.setattr(jobs, "console", Console(file=out, width=width, force_terminal=False))
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    return out.getvalue()


@pytest.mark.parametrize("width", [60, 80, 100])
def test_funke_list_never_cuts_an_address(home, monkeypatch, width):
    text = listed(width, monkeypatch)
    assert ADDRESS in text, text  # whole, on one line (it was "http://127…" at 80 columns)
    assert "clicks-per-page" in text.replace("\n", "").replace("│", "").replace(" ", "") and "nightly" in text
    assert all(len(line) <= width for line in text.splitlines()), text
    if width < 200:
        assert "left out at this width" in text and "funke list --json" in text


def test_funke_list_shows_every_column_when_it_fits(home, monkeypatch):
    text = listed(240, monkeypatch)
    assert ADDRESS in text and "6ff6623b44d3" in text and str(home / "jobs" / "clicks-per-page" / "checkpoint") in text
    assert "left out" not in text


def test_funke_stop_says_what_it_stopped(home):
    stopped = threading.Event()
    st = SimpleNamespace(sink=SimpleNamespace(uid="page-counts"), last_batch_id=41)
    handle = SimpleNamespace(name="clicks-per-page", states=[st], request_lock=threading.Lock(), stop=lambda savepoint=None: stopped.set())
    done = threading.Event()
    serve(handle, home, done)  # the running job's request loop, as start_job serves it
    try:
        result = CliRunner().invoke(app, ["stop", "clicks-per-page"])
    finally:
        done.set()
    assert result.exit_code == 0, result.output
    assert stopped.is_set()
    assert "stopping job 'clicks-per-page'" in result.output
    assert "stopped job 'clicks-per-page': page-counts after micro-batch 41" in result.output


def test_funke_stop_of_a_job_that_is_not_running_says_so(home):
    result = CliRunner().invoke(app, ["stop", "nightly"])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "nothing to stop: job 'nightly' is not running (status: finished since" in text, text
