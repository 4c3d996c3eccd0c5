"""A bounded funke stream as the Spark DataFrame a :class:`~funke.graph.Graph` is made of.

The stream runs once as a funke batch job (what ``env.execute(bounded=True)`` runs: the same
plan, compiled for Spark's batch engine, its dead letters written and counted as in any bounded
run), and its rows are kept with ``localCheckpoint``, so the algorithms, which read their
graph many times, do not run the stream again. An unbounded stream (a source with no end) is
refused: a graph needs all of its edges before an algorithm can start.
"""

from __future__ import annotations

from typing import Any

from funke.api.environment import StreamEnvironment
from funke.api.streams import DataStream
from funke.connectors.base import BatchSink
from funke.graph.graph import DataFrame, GraphError
from funke.plan import nodes


class _Rows(BatchSink):
    """Keeps the batch job's result as a checkpointed DataFrame."""

    kind = "graph-input"

    def __init__(self) -> None:
        self.frame: DataFrame = None

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        self.frame = df.localCheckpoint(eager=True)

    def describe(self) -> str:
        return "a graph's DataFrame"


def frame_of(stream: DataStream, what: str) -> DataFrame:
    """``stream``'s rows as a DataFrame, run as the batch job ``<app>.graph-<what>``; ``what``
    names the stream in errors ("vertices", "edges")."""
    endless = sorted({s.spec.describe() for s in nodes.walk([stream.node]) if isinstance(s, nodes.Source) and not s.spec.bounded})
    if endless:
        raise GraphError(
            f"a graph's {what} must be a bounded stream, but it reads {', '.join(endless)}, which never ends: "
            "give the source an end (events=N, files without monitor_continuously) or pass a DataFrame"
        )
    env = stream._env
    job = StreamEnvironment(
        app=f"{env.app}.graph-{what}",
        spark=env.spark,
        spark_conf=env.spark_conf,
        dead_letters=env.dead_letters,
        settings_=env.settings,
    )
    rows = _Rows()
    DataStream(job, stream.node).sink_to(rows, uid=f"graph-{what}", name=f"graph {what}")
    job.execute(bounded=True).wait()
    return rows.frame
