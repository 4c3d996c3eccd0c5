"""PyFlink's ``JsonRowDeserializationSchema`` / ``JsonRowSerializationSchema``: JSON objects as ``Row`` s of a
``Types.ROW_NAMED`` type (funke's Kafka connector parses and writes them: ``format="json"``)."""

from __future__ import annotations

from typing import Any

from funke.errors import UnsupportedError
from funke.pyflink.common.serialization import DeserializationSchema, SerializationSchema

__all__ = ["JsonRowDeserializationSchema", "JsonRowSerializationSchema"]


class _Builder:
    def __init__(self, make: Any) -> None:
        self._make, self._type, self._options = make, None, {}

    def type_info(self, type_info: Any) -> _Builder:
        self._type = type_info
        return self

    with_type_info = type_info

    def json_schema(self, json_schema: str) -> _Builder:
        raise UnsupportedError("JsonRowDeserializationSchema.json_schema: give the row's type with type_info(Types.ROW_NAMED(...))")

    def fail_on_missing_field(self) -> _Builder:
        raise UnsupportedError("JsonRowDeserializationSchema.fail_on_missing_field: funke reads a missing field as NULL, as Flink does by default")

    def ignore_parse_errors(self) -> _Builder:
        """Flink's: a value that fits none of the JSON format's rules is NULL (funke: ``kafka(ignore_parse_errors=True)``)."""
        self._options["ignore_parse_errors"] = True
        return self

    def build(self) -> Any:
        if self._type is None:
            raise ValueError("a JSON row schema needs its row type: type_info(Types.ROW_NAMED(...))")
        return self._make(self._type, **self._options)


class JsonRowDeserializationSchema(DeserializationSchema):
    format = "json"

    def __init__(self, type_info: Any, ignore_parse_errors: bool = False) -> None:
        self.type_info, self.ignore_parse_errors = type_info, ignore_parse_errors

    @staticmethod
    def builder() -> _Builder:
        return _Builder(JsonRowDeserializationSchema)


class JsonRowSerializationSchema(SerializationSchema):
    format = "json"

    def __init__(self, type_info: Any, **options: Any) -> None:
        if options:
            raise TypeError(f"JsonRowSerializationSchema takes no {', '.join(options)}: it is an option of reading")
        self.type_info = type_info

    @staticmethod
    def builder() -> _Builder:
        return _Builder(JsonRowSerializationSchema)
