"""How the JVM funke starts runs its Python processes: with funke's interpreter, and quietly.

Keep pyspark's worker chatter out of the user's terminal, and nothing else.

PySpark's driver-side worker for ``transformWithStateInPandas`` prints its lifecycle
("Starting Streaming TransformWithStateInPandas Python worker.", "... Completed
execution of UDF ...") with ``print``; the JVM copies a Python worker's output to its own
stderr, and the JVM inherits ours. So funke starts the JVM with its stderr on a pipe that a
thread copies to the real stderr, line by line, leaving out exactly those lines (and the
blank line each ``print(f"...\\n")`` adds). Everything else, Spark's own errors and a user
function's prints among them, passes through unchanged.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

WORKER_CHATTER = re.compile(rb"^(Starting )?Streaming TransformWithStateInPandas Python worker\b")


def _copy(source: int, target: int, drop: Callable[[bytes], bool]) -> None:
    # Keep reading to the end whatever happens to the target: a pipe nobody drains would
    # block the JVM on its next write to stderr once the pipe's buffer is full.
    skipping_blank, writable = False, True
    with os.fdopen(source, "rb") as lines, os.fdopen(target, "wb", buffering=0) as out:
        for line in iter(lines.readline, b""):
            if drop(line):
                skipping_blank = True
                continue
            if skipping_blank and not line.strip():
                skipping_blank = False
                continue
            skipping_blank = False
            if writable:
                try:
                    out.write(line)
                except OSError:
                    writable = False


@contextmanager
def python_for_children() -> Iterator[None]:
    """Processes started inside this block see ``PYSPARK_PYTHON`` = this interpreter, unless it is set.

    The JVM reads it for every Python process it starts (workers, Python data source
    planners), where ``spark.pyspark.python`` alone reaches only some.
    """
    if os.environ.get("PYSPARK_PYTHON"):
        yield
        return
    os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        yield
    finally:
        os.environ.pop("PYSPARK_PYTHON", None)


@contextmanager
def filtered_stderr_for_children(drop: Callable[[bytes], bool] = lambda line: bool(WORKER_CHATTER.match(line))) -> Iterator[None]:
    """Processes started inside this block write their stderr through ``drop``; ours is restored after."""
    read_end, write_end = os.pipe()
    real = os.dup(2)
    for_thread = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    threading.Thread(target=_copy, args=(read_end, for_thread, drop), name="funke-jvm-stderr", daemon=True).start()
    try:
        yield
    finally:
        # From here only the children hold the pipe; the thread ends when the last of them exits.
        os.dup2(real, 2)
        os.close(real)
