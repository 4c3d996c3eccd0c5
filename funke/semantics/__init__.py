"""Flink's time semantics in plain Python: no pyspark import anywhere in this package.

Window assigners, watermark strategies and (as they land) triggers, evictors, timers,
state and the reference window operator. Both execution paths are checked against it.
"""
