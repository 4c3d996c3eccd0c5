"""PyFlink's ``StreamExecutionEnvironment`` on a funke ``StreamEnvironment``.

``execute()`` runs the sinks declared since the previous ``execute()`` as one funke job (PyFlink
clears its transformations the same way), to its end: over bounded sources (collections, file
sets, a Kafka source with ``set_bounded``) as a Spark batch job, which gives the streaming run's
results; otherwise as a streaming job that runs until its input ends or it is stopped.

Parallelism is Spark's: its shuffle partitions and the cores of the session. ``set_parallelism(n)``
is what the program sees of it (PyFlink's ``print()`` prefixes ``N>`` when it is above 1, and
``RuntimeContext.get_number_of_parallel_subtasks()``); it does not resize the Spark session.
"""

from __future__ import annotations

import os
import re
import sys
import time
import uuid
from collections.abc import Iterable
from typing import Any

import funke as fk
from funke.errors import PlanError, UnsupportedError
from funke.plan import nodes
from funke.pyflink.common.configuration import Configuration
from funke.pyflink.common.typeinfo import TypeInformation
from funke.pyflink.datastream._sinks import Settings
from funke.pyflink.datastream._wire import VALUE, dumps, needs_conversion
from funke.pyflink.datastream.checkpoint_config import CheckpointConfig
from funke.pyflink.datastream.checkpointing_mode import CheckpointingMode
from funke.pyflink.datastream.execution_mode import RuntimeExecutionMode
from funke.table.connectors import interval_text_ms

__all__ = ["JobClient", "JobExecutionResult", "StreamExecutionEnvironment"]

#: Configuration keys funke honours; keys of Flink's runtime (Python workers, memory, network, state
#: backends, REST) have no meaning on Spark and are accepted as README "Coming from PyFlink" says.
_HONOURED = {
    "parallelism.default",
    "execution.runtime-mode",
    "pipeline.name",
    "pipeline.global-job-parameters",
    "execution.checkpointing.interval",
    "execution.checkpointing.timeout",
}
_RUNTIME_PREFIXES = ("python.", "taskmanager.", "jobmanager.", "rest.", "state.", "execution.checkpointing.", "pipeline.", "table.", "restart-strategy", "heartbeat.", "akka.", "pekko.", "metrics.", "env.", "classloader.", "web.", "blob.", "cluster.", "io.tmp.dirs", "execution.")


class JobExecutionResult:
    """What ``execute()`` returns: the job's id and how long it ran."""

    def __init__(self, job_id: str, net_runtime_ms: int, handle: Any) -> None:
        self._job_id, self._runtime, self.handle = job_id, net_runtime_ms, handle

    def get_job_id(self) -> str:
        return self._job_id

    def get_net_runtime(self) -> int:
        return self._runtime

    def is_job_execution_result(self) -> bool:
        return True

    def get_job_execution_result(self) -> JobExecutionResult:
        return self

    def get_accumulator_result(self, accumulator_name: str) -> Any:
        raise UnsupportedError("accumulators: funke has none; a job's counts are in JobHandle.metrics()")

    def get_all_accumulator_results(self) -> dict[str, Any]:
        return {}


class _Done:
    """``JobClient.get_job_execution_result()``: PyFlink's CompletableFuture, ``result()`` waits."""

    def __init__(self, client: JobClient) -> None:
        self._client = client

    def result(self) -> JobExecutionResult:
        return self._client._wait()

    def done(self) -> bool:
        return bool(self._client.handle.done)


class JobClient:
    """What ``execute_async()`` returns: the running job (funke's ``JobHandle`` as ``handle``)."""

    def __init__(self, env: StreamExecutionEnvironment, handle: Any, job_id: str, started: float) -> None:
        self._env, self.handle, self._job_id, self._started = env, handle, job_id, started

    def get_job_id(self) -> str:
        return self._job_id

    def get_job_status(self) -> Any:
        from funke.pyflink.common.job_status import JobStatus

        if getattr(self.handle, "_error", None) is not None:
            return JobStatus.FAILED
        return JobStatus.FINISHED if self.handle.done else JobStatus.RUNNING

    def cancel(self) -> _Done:
        self.handle.stop()
        return _Done(self)

    def stop_with_savepoint(self, advance_to_end_of_time: bool = False, savepoint_directory: str | None = None) -> Any:
        return self.handle.stop(savepoint=savepoint_directory)

    def get_job_execution_result(self) -> _Done:
        return _Done(self)

    def _wait(self) -> JobExecutionResult:
        self.handle.wait()
        return JobExecutionResult(self._job_id, int((time.monotonic() - self._started) * 1000), self.handle)


class StreamExecutionEnvironment:
    """Where a PyFlink job's sources and sinks are declared, and how it runs (on funke)."""

    def __init__(self, configuration: Configuration | None = None) -> None:
        self._fk = fk.StreamEnvironment(app="pyflink")
        self._settings = Settings()
        self._mode = RuntimeExecutionMode.STREAMING
        self._max_parallelism = -1
        self._chaining = True
        self._checkpoint_config = CheckpointConfig(self)
        self._job_name: str | None = None
        if configuration is not None:
            self.configure(configuration)

    @staticmethod
    def get_execution_environment(configuration: Configuration | None = None) -> StreamExecutionEnvironment:
        return StreamExecutionEnvironment(configuration)

    # -- settings ---------------------------------------------------------------------------
    def get_config(self) -> Any:
        from funke.pyflink.common.execution_config import ExecutionConfig

        return ExecutionConfig(self)

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        if parallelism <= 0:
            raise PlanError(f"set_parallelism() takes a positive number, got {parallelism}")
        self._settings.parallelism = int(parallelism)
        return self

    def get_parallelism(self) -> int:
        return self._settings.parallelism

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        """Flink's key-group count (the most parallelism a job can be rescaled to): funke's keys are
        in buckets sized to the cores and kept across restarts; accepted, nothing to size."""
        self._max_parallelism = int(max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        return self._max_parallelism

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
        self._mode = RuntimeExecutionMode(execution_mode)
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> StreamExecutionEnvironment:
        """Flink's network buffer flush interval (latency against throughput): Spark moves rows a
        micro-batch at a time; accepted, no effect."""
        return self

    def get_buffer_timeout(self) -> int:
        return 100

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        """Each function its own operator: values are converted to their declared type between any
        two functions, as PyFlink does without chaining."""
        self._chaining = False
        return self

    def is_chaining_enabled(self) -> bool:
        return self._chaining

    def enable_checkpointing(self, interval: int, mode: CheckpointingMode | None = None) -> StreamExecutionEnvironment:
        """A checkpoint every ``interval`` ms: funke's checkpoint interval (Spark's micro-batch trigger)."""
        self._fk.checkpoint_interval_ms = int(interval)
        if mode is not None:
            self._checkpoint_config.set_checkpointing_mode(mode)
        return self

    def get_checkpoint_config(self) -> CheckpointConfig:
        return self._checkpoint_config

    def get_checkpoint_interval(self) -> int:
        return self._fk.checkpoint_interval_ms or -1

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return self._checkpoint_config.get_checkpointing_mode()

    def configure(self, configuration: Configuration) -> StreamExecutionEnvironment:
        for key, value in configuration.to_dict().items():
            if key == "parallelism.default":
                self.set_parallelism(int(value))
            elif key == "execution.runtime-mode":
                self.set_runtime_mode(RuntimeExecutionMode[value.upper()])
            elif key == "pipeline.name":
                self._job_name = value
            elif key == "execution.checkpointing.interval":
                self._checkpoint_config.set_checkpoint_interval(interval_text_ms(value, key))
            elif key == "execution.checkpointing.timeout":
                self._checkpoint_config.set_checkpoint_timeout(interval_text_ms(value, key))
            elif key == "pipeline.global-job-parameters":
                pairs = (p.split(":", 1) for p in value.split(",") if p)
                self._settings.job_parameters.update({k.strip(): v.strip() for k, v in pairs})
            elif not key.startswith(_RUNTIME_PREFIXES):
                raise UnsupportedError(
                    f"configuration key {key!r}: funke knows no such Flink option; the keys it honours are "
                    f"{', '.join(sorted(_HONOURED))}, and Flink's runtime options (python.*, taskmanager.*, state.*, ...) "
                    "are accepted without effect on Spark"
                )
        return self

    # -- dependencies ------------------------------------------------------------------------
    def add_jars(self, *jars_path: str) -> None:
        """Flink connector jars for Flink's JVM: funke's connectors are its own and Spark's; accepted, nothing to load."""

    def add_classpaths(self, *classpaths: str) -> None:
        """As ``add_jars``."""

    def add_python_file(self, file_path: str) -> None:
        """A Python file or directory the job's functions import: put on the path of this process and of
        Spark's Python workers (which inherit it when started by this process)."""
        path = os.path.abspath(file_path)
        entry = path if os.path.isdir(path) or path.endswith((".zip", ".egg")) else os.path.dirname(path)
        if entry not in sys.path:
            sys.path.insert(0, entry)
        parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if entry not in parts:
            os.environ["PYTHONPATH"] = os.pathsep.join([entry, *parts])

    def set_python_executable(self, python_exec: str) -> None:
        """The Python that runs the functions: Spark's ``PYSPARK_PYTHON`` (before the Spark session starts)."""
        os.environ["PYSPARK_PYTHON"] = python_exec

    def set_python_requirements(self, requirements_file_path: str, requirements_cache_dir: str | None = None) -> None:
        raise UnsupportedError(
            "set_python_requirements: funke installs nothing into Spark's workers; install the requirements into the "
            "Python environment Spark runs (local: this one; a cluster: its executors' image or --archives)"
        )

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> None:
        raise UnsupportedError(
            "add_python_archive: funke ships no archives to Spark's workers; use Spark's own spark.archives "
            "(StreamEnvironment(spark_conf={'spark.archives': ...})) or the cluster's image"
        )

    def register_cached_file(self, file_path: str, name: str, executable: bool = False) -> None:
        raise UnsupportedError("register_cached_file: no distributed cache in funke; use Spark's spark.files or a shared path")

    def set_default_savepoint_directory(self, directory: str) -> StreamExecutionEnvironment:
        raise UnsupportedError(
            "set_default_savepoint_directory: funke takes a savepoint's directory where it is taken "
            "(JobClient.stop_with_savepoint(savepoint_directory=...), funke savepoint JOB DIR)"
        )

    def close(self) -> None:
        return None

    # -- sources ---------------------------------------------------------------------------
    def from_collection(self, collection: Iterable[Any], type_info: TypeInformation | None = None) -> Any:
        """A bounded stream of the values (Python objects; converted to ``type_info`` when given, as
        PyFlink's Java source gives them back)."""
        from funke.pyflink.datastream.data_stream import DataStream

        values = list(collection)
        if needs_conversion(type_info):
            values = [type_info.from_python(v) for v in values]  # type: ignore[union-attr]
        base = self._fk.from_collection([(dumps(v),) for v in values], schema=f"{VALUE} binary")
        return DataStream(self, base, type_info=type_info, known=True)

    def from_source(self, source: Any, watermark_strategy: Any, source_name: str, type_info: TypeInformation | None = None) -> Any:
        """A stream from a ``FileSource`` or ``KafkaSource``, with ``watermark_strategy``'s event time."""
        read = getattr(source, "_stream", None)
        if not callable(read):
            raise UnsupportedError(
                f"from_source({type(source).__name__}): funke maps FileSource and KafkaSource (pyflink.datastream.connectors); "
                "other sources have no funke counterpart"
            )
        stream = read(self, source_name, type_info)
        return stream.assign_timestamps_and_watermarks(watermark_strategy) if watermark_strategy is not None else stream

    def add_source(self, source_func: Any, source_name: str = "Custom Source", type_info: Any = None) -> Any:
        raise UnsupportedError(
            "add_source (a Java SourceFunction): funke runs no Java connectors; use from_collection, "
            "from_source(FileSource ...) or from_source(KafkaSource ...)"
        )

    def create_input(self, input_format: Any, type_info: Any = None) -> Any:
        raise UnsupportedError("create_input (a Java InputFormat): use from_source(FileSource ...) or from_collection")

    # -- running --------------------------------------------------------------------------
    def _sinks(self) -> list[nodes.Sink]:
        return list(self._fk.sinks)

    def _bounded(self) -> bool:
        sources = [x for x in nodes.walk(self._sinks()) if isinstance(x, nodes.Source)]
        every = all(s.spec.bounded for s in sources)
        if self._mode is RuntimeExecutionMode.BATCH and not every:
            unbounded = ", ".join(s.spec.describe() for s in sources if not s.spec.bounded)
            raise UnsupportedError(
                f"set_runtime_mode(BATCH) with an unbounded source ({unbounded}): BATCH mode reads bounded input only, "
                "as in Flink; give the source an end (KafkaSource set_bounded, FileSource without monitor_continuously)"
            )
        return every

    def _start(self, job_name: str | None) -> tuple[Any, str, float]:
        if not self._fk.sinks:
            raise PlanError("No operators defined in streaming topology. Cannot execute: add print() or sink_to(...) first")
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", job_name or self._job_name or "Flink Streaming Job").strip("-.") or "pyflink"
        bounded = self._bounded()
        self._settings.batch = self._mode is RuntimeExecutionMode.BATCH or (self._mode is RuntimeExecutionMode.AUTOMATIC and bounded)
        started = time.monotonic()
        planned = self._fk.runtime_mode
        if self._settings.batch:  # (BATCH execution: a keyed operator reads a key's elements in timestamp order)
            self._fk.runtime_mode = "batch"
        try:
            handle = self._fk.execute(bounded=bounded, name=name, fresh=True)
        finally:
            self._fk.runtime_mode = planned
            self._fk._sinks.clear()  # (PyFlink clears its transformations at execute: the next job has its own sinks)
        return handle, uuid.uuid4().hex, started

    def execute(self, job_name: str | None = None) -> JobExecutionResult:
        """Run the job declared so far to its end (an unbounded one until it is stopped)."""
        handle, job_id, started = self._start(job_name)
        handle.wait()
        return JobExecutionResult(job_id, int((time.monotonic() - started) * 1000), handle)

    def execute_async(self, job_name: str = "Flink Streaming Job") -> JobClient:
        """Start the job and return at once: a ``JobClient`` (``cancel()``, ``get_job_execution_result().result()``)."""
        handle, job_id, started = self._start(job_name)
        return JobClient(self, handle, job_id, started)

    def get_execution_plan(self) -> str:
        return self._fk.explain()
