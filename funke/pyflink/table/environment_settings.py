"""PyFlink's ``pyflink.table.environment_settings``: ``EnvironmentSettings``."""

from funke.pyflink.table.table_environment import EnvironmentSettings

__all__ = ["EnvironmentSettings"]
