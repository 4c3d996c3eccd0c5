"""The Python function funke's Nexmark q14 calls from SQL (``CREATE TEMPORARY FUNCTION count_char AS
'funke.bench.nexmark_functions.count_char' LANGUAGE PYTHON``), as a Flink user calls a Java one: a
scalar function made with ``udf``, as PyFlink's ``CREATE FUNCTION ... LANGUAGE PYTHON`` takes.

>>> occurrences("cabbage", "a"), occurrences("", "c"), occurrences(None, "c")
(2, 0, 0)
"""

from __future__ import annotations

from funke.table import DataTypes, udf


def occurrences(text: str | None, char: str) -> int:
    """How many times ``char`` (one character) occurs in ``text``; 0 for NULL text."""
    return 0 if text is None else text.count(char)


count_char = udf(occurrences, result_type=DataTypes.BIGINT())
