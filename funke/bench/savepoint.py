"""``funke bench savepoint`` and ``funke bench state``: what a savepoint of YSB, or reading its
queryable state, costs while it runs at full speed.

YSB (``--campaigns`` campaigns: 100, or 1 M for large window state) runs as a streaming
job writing Parquet; once a few micro-batches have committed, ``JobHandle.savepoint()``
is taken from another thread while the job goes on (Spark keeps running batches; the
savepoint copies the last committed batch's checkpoint and writes the state tables with
Spark's state reader, on the same cores). Reported: the savepoint's time and size, the
state rows it holds, and the stall: how much longer the micro-batches that ran during the
savepoint took than the job's median micro-batch (target: less than one micro-batch).
The job's results are checked against the reference, so a savepoint that disturbed them
fails the bench.
"""

from __future__ import annotations

import dataclasses
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from funke.errors import JobFailedError


def run_savepoint_bench(
    *, campaigns: int, events: int, rows_per_batch: int, spark: Any = None, on_step: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    def savepoint(handle: Any, work: Path) -> dict[str, Any]:
        sp = handle.savepoint(str(work / "savepoints"))
        return {
            "savepoint_ms": sp.manifest["took_ms"],
            "size_bytes": sp.manifest["size_bytes"],
            "state_rows": sum(op.get("rows", 0) for q in sp.manifest["queries"].values() for op in q["operators"]),
            "batch": sp.batches["campaign-counts"],
        }

    r = during_ysb("savepoint", savepoint, campaigns=campaigns, events=events, rows_per_batch=rows_per_batch, spark=spark, on_step=on_step)
    r["savepoint_wall_ms"] = r.pop("wall_ms")
    return r


def run_state_bench(
    *, campaigns: int, events: int, rows_per_batch: int, reads: int = 5, spark: Any = None, on_step: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """Queryable state read while YSB runs: ``reads`` times all keys, then one key's windows."""

    def read_state(handle: Any, work: Path) -> dict[str, Any]:
        view = handle.state("campaign-window")
        times, keys, rows = [], 0, 0
        for _ in range(reads):
            t0 = time.monotonic()
            found = view.keys()
            rows = len(view.get(found[0])) if found else 0
            times.append(round((time.monotonic() - t0) * 1000))
            keys = len(found)
        return {"reads": reads, "read_ms_median": statistics.median(times), "read_ms_max": max(times), "keys": keys, "rows_per_key": rows}

    return during_ysb("state", read_state, campaigns=campaigns, events=events, rows_per_batch=rows_per_batch, spark=spark, on_step=on_step)


def during_ysb(
    what: str,
    action: Callable[[Any, Path], dict[str, Any]],
    *,
    campaigns: int,
    events: int,
    rows_per_batch: int,
    spark: Any = None,
    on_step: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Run ``action(handle, workdir)`` from another thread while YSB runs; its figures, and the stall:
    how much longer the micro-batches that ran meanwhile took than the job's median otherwise."""
    import examples.ysb as ysb
    import funke as fk
    from funke.bench.reference import reference_counts
    from funke.bench.window_rows import diff_windows, parquet_windows
    from funke.bench.ysb import session

    spark = spark or session()
    work = Path(tempfile.mkdtemp(prefix=f"funke-bench-{what}-"))
    try:
        env = fk.StreamEnvironment(app=f"ysb-{what}", spark=spark, checkpoint_dir=str(work / "checkpoint"))
        source = dataclasses.replace(ysb.events(events, campaigns=campaigns), rows_per_batch=rows_per_batch)
        counts = ysb.pipeline(env, source, campaign_table=ysb.campaigns(campaigns))
        counts.sink_to(fk.sinks.files(str(work / "out"), overwrite=True), uid="campaign-counts")
        on_step(f"YSB, {campaigns:,} campaigns: {events:,} events, {rows_per_batch:,} per micro-batch")
        handle = env.execute(name=f"ysb-{what}", fresh=True)
        state = next(s for s in handle.states if s.sink.uid == "campaign-counts")
        while len(state.batch_ms) < 3:  # warm: a few batches committed, window state built up
            if handle.done:
                raise JobFailedError(f"the job ended before the {what}: give it more events")
            time.sleep(0.05)
        on_step(f"{what} while the job runs")
        before = len(state.batch_ms)
        figures: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: figures.update(action(handle, work)))
        started = time.monotonic()
        thread.start()
        thread.join()
        wall_ms = round((time.monotonic() - started) * 1000)
        during = len(state.batch_ms)
        handle.wait()
        durations = list(state.batch_ms)
        overlapping = durations[before : during + 1]  # the batch running when it began, to the one running when it ended
        others = [ms for i, ms in enumerate(durations) if i >= 2 and not before <= i <= during]
        mismatches = diff_windows(reference_counts(events, campaigns=campaigns), parquet_windows(spark, str(work / "out")))
        median = statistics.median(others) if others else None
        return {
            "campaigns": campaigns,
            "events": events,
            "rows_per_batch": rows_per_batch,
            **figures,
            "wall_ms": wall_ms,
            "batches_during": len(overlapping),
            "batch_ms_during_max": max(overlapping) if overlapping else None,
            "batch_ms_median_otherwise": median,
            "stall_ms": (max(overlapping) - median) if overlapping and median is not None else None,
            "results_exact": not mismatches,
            "mismatches": mismatches[:3],
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
