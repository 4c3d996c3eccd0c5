"""The live view of a running job (rich): rows/s, micro-batches, watermark, windows emitted.

Every figure comes from the job's own ``metrics()``: "rows/s (now)" is the rows of the last
micro-batches over their wall time (``funke.runtime.progress.recent_rate``), never the rows that
happened to land between two refreshes of the screen divided by the half second between them.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from funke.runtime.progress import RATE_BATCHES


def _table(m: dict[str, Any], stages: str | None) -> Table:
    t = Table(title=f"funke job '{m['job']}' ({m['mode']})", show_header=False, min_width=60)
    t.add_column(style="bold")
    t.add_column(justify="right")
    t.add_row("elapsed", f"{m['elapsed_s']:.1f} s")
    t.add_row("events in", f"{m['input_rows']:,}")
    if m["mode"] == "streaming":
        now = m.get("rows_per_s_now")
        t.add_row(f"rows/s (now: last {RATE_BATCHES} batches)", "-" if now is None else f"{now:,.0f}")
        t.add_row("rows/s (overall)", f"{m['rows_per_s']:,}")
        t.add_row("micro-batches", f"{m['batches']:,}")
        t.add_row("watermark", str(m.get("watermark") or "-"))
        t.add_row("late rows dropped", f"{m['late_rows_dropped']:,}")
    t.add_row("results emitted", f"{m['output_rows']:,}")
    if stages:
        t.add_row("spark", stages)
    return t


def _stage_progress(spark: Any) -> str | None:
    try:
        tracker = spark.sparkContext.statusTracker()
        infos = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
        parts = [f"stage {i.stageId}: {i.numCompletedTasks}/{i.numTasks} tasks" for i in infos if i is not None]
        return ", ".join(parts) or "idle"
    except Exception:  # Spark Connect has no status tracker
        return None


def follow(handle: Any, console: Console | None = None, refresh: float = 0.5) -> dict[str, Any]:
    """Show the job until it ends; Ctrl-C stops it. Returns the final metrics."""
    console = console or Console()
    try:
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            while True:
                done = handle.done
                m = handle.metrics()
                stages = _stage_progress(handle.spark) if m["mode"] == "batch" else None
                live.update(_table(m, stages))
                if done:
                    break
                handle.wait(timeout=refresh)
    except KeyboardInterrupt:
        console.print("[yellow]stopping…[/yellow]")
        handle.stop()
    handle.wait()
    return handle.metrics()
