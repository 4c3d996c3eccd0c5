"""PyFlink's Table API (``pyflink.table``) on funke: a thin translation onto funke's SQL and Table API
(``funke.table``), each Table API call the Flink SQL it stands for.

Translated: ``TableEnvironment`` / ``StreamTableEnvironment`` with ``EnvironmentSettings``, ``from_elements``,
``from_pandas``, ``from_path``, ``create_temporary_table`` with ``TableDescriptor``/``Schema``/``FormatDescriptor``,
``execute_sql`` (DDL, INSERT, SELECT), ``sql_query``, ``get_schema()`` (``TableSchema``), ``ResultKind``, statement sets, the expression DSL
(``pyflink.table.expressions``), Python functions (``pyflink.table.udf``), group windows
(``pyflink.table.window``), ``Table`` operations and ``TableResult.print()`` / ``collect()`` in PyFlink's
formats. The rest of PyFlink's names can be imported, and using one is refused, naming it.
"""

from __future__ import annotations

from typing import Any

from funke.errors import UnsupportedError
from funke.pyflink.common.types import Row, RowKind
from funke.pyflink.table.descriptors import FormatDescriptor, Schema, TableDescriptor
from funke.pyflink.table.expressions import Expression
from funke.pyflink.table.table_environment import (
    ChangelogMode,
    EnvironmentSettings,
    StreamTableEnvironment,
    Table,
    TableConfig,
    TableEnvironment,
)
from funke.pyflink.table.table_result import StatementSet, TableResult
from funke.pyflink.table.table_schema import ResultKind, TableSchema
from funke.pyflink.table.udf import AggregateFunction, FunctionContext, ScalarFunction, TableAggregateFunction, TableFunction
from funke.table.data_types import DataType, DataTypes


class ExplainDetail:
    """PyFlink's explain details: funke's ``explain()`` gives its own plan (native or general path per node) for each."""

    ESTIMATED_COST, CHANGELOG_MODE, JSON_EXECUTION_PLAN, PLAN_ADVICE = 0, 1, 2, 3


#: PyFlink's pyflink.table names funke does not translate (importable; refused when used).
NAMES = frozenset(
    ["GroupedTable", "GroupWindowedTable", "OverWindowedTable", "WindowGroupedTable", "TableSink",
     "TableSource", "SqlDialect", "Module", "ModuleEntry", "Catalog",
     "HiveCatalog", "JdbcCatalog", "CatalogDatabase", "CatalogBaseTable", "CatalogFunction", "CatalogPartition",
     "CatalogPartitionSpec", "PlanReference", "CompiledPlan"]
)  # fmt: skip


def _refusal(what: str) -> UnsupportedError:
    return UnsupportedError(
        f"pyflink.table.{what} is not translated by funke (issue 41, part 4); funke translates TableEnvironment, "
        "StreamTableEnvironment, the Table operations, TableDescriptor/Schema, the expression DSL and Python UDFs"
    )


class _Refused(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise _refusal(f"{cls.__name__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise _refusal(cls.__name__)


def __getattr__(name: str) -> Any:
    if name in NAMES:
        value = _Refused(name, (), {"__module__": __name__})
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pyflink.table' has no attribute {name!r}")


__all__ = [
    "AggregateFunction", "ChangelogMode", "DataType", "DataTypes", "EnvironmentSettings", "ExplainDetail", "Expression", "FormatDescriptor",
    "FunctionContext", "ResultKind", "Row", "RowKind", "ScalarFunction", "Schema", "StatementSet",
    "StreamTableEnvironment", "Table", "TableAggregateFunction", "TableConfig", "TableDescriptor", "TableEnvironment",
    "TableFunction", "TableResult", "TableSchema",
]  # fmt: skip
