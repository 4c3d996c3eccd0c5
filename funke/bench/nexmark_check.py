"""``funke bench nexmark --check``: run Nexmark queries over a few thousand events, streaming and bounded,
and compare each result with its plain-Python reference (``funke.bench.nexmark_reference``).

It runs funke's own formulation, or the unchanged files of a Nexmark checkout (``--queries DIR``): for
each query and mode, whether funke refuses it while planning (and why), runs it to the reference's
result, or runs it to another one (and what differs).

>>> print(table([Checked("q0", "bounded", "equal", "", 920), Checked("q6", "bounded", "refused", "an OVER window", 0)]))
| query | mode | outcome | rows | detail |
|---|---|---|---|---|
| q0 | bounded | equal | 920 |  |
| q6 | bounded | refused | 0 | an OVER window |
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funke.bench.nexmark import Settings, Suite, run_collected

#: Small enough to check in seconds, large enough that every query has rows: 11 s of event time (two
#: 10-second windows) in 11 micro-batches, 44 people, 132 auctions (auction 1107 among them: q2) and 2,024 bids.
CHECK_SETTINGS = Settings(events=2200, tps=200)


@dataclass(frozen=True)
class Checked:
    query: str
    mode: str  # bounded | streaming
    outcome: str  # equal | differs | refused | failed
    detail: str
    rows: int


def check_suite(
    spark: Any,
    suite: Suite,
    queries: tuple[str, ...],
    settings: Settings = CHECK_SETTINGS,
    *,
    modes: tuple[str, ...] = ("bounded", "streaming"),
    on_step: Callable[[str], None] = lambda s: None,
) -> list[Checked]:
    """Each query in each mode as its own job, its result compared with the reference."""
    from funke.bench.nexmark_reference import load_events, problems
    from funke.errors import FunkeError

    events = load_events(spark, settings)
    out = []
    for q in queries:
        for mode in modes:
            on_step(f"{q}, {mode}: {settings.events:,} events")
            root = Path(tempfile.mkdtemp(prefix=f"funke-nexmark-check-{q}-"))
            try:
                got = run_collected(spark, suite, (q,), settings, bounded=mode == "bounded", workdir=root)[q]
            except (FunkeError, TimeoutError) as failed:
                out.append(Checked(q, mode, "failed", _line(str(failed)), 0))
                continue
            finally:
                shutil.rmtree(root, ignore_errors=True)
            if isinstance(got, str):
                out.append(Checked(q, mode, "refused", _line(got), 0))
                continue
            wrong = problems(q, got, events)
            out.append(Checked(q, mode, "differs" if wrong else "equal", _line("; ".join(wrong)), len(got)))
    return out


def _line(text: str, limit: int = 300) -> str:
    first = " ".join(text.split())
    return first if len(first) <= limit else first[: limit - 1] + "…"


def table(results: list[Checked]) -> str:
    """The results as a Markdown table."""
    lines = ["| query | mode | outcome | rows | detail |", "|---|---|---|---|---|"]
    lines += [f"| {r.query} | {r.mode} | {r.outcome} | {r.rows:,} | {r.detail.replace('|', '/')} |" for r in results]
    return "\n".join(lines)
