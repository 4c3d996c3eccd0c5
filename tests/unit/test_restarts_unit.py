"""When a job restarts a query after a transient Spark failure, and when it fails instead: the
decisions, without Spark (tests/spark/test_restarts.py runs one for real)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from funke.connectors.sinks import CollectSink
from funke.errors import JobFailedError
from funke.runtime import job as jobs

TRANSIENT = "org.apache.spark.SparkException: Python worker failed to connect back."


class FailedQuery:
    def __init__(self, error: str | None = None):
        self.error, self.isActive, self.id = error, error is None, object()

    def exception(self) -> str | None:
        return self.error

    def fail(self, error: str) -> None:
        self.error, self.isActive = error, False

    def stop(self) -> None:
        self.isActive = False


def streaming(error: str, monkeypatch) -> tuple[jobs.JobHandle, SimpleNamespace, list[int]]:
    """A streaming handle whose one query failed with ``error``; a restart starts a running query."""
    sink = SimpleNamespace(where=lambda: "sink 'out'", uid="out", spec=CollectSink())
    st = SimpleNamespace(query=FailedQuery(error), finished=False, restarts=0, sink=sink, plan=SimpleNamespace(lazy=False))
    started: list[int] = []

    def resume(handle, state):
        started.append(state.restarts)
        state.query = FailedQuery()

    monkeypatch.setattr(jobs, "resume_query", resume)
    return jobs.JobHandle("j", "streaming", None, [st]), st, started


def test_a_transient_failure_restarts_the_query_from_its_checkpoint(monkeypatch):
    handle, st, started = streaming(TRANSIENT, monkeypatch)
    handle._raise_if_failed()  # restarted, so not raised
    assert started == [1] and st.query.isActive and st.restarts == 1


def test_the_job_fails_after_max_restarts_transient_failures_in_a_row(monkeypatch):
    handle, st, started = streaming(TRANSIENT, monkeypatch)
    for _ in range(jobs.MAX_RESTARTS):
        handle._raise_if_failed()
        st.query.fail(TRANSIENT)
    with pytest.raises(JobFailedError, match="connect back"):
        handle._raise_if_failed()
    assert started == list(range(1, jobs.MAX_RESTARTS + 1))


def test_any_other_failure_fails_the_job_without_a_restart(monkeypatch):
    handle, st, started = streaming("ZeroDivisionError: division by zero", monkeypatch)
    with pytest.raises(JobFailedError, match="division by zero"):
        handle._raise_if_failed()
    assert started == [] and st.restarts == 0
