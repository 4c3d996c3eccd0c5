"""Small helpers for Spark tests: epoch-ms rows, a brute-force Flink reference for windows, a running total."""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from funke.functions import KeyedProcessFunction
from funke.semantics.time import timestamp_to_millis
from funke.semantics.windows import EventTimeSessionWindows, TimeWindow, WindowAssigner
from funke.state import ValueStateDescriptor

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


EVERY = 100  # the running total is reported at every 100th element of a key


class RunningTotal(KeyedProcessFunction):
    """A general-path operator with keyed value state: each key's count so far in ``n``."""

    def open(self, ctx: Any) -> None:
        self.n = ctx.get_state(ValueStateDescriptor("n", int))

    def process_element(self, value: dict[str, Any], ctx: Any) -> Any:
        n = (self.n.value() or 0) + 1
        self.n.update(n)
        if n % EVERY == 0:
            yield {"key": ctx.get_current_key(), "n": n}


def wait_for_batches(handle: Any, at_least: int = 1, timeout: float = 180) -> None:
    """Until every query of a running job has committed micro-batch ``at_least`` (its input not read to the end yet)."""
    deadline = time.monotonic() + timeout
    while min(handle.checkpoints.last_committed(st.sink.uid) for st in handle.states if not st.plan.lazy) < at_least:
        assert time.monotonic() < deadline, "the job committed no micro-batch in time"
        assert not handle.done, "the job ended before the savepoint: raise EVENTS or lower RATE"
        time.sleep(0.1)


def settled(handle: Any) -> bool:
    """Spark's own word that a running job has nothing left to do now: every query it started is
    waiting for data (no source has any, no operator asked for another batch) and runs no batch.

    funke's time rows come in the batch that needs them (a watermark funke computes waits for
    the fold of every committed batch; the watermark's first move is read in the commit log), so
    a watermark the last rows moved has reached the operators by then."""
    for st in handle.states:
        if st.query is None:
            continue  # a dead-letter query never needed
        status = st.query.status
        if status["isDataAvailable"] or status["isTriggerActive"]:
            return False
    return True


def wait_settled(handle: Any, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not settled(handle):
        handle.wait(timeout=0.2)
        assert time.monotonic() < deadline, "the job never settled (a micro-batch always due)"


def frozen(value: Any) -> Any:
    """``value`` hashable, to count rows: an ARRAY's list as a tuple, a MAP's dict as a frozenset of its items."""
    if isinstance(value, dict):
        return frozenset((frozen(k), frozen(v)) for k, v in value.items())
    return tuple(frozen(v) for v in value) if isinstance(value, list) else value


def materialize(rows: list[dict[str, Any]], columns: tuple[str, ...], key: tuple[str, ...] | None = None) -> Counter:
    """What a changelog (rows with ``row_kind``) leaves: ``+I``/``+U`` add a row, ``-U``/``-D`` take away one
    equal row held (asserted: never one that is not there); with ``key``, each ``-U`` is followed by a
    ``+U`` of the same key."""
    held: Counter = Counter()
    for i, r in enumerate(rows):
        row = tuple(frozen(r[c]) for c in columns)
        if r["row_kind"] in ("+I", "+U"):
            held[row] += 1
            continue
        assert held[row] > 0, f"{r['row_kind']} of a row not held: {row}"
        held[row] -= 1
        if key is not None and r["row_kind"] == "-U":
            after = rows[i + 1]
            assert after["row_kind"] == "+U" and all(after[k] == r[k] for k in key), (r, after)
    return +held
