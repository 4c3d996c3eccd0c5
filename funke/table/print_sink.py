"""Flink's ``print`` table connector on funke: each row as Flink prints it, ``+I[1, Germany]`` (the row's
kind, then its fields as Java's ``toString`` writes them: ``null``, ``true``, ``1.5``, ``2021-01-01T10:00``),
after ``identifier> `` when the table names a ``print-identifier``.

Flink also puts the parallel instance before a line (``2> +I[...]``) when the sink runs in parallel; which
instance prints a row is not fixed in Flink either, and funke prints every row from the driver, as Flink
does at parallelism 1. An updating result's rows carry their kinds (``-U``, ``+U``, ``-D``); funke emits a
key's changes once per micro-batch, so where Flink prints every intermediate update of a key, funke prints
fewer (the same table once applied), as Flink's mini-batch aggregation does.

>>> java_text([1, None, 2.5, True, "a"], ("bigint", "int", "double", "boolean", "string"))
'1, null, 2.5, true, a'
>>> moment = dt.datetime(1970, 1, 1, 0, 0, 5)
>>> java_text([moment, moment, moment.replace(microsecond=250000)], ("timestamp", "timestamp_ltz", "timestamp"))
'1970-01-01T00:00:05, 1970-01-01T00:00:05Z, 1970-01-01T00:00:05.250'
>>> java_text([dt.time(12, 34, 56), dt.time(0, 0), dt.time(0, 0, 1, 500000)], ("time(0)", "time(0)", "time(3)"))
'12:34:56, 00:00, 00:00:01.500'
"""

from __future__ import annotations

import datetime as dt
import decimal
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

from funke.connectors.base import BatchSink
from funke.semantics.java_text import java_float
from funke.table.changelog import INSERT, ROW_KIND_NAME


@dataclass(eq=False)
class RowsPrint(BatchSink):
    """Each row of a micro-batch to this process's stdout, Flink's way (see the module's docstring):
    ``columns`` the table's (name, funke type) in order. Printing is a side effect: at-least-once on
    replay, as Flink's print sink."""

    columns: tuple[tuple[str, str], ...] = ()
    identifier: str | None = None

    kind: ClassVar[str] = "print"
    guarantee: ClassVar[str] = "at-least-once"

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        names = [c for c, _ in self.columns]
        types = tuple(t for _, t in self.columns)
        prefix = f"{self.identifier}> " if self.identifier else ""
        out = sys.stdout
        for row in df.collect():
            values = row.asDict()
            kind = values.get(ROW_KIND_NAME, INSERT)
            out.write(f"{prefix}{kind}[{java_text([values.get(n) for n in names], types)}]\n")
        out.flush()

    def describe(self) -> str:
        return f"print({self.identifier or ''})"


def java_text(values: list[Any], types: tuple[str, ...]) -> str:
    """Fields as Flink's ``Row.toString`` joins them: each by Java's ``toString`` of its type."""
    return ", ".join(_java(v, t) for v, t in zip(values, types, strict=True))


def _java_local(value: dt.datetime | dt.time, minutes: str) -> str:
    """Java's ``LocalDateTime``/``LocalTime`` text after ``minutes`` (its text up to the minute): the seconds and
    the fraction (milliseconds, or microseconds where they are not whole) only where they are not zero."""
    text = minutes
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
    if value.microsecond:
        millis, micros = divmod(value.microsecond, 1000)
        text += f".{millis:03d}" if not micros else f".{value.microsecond:06d}"
    return text


def _java(value: Any, spark_type: str) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_float(value, single=spark_type == "float")
    if isinstance(value, dt.datetime) and spark_type == "timestamp_ltz":  # java.time.Instant (UTC): seconds always
        fraction = value.microsecond
        text = f"{value:%Y-%m-%dT%H:%M:%S}"
        if fraction:
            text += f".{fraction // 1000:03d}" if fraction % 1000 == 0 else f".{fraction:06d}"
        return text + "Z"
    if isinstance(value, dt.datetime):  # java.time.LocalDateTime
        return _java_local(value, f"{value:%Y-%m-%dT%H:%M}")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):  # java.time.LocalTime (``00:00``)
        return _java_local(value, f"{value:%H:%M}")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (list, tuple)):
        element = spark_type[6:-1] if spark_type.startswith("array<") else ""
        return "[" + ", ".join(_java(v, element) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_java(k, '')}={_java(v, '')}" for k, v in value.items()) + "}"
    as_dict = getattr(value, "asDict", None)
    if callable(as_dict):  # a ROW field: Flink's nested Row
        return f"{INSERT}[{', '.join(_java(v, '') for v in as_dict().values())}]"
    return str(value)


