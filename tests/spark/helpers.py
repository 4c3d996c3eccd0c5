"""Small helpers for Spark tests: epoch-ms rows, and a brute-force Flink reference for windows."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable

from funke.semantics.time import timestamp_to_millis
from funke.semantics.windows import EventTimeSessionWindows, TimeWindow, WindowAssigner

EPOCH = dt.datetime(1970, 1, 1)


def ts(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def window_rows(rows: Iterable[dict], agg: str = "count") -> Counter:
    """Results as a multiset of (key, start ms, end ms, value)."""
    return Counter(
        (r["k"], timestamp_to_millis(r["window_start"]), timestamp_to_millis(r["window_end"]), r[agg]) for r in rows
    )


def reference_counts(events: list[tuple[str, int]], assigner: WindowAssigner) -> Counter:
    """Flink's result for the default trigger when no element is late: count per key and window."""
    per: Counter = Counter()
    if isinstance(assigner, EventTimeSessionWindows):
        by_key: dict[str, list[int]] = {}
        for k, t in events:
            by_key.setdefault(k, []).append(t)
        for k, times in by_key.items():
            sessions: list[list[int]] = []  # [start, end, count]
            for t in sorted(times):
                w = TimeWindow(t, t + assigner.gap_for(None))
                if sessions and TimeWindow(sessions[-1][0], sessions[-1][1]).intersects(w):
                    sessions[-1][1] = max(sessions[-1][1], w.end)
                    sessions[-1][2] += 1
                else:
                    sessions.append([w.start, w.end, 1])
            for s, e, c in sessions:
                per[(k, s, e, c)] += 1
        return per
    counts: Counter = Counter()
    for k, t in events:
        for w in assigner.assign_windows(t):
            counts[(k, w.start, w.end)] += 1
    for (k, s, e), c in counts.items():
        per[(k, s, e, c)] += 1
    return per
