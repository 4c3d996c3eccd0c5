"""Flink's Table API and Flink SQL on funke (``StreamTableEnvironment.create(env)``).

``fk.table(rows, schema, name=...)``, the static lookup table of ``DataStream.join``, was there
first under the same name; this package answers that call too (``funke.connectors.tables.table``),
so ``fk.table(...)`` and ``funke.table.StreamTableEnvironment`` both work, in any import order.

>>> import funke as fk
>>> fk.table([("a", 1)], "k string, v int", name="t").label
't'
"""

import sys
import types
from typing import Any

from funke.connectors.tables import table as _static_table
from funke.table.data_types import DataType, DataTypes
from funke.table.environment import StatementSet, StreamTableEnvironment, Table, TableResult
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
from funke.table.windows import Session, Slide, Tumble

__all__ = [
    "AggregateFunction", "AsyncScalarFunction", "DataType", "DataTypes", "FunctionContext", "ScalarFunction", "Session", "Slide", "StatementSet",
    "StreamTableEnvironment", "Table", "TableAggregateFunction", "TableFunction", "TableResult", "Tumble", "UserDefinedFunction",
    "udaf", "udf", "udtaf", "udtf",
]  # fmt: skip


class _Package(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _static_table(*args, **kwargs)


sys.modules[__name__].__class__ = _Package
