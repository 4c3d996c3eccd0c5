"""PyFlink's ``pyflink.table.table_config``: ``TableConfig``."""

from funke.pyflink.table.table_environment import TableConfig

__all__ = ["TableConfig"]
