"""The line a script prints at exit for each job it started that still runs."""

from __future__ import annotations

import io
from dataclasses import dataclass

from funke.runtime import at_exit


@dataclass
class Handle:
    name: str
    done: bool


def test_only_the_jobs_still_running_are_named_one_line_each(monkeypatch):
    monkeypatch.setattr(at_exit, "_started", [])
    monkeypatch.setattr(at_exit.atexit, "register", lambda fn: None)
    finished, running, stopped = Handle("finished", True), Handle("clicks", False), Handle("stopped", True)
    for h in (finished, running, stopped):
        at_exit.started(h)
    out = io.StringIO()
    at_exit.warn_unfinished(out)
    assert out.getvalue().splitlines() == [at_exit.message(running)]
    assert at_exit.message(running).startswith("funke: job 'clicks' is still running as this script ends")
    running.done = True
    assert at_exit.unfinished() == []
