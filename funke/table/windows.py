"""The Table API's group windows (PyFlink's ``Tumble``, ``Slide``, ``Session``), as Flink SQL's window TVFs.

``table.window(Tumble.over(fk.seconds(10)).on("ts").alias("w")).group_by("w", "k").select("k", "w.start",
"COUNT(*) AS n")`` is the query ``SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t,
DESCRIPTOR(ts), INTERVAL '10000' MILLISECOND)) GROUP BY window_start, window_end, k``: the window's
``w.start``, ``w.end`` and ``w.rowtime`` are its ``window_start``, ``window_end`` and ``window_time``.

>>> Slide.over(seconds(60)).every(seconds(10)).on("ts").alias("w").tvf("t", ())
"TABLE(HOP(TABLE t, DESCRIPTOR(`ts`), INTERVAL '10000' MILLISECOND, INTERVAL '60000' MILLISECOND))"
>>> Session.with_gap(seconds(5)).on("ts").alias("s").tvf("t", ("k",))
"TABLE(SESSION(TABLE t PARTITION BY (`k`), DESCRIPTOR(`ts`), INTERVAL '5000' MILLISECOND))"
>>> window_columns("w.start, MAX(w.rowtime) AS last, wide.end", "w")
'window_start, MAX(window_time) AS last, wide.end'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from funke.errors import PlanError
from funke.semantics.time import Duration, seconds, to_millis

__all__ = ["Session", "Slide", "Tumble", "seconds"]


@dataclass(frozen=True)
class GroupWindow:
    """A group window: its kind, sizes (ms), time attribute and alias (set by ``on`` and ``alias``)."""

    kind: str
    sizes: tuple[int, ...]
    time: str | None = None
    name: str | None = None

    def on(self, time: str) -> GroupWindow:
        """The time attribute the window reads (the table's event-time column)."""
        return replace(self, time=time)

    def alias(self, name: str) -> GroupWindow:
        """The window's name in ``group_by`` and ``select`` (``w.start``, ``w.end``, ``w.rowtime``)."""
        return replace(self, name=name)

    def tvf(self, table: str, keys: Sequence[str]) -> str:
        """The window TVF over ``table`` (SESSION partitioned by ``keys``)."""
        if self.time is None or self.name is None:
            raise PlanError(f"a {self.kind} group window needs .on(time column) and .alias(name)")
        sizes = ", ".join(f"INTERVAL '{ms}' MILLISECOND" for ms in self.sizes)
        partition = f" PARTITION BY ({', '.join(f'`{k}`' for k in keys)})" if self.kind == "SESSION" and keys else ""
        return f"TABLE({self.kind}(TABLE {table}{partition}, DESCRIPTOR(`{self.time}`), {sizes}))"


class Tumble:
    @staticmethod
    def over(size: Duration) -> GroupWindow:
        return GroupWindow("TUMBLE", (to_millis(size, what="Tumble size"),))


class _Slide:
    def __init__(self, size: Duration) -> None:
        self.size = to_millis(size, what="Slide size")

    def every(self, slide: Duration) -> GroupWindow:
        return GroupWindow("HOP", (to_millis(slide, what="Slide slide"), self.size))


class Slide:
    @staticmethod
    def over(size: Duration) -> _Slide:
        return _Slide(size)


class Session:
    @staticmethod
    def with_gap(gap: Duration) -> GroupWindow:
        return GroupWindow("SESSION", (to_millis(gap, what="Session gap"),))


_PROPERTIES = {"start": "window_start", "end": "window_end", "rowtime": "window_time"}


def window_columns(expression: str, alias: str) -> str:
    """``expression`` with the window's properties (``alias.start``, ``.end``, ``.rowtime``) as the TVF's columns."""
    return re.sub(rf"\b{re.escape(alias)}\.(start|end|rowtime)\b", lambda m: _PROPERTIES[m.group(1)], expression)
