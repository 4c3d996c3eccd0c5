"""A script that ends while a job it started still runs says so, on stderr, in one line.

Spark's streaming queries run in the JVM and end with the Python process, so a script whose
last line is ``env.execute()`` exits at once and its job stops unfinished (its output, say
one window's worth, never written). Flink's ``execute()`` blocks; funke's returns a handle
(``wait()``, ``stop()``), so funke tells the user when a script exits before its job is done.
"""

from __future__ import annotations

import atexit
import sys
import threading
from typing import Any, TextIO

_started: list[Any] = []
_lock = threading.Lock()


def started(handle: Any) -> None:
    """Remember a job this process started (its ``JobHandle``), to check on it at exit.

    The jobs that have ended are forgotten here: a handle holds its job's Spark queries and plans, and a process
    that runs job after job (a notebook, a service, the test suite) kept every one of them alive till it exited.
    """
    with _lock:
        if not _started:
            atexit.register(warn_unfinished)
        _started[:] = [h for h in _started if not h.done]
        _started.append(handle)


def unfinished() -> list[Any]:
    """The jobs this process started that are still running (neither finished, failed nor stopped)."""
    with _lock:
        _started[:] = [h for h in _started if not h.done]
        return list(_started)


def message(handle: Any) -> str:
    return (
        f"funke: job '{handle.name}' is still running as this script ends, so it stops unfinished; "
        "call .wait() on the handle execute() returned to let it finish (or .stop() to end it)"
    )


def warn_unfinished(stream: TextIO | None = None) -> None:
    for handle in unfinished():
        print(message(handle), file=stream or sys.stderr, flush=True)
