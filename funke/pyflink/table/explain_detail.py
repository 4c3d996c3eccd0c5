"""PyFlink's ``pyflink.table.explain_detail``: ``ExplainDetail``."""

from funke.pyflink.table import ExplainDetail

__all__ = ["ExplainDetail"]
