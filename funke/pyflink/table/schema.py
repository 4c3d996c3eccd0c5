"""PyFlink's ``pyflink.table.schema``: ``Schema`` (a table descriptor's columns and watermark)."""

from funke.pyflink.table.descriptors import Schema

__all__ = ["Schema"]
