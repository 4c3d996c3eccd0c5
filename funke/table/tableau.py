"""Flink's printed table (its "tableau" style), as ``TableResult.print()`` and the SQL client draw a result.

>>> print(tableau(["table name"], [["bids"], ["orders"]]))
+------------+
| table name |
+------------+
|       bids |
|     orders |
+------------+
2 rows in set
>>> print(tableau(["k", "note"], [["a", "a longer text"]], widths=[1, 8]))
+---+----------+
| k |     note |
+---+----------+
| a | a lon... |
+---+----------+
1 row in set
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def tableau(names: Sequence[str], rows: Sequence[Sequence[Any]], widths: Sequence[int] | None = None) -> str:
    """``rows`` (each a row's cells) under ``names``: every cell to the right of its column, one longer
    than its column cut with ``...``; then ``N row(s) in set``, or just ``Empty set``. ``widths``: each column's
    (by default as wide as its name and its widest cell, as Flink draws a statement's answer). A cell that is
    not text is written as Flink writes a statement's answer: None empty, a bool ``TRUE`` / ``FALSE``."""
    if not rows:
        return "Empty set"
    rows = [[_text(c) for c in r] for r in rows]
    if widths is None:
        widths = [max(len(name), *(len(r[i]) for r in rows)) for i, name in enumerate(names)]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [border, _line(names, widths), border, *(_line(r, widths) for r in rows), border]
    return "\n".join([*lines, f"{len(rows)} row{'s' if len(rows) != 1 else ''} in set"])


def _text(cell: Any) -> str:
    if cell is None:
        return ""
    if isinstance(cell, bool):
        return "TRUE" if cell else "FALSE"
    return str(cell)


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "| " + " | ".join(c.rjust(w) if len(c) <= w else c[: w - 3] + "..." for c, w in zip(cells, widths, strict=True)) + " |"
