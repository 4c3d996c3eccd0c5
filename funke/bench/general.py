"""``funke bench general``: the general path against the native path, in one process and one session.

Runs, in turn over the same generated events (each writing Parquet): YSB on the native
path, YSB with the data Artisans trigger on the general path, and (``--sessions``) the
100 000-user session job. Reports steady events/s, micro-batch p50 / p99 and the ratio
general / native measured in the same run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any


def run_general(events: int, *, sessions: bool = False, warmup: bool = True, on_step: Callable[[str], None] = lambda s: None) -> list[dict[str, Any]]:
    import examples.sessions as sess
    import examples.ysb as ysb

    jobs: list[tuple[str, Callable[..., Any]]] = [("YSB native", ysb.job), ("YSB data Artisans trigger (general)", ysb.trigger_job)]
    if sessions:
        jobs.append(("sessions, 100 k users (general)", sess.job))
    out = []
    root = tempfile.mkdtemp(prefix="funke-bench-general-")
    try:
        if warmup:
            on_step("warm-up: YSB native, 1 M events")
            ysb.job(1_000_000, os.path.join(root, "warmup")).execute().wait()
        for i, (name, make) in enumerate(jobs):
            on_step(f"{name}: {events:,} events")
            env = make(events, os.path.join(root, f"job-{i}"))
            m = env.execute().wait().metrics()
            out.append({"job": name, "load": round(os.getloadavg()[0], 1), **{k: m.get(k) for k in ("steady_rows_per_s", "batch_ms_p50", "batch_ms_p99", "input_rows", "batches")}})
    finally:
        shutil.rmtree(root, ignore_errors=True)
    native = out[0]["steady_rows_per_s"] or 0
    for row in out:
        row["ratio_to_native"] = round((row["steady_rows_per_s"] or 0) / native, 2) if native else None
    return out
