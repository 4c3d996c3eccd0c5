"""PyFlink's Python functions for the Table API and SQL (``pyflink.table.udf``): funke's own
(``funke.table.udf``), which follow PyFlink's names and decorators."""

from funke.table.udf import (
    AggregateFunction,
    AsyncScalarFunction,
    FunctionContext,
    ScalarFunction,
    TableAggregateFunction,
    TableFunction,
    UserDefinedFunction,
    udaf,
    udf,
    udtaf,
    udtf,
)

__all__ = [
    "AggregateFunction", "AsyncScalarFunction", "FunctionContext", "ScalarFunction", "TableAggregateFunction",
    "TableFunction", "UserDefinedFunction", "udaf", "udf", "udtaf", "udtf",
]  # fmt: skip
