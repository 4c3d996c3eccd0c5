"""Stopping a query whose foreachBatch was cut short: Spark's check must not overflow the stack."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark

# What a foreachBatch interrupted by stop() hands Spark: the Python traceback of the cancelled
# job, with the Java trace in it, some thousands of characters long.
PREFIX = "py4j.protocol.Py4JJavaError: An error occurred while calling o42.collectToPython.\n"


@pytest.mark.parametrize("length", [2_000, 40_000])
def test_a_long_python_error_at_stop_is_recognised_as_an_interruption(spark, length):
    jvm = spark.sparkContext._jvm
    trace = "\tat org.apache.spark.SparkContext.runJob(SparkContext.scala:2500)\n" * (length // 64)
    error = jvm.py4j.Py4JException(PREFIX + trace + "java.io.InterruptedIOException: stopped")
    check = jvm.org.apache.spark.sql.execution.streaming.runtime.StreamExecution.isInterruptionException
    # Under Java's default 1 MB thread stack this raised StackOverflowError from 2,000 characters on.
    assert check(error, spark.sparkContext._jsc.sc()) is True
