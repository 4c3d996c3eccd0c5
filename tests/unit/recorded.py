"""A real run's progress reports, replayed through the job's own bookkeeping without Spark.

``data/ysb_progress_20k.json`` is what Spark reported for ``examples.ysb:job`` generating 20,000
rows/s (1,500,000 events, ``FUNKE_OPERATOR_METRICS=true``), with the compiler's observe points
and the job's plan graph, recorded on the project's 2-core machine.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

from pyspark.sql.streaming.listener import StreamingQueryProgress

from funke.connectors.sinks import CollectSink
from funke.runtime.job import JobHandle
from funke.runtime.query_state import QueryState

RECORDED = json.loads((Path(__file__).parent / "data" / "ysb_progress_20k.json").read_text())
QUERY = RECORDED["queries"]["campaign-counts"]
GENERATED_PER_S = 20_000  # the rate the recorded run's generator was asked for
SOURCE_ROWS = "funke_wm_watermark_e4883032be"  # the observe point counting the rows read


def replayed(upto_batch: int, *, without_operator_metrics: bool = False) -> JobHandle:
    """A stopped job whose one query has heard the recorded progress of batches 0..upto_batch
    (``without_operator_metrics``: as if the native operators' observe points were not there)."""
    metrics = [SimpleNamespace(**{"counts": {}, **m}) for m in QUERY["metrics"] if not (without_operator_metrics and m["operator"])]
    sink = SimpleNamespace(uid="campaign-counts", where=lambda: "sink 'campaign-counts'", inputs=(), spec=CollectSink())
    compiled = SimpleNamespace(clocks=[], beats=[], metrics=metrics, stateful=QUERY["stateful"])
    st = QueryState(plan=SimpleNamespace(compiled=compiled, sinks=[sink], lazy=False))
    for p in QUERY["progress"][: upto_batch + 1]:
        st.update(StreamingQueryProgress.fromJson(p))
    handle = JobHandle("ysb", "streaming", None, [st])
    handle.plan_graph = RECORDED["graph"]
    handle.stop()
    return handle


def batches(first: int, last: int) -> list[dict]:
    return QUERY["progress"][first : last + 1]


def wall_time(first: int, last: int) -> float:
    """Seconds from batch ``first``'s start to batch ``last``'s end, as Spark reported them."""
    b = batches(first, last)
    start = datetime.fromisoformat(b[0]["timestamp"]).timestamp()
    return datetime.fromisoformat(b[-1]["timestamp"]).timestamp() + b[-1]["durationMs"]["triggerExecution"] / 1000 - start


def rows(first: int, last: int, metric: str = SOURCE_ROWS, field: str = "rows") -> int:
    return sum(p["observedMetrics"][metric][field] for p in batches(first, last))
