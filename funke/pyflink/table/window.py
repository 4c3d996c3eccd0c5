"""PyFlink's group windows (``pyflink.table.window``): ``Tumble``, ``Slide`` and ``Session`` over an interval
(``lit(5).seconds``), on a time attribute (``col('ts')``), named (``alias('w')``), as funke's
(``funke.table.windows``). ``Over`` windows are SQL's ``OVER``: refused here, naming it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.table import windows as fk_windows


def _ms(size: Any, what: str) -> int:
    ms = getattr(size, "ms", None)
    if not isinstance(ms, int):
        raise PlanError(f"{what} takes an interval, lit(n).seconds (or .minutes, .hours, .millis), got {size!r}")
    return ms


def _name(e: Any, what: str) -> str:
    name = e if isinstance(e, str) else getattr(e, "name", None)
    if not isinstance(name, str):
        raise PlanError(f"{what} takes a column, col('ts'), got {e!r}")
    return name


class GroupWindow(fk_windows.GroupWindow):
    """funke's group window, whose ``on`` and ``alias`` take PyFlink's expressions (``col('ts')``) too."""

    def on(self, time_field: Any) -> GroupWindow:
        return replace(self, time=_name(time_field, "on()"))

    def alias(self, alias: Any) -> GroupWindow:
        return replace(self, name=_name(alias, "alias()"))


class _Sized:
    def __init__(self, kind: str, size: int) -> None:
        self.kind, self.size = kind, size

    def every(self, slide: Any) -> GroupWindow:
        return GroupWindow(self.kind, (_ms(slide, "Slide.every()"), self.size))  # (HOP: the slide, then the size)


class Tumble:
    @staticmethod
    def over(size: Any) -> GroupWindow:
        return GroupWindow("TUMBLE", (_ms(size, "Tumble.over()"),))


class Slide:
    @staticmethod
    def over(size: Any) -> _Sized:
        return _Sized("HOP", _ms(size, "Slide.over()"))


class Session:
    @staticmethod
    def with_gap(gap: Any) -> GroupWindow:
        return GroupWindow("SESSION", (_ms(gap, "Session.with_gap()"),))


class Over:
    @staticmethod
    def partition_by(*args: Any) -> Any:
        raise UnsupportedError("Over windows of the Table API are not translated by funke: write the OVER aggregation in SQL (sql_query)")

    order_by = partition_by


__all__ = ["GroupWindow", "Over", "Session", "Slide", "Tumble"]
