"""PyFlink's group windows (``pyflink.table.window``): ``Tumble``, ``Slide`` and ``Session`` over an interval
(``lit(5).seconds``), on a time attribute (``col('ts')``), named (``alias('w')``), as funke's
(``funke.table.windows``). ``Over`` windows are SQL's ``OVER`` aggregations."""

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
    """``Over.partition_by(col('k')).order_by(col('ts')).preceding(row_interval(2)).alias('w')``: SQL's
    ``OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)``, named for
    ``agg.over(col('w'))`` in ``table.over_window(w).select(...)``."""

    @staticmethod
    def partition_by(*partition_by: Any) -> OverWindowPartitioned:
        return OverWindowPartitioned(tuple(_name(p, "Over.partition_by()") for p in partition_by))

    @staticmethod
    def order_by(order_by: Any) -> OverWindowPartitionedOrdered:
        return OverWindowPartitioned(()).order_by(order_by)


class OverWindowPartitioned:
    def __init__(self, partition: tuple[str, ...]) -> None:
        self.partition = partition

    def order_by(self, order_by: Any) -> OverWindowPartitionedOrdered:
        return OverWindowPartitionedOrdered(self.partition, _name(order_by, "Over.order_by()"))


class OverWindowPartitionedOrdered:
    """An Over window being built: ``preceding`` (default ``UNBOUNDED_RANGE``), ``following`` (the current
    row only, as in Flink), ``alias``."""

    def __init__(self, partition: tuple[str, ...], order: str, bound: Any = None) -> None:
        self.partition, self.order, self.bound = partition, order, bound

    def preceding(self, preceding: Any) -> OverWindowPartitionedOrdered:
        from funke.pyflink.table.expressions import Bound

        if not isinstance(preceding, Bound):  # (lit(2).seconds: a RANGE of that interval)
            preceding = Bound("RANGE", _ms(preceding, "Over.preceding()"))
        return OverWindowPartitionedOrdered(self.partition, self.order, preceding)

    def following(self, following: Any) -> OverWindowPartitionedOrdered:
        if getattr(following, "preceding", None) != 0:
            raise UnsupportedError(f"Over.following({following!r}): Flink's Over windows end at the current row (CURRENT_ROW / CURRENT_RANGE)")
        return self

    def alias(self, alias: Any) -> OverWindow:
        return OverWindow(_name(alias, "Over...alias()"), self.partition, self.order, self.bound)


class OverWindow:
    """A named Over window; ``sql()`` is its ``OVER (...)`` specification."""

    def __init__(self, name: str, partition: tuple[str, ...], order: str, bound: Any) -> None:
        self.name, self.partition, self.order, self.bound = name, partition, order, bound

    def sql(self) -> str:
        from funke.pyflink.table.expressions import UNBOUNDED_RANGE, col

        bound = UNBOUNDED_RANGE if self.bound is None else self.bound
        keys = f"PARTITION BY {', '.join(col(p).to_sql(str) for p in self.partition)} " if self.partition else ""
        return f"({keys}ORDER BY {col(self.order).to_sql(str)} {bound.kind} BETWEEN {bound.to_sql(str)} PRECEDING AND CURRENT ROW)"


__all__ = ["GroupWindow", "Over", "OverWindow", "Session", "Slide", "Tumble"]
