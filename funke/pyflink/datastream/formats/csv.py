"""PyFlink's ``CsvRowDeserializationSchema`` / ``CsvRowSerializationSchema``: CSV lines as ``Row`` s of a ROW
type (funke's Kafka connector: ``format="csv"``, fields in the row's order)."""

from __future__ import annotations

from typing import Any

from funke.errors import UnsupportedError
from funke.pyflink.common.serialization import DeserializationSchema, SerializationSchema

__all__ = ["CsvRowDeserializationSchema", "CsvRowSerializationSchema"]


class _Builder:
    def __init__(self, make: Any, type_info: Any = None) -> None:
        self._make, self._type = make, type_info

    def set_field_delimiter(self, delimiter: str) -> _Builder:
        if delimiter != ",":
            raise UnsupportedError(f"CSV field delimiter {delimiter!r}: funke's Kafka connector writes and reads RFC 4180 CSV (',')")
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("set_") or name in ("ignore_parse_errors", "disable_quote_character", "enable_quote_character"):
            raise UnsupportedError(f"CSV row schema {name}: funke's Kafka connector reads and writes RFC 4180 CSV only")
        raise AttributeError(name)

    def build(self) -> Any:
        return self._make(self._type)


class CsvRowDeserializationSchema(DeserializationSchema):
    format = "csv"

    def __init__(self, type_info: Any) -> None:
        self.type_info = type_info

    class Builder(_Builder):
        def __init__(self, type_info: Any) -> None:
            super().__init__(CsvRowDeserializationSchema, type_info)


class CsvRowSerializationSchema(SerializationSchema):
    format = "csv"

    def __init__(self, type_info: Any) -> None:
        self.type_info = type_info

    class Builder(_Builder):
        def __init__(self, type_info: Any) -> None:
            super().__init__(CsvRowSerializationSchema, type_info)
