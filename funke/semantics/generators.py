"""User watermark generators (Flink's ``WatermarkGenerator``), and the run that drives one.

A generator sees every record of its stream in order (``on_event``) and is asked for a
watermark periodically (``on_periodic_emit``); either may call ``output.emit_watermark``.
Flink asks every ``auto_watermark_interval``; funke asks once per micro-batch, after the
batch's records, which is where funke applies a watermark anyway ("each batch's elements,
then the watermark"). The watermark never moves back: a lower one emitted later is ignored.

Flink runs one generator per source split and takes the minimum over the splits; funke
runs one generator per stream, seeing the records in the order Spark reads them (source
partition by source partition, each in its own order).

>>> class Punctuated(WatermarkGenerator):
...     def on_event(self, event, event_timestamp, output):
...         if event["marker"]:
...             output.emit_watermark(Watermark(event_timestamp))
...     def on_periodic_emit(self, output):
...         pass
>>> run = GeneratorRun(Punctuated())
>>> run.run_batch([({"marker": False}, 5_000), ({"marker": True}, 3_000)])
3000
>>> run.run_batch([({"marker": True}, 1_000)])   # lower: ignored
3000
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from funke.errors import UnsupportedError
from funke.semantics.time import MAX_WATERMARK, MIN_WATERMARK, Duration, to_millis


@dataclass(frozen=True)
class Watermark:
    """A watermark at ``timestamp`` (epoch ms): no more records with a timestamp ``<=`` it."""

    timestamp: int

    def get_timestamp(self) -> int:
        return self.timestamp


class WatermarkOutput:
    """What a generator emits into (Flink's ``WatermarkOutput``)."""

    def __init__(self) -> None:
        self.watermark = MIN_WATERMARK

    def emit_watermark(self, watermark: Watermark | int) -> None:
        """Move the watermark to ``watermark`` (a :class:`Watermark` or epoch ms); a lower one is ignored."""
        ts = watermark.get_timestamp() if isinstance(watermark, Watermark) else watermark
        if isinstance(ts, bool) or not isinstance(ts, int):
            raise TypeError(f"emit_watermark() takes a Watermark(epoch ms) or an int, got {watermark!r}")
        self.watermark = max(self.watermark, ts)

    def mark_idle(self) -> None:
        raise UnsupportedError(
            "WatermarkOutput.mark_idle(): funke runs one generator per stream, which cannot go idle on its own; "
            "use WatermarkStrategy.with_idleness(d) on a bounded-out-of-orderness strategy where inputs meet"
        )

    def mark_active(self) -> None:
        self.mark_idle()


class WatermarkGenerator:
    """Flink's ``WatermarkGenerator``: subclass it and override both methods."""

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        """Called for every record (a dict of its columns) with its event time in epoch ms."""

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        """Called once per micro-batch, after the batch's records (Flink: every auto-watermark interval)."""


class WatermarkGeneratorSupplier:
    """Flink's ``WatermarkGeneratorSupplier``: makes a fresh generator. A plain callable does as well."""

    def create_watermark_generator(self, context: Any = None) -> WatermarkGenerator:
        raise NotImplementedError


class BoundedOutOfOrdernessWatermarks(WatermarkGenerator):
    """Flink's built-in: periodically ``max timestamp - bound - 1``; -infinity before any record."""

    def __init__(self, max_out_of_orderness: Duration):
        self.bound = to_millis(max_out_of_orderness, what="max out-of-orderness")
        self.max_timestamp = MIN_WATERMARK + self.bound + 1

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        self.max_timestamp = max(self.max_timestamp, event_timestamp)

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        output.emit_watermark(Watermark(self.max_timestamp - self.bound - 1))


class AscendingTimestampsWatermarks(BoundedOutOfOrdernessWatermarks):
    """Flink's built-in for timestamps that never decrease: ``max timestamp - 1``."""

    def __init__(self) -> None:
        super().__init__(0)


def make_generator(supplier: Any) -> WatermarkGenerator:
    """A fresh generator from ``supplier``: a ``WatermarkGeneratorSupplier`` or a callable without arguments."""
    if isinstance(supplier, WatermarkGeneratorSupplier) or hasattr(supplier, "create_watermark_generator"):
        made = supplier.create_watermark_generator(None)
    else:
        made = supplier()
    if not (callable(getattr(made, "on_event", None)) and callable(getattr(made, "on_periodic_emit", None))):
        raise TypeError(
            f"the watermark generator supplier returned {made!r}, which has no on_event/on_periodic_emit: "
            "return a WatermarkGenerator (subclass funke.WatermarkGenerator)"
        )
    return made


def check_supplier(supplier: Any) -> Any:
    """``for_generator``'s argument, checked: something that makes a generator, not a generator."""
    if not isinstance(supplier, type) and hasattr(supplier, "on_event"):  # an instance, not what makes one
        raise TypeError(
            "for_generator() takes a supplier that makes a generator, not a generator: "
            f"for_generator({type(supplier).__name__}) or for_generator(lambda: {type(supplier).__name__}(...))"
        )
    if not (callable(supplier) or hasattr(supplier, "create_watermark_generator")):
        raise TypeError(
            f"for_generator() takes a WatermarkGeneratorSupplier or a callable that makes a WatermarkGenerator, got {supplier!r}"
        )
    return supplier


class GeneratorRun:
    """One stream's generator and the watermark it has emitted so far (never moving back).

    Pickled whole between micro-batches (the generator's fields are its state).
    """

    def __init__(self, generator: WatermarkGenerator):
        self.generator = generator
        self.output = WatermarkOutput()

    @property
    def watermark(self) -> int:
        return self.output.watermark

    def run_batch(self, events: Iterable[tuple[Any, int]], *, end_of_input: bool = False) -> int:
        """Feed one micro-batch's records in order, then one periodic emit; returns the watermark.

        ``end_of_input``: the stream has ended, the watermark is +infinity (Flink's ``MAX_WATERMARK``).
        """
        for event, ts in events:
            self.generator.on_event(event, ts, self.output)
        self.generator.on_periodic_emit(self.output)
        if end_of_input:
            self.output.watermark = MAX_WATERMARK
        return self.output.watermark
