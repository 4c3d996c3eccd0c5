"""A job's figures (``JobHandle.metrics``): the steady ones leave each query's warm-up micro-batches out."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

from funke.runtime.job import JobHandle


def query(batch_ms, batch_rows):
    return SimpleNamespace(
        input_rows=sum(batch_rows), output_rows=0, batches=len(batch_ms), watermark=None, late_rows_dropped=0,
        dead_letters=0, restarts=0, batch_ms=deque(batch_ms), batch_rows=deque(batch_rows), history=deque(),
    )  # fmt: skip


def metrics(*states):
    handle = SimpleNamespace(
        name="j", mode="streaming", started=0.0, ended=10.0, states=list(states), resumed=False, restored_from=None
    )
    return JobHandle.metrics(handle)


def test_steady_percentiles_leave_each_query_s_first_two_batches_out():
    # two warm-up batches of 9 s and 7 s per query, then batches of 1-4 s
    m = metrics(query([9_000, 7_000, 1_000, 2_000, 3_000], [10, 10, 10, 10, 0]), query([8_000, 6_000, 4_000], [5, 5, 5]))
    assert (m["steady_batch_ms_p50"], m["steady_batch_ms_p99"]) == (2_000, 4_000)
    assert (m["batch_ms_p50"], m["batch_ms_p99"]) == (6_000, 9_000)  # every batch, as before
    # the steady rate: batches with input after the warm-up ones (1 s, 2 s and 4 s: 25 rows)
    assert m["steady_rows_per_s"] == round(25 / 7)


def test_no_steady_figures_before_a_query_passed_its_warm_up():
    m = metrics(query([9_000, 7_000], [10, 10]))
    assert "steady_batch_ms_p50" not in m and "steady_rows_per_s" not in m
    assert m["batch_ms_p50"] == 9_000
