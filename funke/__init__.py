"""funke: Apache Flink's stream-processing model for Python, executed on Apache Spark.

>>> import funke as fk
>>> fk.seconds(10).total_seconds()
10.0
"""

from funke import connectors as _connectors  # noqa: F401
from funke.api import DataStream, KeyedStream, StreamEnvironment, WindowedStream
from funke.connectors.tables import spark_table, table
from funke.errors import EnvironmentSetupError, FunkeError, JobFailedError, PlanError, SchemaError, UnsupportedError
from funke.plan.expr import col, expr, fn, lit
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

from funke.semantics.functions import OutputTag
from funke import evictors, functions, sinks, sources, state, triggers, windows  # noqa: E402  (namespaces users import from)
from funke import testing  # noqa: E402  (uses the names above)
import funke.table  # noqa: E402,F401  (the Table API package; it replaces the name ``table`` above, and called, it is that static table)

__version__ = "0.1.0"

__all__ = [
    "AscendingTimestampsWatermarks",
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
