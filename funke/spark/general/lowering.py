"""A general-path node as Spark frames: its input rows over key buckets, the time rows that make every
bucket run when something is due (a test script's, funke's clock's or the beat's), and the one
``transformWithStateInPandas`` (a bounded run: ``applyInPandas``) that runs its ``Program`` per bucket.

The compiler's visitors call ``lower`` for every node on the general path, of one input or two.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from funke.errors import UnsupportedError
from funke.plan import nodes
from funke.plan.capabilities import idle_inputs, split_watermark
from funke.spark import datasources
from funke.spark.compiled import JOIN_SHIFT_MS, Compiled, safe_name
from funke.spark.general.preaggregate import pre_shuffled
from funke.spark.general.program import (
    BUCKET,
    CONTROL,
    CONTROL_COLUMNS,
    COUNT,
    DROPPED,
    DUE,
    NULLS,
    PT,
    SECOND_PREFIX,
    SEQ,
    SIDE,
    TAG,
    TS,
    UNLISTED,
    WM,
    BeatSpec,
    ClockSpec,
    Program,
    general_program,
    main_view,
    needs_time,
    split_input,
    two_input_program,
)
from funke.spark.general.run import batch_function, processor
from funke.spark.session import is_connect
from funke.spark.sources import SCRIPT_PT, SCRIPT_WM

if TYPE_CHECKING:
    from funke.spark.compiler import Compiler

#: Spark integral types: a key of one of them is hashed as bigint, so both inputs of a join bucket alike.
_INTEGRAL_SPARK = frozenset({"byte", "short", "integer", "long"})


# -- key buckets ----------------------------------------------------------------------------------


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


def bucket_column(bucket_ids: tuple[int, ...], position: Column) -> Column:
    """The ``fk_b`` value of the bucket at ``position`` (``0..buckets-1``)."""
    if bucket_ids == tuple(range(len(bucket_ids))):
        return position.cast("int")
    return F.element_at(F.array(*(F.lit(i) for i in bucket_ids)), (position + 1).cast("int")).cast("int")


def key_bucket_column(bucket_ids: tuple[int, ...], *hashed: Column) -> Column:
    """The ``fk_b`` value of the bucket that the ``xxhash64`` of ``hashed`` names."""
    return bucket_column(bucket_ids, F.pmod(F.xxhash64(*hashed), F.lit(len(bucket_ids))))


def every_bucket_column(bucket_ids: tuple[int, ...]) -> Column:
    """Every bucket's ``fk_b`` value, exploded (a row for each)."""
    return F.explode(F.array(*(F.lit(i) for i in bucket_ids)))


# -- the operator -----------------------------------------------------------------------------------


def lower(compiler: Compiler, node: nodes.Node, *ups: Compiled) -> Compiled:
    """Run ``node`` (of one input or two) as one funke operator over key buckets (``funke.spark.general``).

    The input rows, each with the control columns (``CONTROL_COLUMNS``; a two-input operator's also the
    input it comes from, ``SIDE``, and the second input's columns renamed), and the operator's time rows
    enter one stateful Spark operator grouped by bucket.
    """
    two = len(ups) == 2
    frames = [compiler.data_rows(up, node.uid) for up in ups]
    side_tags = compiler.facts.side_tags.get(id(node), ())
    if two:
        program = two_input_program(node, compiler.buckets, frames[0], frames[1], side_tags)
    else:
        program = general_program(node, compiler.buckets, frames[0], side_tags)
    scripted = ups[0].control is not None
    if any((up.control is not None) != scripted for up in ups):
        raise UnsupportedError(
            f"{node.where()} [{node.uid}]: one input's time comes from a test script and the other's does not; "
            "script both inputs with TestStream, or neither"
        )
    clock = _clock(compiler, node) if not scripted and needs_time(node) else None
    bound = _same_batch_bound(compiler, node, clock, scripted)
    if bound is not None:
        program = replace(program, same_batch_bound_ms=bound)
    if scripted:
        program = replace(program, scripted=True)
    now = _processing_time(ups[0])
    early = program.preaggregate is not None and program.preaggregate.before_shuffle
    rows = _input_rows(compiler, node, program, frames, now, early)
    counter = Compiled(rows)
    rows = compiler.count_rows(counter, node, "rows_in", rows)
    if early:
        rows = pre_shuffled(rows, program, now)
    beat = None
    if not compiler.streaming:
        rows, program = _operator_input(rows, replace(program, time_ordered=compiler.time_ordered))
        tagged = rows.groupBy(BUCKET).applyInPandas(batch_function(program), program.output_ddl())
    else:
        if clock is not None:
            program = replace(program, clock=True, beat=True)
        elif not scripted and needs_time(node):
            program = replace(program, beat=True)
        time_rows, beat = _time_rows(compiler, node, ups, clock)
        if time_rows is not None:
            rows = rows.unionByName(time_rows, allowMissingColumns=True)
        watermarked = not scripted and any(i.watermark is not None for i in node.inputs)
        rows, program = _operator_input(rows, program)
        tagged = rows.groupBy(BUCKET).transformWithStateInPandas(
            processor(program, wake=beat is not None and watermarked), program.output_ddl(), "Append", "EventTime" if watermarked else "None"
        )
    # Only an operator driven by time holds output back until the batch after the end of input.
    # (A test script's last batch moves the watermark to +infinity itself.)
    out = compiler.merge(tagged, *ups, stateful=needs_time(node) and not scripted)
    out.metrics += counter.metrics
    if clock is not None:
        out.clocks.append(clock)
    if beat is not None:
        out.beats.append(beat)
    return _tagged(compiler, node, tagged, program, out)


def _input_rows(compiler: Compiler, node: nodes.Node, program: Program, frames: list[DataFrame], now: Column, early: bool) -> DataFrame:
    """The inputs' rows with the control columns (``SEQ`` null: arrival order, as Spark keeps each source
    partition's order), timestamp columns as epoch microseconds. ``early`` (pre-aggregated before the
    shuffle): only the bucket and event time; the partials get the other control columns after."""
    two = len(frames) == 2
    nothing = F.lit(None).cast("bigint")
    parts = []
    for side, (frame, inp) in enumerate(zip(frames, node.inputs, strict=True)):
        values, micros, prefix = program.values, program.micros, ""
        if side == 1:
            assert program.second is not None
            values, micros, prefix = program.second.values, program.second.micros, SECOND_PREFIX
        ts = inp.event_time
        stamp = F.unix_millis(F.col(ts).cast("timestamp")) if ts is not None else nothing
        control = {BUCKET: _bucket_of(compiler, program, frame, inp, side, two)}
        if two:
            control[SIDE] = F.lit(side)
        control.update({SEQ: nothing, CONTROL: F.lit(False), TS: stamp, WM: nothing, PT: now})
        if early:
            control = {c: control[c] for c in (BUCKET, TS)}
        columns = [(F.unix_micros(F.col(c).cast("timestamp")) if c in micros else F.col(c)).alias(prefix + c) for c in values]
        parts.append(frame.select(*(column.alias(name) for name, column in control.items()), *columns))
    rows = parts[0]
    for other in parts[1:]:
        rows = rows.unionByName(other, allowMissingColumns=True)
    return rows


def _bucket_of(compiler: Compiler, program: Program, frame: DataFrame, inp: nodes.Node, side: int, two: bool) -> Column:
    """An input row's bucket: its key's. Unkeyed, a one-input operator's rows stay in their Spark partition's
    bucket (in their order) and a two-input operator's are spread by their content; a broadcast input's
    rows go to every bucket. A two-input operator hashes integral keys as bigint, so a key's rows of both
    inputs meet in one bucket."""
    ids = compiler.bucket_ids
    keys = tuple(inp.keys or ())
    if side == 1 and program.second is not None and program.second.broadcast:
        return every_bucket_column(ids)
    if not two:
        if not keys:
            return bucket_column(ids, F.pmod(F.spark_partition_id(), F.lit(len(ids))))
        return key_bucket_column(ids, *(F.col(k) for k in keys))
    if not keys:
        return key_bucket_column(ids, F.to_json(F.struct(*(F.col(c) for c in frame.columns))))
    cols = [F.col(k).cast("bigint") if frame.schema[k].dataType.typeName() in _INTEGRAL_SPARK else F.col(k) for k in keys]
    return key_bucket_column(ids, *cols)


def _operator_input(frame: DataFrame, program: Program) -> tuple[DataFrame, Program]:
    """A general operator's input as it goes to Python, and its program knowing the columns' order
    (``named``). Bigint value columns go null-free, each beside its null mask (``NULLS``), so they
    reach the operator's pandas frames as int64, not float64 (which rounds above 2**53)."""
    longs = [f.name for f in frame.schema.fields if f.dataType.typeName() == "long" and f.name not in CONTROL_COLUMNS]
    if longs:
        rest = [F.col(c) for c in frame.columns if c not in longs]
        exact = [F.coalesce(F.col(c), F.lit(0).cast("bigint")).alias(c) for c in longs]
        frame = frame.select(*rest, *exact, *(F.isnull(F.col(c)).alias(NULLS + c) for c in longs))
    return frame, replace(program, columns=tuple(frame.columns))


def _processing_time(up: Compiled) -> Column:
    """An element row's processing time: the micro-batch's (Spark's ``current_timestamp()``, in a bounded
    run the query's one instant, as Flink's batch mode holds processing time still); under a test
    script none (its time rows carry the script's)."""
    return F.lit(None).cast("bigint") if up.control is not None else F.unix_millis(F.current_timestamp())


def _late_observe(node: nodes.Node) -> str:
    """The observe of a general operator's output: late drops, rows out (and its beat's reports)."""
    return f"funke_late_{safe_name(node.uid)}"


def _tagged(compiler: Compiler, node: nodes.Node, tagged: DataFrame, program: Program, out: Compiled) -> Compiled:
    """A general operator's result: its tagged output (late drops and main-output rows counted on the way) and main view."""
    dropped = F.sum(F.when(F.col(TAG) == DROPPED, F.col(COUNT))).alias("dropped")
    fields = [dropped, F.count(F.when(F.col(TAG) == "", 1)).alias("rows_out")]
    sides = {f"tag_{i}": o.label for i, o in enumerate(program.outputs) if o.tag is not None}
    fields += [F.count(F.when(F.col(TAG) == label, 1)).alias(name) for name, label in sides.items()]
    if program.beat:  # what funke.runtime.watermarks.Beat needs: the bucket runs and their next processing-time timer
        due = F.col(TAG) == DUE
        fields += [F.count(F.when(due, 1)).alias("runs"), F.min(F.when(due, F.col(COUNT))).alias("pt_due")]
    tagged = compiler.observe(out, _late_observe(node), False, *fields, frame=tagged)
    out.metrics[-1].counts_rows, out.metrics[-1].operator = False, safe_name(node.uid)
    out.metrics[-1].counts = {name: f"tag:{safe_name(node.uid)}:{label}" for name, label in sides.items()}
    out.frame = main_view(tagged, program)
    out.tagged, out.program, out.control = tagged, program, None
    return out


# -- time rows ------------------------------------------------------------------------------------


def _time_rows(compiler: Compiler, node: nodes.Node, ups: tuple[Compiled, ...], clock: ClockSpec | None) -> tuple[DataFrame | None, BeatSpec | None]:
    """The operator's time rows (one per bucket in the micro-batches that carry them) and its beat, if
    any: funke's clock's, a test script's (a two-input operator's say which input's script they are),
    or the beat's for an operator driven by time; none for one that runs only on elements."""
    two = len(ups) == 2

    def on_side(rows: DataFrame, side: int | None) -> DataFrame:
        if not two:
            return rows
        return rows.withColumn(SIDE, F.lit(None).cast("int") if side is None else F.lit(side))

    if clock is not None:
        return on_side(_clock_rows(compiler, clock), None), None
    if ups[0].control is not None:
        script_rows = [on_side(_control_rows(compiler, up), side) for side, up in enumerate(ups)]
        rows = script_rows[0]
        for other in script_rows[1:]:
            rows = rows.unionByName(other)
        return rows, None
    if needs_time(node):
        rows, beat = _beat_rows(compiler, node)
        return on_side(rows, None), beat
    return None, None


def _control_rows(compiler: Compiler, up: Compiled) -> DataFrame:
    """One time row per bucket per micro-batch of the test script (its watermark and processing time)."""
    assert up.control is not None
    return up.control.select(
        every_bucket_column(compiler.bucket_ids).alias(BUCKET),
        F.lit(True).alias(CONTROL),
        F.col(SCRIPT_WM).alias(WM),
        F.col(SCRIPT_PT).alias(PT),
    )


def _beat_rows(compiler: Compiler, node: nodes.Node) -> tuple[DataFrame, BeatSpec]:
    """One time row per bucket with the batch's processing time, in the micro-batches ``funke_beat`` says are due."""
    datasources.register(compiler.spark)
    path = os.path.join(tempfile.gettempdir(), f"funke-beat-{safe_name(node.uid)}-{uuid.uuid4().hex[:8]}.json")
    rows = compiler.spark.readStream.format("funke_beat").option("path", path).option("buckets", compiler.buckets).load()
    frame = rows.select(
        bucket_column(compiler.bucket_ids, F.col("fk_b")).alias(BUCKET),
        F.lit(True).alias(CONTROL),
        F.col("fk_wm").alias(WM),  # (null, or the end of input: datasources.END_OF_INPUT_MS)
        F.unix_millis(F.current_timestamp()).alias(PT),
    )
    return frame, BeatSpec(path, _late_observe(node), compiler.buckets)


def _clock(compiler: Compiler, node: nodes.Node) -> ClockSpec | None:
    """funke's own watermark for a general operator (Flink's rule: the minimum over its watermarked
    inputs, -infinity until each has sent a row, idle inputs skipped), where Spark's query
    watermark is not that: Spark's is the minimum over every watermarked input of the query
    (holding at 0 one that has sent nothing), so other operators' inputs hold it back, and it
    knows no idle inputs. Every two-input operator takes funke's; a one-input operator where
    idle inputs meet or where the query reads watermarked inputs it does not."""
    if not compiler.streaming:
        return None
    if len(node.inputs) == 1:
        facts = compiler.facts
        mine = {id(w): w for w in facts.meeting(node)}
        others = facts.query_watermarks(node) - set(mine)
        if not mine or not (idle_inputs(node, facts.meeting) or others or any(split_watermark(w) for w in mine.values())):
            return None
        marks = mine.values()
    else:
        marks = {id(w): w for w in compiler.facts.watermarks(node)}.values()
    marks = [w for w in marks if w.strategy.generator is None]
    if not marks:
        return None
    if is_connect(compiler.spark) and all(w.strategy.idleness_ms is None and not split_watermark(w) for w in marks):
        # The clock's file is written by this client and read by the server's Python data
        # source: shared only when both run on one host. Without idleness, Spark's watermark.
        return None
    inputs = []
    for w in marks:
        done = compiler.done[id(w)]
        name = next(m.name for m in done.metrics if m.name.startswith(f"funke_wm_{safe_name(w.uid)}"))
        splits = compiler.splits.get(id(w.input))
        parts = [split_input(name, s) for s in [*map(str, range(len(splits))), UNLISTED]] if splits is not None else [name]
        inputs.extend((part, w.strategy.max_out_of_orderness_ms, w.strategy.idleness_ms) for part in parts)
    path = os.path.join(tempfile.gettempdir(), f"funke-clock-{safe_name(node.uid)}-{uuid.uuid4().hex[:8]}.json")
    return ClockSpec(path, tuple(inputs), safe_name(node.uid), _late_observe(node), compiler.buckets)


def _clock_rows(compiler: Compiler, clock: ClockSpec) -> DataFrame:
    """One row per bucket per micro-batch with the watermark funke computed (``funke_clock``)."""
    datasources.register(compiler.spark)
    rows = compiler.spark.readStream.format("funke_clock").option("path", clock.path).option("buckets", compiler.buckets).load()
    return rows.select(
        bucket_column(compiler.bucket_ids, F.col("fk_b")).alias(BUCKET),
        F.lit(True).alias(CONTROL),
        F.col("fk_wm").alias(WM),
        F.unix_millis(F.current_timestamp()).alias(PT),
    )


def _same_batch_bound(compiler: Compiler, node: nodes.Node, clock: ClockSpec | None, scripted: bool) -> int | None:
    """The delay B of the one bounded-out-of-orderness watermark a one-input ``node`` follows, where
    same-batch firing is asked for (``latency_first``) and sound: Spark's query watermark is this
    operator's (one watermarked input, the query's only one; not funke's clock, a test script or a
    WatermarkGenerator), so a bucket's ``largest event time - B - 1`` is never above it."""
    if not (compiler.latency_first and compiler.streaming) or len(node.inputs) != 1 or clock is not None or scripted:
        return None
    if not needs_time(node) or node.scripted_time or node.generated_time or node.input.event_time is None:
        return None
    marks = compiler.facts.meeting(node)
    if len(marks) != 1 or compiler.facts.query_watermarks(node) - {id(marks[0])}:
        return None
    w = marks[0]
    if w.strategy.generator is not None or split_watermark(w) or node.input.watermark != w.strategy:
        return None
    # (a watermark feeding a native interval join is declared to Spark that much further behind)
    return w.strategy.max_out_of_orderness_ms + (JOIN_SHIFT_MS if id(w) in compiler.facts.join_watermarks else 0)
