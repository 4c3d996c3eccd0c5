"""What one system's benchmark run measured, and the figures derived from it.

Both systems are summarised by the same code: per micro-batch the duration Spark reports
(``triggerExecution``) and the input events it read. Steady state skips the first
``WARMUP_BATCHES`` micro-batches (JIT, state store and broadcast warm-up).

>>> run = Run("x", "streaming", 30, 1.0, tuple(Batch(b, 100, 10 if b < 3 else 0) for b in range(4)), {})
>>> run.steady_events_per_s, run.batch_ms_p50, run.events_per_s
(100.0, 100, 30.0)
>>> percentile([5, 1, 4, 2, 3], 0.5), percentile([5, 1, 4, 2, 3], 0.99)
(3, 5)
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import examples.ysb as ysb
from funke.bench.reference import WindowKey

WARMUP_BATCHES = 2
#: The watermark's delay behind the largest event time (``ysb.OUT_OF_ORDERNESS``).
WATERMARK_DELAY_MS = round(ysb.OUT_OF_ORDERNESS.total_seconds() * 1000)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (a value that occurred, never an interpolation)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass(frozen=True)
class Batch:
    batch_id: int
    duration_ms: int
    events: int


@dataclass(frozen=True)
class Run:
    """One system's run of the YSB job over the generated events, and the windows it emitted."""

    system: str
    mode: str
    events: int
    wall_s: float
    batches: tuple[Batch, ...]
    windows: Mapping[WindowKey, int] = field(repr=False)
    late_rows_dropped: int = 0

    @property
    def events_per_s(self) -> float:
        """Events over the wall time of the whole run (start, every batch, shutdown)."""
        return self.events / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def steady(self) -> tuple[Batch, ...]:
        return self.batches[WARMUP_BATCHES:] if self.mode == "streaming" else self.batches

    @property
    def steady_events_per_s(self) -> float | None:
        """Events per second of micro-batch time, warm-up batches and batches without input left out."""
        busy = [b for b in self.steady if b.events > 0]
        ms = sum(b.duration_ms for b in busy)
        return sum(b.events for b in busy) / (ms / 1000) if busy and ms > 0 else None

    @property
    def batch_ms_p50(self) -> float | None:
        return percentile([b.duration_ms for b in self.steady], 0.5) if self.steady else None

    @property
    def batch_ms_p99(self) -> float | None:
        return percentile([b.duration_ms for b in self.steady], 0.99) if self.steady else None

    @property
    def headline_events_per_s(self) -> float | None:
        """The throughput compared across systems: steady state when streaming, the whole job when bounded."""
        return self.steady_events_per_s if self.mode == "streaming" else self.events_per_s


@dataclass(frozen=True)
class LatencyRun:
    """Window results of a wall-clock-paced run: how long after the watermark passed each was written."""

    system: str
    seconds: float
    rate: float
    source: str
    #: Per window row: when it was written minus (window end + watermark delay), in ms.
    samples_ms: tuple[int, ...]

    @property
    def p50_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.5) if self.samples_ms else None

    @property
    def p99_ms(self) -> float | None:
        return percentile(self.samples_ms, 0.99) if self.samples_ms else None


def epoch_ms(value: Any) -> int:
    """Epoch milliseconds of a timestamp collected from Spark.

    PySpark hands timestamps back as naive datetimes in the process's local time zone,
    which ``datetime.timestamp()`` reverses.
    """
    if isinstance(value, dt.datetime):
        return round(value.timestamp() * 1000)
    return int(value)


def arrival_latencies(spark: Any, path: str) -> tuple[int, ...]:
    """Per window row a job wrote as Parquet: how long after the watermark passed the window's end it was written.

    A row reached the sink when its file was written (the file's modification time); the
    watermark passed the window's end at window end + the watermark delay, in event time,
    which these runs take from the wall clock.
    """
    rows = spark.read.parquet(path).select("window_end", "_metadata.file_modification_time").collect()
    return tuple(epoch_ms(r["file_modification_time"]) - (epoch_ms(r["window_end"]) + WATERMARK_DELAY_MS) for r in rows)


def window_counts(rows: Iterable[Mapping[str, Any]]) -> dict[WindowKey, int]:
    """``{(campaign_id, start ms, end ms): count}``; a window seen twice is an error, not a sum."""
    out: dict[WindowKey, int] = {}
    for r in rows:
        key = (r["campaign_id"], epoch_ms(r["window_start"]), epoch_ms(r["window_end"]))
        if key in out:
            raise ValueError(f"window {key} was emitted twice (counts {out[key]} and {r['count']})")
        out[key] = int(r["count"])
    return out


def parquet_windows(spark: Any, path: str) -> dict[WindowKey, int]:
    """The window results a job wrote as Parquet (Spark's file sink reads only committed batches)."""
    return window_counts(r.asDict() for r in spark.read.parquet(path).collect())


def diff_windows(expected: Mapping[WindowKey, int], got: Mapping[WindowKey, int], limit: int = 5) -> list[str]:
    """What differs between two window results, one line each (at most ``limit`` examples per kind)."""
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    wrong = sorted(k for k in set(expected) & set(got) if expected[k] != got[k])
    lines = []
    if missing:
        lines.append(f"{len(missing)} window(s) missing, e.g. {', '.join(_show(k, expected[k]) for k in missing[:limit])}")
    if extra:
        lines.append(f"{len(extra)} unexpected window(s), e.g. {', '.join(_show(k, got[k]) for k in extra[:limit])}")
    if wrong:
        lines.append(
            f"{len(wrong)} window(s) with another count, e.g. "
            + ", ".join(f"{_show(k, got[k])} (expected {expected[k]})" for k in wrong[:limit])
        )
    return lines


def _show(key: WindowKey, count: int) -> str:
    start = dt.datetime.fromtimestamp(key[1] / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{key[0]} @ {start}: {count}"
