"""funke: Apache Flink's stream-processing model for Python, executed on Apache Spark.

>>> import funke as fk
>>> fk.seconds(10).total_seconds()
10.0
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

#: Names of the public API and the modules they come from, imported on first use (PEP 562): a Spark
#: worker that unpickles one funke function imports what that function needs, not all of funke.
_FROM = {
    **dict.fromkeys(("DataStream", "KeyedStream", "StreamEnvironment", "WindowedStream"), "funke.api"),
    "AsyncDataStream": "funke.api.async_io",
    **dict.fromkeys(("spark_table",), "funke.connectors.tables"),
    **dict.fromkeys(
        ("EnvironmentSetupError", "FunkeError", "JobFailedError", "PlanError", "SchemaError", "UnsupportedError"), "funke.errors"
    ),
    **dict.fromkeys(("col", "expr", "fn", "lit"), "funke.plan.expr"),
    **dict.fromkeys(
        (
            "AscendingTimestampsWatermarks",
            "BoundedOutOfOrdernessWatermarks",
            "Watermark",
            "WatermarkGenerator",
            "WatermarkGeneratorSupplier",
            "WatermarkOutput",
        ),
        "funke.semantics.generators",
    ),
    **dict.fromkeys(("hours", "milliseconds", "minutes", "seconds"), "funke.semantics.time"),
    "WatermarkStrategy": "funke.semantics.watermarks",
    "OutputTag": "funke.semantics.functions",
    # Flink's DataSet iterations over DataFrames (bulk and delta), as the issue names them: fk.iterate(...)
    **dict.fromkeys(("iterate", "iterate_delta"), "funke.graph.iteration"),
}
#: Subpackages users reach as attributes (``fk.windows``, ``fk.sinks``, ``fk.table`` ...).
_MODULES = frozenset(
    {"cep", "connectors", "evictors", "functions", "sinks", "sources", "state", "triggers", "windows", "testing", "table", "services", "bench"}
)

if TYPE_CHECKING:
    from funke.api import DataStream, KeyedStream, StreamEnvironment, WindowedStream
    from funke.api.async_io import AsyncDataStream
    from funke.connectors.tables import spark_table
    from funke.errors import EnvironmentSetupError, FunkeError, JobFailedError, PlanError, SchemaError, UnsupportedError
    from funke.graph.iteration import iterate, iterate_delta
    from funke.plan.expr import col, expr, fn, lit
    from funke.semantics.functions import OutputTag
    from funke.semantics.generators import (
        AscendingTimestampsWatermarks,
        BoundedOutOfOrdernessWatermarks,
        Watermark,
        WatermarkGenerator,
        WatermarkGeneratorSupplier,
        WatermarkOutput,
    )
    from funke.semantics.time import hours, milliseconds, minutes, seconds
    from funke.semantics.watermarks import WatermarkStrategy


def __getattr__(name: str) -> Any:
    if name in _FROM:
        value = getattr(importlib.import_module(_FROM[name]), name)
    elif name in _MODULES:  # (``table`` is the Table API package; called, it is the join's static table)
        if name == "connectors":  # (``fk.connectors.tables.StaticTable``: its package imports no module itself)
            importlib.import_module("funke.connectors.tables")
        value = importlib.import_module(f"funke.{name}")
    elif not name.startswith("_") and importlib.util.find_spec(f"funke.{name}") is not None:  # any other subpackage (fk.errors)
        value = importlib.import_module(f"funke.{name}")
    else:
        raise AttributeError(f"module 'funke' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM, *_MODULES})


__version__ = "0.1.0"

__all__ = [
    "AscendingTimestampsWatermarks",
    "AsyncDataStream",
    "BoundedOutOfOrdernessWatermarks",
    "DataStream",
    "EnvironmentSetupError",
    "FunkeError",
    "JobFailedError",
    "KeyedStream",
    "OutputTag",
    "PlanError",
    "SchemaError",
    "StreamEnvironment",
    "UnsupportedError",
    "Watermark",
    "WatermarkGenerator",
    "WatermarkGeneratorSupplier",
    "WatermarkOutput",
    "WatermarkStrategy",
    "WindowedStream",
    "col",
    "evictors",
    "expr",
    "fn",
    "functions",
    "hours",
    "iterate",
    "iterate_delta",
    "lit",
    "milliseconds",
    "minutes",
    "seconds",
    "sinks",
    "sources",
    "spark_table",
    "state",
    "table",
    "testing",
    "triggers",
    "windows",
]
