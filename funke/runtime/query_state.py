"""What the runtime knows of one running query: its progress folded into running totals, and
when its finite sources' input has ended.

A listener (or, under Spark Connect, a poller) hands each query progress to ``QueryState.update``:
rows, batches, watermark, late rows, state sizes, funke's own clocks and beats. A query has ended
when every finite source's end-of-input row has been read and the batch after it, which fires the
last windows, has committed (``QueryState.ended_in``).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from funke.connectors.partitions import commit
from funke.connectors.sinks import FileSink
from funke.plan import nodes
from funke.runtime.metrics import RECENT_BATCHES, DurationHistogram
from funke.runtime.progress import HISTORY_BATCHES, BatchRecord, record, watermark_ms
from funke.runtime.watermarks import Beat, Clock, DueTimers

if TYPE_CHECKING:
    from funke.spark.compiled import Compiled
    from funke.spark.query import QueryPlan


@dataclass
class QueryState:
    """What the listener has learned about one query (one sink, or several split from one operator)."""

    plan: QueryPlan
    query: Any = None
    batches: int = 0
    input_rows: int = 0
    output_rows: int = 0
    late_rows_dropped: int = 0
    dead_letters: int = 0
    watermark: str | None = None
    last_batch_id: int = -1
    end_batch: dict[str, int] = field(default_factory=dict)
    #: The last RECENT_BATCHES micro-batches' durations and rows (charts, percentiles); every
    #: batch's duration goes into ``batch_seconds`` and the checkpoint writes' into ``checkpoint_seconds``.
    batch_ms: deque[int] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))
    batch_rows: deque[int] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))
    batch_at: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))  # wall clock at each batch's end
    batch_seconds: DurationHistogram = field(default_factory=DurationHistogram)
    checkpoint_seconds: DurationHistogram = field(default_factory=DurationHistogram)
    finished: bool = False
    memory_table: str | None = None  # Spark Connect: the memory sink a collect sink reads
    #: Spark's stateful operators of the query, as of the last batch: "<name>#<i>" -> (rows, bytes).
    state: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Rows per observe point (``funke_src_<uid>``, ``funke_wm_<uid>``, ``funke_out_<uid>``), summed over batches.
    observed_rows: dict[str, int] = field(default_factory=dict)
    #: The last batch's phase durations (ms): Spark's ``durationMs`` (walCommit, commitOffsets, ...).
    durations: dict[str, int] = field(default_factory=dict)
    #: Watermarks funke computes for the query's operators (``funke.runtime.watermarks``).
    clocks: list[Clock] = field(default_factory=list)
    #: When the query's general operators on Spark's watermark need a batch (``funke.runtime.watermarks``).
    beats: list[Beat] = field(default_factory=list)
    #: Times the query was restarted from its checkpoint after a transient failure (``transient``) or a
    #: micro-batch past the checkpoint timeout (``funke.runtime.watchdog``).
    restarts: int = 0
    #: How long each micro-batch of a real-time query runs by design (its checkpoint interval), ms; 0 otherwise.
    batch_runs_ms: int = 0
    #: The last micro-batches as records (``funke.runtime.progress``): rates, checkpoint history, lag.
    history: deque[BatchRecord] = field(default_factory=lambda: deque(maxlen=HISTORY_BATCHES))
    #: What failed the query in funke's own bookkeeping (a partition commit): the job fails with it.
    failure: BaseException | None = None

    def __post_init__(self) -> None:
        self.clocks = [Clock(c.path, c.inputs, c.uid, timers=DueTimers(c.buckets, c.observe)) for c in self.plan.compiled.clocks]
        for clock in self.clocks:
            clock.write()  # the first micro-batch reads -infinity
        ends = tuple(self.finite_metrics)  # (the query's input ends when all of them have: ended_in)
        self.beats = [Beat(b.path, DueTimers(b.buckets, b.observe), ends=ends) for b in self.plan.compiled.beats]
        for beat in self.beats:
            beat.write()  # a new run: the first micro-batch beats

    def refresh_collect(self, spark: Any) -> None:
        """Spark Connect: copy the memory sink's rows into the collect sink."""
        if self.memory_table is not None:
            rows = [r.asDict() for r in spark.sql(f"SELECT * FROM `{self.memory_table}`").collect()]
            self.sink.spec.add_batch(0, rows)

    @property
    def sink(self) -> nodes.Sink:
        return self.plan.sinks[0]

    @property
    def compiled(self) -> Compiled:
        return self.plan.compiled

    @property
    def finite_metrics(self) -> list[str]:
        return [m.name for m in self.compiled.metrics if m.finite]

    def update(self, p: Any) -> None:
        observed = p.observedMetrics or {}
        if self.clocks or self.beats:
            folded = {name: observed_row(row) for name, row in observed.items()}
            for clock in self.clocks:
                clock.update(folded, batch=p.batchId)
            for beat in self.beats:
                beat.update(folded, (p.eventTime or {}).get("watermark"))
                beat.saw(p.sources)
        rows = 0
        counts: dict[str, int] = {}  # this batch's rows per observe point
        for m in self.compiled.metrics:
            row = observed.get(m.name)
            if row is None:
                continue
            d = observed_row(row)
            if m.counts_rows:
                rows += int(d.get("rows") or 0)
                counts[m.name] = counts.get(m.name, 0) + int(d.get("rows") or 0)
            if m.operator is not None:
                for field, direction in (("rows_in", "in"), ("rows_out", "out")):
                    if field in d:
                        key = f"{direction}:{m.operator}"
                        counts[key] = counts.get(key, 0) + int(d[field] or 0)
            for field, key in m.counts.items():
                if field in d:
                    counts[key] = counts.get(key, 0) + int(d[field] or 0)
            self.late_rows_dropped += int(d.get("dropped") or 0)
            self.dead_letters += int(d.get("dead") or 0)
            if m.finite and d.get("eos") == 1 and m.name not in self.end_batch:
                self.end_batch[m.name] = p.batchId
        out = observed.get(output_metric(self.sink.uid))
        produced = int(observed_row(out).get("rows") or 0) if out is not None else 0
        if out is not None and len(self.plan.sinks) == 1:  # a split query counts every sink's rows at once
            key = output_metric(self.sink.uid)
            counts[key] = counts.get(key, 0) + produced
        for key, rows_here in counts.items():
            self.observed_rows[key] = self.observed_rows.get(key, 0) + rows_here
        while self.history and self.history[-1].batch >= p.batchId:  # a batch replayed after a restart counts once
            self.history.pop()
        self.history.append(record(p, rows, counts))
        self.batches += 1
        self.input_rows += rows
        self.output_rows += produced
        self.last_batch_id = max(self.last_batch_id, p.batchId)
        self.watermark = (p.eventTime or {}).get("watermark", self.watermark)
        self.late_rows_dropped += sum(int(getattr(s, "numRowsDroppedByWatermark", 0) or 0) for s in (p.stateOperators or []))
        self.state = {
            f"{getattr(s, 'operatorName', 'state')}#{i}": (int(getattr(s, "numRowsTotal", 0) or 0), int(getattr(s, "memoryUsedBytes", 0) or 0))
            for i, s in enumerate(p.stateOperators or [])
        }
        self.durations = {k: int(v) for k, v in (p.durationMs or {}).items()}
        self.record_batch(self.durations.get("triggerExecution", 0), rows)
        self.checkpoint_seconds.observe((self.durations.get("walCommit", 0) + self.durations.get("commitOffsets", 0)) / 1000)
        ended = self.ended_in(self.last_batch_id)
        try:  # (before the query shows as finished: wait() returns then)
            commit_partitions(self, final=ended)
        except (OSError, ValueError) as e:  # (a partition that cannot be committed fails the job, as in Flink)
            self.failure, ended = e, False
        if ended:
            self.finished = True

    def record_batch(self, ms: int, rows: int) -> None:
        self.batch_ms.append(ms)
        self.batch_rows.append(rows)
        self.batch_at.append(time.time())
        self.batch_seconds.observe(ms / 1000)

    def ended_in(self, last_batch: int) -> bool:
        """True when every finite source's end row has been read and, by ``last_batch``, acted on (a general
        operator's beat too: its end-of-input beat read, which fires its processing-time timers)."""
        names = self.finite_metrics
        if not names or not all(k in self.end_batch for k in names) or not all(b.closed or not b.linked for b in self.beats):
            return False
        last_end = max(self.end_batch[k] for k in names)
        # The batch carrying the end row raises the watermark; the next one fires the windows.
        return last_batch >= last_end and (not self.compiled.stateful or last_batch > last_end)



def observed_row(row: Any) -> dict[str, Any]:
    """An observed-metrics row as a dict.

    The listener hands over proper Rows; progress parsed from JSON (``recentProgress``,
    Spark Connect) holds ``Row(values=[...], schema={...})`` instead.
    """
    d = row.asDict()
    if set(d) == {"values", "schema"} and isinstance(d["schema"], dict):
        return dict(zip((f["name"] for f in d["schema"]["fields"]), d["values"]))
    return d


def safe_name(uid: str) -> str:
    """``uid`` as the compiler writes it into Spark names (observe points, tables)."""
    from funke.spark.compiled import safe_name as _safe  # (pyspark's lazy import: the compiler imports pyspark)

    return _safe(uid)


def output_metric(uid: str) -> str:
    """The observe point that counts the rows a query writes to sink ``uid``."""
    return f"funke_out_{safe_name(uid)}"


def commit_partitions(st: QueryState, *, final: bool) -> None:
    """Flink's partition commit for the query's partitioned file sinks after a micro-batch (``final``:
    every partition, the query has ended): ``funke.connectors.partitions``."""
    wm = watermark_ms(st.watermark)
    for s in st.plan.sinks:
        spec = s.spec
        if isinstance(spec, FileSink) and spec.commit is not None:
            try:
                commit(spec.path, spec.partition_by, spec.commit, watermark_ms=None if wm is None else int(wm),
                       now_ms=int(time.time() * 1000), final=final)  # fmt: skip
            except ValueError as e:
                raise ValueError(f"{s.where()}: a partition cannot be committed: {e}") from e

