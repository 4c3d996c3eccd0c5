"""PyFlink's ``pyflink.table.changelog_mode``: ``ChangelogMode``."""

from funke.pyflink.table.table_environment import ChangelogMode

__all__ = ["ChangelogMode"]
