"""A bounded run (``execute(bounded=True)``): the same plan as Spark batch jobs, one per query, run
in a background thread; the input ends where each source ends, so every window fires.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from funke.connectors.base import BatchSink
from funke.connectors.sinks import CollectSink, FileSink, PrintSink
from funke.errors import PlanError
from funke.plan import nodes
from funke.runtime.query_state import QueryState, commit_partitions, output_metric
from funke.runtime.writers import batch_writer, collected, prepare_file_sink
from funke.spark.file_sink import write_frame

if TYPE_CHECKING:
    from funke.runtime.job import JobHandle


def batchable(spec: Any) -> bool:
    """Whether a source runs in a bounded run: it ends (or says it can be read as a batch)."""
    return getattr(spec, "batchable", spec.bounded)


def check_bounded(sinks: tuple[nodes.Sink, ...]) -> None:
    """Refuse a bounded run over sources that never end."""
    unbounded = [x.spec.describe() for x in nodes.walk(sinks) if isinstance(x, nodes.Source) and not batchable(x.spec)]
    if unbounded:
        raise PlanError(f"bounded run: source(s) {', '.join(unbounded)} never end; give them an end (events=N) or run unbounded")


def run_batch(handle: JobHandle) -> None:
    """The bounded run (in its own thread): each query as one Spark batch job, in turn."""
    try:
        for st in handle.states:
            if st.plan.lazy and not any(s.dead_letters for s in handle.states):
                st.finished = True  # no bad rows: no dead-letter job to run
                continue
            run_batch_query(handle, st)
    except BaseException as e:  # reported by wait()
        handle.error = e
    finally:
        handle.ended = time.monotonic()


def run_batch_query(handle: JobHandle, st: QueryState) -> None:
    """Run ``st``'s query as a Spark batch job over the whole input, then fold its observed totals in."""
    from pyspark.sql import Observation  # (pyspark's lazy import)
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    t0 = time.monotonic()
    out_obs = Observation(output_metric(st.sink.uid))
    spec, df = st.sink.spec, st.compiled.frame.observe(out_obs, F.count(F.lit(1)).alias("rows"))
    if isinstance(spec, CollectSink):
        spec.add_batch(0, [r.asDict() for r in collected(df)])
    elif isinstance(spec, PrintSink):
        for r in collected(df)[: spec.limit]:
            print(r.asDict())
    elif isinstance(spec, BatchSink):
        batch_writer(spec, handle.name)(df, 0)
    elif isinstance(spec, FileSink):
        prepare_file_sink(spec, fresh=True)  # (refuses a directory with files in it, or empties it: overwrite=True)
        write_frame(df, spec, "append")  # (into an empty directory there already, as Flink writes; Spark's "error" refuses one)
    else:
        raise PlanError(f"no Spark writer for sink {spec.describe()}")
    got = 0
    for m in st.compiled.metrics:
        if m.known_rows is not None:
            got += m.known_rows if m.counts_rows else 0
        elif m.observation is not None:
            observed = _observed(m.observation)
            got += int(observed.get("rows") or 0) if m.counts_rows else 0
            st.dead_letters += int(observed.get("dead") or 0)
    st.input_rows, st.batches = got, 1
    st.output_rows = int(_observed(out_obs).get("rows") or 0)
    st.record_batch(int((time.monotonic() - t0) * 1000), got)
    commit_partitions(st, final=True)
    st.finished = True


def _observed(observation: Any) -> dict[str, Any]:
    """An ``Observation``'s metrics after its action; none when Spark's optimizer took the observed node away,
    having proved its input empty (a VALUES whose rows a constant filter removes): no row went through it.
    (Spark then completes the observation with an empty row, which pyspark's ``get`` fails to convert.)"""
    jo = getattr(observation, "_jo", None)  # (classic pyspark's JVM Observation; Spark Connect's has none)
    if jo is not None and jo.getRow().length() == 0:
        return {}
    return observation.get
