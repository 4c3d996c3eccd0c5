"""PyFlink's ``pyflink.table.statement_set``: ``StatementSet``."""

from funke.pyflink.table.table_result import StatementSet

__all__ = ["StatementSet"]
