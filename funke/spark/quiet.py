"""How the JVM funke starts runs its Python processes: with funke's interpreter, and quietly.

Keep pyspark's worker chatter out of the user's terminal, and nothing else.

PySpark's driver-side worker for ``transformWithStateInPandas`` prints its lifecycle
("Starting Streaming TransformWithStateInPandas Python worker.", "... Completed
execution of UDF ...") with ``print``; the JVM copies a Python worker's output to its own
stderr, and the JVM inherits ours. So funke starts the JVM with its stderr on a pipe that a
thread copies to the real stderr, line by line, leaving out exactly those lines (and the
blank line each ``print(f"...\\n")`` adds), and the traceback pyspark's Python data source
runner prints when Spark stops a streaming query (its socket closed: EOFError, BrokenPipeError).
Everything else, Spark's own errors and a user function's prints among them, passes through unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path

WORKER_CHATTER = re.compile(rb"^(Starting )?Streaming TransformWithStateInPandas Python worker\b")


#: pyspark's runner of a Python streaming data source finds its socket closed when Spark stops the
#: query, as asked, and prints the EOFError and BrokenPipeErrors of that: a traceback about nothing.
_SOURCE_RUNNER = b"python_streaming_source_runner.py"
_CLOSED = (b"EOFError", b"BrokenPipeError", b"ConnectionResetError")


class StderrFilter:
    r"""Line by line: leaves out the lines ``drop`` names (and the blank line after each), and the
    source runner's closed-socket tracebacks; passes everything else, in order.

    >>> f = StderrFilter(lambda line: line.startswith(b"chatter"))
    >>> runner = [b"Traceback (most recent call last):\n", b'  File "x/python_streaming_source_runner.py", line 1\n',
    ...           b"EOFError\n", b"\n", b"During handling of the above exception, another exception occurred:\n",
    ...           b"Traceback (most recent call last):\n", b'  File "socket.py", line 2\n', b"BrokenPipeError: [Errno 32]\n"]
    >>> real = [b"Traceback (most recent call last):\n", b'  File "job.py", line 3\n', b"ValueError: bad\n"]
    >>> lines = [b"chatter\n", b"\n", b"kept\n", *runner, b"after\n", *real]
    >>> [out for line in lines for out in f.feed(line)] + f.end()
    [b'kept\n', b'after\n', b'Traceback (most recent call last):\n', b'  File "job.py", line 3\n', b'ValueError: bad\n']
    """

    def __init__(self, drop: Callable[[bytes], bool]):
        self.drop = drop
        self.held: list[bytes] = []
        self.skipping_blank = False

    def feed(self, line: bytes) -> list[bytes]:
        if self.held:
            if self._continues(line):
                self.held.append(line)
                if self._is_exception(line) and not any(_SOURCE_RUNNER in h for h in self.held):
                    return self.end()  # another traceback: out at once
                return []
            return self.end() + self.feed(line)
        if line.startswith(b"Traceback (most recent call last):"):
            self.held = [line]
            return []
        if self.drop(line):
            self.skipping_blank = True
            return []
        if self.skipping_blank and not line.strip():
            self.skipping_blank = False
            return []
        self.skipping_blank = False
        return [line]

    def end(self) -> list[bytes]:
        """The lines held back (a traceback being read), unless they are the source runner's closed socket."""
        held, self.held = self.held, []
        raised = [h for h in held if self._is_exception(h)]
        if raised and any(_SOURCE_RUNNER in h for h in held) and all(h.startswith(_CLOSED) for h in raised):
            return []
        return held

    def _continues(self, line: bytes) -> bool:
        if not line.strip() or line.startswith((b" ", b"\t", b"During handling", b"The above exception", b"Traceback (most")):
            return True
        return self.held[-1].startswith((b" ", b"\t"))  # the exception line right after the frames

    @staticmethod
    def _is_exception(line: bytes) -> bool:
        return bool(line.strip()) and not line.startswith((b" ", b"\t", b"During handling", b"The above exception", b"Traceback (most"))


def _copy(source: int, target: int, drop: Callable[[bytes], bool]) -> None:
    # Keep reading to the end whatever happens to the target: a pipe nobody drains would
    # block the JVM on its next write to stderr once the pipe's buffer is full.
    writable, lines_filter = True, StderrFilter(drop)
    with os.fdopen(source, "rb") as lines, os.fdopen(target, "wb", buffering=0) as out:
        for line in chain(iter(lines.readline, b""), [None]):  # (None: the end, to release what is held)
            for kept in lines_filter.feed(line) if line is not None else lines_filter.end():
                if writable:
                    try:
                        out.write(kept)
                    except OSError:
                        writable = False


@contextmanager
def python_for_children(home: Path | None = None) -> Iterator[None]:
    """Processes started inside this block see ``PYSPARK_PYTHON`` = this interpreter, unless it is set.

    The JVM reads it for every Python process it starts (workers, Python data source
    planners), where ``spark.pyspark.python`` alone reaches only some. With ``home`` (a JVM on
    this machine), it is this interpreter through :func:`worker_python`, written under ``home``.
    """
    if os.environ.get("PYSPARK_PYTHON"):
        yield
        return
    os.environ["PYSPARK_PYTHON"] = (home and worker_python(home)) or sys.executable
    try:
        yield
    finally:
        os.environ.pop("PYSPARK_PYTHON", None)


def spark_zips() -> list[str]:
    """The zips of pyspark and py4j Spark puts first on its Python processes' path, when they hold the
    very pyspark and py4j this interpreter imports (Spark's home is the installed pyspark package).

    Python compiles a module imported from a zip on every import and caches nothing, so each Python
    process the JVM starts (a Python data source's runner, ``transformWithStateInPandas``'s planner, a
    worker daemon) spent about a second of CPU compiling pyspark again: over a third of what starting a
    streaming query with a Python source and a funke operator cost. The installed package has its
    compiled files cached.
    """
    import py4j.version
    import pyspark
    from pyspark.find_spark_home import _find_spark_home

    package = os.path.dirname(os.path.realpath(pyspark.__file__))
    if os.path.realpath(_find_spark_home()) != package:
        return []  # another Spark's python: its code, kept
    lib = os.path.join(package, "python", "lib")
    zips = [os.path.join(lib, "pyspark.zip"), os.path.join(lib, f"py4j-{py4j.version.__version__}-src.zip")]
    return [z for z in zips if os.path.exists(z)]


def worker_python(home: Path) -> str | None:
    """An executable that runs this interpreter without :func:`spark_zips` on ``PYTHONPATH``; None when
    there are none to leave out or it cannot run there. Written once under ``home`` (its name a hash of
    what it runs)."""
    zips = spark_zips()
    if not zips:
        return None
    cases = "|".join(shlex.quote(z) for z in zips)
    script = (
        "#!/bin/sh\n"
        "# funke: this Python, importing pyspark from its installed package instead of Spark's zips of it\n"
        "set -f\nkept=\nIFS=:\n"
        'for entry in $PYTHONPATH; do\n'
        f'  case "$entry" in {cases}) ;; *) kept="${{kept:+$kept:}}$entry" ;; esac\n'
        "done\nunset IFS\n"
        'if [ -n "$kept" ]; then export PYTHONPATH="$kept"; else unset PYTHONPATH; fi\n'
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )
    path = home / "bin" / f"python-{hashlib.sha256(script.encode()).hexdigest()[:12]}"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(script)
        partial.chmod(0o755)
        try:  # a home on a noexec mount: this interpreter as it is
            subprocess.run([str(partial), "-c", ""], check=True, timeout=60, capture_output=True)
        except (OSError, subprocess.SubprocessError):
            partial.unlink(missing_ok=True)
            return None
        os.replace(partial, path)
    return str(path)


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
