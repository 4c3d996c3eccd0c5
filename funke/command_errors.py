"""How a funke error ends a command, the same for ``funke ...`` (funke/cli) and ``funke bench ...``
(funke/bench): its message on stderr and exit code 1, no traceback. Here, below both, because the
benchmarks never import the command line.

>>> try:
...     with reported():
...         raise FunkeError("no job 'ysb'")  # prints "error: no job 'ysb'" on stderr
... except typer.Exit as e:
...     e.exit_code
1
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from funke.errors import FunkeError

err = Console(stderr=True)


@contextmanager
def reported() -> Iterator[None]:
    """A funke error ends the command with its message and exit code 1 (no traceback)."""
    try:
        yield
    except FunkeError as e:
        err.print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)  # (escaped: "funke[redis]" is no markup)
        raise typer.Exit(1) from None
