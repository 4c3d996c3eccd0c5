"""The live view's figures, from a real run's progress reports replayed through the job's own
bookkeeping (``QueryState.update``, ``JobHandle.metrics``) into ``funke.cli.live.follow``
(``tests/unit/recorded.py``): they must tell the rate the recorded run's generator gave, not the
rows that landed between two refreshes of the screen over the milliseconds between them.
"""

from __future__ import annotations

import io
import re

import pytest
from pyspark.sql.streaming.listener import StreamingQueryProgress
from rich.console import Console

from funke.cli.live import follow
from funke.runtime.job import JobHandle
from funke.runtime.progress import recent_rate

from .recorded import GENERATED_PER_S, QUERY, replayed, rows, wall_time


def shown(handle: JobHandle) -> dict[str, str]:
    """The live view's rows, label -> value, as ``funke run`` draws them."""
    out = io.StringIO()
    follow(handle, Console(file=out, width=100, force_terminal=False))
    return {m.group(1).strip(): m.group(2).strip() for m in re.finditer(r"│\s*([^│]+?)\s*│\s*([^│]*?)\s*│", out.getvalue())}


def test_rows_per_s_now_is_the_last_ten_micro_batches_over_their_wall_time():
    view = shown(replayed(18))
    (label,) = [k for k in view if k.startswith("rows/s (now")]
    now = float(view[label].replace(",", ""))
    expected = rows(9, 18) / wall_time(9, 18)  # batches 9..18: 365,643 rows in 18.97 s
    assert now == round(expected), view
    # the truth it must tell: the generator gave 20,000 rows/s (a one-refresh rate read millions)
    assert 0.9 * GENERATED_PER_S < now < 1.1 * GENERATED_PER_S, view
    assert label == "rows/s (now: last 10 batches)"


def test_the_now_rate_falls_while_no_batch_comes():
    history = replayed(18).states[0].history
    read, seconds = rows(9, 18), wall_time(9, 18)
    assert recent_rate(history, now=history[-1].end + 60) == pytest.approx(read / (seconds + 60))  # a minute without a batch
    assert recent_rate(history, now=history[-1].end - 5) == pytest.approx(read / seconds)  # never before the last batch's end


def test_no_watermark_yet_shows_as_none_not_epoch_zero():
    # batches 0 and 1: Spark reports 1970-01-01T00:00:00.000Z (no watermark before a batch saw event times)
    handle = replayed(1)
    assert handle.metrics()["watermark"] is None
    assert shown(handle)["watermark"] == "-"
    # batch 2 ran with the first watermark: batch 1's largest event time, 00:00:05.522, less 5 s
    handle = replayed(2)
    assert handle.metrics()["watermark"] == "2024-01-01T00:00:00.522Z"
    assert shown(handle)["watermark"] == "2024-01-01T00:00:00.522Z"


def test_a_batch_replayed_after_a_restart_counts_once():
    handle = replayed(18)
    st = handle.states[0]
    before = recent_rate(st.history)
    for p in QUERY["progress"][17:19]:  # the query restarted from its checkpoint and ran batches 17 and 18 again
        st.update(StreamingQueryProgress.fromJson(p))
    assert [b.batch for b in st.history] == list(range(19))
    assert recent_rate(st.history) == before
