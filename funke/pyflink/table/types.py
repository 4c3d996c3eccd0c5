"""PyFlink's ``pyflink.table.types``: ``DataTypes`` and its types (``funke.table.data_types``), ``Row``, ``RowKind``."""

from funke.pyflink.common.types import Row, RowKind
from funke.table.data_types import ArrayType, DataType, DataTypes, MapType, RowField, RowType

__all__ = ["ArrayType", "DataType", "DataTypes", "MapType", "Row", "RowField", "RowKind", "RowType"]
