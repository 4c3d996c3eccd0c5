"""Running a compiled job on Spark and the handle users hold: ``wait``, ``stop``, ``metrics``.

Streaming: one Spark streaming query per sink, started together. A listener folds every
query progress into running totals (rows, batches, watermark, windows emitted), and
notices when each finite source's end-of-input row has passed and the batch after it,
which fires the last windows, has committed: then the job is finished and stops itself.

Batch (``bounded=True``): the same plan as Spark batch jobs, run in a background thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from funke.connectors.base import BatchSink
from funke.connectors.partitions import commit
from funke.connectors.sinks import CollectSink, FileSink, PrintSink
from funke.errors import JobFailedError, PlanError
from funke.runtime import at_exit
from funke.runtime.failures import failure_message
from funke.plan import nodes as n
from funke.runtime.checkpoints import Checkpoints
from funke.runtime.control import check_restore, fingerprint, restore, serve, state_layout
from funke.runtime.exceptions import FAILED, exception_entry
from funke.runtime.metrics import RECENT_BATCHES, WARMUP_BATCHES, DurationHistogram, percentile
from funke.runtime.progress import HISTORY_BATCHES, BatchRecord, recent_rate, record, show_watermark, watermark_ms
from funke.runtime.registry import Registry
from funke.runtime.watermarks import Beat, Clock, DueTimers
from funke.spark.file_sink import stream_writer, write_frame

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from funke.config import FunkeSettings
    from funke.spark.compiler import Compiled, QueryPlan

#: Failures of Spark's machinery rather than of the job, which a restart from the checkpoint
#: rides out: Spark gives the one Python worker it starts on its own rather than through its
#: daemon (a Python streaming source's runner, started with the query) a fixed 10 s to connect
#: back, which a loaded machine can miss. Bounded runs start none.
TRANSIENT_FAILURES = ("Python worker failed to connect back",)
#: How often one query of a run is restarted after a transient failure before the job fails.
MAX_RESTARTS = 3


def transient(error: Any) -> bool:
    """Whether a query's failure is one of Spark's transient ones (``TRANSIENT_FAILURES``).

    >>> transient("org.apache.spark.SparkException: Python worker failed to connect back.")
    True
    >>> transient("ZeroDivisionError: division by zero")
    False
    """
    text = str(error)
    return any(t in text for t in TRANSIENT_FAILURES)


class StreamEnvironment(Protocol):
    """What the runtime reads of a job's environment (``funke.api.StreamEnvironment``; the
    runtime sits below the API and does not import it)."""

    app: str
    spark: Any
    settings: FunkeSettings
    spark_conf: dict[str, str]
    checkpoint_dir: str | None
    checkpoint_interval_ms: int

    @property
    def sinks(self) -> tuple[n.Sink, ...]: ...

    def dead_letter_sink(self, job: str) -> Any: ...

    def explain(self, *, bounded: bool | None = None) -> str: ...


@dataclass
class QueryState:
    """What the listener has learned about one query (one sink, or several split from one operator)."""

    plan: QueryPlan
    query: Any = None
    batches: int = 0
    input_rows: int = 0
    output_rows: int = 0
    late_rows_dropped: int = 0
    dead_letters: int = 0
    watermark: str | None = None
    last_batch_id: int = -1
    end_batch: dict[str, int] = field(default_factory=dict)
    #: The last RECENT_BATCHES micro-batches' durations and rows (charts, percentiles); every
    #: batch's duration goes into ``batch_seconds`` and the checkpoint writes' into ``checkpoint_seconds``.
    batch_ms: deque[int] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))
    batch_rows: deque[int] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))
    batch_at: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))  # wall clock at each batch's end
    batch_seconds: DurationHistogram = field(default_factory=DurationHistogram)
    checkpoint_seconds: DurationHistogram = field(default_factory=DurationHistogram)
    finished: bool = False
    memory_table: str | None = None  # Spark Connect: the memory sink a collect sink reads
    #: Spark's stateful operators of the query, as of the last batch: "<name>#<i>" -> (rows, bytes).
    state: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Rows per observe point (``funke_src_<uid>``, ``funke_wm_<uid>``, ``funke_out_<uid>``), summed over batches.
    observed_rows: dict[str, int] = field(default_factory=dict)
    #: The last batch's phase durations (ms): Spark's ``durationMs`` (walCommit, commitOffsets, ...).
    durations: dict[str, int] = field(default_factory=dict)
    #: Watermarks funke computes for the query's operators (``funke.runtime.watermarks``).
    clocks: list[Clock] = field(default_factory=list)
    #: When the query's general operators on Spark's watermark need a batch (``funke.runtime.watermarks``).
    beats: list[Beat] = field(default_factory=list)
    #: Times the query was restarted from its checkpoint after a transient failure (``transient``).
    restarts: int = 0
    #: The last micro-batches as records (``funke.runtime.progress``): rates, checkpoint history, lag.
    history: deque[BatchRecord] = field(default_factory=lambda: deque(maxlen=HISTORY_BATCHES))
    #: What failed the query in funke's own bookkeeping (a partition commit): the job fails with it.
    failure: BaseException | None = None

    def __post_init__(self) -> None:
        self.clocks = [Clock(c.path, c.inputs, c.uid, timers=DueTimers(c.buckets, c.observe)) for c in self.plan.compiled.clocks]
        for clock in self.clocks:
            clock.write()  # the first micro-batch reads -infinity
        self.beats = [Beat(b.path, DueTimers(b.buckets, b.observe)) for b in self.plan.compiled.beats]
        for beat in self.beats:
            beat.write()  # a new run: the first micro-batch beats

    def refresh_collect(self, spark: Any) -> None:
        """Spark Connect: copy the memory sink's rows into the collect sink."""
        if self.memory_table is not None:
            rows = [r.asDict() for r in spark.sql(f"SELECT * FROM `{self.memory_table}`").collect()]
            self.sink.spec.add_batch(0, rows)

    @property
    def sink(self) -> n.Sink:
        return self.plan.sinks[0]

    @property
    def compiled(self) -> Compiled:
        return self.plan.compiled

    @property
    def finite_metrics(self) -> list[str]:
        return [m.name for m in self.compiled.metrics if m.finite]

    def update(self, p: Any) -> None:
        observed = p.observedMetrics or {}
        if self.clocks or self.beats:
            folded = {name: _observed(row) for name, row in observed.items()}
            for clock in self.clocks:
                clock.update(folded, batch=p.batchId)
            for beat in self.beats:
                beat.update(folded, (p.eventTime or {}).get("watermark"))
        rows = 0
        counts: dict[str, int] = {}  # this batch's rows per observe point
        for m in self.compiled.metrics:
            row = observed.get(m.name)
            if row is None:
                continue
            d = _observed(row)
            if m.counts_rows:
                rows += int(d.get("rows") or 0)
                counts[m.name] = counts.get(m.name, 0) + int(d.get("rows") or 0)
            if m.operator is not None:
                for field, direction in (("rows_in", "in"), ("rows_out", "out")):
                    if field in d:
                        key = f"{direction}:{m.operator}"
                        counts[key] = counts.get(key, 0) + int(d[field] or 0)
            for field, key in m.counts.items():
                if field in d:
                    counts[key] = counts.get(key, 0) + int(d[field] or 0)
            self.late_rows_dropped += int(d.get("dropped") or 0)
            self.dead_letters += int(d.get("dead") or 0)
            if m.finite and d.get("eos") == 1 and m.name not in self.end_batch:
                self.end_batch[m.name] = p.batchId
        out = observed.get(f"funke_out_{_safe(self.sink.uid)}")
        produced = int(_observed(out).get("rows") or 0) if out is not None else 0
        if out is not None and len(self.plan.sinks) == 1:  # a split query counts every sink's rows at once
            key = f"funke_out_{_safe(self.sink.uid)}"
            counts[key] = counts.get(key, 0) + produced
        for key, rows_here in counts.items():
            self.observed_rows[key] = self.observed_rows.get(key, 0) + rows_here
        while self.history and self.history[-1].batch >= p.batchId:  # a batch replayed after a restart counts once
            self.history.pop()
        self.history.append(record(p, rows, counts))
        self.batches += 1
        self.input_rows += rows
        self.output_rows += produced
        self.last_batch_id = max(self.last_batch_id, p.batchId)
        self.watermark = (p.eventTime or {}).get("watermark", self.watermark)
        self.late_rows_dropped += sum(int(getattr(s, "numRowsDroppedByWatermark", 0) or 0) for s in (p.stateOperators or []))
        self.state = {
            f"{getattr(s, 'operatorName', 'state')}#{i}": (int(getattr(s, "numRowsTotal", 0) or 0), int(getattr(s, "memoryUsedBytes", 0) or 0))
            for i, s in enumerate(p.stateOperators or [])
        }
        self.durations = {k: int(v) for k, v in (p.durationMs or {}).items()}
        self.record_batch(self.durations.get("triggerExecution", 0), rows)
        self.checkpoint_seconds.observe((self.durations.get("walCommit", 0) + self.durations.get("commitOffsets", 0)) / 1000)
        ended = self.ended_in(self.last_batch_id)
        try:  # (before the query shows as finished: wait() returns then)
            _commit_partitions(self, final=ended)
        except (OSError, ValueError) as e:  # (a partition that cannot be committed fails the job, as in Flink)
            self.failure, ended = e, False
        if ended:
            self.finished = True

    def record_batch(self, ms: int, rows: int) -> None:
        self.batch_ms.append(ms)
        self.batch_rows.append(rows)
        self.batch_at.append(time.time())
        self.batch_seconds.observe(ms / 1000)

    def ended_in(self, last_batch: int) -> bool:
        """True when every finite source's end row has been read and, by ``last_batch``, acted on."""
        names = self.finite_metrics
        if not names or not all(k in self.end_batch for k in names):
            return False
        last_end = max(self.end_batch[k] for k in names)
        # The batch carrying the end row raises the watermark; the next one fires the windows.
        return last_batch >= last_end and (not self.compiled.stateful or last_batch > last_end)


def _observed(row: Any) -> dict[str, Any]:
    """An observed-metrics row as a dict.

    The listener hands over proper Rows; progress parsed from JSON (``recentProgress``,
    Spark Connect) holds ``Row(values=[...], schema={...})`` instead.
    """
    d = row.asDict()
    if set(d) == {"values", "schema"} and isinstance(d["schema"], dict):
        return dict(zip((f["name"] for f in d["schema"]["fields"]), d["values"]))
    return d


def _safe(uid: str) -> str:
    from funke.spark.compiler import _safe as s

    return s(uid)


class JobHandle:
    """A running (or finished) job. ``wait()`` blocks until a finite job ends or raises on failure."""

    def __init__(self, name: str, mode: str, spark: Any, states: list[QueryState]):
        self.name = name
        self.mode = mode
        self.spark = spark
        self.states = states
        self.started = time.monotonic()
        self.ended: float | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._listener: Any = None
        self._thread: threading.Thread | None = None  # bounded runs
        self._poller: threading.Thread | None = None  # Spark Connect progress
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
        self._serving = threading.Event()
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
            return self._thread is not None and not self._thread.is_alive()
        return self.ended is not None or self._all_finished()

    def _all_finished(self) -> bool:
        """Every query has processed all of its input (the dead-letter query: or was never needed)."""
        dead = any(s.dead_letters for s in self.states)
        return all(s.finished or (s.plan.lazy and s.query is None and not dead) for s in self.states)

    def wait(self, timeout: float | None = None) -> JobHandle:
        """Block until the job ends (finite input) or ``timeout`` seconds pass; raise JobFailedError on failure."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._raise_if_failed()
            if self.done:
                self.stop()
                self._raise_if_failed()
                if self.checkpoints is not None and self._all_finished():
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
        if st.failure is not None and self._error is None:
            self._error = st.failure
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
                        _start_query(self, st)
            except BaseException as e:  # reported by wait()
                self._error = e

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
                st.restarts += 1
                why = str(err).splitlines()[0]
                self.exceptions.append(exception_entry(st.sink.uid, f"{st.sink.where()} failed transiently: {why}", err, f"restarted from its checkpoint ({st.restarts} of {MAX_RESTARTS})"))
                log.warning("job %s: %s failed transiently (%s); restart %d of %d from its checkpoint", self.name, st.sink.where(), why, st.restarts, MAX_RESTARTS)
                try:
                    _resume_query(self, st)
                except BaseException as e:  # reported by wait()
                    self._error = e
                    return

    def _raise_if_failed(self) -> None:
        self.recover()
        if self._error is not None:
            error = JobFailedError(failure_message(self.name, "", self._error))
            self._fail(error, None, self._error)
            raise error from self._error
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
        if self.mode == "streaming" and self.home is not None and not self._all_finished():
            self._registry("stopped")
        return self.savepoint(savepoint) if savepoint is not None else None

    def savepoint(self, target: str | None = None) -> Any:
        """A savepoint of the job as of each query's last committed micro-batch, taken while it
        runs (or after it stopped), into ``target`` (default ``$FUNKE_HOME/jobs/<job>/savepoints``)."""
        from funke.savepoints import take

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
        from funke.runtime.queryable import StateView

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
        self._serving.set()
        with self._lock:
            if self.mode == "streaming":
                for s in self.states:
                    if s.query is not None and s.query.isActive:
                        s.query.stop()
                if self._listener is not None:
                    try:
                        self.spark.streams.removeListener(self._listener)
                    except Exception:  # the session may be gone already
                        pass
                    self._listener = None
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


# -- starting -------------------------------------------------------------------------------


def start_job(
    env: StreamEnvironment,
    *,
    mode: str,
    name: str,
    fresh: bool = False,
    from_savepoint: str | None = None,
    allow_non_restored_state: bool = False,
) -> JobHandle:
    from funke.spark.compiler import compile_job
    from funke.spark.session import get_session, session_cores

    if from_savepoint is not None and (mode == "batch" or fresh):
        raise PlanError("from_savepoint= resumes a streaming run: it goes with neither bounded=True nor fresh=True")
    if mode == "batch":
        unbounded = [s.spec.describe() for s in _sources(env.sinks) if not _batchable(s.spec)]
        if unbounded:
            raise PlanError(f"bounded run: source(s) {', '.join(unbounded)} never end; give them an end (events=N) or run unbounded")
    realtime = mode == "streaming" and getattr(env, "latency_mode", "") == "realtime"
    if realtime:  # refused before anything connects or starts
        from funke.plan.realtime import check_realtime

        check_realtime(env.sinks)
    for sink in env.sinks:
        if isinstance(sink.spec, BatchSink):
            sink.spec.check(name)
    settings, spark_conf = env.settings, env.spark_conf
    if realtime:
        from funke.spark.realtime import check_interval, check_slots, sized_session

        settings, spark_conf = sized_session(env.settings, env.spark_conf, env.sinks, given=env.spark is not None)
    spark = get_session(settings, spark_conf, env.app, env.spark)
    if realtime:
        check_interval(spark, env.checkpoint_interval_ms)
        check_slots(spark, env.sinks)
    cores = session_cores(spark, env.settings, given=env.spark is not None)
    checkpoints = None if mode == "batch" else Checkpoints.for_job(env, name, spark)
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    buckets = _kept_buckets(checkpoints, fresh, from_savepoint, cores, partitions)
    plans = compile_job(
        spark,
        env.sinks,
        mode=mode,
        cores=cores,
        job=name,
        dead_letters=env.dead_letter_sink(name),
        operator_metrics=env.settings.operator_metrics,
        latency_mode=env.latency_mode,
        buckets=buckets,
    )
    states = [QueryState(plan) for plan in plans]
    handle = JobHandle(name, mode, spark, states)
    handle.cores, handle.bucket_ids = cores, buckets
    at_exit.started(handle)
    if mode == "batch":
        handle._thread = threading.Thread(target=_run_batch, args=(handle,), name=f"funke-{name}", daemon=True)
        handle._thread.start()
        return handle
    handle.checkpoints = checkpoints
    handle.home = str(env.settings.home)
    handle.layouts = {st.sink.uid: state_layout(st.plan.sinks) for st in states}
    if from_savepoint is not None:
        _restore(env, handle, from_savepoint, allow_non_restored_state)
    _start_streaming(env, handle, fresh)
    Registry(handle.home).job_started(name, checkpoint=handle.checkpoints.root, fingerprint=fingerprint(handle.layouts))
    serve(handle, handle.home, handle._serving)
    if env.settings.http:
        _serve_http(env, handle)
    return handle


def _kept_buckets(
    checkpoints: Checkpoints | None, fresh: bool, from_savepoint: str | None, cores: int, partitions: int
) -> tuple[int, ...]:
    """The key buckets (``fk_b`` values) of the job's general operators: those its savepoint or the
    checkpoint it resumes was started with, since a key's state is in the bucket its hash named among
    them whatever the cores are now; a new job's (or one that ran to its end, which starts afresh):
    four a core, their values spread evenly over the ``partitions`` of Spark's shuffle. A savepoint or
    checkpoint older than the record gets what every job had then: ``0..4 * cores - 1``."""
    from funke.spark.compiler import balanced_bucket_ids, default_buckets

    before_the_record = tuple(range(default_buckets(cores)))
    if from_savepoint is not None:
        from funke.savepoints import read

        return Checkpoints(str(read(from_savepoint).path / "checkpoint")).recorded_buckets() or before_the_record
    if checkpoints is not None and not fresh and not checkpoints.finished():
        recorded = checkpoints.recorded_buckets()
        if recorded:
            return recorded
        if checkpoints.has_progress():
            return before_the_record
    return balanced_bucket_ids(default_buckets(cores), partitions)


def _serve_http(env: StreamEnvironment, handle: JobHandle) -> None:
    from funke.plan.explain import plan_graph
    from funke.runtime.dashboard import spark_ui
    from funke.runtime.server import OpsServer

    handle.plan_text = env.explain(bounded=False)
    handle.plan_graph = plan_graph(env.sinks)
    handle.http = OpsServer(handle, host=env.settings.http_host, port=env.settings.http_port, home=Path(env.settings.home))
    try:
        address = handle.http.start()
    except BaseException:
        handle.stop()
        raise
    Registry(env.settings.home).note_endpoint(handle.name, address)
    Registry(env.settings.home).note_spark_ui(handle.name, spark_ui(handle.spark))


def _restore(env: StreamEnvironment, handle: JobHandle, path: str, allow_non_restored_state: bool) -> None:
    """Check the savepoint against the job (Flink's rules), then make it the job's checkpoint."""
    from funke.savepoints import read

    assert handle.checkpoints is not None
    if handle.checkpoints.uri:
        raise PlanError(f"restoring a savepoint into {handle.checkpoints.root}: savepoints restore into a local checkpoint_dir")
    sp = read(path)
    handle.restore_notes = check_restore(sp, handle.layouts, allow_non_restored_state=allow_non_restored_state)
    files = {st.sink.uid: [s.spec.path for s in st.plan.sinks if isinstance(s.spec, FileSink)] for st in handle.states}
    _unload_state_stores(handle.spark)
    restore(sp, Path(handle.checkpoints._local()), handle.layouts, files)
    handle.restored_from = str(sp.path)


def _sources(sinks: tuple[n.Sink, ...]) -> list[n.Source]:
    return [x for x in n.walk(sinks) if isinstance(x, n.Source)]


def _trigger_interval(checkpoint_ms: int, sinks: list[n.Sink]) -> int:
    """The query's micro-batch interval: the checkpoint interval, or the listing interval of the
    monitored file sources it reads (Spark lists a file source's directory once per micro-batch)."""
    from funke.connectors.sources import FileSource

    monitored = {s.spec.monitor_ms for s in _sources(tuple(sinks)) if isinstance(s.spec, FileSource) and s.spec.monitor_ms}
    if not monitored:
        return checkpoint_ms
    if len(monitored) > 1 or (checkpoint_ms and checkpoint_ms not in monitored):
        raise PlanError(
            f"{', '.join(s.where() for s in sinks)} reads files monitored every {' and '.join(f'{m} ms' for m in sorted(monitored))}"
            + (f" with checkpoints every {checkpoint_ms} ms" if checkpoint_ms else "")
            + ": a Spark query lists its file sources once per micro-batch, so these must be one interval"
        )
    return monitored.pop()


def _batchable(spec: Any) -> bool:
    return getattr(spec, "batchable", spec.bounded)


def _commit_partitions(st: QueryState, *, final: bool) -> None:
    """Flink's partition commit for the query's partitioned file sinks after a micro-batch (``final``:
    every partition, the query has ended): ``funke.connectors.partitions``."""
    wm = watermark_ms(st.watermark)
    for s in st.plan.sinks:
        spec = s.spec
        if isinstance(spec, FileSink) and spec.commit is not None:
            try:
                commit(spec.path, spec.partition_by, spec.commit, watermark_ms=None if wm is None else int(wm),
                       now_ms=int(time.time() * 1000), final=final)  # fmt: skip
            except ValueError as e:
                raise ValueError(f"{s.where()}: a partition cannot be committed: {e}") from e


def _prepare_file_sink(spec: FileSink, fresh: bool) -> None:
    path = Path(spec.path)
    if fresh and path.exists() and any(path.iterdir()):
        if not spec.overwrite:
            raise PlanError(
                f"sink {spec.describe()}: the directory is not empty and this run starts from a fresh checkpoint, "
                "so Spark's file sink would skip batches it thinks it wrote: choose an empty directory or pass overwrite=True"
            )
        shutil.rmtree(path)


def _start_streaming(env: StreamEnvironment, handle: JobHandle, fresh: bool) -> None:
    from funke.spark.session import is_connect

    handle.connect = is_connect(handle.spark)
    handle.interval_ms = env.checkpoint_interval_ms
    if not handle.connect:
        handle._listener = _listener(handle, handle.by_query)
        handle.spark.streams.addListener(handle._listener)
    checkpoints = handle.checkpoints
    assert checkpoints is not None
    if fresh or checkpoints.finished():
        _unload_state_stores(handle.spark)
        checkpoints.wipe()
    handle.resumed = checkpoints.has_progress()
    checkpoints.record_buckets(handle.bucket_ids)
    try:
        for st in handle.states:
            if checkpoints.query_finished(st.sink.uid):
                st.finished = True  # ended in an earlier run: nothing left to read
            elif not st.plan.lazy or checkpoints.has_query(st.sink.uid):
                _resume_query(handle, st)
    except BaseException:
        handle.stop()
        raise
    if handle.connect:
        handle._poller = threading.Thread(target=_poll_progress, args=(handle,), name=f"funke-progress-{handle.name}", daemon=True)
        handle._poller.start()


def _resume_query(handle: JobHandle, st: QueryState) -> None:
    """Start ``st``'s query where its checkpoint says it is: after a crashed or stopped run,
    or after this run's query failed transiently."""
    checkpoints = handle.checkpoints
    assert checkpoints is not None
    st.end_batch.update(checkpoints.ends(st.sink.uid))  # end rows read before a crash
    if st.ended_in(checkpoints.last_committed(st.sink.uid)):
        st.finished = True  # ... and the batch after them committed too
        return
    if st.clocks:  # funke's watermarks go on from where the last planned batch left them
        kept = {o.get("id"): o for o in checkpoints.last_source_offsets(st.sink.uid) if isinstance(o, dict)}
        for clock in st.clocks:
            if clock.uid in kept:
                clock.restore(kept[clock.uid])
    _start_query(handle, st)


def _unload_state_stores(spark: Any) -> None:
    """Before the job's checkpoint is replaced (wiped, or a savepoint's copied in): close the
    state stores an earlier run left loaded, when no query runs (classic Spark).

    Spark keeps a stopped query's state store providers loaded until its maintenance thread
    unloads them, and that thread may first upload a snapshot into the checkpoint: after a
    wipe, the new run then found ``state/`` not empty on batch 0
    (STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY); after a restore, a state version of the
    earlier run could land among the savepoint's. With no query running, nothing uses them.
    """
    from funke.spark.session import is_connect

    if is_connect(spark) or spark.streams.active:
        return
    try:
        spark._jvm.org.apache.spark.sql.execution.streaming.state.StateStore.stop()
    except Exception as e:  # noqa: BLE001 (best effort: the wipe goes on)
        log.warning("could not unload Spark's state stores before wiping a checkpoint: %s", e)


def _start_query(handle: JobHandle, st: QueryState) -> None:
    """Start the Spark query writing ``st``'s sink(s), from its checkpoint when it has one."""
    from pyspark.sql import functions as F

    assert handle.checkpoints is not None
    if st.plan.split is not None:
        from funke.spark.general import DROPPED, DUE, TAG

        counted = F.count(F.when(~F.col(TAG).isin(DROPPED, DUE), 1))
        df = st.compiled.tagged.observe(f"funke_out_{_safe(st.sink.uid)}", counted.alias("rows"))
    else:
        df = st.compiled.frame.observe(f"funke_out_{_safe(st.sink.uid)}", F.count(F.lit(1)).alias("rows"))
    location = handle.checkpoints.location(st.sink.uid)
    if st.plan.realtime:
        from funke.spark.realtime import writer as realtime_writer

        st.query = realtime_writer(df, st.sink.spec, name=f"{handle.name}.{st.sink.uid}", checkpoint=location,
                                   interval_ms=handle.interval_ms).start()  # fmt: skip
        handle.by_query[str(st.query.id)] = st
        return
    writer = df.writeStream.outputMode("append").queryName(f"{handle.name}.{st.sink.uid}")
    writer = writer.option("checkpointLocation", location)
    if not handle.checkpoints.uri:  # funke's clocks and beats follow the commit log where this process can read it
        commits = os.path.join(location.removeprefix("file://"), "commits")
        for clock in st.clocks:
            clock.commits, clock.batch = commits, handle.checkpoints.last_committed(st.sink.uid)
            clock.write()
        for beat in st.beats:
            beat.commits = commits
            beat.write()
    interval = st.plan.interval_ms or _trigger_interval(handle.interval_ms, st.plan.sinks)
    if interval:
        writer = writer.trigger(processingTime=f"{interval} milliseconds")
    spec = st.sink.spec
    fresh = not handle.resumed and st.restarts == 0  # a restarted query goes on with the files it wrote
    if st.plan.split is not None:
        for s in st.plan.sinks:
            if isinstance(s.spec, FileSink):
                _prepare_file_sink(s.spec, fresh=fresh)
            if handle.connect and isinstance(s.spec, CollectSink):
                raise PlanError(
                    f"{s.where()}: under Spark Connect a query with several outputs writes them on the server, "
                    "where a collect sink cannot hand rows back; write to files (fk.sinks.files) instead"
                )
        writer = writer.foreachBatch(_split_writer(handle.name, handle.cores, st.plan))
    elif isinstance(spec, FileSink):
        _prepare_file_sink(spec, fresh=fresh)
        writer = stream_writer(writer, spec)
    elif handle.connect and isinstance(spec, CollectSink):
        # foreachBatch runs on the Connect server: collect through Spark's memory sink instead.
        st.memory_table = f"funke_collect_{_safe(st.sink.uid)}_{uuid.uuid4().hex[:8]}"
        writer = writer.format("memory").queryName(st.memory_table)
    else:
        writer = writer.foreachBatch(_batch_writer(spec, handle.name))
    st.query = writer.start()
    handle.by_query[str(st.query.id)] = st


def _listener(handle: JobHandle, states: dict[str, QueryState]) -> Any:
    """A StreamingQueryListener folding each query's progress into its QueryState (classic Spark)."""
    from pyspark.sql.streaming import StreamingQueryListener

    from funke.spark.listener import reading_json

    class Listener(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            st = states.get(str(event.progress.id))
            if st is not None:
                handle.progressed(st, event.progress)

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            if event.exception and transient(event.exception):
                recover = threading.Thread(target=handle.recover, args=(str(event.id),), name=f"funke-restart-{handle.name}", daemon=True)
                recover.start()

    return reading_json(Listener())


def _poll_progress(handle: JobHandle, interval: float = 0.1) -> None:
    """Spark Connect: the client-side listener cannot read observed metrics, so poll ``recentProgress``.

    Each progress is applied once (by query, batch id and timestamp); idle reports, which
    carry no batch, are skipped, as the listener never sees them either.
    """
    seen: set[tuple[str, int, str]] = set()
    while handle.ended is None:
        for st in handle.states:
            try:
                progress = st.query.recentProgress if st.query is not None else []
            except Exception:  # the query or the session is stopping
                continue
            for p in progress:
                key = (str(p.id), p.batchId, p.timestamp)
                if key in seen or "addBatch" not in (p.durationMs or {}):
                    continue
                seen.add(key)
                st.refresh_collect(handle.spark)
                handle.progressed(st, p)
        time.sleep(interval)


def _split_writer(job: str, cores: int, plan: QueryPlan) -> Any:
    """Per micro-batch: keep the shared operator's output once, write each sink's part of it.

    It uses only the batch's own session, so it also runs on a Spark Connect server.
    """
    from funke.spark.compiler import compile_batch_split

    def write(df: Any, batch_id: int) -> None:
        df = df.persist()
        try:
            for sink, frame in compile_batch_split(df.sparkSession, plan, df, cores):
                if isinstance(sink.spec, FileSink):
                    write_frame(frame, sink.spec, "append")
                else:
                    _batch_writer(sink.spec, job)(frame, batch_id)
        finally:
            df.unpersist()

    return write


def _batch_writer(spec: Any, job: str) -> Any:
    if isinstance(spec, BatchSink):
        from funke.spark.kafka_jvm import batch_writer

        return batch_writer(spec, job)
    if isinstance(spec, CollectSink):
        return lambda df, batch_id: spec.add_batch(batch_id, [r.asDict() for r in df.collect()])
    if isinstance(spec, PrintSink):
        def show(df: Any, batch_id: int) -> None:
            rows = df.take(spec.limit)
            for r in rows:
                print(f"[batch {batch_id}] {r.asDict()}")

        return show
    raise PlanError(f"no Spark writer for sink {spec.describe()}")


def _run_batch(handle: JobHandle) -> None:
    try:
        for st in handle.states:
            if st.plan.lazy and not any(s.dead_letters for s in handle.states):
                st.finished = True  # no bad rows: no dead-letter job to run
                continue
            _run_batch_query(handle, st)
    except BaseException as e:  # reported by wait()
        handle._error = e
    finally:
        handle.ended = time.monotonic()


def _run_batch_query(handle: JobHandle, st: QueryState) -> None:
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    t0 = time.monotonic()
    out_obs = Observation(f"funke_out_{_safe(st.sink.uid)}")
    spec, df = st.sink.spec, st.compiled.frame.observe(out_obs, F.count(F.lit(1)).alias("rows"))
    if isinstance(spec, CollectSink):
        spec.add_batch(0, [r.asDict() for r in df.collect()])
    elif isinstance(spec, PrintSink):
        for r in df.collect()[: spec.limit]:
            print(r.asDict())
    elif isinstance(spec, BatchSink):
        _batch_writer(spec, handle.name)(df, 0)
    elif isinstance(spec, FileSink):
        _prepare_file_sink(spec, fresh=True)
        write_frame(df, spec, "error")
    else:
        raise PlanError(f"no Spark writer for sink {spec.describe()}")
    got = 0
    for m in st.compiled.metrics:
        if m.observation is not None:
            observed = m.observation.get
            got += int(observed.get("rows") or 0) if m.counts_rows else 0
            st.dead_letters += int(observed.get("dead") or 0)
    st.input_rows, st.batches = got, 1
    st.output_rows = int(out_obs.get.get("rows") or 0)
    st.record_batch(int((time.monotonic() - t0) * 1000), got)
    _commit_partitions(st, final=True)
    st.finished = True
