"""How long after the watermark passed a window's end its row was written, split along the query's micro-batches.

A wall-clock-paced run's window rows (:func:`arrivals`: window end and when its file was
written) and the query's micro-batches (:func:`funke.bench.progress.spans`) give each row's
latency past the watermark (:class:`LatencyRun`, made by :func:`latency_run`) and its split into
the parts of :data:`LATENCY_PARTS` (:func:`latency_parts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from examples import ysb
from funke.bench.progress import Span, spans
from funke.bench.window_rows import epoch_ms
from funke.runtime.metrics import percentile

#: The watermark's delay behind the largest event time (``ysb.OUT_OF_ORDERNESS``).
WATERMARK_DELAY_MS = round(ysb.OUT_OF_ORDERNESS.total_seconds() * 1000)


#: What a window row's latency past the watermark is made of (:func:`latency_parts`), in order.
LATENCY_PARTS = (
    "until the closing batch starts",
    "the closing batch",
    "until the emitting batch starts",
    "the emitting batch until the file",
)


def latency_parts(arrivals: Iterable[tuple[int, int]], timeline: Sequence[Span]) -> tuple[tuple[int, int, int, int], ...]:
    """Each window row's latency split along the query's micro-batches (ms, in :data:`LATENCY_PARTS` order).

    ``arrivals``: per row, (window end, when its file was written), epoch ms. The watermark
    passes the window's end at window end + :data:`WATERMARK_DELAY_MS`, in event time, which
    these runs take from the wall clock. The *emitting* batch is the first that ran with a
    watermark at or past the window's end; the *closing* batch is the one before it: its
    events moved the watermark there (Spark computes the watermark at the end of a batch and
    uses it in the next). The four parts add up to the row's latency. A row with no emitting
    batch, or none before it, is left out.

    >>> tl = [Span(0, 1000, 1500, 0), Span(1, 10_600, 11_400, 0), Span(2, 11_500, 12_300, 5_000)]
    >>> latency_parts([(5_000, 12_100)], tl)
    ((600, 800, 100, 600),)
    >>> sum(latency_parts([(5_000, 12_100)], tl)[0]) == 12_100 - (5_000 + WATERMARK_DELAY_MS)
    True
    """
    out = []
    for end, written in arrivals:
        j = next((i for i, s in enumerate(timeline) if s.watermark_ms is not None and s.watermark_ms >= end), None)
        if not j:
            continue
        closing, emitting = timeline[j - 1], timeline[j]
        due = end + WATERMARK_DELAY_MS
        waited, closed = closing.start_ms - due, closing.end_ms - closing.start_ms
        out.append((waited, closed, emitting.start_ms - closing.end_ms, written - emitting.start_ms))
    return tuple(out)


@dataclass(frozen=True)
class LatencyRun:
    """Window results of a wall-clock-paced run: how long after the watermark passed each was written."""

    system: str
    seconds: float
    rate: float
    source: str
    #: Per window row: when it was written minus (window end + watermark delay), in ms.
    samples_ms: tuple[int, ...]
    #: Per window row its latency split along the micro-batches (:func:`latency_parts`).
    parts_ms: tuple[tuple[int, int, int, int], ...] = ()
    #: The query's micro-batches (:func:`spans`).
    timeline: tuple[Span, ...] = ()

    @property
    def p50_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.5) if self.samples_ms else None

    @property
    def p99_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.99) if self.samples_ms else None

    @property
    def parts_p50_ms(self) -> tuple[float, ...] | None:
        """The p50 of each latency part over the rows (each part on its own: they need not add up)."""
        if not self.parts_ms:
            return None
        return tuple(percentile([row[i] for row in self.parts_ms], 0.5) for i in range(len(LATENCY_PARTS)))

    @property
    def phases_p50_ms(self) -> dict[str, float]:
        """The p50 of each of Spark's batch phases over the run's micro-batches."""
        names = sorted({k for s in self.timeline for k in s.phases_ms})
        return {k: percentile([s.phases_ms[k] for s in self.timeline if k in s.phases_ms], 0.5) for k in names}


def arrivals(spark: Any, path: str) -> tuple[tuple[int, int], ...]:
    """Per window row a job wrote as Parquet: (window end, when it was written), epoch ms.

    A row reached the sink when its file was written (the file's modification time).
    """
    rows = spark.read.parquet(path).select("window_end", "_metadata.file_modification_time").collect()
    return tuple((epoch_ms(r["window_end"]), epoch_ms(r["file_modification_time"])) for r in rows)


def latency_run(
    system: str, seconds: float, rate: float, source: str, rows: Iterable[tuple[int, int]], reports: Iterable[Any]
) -> LatencyRun:
    """A :class:`LatencyRun` from the rows a job wrote (:func:`arrivals`) and its query's progress reports.

    A row's latency is how long after the watermark passed the window's end it was written:
    the watermark passed it at window end + the watermark delay, in event time, which these
    runs take from the wall clock.
    """
    rows, timeline = tuple(rows), spans(reports)
    samples = tuple(written - (end + WATERMARK_DELAY_MS) for end, written in rows)
    return LatencyRun(system, seconds, rate, source, samples, latency_parts(rows, timeline), timeline)
