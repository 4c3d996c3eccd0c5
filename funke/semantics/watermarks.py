"""Watermark strategies (Flink's ``WatermarkStrategy``) and the generator they imply.

Flink's bounded-out-of-orderness generator emits ``max_timestamp - bound - 1``: a
watermark ``W`` says "no more elements with timestamp <= W". A window is complete
when ``W >= window.max_timestamp``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from funke.semantics.time import MIN_WATERMARK, Duration, to_millis

TimestampUnit = Literal["ms", "s"]


@dataclass(frozen=True)
class WatermarkStrategy:
    """How event time is read and how far the watermark trails it.

    >>> from funke.semantics.time import seconds
    >>> s = WatermarkStrategy.for_bounded_out_of_orderness(seconds(5)).with_timestamp_assigner("event_time")
    >>> (s.max_out_of_orderness_ms, s.timestamp_column)
    (5000, 'event_time')
    """

    max_out_of_orderness_ms: int = 0
    timestamp_column: str | None = None
    timestamp_unit: TimestampUnit | None = None
    idleness_ms: int | None = None
    #: Event time is the time a record enters funke (``for_ingestion_time``), stamped into ``timestamp_column``.
    ingestion_time: bool = False
    #: ``for_generator``: what makes the user's ``WatermarkGenerator`` (``funke.semantics.generators``).
    generator: Any = None

    @classmethod
    def for_bounded_out_of_orderness(cls, max_out_of_orderness: Duration) -> WatermarkStrategy:
        ms = to_millis(max_out_of_orderness, what="max out-of-orderness")
        if ms < 0:
            raise ValueError(f"max out-of-orderness must not be negative, got {ms} ms")
        return cls(max_out_of_orderness_ms=ms)

    @classmethod
    def for_monotonous_timestamps(cls) -> WatermarkStrategy:
        return cls(max_out_of_orderness_ms=0)

    @classmethod
    def for_ingestion_time(cls, column: str = "ingestion_time") -> WatermarkStrategy:
        """Ingestion time: each record's event time is the moment it enters funke (on Spark: the
        start of the micro-batch that reads it), written to a new timestamp ``column``; the
        watermark follows it with no delay (those times never decrease).

        >>> WatermarkStrategy.for_ingestion_time().describe()
        'ingestion time into ingestion_time'
        """
        return cls(max_out_of_orderness_ms=0, timestamp_column=column, ingestion_time=True)

    @classmethod
    def for_generator(cls, supplier: Any) -> WatermarkStrategy:
        """The watermark comes from a user ``WatermarkGenerator`` that ``supplier`` makes (a
        ``WatermarkGeneratorSupplier``, a class, or a callable without arguments); name the
        event-time column with ``with_timestamp_assigner``.

        The generator sees every record of the stream in order (``on_event(event, event_timestamp,
        output)``, the event a dict of its columns, the timestamp in epoch ms) and is asked once per
        micro-batch, after the batch's records, where Flink asks every ``auto_watermark_interval``
        (``on_periodic_emit(output)``). ``output.emit_watermark(Watermark(ts))`` moves the watermark;
        a lower one is ignored (the watermark never moves back). The end of a finite stream moves it
        to +infinity. funke runs one generator per stream (Flink: one per source split, the
        minimum over the splits), on Spark as one stateful operator that sees the whole stream,
        and the operators downstream run on funke's general path, which follows the generator's
        watermark in the same micro-batch (Spark's own windows only know Spark's watermark). A
        bounded run ignores watermarks, as Flink's batch mode does: every window fires once at the end.

        >>> from funke.semantics.generators import AscendingTimestampsWatermarks
        >>> WatermarkStrategy.for_generator(AscendingTimestampsWatermarks).with_timestamp_assigner("ts").describe()
        'WatermarkGenerator AscendingTimestampsWatermarks on ts'
        """
        from funke.semantics.generators import check_supplier

        return cls(generator=check_supplier(supplier))

    # Short forms named in the foundation issue.
    bounded_out_of_orderness = for_bounded_out_of_orderness

    def with_timestamp_assigner(self, column: str, unit: TimestampUnit | None = None) -> WatermarkStrategy:
        """Event time is ``column``: a timestamp, or epoch numbers with ``unit="ms"``/``"s"``."""
        if not isinstance(column, str) or not column:
            raise TypeError("with_timestamp_assigner() takes the name of the event-time column")
        if unit not in (None, "ms", "s"):
            raise ValueError(f"timestamp unit must be 'ms' or 's', got {unit!r}")
        return replace(self, timestamp_column=column, timestamp_unit=unit)

    with_timestamp = with_timestamp_assigner

    def with_idleness(self, idleness: Duration) -> WatermarkStrategy:
        return replace(self, idleness_ms=to_millis(idleness, what="idleness"))

    def current_watermark(self, max_timestamp_seen: int | None) -> int:
        """Flink's ``BoundedOutOfOrdernessWatermarks.onPeriodicEmit``."""
        if max_timestamp_seen is None:
            return MIN_WATERMARK
        return max_timestamp_seen - self.max_out_of_orderness_ms - 1

    def describe(self) -> str:
        if self.generator is not None:
            name = getattr(self.generator, "__qualname__", None) or type(self.generator).__qualname__
            return f"WatermarkGenerator {name} on {self.timestamp_column or '?'}" + (f" ({self.timestamp_unit})" if self.timestamp_unit else "")
        if self.ingestion_time:
            return f"ingestion time into {self.timestamp_column}"
        col = self.timestamp_column or "?"
        unit = f" ({self.timestamp_unit})" if self.timestamp_unit else ""
        return f"bounded out-of-orderness {self.max_out_of_orderness_ms} ms on {col}{unit}"
