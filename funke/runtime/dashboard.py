"""The job's web dashboard, Flink's web UI in small: one page served by the job's HTTP server.

The page (``static/dashboard.html`` + ``.js`` + ``.css``) polls ``/jobs/<name>`` once a second
and draws what ``details`` returns: the jobs of this funke home that run or ended within the
last hour, the figures, the plan graph fitted to the page's width with each operator's measured
rows/s (or none where nothing counts it), charts of throughput, event-time lag and micro-batch
duration (uPlot, shipped in ``static/`` under its MIT license), the sources' input against
processing rate (backpressure) and how far each is behind, the checkpoint history, the
exceptions, the savepoints with a button to take one, and a link to Spark's own UI when it runs.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import time
from importlib import resources
from typing import Any

from funke.connectors.kafka import KafkaSource
from funke.connectors.kafka_offsets import records_behind
from funke.connectors.redis_streams import RedisStreamSource, entries_behind
from funke.plan import nodes
from funke.runtime import progress as pg
from funke.savepoints.registry import Registry

_MEDIA = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".LICENSE": "text/plain"}
#: Ended jobs the job table still shows (Flink keeps a finished job for an hour by default).
RECENT_S = 3600.0
#: Checkpoints (committed micro-batches) the history shows, newest first.
CHECKPOINTS_SHOWN = 20


def page(job: str) -> str:
    template = resources.files("funke.runtime").joinpath("static/dashboard.html").read_text()
    return template.replace("{{job_html}}", html.escape(job)).replace("{{job_json}}", json.dumps(job).replace("<", "\\u003c"))


def asset(name: str) -> tuple[bytes, str]:
    """A static file by name (no paths: only the files shipped in ``static/``)."""
    folder = resources.files("funke.runtime").joinpath("static")
    shipped = {p.name for p in folder.iterdir() if p.is_file()}
    if name not in shipped:
        raise FileNotFoundError(name)
    suffix = "." + name.rsplit(".", 1)[-1]
    return folder.joinpath(name).read_bytes(), _MEDIA.get(suffix, "application/octet-stream")


def spark_ui(spark: Any) -> str | None:
    """Spark's UI address when it runs (None with ``spark.ui.enabled=false`` or over Spark Connect)."""
    try:
        return spark.sparkContext.uiWebUrl or None
    except Exception:  # noqa: BLE001 (Spark Connect has no SparkContext: no UI link)
        return None


def _utc(epoch_s: float) -> str:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def status(handle: Any) -> str:
    if handle.ended is None:
        return "running"
    if any(e["action"] == "the job failed" for e in getattr(handle, "exceptions", [])):
        return "failed"
    return "finished" if handle.all_finished() else "stopped"


def summary(handle: Any) -> dict[str, Any]:
    return {"name": handle.name, "running": handle.ended is None, "status": status(handle), "metrics": handle.metrics()}


def job_list(handle: Any, now: float | None = None) -> dict[str, Any]:
    """The jobs of this funke home worth a look, as Flink's job overview: this one, every other
    that runs (with its dashboard and Spark UI), and those that ended within ``RECENT_S``,
    marked ended; ``older`` counts the rest (``funke list`` shows every one)."""
    now = now or time.time()
    own = {"name": handle.name, "status": status(handle), "running": handle.ended is None, "this": True,
           "http": handle.http_address, "spark_ui": spark_ui(handle.spark) if handle.ended is None else None}  # fmt: skip
    if not handle.home:
        return {"jobs": [own], "older": 0}
    registry = Registry(handle.home)
    shown, older = [own], 0
    for j in sorted(registry.jobs(), key=lambda j: (not j.alive, -j.updated_at)):  # running first, then the latest ended
        if j.name == handle.name:
            own["started"] = _utc(j.started_at)
            continue
        killed = j.status == "running" and not j.alive
        entry: dict[str, Any] = {"name": j.name, "status": "killed? (its process is gone)" if killed else j.status, "running": j.alive,
                                 "this": False, "started": _utc(j.started_at)}  # fmt: skip
        if j.alive:
            entry.update(http=registry.endpoint(j.name), spark_ui=registry.spark_ui(j.name))
        elif now - j.updated_at <= RECENT_S:
            entry.update(http=None, spark_ui=None, ended=_utc(j.updated_at))
        else:
            older += 1
            continue
        shown.append(entry)
    return {"jobs": shown, "older": older}


def details(handle: Any) -> dict[str, Any]:
    """What the dashboard shows of the job (``GET /jobs/<name>``; the README lists the fields)."""
    now = time.time()
    live = None if handle.ended is not None else now
    taken = Registry(handle.home).savepoints(handle.name) if handle.home else []
    jobs = job_list(handle, now)
    lags = {st.sink.uid: pg.event_time_lags(st.history) for st in handle.states}
    current = [series[-1][1] for series in lags.values() if series]
    return {
        **summary(handle),
        "jobs": jobs["jobs"],
        "older_jobs": jobs["older"],
        "now": now,
        "event_time_lag_s": max(current) if current else None,
        "lag": {
            "label": "largest event time seen minus the watermark (s)",
            "series": {q: s[-pg.HISTORY_BATCHES :] for q, s in lags.items()},
        },
        "plan": handle.plan_text,
        "graph": handle.plan_graph,
        "operators": operators(handle, live),
        "queries": queries(handle, live),
        "sources": sources(handle, live),
        "checkpoints": checkpoints(handle),
        "exceptions": list(reversed(getattr(handle, "exceptions", []))),
        "spark_ui": spark_ui(handle.spark) if handle.ended is None else None,
        "savepoints": [_savepoint_row(s) for s in taken],
    }


def _savepoint_row(s: Any) -> dict[str, Any]:
    return {"path": s.path, "taken": _utc(s.created_at), "batches": s.batches, "size_bytes": s.size_bytes, "took_ms": s.took_ms}


def operators(handle: Any, now: float | None) -> dict[str, dict[str, Any]]:
    """Each plan node's rows/s in and out over its queries' last micro-batches, summed over the
    queries it runs in (each query reads its sources itself); a direction nothing counts in every
    one of them is None: the page shows "not measured", never a neighbour's figure. A Spark query that
    feeds several sinks (a general operator's main and side outputs) is one query, named by its first."""
    per_query, host = {}, {}
    for st in handle.states:
        names = [s.uid for s in st.plan.sinks]
        host.update(dict.fromkeys(names, st.sink.uid))
        if st.history:
            per_query[st.sink.uid] = pg.operator_rates(st.history, handle.plan_graph, names, now)
    out: dict[str, dict[str, Any]] = {}
    for node in handle.plan_graph:
        ran = [q for q in dict.fromkeys(host.get(q, q) for q in node["queries"]) if q in per_query]
        entry: dict[str, Any] = {"queries": {q: per_query[q].get(node["uid"], {}) for q in ran}}
        for direction in ("in", "out"):
            got = [per_query[q].get(node["uid"], {}).get(direction) for q in ran]
            entry[direction] = sum(got) if got and None not in got else None  # type: ignore[arg-type]
        out[node["uid"]] = entry
    return out


def queries(handle: Any, now: float | None) -> list[dict[str, Any]]:
    return [
        {
            "uid": st.sink.uid,
            "batches": st.batches,
            "input_rows": st.input_rows,
            "output_rows": st.output_rows,
            "watermark": st.watermark if pg.watermark_ms(st.watermark) is not None else None,
            "batch_ms": list(st.batch_ms)[-120:],
            "batch_rows": list(st.batch_rows)[-120:],
            "rows_per_s": _round(pg.recent_rate(st.history, now)),
            "processing_rows_per_s": _round(pg.processing_rate(st.history)),
            "busy": _round(pg.busy(st.history, now), 3),
            "state": {op: {"rows": r, "bytes": b} for op, (r, b) in st.state.items()},
        }
        for st in handle.states
    ]


def _round(x: float | None, digits: int = 2) -> float | None:
    return None if x is None else round(x, digits)


def sources(handle: Any, now: float | None) -> list[dict[str, Any]]:
    """Backpressure per query and source: the rows/s it gives over wall time against the rows/s
    the query gets through while it runs micro-batches (the most it could take), the share of
    time the query is busy (near 1: batches run back to back, it cannot take more), and how far
    its last batch ended behind the newest data (Spark's Kafka source says; funke's Kafka and Redis
    sources' servers are asked)."""
    out = []
    for st in handle.states:
        if not st.history:
            continue
        rates = pg.operator_rates(st.history, handle.plan_graph, st.sink.uid, now)
        busy = pg.busy(st.history, now)
        reported = st.history[-1].sources
        found = _plan_sources(st)
        for source in found:
            rate = rates.get(source.uid, {}).get("out")
            behind, unit = _behind(source, reported if len(found) == 1 else [])
            out.append({
                "query": st.sink.uid, "source": source.uid, "label": source.label(),
                "input_rows_per_s": _round(rate), "processing_rows_per_s": _round(rate / busy if rate is not None and busy else None),
                "busy": _round(busy, 3), "behind": behind, "behind_unit": unit,
            })  # fmt: skip
    return out


def _plan_sources(st: Any) -> list[Any]:
    return [x for x in nodes.walk(tuple(st.plan.sinks)) if isinstance(x, nodes.Source)]


def _behind(source: Any, reported: list[pg.SourceRecord]) -> tuple[float | None, str | None]:
    """What Spark's last progress says of the source (its Kafka source: offsets behind the latest in
    the partition furthest behind), or the server's count of what came after the batch's end."""
    for r in reported:
        if r.behind is not None:
            return r.behind, "offsets (partition furthest behind)"
        if isinstance(source.spec, RedisStreamSource):
            entries = entries_behind(source.spec, pg.offset_json(r.end_offset))
            if entries is not None:
                return entries, "entries"
        if isinstance(source.spec, KafkaSource):
            records = records_behind(source.spec, pg.offset_json(r.end_offset))
            if records is not None:
                return records, "records"
    return None, None


def checkpoints(handle: Any) -> list[dict[str, Any]]:
    """Each committed micro-batch (Spark's checkpoint: offset log, state, commit log), newest first."""
    rows = [(st.sink.uid, b) for st in handle.states for b in st.history]
    rows.sort(key=lambda qb: qb[1].end, reverse=True)
    return [
        {
            "query": q,
            "batch": b.batch,
            "time": _utc(b.end),
            "duration_ms": b.duration_ms,
            "checkpoint_ms": b.checkpoint_ms,
            "rows": b.rows,
            "state_rows": b.state_rows,
            "state_bytes": b.state_bytes,
        }
        for q, b in rows[:CHECKPOINTS_SHOWN]
    ]
