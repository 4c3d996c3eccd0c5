"""Partitioned file sinks: Flink's partition commit with the ``success-file`` policy.

A partitioned files sink writes each row under ``col=value/...`` directories (Hive's layout, the one
Flink's filesystem connector and Spark's file sink share; a ``:`` in a value is written ``%3A``). A
partition is *committed* by writing an empty success file (``_SUCCESS``) into its directory, so a
reader knows it is complete:

* trigger ``process-time``: once the clock passes the partition's creation (its first file's time)
  plus the delay;
* trigger ``partition-time``: once the watermark passes the partition's time plus the delay; the
  time is read from the partition's values by a pattern (``'$dt $hm:00'``; none: the first value) and
  ``yyyy-MM-dd HH:mm:ss`` (or a date), in UTC, as Flink's default extractor reads it.

funke commits after each micro-batch (Flink at each checkpoint), and every partition at the end of a
bounded input, as Flink does when its input ends. Committing is idempotent: a replayed check writes
nothing new.

>>> c = PartitionCommit("partition-time", delay_ms=60_000, pattern="$dt $hm:00")
>>> c.partition_time({"dt": "2024-01-01", "hm": "10:05"})
1704103500000
>>> c.due({"dt": "2024-01-01", "hm": "10:05"}, created_ms=0, watermark_ms=1704103560000, now_ms=0)
True
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from funke.errors import PlanError

TRIGGERS = ("process-time", "partition-time")
#: The Java ``DateTimeFormatter`` patterns funke reads a partition's time with, as ``strptime``'s.
FORMATTERS = {"yyyy-MM-dd HH:mm:ss": "%Y-%m-%d %H:%M:%S", "yyyy-MM-dd HH:mm": "%Y-%m-%d %H:%M", "yyyy-MM-dd": "%Y-%m-%d",
              "yyyyMMdd": "%Y%m%d", "yyyyMMddHH": "%Y%m%d%H", "yyyy-MM-dd HH": "%Y-%m-%d %H"}  # fmt: skip


@dataclass(frozen=True)
class PartitionCommit:
    """When a partition is committed (the module's docstring), and the success file's name."""

    trigger: str = "process-time"
    delay_ms: int = 0
    #: ``partition.time-extractor.timestamp-pattern``: ``$col`` placeholders; None: the first value.
    pattern: str | None = None
    #: ``partition.time-extractor.timestamp-formatter``; None: ``yyyy-MM-dd HH:mm:ss``, or a date.
    formatter: str | None = None
    success_file: str = "_SUCCESS"

    def __post_init__(self) -> None:
        if self.trigger not in TRIGGERS:
            raise PlanError(f"partition commit trigger must be one of {', '.join(TRIGGERS)}, got {self.trigger!r}")
        if self.formatter is not None and self.formatter not in FORMATTERS:
            raise PlanError(f"partition time formatter {self.formatter!r} is not one funke reads; it reads {', '.join(FORMATTERS)}")
        if self.delay_ms < 0:
            raise PlanError(f"partition commit delay must not be negative, got {self.delay_ms} ms")

    def partition_time(self, values: dict[str, str]) -> int:
        """The partition's time in epoch ms (UTC), from its values."""
        text = next(iter(values.values())) if self.pattern is None else self.pattern
        if self.pattern is not None:
            for name in sorted(values, key=len, reverse=True):  # ($dt before $d)
                text = text.replace(f"${name}", values[name])
        formats = [FORMATTERS[self.formatter]] if self.formatter else ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d"]
        for f in formats:
            try:
                return int(dt.datetime.strptime(text, f).replace(tzinfo=dt.UTC).timestamp() * 1000)
            except ValueError:
                continue
        raise ValueError(f"partition time {text!r} (of {values}) does not read as {self.formatter or 'yyyy-MM-dd HH:mm:ss'}")

    def due(self, values: dict[str, str], *, created_ms: int, watermark_ms: int | None, now_ms: int) -> bool:
        """Whether the partition is committed now."""
        if self.trigger == "process-time":
            return now_ms >= created_ms + self.delay_ms
        return watermark_ms is not None and watermark_ms >= self.partition_time(values) + self.delay_ms


def partitions(root: str | Path, columns: tuple[str, ...]) -> Iterator[tuple[Path, dict[str, str]]]:
    """The partition directories under ``root`` (``col=value`` per column, in order), each with its values."""
    base = Path(str(root).removeprefix("file://"))

    def walk(path: Path, depth: int, values: dict[str, str]) -> Iterator[tuple[Path, dict[str, str]]]:
        if depth == len(columns):
            yield path, values
            return
        prefix = f"{columns[depth]}="
        for child in sorted(path.iterdir()) if path.is_dir() else []:
            if child.is_dir() and child.name.startswith(prefix):
                yield from walk(child, depth + 1, {**values, columns[depth]: unquote(child.name[len(prefix) :])})

    yield from walk(base, 0, {})


def data_files(directory: Path) -> list[Path]:
    """A partition's data files (not Spark's or Flink's hidden ``.``/``_`` files)."""
    return [f for f in directory.iterdir() if f.is_file() and not f.name.startswith((".", "_"))]


def commit(root: str | Path, columns: tuple[str, ...], policy: PartitionCommit, *, watermark_ms: int | None, now_ms: int,
           final: bool = False) -> list[Path]:  # fmt: skip
    """Write the success file of each partition under ``root`` that is due (``final``: every partition,
    the input has ended); the partitions committed by this call."""
    done = []
    for directory, values in partitions(root, columns):
        marker = directory / policy.success_file
        files = data_files(directory)
        if marker.exists() or not files:
            continue
        # (the first file's time: only the clock's trigger reads it)
        created = int(min(f.stat().st_mtime for f in files) * 1000) if policy.trigger == "process-time" else 0
        if final or policy.due(values, created_ms=created, watermark_ms=watermark_ms, now_ms=now_ms):
            marker.touch()
            done.append(directory)
    return done


def local(path: str) -> bool:
    """Whether ``path`` is on this machine's file system (where funke's driver writes success files)."""
    return "://" not in path or path.startswith("file://")
