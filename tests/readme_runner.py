"""Runs README.md's Python blocks for tests/spark/test_readme.py, one after another in this one
process, so that they share one Spark session (a JVM start each would cost most of the test's time).

Each block runs as a script would: a fresh ``__main__`` namespace, its own new working directory,
the funke checkout importable (``examples``). It fails when it raises, and when it ends while a job
it started still runs (as a script it would stop that job unfinished: funke.runtime.at_exit).

``python tests/readme_runner.py HOST PORT`` (the key on stdin) takes blocks from the test
(``{"code", "where", "cwd"}``) and answers each with ``{"ok", "error"}``, until it gets None.
"""

from __future__ import annotations

import os
import sys
import traceback
from multiprocessing.connection import Client
from typing import Any


def run_block(code: str, where: str, cwd: str) -> dict[str, Any]:
    from funke.runtime import at_exit

    os.chdir(cwd)
    sys.path[0] = cwd  # (a script's own directory comes first)
    error = None
    try:
        exec(compile(code, where, "exec"), {"__name__": "__main__", "__file__": where})  # noqa: S102 (the README's code)
    except SystemExit as e:
        if e.code not in (None, 0):
            error = f"SystemExit({e.code!r})"
    except BaseException:  # noqa: BLE001 (reported to the test, with its traceback)
        error = traceback.format_exc()
    left = at_exit.unfinished()
    for handle in left:
        handle.stop()
    if left and error is None:
        error = "\n".join(at_exit.message(h) for h in left)
    return {"ok": error is None, "error": error}


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    key = sys.stdin.buffer.readline().strip()
    with Client((host, port), authkey=key) as conn:
        while (block := conn.recv()) is not None:
            conn.send(run_block(**block))


if __name__ == "__main__":
    main()
