"""The compiler: a visitor from plan nodes to Spark DataFrames, one ``visit_<Node>`` per primitive.

Every node is compiled once (shared upstreams are reused). After a node is built, it is
validated again against the schemas Spark resolved for its inputs, and Spark's analysis
errors are rewritten to name the node, so mistakes surface here, before a query starts.
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from funke.connectors.sources import GeneratorSource
from funke.connectors.tables import StaticTable
from funke.errors import PlanError, SchemaError, UnsupportedError, did_you_mean
from funke.plan import connect as cn
from funke.plan import joins as j
from funke.plan import nodes as n
from funke.plan import unkeyed as u
from funke.plan.capabilities import GENERAL, check_idleness, idle_inputs, place, split_watermark, watermarks_meeting
from funke.plan.functions import LateralTable
from funke.plan.generators import check_generators
from funke.plan.realtime import check_realtime
from funke.plan.types import Field, Schema, normalize_type
from funke.semantics.windows import SlidingEventTimeWindows, TumblingEventTimeWindows
from funke.spark import datasources, generated, kafka_source, realtime
from funke.spark import general as g
from funke.spark.datasources import EOS
from funke.spark.exprs import to_column
from funke.spark.operators import general_program, main_view, needs_time, pre_shuffled, side_view, two_input_program
from funke.spark.async_io import async_function
from funke.spark.python_fns import arrow_column, pandas_function, row_function
from funke.spark.session import is_connect
from funke.spark.sources import (
    CORRUPT,
    POSITION,
    REASON,
    SCRIPT_PT,
    SCRIPT_WM,
    generator_split,
    source_frame,
    static_frame,
    test_stream_frames,
)
from funke.spark.udfs import lateral_table, register_python_functions

NO_CONNECTOR = "this SparkSession has none (a session funke starts loads it: funke.connectors.kafka_jvm; a session of your own needs its jars in spark.jars)"
#: Event time of the end-of-input row: far enough that every window closes.
END_OF_TIME = "9999-12-31 00:00:00"
_WATERMARK_META = "spark.watermarkDelayMs"


def spark_schema_to_funke(df: DataFrame) -> Schema:
    return Schema(tuple(Field(f.name, normalize_type(f.dataType.simpleString()), f.nullable) for f in df.schema.fields if f.name != EOS))


@dataclass
class SourceMetric:
    """An observed metric set per source: rows read and whether the end-of-input row passed.

    Streaming queries report it in their progress under ``name``; a batch job through
    ``observation`` (a ``pyspark.sql.Observation``).
    """

    name: str
    finite: bool
    observation: Any = None
    counts_rows: bool = True
    #: The operator (its uid made safe) whose ``rows_in`` / ``rows_out`` this metric counts.
    operator: str | None = None
    #: Further observed fields and the count each is (``tag:<operator>:<tag>``: the rows sent to a side output).
    counts: dict[str, str] = field(default_factory=dict)


@dataclass
class Compiled:
    """A node's Spark frame, the metrics observed on the way, and what the runtime must know.

    ``control`` carries a ``TestStream``'s scripted time rows alongside the elements;
    ``tagged`` is a general operator's output with every tag in it (main and side outputs),
    which the runtime splits when several sinks read from it.
    """

    frame: DataFrame
    metrics: list[SourceMetric] = field(default_factory=list)
    stateful: bool = False
    control: DataFrame | None = None
    tagged: DataFrame | None = None
    general: Any = None  # the funke.spark.general.Program behind ``tagged``
    #: A source's frame before the observe that counts its rows: a watermark right after the
    #: source counts them in its own observe instead (one observe per row, not two).
    uncounted: DataFrame | None = None
    #: Operators upstream whose watermark funke computes on the driver (``general.ClockSpec``).
    clocks: list[Any] = field(default_factory=list)
    #: Operators upstream whose time rows come only when due (``general.BeatSpec``).
    beats: list[Any] = field(default_factory=list)
    #: The frame still carries the end-of-input row, whose rows and end were counted upstream
    #: (a select or filter passes it on to the watermark after it: see ``plain``).
    end_counted: bool = False


@dataclass
class DeadLetterRule:
    """Rows of ``frame`` for which ``reason`` is not null leave the main path for the dead letters."""

    node: n.Node
    frame: DataFrame
    reason: Column
    raw: Column
    position: Column


#: The dead-letter output's columns.
DEAD_LETTER_DDL = "job string, node string, reason string, raw string, position string, detected_at timestamp"
#: Event times funke accepts: from year 1 up to, not including, the end-of-input instant.
_MIN_MS, _END_MS = -62_135_596_800_000, 253_402_214_400_000
#: The event time a streaming row with an unusable one carries from the watermark to its
#: observe (about 146 000 BC in microseconds): below every valid event time.
_BAD_TIME_MICROS = -(2**62)
_ATOMIC = {"string", "integer", "long", "short", "byte", "double", "float", "boolean", "date", "timestamp"}
_DL_SOURCE = "_funke_end_of"
#: Spark integral types: a key of one of them is hashed as bigint, so both inputs of a join bucket alike.
_INTEGRAL_SPARK = frozenset({"byte", "short", "integer", "long"})


def _operator_input(frame: DataFrame, program: g.Program) -> tuple[DataFrame, g.Program]:
    """A general operator's input as it goes to Python, and its program knowing the columns' order
    (``g.named``). Bigint value columns go null-free, each beside its null mask (``g.NULLS``), so they
    reach the operator's pandas frames as int64, not float64 (which rounds above 2**53)."""
    longs = [f.name for f in frame.schema.fields if f.dataType.typeName() == "long" and f.name not in g.CONTROL_COLUMNS]
    if longs:
        rest = [F.col(c) for c in frame.columns if c not in longs]
        exact = [F.coalesce(F.col(c), F.lit(0).cast("bigint")).alias(c) for c in longs]
        frame = frame.select(*rest, *exact, *(F.isnull(F.col(c)).alias(g.NULLS + c) for c in longs))
    return frame, replace(program, columns=tuple(frame.columns))


def default_buckets(cores: int) -> int:
    """How many key buckets a general operator of a new job spreads its keys over: four a core, at
    least two. A job resuming a checkpoint or a savepoint keeps the buckets it was started with
    (``Checkpoints.recorded_buckets``): a key's state is in the bucket its hash named then."""
    return max(2, 4 * cores)


def spark_int_hash(value: int, seed: int = 42) -> int:
    """Spark's ``hash()`` of an int column (Murmur3 x86 32-bit, seed 42): what its hash partitioning
    of a grouping key ``fk_b`` is ``pmod`` of.

    >>> [spark_int_hash(i) for i in range(3)]
    [933211791, -559580957, 1765031574]
    """

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF

    k1 = rotl((value & 0xFFFFFFFF) * 0xCC9E2D51 & 0xFFFFFFFF, 15) * 0x1B873593 & 0xFFFFFFFF
    h1 = rotl((seed & 0xFFFFFFFF) ^ k1, 13)
    h1 = (h1 * 5 + 0xE6546B64) & 0xFFFFFFFF
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def balanced_bucket_ids(buckets: int, partitions: int) -> tuple[int, ...]:
    """The values of ``fk_b`` for buckets ``0..buckets-1`` that Spark's hash partitioning spreads evenly
    over ``partitions`` (bucket ``b`` in partition ``b mod partitions``; the ints ``0..buckets-1``
    themselves hash 3 and 5 of 8 onto two partitions, so one task had five eighths of the keys).

    >>> ids = balanced_bucket_ids(8, 2)
    >>> ids, [spark_int_hash(i) % 2 for i in ids]
    ((2, 0, 4, 1, 5, 3, 10, 6), [0, 1, 0, 1, 0, 1, 0, 1])
    >>> balanced_bucket_ids(4, 1)
    (0, 1, 2, 3)
    """
    if partitions <= 1:
        return tuple(range(buckets))
    free: dict[int, list[int]] = {p: [] for p in range(partitions)}
    value = 0
    while any(len(v) < -(-buckets // partitions) for v in free.values()):
        free[spark_int_hash(value) % partitions].append(value)
        value += 1
    return tuple(free[b % partitions][b // partitions] for b in range(buckets))


class Compiler:
    def __init__(
        self,
        spark: SparkSession,
        *,
        mode: str,
        cores: int = 2,
        buckets: tuple[int, ...] | None = None,
        seeds: dict[int, tuple[DataFrame, Any]] | None = None,
        side_tags: dict[int, tuple[Any, ...]] | None = None,
    ):
        self.spark = spark
        self.mode = mode
        self.streaming = mode == "streaming"
        self.cores = cores
        #: The value of ``fk_b`` for each key bucket (its position): a key's bucket is ``xxhash64(keys) mod``
        #: their number (``funke.runtime.job._kept_buckets``).
        self.bucket_ids: tuple[int, ...] = tuple(buckets) if buckets else tuple(range(default_buckets(cores)))
        self.buckets = len(self.bucket_ids)
        #: Nodes whose tagged output is given (one micro-batch of a shared general operator).
        self.seeds = dict(seeds or {})
        #: Per node, the side-output tags read from it downstream.
        self.side_tags = dict(side_tags or {})
        self._done: dict[int, Compiled] = {}
        #: Checks whose failing rows go to the job's dead-letter output instead of on.
        self.dead_rules: list[DeadLetterRule] = []
        self._observed: dict[str, int] = {}
        self._plain_metrics: list[SourceMetric] = []
        #: Watermark nodes feeding a native interval join: declared to Spark 2 ms further behind.
        self.join_watermarks: set[int] = set()
        #: Count rows out of every native operator too (settings.operator_metrics).
        self.operator_metrics = False
        #: Per node, the watermark nodes (by id) of the query that reads it (``query_watermarks``).
        self.query_watermarks: dict[int, set[int]] = {}
        #: Sources (by id) whose watermark is per split (Kafka partitions), and then their splits.
        self.split_sources: set[int] = set()
        self.splits: dict[int, list[str]] = {}
        #: ``set_latency_mode("latency-first")``: one-input general operators on Spark's watermark
        #: fire in the micro-batch whose elements pass their time (``g.Program.same_batch_bound_ms``).
        self.latency_first = False
        #: ``set_latency_mode("realtime")``: Spark's real-time trigger (``funke.spark.realtime``).
        self.realtime = False

    # -- driver ---------------------------------------------------------------------
    def compile(self, node: n.Node) -> Compiled:
        key = id(node)
        if key in self._done:
            return self._done[key]
        if key in self.seeds:
            frame, program = self.seeds[key]
            result = Compiled(main_view(frame, program), tagged=frame, general=program)
            self._done[key] = result
            return result
        inputs = [self.compile(i) for i in node.inputs]
        visit: Callable[..., Compiled] | None = getattr(self, f"visit_{type(node).__name__}", None)
        if visit is None:
            raise UnsupportedError(f"{node.where()} [{node.uid}]: the compiler has no rule for {node.kind} nodes ({place(node).why})")
        try:
            self._plain_metrics = []
            register_python_functions(self.spark, node)
            result = visit(node, *inputs)
            # metrics observed by plain() belong to this node's frame, not to the (maybe shared) input
            result.metrics = result.metrics + [m for m in self._plain_metrics if m not in result.metrics]
            if self.operator_metrics and result.tagged is None and not isinstance(node, (n.Source, n.Watermark, n.Sink)):
                result.frame = self._count(result, node, "rows_out", result.frame)
            node.validate(tuple(spark_schema_to_funke(i.frame) for i in inputs))
        except AnalysisException as e:
            raise _plan_error(node, e, inputs) from None
        self._done[key] = result
        return result

    def _merge(self, node_frame: DataFrame, *inputs: Compiled, stateful: bool = False) -> Compiled:
        metrics = [m for i in inputs for m in i.metrics]
        controls = [i.control for i in inputs if i.control is not None]
        clocks = [c for i in inputs for c in i.clocks]
        beats = [b for i in inputs for b in i.beats]
        stateful = stateful or any(i.stateful for i in inputs)
        return Compiled(node_frame, metrics, stateful, control=controls[0] if controls else None, clocks=clocks, beats=beats)

    def plain(self, c: Compiled, uid: str, *, keep_end: bool = False) -> DataFrame:
        """The input without the end-of-input row (counting rows and noting the end on the way, once).

        ``keep_end``: the row stays (still counted here), for a select or filter to pass on: a
        watermark after them turns it into the end of time, which fires every window (without
        it a finite stream's last windows never fired).
        """
        df = c.frame
        if EOS not in df.columns:
            return df
        if not c.end_counted:
            name = f"funke_src_{_safe(uid)}"
            own = Compiled(df)
            rows, ended = F.count(F.when(~F.col(EOS), 1)).alias("rows"), F.max(F.col(EOS).cast("int")).alias("eos")
            df = self.observe(own, name, True, rows, ended)
            self._plain_metrics.extend(own.metrics)
        return df if keep_end else df.where(~F.col(EOS)).drop(EOS)

    def observe(self, c: Compiled | None, name: str, finite: bool, *aggs: Column, frame: DataFrame | None = None) -> DataFrame:
        """``df.observe`` under ``name``, recorded on ``c`` so the runtime can read it back."""
        df = frame if frame is not None else c.frame  # type: ignore[union-attr]
        # Nodes built alike share a uid; one query (the dead letters) may read several of them.
        self._observed[name] = self._observed.get(name, 0) + 1
        if self._observed[name] > 1:
            name = f"{name}_{self._observed[name]}"
        metric = SourceMetric(name, finite)
        if not self.streaming:
            from pyspark.sql import Observation

            metric.observation = Observation(name)
            df = df.observe(metric.observation, *aggs)
        else:
            df = df.observe(name, *aggs)
        if c is not None:
            c.metrics.append(metric)
        return df

    def dead_letters(self, node: n.Node, frame: DataFrame, reason: Column, *, raw: Column | None = None, position: Column | None = None) -> tuple[DataFrame, SourceMetric]:
        """Send the rows of ``frame`` whose ``reason`` is not null to the dead letters; the rest go on.

        Returns the rows that go on and the metric counting the others here, in the main query
        (the caller records it). The end-of-input row is never a dead letter.
        """
        reason = self.dead_rule(node, frame, reason, raw=raw, position=position)
        counter = Compiled(frame)
        counted = self.observe(counter, f"funke_dead_{_safe(node.uid)}", False, F.count(reason).alias("dead"))
        counter.metrics[-1].counts_rows = False
        return counted.where(reason.isNull()), counter.metrics[-1]

    def dead_rule(self, node: n.Node, frame: DataFrame, reason: Column, *, raw: Column | None = None, position: Column | None = None) -> Column:
        """Record that the rows of ``frame`` whose ``reason`` is not null are dead letters (the
        dead-letter query reads them); returns the reason, null on the end-of-input row."""
        if EOS in frame.columns:
            reason = F.when(~F.col(EOS), reason)
        columns = [c for c in frame.columns if c != EOS]
        raw = raw if raw is not None else F.to_json(F.struct(*columns))
        if position is None:  # past the source, a row is known by the source(s) it came from
            position = F.lit(", ".join(sorted({x.spec.describe() for x in n.walk([node]) if isinstance(x, n.Source)})))
        self.dead_rules.append(DeadLetterRule(node, frame, reason, raw, position))
        return reason

    def dead_letter_frame(self, job: str) -> Compiled | None:
        """All rules' failing rows as one frame with ``DEAD_LETTER_DDL``'s columns, or None without rules.

        Each finite source's end-of-input row rides along (and is dropped before the sink), so
        the dead-letter query knows, like every other query, when its input has ended.
        """
        if not self.dead_rules:
            return None
        frames = []
        rules = {rule.node.uid: rule for rule in self.dead_rules}  # nodes built alike see the same rows
        for rule in rules.values():
            frames.append(
                rule.frame.where(rule.reason.isNotNull()).select(
                    F.lit(job).alias("job"),
                    F.lit(f"{rule.node.where()} [{rule.node.uid}]").alias("node"),
                    rule.reason.alias("reason"),
                    rule.raw.alias("raw"),
                    rule.position.alias("position"),
                    F.current_timestamp().alias("detected_at"),
                    F.lit(None).cast("string").alias(_DL_SOURCE),
                )
            )
        sources = {id(x): x for rule in rules.values() for x in n.walk([rule.node]) if isinstance(x, n.Source)}
        ends = []
        for src in sources.values():
            frame = self._done[id(src)].frame
            if EOS in frame.columns:
                nulls = [F.lit(None).cast(t).alias(c) for c, t in (col.split() for col in DEAD_LETTER_DDL.split(", "))]
                ends.append((src, frame.where(F.col(EOS)).select(*nulls, F.lit(src.uid).alias(_DL_SOURCE))))
        df = frames[0]
        for other in frames[1:] + [f for _, f in ends]:
            df = df.unionByName(other)
        out = Compiled(df)
        for src, _ in ends:
            ended = F.max(F.when(F.col(_DL_SOURCE) == src.uid, 1).otherwise(0)).alias("eos")
            out.frame = self.observe(out, f"funke_dl_end_{_safe(src.uid)}", True, ended, frame=out.frame)
            out.metrics[-1].counts_rows = False
        out.frame = out.frame.where(F.col(_DL_SOURCE).isNull()).drop(_DL_SOURCE)
        return out

    # -- visitors -------------------------------------------------------------------
    def visit_Source(self, node: n.Source) -> Compiled:
        control = None
        if node.scripted_time:
            df, control = test_stream_frames(self.spark, node.spec, self.streaming)
        elif id(node) in self.split_sources:  # each row's partition goes on to the watermark's observe
            df = kafka_source.frame(self.spark, node.spec, streaming=True, cores=self.cores, split=True)
            self.splits[id(node)] = kafka_source.partition_keys(node.spec)
        elif self.realtime:  # (Kafka only: funke.plan.realtime)
            df = kafka_source.frame(self.spark, node.spec, streaming=True, cores=self.cores, realtime=True)
        else:
            df = source_frame(self.spark, node.spec, streaming=self.streaming, cores=self.cores)
        source_columns = df.columns
        if CORRUPT in source_columns:
            extra = (CORRUPT, REASON, POSITION, EOS, kafka_source.SPLIT)
            columns = [c for c in df.columns if c not in extra]
            # (also reading the parsed columns: Spark refuses a scan that reads only the corrupt-record column)
            raw = F.coalesce(F.col(CORRUPT), F.to_json(F.struct(*columns)))
            if REASON in source_columns:
                reason = F.col(REASON)
            else:
                reason = F.when(F.col(CORRUPT).isNotNull(), F.lit(f"{node.spec.describe()}: malformed record or a value of the wrong type"))
            position = F.col(POSITION) if POSITION in source_columns else F.input_file_name()
            df, dead = self.dead_letters(node, df, reason, raw=raw, position=position)
            df = df.drop(*(c for c in extra[:3] if c in source_columns))
        out = Compiled(df, control=control)
        if CORRUPT in source_columns:
            out.metrics.append(dead)
        if EOS not in df.columns:
            out.uncounted = df
            out.frame = self.observe(out, f"funke_src_{_safe(node.uid)}", False, F.count(F.lit(1)).alias("rows"))
        return out

    def visit_Watermark(self, node: n.Watermark, up: Compiled) -> Compiled:
        s = node.strategy
        column = s.timestamp_column
        assert column is not None
        at_source = isinstance(node.input, n.Source)
        frame, later = self._watermark_input(node, up)
        if self.streaming and EOS not in frame.columns:
            self._end_reaches(node)
        if s.ingestion_time:
            # Spark's current_timestamp() is the micro-batch's start, the same for its every row
            frame = frame.withColumn(column, F.current_timestamp())

        def bad_time_reason() -> Column:
            if s.ingestion_time:  # stamped here: never null, never out of range
                return F.lit(None).cast("string")
            return self.dead_rule(node, up.frame, _bad_event_time(F.col(column), column, s.timestamp_unit))

        # The observe right after a source replaces the source's own (same rows): one observe
        # per row, not two (each splits whole-stage codegen and costs every row).
        counted = at_source and (later is not None or up.uncounted is not None or self.streaming)
        out = self._merge(frame, up)
        if counted:
            out.metrics = [m for m in out.metrics if m.counts_rows is False]
        if not self.streaming:
            reason = bad_time_reason()
            aggs = [F.count(F.lit(1)).alias("rows")] if counted else []
            df = self.observe(out, f"funke_wm_{_safe(node.uid)}", False, *aggs, F.count(reason).alias("dead"), frame=frame)
            out.metrics[-1].counts_rows = counted
            df = df.where(reason.isNull()).withColumn(column, _event_time(column, s.timestamp_unit, EOS in df.columns))
            out.frame = df.select(*later) if later is not None else df
            return out
        # Streaming: a row whose event time is unusable keeps going, with the event time
        # _bad_time() (below every valid one: it never moves the watermark), through one observe
        # that counts rows, dead letters, the largest event time and the end of input, and
        # leaves the main path right after it.
        reason = bad_time_reason()
        finite = EOS in frame.columns
        ts = F.when(reason.isNull(), _event_time(column, s.timestamp_unit, finite)).otherwise(_bad_time())
        delay = s.max_out_of_orderness_ms + (_JOIN_SHIFT_MS if id(node) in self.join_watermarks else 0)
        df = frame.withColumn(column, ts)
        if s.generator is None:
            df = df.withWatermark(column, f"{delay} milliseconds")
        else:  # the user's generator, not Spark, says the watermark: operators downstream read its rows
            out.control = generated.control_frame(self.spark, df, column, F.col(column) > _bad_time(), F.col(EOS) if finite else None, s.generator)
        # observe() is also a barrier: Spark pushes filters that do not read the event-time
        # column below the watermark, where they would drop the end-of-input row unseen.
        usable = F.col(column) > _bad_time()
        good = usable & ~F.col(EOS) if finite else usable
        aggs = [F.count(F.when(good, 1)).alias("rows"), F.max(F.when(usable, F.unix_millis(F.col(column)))).alias("max_event_time")]
        aggs.append(F.count(F.when(F.col(column) == _bad_time(), 1)).alias("dead"))
        if finite:
            aggs.append(F.max(F.col(EOS).cast("int")).alias("eos"))
        splits = self.splits.get(id(node.input))
        if splits is not None:  # per split: the largest event time and the rows (funke.runtime.watermarks.Clock)
            split = F.col(kafka_source.SPLIT)
            for i, part in [(str(i), split == key) for i, key in enumerate(splits)] + [(g.UNLISTED, ~split.isin(splits))]:
                if finite:  # the end-of-input row (of no partition) ends every partition
                    part = F.coalesce(part, F.lit(False)) | F.col(EOS)
                aggs.append(F.max(F.when(usable & part, F.unix_millis(F.col(column)))).alias(f"max_event_time_{i}"))
                aggs.append(F.count(F.when(good & part, 1)).alias(f"rows_{i}"))
        df = self.observe(out, f"funke_wm_{_safe(node.uid)}", finite, *aggs, frame=df)
        if splits is not None:
            df = df.drop(kafka_source.SPLIT)
        out.metrics[-1].counts_rows = at_source
        if finite:
            df = df.where((F.col(column) > _bad_time()) & (F.col(column) < F.to_timestamp(F.lit(END_OF_TIME)))).drop(EOS)
        else:
            df = df.where(F.col(column) > _bad_time())
        out.frame = df.select(*later) if later is not None else df
        return out

    def _end_reaches(self, node: n.Watermark) -> None:
        """Refuse a watermark that a finite source's end of input cannot reach (a map or a union on
        the way drops it): the watermark would never pass the last windows, which never fire."""
        todo, ended = list(node.inputs), []
        while todo:
            x = todo.pop()
            if isinstance(x, n.Watermark):
                continue
            if isinstance(x, n.Source) and id(x) in self._done and EOS in self._done[id(x)].frame.columns:
                ended.append(x)
            todo.extend(x.inputs)
        if ended:
            names = {"python": "a Python function", "union": "a union"}
            passed = (x for x in n.walk([node.input]) if not isinstance(x, (n.Source, n.Select, n.Filter)))
            between = sorted({names.get(x.kind, x.kind) for x in passed})
            raise UnsupportedError(
                f"{node.where()} [{node.uid}]: the end of the finite source {ended[0].spec.describe()} cannot pass "
                f"{', '.join(between) or 'what comes'} before this watermark, so the last windows would never fire; "
                "give the source its watermark (from_source(..., watermarks=...)) or assign it before that"
            )

    def _watermark_input(self, node: n.Watermark, up: Compiled) -> tuple[DataFrame, list[Column] | None]:
        """What the watermark's observe reads, and the select that completes the rows after it.

        Right after a generator, the observe reads only the index and the event time; the
        other columns are computed after it, so Spark builds them only for rows that pass
        the filters downstream (as it does in a job without the observe).
        """
        src = node.input
        if isinstance(src, n.Source) and isinstance(src.spec, GeneratorSource) and not src.scripted_time and node.strategy.generator is None:
            column = node.strategy.timestamp_column
            if column in src.spec.schema.names:
                return generator_split(self.spark, src.spec, streaming=self.streaming, cores=self.cores, early=[column])
        return (up.uncounted if up.uncounted is not None else up.frame), None

    def visit_Select(self, node: n.Select, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid, keep_end=True)
        columns = [to_column(e) for e in node.exprs]
        out = df.select(*columns)
        if EOS in df.columns and EOS not in out.columns:  # (its values are a row's or nulls: the select is safe on it)
            out = df.select(*columns, F.col(EOS))
        return self._ended(self._merge(out, up))

    def visit_Filter(self, node: n.Filter, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid, keep_end=True)
        keep = to_column(node.predicate)
        return self._ended(self._merge(df.where(F.col(EOS) | keep if EOS in df.columns else keep), up))

    @staticmethod
    def _ended(c: Compiled) -> Compiled:
        c.end_counted = EOS in c.frame.columns
        return c

    def visit_PythonFunction(self, node: n.PythonFunction, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid)
        out_schema = node.schema or spark_schema_to_funke(df)
        spark_schema = out_schema.ddl() if node.mode != "filter" else df.schema
        if node.vectorized and callable(getattr(node.fn, "spark_transform", None)):  # runs in the JVM (fk.ml.predict, MLlib)
            return self._merge(_keep_event_time(df, node.fn.spark_transform(df)), up)
        if node.vectorized and callable(getattr(node.fn, "arrow_column", None)):  # a library's added column (fk.ml.predict)
            udf = F.arrow_udf(arrow_column(node.fn.arrow_column), node.fn.output_type)
            column = udf(*(F.col(c) for c in node.fn.inputs))
            return self._merge(df.withColumn(node.fn.output, column), up)
        if node.vectorized:
            fn = pandas_function(node.fn, node.mode, out_schema, node.where(), node.uid)
            result = df.mapInPandas(fn, spark_schema)
        else:
            fn = row_function(node.fn, node.mode, out_schema, node.where(), node.uid)
            result = df.mapInArrow(fn, spark_schema)
        return self._merge(_keep_event_time(df, result), up)

    def visit_LateralTable(self, node: LateralTable, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid)
        return self._merge(_keep_event_time(df, lateral_table(df, node)), up)

    def visit_Union(self, node: n.Union, *ups: Compiled) -> Compiled:
        frames = [self.plain(u, node.uid) for u in ups]
        df = frames[0]
        for other in frames[1:]:
            df = df.unionByName(other)
        return self._merge(df, *ups)

    def visit_KeyBy(self, node: n.KeyBy, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid)
        nullable = [f.name for f in df.schema.fields if f.name in node.keys and f.nullable and not node.nulls]
        if nullable:  # Flink refuses a null key; here the row goes to the dead letters
            null = [F.when(F.col(k).isNull(), F.lit(k)) for k in nullable]
            reason = F.concat(F.lit("null key column(s): "), F.concat_ws(", ", *null))
            df, dead = self.dead_letters(node, df, F.when(F.concat_ws(", ", *null) != "", reason))
            out = self._merge(df, up)
            out.metrics.append(dead)
            return out
        return self._merge(df, up)

    def visit_LookupJoin(self, node: n.LookupJoin, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid)
        table = self._table(node.table)
        joined = df.join(F.broadcast(table), on=list(node.on), how=node.how)
        order = list(df.columns) + [c for c in table.columns if c not in node.on]
        return self._merge(joined.select(*order), up)

    def _table(self, t: StaticTable) -> DataFrame:
        if t.loader is not None:
            return t.loader(self.spark)
        assert t.rows is not None and t.declared is not None
        df = static_frame(self.spark, t.rows, t.declared)
        # A column without nulls is declared not nullable, so a key taken from it needs no
        # null-key dead-letter rule (and no observe) downstream.
        full = [i for i in range(len(t.declared)) if all(r[i] is not None for r in t.rows)] if t.rows else []
        atomic = {f.name for f in df.schema.fields if f.dataType.typeName() in _ATOMIC}
        names = df.columns
        return df.select(
            *(F.coalesce(F.col(c), F.lit(t.rows[0][i]).cast(df.schema[c].dataType)).alias(c) if i in full and c in atomic else F.col(c) for i, c in enumerate(names))
        )

    def visit_WindowAggregate(self, node: n.WindowAggregate, up: Compiled) -> Compiled:
        if place(node).path == GENERAL:
            return self._general(node, up)
        df = self.plain(up, node.uid)
        ts = node.input.event_time
        keys = list(node.input.keys or ())
        assert ts is not None
        if self.streaming and _WATERMARK_META not in df.schema[ts].metadata and node.input.watermark is not None:
            # A Python function in between forgets Spark's watermark column metadata. Mark the
            # column again instead of a second withWatermark, which Spark refuses ("Redefining
            # watermark is disallowed") when the query already has one upstream: the watermark
            # itself is still the one the upstream EventTimeWatermark computes.
            delay = node.input.watermark.max_out_of_orderness_ms
            df = df.withColumn(ts, F.col(ts).alias(ts, metadata={**df.schema[ts].metadata, _WATERMARK_META: delay}))
        window = _window_column(node, ts)
        aggs = [_aggregate(a) for a in node.aggregates]
        grouped = df.groupBy(window.alias("__window"), *keys).agg(*aggs)
        out = grouped.select(
            *keys,
            F.col("__window.start").alias("window_start"),
            F.col("__window.end").alias("window_end"),
            *(a.alias for a in node.aggregates),
        )
        return self._merge(out, up, stateful=True)

    def visit_RollingAggregate(self, node: n.RollingAggregate, up: Compiled) -> Compiled:
        if self.realtime:
            return self._merge(realtime.rolling(self.plain(up, node.uid), node), up, stateful=True)
        return self._general(node, up)

    def visit_Deduplicate(self, node: n.Deduplicate, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid)
        keys = list(node.input.keys or ())
        # Spark's dropDuplicates drops rows behind the watermark when a key column carries it (and forgets
        # keys older than it); Flink's deduplication keeps every key's first row, late or not: the key
        # columns go in without the mark, and come out with it again for the operators after.
        marked = {f.name: f.metadata for f in df.schema.fields if f.name in keys and _WATERMARK_META in f.metadata}
        if marked:
            unmarked = {c: F.col(c).alias(c, metadata={k: v for k, v in m.items() if k != _WATERMARK_META}) for c, m in marked.items()}
            remarked = {c: F.col(c).alias(c, metadata=m) for c, m in marked.items()}
            out = df.withColumns(unmarked).dropDuplicates(keys).withColumns(remarked)
        else:
            out = df.dropDuplicates(keys)
        # (not ``stateful``: a row leaves in the micro-batch that reads it; no later batch need run)
        return self._merge(out, up)

    def visit_KeyedProcess(self, node: n.KeyedProcess, up: Compiled) -> Compiled:
        return self._general(node, up)

    def visit_Process(self, node: u.Process, up: Compiled) -> Compiled:
        return self._general(node, up)

    def visit_AsyncWait(self, node: u.AsyncWait, up: Compiled) -> Compiled:
        df = self.plain(up, node.uid)
        run = async_function(node.function, node.ordered, node.timeout_ms, node.capacity, node.output, node.where())
        return self._merge(df.mapInArrow(run, node.output.ddl()), up)

    def visit_SideOutput(self, node: n.SideOutput, up: Compiled) -> Compiled:
        assert up.tagged is not None and up.general is not None, "side outputs come from general operators"
        out = self._merge(side_view(up.tagged, up.general, node.tag), up)
        out.control = None
        return out

    def _bucket(self, position: Column) -> Column:
        """The ``fk_b`` value of the bucket at ``position`` (``0..buckets-1``)."""
        if self.bucket_ids == tuple(range(self.buckets)):
            return position.cast("int")
        return F.element_at(F.array(*(F.lit(i) for i in self.bucket_ids)), (position + 1).cast("int")).cast("int")

    def _key_bucket(self, *hashed: Column) -> Column:
        """The ``fk_b`` value of the bucket that the ``xxhash64`` of ``hashed`` names."""
        return self._bucket(F.pmod(F.xxhash64(*hashed), F.lit(self.buckets)))

    def _every_bucket(self) -> Column:
        """Every bucket's ``fk_b`` value, exploded (a row for each)."""
        return F.explode(F.array(*(F.lit(i) for i in self.bucket_ids)))

    def _general(self, node: n.Node, up: Compiled) -> Compiled:
        """Run ``node`` as a funke operator over key buckets (``funke.spark.general``)."""
        df = self.plain(up, node.uid)
        program = general_program(node, self.buckets, df, self.side_tags.get(id(node), ()))
        clock = self._clock(node, one_input=True) if up.control is None and needs_time(node) else None
        bound = self._same_batch_bound(node, up, clock)
        if bound is not None:
            program = replace(program, same_batch_bound_ms=bound)
        if up.control is not None:
            program = replace(program, scripted=True)
        keys = list(node.input.keys or ())
        ts = node.input.event_time
        # (an unkeyed operator's buckets: one per Spark partition, its elements in their order)
        bucket = self._key_bucket(*(F.col(k) for k in keys)) if keys else self._bucket(F.pmod(F.spark_partition_id(), F.lit(self.buckets)))
        stamp = F.lit(None).cast("bigint")
        if ts is not None:
            stamp = F.unix_millis(F.col(ts).cast("timestamp"))
        values = [F.unix_micros(F.col(c).cast("timestamp")).alias(c) if c in program.micros else F.col(c) for c in program.values]
        nothing = F.lit(None).cast("bigint")
        now = _processing_time(up)
        # SEQ null: arrival order, as Spark keeps each source partition's order
        control = {g.BUCKET: bucket, g.SEQ: nothing, g.CONTROL: F.lit(False), g.TS: stamp, g.WM: nothing, g.PT: now}
        early = program.preaggregate is not None and program.preaggregate.before_shuffle
        if early:  # partial aggregates are made of these; they get the other control columns after
            control = {c: control[c] for c in (g.BUCKET, g.TS)}
        elements = df.select(*(column.alias(name) for name, column in control.items()), *values)
        counter = Compiled(elements)
        elements = self._count(counter, node, "rows_in", elements)
        if early:
            elements = pre_shuffled(elements, program, now)
        beat = None
        if not self.streaming:
            rows, program = _operator_input(elements, program)
            tagged = rows.groupBy(g.BUCKET).applyInPandas(g.batch_function(program), program.output_ddl())
        else:
            if clock is not None:
                program = replace(program, clock=True, beat=True)
                control = self._clock_rows(clock).drop(g.SIDE)
            elif up.control is not None:
                control = self._control_rows(up)
            elif needs_time(node):
                program = replace(program, beat=True)
                control, beat = self._beat_rows(node)
            else:
                control = None
            merged = elements if control is None else elements.unionByName(control, allowMissingColumns=True)
            time_mode = "EventTime" if (up.control is None and node.input.watermark is not None) else "None"
            wake = beat is not None and time_mode == "EventTime"
            merged, program = _operator_input(merged, program)
            tagged = merged.groupBy(g.BUCKET).transformWithStateInPandas(
                g.processor(program, wake=wake), program.output_ddl(), "Append", time_mode
            )
        # Only an operator driven by time holds output back until the batch after the end of input.
        # (A test script's last batch moves the watermark to +infinity itself.)
        out = self._merge(tagged, up, stateful=needs_time(node) and up.control is None)
        out.metrics += counter.metrics
        if clock is not None:
            out.clocks.append(clock)
        if beat is not None:
            out.beats.append(beat)
        return self._tagged(node, tagged, program, out)

    def _same_batch_bound(self, node: n.Node, up: Compiled, clock: g.ClockSpec | None) -> int | None:
        """The delay B of the one bounded-out-of-orderness watermark ``node`` follows, where same-batch
        firing is asked for (``latency_first``) and sound: Spark's query watermark is this operator's
        (one watermarked input, the query's only one; not funke's clock, a test script or a
        WatermarkGenerator), so a bucket's ``largest event time - B - 1`` is never above it."""
        if not (self.latency_first and self.streaming) or clock is not None or up.control is not None or not needs_time(node):
            return None
        if node.scripted_time or node.generated_time or node.input.event_time is None:
            return None
        marks = watermarks_meeting(node)
        if len(marks) != 1 or self.query_watermarks.get(id(node), set()) - {id(marks[0])}:
            return None
        w = marks[0]
        if w.strategy.generator is not None or split_watermark(w) or node.input.watermark != w.strategy:
            return None
        # (a watermark feeding a native interval join is declared to Spark that much further behind)
        return w.strategy.max_out_of_orderness_ms + (_JOIN_SHIFT_MS if id(w) in self.join_watermarks else 0)

    def _count(self, c: Compiled, node: n.Node, field: str, frame: DataFrame) -> DataFrame:
        """``frame`` observed counting its rows (the end-of-input row aside) as ``node``'s ``field``."""
        rows = F.count(F.when(~F.col(EOS), 1)) if EOS in frame.columns else F.count(F.lit(1))
        observed = self.observe(c, f"funke_op_{field[5:]}_{_safe(node.uid)}", False, rows.alias(field), frame=frame)
        c.metrics[-1].counts_rows, c.metrics[-1].operator = False, _safe(node.uid)
        return observed

    def _tagged(self, node: n.Node, tagged: DataFrame, program: g.Program, out: Compiled) -> Compiled:
        """A general operator's result: its tagged output (late drops and main-output rows counted on the way) and main view."""
        dropped = F.sum(F.when(F.col(g.TAG) == g.DROPPED, F.col(g.COUNT))).alias("dropped")
        fields = [dropped, F.count(F.when(F.col(g.TAG) == "", 1)).alias("rows_out")]
        sides = {f"tag_{i}": o.label for i, o in enumerate(program.outputs) if o.tag is not None}
        fields += [F.count(F.when(F.col(g.TAG) == label, 1)).alias(name) for name, label in sides.items()]
        if program.beat:  # what funke.runtime.watermarks.Beat needs: the bucket runs and their next processing-time timer
            due = F.col(g.TAG) == g.DUE
            fields += [F.count(F.when(due, 1)).alias("runs"), F.min(F.when(due, F.col(g.COUNT))).alias("pt_due")]
        tagged = self.observe(out, _late_observe(node), False, *fields, frame=tagged)
        out.metrics[-1].counts_rows, out.metrics[-1].operator = False, _safe(node.uid)
        out.metrics[-1].counts = {name: f"tag:{_safe(node.uid)}:{label}" for name, label in sides.items()}
        out.frame = main_view(tagged, program)
        out.tagged, out.general, out.control = tagged, program, None
        return out

    def _control_rows(self, up: Compiled) -> DataFrame:
        """One time row per bucket per micro-batch of the test script (its watermark and processing time)."""
        assert up.control is not None
        return up.control.select(
            self._every_bucket().alias(g.BUCKET),
            F.lit(True).alias(g.CONTROL),
            F.col(SCRIPT_WM).alias(g.WM),
            F.col(SCRIPT_PT).alias(g.PT),
        )

    def _beat_rows(self, node: n.Node) -> tuple[DataFrame, g.BeatSpec]:
        """One time row per bucket with the batch's processing time, in the micro-batches ``funke_beat`` says are due."""
        datasources.register(self.spark)
        path = os.path.join(tempfile.gettempdir(), f"funke-beat-{_safe(node.uid)}-{uuid.uuid4().hex[:8]}.json")
        rows = self.spark.readStream.format("funke_beat").option("path", path).option("buckets", self.buckets).load()
        frame = rows.select(
            self._bucket(F.col("fk_b")).alias(g.BUCKET),
            F.lit(True).alias(g.CONTROL),
            F.lit(None).cast("bigint").alias(g.WM),
            F.unix_millis(F.current_timestamp()).alias(g.PT),
        )
        return frame, g.BeatSpec(path, _late_observe(node), self.buckets)

    def _general2(self, node: n.Node, first_up: Compiled, second_up: Compiled) -> Compiled:
        """Run a two-input ``node`` as one funke operator over key buckets (``funke.spark.general``).

        Both inputs' rows enter one ``transformWithStateInPandas`` operator, tagged with their
        side; the second input's columns travel renamed. Keys of both sides are hashed alike
        (integral keys as bigint), so a key's rows of both inputs meet in one bucket; a
        broadcast input's rows are copied to every bucket.
        """
        first, second = self.plain(first_up, node.uid), self.plain(second_up, node.uid)
        program = two_input_program(node, self.buckets, first, second, self.side_tags.get(id(node), ()))
        clock = self._clock(node) if first_up.control is None else None
        if clock is not None:
            program = replace(program, clock=True, beat=True)
        assert program.second is not None
        if (first_up.control is None) != (second_up.control is None):
            raise UnsupportedError(
                f"{node.where()} [{node.uid}]: one input's time comes from a test script and the other's does not; "
                "script both inputs with TestStream, or neither"
            )
        if first_up.control is not None:
            program = replace(program, scripted=True)

        def bucket_of(frame: DataFrame, keys: tuple[str, ...]) -> Column:
            if not keys:  # unkeyed: spread rows over the buckets by their content
                return self._key_bucket(F.to_json(F.struct(*(F.col(c) for c in frame.columns))))
            cols = [F.col(k).cast("bigint") if frame.schema[k].dataType.typeName() in _INTEGRAL_SPARK else F.col(k) for k in keys]
            return self._key_bucket(*cols)

        def elements(frame: DataFrame, side: int, inp: n.Node, values: tuple[str, ...], prefix: str) -> DataFrame:
            ts = inp.event_time
            stamp = F.unix_millis(F.col(ts).cast("timestamp")) if ts is not None else F.lit(None).cast("bigint")
            if side == 1 and program.second is not None and program.second.broadcast:
                bucket = self._every_bucket()
            else:
                bucket = bucket_of(frame, tuple(inp.keys or ()))
            micros = program.micros if side == 0 else program.second.micros
            return frame.select(
                bucket.alias(g.BUCKET),
                F.lit(side).alias(g.SIDE),
                F.lit(None).cast("bigint").alias(g.SEQ),
                F.lit(False).alias(g.CONTROL),
                stamp.alias(g.TS),
                F.lit(None).cast("bigint").alias(g.WM),
                _processing_time(first_up).alias(g.PT),
                *((F.unix_micros(F.col(c).cast("timestamp")) if c in micros else F.col(c)).alias(prefix + c) for c in values),
            )

        rows = elements(first, 0, node.inputs[0], program.values, "").unionByName(
            elements(second, 1, node.inputs[1], program.second.values, g.SECOND_PREFIX), allowMissingColumns=True
        )
        counter = Compiled(rows)
        rows = self._count(counter, node, "rows_in", rows)
        beat = None
        if not self.streaming:
            rows, program = _operator_input(rows, program)
            tagged = rows.groupBy(g.BUCKET).applyInPandas(g.batch_function(program), program.output_ddl())
        else:
            if first_up.control is not None and second_up.control is not None:
                control = self._control_rows(first_up).withColumn(g.SIDE, F.lit(0)).unionByName(
                    self._control_rows(second_up).withColumn(g.SIDE, F.lit(1))
                )
            elif clock is not None:
                control = self._clock_rows(clock)
            else:
                program = replace(program, beat=True)
                control, beat = self._beat_rows(node)
                control = control.withColumn(g.SIDE, F.lit(None).cast("int"))
            merged = rows.unionByName(control, allowMissingColumns=True)
            watermarked = first_up.control is None and any(i.watermark is not None for i in node.inputs)
            time_mode = "EventTime" if watermarked else "None"
            merged, program = _operator_input(merged, program)
            tagged = merged.groupBy(g.BUCKET).transformWithStateInPandas(
                g.processor(program, wake=beat is not None and watermarked), program.output_ddl(), "Append", time_mode
            )
        out = self._merge(tagged, first_up, second_up, stateful=first_up.control is None)
        out.metrics += counter.metrics
        if clock is not None:
            out.clocks.append(clock)
        if beat is not None:
            out.beats.append(beat)
        return self._tagged(node, tagged, program, out)

    def _clock(self, node: n.Node, one_input: bool = False) -> g.ClockSpec | None:
        """funke's own watermark for a general operator (Flink's rule: the minimum over its watermarked
        inputs, -infinity until each has sent a row, idle inputs skipped), where Spark's query
        watermark is not that: Spark's is the minimum over every watermarked input of the query
        (holding at 0 one that has sent nothing), so other operators' inputs hold it back, and it
        knows no idle inputs. Every two-input operator takes funke's; a one-input operator where
        idle inputs meet or where the query reads watermarked inputs it does not."""
        if not self.streaming:
            return None
        if one_input:
            mine = {id(w): w for w in watermarks_meeting(node)}
            others = self.query_watermarks.get(id(node), set()) - set(mine)
            if not mine or not (idle_inputs(node) or others or any(split_watermark(w) for w in mine.values())):
                return None
            marks = mine.values()
        else:
            marks = {id(w): w for w in _watermarks_of(node)}.values()
        marks = [w for w in marks if w.strategy.generator is None]
        if not marks:
            return None
        if is_connect(self.spark) and all(w.strategy.idleness_ms is None and not split_watermark(w) for w in marks):
            # The clock's file is written by this client and read by the server's Python data
            # source: shared only when both run on one host. Without idleness, Spark's watermark.
            return None
        inputs = []
        for w in marks:
            done = self._done[id(w)]
            name = next(m.name for m in done.metrics if m.name.startswith(f"funke_wm_{_safe(w.uid)}"))
            splits = self.splits.get(id(w.input))
            parts = [g.split_input(name, s) for s in [*map(str, range(len(splits))), g.UNLISTED]] if splits is not None else [name]
            inputs.extend((part, w.strategy.max_out_of_orderness_ms, w.strategy.idleness_ms) for part in parts)
        path = os.path.join(tempfile.gettempdir(), f"funke-clock-{_safe(node.uid)}-{uuid.uuid4().hex[:8]}.json")
        return g.ClockSpec(path, tuple(inputs), _safe(node.uid), _late_observe(node), self.buckets)

    def _clock_rows(self, clock: g.ClockSpec) -> DataFrame:
        """One row per bucket per micro-batch with the watermark funke computed (``funke_clock``)."""
        datasources.register(self.spark)
        rows = self.spark.readStream.format("funke_clock").option("path", clock.path).option("buckets", self.buckets).load()
        return rows.select(
            self._bucket(F.col("fk_b")).alias(g.BUCKET),
            F.lit(True).alias(g.CONTROL),
            F.col("fk_wm").alias(g.WM),
            F.unix_millis(F.current_timestamp()).alias(g.PT),
            F.lit(None).cast("int").alias(g.SIDE),
        )

    def visit_CoProcess(self, node: cn.CoProcess, first_up: Compiled, second_up: Compiled) -> Compiled:
        return self._general2(node, first_up, second_up)

    def visit_BroadcastProcess(self, node: cn.BroadcastProcess, first_up: Compiled, second_up: Compiled) -> Compiled:
        return self._general2(node, first_up, second_up)

    def visit_IntervalJoin(self, node: j.IntervalJoin, left_up: Compiled, right_up: Compiled) -> Compiled:
        if place(node).path == GENERAL:
            return self._general2(node, left_up, right_up)
        left, right = self.plain(left_up, node.uid), self.plain(right_up, node.uid)
        lt, rt = node.inputs[0].event_time, node.inputs[1].event_time
        assert lt is not None and rt is not None
        if self.streaming:
            # The watermarks upstream are declared bound + 2 ms behind (interval_join_watermarks);
            # a Python function in between forgets Spark's watermark column: declare it again.
            for i, ts in ((0, lt), (1, rt)):
                strategy = node.inputs[i].watermark
                assert strategy is not None
                frame = left if i == 0 else right
                if _WATERMARK_META not in frame.schema[ts].metadata:
                    frame = frame.withWatermark(ts, f"{strategy.max_out_of_orderness_ms + _JOIN_SHIFT_MS} milliseconds")
                elif not all(id(w) in self.join_watermarks for w in _watermarks_of(node.inputs[i])):
                    raise PlanError(f"{node.where()} [{node.uid}]: compile it with compile_job (its watermarks need the join's delay)")
                left, right = (frame, right) if i == 0 else (left, frame)
        a, b = left.alias("__l"), right.alias("__r")
        cond = None
        for lk, rk in zip(node.inputs[0].keys or (), node.inputs[1].keys or (), strict=True):
            eq = F.col(f"__l.{lk}") == F.col(f"__r.{rk}")
            cond = eq if cond is None else cond & eq
        assert cond is not None
        l_ts, r_ts = F.col(f"__l.{lt}"), F.col(f"__r.{rt}")
        cond = cond & (r_ts >= l_ts + _millis(node.lower)) & (r_ts <= l_ts + _millis(node.upper))
        joined = a.join(b, on=cond, how="inner")
        out = joined.select(*(F.col(f"{'__l' if c.side == j.LEFT else '__r'}.{c.column}").alias(c.alias) for c in node.columns))
        return self._merge(out, left_up, right_up)

    def visit_WindowJoin(self, node: j.WindowJoin, left_up: Compiled, right_up: Compiled) -> Compiled:
        return self._general2(node, left_up, right_up)

    def visit_Sink(self, node: n.Sink, up: Compiled) -> Compiled:
        return self._merge(self.plain(up, node.uid), up)


def _bad_time() -> Column:
    return F.timestamp_micros(F.lit(_BAD_TIME_MICROS))


def _event_time(column: str, unit: str | None, finite: bool) -> Column:
    """The event-time column as a Spark timestamp; the end-of-input row's is the end of time."""
    ts = F.col(column)
    if unit == "ms":
        ts = F.timestamp_millis(ts.cast("bigint"))
    elif unit == "s":
        ts = F.timestamp_seconds(ts.cast("bigint"))
    if finite:
        ts = F.when(F.col(EOS), F.to_timestamp(F.lit(END_OF_TIME))).otherwise(ts)
    return ts


def _bad_event_time(value: Column, column: str, unit: str | None) -> Column:
    """Why a row's event time is unusable (null, or outside year 1 .. the end-of-input instant), else null."""
    if unit in ("ms", "s"):
        scale = 1 if unit == "ms" else 1000
        out_of_range = (value.cast("double") < _MIN_MS / scale) | (value.cast("double") >= _END_MS / scale)
    else:
        out_of_range = value.cast("timestamp") >= F.to_timestamp(F.lit(END_OF_TIME))
    return (
        F.when(value.isNull(), F.lit(f"null event time in column {column}"))
        .when(out_of_range, F.concat(F.lit(f"event time out of range in column {column}: "), value.cast("string")))
    )


def _window_column(node: n.WindowAggregate, ts: str) -> Column:
    a = node.assigner
    if isinstance(a, TumblingEventTimeWindows):
        return F.window(ts, f"{a.size_ms} milliseconds", startTime=f"{a.offset_ms % a.size_ms} milliseconds")
    if isinstance(a, SlidingEventTimeWindows):
        return F.window(ts, f"{a.size_ms} milliseconds", f"{a.slide_ms} milliseconds", f"{a.offset_ms % a.slide_ms} milliseconds")
    raise UnsupportedError(f"{node.where()}: no native window for {a.describe()}")


#: Spark drops a join input row with time <= its watermark (max - delay); Flink drops time < its
#: watermark (max - bound - 1). Declared bound + 2 ms behind, Spark drops exactly Flink's late rows.
_JOIN_SHIFT_MS = 2


def _watermarks_of(node: n.Node) -> list[n.Watermark]:
    return [x for x in n.walk([node]) if isinstance(x, n.Watermark)]


def interval_join_watermarks(sinks: tuple[n.Sink, ...]) -> set[int]:
    """Watermark nodes feeding a native interval join; refused when a time-driven operator also reads them."""
    shifted: dict[int, n.Watermark] = {}
    for node in n.walk(sinks):
        if isinstance(node, j.IntervalJoin) and place(node).path != GENERAL:
            shifted.update((id(w), w) for i in node.inputs for w in _watermarks_of(i))
    if not shifted:
        return set()
    for node in n.walk(sinks):
        timed = isinstance(node, (n.WindowAggregate, n.KeyedProcess, n.RollingAggregate, j.WindowJoin, cn.CoProcess, cn.BroadcastProcess))
        timed = timed or (isinstance(node, j.IntervalJoin) and place(node).path == GENERAL)
        if timed and any(id(w) in shifted for w in _watermarks_of(node)):
            raise UnsupportedError(
                f"{node.where()} [{node.uid}] reads the same watermark as a native interval join, which declares it to "
                "Spark 2 ms further behind (so that Spark's late rule is Flink's); the two cannot share it in one job: "
                "give the window or process function its own source, or its own job"
            )
    return set(shifted)


def _millis(ms: int) -> Column:
    """An interval literal of ``ms`` milliseconds (negative too): Spark derives join state cleanup only from literals."""
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    return F.expr(f"INTERVAL '{sign}{ms // 1000}.{ms % 1000:03d}' SECOND")


def _aggregate(a: n.Aggregate) -> Column:
    if a.fn == "count":
        return F.count(F.lit(1)).alias(a.alias)
    fn = {"sum": F.sum, "min": F.min, "max": F.max, "avg": F.avg}[a.fn]
    return fn(F.col(a.column or "")).alias(a.alias)


def _processing_time(up: Compiled) -> Column:
    """An element row's processing time: the micro-batch's (Spark's ``current_timestamp()``, in a bounded
    run the query's one instant, as Flink's batch mode holds processing time still); under a test
    script none (its time rows carry the script's)."""
    return F.lit(None).cast("bigint") if up.control is not None else F.unix_millis(F.current_timestamp())


def _late_observe(node: n.Node) -> str:
    """The observe of a general operator's output: late drops, rows out (and its beat's reports)."""
    return f"funke_late_{_safe(node.uid)}"


def _safe(uid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", uid)


_UNRESOLVED = re.compile(r"name `?([^`\s]+)`? cannot be resolved")


def _plan_error(node: n.Node, e: AnalysisException, inputs: list[Compiled]) -> PlanError:
    msg = next((line for line in str(e).splitlines() if line.strip()), str(e))
    available: list[str] = [c for i in inputs for c in i.frame.columns if c != EOS]
    m = _UNRESOLVED.search(msg)
    if m:
        name = m.group(1).split(".")[-1]
        return SchemaError(f"{node.where()}: unknown column '{name}'{did_you_mean(name, available)}")
    return PlanError(f"{node.where()} [{node.uid}]: Spark cannot plan it: {msg}")


@dataclass
class QueryPlan:
    """One Spark query of a job: its frame and the sinks it feeds.

    A query with ``split`` set runs a general operator shared by several sinks: its frame is
    the operator's tagged output, and each micro-batch is split into the sinks' rows there
    (one query, so the operator's state is kept once).
    """

    sinks: list[n.Sink]
    compiled: Compiled
    split: n.Node | None = None
    #: Started only once a bad row has been seen (the dead letters): it reads its sources from the start.
    lazy: bool = False
    #: Run under Spark's real-time trigger (``set_latency_mode("realtime")``).
    realtime: bool = False
    #: Its own micro-batch interval, where it is not the job's (the dead letters beside real-time queries).
    interval_ms: int = 0


def compile_job(
    spark: SparkSession,
    sinks: tuple[n.Sink, ...],
    *,
    mode: str,
    cores: int,
    job: str = "funke",
    dead_letters: Any = None,
    operator_metrics: bool = False,
    latency_mode: str = "micro-batch",
    buckets: tuple[int, ...] | None = None,
) -> list[QueryPlan]:
    """The job's Spark queries: one per sink (or per shared general operator), plus one for the
    dead letters when some check can fail (``dead_letters``: where they go). ``latency_mode``:
    the environment's (``"latency-first"``: same-batch firing, ``Compiler.latency_first``). ``buckets``:
    the ``fk_b`` values of the general operators' key buckets (default: ``0..default_buckets(cores)-1``)."""
    check_generators(sinks)
    if mode == "streaming":
        check_idleness(sinks)
    c = Compiler(spark, mode=mode, cores=cores, buckets=buckets, side_tags=side_tags_read(sinks))
    c.operator_metrics = operator_metrics
    c.latency_first = latency_mode == "latency-first"
    c.realtime = mode == "streaming" and latency_mode == "realtime"
    if c.realtime:
        check_realtime(sinks)
        if not kafka_source.kafka_jvm.has_connector(spark):
            raise UnsupportedError(f"set_latency_mode('realtime') reads Kafka through Spark's Kafka connector only, and {NO_CONNECTOR}")
    if mode == "streaming":
        c.join_watermarks = interval_join_watermarks(sinks)
        c.query_watermarks = query_watermarks(sinks)
        c.split_sources = {id(w.input) for w in n.walk(sinks) if split_watermark(w)}
    compiled = [(s, c.compile(s)) for s in sinks]
    dead = c.dead_letter_frame(job)
    extra = []
    if dead is not None and dead_letters is not None:
        first_source = next(x for x in n.walk(sinks) if isinstance(x, n.Source))
        sink = n.Sink((first_source,), spec=dead_letters, explicit_uid="dead-letters", explicit_name="dead letters")
        if c.realtime:  # real-time mode reports metrics once per checkpoint interval: its dead letters cannot wait for them
            dead.frame = realtime.dead_letter_frame(dead.frame)
        interval = realtime.DEAD_LETTER_INTERVAL_MS if c.realtime else 0
        extra = [QueryPlan([sink], dead, lazy=not c.realtime, interval_ms=interval)]
    if mode != "streaming":
        return [QueryPlan([s], x) for s, x in compiled] + extra
    users: dict[int, list[n.Sink]] = {}
    general: dict[int, n.Node] = {}
    for s in sinks:
        for node in n.walk([s]):
            done = c._done.get(id(node))
            if done is not None and done.tagged is not None:
                users.setdefault(id(node), []).append(s)
                general[id(node)] = node
    plans: list[QueryPlan] = []
    grouped: set[int] = set()
    for key, group in users.items():
        node = general[key]
        # (a stateful operator after the shared one would run per micro-batch in the split, without its state:
        # each sink then runs its operators in its own query instead, the shared one's state kept per query)
        if len(group) < 2 or any(_stateful_after(s, node, general) for s in group):
            continue
        if any(id(s) in grouped for s in group):
            raise PlanError(f"sinks {', '.join(s.where() for s in group)} read several shared stateful operators; split the job")
        plans.append(QueryPlan(group, c._done[key], split=node))
        grouped.update(id(s) for s in group)
    plans += [QueryPlan([s], x, realtime=c.realtime) for s, x in compiled if id(s) not in grouped]
    return plans + extra


def query_watermarks(sinks: tuple[n.Sink, ...]) -> dict[int, set[int]]:
    """Per node, the watermark nodes (ids) upstream of the sinks that read it: what the Spark query
    computing it takes its one watermark from (sinks sharing a stateful operator share a query)."""
    out: dict[int, set[int]] = {}
    for s in sinks:
        nodes = list(n.walk([s]))
        marks = {id(x) for x in nodes if isinstance(x, n.Watermark)}
        for x in nodes:
            out.setdefault(id(x), set()).update(marks)
    return out


def side_tags_read(sinks: tuple[n.Sink, ...]) -> dict[int, tuple[Any, ...]]:
    """For each node, the tags of its side outputs that some sink reads."""
    tags: dict[int, dict[str, Any]] = {}
    for node in n.walk(sinks):
        if isinstance(node, n.SideOutput):
            tags.setdefault(id(node.input), {})[node.tag.name] = node.tag
    return {k: tuple(v.values()) for k, v in tags.items()}


def _stateful_after(sink: n.Sink, split: n.Node, general: dict[int, n.Node]) -> bool:
    """Whether an operator with state (or of several inputs) runs between a shared operator and ``sink``:
    after a split only per-row operators may run (they run per batch)."""
    node: n.Node = sink
    while node is not split:
        if isinstance(node, n.SPARK_STATEFUL) or id(node) in general or len(node.inputs) != 1:
            return True
        node = node.input
    return False


def compile_batch_split(spark: SparkSession, plan: QueryPlan, batch: DataFrame, cores: int) -> list[tuple[n.Sink, DataFrame]]:
    """The sinks' frames for one micro-batch of a split query's tagged output."""
    assert plan.split is not None
    c = Compiler(spark, mode="batch", cores=cores, seeds={id(plan.split): (batch, plan.compiled.general)})
    return [(s, c.compile(s).frame) for s in plan.sinks]


def _keep_event_time(before: DataFrame, after: DataFrame) -> DataFrame:
    """Re-marks the event-time column a Python function passed through (Flink: map keeps a record's timestamp).

    mapInPandas/mapInArrow drop Spark's watermark metadata; a window downstream would then
    define a second watermark, which Spark refuses ("Redefining watermark is disallowed").
    """
    marked = {f.name: f.metadata for f in before.schema.fields if _WATERMARK_META in f.metadata}
    kept = [c for c in after.columns if c in marked and after.schema[c].dataType == before.schema[c].dataType]
    if not kept:
        return after
    return after.select(*(F.col(c).alias(c, metadata=marked[c]) if c in kept else F.col(c) for c in after.columns))
