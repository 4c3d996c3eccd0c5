"""Flink SQL's ``CURRENT_WATERMARK(ts)``: the watermark of the operator that evaluates it when the row
arrives, NULL while there is none. Spark's expressions cannot read a watermark, so a query that uses
it runs one funke operator first (on the general path) that gives each row that watermark in a
column; the query's expressions read the column."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.time import MIN_WATERMARK, millis_to_datetime


class WithWatermark(KeyedProcessFunction):
    """Each row with the current watermark (a timestamp, or None before the first) in ``column``."""

    def __init__(self, column: str) -> None:
        self.column = column

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        wm = ctx.timer_service().current_watermark()
        yield {**value, self.column: None if wm <= MIN_WATERMARK else millis_to_datetime(wm)}
