"""``StreamTableEnvironment`` and ``Table``: Flink's Table API over funke's DataStream programs.

A ``Table`` is a DataStream with a name for SQL: ``sql_query`` plans the query at once (an
unknown view or column, or a construct funke does not run, is refused before anything
starts) and lowers it onto the same DataStream operations a program would use
(``funke.table.planner``), so a query gets the native and general paths, ``explain()``,
exactly-once sinks, savepoints and dead letters like any job of its environment.
"""

from __future__ import annotations

from typing import Any

from funke.api.streams import DataStream
from funke.errors import PlanError
from funke.table.dialect import parse
from funke.table.planner import Planner


#: The names of the views ``Table.select``/``where`` query through (not listed as the user's).
_ANONYMOUS = "_fk_table_"


class Table:
    """The result of ``sql_query`` (or a stream brought in with ``from_data_stream``)."""

    def __init__(self, t_env: StreamTableEnvironment, stream: DataStream):
        self._t_env, self._stream = t_env, stream

    @property
    def columns(self) -> tuple[str, ...]:
        return self._stream.columns

    def get_schema(self) -> Any:
        """The table's columns and their types (funke's ``Schema``)."""
        return self._stream.schema

    def select(self, *exprs: str) -> Table:
        """Columns or SQL expressions (``"price * qty AS total"``), as ``SELECT`` would."""
        return self._t_env.sql_query(f"SELECT {', '.join(exprs)} FROM {self._t_env._anonymous(self)}")

    def where(self, condition: str) -> Table:
        return self._t_env.sql_query(f"SELECT * FROM {self._t_env._anonymous(self)} WHERE {condition}")

    filter = where

    def explain(self) -> str:
        """The plan of this table's stream (per node: uid, native or general path, and why)."""
        from funke.plan.explain import explain as explain_plan

        return explain_plan([self._stream.node], mode="streaming")

    def __repr__(self) -> str:
        return f"Table({', '.join(self.columns)})"


class StreamTableEnvironment:
    """Flink's ``StreamTableEnvironment`` over a funke ``StreamEnvironment``.

    >>> import funke as fk
    >>> from funke.table import StreamTableEnvironment
    >>> env = fk.StreamEnvironment(app="sql")
    >>> t_env = StreamTableEnvironment.create(env)
    >>> t_env.create_temporary_view("orders", env.from_collection([{"item": "a", "qty": 3}], "item string, qty int"))
    >>> t_env.sql_query("SELECT item, qty / 2 AS half FROM orders WHERE qty > 1").columns
    ('item', 'half')
    """

    def __init__(self, env: Any):
        self.env = env
        self._views: dict[str, Table] = {}
        self._anonymous_views = 0

    @classmethod
    def create(cls, env: Any) -> StreamTableEnvironment:
        return cls(env)

    def from_data_stream(self, stream: DataStream) -> Table:
        """A stream as a table: its columns, its event time (the watermark's column) as the time attribute."""
        if not isinstance(stream, DataStream):
            raise PlanError(f"from_data_stream() takes a DataStream, got {type(stream).__name__}")
        return Table(self, stream)

    def create_temporary_view(self, name: str, stream_or_table: DataStream | Table) -> None:
        """Name a stream or table for SQL (``FROM name``); a view of the same name is replaced."""
        table = stream_or_table if isinstance(stream_or_table, Table) else self.from_data_stream(stream_or_table)
        self._views[name] = table

    def list_temporary_views(self) -> list[str]:
        return sorted(name for name in self._views if not name.startswith(_ANONYMOUS))

    def sql_query(self, sql: str) -> Table:
        """Plan one ``SELECT`` (Flink SQL) over the views; see ``funke.table.planner`` for what runs."""
        planner = Planner({name: (lambda t=t: t._stream) for name, t in self._views.items()}, sql)
        return Table(self, planner.lower(parse(sql)))

    def to_data_stream(self, table: Table) -> DataStream:
        """The table as a DataStream (an insert-only table: every row an insert)."""
        if not isinstance(table, Table):
            raise PlanError(f"to_data_stream() takes a Table, got {type(table).__name__}")
        return table._stream

    def _anonymous(self, table: Table) -> str:
        self._anonymous_views += 1
        name = f"{_ANONYMOUS}{self._anonymous_views}"
        self._views[name] = table
        return f"`{name}`"
