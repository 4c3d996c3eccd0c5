"""PyFlink's ``Schema``, ``TableDescriptor`` and ``FormatDescriptor``: builders of the ``CREATE TABLE``
statement they stand for (funke's SQL then takes or refuses the connector and its options, naming them).

>>> from funke.table.data_types import DataTypes
>>> schema = Schema.new_builder().column("word", DataTypes.STRING()).column("n", DataTypes.BIGINT()).build()
>>> TableDescriptor.for_connector("print").schema(schema).build().create_table_sql("sink")
"CREATE TABLE `sink` (`word` STRING, `n` BIGINT) WITH ('connector' = 'print')"
"""

from __future__ import annotations

from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.table.data_types import DataType
from funke.table.udf import sql_literal


def type_sql(t: Any) -> str:
    if isinstance(t, DataType):
        return t.flink if t.nullable else f"{t.flink} NOT NULL"
    if isinstance(t, str):
        return t
    raise PlanError(f"a Schema column's type is a DataType (DataTypes.BIGINT(), ...) or a SQL type string, got {t!r}")


class Schema:
    """A table's columns (physical and computed), watermark and primary key: ``entries`` as
    ``("column", name, type)``, ``("computed", name, SQL)``, ``("watermark", column, SQL)`` and
    ``("key", columns)``, in the order declared."""

    def __init__(self, entries: tuple[tuple[Any, ...], ...] = ()) -> None:
        self.entries = entries

    @staticmethod
    def new_builder() -> Schema.Builder:
        return Schema.Builder()

    @property
    def _items(self) -> list[str]:
        """The entries as ``CREATE TABLE`` writes them."""
        out = []
        for kind, *rest in self.entries:
            if kind == "column":
                out.append(f"`{rest[0]}` {type_sql(rest[1])}")
            elif kind == "computed":
                out.append(f"`{rest[0]}` AS {rest[1]}")
            elif kind == "watermark":
                out.append(f"WATERMARK FOR `{rest[0]}` AS {rest[1]}")
            else:
                named = f"CONSTRAINT `{rest[1]}` " if len(rest) > 1 else ""
                out.append(f"{named}PRIMARY KEY ({', '.join(f'`{c}`' for c in rest[0])}) NOT ENFORCED")
        return out

    class Builder:
        def __init__(self) -> None:
            self._entries: list[tuple[Any, ...]] = []

        def column(self, column_name: str, data_type: Any) -> Schema.Builder:
            type_sql(data_type)  # (refused now if it is not a type)
            self._entries.append(("column", column_name, data_type))
            return self

        def column_by_expression(self, column_name: str, expr: Any) -> Schema.Builder:
            self._entries.append(("computed", column_name, expr if isinstance(expr, str) else expr.to_sql(str)))
            return self

        def column_by_metadata(self, column_name: str, *args: Any, **kwargs: Any) -> Schema.Builder:
            raise UnsupportedError(f"Schema column_by_metadata({column_name!r}): funke's connectors expose no metadata columns")

        def watermark(self, column_name: str, watermark_expr: Any) -> Schema.Builder:
            text = watermark_expr if isinstance(watermark_expr, str) else watermark_expr.to_sql(str)
            self._entries.append(("watermark", column_name, text))
            return self

        def primary_key(self, *column_names: str) -> Schema.Builder:
            self._entries.append(("key", tuple(column_names)))
            return self

        def primary_key_named(self, constraint_name: str, *column_names: str) -> Schema.Builder:
            self._entries.append(("key", tuple(column_names), constraint_name))
            return self

        def from_schema(self, schema: Schema) -> Schema.Builder:
            self._entries.extend(schema.entries)
            return self

        def build(self) -> Schema:
            return Schema(tuple(self._entries))

    def __repr__(self) -> str:
        return "(" + ", ".join(self._items) + ")"

    def __str__(self) -> str:
        """Flink's text of an unresolved schema: a line per column, then the watermark and the primary key; what
        is not resolved yet (a type string, an expression) in brackets."""
        lines: dict[str, list[str]] = {"column": [], "computed": [], "watermark": [], "key": []}
        for kind, *rest in self.entries:
            if kind == "column":
                t = rest[1]
                text = t.as_summary_string() if isinstance(t, DataType) else f"[{t}]"
                lines[kind].append(f"`{rest[0]}` {text}")
            elif kind == "computed":
                lines["column"].append(f"`{rest[0]}` AS [{rest[1]}]")
            elif kind == "watermark":
                lines[kind].append(f"WATERMARK FOR `{rest[0]}` AS [{rest[1]}]")
            else:
                name = rest[1] if len(rest) > 1 else "PK_" + "_".join(rest[0])
                lines[kind].append(f"CONSTRAINT `{name}` PRIMARY KEY ({', '.join(f'`{c}`' for c in rest[0])}) NOT ENFORCED")
        return "(\n" + ",\n".join(f"  {x}" for x in (*lines["column"], *lines["watermark"], *lines["key"])) + "\n)"


class FormatDescriptor:
    """A format and its options: ``FormatDescriptor.for_format('csv').option('field-delimiter', ';').build()``."""

    def __init__(self, format: str, options: dict[str, str] | None = None) -> None:
        self._format, self._options = format, dict(options or {})

    @staticmethod
    def for_format(format: str) -> FormatDescriptor.Builder:
        return FormatDescriptor.Builder(format)

    class Builder:
        def __init__(self, format: str) -> None:
            self._format, self._options = format, {}

        def option(self, key: str, value: Any) -> FormatDescriptor.Builder:
            self._options[key] = str(value)
            return self

        def build(self) -> FormatDescriptor:
            return FormatDescriptor(self._format, self._options)


class TableDescriptor:
    """A connector table: ``TableDescriptor.for_connector('print').schema(...).option(k, v).format(...).build()``."""

    def __init__(self, connector: str, schema: Schema | None, options: dict[str, str], partition_keys: tuple[str, ...] = ()) -> None:
        self._connector, self._schema, self._options, self._partition_keys = connector, schema, options, partition_keys

    @staticmethod
    def for_connector(connector: str) -> TableDescriptor.Builder:
        return TableDescriptor.Builder(connector)

    class Builder:
        def __init__(self, connector: str) -> None:
            self._connector, self._schema, self._options = connector, None, {}
            self._partition_keys: tuple[str, ...] = ()

        def schema(self, schema: Schema) -> TableDescriptor.Builder:
            if not isinstance(schema, Schema):
                raise PlanError(f"schema() takes a Schema (Schema.new_builder()...build()), got {type(schema).__name__}")
            self._schema = schema
            return self

        def option(self, key: str, value: Any) -> TableDescriptor.Builder:
            self._options[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
            return self

        def format(self, format: str | FormatDescriptor, format_option: Any = None) -> TableDescriptor.Builder:
            if format_option is not None:
                raise UnsupportedError("format(..., format_option): funke's connectors take one format, the 'format' option")
            described = format if isinstance(format, FormatDescriptor) else FormatDescriptor(str(format))
            self._options["format"] = described._format
            for key, value in described._options.items():
                self._options[f"{described._format}.{key}"] = value
            return self

        def partitioned_by(self, *partition_keys: str) -> TableDescriptor.Builder:
            self._partition_keys = tuple(partition_keys)
            return self

        def comment(self, comment: str) -> TableDescriptor.Builder:
            return self

        def build(self) -> TableDescriptor:
            return TableDescriptor(self._connector, self._schema, dict(self._options), self._partition_keys)

    def create_table_sql(self, name: str) -> str:
        """The ``CREATE TABLE name ...`` statement this descriptor stands for."""
        if self._schema is None or not self._schema._items:
            raise PlanError(f"table {name}: funke needs the descriptor's schema (TableDescriptor...schema(Schema...build()))")
        options = {"connector": self._connector, **self._options}
        partition = f" PARTITIONED BY ({', '.join(f'`{k}`' for k in self._partition_keys)})" if self._partition_keys else ""
        with_ = ", ".join(f"{sql_literal(k)} = {sql_literal(v)}" for k, v in options.items())
        return f"CREATE TABLE `{name}` ({', '.join(self._schema._items)}){partition} WITH ({with_})"
