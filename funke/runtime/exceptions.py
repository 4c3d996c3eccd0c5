"""A job's exceptions as its dashboard shows them (Flink's "Exceptions" tab): each failure of
a query, what funke did about it (restarted it from its checkpoint, or failed the job), the
headline a user reads first and the whole trace below it.

>>> e = exception_entry("counts-out", "job 'j' failed in sink 'counts-out': ValueError: bad row\\n  at ...", "Traceback ...", "the job failed")
>>> (e["query"], e["headline"], e["action"])
('counts-out', "job 'j' failed in sink 'counts-out': ValueError: bad row", 'the job failed')
"""

from __future__ import annotations

import time
import traceback
from typing import Any

#: Characters of a trace kept (Spark's Java and Python traces run to tens of kilobytes).
TRACE_CHARS = 20_000
FAILED = "the job failed"


def exception_entry(query: str | None, message: str, cause: Any, action: str) -> dict[str, Any]:
    """``message``: what the user is told (its first line is the headline); ``cause``: the
    exception or Spark's error text behind it, whose trace is kept."""
    if isinstance(cause, BaseException):
        trace = "".join(traceback.format_exception(cause))
    else:
        trace = str(cause)
    trace += _jvm_trace(cause)
    lines = str(message).strip().splitlines() or [""]
    return {"time": time.time(), "query": query, "headline": lines[0], "action": action, "trace": trace[:TRACE_CHARS]}


def _jvm_trace(cause: Any, depth: int = 0) -> str:
    """The JVM's trace of a pyspark captured exception and of its causes, which pyspark keeps apart."""
    jvm = getattr(cause, "_stackTrace", None)
    if not isinstance(jvm, str) or not jvm or depth > 4:
        return ""
    text = f"\nJVM stack trace{' of the cause ' + str(getattr(cause, '_desc', '')) if depth else ''}:\n{jvm}"
    return text + _jvm_trace(getattr(cause, "_cause", None), depth + 1)
