"""A failed job's error as a user reads it: a user's function that raised comes first.

Spark reports a failure in a Python worker as text: its own wrapping (the query, "An exception
was raised by the Python Proxy", JVM frames) around the worker's Python traceback. When that
traceback ends in funke's ``UserFunctionError`` (``funke.spark.user_errors``), the job's error
starts with its headline (the function, its operator, the exception) and the function's frames,
and Spark's text follows.

>>> spark = '''py4j ... PythonException: Traceback (most recent call last):
...   File "/pyspark/worker.py", line 10, in main
... funke.errors.UserFunctionError: parse in map(parse) (uid map-1) raised ValueError: bad 'x'
... the function's frames (most recent call last):
...   File "/home/me/job.py", line 4, in parse
...     raise ValueError(f"bad {v!r}")
...
... 	at org.apache.spark.api.python.BasePythonRunner...'''
>>> print(failure_message("clicks", "sink 'out'", spark).split("\\n\\n")[0])
job 'clicks' failed: parse in map(parse) (uid map-1) raised ValueError: bad 'x'
the function's frames (most recent call last):
  File "/home/me/job.py", line 4, in parse
    raise ValueError(f"bad {v!r}")
>>> failure_message("clicks", "sink 'out'", "disk full")
"job 'clicks' failed in sink 'out': disk full"
"""

from __future__ import annotations

import re

_MARK = re.compile(r"(?:funke\.errors\.)?UserFunctionError: (.+)")


def user_failure(text: str) -> str | None:
    """The headline and frames of the first ``UserFunctionError`` in Spark's error text, or None."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        found = _MARK.search(line)
        if found is None:
            continue
        out = [found.group(1)]
        for follow in lines[i + 1 :]:
            if not (follow.startswith("the function's frames") or follow.startswith("  ")):
                break
            out.append(follow)
        return "\n".join(out)
    return None


def failure_message(job: str, where: str, error: object) -> str:
    """The message of a job's ``JobFailedError``: a user's function first, when one raised."""
    text = str(error)
    mine = user_failure(text)
    if mine is None:
        return f"job '{job}' failed in {where}: {text}" if where else f"job '{job}' failed: {text}"
    return f"job '{job}' failed: {mine}\n\nSpark's report{' (' + where + ')' if where else ''}:\n{text}"
