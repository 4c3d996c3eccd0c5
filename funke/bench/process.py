"""``funke bench general --process-events N``: a KeyedProcessFunction with keyed state and
event-time timers, funke against the same function written for plain PySpark.

The job: events of ``keys`` keys (100 000 by default), one per millisecond of event time in
order; per key a count per 10 s period in map state and an event-time timer at the period's
end, which reports ``(key, period end, count)`` and drops the period.

* funke: ``key_by("k").process(PeriodCount(), ...)`` (funke's general path);
* plain PySpark: a ``StatefulProcessor`` with a ``MapState`` and event-time timers under
  ``transformWithStateInPandas``, as a PySpark user writes it.

Both stream the same events (``rows_per_batch`` a micro-batch) to Parquet. A plain query
over a finite stream never sees its last timers fire (Spark has no end-of-input watermark),
so its periods are checked against a batch group-by of the events: all that its last
micro-batch's watermark closed are there, and each is right; funke's whole output (it fires
the rest at the end of input) must equal the group-by.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from funke.bench.measure import finish_within
from funke.bench.ysb import BenchMismatchError
from funke.functions import KeyedProcessFunction, KeyGroup
from funke.state import MapStateDescriptor

BASE_MS = 1_700_000_000_000
PERIOD_MS = 10_000
BOUND_MS = 1_000
OUTPUT = "k bigint, period_end bigint, n bigint"


def _columns(keys: int) -> dict[str, str]:
    return {"k": f"pmod(xxhash64(i), {keys})", "t": f"timestamp_millis({BASE_MS} + i)"}


class PeriodCount(KeyedProcessFunction):
    """A count per key and 10 s period of event time (map state: period -> count, as the watermark
    trails the elements), reported by an event-time timer at the period's end and then dropped."""

    def open(self, ctx: Any) -> None:
        self.counts = ctx.get_map_state(MapStateDescriptor("counts", int, int))

    def process_element(self, value: dict[str, Any], ctx: Any) -> None:
        end = (ctx.timestamp() // PERIOD_MS + 1) * PERIOD_MS - 1
        self.counts.put(end, (self.counts.get(end) or 0) + 1)
        ctx.timer_service().register_event_time_timer(end)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[dict[str, Any]]:
        yield {"k": ctx.get_current_key(), "period_end": timestamp + 1, "n": self.counts.get(timestamp)}
        self.counts.remove(timestamp)


class PeriodCountBatched(PeriodCount):
    """PeriodCount written with ``process_batch``: a key's elements of a micro-batch counted per period
    together, its map state read and written and its timer registered once per key and period."""

    def process_element(self, value: dict[str, Any], ctx: Any) -> None:
        raise AssertionError("process_batch takes every element")

    def process_batch(self, key_groups: Iterator[KeyGroup], ctx: Any) -> None:
        timers = ctx.timer_service()
        for group in key_groups:
            ends: dict[int, int] = {}
            for t in group.timestamps:
                end = (t // PERIOD_MS + 1) * PERIOD_MS - 1
                ends[end] = ends.get(end, 0) + 1
            for end, n in ends.items():
                self.counts.put(end, (self.counts.get(end) or 0) + n)
                timers.register_event_time_timer(end)


@dataclass(frozen=True)
class ProcessRun:
    system: str
    events: int
    seconds: float
    rows: frozenset[tuple[int, int, int]]

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def _rows(spark: Any, path: str) -> frozenset[tuple[int, int, int]]:
    return frozenset((int(r[0]), int(r[1]), int(r[2])) for r in spark.read.parquet(path).select("k", "period_end", "n").collect())


def run_funke(spark: Any, events: int, keys: int, rows_per_batch: int, workdir: str, timeout_s: float, *, batched: bool = False) -> ProcessRun:
    """funke's general path; ``batched``: the function written with ``process_batch`` (PeriodCountBatched)."""
    import funke as fk

    env = fk.StreamEnvironment(app="bench-process", spark=spark, checkpoint_dir=os.path.join(workdir, "checkpoint"))
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(BOUND_MS)).with_timestamp_assigner("t")
    src = fk.sources.generator(_columns(keys), schema="k bigint, t timestamp", events=events, rows_per_batch=rows_per_batch)
    out = os.path.join(workdir, "out")
    function = PeriodCountBatched() if batched else PeriodCount()
    env.from_source(src, wm).key_by("k").process(function, output_schema=OUTPUT).sink_to(fk.sinks.files(out), uid="periods")
    seconds = finish_within(env, timeout_s, "funke's process function")
    return ProcessRun("funke KeyedProcessFunction" + (" (process_batch)" if batched else ""), events, seconds, _rows(spark, out))


def run_plain(spark: Any, events: int, keys: int, rows_per_batch: int, workdir: str, timeout_s: float) -> ProcessRun:
    """The same function as a PySpark user writes it: a StatefulProcessor under transformWithStateInPandas."""
    import pandas as pd
    from pyspark.sql.streaming import StatefulProcessor

    from funke.bench.plain import parquet_until_read, rate_events

    class PlainPeriodCount(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self.handle = handle
            self.counts = handle.getMapState("counts", "end bigint", "n bigint")

        def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
            ends: dict[int, int] = {}
            for frame in rows:
                period = (frame["t"].astype("int64") // 1_000_000 // PERIOD_MS + 1) * PERIOD_MS - 1
                for end, n in period.value_counts().items():
                    ends[int(end)] = ends.get(int(end), 0) + int(n)
            for end, n in ends.items():
                had = self.counts.getValue((end,))[0] if self.counts.containsKey((end,)) else 0
                self.counts.updateValue((end,), (had + n,))
                self.handle.registerTimer(end)
            return iter(())

        def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[pd.DataFrame]:
            end = expiredTimerInfo.getExpiryTimeInMs()
            n = self.counts.getValue((end,))[0] if self.counts.containsKey((end,)) else 0
            self.counts.removeKey((end,))
            yield pd.DataFrame({"k": [key[0]], "period_end": [end + 1], "n": [n]})

        def close(self) -> None:
            pass

    frame = rate_events(spark, events, rows_per_batch, _columns(keys), BOUND_MS)
    counted = frame.groupBy("k").transformWithStateInPandas(PlainPeriodCount(), OUTPUT, "Append", "EventTime")
    out = os.path.join(workdir, "out")
    seconds = parquet_until_read(spark, counted, events, out, os.path.join(workdir, "ck"), timeout_s)
    return ProcessRun("plain PySpark transformWithStateInPandas", events, seconds, _rows(spark, out))


def reference(spark: Any, events: int, keys: int) -> frozenset[tuple[int, int, int]]:
    """Every (key, period end, count) of the events, by a batch group-by."""
    from pyspark.sql import functions as F

    df = spark.range(events).withColumnRenamed("id", "i").selectExpr(*(f"{sql} AS {name}" for name, sql in _columns(keys).items()))
    end = ((F.unix_millis("t") / PERIOD_MS).cast("bigint") + 1) * PERIOD_MS
    rows = df.groupBy("k", end.alias("period_end")).agg(F.count(F.lit(1)).alias("n")).collect()
    return frozenset((int(r[0]), int(r[1]), int(r[2])) for r in rows)


def run_process_bench(spark: Any, events: int, keys: int = 100_000, rows_per_batch: int = 200_000, timeout_s: float = 3_600) -> list[ProcessRun]:
    """Both systems in turn over the same events, checked; raises ``BenchMismatchError`` when they differ."""
    root = tempfile.mkdtemp(prefix="funke-bench-process-")
    try:
        f = run_funke(spark, events, keys, rows_per_batch, os.path.join(root, "funke"), timeout_s)
        p = run_plain(spark, events, keys, rows_per_batch, os.path.join(root, "plain"), timeout_s)
        b = run_funke(spark, events, keys, rows_per_batch, os.path.join(root, "batched"), timeout_s, batched=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    want = reference(spark, events, keys)
    for run in (f, b):
        if run.rows != want:
            raise BenchMismatchError(f"{run.system}: {len(run.rows ^ want)} rows differ from the batch group-by")
    # Plain PySpark fires a timer once the watermark of a later micro-batch passes it; the last batch
    # (from offset ``last``) runs with the watermark of the event before it, and a finite stream
    # has no end-of-input watermark: every period ending by then is there, and nothing else.
    last = (events - 1) // rows_per_batch * rows_per_batch
    closed = BASE_MS + last - BOUND_MS
    must = {r for r in want if r[1] <= closed}
    if not must or not must <= p.rows <= want:
        raise BenchMismatchError(
            f"plain PySpark's process function: {len(must - p.rows)} closed periods missing, {len(p.rows - want)} wrong"
        )
    return [f, p, b]


def process_summary(runs: list[ProcessRun], keys: int) -> str:
    f, p, b = runs
    return (
        f"{f.events:,} events over {keys:,} keys, a count in map state and an event-time timer per key and 10 s period, "
        f"{len(f.rows):,} periods (funke: all, equal to a batch group-by; plain: the closed ones, each right): funke "
        f"{f.events_per_s:,.0f} events/s ({f.seconds:.1f} s), plain PySpark transformWithStateInPandas {p.events_per_s:,.0f} "
        f"events/s ({p.seconds:.1f} s), funke/plain **{f.events_per_s / p.events_per_s:.2f}**; the function written with "
        f"process_batch {b.events_per_s:,.0f} events/s ({b.seconds:.1f} s), **{b.events_per_s / f.events_per_s:.2f}x** "
        "the per-element one"
    )
