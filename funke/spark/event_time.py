"""Spark's marks of event time: the column metadata that makes a column a streaming query's event time, and the
watermark funke declares on one (``funke.spark.compiler``'s ``visit_Watermark``)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

#: The metadata key Spark's ``withWatermark`` puts on its column (the delay in ms): Spark's stateful operators take
#: a column that carries it for the query's event time.
WATERMARK_META = "spark.watermarkDelayMs"


def marked(df: DataFrame, column: str, delay: int) -> Column:
    """``column`` of ``df`` marked as event time (a Python function in between forgets Spark's mark): the watermark
    is still the one an upstream ``withWatermark`` computes; Spark refuses a second one ("Redefining watermark")."""
    return F.col(column).alias(column, metadata={**df.schema[column].metadata, WATERMARK_META: delay})


def declare_watermark(df: DataFrame, column: str, delay: int) -> DataFrame:
    """Spark's watermark on ``column``, ``delay`` ms behind its largest value. Flink SQL's ``WATERMARK FOR ts AS ts``
    is a delay of -1 (funke declares Spark a bound 1 ms less than Flink SQL's interval), which Spark refuses: it is
    the watermark of ``column`` plus 1 ms with no delay, the same value, and ``column`` is then marked as the event
    time."""
    if delay >= 0:
        return df.withWatermark(column, f"{delay} milliseconds")
    ahead = f"_fk_wm_{column}"
    df = df.withColumn(ahead, F.col(column) + F.expr(f"INTERVAL {-delay} MILLISECONDS")).withWatermark(ahead, "0 milliseconds")
    return df.withColumn(column, marked(df, column, 0)).drop(ahead)


def window_time(node: Any, end: str) -> Column:
    """A window aggregation ``node``'s time column of its results, its window's last millisecond (Flink's
    ``window_time``) from the ``end`` column, marked as the event time of the windows after it (Spark chains
    window aggregations on such a column; the watermark is the upstream one)."""
    delay = max(node.input.watermark.max_out_of_orderness_ms, 0) if node.input.watermark is not None else 0
    value = F.col(end) - F.expr("INTERVAL 1 MILLISECOND")
    return value.alias(node.time_column, metadata={WATERMARK_META: delay})
