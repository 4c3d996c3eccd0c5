"""The live view's figures, from a real run's progress reports replayed through the job's own
bookkeeping (``QueryState.update``, ``JobHandle.metrics``) into ``funke.cli.live.follow``.

``data/ysb_progress_20k.json`` is what Spark reported for ``examples.ysb:job`` generating
20,000 rows/s (1,500,000 events, operator metrics on), with the compiler's observe points and
the plan graph of that job: the figures below must tell that rate, not the rows that landed
between two refreshes of the screen over the milliseconds between them.
"""

from __future__ import annotations

import io
import json
import re
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from pyspark.sql.streaming.listener import StreamingQueryProgress
from rich.console import Console

from funke.cli.live import follow
from funke.runtime.job import JobHandle, QueryState
from funke.runtime.progress import recent_rate

RECORDED = json.loads((Path(__file__).parent / "data" / "ysb_progress_20k.json").read_text())
QUERY = RECORDED["queries"]["campaign-counts"]
GENERATED_PER_S = 20_000  # the rate the recorded run's generator was asked for


def replayed(upto_batch: int) -> JobHandle:
    """A stopped job whose one query has heard the recorded progress of batches 0..upto_batch."""
    metrics = [SimpleNamespace(**m) for m in QUERY["metrics"]]
    sink = SimpleNamespace(uid="campaign-counts", where=lambda: "sink 'campaign-counts'")
    compiled = SimpleNamespace(clocks=[], beats=[], metrics=metrics, stateful=QUERY["stateful"])
    st = QueryState(plan=SimpleNamespace(compiled=compiled, sinks=[sink], lazy=False))
    for p in QUERY["progress"][: upto_batch + 1]:
        st.update(StreamingQueryProgress.fromJson(p))
    handle = JobHandle("ysb", "streaming", None, [st])
    handle.plan_graph = RECORDED["graph"]
    handle.stop()
    return handle


def shown(handle: JobHandle) -> dict[str, str]:
    """The live view's rows, label -> value, as ``funke run`` draws them."""
    out = io.StringIO()
    follow(handle, Console(file=out, width=100, force_terminal=False))
    return {m.group(1).strip(): m.group(2).strip() for m in re.finditer(r"│\s*([^│]+?)\s*│\s*([^│]*?)\s*│", out.getvalue())}


def _rows_and_wall_time(first: int, last: int) -> tuple[int, float]:
    """Rows the source gave in batches first..last, and the wall time from the first's start to the last's end."""
    batches = QUERY["progress"][first : last + 1]
    rows = sum(p["observedMetrics"]["funke_wm_watermark_e4883032be"]["rows"] for p in batches)
    start = datetime.fromisoformat(batches[0]["timestamp"]).timestamp()
    end = datetime.fromisoformat(batches[-1]["timestamp"]).timestamp() + batches[-1]["durationMs"]["triggerExecution"] / 1000
    return rows, end - start


def test_rows_per_s_now_is_the_last_ten_micro_batches_over_their_wall_time():
    view = shown(replayed(18))
    (label,) = [k for k in view if k.startswith("rows/s (now")]
    now = float(view[label].replace(",", ""))
    rows, seconds = _rows_and_wall_time(9, 18)  # batches 9..18: 365,643 rows in 18.97 s
    expected = rows / seconds
    assert now == round(expected), view
    # the truth it must tell: the generator gave 20,000 rows/s (a one-refresh rate read millions)
    assert 0.9 * GENERATED_PER_S < now < 1.1 * GENERATED_PER_S, view
    assert label == "rows/s (now: last 10 batches)"


def test_the_now_rate_falls_while_no_batch_comes():
    history = replayed(18).states[0].history
    rows, seconds = _rows_and_wall_time(9, 18)
    assert recent_rate(history, now=history[-1].end + 60) == pytest.approx(rows / (seconds + 60))  # a minute without a batch
    assert recent_rate(history, now=history[-1].end - 5) == pytest.approx(rows / seconds)  # never before the last batch's end


def test_no_watermark_yet_shows_as_none_not_epoch_zero():
    # batches 0 and 1: Spark reports 1970-01-01T00:00:00.000Z (no watermark before a batch saw event times)
    handle = replayed(1)
    assert handle.metrics()["watermark"] is None
    assert shown(handle)["watermark"] == "-"
    # batch 2 ran with the first watermark: batch 1's largest event time, 00:00:05.522, less 5 s
    handle = replayed(2)
    assert handle.metrics()["watermark"] == "2024-01-01T00:00:00.522Z"
    assert shown(handle)["watermark"] == "2024-01-01T00:00:00.522Z"
