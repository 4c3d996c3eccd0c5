"""What one system's benchmark run measured, and the throughput figures derived from it.

Both systems are summarised by the same code: per micro-batch the duration Spark reports
(``triggerExecution``) and the input events it read (:class:`Batch`). Steady state skips the
first ``WARMUP_BATCHES`` micro-batches (JIT, state store and broadcast warm-up). The rest of
a run's measuring has modules of its own: what it cost the machine (memory peaks, CPU, state
on disk: :mod:`funke.bench.resources`), its micro-batches as Spark reports them
(:mod:`funke.bench.progress`), the window rows it wrote (:mod:`funke.bench.window_rows`) and
their latency past the watermark (:mod:`funke.bench.latency`).

>>> run = Run("x", "streaming", 30, 1.0, tuple(Batch(b, 100, 10 if b < 3 else 0) for b in range(4)), {})
>>> run.steady_events_per_s, run.batch_ms_p50, run.events_per_s
(100.0, 100, 30.0)
>>> percentile([5, 1, 4, 2, 3], 0.5), percentile([5, 1, 4, 2, 3], 0.99)
(3, 5)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from funke.bench.reference import WindowKey
from funke.bench.resources import Memory
from funke.runtime.metrics import WARMUP_BATCHES, percentile  # (the job handle's steady figures use them too)

#: What a figure reads when the run was too small to have it; docs/benchmarks.md takes no line that says so.
TOO_SMALL = "too small to measure"


def steady_text(rate: float | None, unit: str = "events/s") -> str:
    """A steady rate, or why a run has none (it needs micro-batches past the first ``WARMUP_BATCHES``).

    >>> steady_text(123456.7), steady_text(None)
    ('123,457 events/s', 'too small to measure (a steady rate needs micro-batches after the first 2: give more --events)')
    """
    if not rate:
        return f"{TOO_SMALL} (a steady rate needs micro-batches after the first {WARMUP_BATCHES}: give more --events)"
    return f"{rate:,.0f} {unit}".rstrip()


def finish_within(env: Any, timeout_s: float, what: str) -> float:
    """Run ``env``'s finite job from a clean checkpoint until it ends; its wall seconds.

    A job still running after ``timeout_s`` is stopped, and ``JobFailedError`` names ``what``."""
    import time

    from funke.errors import JobFailedError

    started = time.monotonic()
    handle = env.execute(fresh=True)
    handle.wait(timeout=timeout_s)
    if not handle.done:
        handle.stop()
        raise JobFailedError(f"{what} did not finish within {timeout_s:.0f} s")
    return time.monotonic() - started


@dataclass(frozen=True)
class Batch:
    batch_id: int
    duration_ms: int
    events: int


@dataclass(frozen=True)
class Run:
    """One system's run of the YSB job over the generated events, and the windows it emitted.

    ``windows`` holds the final result per window; ``early_rows`` the rows written before it
    (early firings, update-mode updates), ``problems`` what was wrong in the output beyond
    the counts (a window fired after its end, a final row missing). ``load`` is the 1-minute
    load average when the run ended.
    """

    system: str
    mode: str
    events: int
    wall_s: float
    batches: tuple[Batch, ...]
    windows: Mapping[WindowKey, int] = field(repr=False)
    late_rows_dropped: int = 0
    early_rows: int | None = None
    problems: tuple[str, ...] = ()
    memory: Memory | None = None
    state_bytes: int | None = None
    load: float | None = None
    #: CPU seconds the run used: this Python process, the JVM and its Python workers.
    #: Unlike wall time it hardly moves when other processes share the cores.
    cpu_s: float | None = None

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
    def events_per_cpu_s(self) -> float | None:
        """Events per CPU second over the whole run: the work per event, whatever else runs on the machine."""
        return self.events / self.cpu_s if self.cpu_s else None

    @property
    def headline_events_per_s(self) -> float | None:
        """The throughput compared across systems: steady state when streaming, the whole job when bounded."""
        return self.steady_events_per_s if self.mode == "streaming" else self.events_per_s
