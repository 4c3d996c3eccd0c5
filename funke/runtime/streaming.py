"""A streaming run: one Spark streaming query per sink (or per shared operator), started together,
each from its checkpoint; progress folded in by a listener (classic Spark) or a poller (Spark
Connect); a query that failed transiently restarted from its checkpoint.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from funke.connectors.sinks import CollectSink, FileSink
from funke.connectors.sources import FileSource
from funke.errors import PlanError
from funke.plan import nodes
from funke.runtime.query_state import QueryState, output_metric, safe_name
from funke.runtime.watchdog import start_watch
from funke.runtime.writers import batch_writer, prepare_file_sink, split_writer
from funke.spark.file_sink import framed, stream_writer
from funke.spark.general.program import DROPPED, DUE, TAG
from funke.spark.listener import reading_json
from funke.spark.session import is_connect

if TYPE_CHECKING:
    from funke.runtime.job import JobHandle
    from funke.runtime.start import JobSpec

log = logging.getLogger(__name__)

#: Failures of Spark's machinery rather than of the job, which a restart from the checkpoint
#: rides out: Spark gives the one Python worker it starts on its own rather than through its
#: daemon (a Python streaming source's runner, started with the query) a fixed 10 s to connect
#: back, which a loaded machine can miss. Bounded runs start none. A foreachBatch writer's
#: ``collect()`` in the driver reads its rows from a loopback socket the JVM serves once; it was
#: refused there once in CI (CANNOT_OPEN_SOCKET, a 2,500-test run), the machine loaded: nothing
#: read, so the batch replays whole.
TRANSIENT_FAILURES = ("Python worker failed to connect back", "[CANNOT_OPEN_SOCKET]")
#: How often one query of a run is restarted after a transient failure before the job fails.
MAX_RESTARTS = 3


def transient(error: Any) -> bool:
    """Whether a query's failure is one of Spark's transient ones (``TRANSIENT_FAILURES``).

    >>> transient("org.apache.spark.SparkException: Python worker failed to connect back.")
    True
    >>> transient("PySparkRuntimeError: [CANNOT_OPEN_SOCKET] Can not open socket: [...Connection refused]")
    True
    >>> transient("ZeroDivisionError: division by zero")
    False
    """
    text = str(error)
    return any(t in text for t in TRANSIENT_FAILURES)


def trigger_interval(checkpoint_ms: int, sinks: list[nodes.Sink]) -> int:
    """The query's micro-batch interval: the checkpoint interval, or the listing interval of the
    monitored file sources it reads (Spark lists a file source's directory once per micro-batch)."""
    sources = [x for x in nodes.walk(tuple(sinks)) if isinstance(x, nodes.Source)]
    monitored = {s.spec.monitor_ms for s in sources if isinstance(s.spec, FileSource) and s.spec.monitor_ms}
    if not monitored:
        return checkpoint_ms
    if len(monitored) > 1 or (checkpoint_ms and checkpoint_ms not in monitored):
        raise PlanError(
            f"{', '.join(s.where() for s in sinks)} reads files monitored every {' and '.join(f'{m} ms' for m in sorted(monitored))}"
            + (f" with checkpoints every {checkpoint_ms} ms" if checkpoint_ms else "")
            + ": a Spark query lists its file sources once per micro-batch, so these must be one interval"
        )
    return monitored.pop()


def start_streaming(env: JobSpec, handle: JobHandle, fresh: bool) -> None:
    """Start the job's queries: afresh, or each where its checkpoint says it is."""
    handle.connect = is_connect(handle.spark)
    handle.interval_ms = env.checkpoint_interval_ms
    if not handle.connect:
        handle.listener = progress_listener(handle, handle.by_query)
        handle.spark.streams.addListener(handle.listener)
    checkpoints = handle.checkpoints
    assert checkpoints is not None
    if fresh or checkpoints.finished():
        unload_state_stores(handle.spark)
        checkpoints.wipe()
    handle.resumed = checkpoints.has_progress()
    checkpoints.record_buckets(handle.bucket_ids)
    try:
        for st in handle.states:
            if checkpoints.query_finished(st.sink.uid):
                st.finished = True  # ended in an earlier run: nothing left to read
            elif not st.plan.lazy or checkpoints.has_query(st.sink.uid):
                resume_query(handle, st)
    except BaseException:
        handle.stop()
        raise
    if handle.connect:
        handle.poller = threading.Thread(target=poll_progress, args=(handle,), name=f"funke-progress-{handle.name}", daemon=True)
        handle.poller.start()
    handle.watchdog = start_watch(handle, env.settings.checkpoint_timeout)


def resume_query(handle: JobHandle, st: QueryState) -> None:
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
    start_query(handle, st)


def unload_state_stores(spark: Any) -> None:
    """Before the job's checkpoint is replaced (wiped, or a savepoint's copied in): close the
    state stores an earlier run left loaded, when no query runs (classic Spark).

    Spark keeps a stopped query's state store providers loaded until its maintenance thread
    unloads them, and that thread may first upload a snapshot into the checkpoint: after a
    wipe, the new run then found ``state/`` not empty on batch 0
    (STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY); after a restore, a state version of the
    earlier run could land among the savepoint's. With no query running, nothing uses them.
    """
    if is_connect(spark) or spark.streams.active:
        return
    try:
        spark._jvm.org.apache.spark.sql.execution.streaming.state.StateStore.stop()
    except Exception as e:  # noqa: BLE001 (best effort: the wipe goes on)
        log.warning("could not unload Spark's state stores before wiping a checkpoint: %s", e)


def start_query(handle: JobHandle, st: QueryState) -> None:
    """Start the Spark query writing ``st``'s sink(s), from its checkpoint when it has one."""
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    assert handle.checkpoints is not None
    if st.plan.split is not None:
        counted = F.count(F.when(~F.col(TAG).isin(DROPPED, DUE), 1))
        df = st.compiled.tagged.observe(output_metric(st.sink.uid), counted.alias("rows"))
    else:
        df = st.compiled.frame.observe(output_metric(st.sink.uid), F.count(F.lit(1)).alias("rows"))
    location = handle.checkpoints.location(st.sink.uid)
    if st.plan.realtime:
        from funke.spark.realtime import DEFAULT_INTERVAL_MS  # (pyspark's lazy import)
        from funke.spark.realtime import writer as realtime_writer

        st.batch_runs_ms = handle.interval_ms or DEFAULT_INTERVAL_MS
        st.query = realtime_writer(df, st.sink.spec, name=f"{handle.name}.{st.sink.uid}", checkpoint=location,
                                   interval_ms=handle.interval_ms).start()  # fmt: skip
        handle.by_query[str(st.query.id)] = st
        return
    if st.plan.split is None and isinstance(st.sink.spec, FileSink):
        df = framed(df, st.sink.spec)
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
    interval = st.plan.interval_ms or trigger_interval(handle.interval_ms, st.plan.sinks)
    if interval:
        writer = writer.trigger(processingTime=f"{interval} milliseconds")
    spec = st.sink.spec
    fresh = not handle.resumed and st.restarts == 0  # a restarted query goes on with the files it wrote
    if st.plan.split is not None:
        for s in st.plan.sinks:
            if isinstance(s.spec, FileSink):
                prepare_file_sink(s.spec, fresh=fresh)
            if handle.connect and isinstance(s.spec, CollectSink):
                raise PlanError(
                    f"{s.where()}: under Spark Connect a query with several outputs writes them on the server, "
                    "where a collect sink cannot hand rows back; write to files (fk.sinks.files) instead"
                )
        writer = writer.foreachBatch(split_writer(handle.name, handle.cores, st.plan))
    elif isinstance(spec, FileSink):
        prepare_file_sink(spec, fresh=fresh)
        writer = stream_writer(writer, spec)
    elif handle.connect and isinstance(spec, CollectSink):
        # foreachBatch runs on the Connect server: collect through Spark's memory sink instead.
        st.memory_table = f"funke_collect_{safe_name(st.sink.uid)}_{uuid.uuid4().hex[:8]}"
        writer = writer.format("memory").queryName(st.memory_table)
    else:
        writer = writer.foreachBatch(batch_writer(spec, handle.name))
    st.query = writer.start()
    handle.by_query[str(st.query.id)] = st


def progress_listener(handle: JobHandle, states: dict[str, QueryState]) -> Any:
    """A StreamingQueryListener folding each query's progress into its QueryState (classic Spark)."""
    from pyspark.sql.streaming import StreamingQueryListener  # (pyspark's lazy import)

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


def poll_progress(handle: JobHandle, interval: float = 0.1) -> None:
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
