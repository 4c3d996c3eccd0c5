"""``funke bench pyflink``: the command line of funke/bench/pyflink.py."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Annotated

import typer

from funke.bench.cli_common import DOCS, Doc, append, console, entry, reported, step

SECTION = "PyFlink programs on funke (`funke bench pyflink`)"
INTRO = (
    "Issue 41: the same PyFlink DataStream job (a KeyedProcessFunction and a 10 s tumbling window, funke/bench/pyflink.py) "
    "on real PyFlink (apache-flink 2.3.0, process mode) and on funke (python -m funke.pyflink), and in funke's own API; "
    "each side a script in a fresh process, timed over its execute() (funke's Spark session starts inside it), funke's "
    "two sides the median of --repeat runs taken in turns; every output checked against the window results computed in plain Python. "
    "Targets: funke >= 20x PyFlink; the compatibility layer within 10 % of funke's own API."
)


def bench_pyflink(
    events: Annotated[int, typer.Option(help="events of the job (each side gets the same)")] = 1_000_000,
    keys: Annotated[int, typer.Option(help="keys of the job")] = 1_000,
    pyflink_python: Annotated[str | None, typer.Option(help="Python of a side environment with apache-flink (default: $FUNKE_PYFLINK_PYTHON, /work/venv-pyflink)")] = None,
    examples: Annotated[bool, typer.Option("--examples", help="instead: PyFlink 2.3's own DataStream examples and funke's constructs program on both, outputs compared")] = False,
    own_api: Annotated[bool, typer.Option(help="also run the job in funke's own API (the compatibility layer's cost)")] = True,
    repeat: Annotated[int, typer.Option(help="runs of each funke side, taking turns (their median is kept)")] = 3,
    write: Annotated[bool, typer.Option(help="append the figures to --doc")] = False,
    doc: Doc = DOCS,
) -> None:
    """The same PyFlink job on real PyFlink and on funke, side by side, outputs checked (--examples: PyFlink's own examples)."""
    from funke.bench import pyflink as pb  # (lazy: so the CLI starts fast)

    python = pb.pyflink_python(pyflink_python)
    with reported():
        if examples:
            programs = [(name, pb.examples_dir() / name, []) for name in pb.EXAMPLES]
            constructs = Path(__file__).resolve().parents[2] / "tests" / "pyflink_programs" / "constructs.py"
            if constructs.exists():
                programs.append(("constructs.py (funke's tests)", constructs, []))
            runs = pb.compare_examples(programs, python, on_step=step)
            console.print(pb.examples_summary(runs))
            if any(r.diff for r in runs):
                raise typer.Exit(1)
            return
        load = os.getloadavg()[0]
        line = pb.job_summary(pb.run_job_bench(events, keys, python, own_api=own_api, repeat=repeat, on_step=step))
    console.print(line)
    if write:
        from funke.bench import report
        from funke.bench.ysb import session

        # (the versions and the session's settings, read after the runs: no Spark of this process beside them)
        setup = dataclasses.replace(report.setup(session()), load=load)

        canonical = ["funke", "bench", "pyflink", "--events", str(events), "--keys", str(keys), "--repeat", str(repeat)]
        append(doc, SECTION, [entry(canonical, line, setup)], intro=INTRO)
