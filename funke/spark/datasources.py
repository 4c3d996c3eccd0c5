"""funke's Python data sources for Spark: replayable by offset, deterministic.

* ``funke_collection``: in-memory rows, ``rows_per_batch`` per micro-batch, then an
  end-of-input row (``__funke_eos``) so the watermark can jump to +infinity.
* ``funke_ticks``: index ranges ``[lo, hi)`` released at a fixed rate; Spark expands them
  into rows natively (``explode(sequence(...))``), so Python never touches a row.
"""

from __future__ import annotations

import base64
import pickle
import time
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

EOS = "__funke_eos"


def encode(obj: Any) -> str:
    return base64.b64encode(pickle.dumps(obj)).decode("ascii")


def decode(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))


class CollectionDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "funke_collection"

    def schema(self) -> str:
        return self.options["schema"]

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _CollectionStream(decode(self.options["batches"]))

    def reader(self, schema: Any) -> DataSourceReader:
        return _CollectionBatch(decode(self.options["batches"]))


class _CollectionStream(DataSourceStreamReader):
    """Offset = number of batches released. The last batch carries the end-of-input row."""

    def __init__(self, batches: list[list[tuple[Any, ...]]]):
        self.batches = batches

    def initialOffset(self) -> dict:
        return {"batch": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        begin = start["batch"] if start else 0
        return {"batch": min(len(self.batches), begin + 1)}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition(b) for b in range(start["batch"], end["batch"])]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        yield from self.batches[partition.value]

    def commit(self, end: dict) -> None:
        pass


class _CollectionBatch(DataSourceReader):
    def __init__(self, batches: list[list[tuple[Any, ...]]]):
        self.batches = batches

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(b) for b in range(len(self.batches))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        yield from self.batches[partition.value]


class TicksDataSource(DataSource):
    """Ranges of row indexes at ``rate`` rows/s up to ``events`` (or forever)."""

    @classmethod
    def name(cls) -> str:
        return "funke_ticks"

    def schema(self) -> str:
        return "lo bigint, hi bigint"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        o = self.options
        return _TicksStream(
            float(o["rate"]),
            int(o["events"]) if o.get("events") not in (None, "", "None") else None,
            int(o["max_per_batch"]),
            int(o.get("parallelism", "2")),
        )


class _TicksStream(DataSourceStreamReader):
    CHUNK = 65_536

    def __init__(self, rate: float, events: int | None, max_per_batch: int, parallelism: int):
        self.rate, self.events, self.max_per_batch, self.parallelism = rate, events, max_per_batch, parallelism
        self.clock_start: tuple[float, int] | None = None

    def initialOffset(self) -> dict:
        return {"i": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        begin = start["i"] if start else 0
        now = time.monotonic()
        if self.clock_start is None:  # also after a restart: pace from where the checkpoint left off
            self.clock_start = (now, begin)
        t0, i0 = self.clock_start
        due = i0 + int((now - t0) * self.rate)
        end = max(begin, min(due, begin + self.max_per_batch))
        if self.events is not None:
            end = min(end, self.events + 1)  # index `events` is the end-of-input marker
        return {"i": end}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        lo, hi = start["i"], end["i"]
        if hi <= lo:
            return []
        step = max(1, -(-(hi - lo) // self.parallelism))
        return [InputPartition((a, min(hi, a + step))) for a in range(lo, hi, step)]

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int]]:
        lo, hi = partition.value
        for a in range(lo, hi, self.CHUNK):
            yield (a, min(hi, a + self.CHUNK))

    def commit(self, end: dict) -> None:
        pass


def register(spark: Any) -> None:
    """Register funke's data sources with a session (idempotent)."""
    if getattr(spark, "_funke_sources_registered", False):
        return
    spark.dataSource.register(CollectionDataSource)
    spark.dataSource.register(TicksDataSource)
    try:
        spark._funke_sources_registered = True
    except AttributeError:  # Spark Connect sessions may refuse attributes
        pass
