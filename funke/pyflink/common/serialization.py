"""PyFlink's (de)serialization schemas and ``Encoder``, as descriptions the connectors read.

``SimpleStringSchema``: a record's bytes as a string (UTF-8); ``ByteArraySchema``: the bytes;
``Encoder.simple_string_encoder()``: one line per value, its text (``FileSink``).
"""

from __future__ import annotations

__all__ = ["ByteArraySchema", "DeserializationSchema", "Encoder", "SerializationSchema", "SimpleStringSchema"]


class SerializationSchema:
    """How a value becomes a record's bytes (a connector reads the description)."""


class DeserializationSchema:
    """How a record's bytes become a value."""


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    def __init__(self, charset: str = "UTF-8") -> None:
        self.charset = charset


class ByteArraySchema(SerializationSchema, DeserializationSchema):
    pass


class Encoder:
    """How ``FileSink.for_row_format`` writes a value: ``simple_string_encoder()`` writes its text and a newline."""

    def __init__(self, charset: str = "UTF-8") -> None:
        self.charset = charset

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> Encoder:
        return Encoder(charset_name)
