"""PyFlink's ``pyflink.table.catalog`` on funke: ``ResolvedSchema`` (what ``Table.get_resolved_schema()`` and
``TableResult.get_resolved_schema()`` give) and what it holds: ``Column``, ``WatermarkSpec``, ``UniqueConstraint``.
funke has one catalog and database, Flink's default ones; PyFlink's catalog classes are not translated."""

from __future__ import annotations

from funke.pyflink.table.table_schema import Column, ResolvedSchema, UniqueConstraint
from funke.pyflink.table.table_schema import Watermark as WatermarkSpec

__all__ = ["Column", "ResolvedSchema", "UniqueConstraint", "WatermarkSpec"]
