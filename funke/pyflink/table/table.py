"""PyFlink's ``pyflink.table.table``: ``Table`` (its grouped and windowed kinds are refused when used, naming them)."""

from funke.pyflink.table import GroupedTable, GroupWindowedTable, OverWindowedTable, WindowGroupedTable
from funke.pyflink.table.table_environment import Table

__all__ = ["GroupWindowedTable", "GroupedTable", "OverWindowedTable", "Table", "WindowGroupedTable"]
