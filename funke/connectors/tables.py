"""Static lookup tables for ``DataStream.join`` (broadcast to every task)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from funke.connectors.sources import collection
from funke.plan.types import Schema


@dataclass(frozen=True, eq=False)
class StaticTable:
    """Rows known when the job starts: a collection, or a loader ``spark -> DataFrame``."""

    rows: tuple[tuple[Any, ...], ...] | None
    declared: Schema | None
    loader: Callable[[Any], Any] | None = None
    label: str = "table"

    @property
    def schema(self) -> Schema | None:
        return self.declared

    def describe(self) -> str:
        n = f"{len(self.rows)} rows" if self.rows is not None else "loaded by Spark"
        return f"{self.label}({n})"


def table(rows: Iterable[Any] | Any, schema: str | Schema | None = None, *, name: str = "table") -> StaticTable:
    """A lookup table from rows (tuples with ``schema``, or dicts) or a pandas DataFrame."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # pandas
        rows = rows.to_dict("records")
    c = collection(rows, schema)
    return StaticTable(c.rows, c.declared, label=name)


def spark_table(loader: Callable[[Any], Any], schema: str | Schema | None = None, *, name: str = "table") -> StaticTable:
    """A lookup table Spark loads: ``loader(spark)`` returns a DataFrame (JDBC, Redis, files ...)."""
    return StaticTable(None, Schema.of(schema), loader, label=name)
