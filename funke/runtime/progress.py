"""What the job's micro-batches say, batch by batch: the live view's and the dashboard's figures.

Each query progress Spark reports becomes a ``BatchRecord``: when the batch started, how long it
took, the rows funke counted into it (per source and per operator), its state and event time.
From the last few records come the figures that must not mislead:

* ``recent_rate``: rows over the wall time of the last ``RATE_BATCHES`` micro-batches, from the
  start of the first to the end of the last (or to now, while the job runs on without a new
  batch): a rate over time that passed, never rows over the milliseconds between two screen
  refreshes;
* ``operator_flows``: rows into and out of each operator, from the observe metrics funke places
  (sources, funke's own operators, sinks; every native operator with ``operator_metrics``), with
  what follows from them exactly (a source's rows out are its watermark's rows in); an operator
  nothing counts has no figure, not its source's;
* event-time lag: the largest event time seen minus the watermark, the job's own event-time
  progress, never the wall clock (for data from 2024 that would be a year).

>>> r = [BatchRecord(batch=0, start=100.0, duration_ms=2_000, rows=1_000), BatchRecord(batch=1, start=104.0, duration_ms=1_000, rows=4_000)]
>>> recent_rate(r)            # 5,000 rows from 100.0 s to 105.0 s
1000.0
>>> recent_rate(r, now=110.0)  # no batch since 105 s: the rate falls as time passes
500.0
>>> watermark_ms("1970-01-01T00:00:00.000Z") is None   # Spark's "no watermark yet"
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: Micro-batches a "now" rate spans: enough to smooth one slow batch, few enough to be recent.
RATE_BATCHES = 10
#: Micro-batches a query keeps as records (the dashboard's checkpoint history and lag chart).
HISTORY_BATCHES = 120
#: Event times at or past this (epoch ms) are funke's end-of-input marker, not data (9999-12-30).
END_OF_INPUT_MS = 253_402_128_000_000


def iso_ms(text: str | None) -> float | None:
    """An ISO-8601 instant (Spark's progress: ``2024-01-01T00:00:05.060Z``) in epoch milliseconds."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp() * 1000
    except ValueError:
        return None


def watermark_ms(text: str | None) -> float | None:
    """Spark's watermark in epoch ms; None when there is none yet (Spark reports epoch 0 until a
    batch has seen event times) and at end of input (+infinity is no point in time to lag behind).

    >>> watermark_ms("2024-01-01T00:00:27.000Z")
    1704067227000.0
    >>> watermark_ms("9999-12-30T23:59:55.000Z") is None
    True
    """
    ms = iso_ms(text)
    return ms if ms is not None and 0 < ms < END_OF_INPUT_MS else None


def show_watermark(marks: Iterable[str | None]) -> str | None:
    """A job's watermark from its queries' (Spark's, ISO-8601 UTC): the least, the end-of-input
    marker shown as what it means, and None while there is none yet.

    >>> show_watermark(["1970-01-01T00:00:00.000Z", None]) is None
    True
    >>> show_watermark(["9999-12-30T23:59:55.000Z", "2024-01-01T00:00:27.000Z"])
    '2024-01-01T00:00:27.000Z'
    >>> show_watermark(["9999-12-30T23:59:55.000Z"])
    '+inf (end of input)'
    """
    marks = list(marks)
    times = [(ms, w) for w in marks if w and (ms := watermark_ms(w)) is not None]
    if times:
        return min(times)[1]
    return "+inf (end of input)" if any((iso_ms(w) or 0) >= END_OF_INPUT_MS for w in marks) else None


@dataclass
class SourceRecord:
    """One source of one micro-batch, as Spark reports it."""

    description: str
    input_rows: int
    end_offset: Any = None
    #: Offsets (Kafka: records) the source's batch ended behind the latest one Spark saw, where Spark says.
    behind: float | None = None


@dataclass
class BatchRecord:
    """One committed micro-batch of one query."""

    batch: int
    start: float  # epoch seconds (Spark's progress timestamp: the batch's start)
    duration_ms: int
    rows: int  # rows funke counted in from the sources
    checkpoint_ms: int = 0  # offset log + commit log writes
    counts: dict[str, int] = field(default_factory=dict)  # observe point -> rows this batch
    state_rows: int = 0
    state_bytes: int = 0
    max_event_ms: float | None = None  # the largest event time in this batch (end of input left out)
    watermark_ms: float | None = None  # the watermark the batch ran with (None: none yet)
    sources: list[SourceRecord] = field(default_factory=list)

    @property
    def end(self) -> float:
        return self.start + self.duration_ms / 1000


def record(progress: Any, rows: int, counts: Mapping[str, int]) -> BatchRecord:
    """A ``BatchRecord`` of one ``StreamingQueryProgress`` (the listener's or ``recentProgress``'s)."""
    durations = {k: int(v) for k, v in (progress.durationMs or {}).items()}
    event_time = progress.eventTime or {}
    top = iso_ms(event_time.get("max"))
    states = list(progress.stateOperators or [])
    start = iso_ms(progress.timestamp)
    return BatchRecord(
        batch=int(progress.batchId),
        start=(start or 0.0) / 1000,
        duration_ms=durations.get("triggerExecution", 0),
        rows=rows,
        checkpoint_ms=durations.get("walCommit", 0) + durations.get("commitOffsets", 0),
        counts=dict(counts),
        state_rows=sum(int(getattr(s, "numRowsTotal", 0) or 0) for s in states),
        state_bytes=sum(int(getattr(s, "memoryUsedBytes", 0) or 0) for s in states),
        max_event_ms=top if top is not None and top < END_OF_INPUT_MS else None,
        watermark_ms=watermark_ms(event_time.get("watermark")),
        sources=[_source(s) for s in progress.sources or []],
    )


def _source(s: Any) -> SourceRecord:
    metrics = getattr(s, "metrics", None) or {}
    behind = metrics.get("maxOffsetsBehindLatest")  # Spark's Kafka source
    return SourceRecord(
        description=str(getattr(s, "description", "")),
        input_rows=int(getattr(s, "numInputRows", 0) or 0),
        end_offset=getattr(s, "endOffset", None),
        behind=float(behind) if behind not in (None, "") else None,
    )


def _span(records: Sequence[BatchRecord], now: float | None) -> tuple[list[BatchRecord], float]:
    recent = list(records)[-RATE_BATCHES:]
    if not recent:
        return recent, 0.0
    end = max(b.end for b in recent)
    return recent, max(end, now or end) - recent[0].start


def recent_rate(records: Sequence[BatchRecord], now: float | None = None, rows: Any = None) -> float | None:
    """Rows per second of wall time over the last ``RATE_BATCHES`` records: from the first one's
    start to the last one's end, or to ``now`` when that is later (a running job with no batch
    since). ``rows`` picks what a record counts (default: the rows read). None before any batch."""
    recent, span = _span(records, now)
    if not recent or span <= 0:
        return None
    return sum((rows or (lambda b: b.rows))(b) for b in recent) / span


def busy(records: Sequence[BatchRecord], now: float | None = None) -> float | None:
    """The share of the same wall time the query spent running micro-batches (Flink's "busy"):
    near 1, batches run back to back and the query takes in data as fast as it can process it."""
    recent, span = _span(records, now)
    if not recent or span <= 0:
        return None
    return min(1.0, sum(b.duration_ms for b in recent) / 1000 / span)


def processing_rate(records: Sequence[BatchRecord]) -> float | None:
    """Rows per second of micro-batch time over the last ``RATE_BATCHES`` records: what the query
    processes while it runs, the most it could take in."""
    recent = list(records)[-RATE_BATCHES:]
    ms = sum(b.duration_ms for b in recent)
    return sum(b.rows for b in recent) / (ms / 1000) if recent and ms > 0 else None


def event_time_lags(records: Iterable[BatchRecord]) -> list[tuple[float, float]]:
    """(batch start, seconds) per record with a watermark: the largest event time seen up to and
    including the batch, minus the watermark the batch ran with."""
    out, top = [], None
    for b in records:
        if b.max_event_ms is not None:
            top = b.max_event_ms if top is None else max(top, b.max_event_ms)
        if top is not None and b.watermark_ms is not None:
            out.append((b.start, round(max(0.0, top - b.watermark_ms) / 1000, 3)))
    return out


# -- rows per operator --------------------------------------------------------------------------


def operator_flows(
    counts: Mapping[str, int], graph: Sequence[Mapping[str, Any]], query: str | Sequence[str] | None = None
) -> dict[tuple[str, str], int]:
    """Rows into (``in``) and out of (``out``) each operator of one query (named by its sink's uid, or
    by all of its sinks' uids when it feeds several), by uid, from its observe
    points' counts (``funke_src_<uid>``, ``funke_wm_<uid>``, ``funke_out_<uid>``, ``in:<uid>``,
    ``out:<uid>``; uids made safe for Spark's names), and what follows from them exactly:

    * a source's or a watermark's counted rows are what it gives on, a sink's what it was given;
    * a side output's rows in are what its operator sent to its tag (``tag:<uid>:<tag>``), and it gives them all on;
    * an operator's rows in are the sum of its inputs' rows out, when each is known;
    * an operator's rows out are its only consumer's rows in, when that consumer reads only it.

    >>> graph = [{"uid": "src", "kind": "Source", "inputs": [], "queries": ["q"]},
    ...          {"uid": "wm", "kind": "Watermark", "inputs": ["src"], "queries": ["q"]},
    ...          {"uid": "f", "kind": "Filter", "inputs": ["wm"], "queries": ["q"]},
    ...          {"uid": "q", "kind": "Sink", "inputs": ["f"], "queries": ["q"]}]
    >>> sorted(operator_flows({"funke_wm_wm": 90, "funke_out_q": 30}, graph, "q").items())
    [(('f', 'in'), 90), (('f', 'out'), 30), (('q', 'in'), 30), (('q', 'out'), 30), (('src', 'out'), 90), (('wm', 'in'), 90), (('wm', 'out'), 90)]
    """
    from funke.spark.compiled import safe_name as safe  # (pyspark's lazy import: the module imports pyspark)

    wanted = None if query is None else {query} if isinstance(query, str) else set(query)
    nodes = [g for g in graph if wanted is None or wanted.intersection(g.get("queries", wanted))]
    uids = {safe(str(g["uid"])): str(g["uid"]) for g in nodes}
    kinds = {str(g["uid"]): str(g["kind"]) for g in nodes}
    inputs = {str(g["uid"]): [str(i) for i in g["inputs"]] for g in nodes}
    rows: dict[tuple[str, str], int] = {}
    for g in nodes:
        if g["kind"] == "SideOutput" and g.get("tag") is not None and len(g["inputs"]) == 1:
            sent = counts.get(f"tag:{safe(str(g['inputs'][0]))}:{g['tag']}")
            if sent is not None:
                rows[(str(g["uid"]), "in")] = rows[(str(g["uid"]), "out")] = sent
    for name, n in counts.items():
        direction, sep, name_safe = name.partition(":")
        if sep and direction in ("in", "out"):
            rows[(uids.get(name_safe, name_safe), direction)] = n
            continue
        for prefix, direction in (("funke_src_", "in"), ("funke_wm_", "in"), ("funke_out_", "out")):
            if name.startswith(prefix):
                name_safe = name[len(prefix) :]
                rows[(uids.get(name_safe, name_safe), direction)] = n
    for (uid, d), n in list(rows.items()):  # what a source reads (or its watermark passes on) is what it gives;
        if d == "in" and kinds.get(uid) in ("Source", "Watermark"):  # what a sink writes is what it was given
            rows.setdefault((uid, "out"), n)
        if kinds.get(uid) == "Sink":
            rows.setdefault((uid, "in" if d == "out" else "out"), n)
    consumers: dict[str, list[str]] = {}
    for uid, ups in inputs.items():
        for u in ups:
            consumers.setdefault(u, []).append(uid)
    changed = True
    while changed:  # a side output reads its operator's tagged rows, not the main output counted as "out"
        changed = False
        for uid, ups in inputs.items():
            if (uid, "in") not in rows and ups and kinds[uid] != "SideOutput" and all((u, "out") in rows for u in ups):
                rows[(uid, "in")], changed = sum(rows[(u, "out")] for u in ups), True
            if kinds[uid] == "Sink" and (uid, "in") in rows and (uid, "out") not in rows:
                rows[(uid, "out")], changed = rows[(uid, "in")], True
            down = consumers.get(uid, [])
            if (
                (uid, "out") not in rows
                and len(down) == 1
                and inputs[down[0]] == [uid]
                and kinds[down[0]] != "SideOutput"
                and (down[0], "in") in rows
            ):
                rows[(uid, "out")], changed = rows[(down[0], "in")], True
    return rows


def operator_rates(
    records: Sequence[BatchRecord], graph: Sequence[Mapping[str, Any]], query: str | Sequence[str], now: float | None = None
) -> dict[str, dict[str, float]]:
    """Each measured operator's rows/s in and out over the query's last ``RATE_BATCHES`` records
    (the same wall time as ``recent_rate``): uid -> {"in": r, "out": r}, only what is counted."""
    recent, span = _span(records, now)
    if not recent or span <= 0:
        return {}
    summed: dict[str, int] = {}
    for b in recent:
        for k, v in b.counts.items():
            summed[k] = summed.get(k, 0) + v
    out: dict[str, dict[str, float]] = {}
    for (uid, direction), n in operator_flows(summed, graph, query).items():
        out.setdefault(uid, {})[direction] = n / span
    return out


def offset_json(offset: Any) -> Any:
    """A source offset from a progress report (Spark gives JSON text, sometimes already parsed)."""
    if isinstance(offset, str):
        try:
            return json.loads(offset)
        except ValueError:
            return offset
    return offset
