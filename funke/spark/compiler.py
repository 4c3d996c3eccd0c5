"""The compiler: a visitor from plan nodes to Spark DataFrames, one ``visit_<Node>`` per primitive.

Every node is compiled once (shared upstreams are reused). After a node is built, it is
validated again against the schemas Spark resolved for its inputs, and Spark's analysis
errors are rewritten to name the node, so mistakes surface here, before a query starts.

A node on the general path is lowered by ``funke.spark.general.lowering``; what a visit returns is in
``funke.spark.compiled``; a job's queries are planned in ``funke.spark.query``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from funke.connectors import index_bounds
from funke.connectors.sources import CollectionSource, GeneratorSource
from funke.connectors.tables import StaticTable
from funke.errors import PlanError, SchemaError, UnsupportedError, did_you_mean
from funke.plan import nodes
from funke.plan.capabilities import GENERAL
from funke.plan.connect import BroadcastProcess, CoProcess
from funke.plan.facts import PlanFacts, analyse
from funke.plan.functions import LateralTable
from funke.plan.joins import LEFT, IntervalJoin, WindowJoin
from funke.plan.types import INTEGER_BITS, Field, Schema, integer_range, normalize_type
from funke.plan.unkeyed import AsyncWait, Process
from funke.semantics.windows import SlidingEventTimeWindows, TumblingEventTimeWindows
from funke.spark import file_source, generated, kafka_source, realtime
from funke.spark.async_io import async_function
from funke.spark.compiled import DEAD_LETTER_DDL, JOIN_SHIFT_MS, Compiled, DeadLetterRule, SourceMetric, safe_name
from funke.spark.datasources import EOS
from funke.spark.event_time import WATERMARK_META, declare_watermark, marked, window_time
from funke.spark.exprs import to_column
from funke.spark.general.lowering import default_buckets, lower
from funke.spark.general.program import UNLISTED, main_view, side_view
from funke.spark.python_fns import arrow_column, pandas_function, row_function
from funke.spark.sources import (
    CORRUPT,
    POSITION,
    REASON,
    generator_split,
    source_frame,
    static_frame,
    test_stream_frames,
)
from funke.spark.udfs import lateral_table, register_python_functions

NO_CONNECTOR = "this SparkSession has none (a session funke starts loads it: funke.connectors.kafka_jvm; a session of your own needs its jars in spark.jars)"
#: Event time of the end-of-input row: far enough that every window closes.
END_OF_TIME = "9999-12-31 00:00:00"


def spark_schema_to_funke(df: DataFrame) -> Schema:
    return Schema(tuple(Field(f.name, normalize_type(f.dataType.simpleString()), f.nullable) for f in df.schema.fields if f.name != EOS))


#: Event times funke accepts: from year 1 up to, not including, the end-of-input instant.
_MIN_MS, _END_MS = -62_135_596_800_000, 253_402_214_400_000
#: The event time a streaming row with an unusable one carries from the watermark to its
#: observe (about 146 000 BC in microseconds): below every valid event time.
_BAD_TIME_MICROS = -(2**62)
_ATOMIC = {"string", "integer", "long", "short", "byte", "double", "float", "boolean", "date", "timestamp"}
_DL_SOURCE = "_funke_end_of"


class Compiler:
    def __init__(
        self,
        spark: SparkSession,
        *,
        mode: str,
        cores: int = 2,
        buckets: tuple[int, ...] | None = None,
        seeds: dict[int, tuple[DataFrame, Any]] | None = None,
        facts: PlanFacts | None = None,
    ):
        self.spark = spark
        self.mode = mode
        self.streaming = mode == "streaming"
        self.cores = cores
        #: The value of ``fk_b`` for each key bucket (its position): a key's bucket is ``xxhash64(keys) mod``
        #: their number (``funke.runtime.start.kept_buckets``).
        self.bucket_ids: tuple[int, ...] = tuple(buckets) if buckets else tuple(range(default_buckets(cores)))
        self.buckets = len(self.bucket_ids)
        #: Nodes whose tagged output is given (one micro-batch of a shared general operator).
        self.seeds = dict(seeds or {})
        #: The plan's facts (``funke.plan.facts``): each node's path, the watermarks meeting it, the side
        #: outputs read from it, the watermarks of its query, ...; worked out once, before any node is compiled.
        self.facts = facts if facts is not None else analyse((), streaming=self.streaming)
        #: Every node compiled so far, by id.
        self.done: dict[int, Compiled] = {}
        #: Checks whose failing rows go to the job's dead-letter output instead of on.
        self.dead_rules: list[DeadLetterRule] = []
        self._observed: dict[str, int] = {}
        self._input_metrics: list[SourceMetric] = []
        #: Count rows out of every native operator too (settings.operator_metrics).
        self.operator_metrics = False
        #: Per source (by id) whose watermark is per split (Kafka partitions): its splits.
        self.splits: dict[int, list[str]] = {}
        #: ``set_latency_mode("latency-first")``: one-input general operators on Spark's watermark
        #: fire in the micro-batch whose elements pass their time (``Program.same_batch_bound_ms``).
        self.latency_first = False
        #: ``set_latency_mode("realtime")``: Spark's real-time trigger (``funke.spark.realtime``).
        self.realtime = False
        #: A bounded run over the whole input (``compile_job``): a generator's row count is known.
        self.bounded_run = False
        #: Flink's BATCH runtime mode: a general operator reads a key's elements in timestamp order (``Program.time_ordered``).
        self.time_ordered = False

    # -- driver ---------------------------------------------------------------------
    def compile(self, node: nodes.Node) -> Compiled:
        key = id(node)
        if key in self.done:
            return self.done[key]
        if key in self.seeds:
            frame, program = self.seeds[key]
            result = Compiled(main_view(frame, program), tagged=frame, program=program)
            self.done[key] = result
            return result
        inputs = [self.compile(i) for i in node.inputs]
        visit: Callable[..., Compiled] | None = getattr(self, f"visit_{type(node).__name__}", None)
        if visit is None:
            raise UnsupportedError(f"{node.where()} [{node.uid}]: the compiler has no rule for {node.kind} nodes ({self.facts.place(node).why})")
        try:
            self._input_metrics = []
            register_python_functions(self.spark, node)
            result = visit(node, *inputs)
            # metrics observed by data_rows() belong to this node's frame, not to the (maybe shared) input
            result.metrics = result.metrics + [m for m in self._input_metrics if m not in result.metrics]
            if self.operator_metrics and result.tagged is None and not isinstance(node, (nodes.Source, nodes.Watermark, nodes.Sink)):
                result.frame = self.count_rows(result, node, "rows_out", result.frame)
            node.validate(tuple(spark_schema_to_funke(i.frame) for i in inputs))
        except AnalysisException as e:
            raise _plan_error(node, e, inputs) from None
        self.done[key] = result
        return result

    def merge(self, node_frame: DataFrame, *inputs: Compiled, stateful: bool = False) -> Compiled:
        metrics = [m for i in inputs for m in i.metrics]
        controls = [i.control for i in inputs if i.control is not None]
        clocks = [c for i in inputs for c in i.clocks]
        beats = [b for i in inputs for b in i.beats]
        stateful = stateful or any(i.stateful for i in inputs)
        return Compiled(node_frame, metrics, stateful, control=controls[0] if controls else None, clocks=clocks, beats=beats)

    def data_rows(self, c: Compiled, uid: str, *, keep_end: bool = False) -> DataFrame:
        """The input without the end-of-input row (counting rows and noting the end on the way, once).

        ``keep_end``: the row stays (still counted here), for a select or filter to pass on: a
        watermark after them turns it into the end of time, which fires every window (without
        it a finite stream's last windows never fired).
        """
        df = c.frame
        if EOS not in df.columns:
            return df
        if not c.end_counted:
            name = f"funke_src_{safe_name(uid)}"
            own = Compiled(df)
            rows, ended = F.count(F.when(~F.col(EOS), 1)).alias("rows"), F.max(F.col(EOS).cast("int")).alias("eos")
            df = self.observe(own, name, True, rows, ended)
            self._input_metrics.extend(own.metrics)
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

    def count_rows(self, c: Compiled, node: nodes.Node, field: str, frame: DataFrame) -> DataFrame:
        """``frame`` observed counting its rows (the end-of-input row aside) as ``node``'s ``field``."""
        rows = F.count(F.when(~F.col(EOS), 1)) if EOS in frame.columns else F.count(F.lit(1))
        observed = self.observe(c, f"funke_op_{field[5:]}_{safe_name(node.uid)}", False, rows.alias(field), frame=frame)
        c.metrics[-1].counts_rows, c.metrics[-1].operator = False, safe_name(node.uid)
        return observed

    def dead_letters(self, node: nodes.Node, frame: DataFrame, reason: Column, *, raw: Column | None = None, position: Column | None = None) -> tuple[DataFrame, SourceMetric]:
        """Send the rows of ``frame`` whose ``reason`` is not null to the dead letters; the rest go on.

        Returns the rows that go on and the metric counting the others here, in the main query
        (the caller records it). The end-of-input row is never a dead letter.
        """
        reason = self.add_dead_letter_rule(node, frame, reason, raw=raw, position=position)
        counter = Compiled(frame)
        counted = self.observe(counter, f"funke_dead_{safe_name(node.uid)}", False, F.count(reason).alias("dead"))
        counter.metrics[-1].counts_rows = False
        return counted.where(reason.isNull()), counter.metrics[-1]

    def add_dead_letter_rule(self, node: nodes.Node, frame: DataFrame, reason: Column, *, raw: Column | None = None, position: Column | None = None) -> Column:
        """Record that the rows of ``frame`` whose ``reason`` is not null are dead letters (the
        dead-letter query reads them); returns the reason, null on the end-of-input row."""
        if EOS in frame.columns:
            reason = F.when(~F.col(EOS), reason)
        columns = [c for c in frame.columns if c != EOS]
        raw = raw if raw is not None else F.to_json(F.struct(*columns))
        if position is None:  # past the source, a row is known by the source(s) it came from
            position = F.lit(", ".join(sorted({x.spec.describe() for x in self.facts.sources(node)})))
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
        sources = {id(x): x for rule in rules.values() for x in self.facts.sources(rule.node)}
        ends = []
        for src in sources.values():
            frame = self.done[id(src)].frame
            if EOS in frame.columns:
                nulls = [F.lit(None).cast(t).alias(c) for c, t in (col.split() for col in DEAD_LETTER_DDL.split(", "))]
                ends.append((src, frame.where(F.col(EOS)).select(*nulls, F.lit(src.uid).alias(_DL_SOURCE))))
        df = frames[0]
        for other in frames[1:] + [f for _, f in ends]:
            df = df.unionByName(other)
        out = Compiled(df)
        for src, _ in ends:
            ended = F.max(F.when(F.col(_DL_SOURCE) == src.uid, 1).otherwise(0)).alias("eos")
            out.frame = self.observe(out, f"funke_dl_end_{safe_name(src.uid)}", True, ended, frame=out.frame)
            out.metrics[-1].counts_rows = False
        out.frame = out.frame.where(F.col(_DL_SOURCE).isNull()).drop(_DL_SOURCE)
        return out

    # -- visitors -------------------------------------------------------------------
    def visit_Source(self, node: nodes.Source) -> Compiled:
        control = None
        if node.scripted_time:
            df, control = test_stream_frames(self.spark, node.spec, self.streaming)
        elif id(node) in self.facts.split_sources:  # each row's partition goes on to the watermark's observe
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
        if self.bounded_run and isinstance(node.spec, (GeneratorSource, CollectionSource)) and not node.scripted_time:
            known = node.spec.events if isinstance(node.spec, GeneratorSource) else len(node.spec.rows)
            out.metrics.append(SourceMetric(f"funke_src_{safe_name(node.uid)}", False, known_rows=known))
        elif EOS not in df.columns:
            out.uncounted = df
            out.frame = self.observe(out, f"funke_src_{safe_name(node.uid)}", False, F.count(F.lit(1)).alias("rows"))
        return out

    def visit_Watermark(self, node: nodes.Watermark, up: Compiled) -> Compiled:
        s = node.strategy
        column = s.timestamp_column
        assert column is not None
        at_source = isinstance(node.input, nodes.Source)
        frame, later = self._watermark_input(node, up)
        if self.streaming and EOS not in frame.columns:
            self._end_reaches(node)
        if s.ingestion_time:
            # Spark's current_timestamp() is the micro-batch's start, the same for its every row
            frame = frame.withColumn(column, F.current_timestamp())

        valid = s.ingestion_time or self._valid_times(node)

        def bad_time_reason() -> Column:
            if valid:  # stamped here, or a generator's proven valid: never null, never out of range
                return F.lit(None).cast("string")
            return self.add_dead_letter_rule(node, up.frame, _bad_event_time(F.col(column), column, s.timestamp_unit))

        # The observe right after a source replaces the source's own (same rows): one observe
        # per row, not two (each splits whole-stage codegen and costs every row).
        known = any(m.known_rows is not None for m in up.metrics)
        counted = at_source and not known and (later is not None or up.uncounted is not None or self.streaming)
        out = self.merge(frame, up)
        if counted:
            out.metrics = [m for m in out.metrics if m.counts_rows is False]
        if not self.streaming:
            reason = bad_time_reason()
            aggs = [F.count(F.lit(1)).alias("rows")] if counted else []
            aggs += [] if valid else [F.count(reason).alias("dead")]
            df = frame
            if aggs:  # (an observe splits Spark's generated code and costs every row)
                df = self.observe(out, f"funke_wm_{safe_name(node.uid)}", False, *aggs, frame=frame)
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
        delay = s.max_out_of_orderness_ms + (JOIN_SHIFT_MS if id(node) in self.facts.join_watermarks else 0)
        df = frame.withColumn(column, ts)
        if s.generator is None:
            df = declare_watermark(df, column, delay)
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
            for i, part in [(str(i), split == key) for i, key in enumerate(splits)] + [(UNLISTED, ~split.isin(splits))]:
                if finite:  # the end-of-input row (of no partition) ends every partition
                    part = F.coalesce(part, F.lit(False)) | F.col(EOS)
                aggs.append(F.max(F.when(usable & part, F.unix_millis(F.col(column)))).alias(f"max_event_time_{i}"))
                aggs.append(F.count(F.when(good & part, 1)).alias(f"rows_{i}"))
        df = self.observe(out, f"funke_wm_{safe_name(node.uid)}", finite, *aggs, frame=df)
        if splits is not None:
            df = df.drop(kafka_source.SPLIT)
        out.metrics[-1].counts_rows = at_source
        if finite:
            df = df.where((F.col(column) > _bad_time()) & (F.col(column) < F.to_timestamp(F.lit(END_OF_TIME)))).drop(EOS)
        else:
            df = df.where(F.col(column) > _bad_time())
        out.frame = df.select(*later) if later is not None else df
        return out

    def _valid_times(self, node: nodes.Watermark) -> bool:
        """Whether every event time the watermark reads is proven valid: a collection's right before it, each
        value checked here, or a finite generator's, whose expression stays in range for every index it gives
        (``funke.connectors.index_bounds``)."""
        src, s = node.input, node.strategy
        if isinstance(src, nodes.Source) and isinstance(src.spec, CollectionSource) and s.timestamp_column in src.spec.schema.names:
            at = src.spec.schema.names.index(s.timestamp_column)
            return all(_proven_time(row[at], s.timestamp_unit) for row in src.spec.rows)
        if not (isinstance(src, nodes.Source) and isinstance(src.spec, GeneratorSource)) or src.scripted_time or s.timestamp_unit not in ("ms", "s"):
            return False
        spec, column = src.spec, s.timestamp_column
        field = spec.schema.get(column or "")
        if field is None or field.dtype not in INTEGER_BITS or spec.events is None:
            return False
        e = dict(spec.columns).get(field.name)
        found = index_bounds.bounds(e, 0, spec.events) if e is not None else None  # (0 .. events: with the end-of-input row's)
        scale, (low, high) = (1 if s.timestamp_unit == "ms" else 1000), integer_range(field.dtype)  # (and the declared type's cast)
        return found is not None and max(_MIN_MS // scale, low) <= found[0] and found[1] < min(_END_MS // scale, high + 1)

    def _end_reaches(self, node: nodes.Watermark) -> None:
        """Refuse a watermark that a finite source's end of input cannot reach (a map or a union on
        the way drops it): the watermark would never pass the last windows, which never fire."""
        todo, ended = list(node.inputs), []
        while todo:
            x = todo.pop()
            if isinstance(x, nodes.Watermark):
                continue
            if isinstance(x, nodes.Source) and id(x) in self.done and EOS in self.done[id(x)].frame.columns:
                ended.append(x)
            todo.extend(x.inputs)
        if ended:
            names = {"python": "a Python function", "union": "a union"}
            passed = (x for x in nodes.walk([node.input]) if not isinstance(x, (nodes.Source, nodes.Select, nodes.Filter)))
            between = sorted({names.get(x.kind, x.kind) for x in passed})
            raise UnsupportedError(
                f"{node.where()} [{node.uid}]: the end of the finite source {ended[0].spec.describe()} cannot pass "
                f"{', '.join(between) or 'what comes'} before this watermark, so the last windows would never fire; "
                "give the source its watermark (from_source(..., watermarks=...)) or assign it before that"
            )

    def _watermark_input(self, node: nodes.Watermark, up: Compiled) -> tuple[DataFrame, list[Column] | None]:
        """What the watermark's observe reads, and the select that completes the rows after it.

        Right after a generator, the observe reads only the index and the event time; the
        other columns are computed after it, so Spark builds them only for rows that pass
        the filters downstream (as it does in a job without the observe).
        """
        src = node.input
        if isinstance(src, nodes.Source) and isinstance(src.spec, GeneratorSource) and not src.scripted_time and node.strategy.generator is None:
            column = node.strategy.timestamp_column
            if column in src.spec.schema.names:
                return generator_split(self.spark, src.spec, streaming=self.streaming, cores=self.cores, early=[column])
        return (up.uncounted if up.uncounted is not None else up.frame), None

    def visit_Select(self, node: nodes.Select, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid, keep_end=True)
        columns = [to_column(e) for e in node.exprs]
        out = df.select(*columns)
        if EOS in df.columns and EOS not in out.columns:  # (its values are a row's or nulls: the select is safe on it)
            out = df.select(*columns, F.col(EOS))
        return self._ended(self.merge(out, up))

    def visit_Filter(self, node: nodes.Filter, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid, keep_end=True)
        keep = to_column(node.predicate)
        return self._ended(self.merge(df.where(F.col(EOS) | keep if EOS in df.columns else keep), up))

    @staticmethod
    def _ended(c: Compiled) -> Compiled:
        c.end_counted = EOS in c.frame.columns
        return c

    def visit_PythonFunction(self, node: nodes.PythonFunction, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid)
        out_schema = node.schema or spark_schema_to_funke(df)
        spark_schema = out_schema.ddl() if node.mode != "filter" else df.schema
        if node.vectorized and callable(getattr(node.fn, "spark_transform", None)):  # runs in the JVM (fk.ml.predict, MLlib)
            return self.merge(_keep_event_time(df, node.fn.spark_transform(df)), up)
        if node.vectorized and callable(getattr(node.fn, "arrow_column", None)):  # a library's added column (fk.ml.predict)
            udf = F.arrow_udf(arrow_column(node.fn.arrow_column), node.fn.output_type)
            column = udf(*(F.col(c) for c in node.fn.inputs))
            return self.merge(df.withColumn(node.fn.output, column), up)
        if node.vectorized:
            fn = pandas_function(node.fn, node.mode, out_schema, node.where(), node.uid)
            result = df.mapInPandas(fn, spark_schema)
        else:
            fn = row_function(node.fn, node.mode, out_schema, node.where(), node.uid)
            result = df.mapInArrow(fn, spark_schema)
        return self.merge(_keep_event_time(df, result), up)

    def visit_LateralTable(self, node: LateralTable, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid)
        return self.merge(_keep_event_time(df, lateral_table(df, node)), up)

    def visit_Union(self, node: nodes.Union, *ups: Compiled) -> Compiled:
        frames = [self.data_rows(u, node.uid) for u in ups]
        df = frames[0]
        for other in frames[1:]:
            df = df.unionByName(other)
        return self.merge(df, *ups)

    def visit_KeyBy(self, node: nodes.KeyBy, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid)
        nullable = [f.name for f in df.schema.fields if f.name in node.keys and f.nullable and not node.nulls]
        if nullable:  # Flink refuses a null key; here the row goes to the dead letters
            null = [F.when(F.col(k).isNull(), F.lit(k)) for k in nullable]
            reason = F.concat(F.lit("null key column(s): "), F.concat_ws(", ", *null))
            df, dead = self.dead_letters(node, df, F.when(F.concat_ws(", ", *null) != "", reason))
            out = self.merge(df, up)
            out.metrics.append(dead)
            return out
        return self.merge(df, up)

    def visit_LookupJoin(self, node: nodes.LookupJoin, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid)
        table = self._table(node.table)
        joined = df.join(F.broadcast(table), on=list(node.on), how=node.how)
        order = list(df.columns) + [c for c in table.columns if c not in node.on]
        return self.merge(joined.select(*order), up)

    def _table(self, t: StaticTable) -> DataFrame:
        if t.loader is not None:
            return t.loader(self.spark)
        if t.files is not None:
            df = file_source.whole(self.spark, t.files)
            return df.selectExpr(*t.columns) if t.columns else df
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

    def visit_WindowAggregate(self, node: nodes.WindowAggregate, up: Compiled) -> Compiled:
        if self.facts.place(node).path == GENERAL:
            return lower(self, node, up)
        df = self.data_rows(up, node.uid)
        ts = node.input.event_time
        keys = list(node.input.keys or ())
        assert ts is not None
        if self.streaming and WATERMARK_META not in df.schema[ts].metadata and node.input.watermark is not None:
            # (a Python function in between forgets Spark's mark: funke.spark.event_time.marked)
            df = df.withColumn(ts, marked(df, ts, max(node.input.watermark.max_out_of_orderness_ms, 0)))
        window = _window_column(node, ts)
        aggs = [_aggregate(a) for a in node.aggregates]
        grouped = df.groupBy(window.alias("__window"), *keys).agg(*aggs)
        out = grouped.select(
            *keys,
            F.col("__window.start").alias("window_start"),
            F.col("__window.end").alias("window_end"),
            *([window_time(node, "__window.end")] if node.time_column else []),
            *(a.alias for a in node.aggregates),
        )
        return self.merge(out, up, stateful=True)

    def visit_RollingAggregate(self, node: nodes.RollingAggregate, up: Compiled) -> Compiled:
        if self.realtime:
            return self.merge(realtime.rolling(self.data_rows(up, node.uid), node), up, stateful=True)
        return lower(self, node, up)

    def visit_Deduplicate(self, node: nodes.Deduplicate, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid)
        keys = list(node.input.keys or ())
        # Spark's dropDuplicates drops rows behind the watermark when a key column carries it (and forgets
        # keys older than it); Flink's deduplication keeps every key's first row, late or not: the key
        # columns go in without the mark, and come out with it again for the operators after.
        marked = {f.name: f.metadata for f in df.schema.fields if f.name in keys and WATERMARK_META in f.metadata}
        if marked:
            unmarked = {c: F.col(c).alias(c, metadata={k: v for k, v in m.items() if k != WATERMARK_META}) for c, m in marked.items()}
            remarked = {c: F.col(c).alias(c, metadata=m) for c, m in marked.items()}
            out = df.withColumns(unmarked).dropDuplicates(keys).withColumns(remarked)
        else:
            out = df.dropDuplicates(keys)
        # (not ``stateful``: a row leaves in the micro-batch that reads it; no later batch need run)
        return self.merge(out, up)

    def visit_KeyedProcess(self, node: nodes.KeyedProcess, up: Compiled) -> Compiled:
        return lower(self, node, up)

    def visit_Process(self, node: Process, up: Compiled) -> Compiled:
        return lower(self, node, up)

    def visit_AsyncWait(self, node: AsyncWait, up: Compiled) -> Compiled:
        df = self.data_rows(up, node.uid)
        run = async_function(node.function, node.ordered, node.timeout_ms, node.capacity, node.output, node.where())
        return self.merge(df.mapInArrow(run, node.output.ddl()), up)

    def visit_SideOutput(self, node: nodes.SideOutput, up: Compiled) -> Compiled:
        assert up.tagged is not None and up.program is not None, "side outputs come from general operators"
        out = self.merge(side_view(up.tagged, up.program, node.tag), up)
        out.control = None
        return out

    def visit_CoProcess(self, node: CoProcess, first_up: Compiled, second_up: Compiled) -> Compiled:
        return lower(self, node, first_up, second_up)

    def visit_BroadcastProcess(self, node: BroadcastProcess, first_up: Compiled, second_up: Compiled) -> Compiled:
        return lower(self, node, first_up, second_up)

    def visit_IntervalJoin(self, node: IntervalJoin, left_up: Compiled, right_up: Compiled) -> Compiled:
        if self.facts.place(node).path == GENERAL:
            return lower(self, node, left_up, right_up)
        left, right = self.data_rows(left_up, node.uid), self.data_rows(right_up, node.uid)
        lt, rt = node.inputs[0].event_time, node.inputs[1].event_time
        assert lt is not None and rt is not None
        if self.streaming:
            # The watermarks upstream are declared bound + 2 ms behind (PlanFacts.join_watermarks);
            # a Python function in between forgets Spark's watermark column: declare it again.
            for i, ts in ((0, lt), (1, rt)):
                strategy = node.inputs[i].watermark
                assert strategy is not None
                frame = left if i == 0 else right
                if WATERMARK_META not in frame.schema[ts].metadata:
                    frame = frame.withWatermark(ts, f"{strategy.max_out_of_orderness_ms + JOIN_SHIFT_MS} milliseconds")
                elif not all(id(w) in self.facts.join_watermarks for w in self.facts.watermarks(node.inputs[i])):
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
        out = joined.select(*(F.col(f"{'__l' if c.side == LEFT else '__r'}.{c.column}").alias(c.alias) for c in node.columns))
        return self.merge(out, left_up, right_up)

    def visit_WindowJoin(self, node: WindowJoin, left_up: Compiled, right_up: Compiled) -> Compiled:
        return lower(self, node, left_up, right_up)

    def visit_Sink(self, node: nodes.Sink, up: Compiled) -> Compiled:
        return self.merge(self.data_rows(up, node.uid), up)


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


def _proven_time(value: Any, unit: str | None) -> bool:
    """Whether a collection's event time ``value`` surely passes ``_bad_event_time``: an integer in range, or a
    datetime of year 2 .. 9998 (in range in any time zone); anything else is checked in Spark."""
    if unit in ("ms", "s"):
        scale = 1 if unit == "ms" else 1000
        return type(value) is int and _MIN_MS / scale <= value < _END_MS / scale
    return isinstance(value, dt.datetime) and 1 < value.year < 9999


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


def _window_column(node: nodes.WindowAggregate, ts: str) -> Column:
    a = node.assigner
    if isinstance(a, TumblingEventTimeWindows):
        return F.window(ts, f"{a.size_ms} milliseconds", startTime=f"{a.offset_ms % a.size_ms} milliseconds")
    if isinstance(a, SlidingEventTimeWindows):
        return F.window(ts, f"{a.size_ms} milliseconds", f"{a.slide_ms} milliseconds", f"{a.offset_ms % a.slide_ms} milliseconds")
    raise UnsupportedError(f"{node.where()}: no native window for {a.describe()}")


def _millis(ms: int) -> Column:
    """An interval literal of ``ms`` milliseconds (negative too): Spark derives join state cleanup only from literals."""
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    return F.expr(f"INTERVAL '{sign}{ms // 1000}.{ms % 1000:03d}' SECOND")


def _aggregate(a: nodes.Aggregate) -> Column:
    if a.fn == "count":
        return F.count(F.lit(1)).alias(a.alias)
    fn = {"sum": F.sum, "min": F.min, "max": F.max, "avg": F.avg}[a.fn]
    return fn(F.col(a.column or "")).alias(a.alias)


_UNRESOLVED = re.compile(r"name `?([^`\s]+)`? cannot be resolved")


def _plan_error(node: nodes.Node, e: AnalysisException, inputs: list[Compiled]) -> PlanError:
    msg = next((line for line in str(e).splitlines() if line.strip()), str(e))
    available: list[str] = [c for i in inputs for c in i.frame.columns if c != EOS]
    m = _UNRESOLVED.search(msg)
    if m:
        name = m.group(1).split(".")[-1]
        return SchemaError(f"{node.where()}: unknown column '{name}'{did_you_mean(name, available)}")
    return PlanError(f"{node.where()} [{node.uid}]: Spark cannot plan it: {msg}")


def _keep_event_time(before: DataFrame, after: DataFrame) -> DataFrame:
    """Re-marks the event-time column a Python function passed through (Flink: map keeps a record's timestamp).

    mapInPandas/mapInArrow drop Spark's watermark metadata; a window downstream would then
    define a second watermark, which Spark refuses ("Redefining watermark is disallowed").
    """
    marked = {f.name: f.metadata for f in before.schema.fields if WATERMARK_META in f.metadata}
    kept = [c for c in after.columns if c in marked and after.schema[c].dataType == before.schema[c].dataType]
    if not kept:
        return after
    return after.select(*(F.col(c).alias(c, metadata=marked[c]) if c in kept else F.col(c) for c in after.columns))
