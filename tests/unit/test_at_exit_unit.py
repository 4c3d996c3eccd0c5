"""The line a script prints at exit for each job it started that still runs."""

from __future__ import annotations

import gc
import io
import weakref
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


def test_a_job_that_has_ended_is_not_kept_once_another_starts(monkeypatch):
    """A handle holds its job's queries and plans: a process running job after job must not keep the ended ones."""
    monkeypatch.setattr(at_exit, "_started", [])
    monkeypatch.setattr(at_exit.atexit, "register", lambda fn: None)
    ended, running = Handle("ended", False), Handle("running", False)
    at_exit.started(ended)
    at_exit.started(running)
    ended.done = True
    gone = weakref.ref(ended)
    del ended
    at_exit.started(Handle("next", False))
    gc.collect()
    assert gone() is None
    assert [h.name for h in at_exit.unfinished()] == ["running", "next"]
