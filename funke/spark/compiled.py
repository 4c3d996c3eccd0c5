"""What compiling a node gives: its Spark frame and what the runtime must know of it (``Compiled``), the
metrics observed on the way (``SourceMetric``) and the checks whose failing rows become dead letters
(``DeadLetterRule``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame

from funke.plan import nodes

#: Spark drops a join input row with time <= its watermark (max - delay); Flink drops time < its
#: watermark (max - bound - 1). Declared bound + 2 ms behind (the watermarks feeding a native interval
#: join: ``PlanFacts.join_watermarks``), Spark drops exactly Flink's late rows.
JOIN_SHIFT_MS = 2


@dataclass
class SourceMetric:
    """An observed metric set per source: rows read and whether the end-of-input row passed.

    Streaming queries report it in their progress under ``name``; a batch job through
    ``observation`` (a ``pyspark.sql.Observation``).
    """

    name: str
    finite: bool
    observation: Any = None
    counts_rows: bool = True
    #: The operator (its uid made safe) whose ``rows_in`` / ``rows_out`` this metric counts.
    operator: str | None = None
    #: Further observed fields and the count each is (``tag:<operator>:<tag>``: the rows sent to a side output).
    counts: dict[str, str] = field(default_factory=dict)
    #: The rows, known without an observe: a generator's ``events`` in a bounded run (its rows are
    #: ``0 .. events - 1``; not an accumulator, which a stage run again could count twice).
    known_rows: int | None = None


@dataclass
class Compiled:
    """A node's Spark frame, the metrics observed on the way, and what the runtime must know.

    ``control`` carries a ``TestStream``'s scripted time rows alongside the elements;
    ``tagged`` is a general operator's output with every tag in it (main and side outputs),
    which the runtime splits when several sinks read from it.
    """

    frame: DataFrame
    metrics: list[SourceMetric] = field(default_factory=list)
    stateful: bool = False
    control: DataFrame | None = None
    tagged: DataFrame | None = None
    program: Any = None  # the funke.spark.general.program.Program behind ``tagged``
    #: A source's frame before the observe that counts its rows: a watermark right after the
    #: source counts them in its own observe instead (one observe per row, not two).
    uncounted: DataFrame | None = None
    #: Operators upstream whose watermark funke computes on the driver (``funke.spark.general.program.ClockSpec``).
    clocks: list[Any] = field(default_factory=list)
    #: Operators upstream whose time rows come only when due (``funke.spark.general.program.BeatSpec``).
    beats: list[Any] = field(default_factory=list)
    #: The frame still carries the end-of-input row, whose rows and end were counted upstream
    #: (a select or filter passes it on to the watermark after it: see ``Compiler.data_rows``).
    end_counted: bool = False


@dataclass
class DeadLetterRule:
    """Rows of ``frame`` for which ``reason`` is not null leave the main path for the dead letters."""

    node: nodes.Node
    frame: DataFrame
    reason: Column
    raw: Column
    position: Column


#: The dead-letter output's columns.
DEAD_LETTER_DDL = "job string, node string, reason string, raw string, position string, detected_at timestamp"


def safe_name(uid: str) -> str:
    """``uid`` as a name Spark takes for an observed metric (letters, digits and ``_``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", uid)
