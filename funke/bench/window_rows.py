"""The window rows a benchmark job wrote, read back and checked.

Rows become ``{(campaign_id, start ms, end ms): count}`` (:func:`window_counts`,
:func:`parquet_windows`); for outputs written per micro-batch, :func:`split_firings` tells each
window's final row from the early firings before it, and :func:`diff_windows` says what differs
from the reference.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from funke.bench.reference import WindowKey


def epoch_ms(value: Any) -> int:
    """Epoch milliseconds of a timestamp collected from Spark.

    PySpark hands timestamps back as naive datetimes in the process's local time zone,
    which ``datetime.timestamp()`` reverses.
    """
    if isinstance(value, dt.datetime):
        return round(value.timestamp() * 1000)
    return int(value)


def window_counts(rows: Iterable[Mapping[str, Any]]) -> dict[WindowKey, int]:
    """``{(campaign_id, start ms, end ms): count}``; a window seen twice is an error, not a sum."""
    out: dict[WindowKey, int] = {}
    for r in rows:
        key = (r["campaign_id"], epoch_ms(r["window_start"]), epoch_ms(r["window_end"]))
        if key in out:
            raise ValueError(f"window {key} was emitted twice (counts {out[key]} and {r['count']})")
        out[key] = int(r["count"])
    return out


def _window_frame(spark: Any, path: str, *extra: str) -> Any:
    """The window rows under ``path`` as pandas, times as epoch ms (Arrow, not a Row per window)."""
    columns = ["campaign_id", "unix_millis(window_start) AS window_start", "unix_millis(window_end) AS window_end", "count"]
    return spark.read.parquet(path).selectExpr(*columns, *extra).toPandas()


def parquet_windows(spark: Any, path: str) -> dict[WindowKey, int]:
    """The window results a job wrote as Parquet, one row per window.

    Spark's file sink leaves a ``_spark_metadata`` log, and the reader then takes only the
    files of committed batches; without it (a ``foreachBatch`` writing plain Parquet, in
    ``batch_id=N`` directories or not) it takes every Parquet file under ``path``.
    """
    return window_counts(_window_frame(spark, path).to_dict("records"))


@dataclass(frozen=True)
class Firings:
    """A window job's output rows split into the final result per window and the rows before it."""

    final: dict[WindowKey, int]
    early_rows: int
    problems: tuple[str, ...] = ()


def batch_window_rows(spark: Any, path: str) -> list[tuple[WindowKey, int, int]]:
    """``(window, batch id, count)`` per row written in ``batch_id=N`` directories (``funke.bench.sinks``)."""
    frame = _window_frame(spark, path, "batch_id")
    keys = zip(frame["campaign_id"], frame["window_start"].astype(int), frame["window_end"].astype(int), strict=True)
    return list(zip(keys, frame["batch_id"].astype(int), frame["count"].astype(int), strict=True))


def split_firings(rows: Iterable[tuple[WindowKey, int, int]], watermarks: Mapping[int, int] | None = None) -> Firings:
    """Tell each window's final row from the rows written before it.

    Without ``watermarks`` (Spark's update mode: a row per changed window per batch) the
    final row is the window's last, and a window written twice in one batch is a problem.

    With ``watermarks`` (batch id → the watermark the batch ran with, epoch ms; a fire-and-purge
    trigger such as ``ysb.DataArtisansTrigger``) the final firing happens in the window's
    *closing batch*, the first whose watermark reached the window's last millisecond. Early
    firings come before it, and may share its batch (processing-time timers run before the
    watermark): all the window's events arrived before the watermark passed its end, so such
    rows equal the final one, which is what is checked. Problems: no row in the closing
    batch, unequal rows there, a row after it (the window was purged), an early row above the
    final count (counts only grow), a window the watermark never closed.

    >>> w = ("campaign-000", 0, 10_000)
    >>> split_firings([(w, 0, 3), (w, 1, 5), (w, 2, 5), (w, 2, 5)], {0: -1, 1: 5_000, 2: 9_999})
    Firings(final={('campaign-000', 0, 10000): 5}, early_rows=3, problems=())
    >>> split_firings([(w, 0, 3), (w, 1, 5)]).final, split_firings([(w, 0, 3), (w, 0, 4)]).problems[0]
    ({('campaign-000', 0, 10000): 5}, 'campaign-000 @ 1970-01-01 00:00:00 written 2 times in batch 0 (counts 3, 4)')
    """
    by_window: dict[WindowKey, list[tuple[int, int]]] = defaultdict(list)
    for key, batch, count in rows:
        by_window[key].append((batch, count))
    ordered = sorted(watermarks.items()) if watermarks is not None else []
    closing_marks = [wm for _, wm in ordered]
    final: dict[WindowKey, int] = {}
    early = 0
    problems: dict[str, list[str]] = defaultdict(list)
    for key, written in by_window.items():
        written.sort()
        if watermarks is None:
            last_batch = written[-1][0]
            in_last = [c for b, c in written if b == last_batch]
            if len(in_last) > 1:
                problems["twice"].append(
                    f"{_where(key)} written {len(in_last)} times in batch {last_batch} (counts {_counts(in_last)})"
                )
            final[key] = written[-1][1]
            early += len(written) - 1
            continue
        at = bisect.bisect_left(closing_marks, key[2] - 1)
        if at == len(ordered):
            problems["open"].append(f"{_where(key)}: no batch's watermark reached its end")
            continue
        closing = ordered[at][0]
        in_closing = [c for b, c in written if b == closing]
        after = [b for b, _ in written if b > closing]
        if after:
            problems["after"].append(f"{_where(key)} written in batch {after[0]}, after its closing batch {closing}")
        if not in_closing:
            problems["missing"].append(f"{_where(key)}: no row in its closing batch {closing}")
            continue
        if len(set(in_closing)) > 1:
            problems["unequal"].append(f"{_where(key)}: rows {_counts(in_closing)} in its closing batch {closing}")
        final[key] = max(in_closing)
        before = [c for b, c in written if b < closing]
        if any(c > final[key] for c in before):
            problems["above"].append(f"{_where(key)}: an early row counts {max(before)}, the final {final[key]}")
        early += len(written) - 1
    lines = tuple(v[0] if len(v) == 1 else f"{len(v)} windows, e.g. {min(v)}" for v in problems.values())
    return Firings(final, early, lines)


def _where(key: WindowKey) -> str:
    start = dt.datetime.fromtimestamp(key[1] / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"{key[0]} @ {start}"


def _counts(counts: Iterable[int]) -> str:
    return ", ".join(str(c) for c in counts)


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
    return f"{_where(key)}: {count}"
