"""The Python function funke's Nexmark q14 calls from SQL (``CREATE TEMPORARY FUNCTION count_char AS
'funke.bench.nexmark_functions.count_char' LANGUAGE PYTHON``), as a Flink user calls a Java one.

>>> count_char("cabbage", "a"), count_char("", "c"), count_char(None, "c")
(2, 0, 0)
"""

from __future__ import annotations


def count_char(text: str | None, char: str) -> int:
    """How many times ``char`` (one character) occurs in ``text``; 0 for NULL text."""
    return 0 if text is None else text.count(char)
