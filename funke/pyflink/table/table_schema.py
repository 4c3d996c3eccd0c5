"""PyFlink's ``TableSchema`` (``Table.get_schema()``, ``TableResult.get_table_schema()``), ``ResolvedSchema``
(``get_resolved_schema()``, what ``Table.print_schema()`` prints) and ``ResultKind``, printed as PyFlink 2.3
prints them. A column's type is a ``DataTypes`` type; a time attribute's marker (``*ROWTIME*``) and a table's
watermark are printed as Flink prints them.

>>> from funke.pyflink.table import DataTypes
>>> schema = TableSchema([Column("a", DataTypes.INT(False)), Column("ts", DataTypes.TIMESTAMP(3), " *ROWTIME*")])
>>> print(schema, end="")
root
 |-- a: INT NOT NULL
 |-- ts: TIMESTAMP(3) *ROWTIME*
>>> print(schema.to_resolved_schema())
(
  `a` INT NOT NULL,
  `ts` TIMESTAMP(3) *ROWTIME*
)
>>> schema.get_field_names(), schema.get_field_data_type("a"), schema.get_field_name(5)
(['a', 'ts'], IntType(false), None)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from funke.table.data_types import DataType, DataTypes, RowType


class ResultKind:
    """What a ``TableResult`` holds (``get_result_kind()``): ``SUCCESS`` for a DDL statement's, else
    ``SUCCESS_WITH_CONTENT`` (a query's rows, a SHOW's, an INSERT's job), numbered as PyFlink numbers them."""

    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1


@dataclass(frozen=True)
class Column:
    """One column of a schema (PyFlink's ``pyflink.table.catalog.Column``): its name, its type, and a time
    attribute's marker (`` *ROWTIME*``); ``str()`` is Flink's summary (`` `ts` TIMESTAMP(3) *ROWTIME*``)."""

    name: str
    data_type: DataType
    marker: str = ""

    def type_text(self) -> str:
        return f"{self.data_type.as_summary_string()}{self.marker}"

    def get_name(self) -> str:
        return self.name

    def get_data_type(self) -> DataType:
        return self.data_type

    def get_comment(self) -> str | None:
        return None  # (funke's tables keep no column comments)

    def is_physical(self) -> bool:
        return True  # (a resolved query's columns are all physical; computed ones are computed by then)

    def is_persisted(self) -> bool:
        return True

    def explain_extras(self) -> str | None:
        return None

    def as_summary_string(self) -> str:
        return f"`{self.name}` {self.type_text()}"

    __str__ = as_summary_string


@dataclass(frozen=True)
class Watermark:
    """A table's ``WATERMARK FOR column AS expression`` (PyFlink's ``WatermarkSpec``; its column's type printed
    with it, as Flink does)."""

    column: str
    type_text: str
    expression: str

    def get_rowtime_attribute(self) -> str:
        return self.column

    def get_watermark_expression(self) -> str:
        return self.expression

    def as_summary_string(self) -> str:
        return f"WATERMARK FOR `{self.column}`: {self.type_text} AS {self.expression}"

    __str__ = as_summary_string


class ConstraintType:
    """PyFlink's ``UniqueConstraint.ConstraintType``: funke's tables have primary keys only."""

    PRIMARY_KEY = "PRIMARY_KEY"


@dataclass(frozen=True)
class UniqueConstraint:
    """A ``CREATE TABLE``'s ``PRIMARY KEY (...) NOT ENFORCED`` (PyFlink's ``pyflink.table.catalog.UniqueConstraint``):
    its name (``CONSTRAINT name``'s, else Flink's ``PK_`` and the columns joined by ``_``) and its columns."""

    name: str
    columns: tuple[str, ...]

    def get_name(self) -> str:
        return self.name

    def get_columns(self) -> list[str]:
        return list(self.columns)

    def get_type(self) -> str:
        return ConstraintType.PRIMARY_KEY

    def get_type_string(self) -> str:
        return "PRIMARY KEY"

    def is_enforced(self) -> bool:
        return False

    def as_summary_string(self) -> str:
        return f"CONSTRAINT `{self.name}` PRIMARY KEY ({', '.join(f'`{c}`' for c in self.columns)}) NOT ENFORCED"


class _Columns:
    def __init__(
        self, columns: Sequence[Column], watermark: Watermark | None = None, primary_key: UniqueConstraint | None = None
    ) -> None:
        self._columns, self._watermark, self._key = tuple(columns), watermark, primary_key

    def _index(self, name_or_index: int | str) -> int | None:
        if isinstance(name_or_index, int):
            return name_or_index if 0 <= name_or_index < len(self._columns) else None
        names = [c.name for c in self._columns]
        return names.index(name_or_index) if name_or_index in names else None

    def _type(self, name_or_index: int | str) -> DataType | None:
        i = self._index(name_or_index)
        return None if i is None else self._columns[i].data_type

    def to_row_data_type(self) -> RowType:
        return DataTypes.ROW([DataTypes.FIELD(c.name, c.data_type) for c in self._columns], nullable=False)

    def _parts(self) -> tuple[Any, ...]:
        return self._columns, self._watermark, self._key

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._parts() == other._parts()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._parts())

    def __repr__(self) -> str:
        return str(self)


class TableSchema(_Columns):
    """PyFlink's ``TableSchema``: the names and ``DataTypes`` of a table's columns; ``str()`` is Flink's tree
    (``root`` and a `` |-- name: TYPE`` line per column)."""

    def get_field_names(self) -> list[str]:
        return [c.name for c in self._columns]

    def get_field_data_types(self) -> list[DataType]:
        return [c.data_type for c in self._columns]

    def get_field_count(self) -> int:
        return len(self._columns)

    def get_field_name(self, field_index: int) -> str | None:
        i = self._index(field_index)
        return None if i is None else self._columns[i].name

    def get_field_data_type(self, field: int | str) -> DataType | None:
        """The type of the column at ``field`` (an index) or named ``field``; None if there is none."""
        return self._type(field)

    def to_resolved_schema(self) -> ResolvedSchema:
        return ResolvedSchema(self._columns, self._watermark, self._key)

    def __str__(self) -> str:
        lines = [f" |-- {c.name}: {c.type_text()}" for c in self._columns]
        if self._watermark is not None:
            w = self._watermark
            lines.append(f" |-- WATERMARK FOR {w.column}: {w.type_text} AS {w.expression}")
        if self._key is not None:
            lines.append(f" |-- CONSTRAINT {self._key.name} PRIMARY KEY ({', '.join(self._key.columns)})")
        return "\n".join(["root", *lines]) + "\n"


class ResolvedSchema(_Columns):
    """PyFlink's ``ResolvedSchema``: a table's columns as the planner resolved them; ``str()`` is Flink's
    (one `` `name` TYPE`` line per column, in parentheses)."""

    def get_column_count(self) -> int:
        return len(self._columns)

    def get_column_names(self) -> list[str]:
        return [c.name for c in self._columns]

    def get_column_data_types(self) -> list[DataType]:
        return [c.data_type for c in self._columns]

    def get_columns(self) -> list[Column]:
        return list(self._columns)

    def get_column(self, column: int | str) -> Column | None:
        """The column at ``column`` (an index) or named ``column``; None if there is none."""
        i = self._index(column)
        return None if i is None else self._columns[i]

    def get_watermark_specs(self) -> list[Watermark]:
        return [] if self._watermark is None else [self._watermark]

    def get_primary_key(self) -> UniqueConstraint | None:
        """A ``CREATE TABLE``'s primary key, on the table ``from_path`` gives (a query's result has none, as in
        Flink's)."""
        return self._key

    def get_primary_key_indexes(self) -> list[int]:
        names = self.get_column_names()
        return [] if self._key is None else [names.index(c) for c in self._key.columns]

    def to_physical_row_data_type(self) -> RowType:
        return self.to_row_data_type()

    def __str__(self) -> str:
        lines = [f"  {c}" for c in self._columns]
        lines += [f"  {w}" for w in self.get_watermark_specs()]
        if self._key is not None:
            lines.append(f"  {self._key.as_summary_string()}")
        return "(\n" + ",\n".join(lines) + "\n)"
