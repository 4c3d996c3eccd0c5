"""What Flink SQL statements give back: ``TableResult`` (a started job, or a SHOW's, DESCRIBE's or EXPLAIN's rows),
``StatementSet`` (several ``INSERT INTO`` as one job), and ``merged_inserts`` (inserts into one table in one job)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from funke.dialect.syntax import parse
from funke.errors import PlanError
from funke.plan import nodes

if TYPE_CHECKING:
    from funke.table.environment import StreamTableEnvironment


class TableResult:
    """What ``execute_sql``, ``StatementSet.execute`` and ``Table.execute`` return: a started job
    (for DDL: nothing to wait for)."""

    def __init__(
        self, handle: Any = None, sink: Any = None, *, content: tuple[list[str], list[list[Any]]] | None = None, is_plan: bool = False
    ):
        self._handle, self._sink = handle, sink
        #: A SHOW or DESCRIBE statement's answer: its columns' names and its rows (``funke.table.namespace``);
        #: an EXPLAIN's, one row of its plan's text (``is_plan``).
        self.content, self.is_plan = content, is_plan

    def get_job_client(self) -> Any:
        """The job's ``JobHandle`` (``stop``, ``savepoint``, ``metrics``); None for DDL."""
        return self._handle

    def wait(self, timeout: float | None = None) -> TableResult:
        """Block until the job ends (finite input) or ``timeout`` seconds pass."""
        if self._handle is not None:
            self._handle.wait(timeout)
        return self

    def collect(self) -> Iterator[dict[str, Any]]:
        """The rows of ``Table.execute()``, as the job emits them, until it ends (a SHOW statement's, at once)."""
        if self.content is not None:
            names, rows = self.content
            yield from (dict(zip(names, r, strict=True)) for r in rows)
            return
        if self._sink is None:
            raise PlanError("collect() is for the result of Table.execute(); this result has no rows")
        seen = 0
        while True:
            done = self._handle.wait(0.2).done
            rows = self._sink.rows
            yield from rows[seen:]
            seen = len(rows)
            if done:
                return


class StatementSet:
    """Several ``INSERT INTO`` statements run as one job (Flink's ``StatementSet``)."""

    def __init__(self, t_env: StreamTableEnvironment):
        self._t_env = t_env
        self._sinks: list[nodes.Sink] = []

    def add_insert_sql(self, sql: str) -> StatementSet:
        statement = parse(sql, self._t_env._functions.names())
        if not isinstance(statement, exp.Insert):
            raise PlanError(f"add_insert_sql() takes INSERT INTO ..., got a {type(statement).__name__.upper()} statement")
        self._sinks.append(self._t_env._insert(statement, sql))
        return self

    def execute(self) -> TableResult:
        if not self._sinks:
            raise PlanError("the statement set is empty: add_insert_sql(...) first")
        return TableResult(self._t_env._run(self._sinks, self._t_env.env.app))

    def explain(self, *extra_details: Any) -> str:
        """funke's plan of the inserts, together (Flink's ``StatementSet.explain``), whatever the details."""
        from funke.plan.explain import explain as explain_plan

        env = self._t_env
        return explain_plan(self._sinks, mode="batch" if env._batch_mode() else "streaming", latency_mode=env.env.latency_mode)



def merged_inserts(sinks: Sequence[nodes.Sink]) -> list[nodes.Sink]:
    """``sinks``, the inserts into one table (one uid: ``insert-t``) merged into one sink of their rows' union,
    where the first of them stands: Flink's inserts into one table each write it, and so does this one sink,
    which a directory of files or a topic takes as one writer (two Spark queries could not share a file sink).
    Inserts of different columns (one updating, one not) stay a sink each, their uids numbered: ``insert-t-2``."""
    by_uid: dict[object, list[nodes.Sink]] = {}
    for sink in sinks:
        uid = sink.explicit_uid or ""
        by_uid.setdefault(uid if uid.startswith("insert-") else id(sink), []).append(sink)
    merged = []
    for group in by_uid.values():
        first = group[0]
        shapes = {s.inputs[0].schema.names if s.inputs[0].schema is not None else None for s in group}
        if len(group) > 1 and len(shapes) == 1 and None not in shapes:
            merged.append(dataclasses.replace(first, inputs=(nodes.Union(tuple(s.inputs[0] for s in group)),)))
        else:  # (rows of other columns, an updating and an insert-only input: a query each, named apart)
            merged += [s if i == 0 else dataclasses.replace(s, explicit_uid=f"{s.explicit_uid}-{i + 1}") for i, s in enumerate(group)]
    return merged
