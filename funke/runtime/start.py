"""Starting a job: checks that refuse what cannot run, the Spark session, the compiled queries, the
key buckets a resumed job keeps, a savepoint restored, then the run (bounded or streaming), its
registry entry, its request loop and HTTP server. ``start_job`` returns the ``JobHandle`` at once.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from funke.connectors.base import BatchSink
from funke.connectors.sinks import FileSink
from funke.errors import PlanError
from funke.plan import nodes
from funke.plan.explain import plan_graph
from funke.plan.realtime import check_realtime
from funke.runtime import at_exit
from funke.runtime.bounded import check_bounded, run_batch
from funke.runtime.control import serve
from funke.runtime.dashboard import spark_ui
from funke.runtime.job import JobHandle
from funke.runtime.query_state import QueryState
from funke.runtime.server import OpsServer
from funke.runtime.streaming import start_streaming, unload_state_stores
from funke.savepoints import read
from funke.savepoints.checkpoints import Checkpoints
from funke.savepoints.registry import Registry
from funke.savepoints.restore import check_restore, fingerprint, restore, state_layout
from funke.spark.session import get_session, session_cores

if TYPE_CHECKING:
    from funke.config import FunkeSettings


class JobSpec(Protocol):
    """A job to start, as the runtime reads it: its sinks (the roots of its plan) and how to run them.
    ``funke.api.StreamEnvironment`` is one; the runtime sits below the API and does not import it."""

    app: str
    spark: Any
    settings: FunkeSettings
    spark_conf: dict[str, str]
    checkpoint_dir: str | None
    checkpoint_interval_ms: int
    latency_mode: str

    @property
    def sinks(self) -> tuple[nodes.Sink, ...]: ...

    def dead_letter_sink(self, job: str) -> Any: ...

    def explain(self, *, bounded: bool | None = None) -> str: ...


def start_job(
    env: JobSpec,
    *,
    mode: str,
    name: str,
    fresh: bool = False,
    from_savepoint: str | None = None,
    allow_non_restored_state: bool = False,
) -> JobHandle:
    """Compile ``env``'s sinks into Spark queries and start them: a bounded run in a background thread,
    or a streaming run from its checkpoint (or from ``from_savepoint``). The handle is returned at once."""
    from funke.spark.query import compile_job  # (pyspark's lazy import)

    if from_savepoint is not None and (mode == "batch" or fresh):
        raise PlanError("from_savepoint= resumes a streaming run: it goes with neither bounded=True nor fresh=True")
    if mode == "batch":
        check_bounded(env.sinks)
    realtime = mode == "streaming" and getattr(env, "latency_mode", "") == "realtime"
    if realtime:  # refused before anything connects or starts
        check_realtime(nodes.walk(env.sinks))
    for sink in env.sinks:
        if isinstance(sink.spec, BatchSink):
            sink.spec.check(name)
    settings, spark_conf = env.settings, env.spark_conf
    if realtime:
        from funke.spark.realtime import check_interval, check_slots, sized_session  # (pyspark's lazy import)

        settings, spark_conf = sized_session(env.settings, env.spark_conf, env.sinks, given=env.spark is not None)
    spark = get_session(settings, spark_conf, env.app, env.spark)
    if realtime:
        check_interval(spark, env.checkpoint_interval_ms)
        check_slots(spark, env.sinks)
    cores = session_cores(spark, env.settings, given=env.spark is not None)
    checkpoints = None if mode == "batch" else Checkpoints.for_job(env, name, spark)
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    buckets = kept_buckets(checkpoints, fresh, from_savepoint, cores, partitions)
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
        time_ordered=getattr(env, "runtime_mode", "streaming") == "batch",  # (for a bounded run only: compile_job)
    )
    states = [QueryState(plan) for plan in plans]
    handle = JobHandle(name, mode, spark, states)
    handle.cores, handle.bucket_ids = cores, buckets
    at_exit.started(handle)
    if mode == "batch":
        handle.batch_thread = threading.Thread(target=run_batch, args=(handle,), name=f"funke-{name}", daemon=True)
        handle.batch_thread.start()
        return handle
    handle.checkpoints = checkpoints
    handle.home = str(env.settings.home)
    handle.layouts = {st.sink.uid: state_layout(st.plan.sinks) for st in states}
    if from_savepoint is not None:
        restore_savepoint(handle, from_savepoint, allow_non_restored_state)
    start_streaming(env, handle, fresh)
    Registry(handle.home).job_started(name, checkpoint=handle.checkpoints.root, fingerprint=fingerprint(handle.layouts))
    serve(handle, handle.home, handle.stopping)
    if env.settings.http:
        serve_http(env, handle)
    return handle


def kept_buckets(
    checkpoints: Checkpoints | None, fresh: bool, from_savepoint: str | None, cores: int, partitions: int
) -> tuple[int, ...]:
    """The key buckets (``fk_b`` values) of the job's general operators: those its savepoint or the
    checkpoint it resumes was started with, since a key's state is in the bucket its hash named among
    them whatever the cores are now; a new job's (or one that ran to its end, which starts afresh):
    four a core, their values spread evenly over the ``partitions`` of Spark's shuffle. A savepoint or
    checkpoint older than the record gets what every job had then: ``0..4 * cores - 1``."""
    from funke.spark.general.lowering import balanced_bucket_ids, default_buckets  # (pyspark's lazy import)

    before_the_record = tuple(range(default_buckets(cores)))
    if from_savepoint is not None:
        return Checkpoints(str(read(from_savepoint).path / "checkpoint")).recorded_buckets() or before_the_record
    if checkpoints is not None and not fresh and not checkpoints.finished():
        recorded = checkpoints.recorded_buckets()
        if recorded:
            return recorded
        if checkpoints.has_progress():
            return before_the_record
    return balanced_bucket_ids(default_buckets(cores), partitions)


def serve_http(env: JobSpec, handle: JobHandle) -> None:
    """Start the job's HTTP server (metrics, queryable state, dashboard) and note where it listens."""
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


def restore_savepoint(handle: JobHandle, path: str, allow_non_restored_state: bool) -> None:
    """Check the savepoint against the job (Flink's rules), then make it the job's checkpoint."""
    assert handle.checkpoints is not None
    if handle.checkpoints.uri:
        raise PlanError(f"restoring a savepoint into {handle.checkpoints.root}: savepoints restore into a local checkpoint_dir")
    sp = read(path)
    handle.restore_notes = check_restore(sp, handle.layouts, allow_non_restored_state=allow_non_restored_state)
    files = {st.sink.uid: [s.spec.path for s in st.plan.sinks if isinstance(s.spec, FileSink)] for st in handle.states}
    unload_state_stores(handle.spark)
    restore(sp, Path(handle.checkpoints.local_root()), handle.layouts, files)
    handle.restored_from = str(sp.path)
