"""Static lookup tables for ``DataStream.join`` (broadcast to every task)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from funke.connectors.sources import FileSource, collection
from funke.plan.types import Schema


@dataclass(frozen=True, eq=False)
class StaticTable:
    """Rows known when the job starts: a collection, a loader ``spark -> DataFrame``, or files read whole (``files``,
    each column then ``columns``' Spark SQL expression of it where given)."""

    rows: tuple[tuple[Any, ...], ...] | None
    declared: Schema | None
    loader: Callable[[Any], Any] | None = None
    label: str = "table"
    files: FileSource | None = None
    columns: tuple[str, ...] = ()

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


def files_table(spec: FileSource, *, name: str = "table", columns: Iterable[str] = ()) -> StaticTable:
    """A lookup table of the files of ``spec`` (a ``files()`` source), read whole by Spark as the source reads them:
    json and csv by Flink's format rules, a record that breaks them failing the job (Flink's filesystem lookup fails on
    it too; a lookup table has no dead letters). ``columns``: a Spark SQL expression for each column, if any."""
    return StaticTable(None, spec.declared, label=name, files=spec, columns=tuple(columns))
