"""How a job's queries write their sinks: Spark writers per sink kind, and the split writer
that writes several sinks from one persisted micro-batch."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funke.connectors.base import BatchSink
from funke.connectors.sinks import CollectSink, FileSink, PrintSink
from funke.errors import PlanError
from funke.spark.file_sink import write_frame

if TYPE_CHECKING:
    from funke.spark.query import QueryPlan


def prepare_file_sink(spec: FileSink, fresh: bool) -> None:
    """Make ``spec``'s directory ready for a run that starts from a fresh checkpoint (or refuse)."""
    path = Path(spec.path)
    if fresh and path.exists() and any(path.iterdir()):
        if not spec.overwrite:
            raise PlanError(
                f"sink {spec.describe()}: the directory is not empty and this run starts from a fresh checkpoint, "
                "so Spark's file sink would skip batches it thinks it wrote: choose an empty directory or pass overwrite=True"
            )
        shutil.rmtree(path)


def split_writer(job: str, cores: int, plan: QueryPlan) -> Any:
    """Per micro-batch: keep the shared operator's output once, write each sink's part of it.

    It uses only the batch's own session, so it also runs on a Spark Connect server.
    """
    from funke.spark.query import compile_batch_split  # (pyspark's lazy import)

    def write(df: Any, batch_id: int) -> None:
        df = df.persist()
        try:
            for sink, frame in compile_batch_split(df.sparkSession, plan, df, cores):
                if isinstance(sink.spec, FileSink):
                    write_frame(frame, sink.spec, "append")
                else:
                    batch_writer(sink.spec, job)(frame, batch_id)
        finally:
            df.unpersist()

    return write


def collected(df: Any, tries: int = 3) -> list[Any]:
    """``df.collect()`` of a bounded run's query, asked again when PySpark could not connect to the loopback
    socket the JVM serves the rows on (CANNOT_OPEN_SOCKET: nothing was read). The JVM closes that socket after
    one connection or ``spark.python.authenticate.socketTimeout``; on a loaded machine a Python worker that
    connects back late can take the port when the system gives it again. Asking again runs the batch job again;
    any other failure, or this one ``tries`` times, is raised. (A streaming query that fails so is restarted
    from its checkpoint: ``funke.runtime.streaming.TRANSIENT_FAILURES``.)"""
    from pyspark.errors import PySparkRuntimeError  # (pyspark's lazy import)

    for _ in range(tries - 1):
        try:
            return df.collect()
        except PySparkRuntimeError as e:
            if e.getCondition() != "CANNOT_OPEN_SOCKET":
                raise
    return df.collect()


def batch_writer(spec: Any, job: str) -> Any:
    """The ``foreachBatch`` function that writes a micro-batch to the sink ``spec`` (Kafka, collect, print)."""
    if isinstance(spec, BatchSink):
        from funke.spark.kafka_jvm import batch_writer as kafka_writer  # (pyspark's lazy import)

        return kafka_writer(spec, job)
    if isinstance(spec, CollectSink):
        return lambda df, batch_id: spec.add_batch(batch_id, [r.asDict() for r in df.collect()])
    if isinstance(spec, PrintSink):
        def show(df: Any, batch_id: int) -> None:
            rows = df.take(spec.limit)
            for r in rows:
                print(f"[batch {batch_id}] {r.asDict()}")

        return show
    raise PlanError(f"no Spark writer for sink {spec.describe()}")

