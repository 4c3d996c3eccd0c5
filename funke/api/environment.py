"""StreamEnvironment: where a job's sources and sinks are declared, and how it runs."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funke.api.streams import DataStream
from funke.config import FunkeSettings, settings
from funke.connectors.base import SinkSpec, SourceSpec
from funke.connectors.sinks import files
from funke.connectors.sources import collection
from funke.errors import PlanError
from funke.plan import nodes
from funke.plan.explain import explain as explain_plan
from funke.plan.types import Schema
from funke.semantics.time import to_millis
from funke.semantics.watermarks import WatermarkStrategy

if TYPE_CHECKING:
    from funke.runtime.job import JobHandle

_APP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class StreamEnvironment:
    """The entry point of a funke job.

    Local Spark is the default (``local[*]``, shuffle partitions sized to the cores,
    RocksDB state with changelog checkpointing, Arrow on). Pass ``spark=`` to use your
    own ``SparkSession``, ``master=`` for a cluster URL or ``remote=`` for Spark Connect;
    ``spark_conf`` entries pass through to Spark untouched.

    >>> import funke as fk
    >>> env = fk.StreamEnvironment(app="demo")
    >>> s = env.from_collection([{"k": "a", "v": 1}]).filter(fk.col("v") > 0)
    >>> s.schema.names
    ('k', 'v')
    """

    def __init__(
        self,
        app: str = "funke",
        *,
        spark: Any = None,
        master: str | None = None,
        remote: str | None = None,
        spark_conf: dict[str, str] | None = None,
        checkpoint_interval: timedelta | int | None = None,
        checkpoint_dir: str | None = None,
        runtime_mode: str = "streaming",
        dead_letters: SinkSpec | None = None,
        settings_: FunkeSettings | None = None,
    ):
        if not _APP.match(app):
            raise PlanError(f"app name {app!r} must be letters, digits, '.', '_' or '-' (it names directories)")
        if runtime_mode not in ("streaming", "batch"):
            raise PlanError(f"runtime_mode must be 'streaming' or 'batch', got {runtime_mode!r}")
        if sum(x is not None for x in (spark, master, remote)) > 1:
            raise PlanError("pass at most one of spark=, master= and remote=")
        self.app = app
        self.spark = spark
        self.settings = settings_ or settings(master=master, remote=remote)
        if master is not None:
            self.settings = self.settings.model_copy(update={"master": master, "remote": None})
        self.spark_conf = dict(spark_conf or {})
        self.checkpoint_interval_ms = to_millis(checkpoint_interval, what="checkpoint_interval") if checkpoint_interval is not None else 0
        self.checkpoint_dir = checkpoint_dir
        self.runtime_mode = runtime_mode
        self.dead_letters = dead_letters
        self.latency_mode = "micro-batch"
        #: Event-time windows built so far whose path the latency mode decides.
        self._mode_windows = 0
        self._sinks: list[nodes.Sink] = []

    # -- sources ------------------------------------------------------------------
    def from_source(self, source: SourceSpec, watermarks: WatermarkStrategy | None = None, *, name: str | None = None, uid: str | None = None) -> DataStream:
        """A stream from a source (``fk.sources.generator/collection/files``), optionally with event time."""
        if not isinstance(source, SourceSpec):
            raise PlanError(f"from_source() takes a source from fk.sources, got {type(source).__name__}")
        stream = DataStream(self, nodes.Source((), spec=source, explicit_name=name, explicit_uid=uid))
        if watermarks is not None:
            stream = stream.assign_timestamps_and_watermarks(watermarks)
        return stream

    def from_collection(self, rows: Iterable[Any], schema: str | Schema | None = None, *, rows_per_batch: int | None = None, watermarks: WatermarkStrategy | None = None) -> DataStream:
        """Rows from memory; in streaming mode ``rows_per_batch`` rows arrive per micro-batch."""
        return self.from_source(collection(rows, schema, rows_per_batch=rows_per_batch), watermarks)

    def dead_letter_sink(self, job: str) -> SinkSpec:
        """Where rows that cannot be processed go, with the raw value, the reason and the source position.

        Malformed JSON/CSV records, values of the wrong type, null keys and null or
        out-of-range event times never fail the job and are never dropped unseen: they go
        here (default: Parquet under ``$FUNKE_HOME/jobs/<job>/dead-letters``) and are
        counted in the job's ``dead_letters`` metric.
        """
        if self.dead_letters is not None:
            return self.dead_letters
        return files(str(Path(self.settings.home) / "jobs" / job / "dead-letters"), overwrite=True)

    def set_latency_mode(self, mode: str) -> StreamEnvironment:
        """``"micro-batch"`` (the default), ``"latency-first"`` or ``"realtime"``.

        ``"latency-first"``: a window result leaves in the micro-batch whose elements pass the
        watermark, not the next one. Spark computes its watermark after a batch, so its own
        windows fire a batch late; in this mode event-time windows run on funke's operator
        (``explain()`` says so) and funke's one-input operators on Spark's watermark (windows,
        process functions) also move each key bucket's watermark to its largest event time -
        bound - 1 after the batch's elements (Flink's rule, never past Spark's next watermark).
        Elements more than the bound behind their bucket's latest can then be late a batch
        sooner. Two-input operators (joins, connect, broadcast) keep the micro-batch schedule. Call it before
        building windows: it decides their path.

        ``"realtime"``: Spark's real-time trigger, milliseconds from Kafka to Kafka instead of a
        micro-batch. It runs Kafka sources (Spark's connector), select/filter/expressions, union,
        lookup joins with a table of rows, rolling ``sum/min/max/count`` (one update per element,
        as Flink) and event-time tumbling/sliding window aggregates (an upsert stream of each
        window's updates), into at-least-once Kafka sinks. Anything else is refused while planning,
        naming the operator and why (``funke.plan.realtime``), never run in micro-batches instead.
        ``checkpoint_interval`` is the real-time checkpoint interval (default 5 minutes).

        >>> StreamEnvironment().set_latency_mode("micro-batch").latency_mode
        'micro-batch'
        >>> StreamEnvironment().set_latency_mode("latency-first").latency_mode
        'latency-first'
        """
        if mode not in ("micro-batch", "latency-first", "realtime"):
            raise PlanError(
                f"set_latency_mode() takes 'micro-batch' or 'realtime' or 'latency-first' (same-batch window results), got {mode!r}"
            )
        if mode != self.latency_mode and self._mode_windows:
            raise PlanError(
                f"set_latency_mode({mode!r}) after {self._mode_windows} event-time window(s) were built: the mode decides "
                "their path; call it before building the job"
            )
        self.latency_mode = mode
        return self

    def set_runtime_mode(self, mode: str) -> StreamEnvironment:
        """``"streaming"`` or ``"batch"`` (Flink's ``execution.runtime-mode``, any case), as ``runtime_mode=`` sets it,
        before the job's first sink: its plan depends on the mode. Flink's ``AUTOMATIC`` is refused (funke plans each
        query for one mode). As in Flink's BATCH execution, a batch run's keyed functions and windows read each key's
        elements in timestamp order (ties and elements without a timestamp as they came); ``execute(bounded=True)``
        in streaming mode reads them as they come, as a streaming run does.

        >>> StreamEnvironment().set_runtime_mode("BATCH").runtime_mode
        'batch'
        """
        wanted = str(mode).lower()
        if wanted not in ("streaming", "batch"):
            raise PlanError(f"the runtime mode is 'streaming' or 'batch' (funke plans each query for one of them), got {mode!r}")
        if wanted != self.runtime_mode and self._sinks:
            raise PlanError(
                f"the runtime mode {wanted!r} after {len(self._sinks)} sink(s) of the job were planned for {self.runtime_mode!r}: "
                "set it before the first INSERT or sink"
            )
        self.runtime_mode = wanted
        return self

    # -- plan ---------------------------------------------------------------------
    def _add_sink(self, sink: nodes.Sink) -> None:
        self._sinks.append(sink)

    @property
    def sinks(self) -> tuple[nodes.Sink, ...]:
        return tuple(self._sinks)

    def _mode(self, bounded: bool | None) -> str:
        if bounded is None:
            return self.runtime_mode
        return "batch" if bounded else "streaming"

    def explain(self, *, bounded: bool | None = None) -> str:
        """The plan tree; per node its uid, the path it runs on (native/general) and why."""
        if not self._sinks:
            raise PlanError("the job has no sink: call sink_to(...) or print() on a stream")
        return explain_plan(self._sinks, mode=self._mode(bounded), latency_mode=self.latency_mode)

    def execute(
        self,
        *,
        bounded: bool | None = None,
        name: str | None = None,
        fresh: bool = False,
        from_savepoint: str | None = None,
        allow_non_restored_state: bool = False,
    ) -> JobHandle:
        """Compile the plan onto Spark and start it; returns a JobHandle (``wait``, ``stop``, ``metrics``)
        at once (``execute_async`` is the same): a script calls ``.wait()`` to let a finite job finish.

        ``bounded=True`` runs the same program as a Spark batch job over bounded sources:
        the watermark is +infinity at the end, and results that follow from event time (windows,
        joins, SQL) equal the streaming run's. As in Flink's BATCH runtime mode, a keyed
        function's event-time timers fire after all of its key's elements, so a timer that reads
        state sees the key's whole input (a streaming run fires it when the watermark passes it).

        A streaming job keeps its checkpoints under ``checkpoint_dir`` (default:
        ``$FUNKE_HOME/jobs/<name>/checkpoint``). Started again under the same name, it
        resumes from its last committed micro-batch: state, source offsets and sink
        batches go on exactly where the earlier run stopped, crashed or was killed. A job
        that reached the end of its input, a different name, or ``fresh=True`` starts clean.

        ``from_savepoint``: start from a savepoint (``JobHandle.savepoint()``, ``funke
        savepoint``) instead: its state and source positions replace the job's checkpoint.
        Queries are matched by sink uid, stateful operators by uid and state layout; state the
        job no longer has is refused unless ``allow_non_restored_state`` (see ``funke.savepoints``).
        """
        from funke.runtime.start import start_job  # (pyspark's lazy import: declaring a job loads no Spark)

        if not self._sinks:
            raise PlanError("the job has no sink: call sink_to(...) or print() on a stream")
        if name is not None and not _APP.match(name):
            raise PlanError(f"job name {name!r} must be letters, digits, '.', '_' or '-' (it names directories)")
        return start_job(
            self,
            mode=self._mode(bounded),
            name=name or self.app,
            fresh=fresh,
            from_savepoint=from_savepoint,
            allow_non_restored_state=allow_non_restored_state,
        )

    def execute_async(self, **options: Any) -> JobHandle:
        """Start the job and return its handle at once: PyFlink's name for what ``execute`` does.

        ``execute(...)`` takes the same options and returns the same ``JobHandle``; neither blocks
        (Flink's ``execute()`` does): call ``.wait()`` to block until a finite job ends. A script
        that ends while its job still runs says so on stderr, and the job stops with it.
        """
        return self.execute(**options)
