"""Flink's Table API and Flink SQL on funke (``StreamTableEnvironment.create(env)``)."""

from funke.table.environment import StreamTableEnvironment, Table

__all__ = ["StreamTableEnvironment", "Table"]
