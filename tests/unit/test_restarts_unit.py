"""When a job restarts a query after a transient Spark failure, and when it fails instead: the
decisions, without Spark (tests/spark/test_restarts.py runs one for real)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from funke.connectors.sinks import CollectSink
from funke.errors import JobFailedError
from funke.runtime import job as jobs
from funke.runtime.writers import collected

TRANSIENT = "org.apache.spark.SparkException: Python worker failed to connect back."
#: What a foreachBatch writer's collect() raised in CI when the JVM's one-connection socket was gone.
SOCKET_REFUSED = (
    "An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):\n"
    "pyspark.errors.exceptions.base.PySparkRuntimeError: [CANNOT_OPEN_SOCKET] Can not open socket: "
    "[\"tried to connect to ('127.0.0.1', 34319), but an error occurred: [Errno 111] Connection refused\"]."
)


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


@pytest.mark.parametrize("error", [TRANSIENT, SOCKET_REFUSED])
def test_a_transient_failure_restarts_the_query_from_its_checkpoint(monkeypatch, error):
    handle, st, started = streaming(error, monkeypatch)
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


class StuckQuery(FailedQuery):
    """A running query whose micro-batch never ends (its status says a trigger is active)."""

    @property
    def status(self) -> dict[str, object]:
        return {"message": "Processing new data", "isDataAvailable": True, "isTriggerActive": True}


def test_a_batch_past_the_checkpoint_timeout_restarts_its_query_then_fails_the_job(monkeypatch):
    from funke.errors import CheckpointTimeoutError
    from funke.runtime.watchdog import start_watch

    handle, st, started = streaming(None, monkeypatch)
    st.query, st.batches, st.last_batch_id, st.batch_runs_ms, st.dead_letters = StuckQuery(), 4, 3, 0, 0
    monkeypatch.setattr(jobs, "resume_query", lambda handle, state: (started.append(state.restarts), setattr(state, "query", StuckQuery())))
    watchdog = start_watch(handle, timeout_ms=50)
    try:
        deadline = time.monotonic() + 60
        while handle.error is None:
            assert time.monotonic() < deadline, "the watchdog never gave up"
            time.sleep(0.01)
    finally:
        handle.stopping.set()
        watchdog.join()
    assert started == list(range(1, jobs.MAX_RESTARTS + 1))  # each restart stopped the stuck query first
    assert [e["headline"] for e in handle.exceptions] == ["sink 'out': micro-batch 4 did not commit within the checkpoint timeout (0.05 s)"] * 3
    with pytest.raises(JobFailedError, match="did not commit within the checkpoint timeout") as failed:
        handle._raise_if_failed()
    assert isinstance(failed.value.__cause__, CheckpointTimeoutError)


def test_a_query_waiting_for_data_or_committing_batches_is_not_restarted(monkeypatch):
    from funke.runtime.watchdog import BatchClock

    clock, now = BatchClock(), 0.0
    for batches in range(100):  # a batch commits each 1 s, under a 2 s timeout: never overdue
        for _ in range(2):
            now += 0.5
            assert not clock.overdue(running=True, batches=batches, now=now, timeout_s=2)
    assert not clock.overdue(running=False, batches=100, now=now + 1_000, timeout_s=2)  # idle for long
    assert not clock.overdue(running=True, batches=100, now=now + 1_001, timeout_s=2)  # a new batch: counted from here
    assert clock.overdue(running=True, batches=100, now=now + 1_003.5, timeout_s=2)


class RefusingFrame:
    """A DataFrame whose ``collect()`` is refused its socket ``refusals`` times, then gives its rows."""

    def __init__(self, refusals: int, error: str = "CANNOT_OPEN_SOCKET"):
        self.refusals, self.error, self.calls = refusals, error, 0

    def collect(self) -> list[int]:
        from pyspark.errors import PySparkRuntimeError

        self.calls += 1
        if self.calls <= self.refusals:
            raise PySparkRuntimeError(errorClass=self.error, messageParameters={"errors": "Connection refused"})
        return [1, 2]


def test_a_bounded_collect_refused_its_socket_is_asked_again_then_fails():
    df = RefusingFrame(2)
    assert collected(df) == [1, 2] and df.calls == 3
    df = RefusingFrame(3)
    with pytest.raises(Exception, match="CANNOT_OPEN_SOCKET"):
        collected(df)
    assert df.calls == 3
    df = RefusingFrame(1, "CANNOT_CONVERT_TYPE")  # (any other failure: at once)
    with pytest.raises(Exception, match="CANNOT_CONVERT_TYPE"):
        collected(df)
    assert df.calls == 1
