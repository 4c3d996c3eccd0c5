"""The seam for PyFlink's Table API (``pyflink.table``) on funke.

PyFlink's Table API on funke (``TableEnvironment``, the expression DSL, Python UDFs) builds on funke's
own SQL and Table API with Python UDFs (``funke.table``), which is being added; until then every
``pyflink.table`` name can be imported (a DataStream script that imports one still runs) and using it
is refused, saying so. funke's own SQL runs today through ``funke.table.StreamTableEnvironment``.
"""

from __future__ import annotations

from typing import Any

from funke.errors import UnsupportedError

#: PyFlink's pyflink.table names (importable; refused when used).
NAMES = frozenset(
    ["TableEnvironment", "StreamTableEnvironment", "EnvironmentSettings", "TableConfig", "Table", "GroupedTable", "GroupWindowedTable", "OverWindowedTable", "WindowGroupedTable", "TableDescriptor", "FormatDescriptor", "Schema", "DataTypes", "TableSchema", "TableSink", "TableSource", "TableResult", "ResultKind", "StatementSet", "ExplainDetail", "SqlDialect", "TableFunction", "ScalarFunction", "AggregateFunction", "TableAggregateFunction", "FunctionContext", "Expression", "Row", "RowKind", "ChangelogMode", "Module", "ModuleEntry", "Catalog", "HiveCatalog", "JdbcCatalog", "CatalogDatabase", "CatalogBaseTable", "CatalogFunction", "CatalogPartition", "CatalogPartitionSpec", "PlanReference", "CompiledPlan"]
)


def _refusal(what: str) -> UnsupportedError:
    return UnsupportedError(
        f"pyflink.table.{what}: PyFlink's Table API on funke arrives with Python UDFs in funke's SQL (issue 41, part 4); "
        "run SQL with funke's own funke.table.StreamTableEnvironment.create(fk.StreamEnvironment()) meanwhile, and keep "
        "this script's DataStream part on pyflink.datastream"
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
