"""PyFlink's ``JsonRowDeserializationSchema`` / ``JsonRowSerializationSchema``: JSON objects as ``Row`` s of a
``Types.ROW_NAMED`` type (funke's Kafka connector parses and writes them: ``format="json"``)."""

from __future__ import annotations

from typing import Any

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
        from funke.errors import UnsupportedError

        raise UnsupportedError("JsonRowDeserializationSchema.json_schema: give the row's type with type_info(Types.ROW_NAMED(...))")

    def fail_on_missing_field(self) -> _Builder:
        self._options["fail_on_missing_field"] = True
        return self

    def ignore_parse_errors(self) -> _Builder:
        self._options["ignore_parse_errors"] = True
        return self

    def build(self) -> Any:
        if self._type is None:
            raise ValueError("a JSON row schema needs its row type: type_info(Types.ROW_NAMED(...))")
        return self._make(self._type)


class JsonRowDeserializationSchema(DeserializationSchema):
    format = "json"

    def __init__(self, type_info: Any) -> None:
        self.type_info = type_info

    @staticmethod
    def builder() -> _Builder:
        return _Builder(JsonRowDeserializationSchema)


class JsonRowSerializationSchema(SerializationSchema):
    format = "json"

    def __init__(self, type_info: Any) -> None:
        self.type_info = type_info

    @staticmethod
    def builder() -> _Builder:
        return _Builder(JsonRowSerializationSchema)
