"""The handle users hold on a started job: ``wait``, ``stop``, ``savepoint``, ``metrics``, ``state``.

How a job starts is ``funke.runtime.start``; a streaming run's queries are ``funke.runtime.streaming``,
a bounded run is ``funke.runtime.bounded``; what the handle knows of each query is
``funke.runtime.query_state``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import Any

from funke.errors import CheckpointTimeoutError, JobFailedError, PlanError
from funke.runtime.exceptions import FAILED, exception_entry
from funke.runtime.failures import failure_message
from funke.runtime.metrics import WARMUP_BATCHES, percentile
from funke.runtime.progress import recent_rate, show_watermark
from funke.runtime.query_state import QueryState
from funke.runtime.queryable import StateView
from funke.runtime.streaming import MAX_RESTARTS, resume_query, start_query, transient
from funke.savepoints import take
from funke.savepoints.checkpoints import Checkpoints
from funke.savepoints.registry import Registry

#: How often ``wait()`` asks Spark whether a query has failed (two calls into the JVM per query); whether the job
#: is done it reads from the progress it has heard, every 50 ms.
FAILURE_POLL_S = 0.25

log = logging.getLogger(__name__)


class JobHandle:
    """A running (or finished) job. ``wait()`` blocks until a finite job ends or raises on failure."""

    def __init__(self, name: str, mode: str, spark: Any, states: list[QueryState]):
        self.name = name
        self.mode = mode
        self.spark = spark
        self.states = states
        self.started = time.monotonic()
        self.ended: float | None = None
        self.error: BaseException | None = None  # what failed the job outside a query (wait() raises it)
        self._lock = threading.Lock()
        self.listener: Any = None  # the StreamingQueryListener (classic Spark streaming runs)
        self.batch_thread: threading.Thread | None = None  # bounded runs
        self.poller: threading.Thread | None = None  # Spark Connect progress
        self.watchdog: threading.Thread | None = None  # the checkpoint timeout (funke.runtime.watchdog), streaming runs
        self.checkpoints: Checkpoints | None = None  # streaming runs
        self.by_query: dict[str, QueryState] = {}  # Spark query id -> its state
        self.connect = False
        self._lazy_started = False
        self.interval_ms = 0
        self.resumed = False  # True when a streaming run went on from an earlier run's checkpoint
        self.cores = 2
        self.bucket_ids: tuple[int, ...] = tuple(range(8))  # the general operators' key buckets' fk_b values (start_job sets them)
        self.home: str | None = None  # FUNKE_HOME: registry, savepoints, requests (streaming runs)
        self.layouts: dict[str, list[dict[str, Any]]] = {}  # sink uid of each query -> its stateful operators
        self.restored_from: str | None = None
        self.restore_notes: list[str] = []
        self.stopping = threading.Event()  # set when the job stops: the request loop (funke.runtime.control) ends
        self.request_lock = threading.Lock()  # held while a request from another process is answered
        self.plan_text = ""  # explain() of the job, for the dashboard
        self.plan_graph: list[dict[str, Any]] = []  # the plan as data (funke.plan.explain.plan_graph)
        self.http: Any = None  # the job's HTTP server (funke.runtime.server.OpsServer), streaming runs
        self._savepoint_s: list[float] = []
        self.exceptions: list[dict[str, Any]] = []  # failures and restarts (funke.runtime.exceptions)

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def finite(self) -> bool:
        return all(s.finite_metrics for s in self.states if not s.plan.lazy) or self.mode == "batch"

    @property
    def done(self) -> bool:
        if self.mode == "batch":
            return self.batch_thread is not None and not self.batch_thread.is_alive()
        return self.ended is not None or self.all_finished()

    def all_finished(self) -> bool:
        """Every query has processed all of its input (the dead-letter query: or was never needed)."""
        dead = any(s.dead_letters for s in self.states)
        return all(s.finished or (s.plan.lazy and s.query is None and not dead) for s in self.states)

    def wait(self, timeout: float | None = None) -> JobHandle:
        """Block until the job ends (finite input) or ``timeout`` seconds pass; raise JobFailedError on failure."""
        deadline = None if timeout is None else time.monotonic() + timeout
        checked = -FAILURE_POLL_S
        while True:
            if self.error is not None or time.monotonic() - checked >= FAILURE_POLL_S:
                checked = time.monotonic()
                self._raise_if_failed()
            if self.done:
                self.stop()
                self._raise_if_failed()
                if self.checkpoints is not None and self.all_finished():
                    self.checkpoints.mark_finished()
                    self._registry("finished")
                for st in self.states:
                    st.refresh_collect(self.spark)
                with self.request_lock:  # a stop-with-savepoint asked from outside finishes first
                    return self
            if deadline is not None and time.monotonic() >= deadline:
                return self
            time.sleep(0.05)

    def progressed(self, st: QueryState, progress: Any) -> None:
        """Fold one query progress in; remember in the checkpoint when the query has ended."""
        was, ends = st.finished, dict(st.end_batch)
        st.update(progress)
        if st.failure is not None and self.error is None:
            self.error = st.failure
        if self.checkpoints is not None:
            for metric, batch in st.end_batch.items():
                if metric not in ends:
                    self.checkpoints.note_end(st.sink.uid, metric, batch)
            if st.finished and not was:
                self.checkpoints.mark_finished(st.sink.uid)
        if st.dead_letters and not self._lazy_started:
            # The first bad row: start the dead-letter query (from the sources' beginning, so it sees every one).
            self._lazy_started = True
            threading.Thread(target=self._start_lazy, name=f"funke-dead-letters-{self.name}", daemon=True).start()

    def _start_lazy(self) -> None:
        with self._lock:
            if self.ended is not None:
                return
            try:
                for st in self.states:
                    if st.plan.lazy and st.query is None and not st.finished:
                        start_query(self, st)
            except BaseException as e:  # reported by wait()
                self.error = e

    def recover(self, query_id: str | None = None) -> None:
        """Restart, from its checkpoint, each query that failed transiently (``transient``), at
        most ``MAX_RESTARTS`` times per query: as Flink restarts a failed job from its last
        checkpoint. The checkpoint makes the restart exact: Spark replays the batch that did not
        commit, and funke's sinks take a replayed batch once. ``query_id``: first wait for that
        query to have terminated (the listener hears of it just before)."""
        if self.mode != "streaming":
            return
        failed = self.by_query.get(query_id) if query_id is not None else None
        query = failed.query if failed is not None else None
        if query is not None and str(query.id) == query_id:  # not already restarted
            with contextlib.suppress(Exception):  # it raises the failure it waited for
                query.awaitTermination()
        with self._lock:
            if self.ended is not None:
                return
            for st in self.states:
                q = st.query
                if q is None or st.finished or st.restarts >= MAX_RESTARTS or q.isActive:
                    continue
                err = q.exception()
                if err is None or not transient(err):
                    continue
                if not self._restart(st, f"{st.sink.where()} failed transiently: {str(err).splitlines()[0]}", err):
                    return

    def restart_overdue(self, st: QueryState, timeout_s: float) -> None:
        """Stop ``st``'s query, whose micro-batch has run past the checkpoint timeout
        (``funke.runtime.watchdog``), and start it again from its checkpoint, at most
        ``MAX_RESTARTS`` times; then fail the job naming the timeout."""
        why = f"{st.sink.where()}: micro-batch {st.last_batch_id + 1} did not commit within the checkpoint timeout ({timeout_s:g} s)"
        with self._lock:
            if self.ended is not None or st.query is None or not st.query.isActive:
                return
            if st.restarts >= MAX_RESTARTS:
                self.error = CheckpointTimeoutError(f"{why}, after {st.restarts} restarts from its checkpoint")
                return
            try:
                st.query.stop()
            except BaseException as e:  # noqa: BLE001 (reported by wait())
                self.error = e
                return
            self._restart(st, why, why)

    def _restart(self, st: QueryState, why: str, cause: Any) -> bool:
        """(Holding the lock.) Start ``st``'s stopped or failed query again from its checkpoint,
        noting why; False when that failed (``wait()`` reports it)."""
        st.restarts += 1
        action = f"restarted from its checkpoint ({st.restarts} of {MAX_RESTARTS})"
        self.exceptions.append(exception_entry(st.sink.uid, why, cause, action))
        log.warning("job %s: %s; %s", self.name, why, action)
        try:
            resume_query(self, st)
        except BaseException as e:  # noqa: BLE001 (reported by wait())
            self.error = e
            return False
        return True

    def _raise_if_failed(self) -> None:
        self.recover()
        if self.error is not None:
            error = JobFailedError(failure_message(self.name, "", self.error))
            self._fail(error, None, self.error)
            raise error from self.error
        if self.mode == "streaming":
            for s in self.states:
                if s.query is not None and not s.query.isActive and s.query.exception() is not None and not s.finished:
                    err = s.query.exception()
                    error = JobFailedError(failure_message(self.name, s.sink.where(), err))
                    self._fail(error, s.sink.uid, err)
                    raise error

    def _fail(self, error: JobFailedError, query: str | None, cause: Any) -> None:
        """Stop the queries and note the failure; the HTTP server goes on serving the dashboard
        with the failure in its exceptions view until ``stop()`` or the process ends."""
        if not any(e["action"] == FAILED for e in self.exceptions):
            self.exceptions.append(exception_entry(query, str(error), cause, FAILED))
        self._stop(serving=True)
        self._registry("failed")

    def stop(self, *, savepoint: str | None = None) -> Any:
        """Stop every query of the job (idempotent). ``savepoint``: then take a savepoint of
        where it stopped into that directory (returned), as Flink's stop-with-savepoint."""
        self._stop()
        if self.mode == "streaming" and self.home is not None and not self.all_finished():
            self._registry("stopped")
        return self.savepoint(savepoint) if savepoint is not None else None

    def savepoint(self, target: str | None = None) -> Any:
        """A savepoint of the job as of each query's last committed micro-batch, taken while it
        runs (or after it stopped), into ``target`` (default ``$FUNKE_HOME/jobs/<job>/savepoints``)."""
        if self.mode != "streaming" or self.checkpoints is None or self.home is None:
            raise PlanError(f"job '{self.name}': savepoints are taken of streaming runs (a bounded run has no checkpoint)")
        where = target or str(Path(self.home) / "jobs" / self.name / "savepoints")
        sp = take(self.checkpoints.root, job=self.name, target=where, layouts=self.layouts, spark=self.spark)
        self._savepoint_s.append(sp.manifest["took_ms"] / 1000)
        Registry(self.home).add_savepoint(str(sp.path), self.name, batches=sp.batches, size_bytes=sp.manifest["size_bytes"], took_ms=sp.manifest["took_ms"])
        return sp

    def savepoint_durations(self) -> list[float]:
        """Seconds each savepoint of this run took."""
        return list(self._savepoint_s)

    def state(self, uid: str) -> Any:
        """Queryable state: operator ``uid``'s keyed state as of the last committed micro-batch
        (``.keys()``, ``.get(key)``, ``.rows()``; see ``funke.runtime.queryable``)."""
        return StateView(self, uid)

    @property
    def http_address(self) -> str | None:
        """Where the job's HTTP server listens (``/metrics``, ``/jobs/<name>/state/<uid>``, the dashboard)."""
        return self.http.address if self.http is not None else None

    def _registry(self, status: str) -> None:
        if self.home is None:
            return
        try:
            Registry(self.home).job_ended(self.name, status)
        except Exception as e:  # noqa: BLE001 (the registry is bookkeeping: never the reason a job fails)
            log.warning("job %s: could not note status %s in the registry: %s", self.name, status, e)

    def _stop(self, *, serving: bool = False) -> None:
        self.stopping.set()
        with self._lock:
            if self.mode == "streaming":
                for s in self.states:
                    if s.query is not None and s.query.isActive:
                        s.query.stop()
                if self.listener is not None:
                    try:
                        self.spark.streams.removeListener(self.listener)
                    except Exception:  # the session may be gone already
                        pass
                    self.listener = None
            if self.ended is None:
                self.ended = time.monotonic()
        if self.http is not None and not serving:
            self.http.stop()

    # -- metrics -----------------------------------------------------------------------
    def metrics(self) -> dict[str, Any]:
        """Totals so far: rows in/out, batches, watermark, rows/s overall and in steady state."""
        elapsed = (self.ended or time.monotonic()) - self.started
        rows = sum(s.input_rows for s in self.states)
        out: dict[str, Any] = {
            "job": self.name,
            "mode": self.mode,
            "elapsed_s": round(elapsed, 3),
            "input_rows": rows,
            "output_rows": sum(s.output_rows for s in self.states),
            "batches": max((s.batches for s in self.states), default=0),
            "watermark": show_watermark([s.watermark for s in self.states]),
            "late_rows_dropped": sum(s.late_rows_dropped for s in self.states),
            "dead_letters": sum(s.dead_letters for s in self.states),
            "restarts": sum(s.restarts for s in self.states),
            "rows_per_s": round(rows / elapsed) if elapsed > 0 else 0,
        }
        if self.mode == "streaming":
            # each query's rows over its last micro-batches' wall time (to now while the job runs)
            now = None if self.ended is not None else time.time()
            recent = [r for r in (recent_rate(s.history, now) for s in self.states) if r is not None]
            out["rows_per_s_now"] = round(sum(recent)) if recent else None
            out["resumed"] = self.resumed
            if self.restored_from is not None:
                out["restored_from"] = self.restored_from
        after_warmup = [list(zip(s.batch_ms, s.batch_rows))[WARMUP_BATCHES:] for s in self.states]
        steady = [(ms, r) for batches in after_warmup for ms, r in batches if r > 0]
        if steady:
            total_ms = sum(ms for ms, _ in steady)
            out["steady_rows_per_s"] = round(sum(r for _, r in steady) / (total_ms / 1000)) if total_ms else None
        batch_ms = sorted(ms for s in self.states for ms in s.batch_ms)
        if batch_ms:
            out["batch_ms_p50"] = batch_ms[len(batch_ms) // 2]
            out["batch_ms_p99"] = batch_ms[min(len(batch_ms) - 1, int(len(batch_ms) * 0.99))]
        # The same micro-batches as the steady rate (each query's first ones left out): what benchmarks compare.
        steady_ms = [ms for batches in after_warmup for ms, _ in batches]
        if steady_ms:
            out["steady_batch_ms_p50"] = percentile(steady_ms, 0.5)
            out["steady_batch_ms_p99"] = percentile(steady_ms, 0.99)
        return out
