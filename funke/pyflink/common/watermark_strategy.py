"""PyFlink's ``WatermarkStrategy`` and ``TimestampAssigner``.

A PyFlink strategy names how the watermark trails event time (monotonous, bounded out of
orderness, none) and a ``TimestampAssigner`` whose ``extract_timestamp(value, record_timestamp)``
gives each value's event time in epoch milliseconds. funke runs the assigner in the chain of
Python functions before it (as PyFlink does) into a column, and gives funke's own strategy that
column: ``for_bounded_out_of_orderness(d)`` trails the largest event time by ``d`` (Flink's
watermark, ``largest - d - 1``), ``no_watermarks()`` never moves the watermark before the end of
input.
"""

from __future__ import annotations

from typing import Any

from funke.errors import UnsupportedError
from funke.pyflink.common.time import Duration
from funke.semantics.time import to_millis

__all__ = ["TimestampAssigner", "WatermarkStrategy"]


class TimestampAssigner:
    """``extract_timestamp(value, record_timestamp)``: the value's event time in epoch milliseconds."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        raise NotImplementedError(f"{type(self).__name__}.extract_timestamp(value, record_timestamp) is not implemented")


#: A bound so far behind that the watermark only moves at the end of input (``no_watermarks``): 100 years.
NEVER_MS = 100 * 365 * 86_400_000


class WatermarkStrategy:
    """How event time and the watermark are made.

    >>> s = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(2)).with_idleness(Duration.of_seconds(5))
    >>> (s.bound_ms, s.idleness_ms, s.assigner)
    (2000, 5000, None)
    """

    def __init__(self, bound_ms: int, *, assigner: Any = None, idleness_ms: int | None = None, kind: str = "bounded") -> None:
        self.bound_ms, self.assigner, self.idleness_ms, self.kind = bound_ms, assigner, idleness_ms, kind

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy:
        return WatermarkStrategy(0, kind="monotonous")

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> WatermarkStrategy:
        return WatermarkStrategy(to_millis(max_out_of_orderness, what="max_out_of_orderness"))

    @staticmethod
    def no_watermarks() -> WatermarkStrategy:
        return WatermarkStrategy(NEVER_MS, kind="none")

    def with_timestamp_assigner(self, timestamp_assigner: TimestampAssigner) -> WatermarkStrategy:
        if not callable(getattr(timestamp_assigner, "extract_timestamp", None)):
            raise TypeError(f"with_timestamp_assigner() takes a TimestampAssigner (extract_timestamp(value, record_timestamp)), got {timestamp_assigner!r}")
        return WatermarkStrategy(self.bound_ms, assigner=timestamp_assigner, idleness_ms=self.idleness_ms, kind=self.kind)

    def with_idleness(self, idle_timeout: Duration) -> WatermarkStrategy:
        return WatermarkStrategy(self.bound_ms, assigner=self.assigner, idleness_ms=to_millis(idle_timeout, what="idle_timeout"), kind=self.kind)

    def with_watermark_alignment(self, *args: Any, **kwargs: Any) -> WatermarkStrategy:
        raise UnsupportedError(
            "WatermarkStrategy.with_watermark_alignment: funke has no source pausing; a Spark query reads all its sources "
            "in each micro-batch (cap a source's batch instead, e.g. kafka(max_rows_per_batch=...)). Remove the call."
        )

    def to_funke(self, column: str) -> Any:
        """funke's strategy reading event time (epoch ms) from ``column``."""
        from funke.semantics.watermarks import WatermarkStrategy as Funke

        strategy = Funke.for_bounded_out_of_orderness(self.bound_ms).with_timestamp_assigner(column, unit="ms")
        return strategy.with_idleness(self.idleness_ms) if self.idleness_ms is not None else strategy
