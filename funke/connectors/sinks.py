"""Sink descriptions: print, collect (tests, examples), files (Spark's exactly-once file sink), blackhole."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from funke.connectors.base import BatchSink, SinkSpec
from funke.connectors.partitions import PartitionCommit, local
from funke.errors import PlanError


@dataclass(eq=False)
class PrintSink(SinkSpec):
    """Rows to the terminal, per micro-batch. Printing is a side effect: at-least-once on replay."""

    limit: int = 20
    kind: ClassVar[str] = "print"
    guarantee: ClassVar[str] = "at-least-once"

    def describe(self) -> str:
        return f"print(limit={self.limit})"


@dataclass(eq=False)
class CollectSink(SinkSpec):
    """Collects result rows into this driver process (tests, small jobs).

    ``rows`` are dicts in emission order; ``batches`` keeps ``(batch_id, rows)``. A batch
    replayed after a restart replaces its earlier rows, so the list holds each once.
    """

    kind: ClassVar[str] = "collect"
    batches: list[tuple[int, list[dict[str, Any]]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_batch(self, batch_id: int, rows: list[dict[str, Any]]) -> None:
        with self._lock:
            self.batches = [b for b in self.batches if b[0] != batch_id]
            self.batches.append((batch_id, rows))

    @property
    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for _, rs in self.batches for r in rs]

    def clear(self) -> None:
        with self._lock:
            self.batches = []

    def describe(self) -> str:
        return "collect()"


@dataclass(eq=False)
class FileSink(SinkSpec):
    """Spark's exactly-once file sink; with ``partition_by``, each row under ``col=value/...`` directories
    (the columns are not in the files), and with ``commit`` a success file in each partition once it
    is committed (``funke.connectors.partitions``)."""

    path: str
    format: str = "parquet"
    overwrite: bool = False
    partition_by: tuple[str, ...] = ()
    commit: PartitionCommit | None = None
    #: json: leave a null field out of its record (Flink's ``json.encode.ignore-null-fields``); by default it is written ``null``.
    ignore_null_fields: bool = False
    #: csv: the field delimiter, the quote character and the text of a NULL (Flink's ``csv.field-delimiter``,
    #: ``csv.quote-character``, ``csv.null-literal``).
    delimiter: str = ","
    quote: str = '"'
    null_literal: str = ""
    kind: ClassVar[str] = "files"

    def __post_init__(self) -> None:
        if self.format not in ("parquet", "json", "csv", "text"):
            raise PlanError(f"files sink format must be parquet, json, csv or text (one string column), got {self.format!r}")
        if self.ignore_null_fields and self.format != "json":
            raise PlanError(f"files sink {self.path}: ignore_null_fields is an option of the json format, not of {self.format}")
        if (self.delimiter, self.quote, self.null_literal) != (",", '"', "") and self.format != "csv":
            raise PlanError(f"files sink {self.path}: delimiter, quote and null_literal are options of the csv format, not of {self.format}")
        for what, char in (("delimiter", self.delimiter), ("quote", self.quote)):
            if len(char) != 1 or char in "\r\n":
                raise PlanError(f"files sink {self.path}: the csv {what} must be one character, not a line break, got {char!r}")
        if self.delimiter == self.quote:
            raise PlanError(f"files sink {self.path}: the csv delimiter and quote must differ, both are {self.quote!r}")
        self.partition_by = tuple(self.partition_by)
        if self.commit is not None and not self.partition_by:
            raise PlanError("files sink: a partition commit needs partition_by columns")
        if self.commit is not None and not local(self.path):
            raise PlanError(f"files sink {self.path}: funke commits partitions (writes their success files) on this machine's file system only")

    def describe(self) -> str:
        parts = f", partitioned by {', '.join(self.partition_by)}" if self.partition_by else ""
        return f"files({self.format}: {self.path}{parts})"


@dataclass(eq=False)
class BlackholeSink(BatchSink):
    """Flink's ``blackhole``: every row is computed (Spark's ``noop`` writer runs the batch whole)
    and none is kept. For benchmarks: the job's cost without a sink's."""

    kind: ClassVar[str] = "blackhole"
    #: Nothing is written, so a replayed batch writes nothing twice.
    guarantee: ClassVar[str] = "exactly-once"

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        df.write.format("noop").mode("overwrite").save()

    def describe(self) -> str:
        return "blackhole()"


def blackhole() -> BlackholeSink:
    return BlackholeSink()


def print_(limit: int = 20) -> PrintSink:
    return PrintSink(limit)


def collect() -> CollectSink:
    return CollectSink()


def files(
    path: str, *, format: str = "parquet", overwrite: bool = False, partition_by: Sequence[str] = (), commit: PartitionCommit | None = None,
    ignore_null_fields: bool = False, delimiter: str = ",", quote: str = '"', null_literal: str = "",
) -> FileSink:  # fmt: skip
    """Spark's exactly-once file sink; ``overwrite=True`` empties the directory of an earlier run first.
    ``partition_by``: columns whose values name directories (``col=value/...``; a NULL is Spark's
    ``__HIVE_DEFAULT_PARTITION__``); ``commit``: when each partition gets its success file. A json
    record holds every field, a null one as ``null`` (as Flink's json format writes it), or with
    ``ignore_null_fields=True`` only the fields that are not null. A csv line is written as Flink's csv
    format writes it, with ``delimiter`` between fields, a text quoted with ``quote`` where Jackson's
    writer quotes it, and a NULL as ``null_literal`` (an empty field by default)."""
    return FileSink(str(path), format, overwrite, tuple(partition_by), commit, ignore_null_fields, delimiter, quote, null_literal)
