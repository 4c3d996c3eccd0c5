"""A running job's figures in Prometheus's text format (prometheus-client), read at scrape time.

Nothing is kept twice: the collector reads the job handle's per-query state, which the
progress listener keeps up to date, each time ``/metrics`` is scraped. Labels: ``job``, and
``query`` (the uid of the sink the Spark query writes) where a figure is per query.

>>> from prometheus_client import CollectorRegistry, generate_latest
>>> class Idle:  # the handle's shape, without Spark
...     name, states, started, ended, mode = "demo", [], 0.0, None, "streaming"
...     def savepoint_durations(self): return [0.25]
...     checkpoints = None
>>> registry = CollectorRegistry()
>>> registry.register(JobCollector(Idle()))
>>> text = generate_latest(registry).decode()
>>> 'funke_savepoint_duration_seconds_sum{job="demo"} 0.25' in text
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from funke.runtime.progress import event_time_lags, operator_flows

#: A query's first micro-batches (JIT, state store and broadcast warm-up), left out of steady-state figures.
WARMUP_BATCHES = 2


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (a value that occurred, never an interpolation).

    >>> percentile([5, 1, 4, 2, 3], 0.5), percentile([5, 1, 4, 2, 3], 0.99)
    (3, 5)
    """
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


#: Micro-batch duration buckets (seconds): Spark's floor is ~0.15 s, a busy batch several seconds.
BATCH_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: Checkpoint writes (offset and commit log) take milliseconds on a local disk, seconds on object stores.
CHECKPOINT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
#: Micro-batches a query keeps one by one (charts, percentiles): a job runs for months.
RECENT_BATCHES = 1000


class DurationHistogram:
    """Durations (seconds) counted into fixed buckets as they are observed, Prometheus's way:
    the same few numbers however long the job runs.

    >>> h = DurationHistogram((1.0, 5.0))
    >>> for s in (0.5, 2.0, 9.0): h.observe(s)
    >>> h.cumulative(), h.count, h.sum
    ([('1.0', 1), ('5.0', 2), ('+Inf', 3)], 3, 11.5)
    """

    def __init__(self, buckets: tuple[float, ...] = BATCH_BUCKETS) -> None:
        self.bounds = buckets
        self.counts = [0] * (len(buckets) + 1)  # the last: above every bound
        self.count = 0
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        i = next((i for i, b in enumerate(self.bounds) if seconds <= b), len(self.bounds))
        self.counts[i] += 1
        self.count += 1
        self.sum += seconds

    def cumulative(self) -> list[tuple[str, int]]:
        out, running = [], 0
        for bound, n in zip([*map(str, self.bounds), "+Inf"], self.counts, strict=True):
            running += n
            out.append((bound, running))
        return out


def watermark_epoch_s(watermark: str | None) -> float | None:
    """Spark's watermark (ISO-8601, UTC) in epoch seconds; None before the first one or at end of input."""
    if not watermark:
        return None
    try:
        return datetime.fromisoformat(watermark).timestamp()
    except ValueError:
        return None


class JobCollector:
    """prometheus-client collector over one ``JobHandle``."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def _watermark_s(self, uid: str, st: Any) -> float | None:
        """From the checkpoint's offset log where there is one (every batch), else Spark's last progress report."""
        checkpoints = getattr(self.handle, "checkpoints", None)
        if checkpoints is not None and not checkpoints.uri:
            ms = checkpoints.watermark_ms(uid)
            return None if ms is None else ms / 1000
        return watermark_epoch_s(st.watermark)

    def _operator_rows(self, job: str, per_query: list[tuple[str, Any]]) -> CounterMetricFamily:
        """Rows into and out of each operator funke observes, by uid.

        Always: a source (``in``, where it is read or its watermark assigned), funke's own
        operators (``in`` and ``out``: their main output) and a sink (``out``). With
        ``operator_metrics`` on, every native operator's ``out`` too; what follows from the
        counts exactly is added (``funke.runtime.progress.operator_flows``).
        """
        graph = getattr(self.handle, "plan_graph", [])
        c = CounterMetricFamily(
            "funke_operator_rows", "Rows into (in) and out of (out) an operator, by operator uid", labels=["job", "query", "operator", "direction"]
        )
        for query, st in per_query:
            for (uid, direction), n in sorted(operator_flows(st.observed_rows, graph, query).items()):
                c.add_metric([job, query, uid, direction], n)
        return c

    def collect(self) -> Iterator[Metric]:
        h = self.handle
        job = h.name
        per_query = [(st.sink.uid, st) for st in h.states]

        def counter(name: str, doc: str, attr: str) -> CounterMetricFamily:
            c = CounterMetricFamily(name, doc, labels=["job", "query"])
            for uid, st in per_query:
                c.add_metric([job, uid], getattr(st, attr))
            return c

        yield counter("funke_input_rows", "Rows read from the sources by each query", "input_rows")
        yield counter("funke_output_rows", "Rows written to each query's sink", "output_rows")
        yield counter("funke_batches", "Micro-batches committed by each query", "batches")
        yield counter("funke_late_rows_dropped", "Rows dropped as late (Spark's state operators and funke's, see explain())", "late_rows_dropped")
        yield counter("funke_dead_letters", "Rows sent to the dead-letter output", "dead_letters")
        yield counter("funke_restarts", "Times each query was restarted from its checkpoint after a transient Spark failure", "restarts")

        yield self._operator_rows(job, per_query)

        wm = GaugeMetricFamily("funke_watermark_seconds", "Event-time watermark (epoch seconds)", labels=["job", "query"])
        lag = GaugeMetricFamily("funke_watermark_lag_seconds", "Wall clock minus the watermark", labels=["job", "query"])
        now = time.time()
        for uid, st in per_query:
            at = self._watermark_s(uid, st)
            if at is not None and at > 0:
                wm.add_metric([job, uid], at)
                lag.add_metric([job, uid], max(0.0, now - at))
        yield wm
        yield lag
        behind = GaugeMetricFamily(
            "funke_event_time_lag_seconds", "The largest event time seen minus the watermark (the job's own event time)", labels=["job", "query"]
        )
        for uid, st in per_query:
            lags = event_time_lags(getattr(st, "history", ()))
            if lags:
                behind.add_metric([job, uid], lags[-1][1])
        yield behind

        hist = HistogramMetricFamily("funke_batch_duration_seconds", "Micro-batch duration (Spark's triggerExecution)", labels=["job", "query"])
        for uid, st in per_query:
            hist.add_metric([job, uid], st.batch_seconds.cumulative(), st.batch_seconds.sum)
        yield hist

        rows = GaugeMetricFamily("funke_state_rows", "Rows in Spark's state store per stateful operator", labels=["job", "query", "operator"])
        size = GaugeMetricFamily("funke_state_bytes", "State store memory per stateful operator", labels=["job", "query", "operator"])
        layouts = getattr(h, "layouts", {})
        for uid, st in per_query:
            # named by funke's uid where the query has one stateful operator (as savepoints name it), else Spark's name
            layout = layouts.get(uid, [])
            single = layout[0]["uid"] if len(layout) == 1 and len(st.state) == 1 else None
            for op, (n, b) in st.state.items():
                rows.add_metric([job, uid, single or op], n)
                size.add_metric([job, uid, single or op], b)
        yield rows
        yield size

        commit = HistogramMetricFamily(
            "funke_checkpoint_duration_seconds", "Checkpoint writes per micro-batch: offset log (walCommit) plus commit log", labels=["job", "query"]
        )
        for uid, st in per_query:
            commit.add_metric([job, uid], st.checkpoint_seconds.cumulative(), st.checkpoint_seconds.sum)
        yield commit

        taken = h.savepoint_durations()
        sp = HistogramMetricFamily("funke_savepoint_duration_seconds", "Savepoints taken of this job", labels=["job"])
        sp.add_metric([job], [(str(b), sum(1 for s in taken if s <= b)) for b in BATCH_BUCKETS] + [("+Inf", len(taken))], sum(taken))
        yield sp

        up = GaugeMetricFamily("funke_job_running", "1 while the job runs", labels=["job", "mode"])
        up.add_metric([job, h.mode], 0 if h.ended is not None else 1)
        yield up
