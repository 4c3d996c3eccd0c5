"""How a ``funke bench`` command is asked to write its figures into docs/benchmarks.md: only with
``--write-docs`` (a run for a look, or one too small to measure, leaves the checkout's docs alone)."""

from __future__ import annotations

from typing import Annotated

import typer

WriteDocs = Annotated[
    bool,
    typer.Option(
        "--write-docs/--no-write",
        help="append the figures to --doc; off by default: the docs take figures of full runs, with the machine stated",
    ),
]
