"""Where PyFlink's ``print()`` lines and ``execute_and_collect()`` values go."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from funke.connectors.base import BatchSink


class PrintLines(BatchSink):
    """Each micro-batch's lines (made in the workers, PyFlink's format and prefix) to this process's
    stdout, in the order of the batch's partitions. A side effect: at-least-once on replay, as
    Flink's print sink."""

    kind: ClassVar[str] = "print"
    guarantee: ClassVar[str] = "at-least-once"

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        out = sys.stdout
        for row in df.collect():
            out.write(row[0] + "\n")
        out.flush()

    def describe(self) -> str:
        return "print() (PyFlink's format)"


class Settings:
    """What a running PyFlink job's functions read when they run (parallelism, batch mode, job parameters),
    as of ``execute()``: functions hold this object, which is pickled with them when the job starts."""

    def __init__(self) -> None:
        import os

        self.parallelism = os.cpu_count() or 1
        self.batch = False
        self.job_parameters: dict[str, str] = {}
