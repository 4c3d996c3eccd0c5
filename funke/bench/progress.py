"""A streaming query's micro-batches as Spark reports them: every progress report kept, each batch on the wall clock.

:class:`ProgressLog` keeps every report of every query (``recentProgress`` keeps only the last
100) and reads the watermark each batch ran with; :func:`spans` lays the batches out on the
wall clock (:class:`Span`) for the latency split (:mod:`funke.bench.latency`).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Span:
    """One micro-batch on the wall clock (epoch ms): its start, its end, the watermark it ran with, its phases."""

    batch: int
    start_ms: int
    end_ms: int
    watermark_ms: int | None
    #: Spark's ``durationMs`` of the batch: ``latestOffset``, ``queryPlanning``, ``addBatch``, ``walCommit``, ...
    phases_ms: Mapping[str, int] = field(default_factory=dict)


def spans(reports: Iterable[Any]) -> tuple[Span, ...]:
    """A query's progress reports as :class:`Span` s, in batch order (``timestamp`` is when a batch started)."""
    out = []
    for p in sorted(reports, key=lambda p: p.batchId):
        phases = {k: int(v) for k, v in (p.durationMs or {}).items()}
        start = watermark_ms(p.timestamp)
        if start is None:
            continue
        end = start + phases.get("triggerExecution", 0)
        out.append(Span(p.batchId, start, end, watermark_ms((p.eventTime or {}).get("watermark")), phases))
    return tuple(out)


def watermark_ms(text: str | None) -> int | None:
    """Epoch ms of a watermark as a progress report shows it (``2024-01-01T00:00:05.000Z``).

    >>> watermark_ms("1970-01-01T00:00:01.500Z"), watermark_ms(None)
    (1500, None)
    """
    if not text:
        return None
    return round(dt.datetime.fromisoformat(text).timestamp() * 1000)


class ProgressLog:
    """Every progress report, per query (``recentProgress`` keeps only the last 100)."""

    def __init__(self, spark: Any):
        from pyspark.sql.streaming import StreamingQueryListener

        self.spark = spark
        self._lock = threading.Lock()
        self._seen: dict[str, list[Any]] = {}
        outer = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                with outer._lock:
                    outer._seen.setdefault(str(event.progress.id), []).append(event.progress)

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass

        from funke.spark.listener import reading_json

        # (both systems' runs are watched this way: the same cost, next to nothing, for each)
        self._listener = reading_json(Listener())
        spark.streams.addListener(self._listener)

    def of(self, query_id: Any) -> list[Any]:
        with self._lock:
            return sorted(self._seen.get(str(query_id), []), key=lambda p: p.batchId)

    def watermarks(self, query_id: Any) -> dict[int, int]:
        """Batch id → the watermark (epoch ms) that batch ran with."""
        marks = ((p.batchId, watermark_ms((p.eventTime or {}).get("watermark"))) for p in self.of(query_id))
        return {b: w for b, w in marks if w is not None}

    def close(self) -> None:
        self.spark.streams.removeListener(self._listener)
