"""PyFlink's ``pyflink.table.result_kind``: ``ResultKind``."""

from funke.pyflink.table.table_schema import ResultKind

__all__ = ["ResultKind"]
