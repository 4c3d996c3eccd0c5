"""PyFlink's ``TableResult`` and ``StatementSet`` on funke: a statement's or a query's result, with PyFlink's
conventions: ``print()`` draws PyFlink's table (each row's kind in streaming mode), ``collect()`` gives ``Row``s
without field names, with their kinds, as a ``CloseableIterator``; the result's kind and schemas as PyFlink's
(``funke.pyflink.table.table_schema``)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from funke.errors import PlanError, UnsupportedError
from funke.pyflink.common.types import Row, RowKind
from funke.pyflink.datastream.data_stream import CloseableIterator
from funke.pyflink.table.table_schema import Column, ResolvedSchema, ResultKind, TableSchema
from funke.semantics.java_text import java_float
from funke.table import environment as fk_table
from funke.table.changelog import ROW_KIND_NAME
from funke.table.data_types import DataTypes
from funke.table.namespace import DEFAULT_CATALOG, DEFAULT_DATABASE
from funke.table.statements import sink_names
from funke.table.tableau import tableau
from funke.table.time_of_day import time_precision, time_text

if TYPE_CHECKING:
    from funke.pyflink.table.table_environment import Table, TableEnvironment


def _row(values: Sequence[Any]) -> Row:
    """A collected row as PyFlink's ``TableResult.collect()`` gives it: without field names (``<Row(1, 'a')>``;
    read by position), a ROW value in it too."""
    return Row(*(_nameless(v) for v in values))


def _nameless(value: Any) -> Any:
    """A ROW value (Spark's, a tuple) as a ``Row`` without field names; in an ARRAY or a MAP too."""
    if isinstance(value, tuple):
        return _row(value)
    if isinstance(value, list):
        return [_nameless(v) for v in value]
    if isinstance(value, dict):
        return {k: _nameless(v) for k, v in value.items()}
    return value


class TableResult:
    """PyFlink's ``TableResult``: ``wait()``, ``print()`` (PyFlink's table of rows), ``collect()`` (``Row``s
    with their kinds) and ``get_job_client()``."""

    def __init__(self, t_env: TableEnvironment, inner: fk_table.TableResult, table: Table | None, inserted: Sequence[str] = ()) -> None:
        self._t_env, self._inner, self._table, self._inserted = t_env, inner, table, list(inserted)

    def get_result_kind(self) -> int:
        """``ResultKind.SUCCESS`` for a DDL statement's result, ``SUCCESS_WITH_CONTENT`` for any other."""
        content = self._table is not None or self._shown is not None or self._inserted
        return ResultKind.SUCCESS_WITH_CONTENT if content else ResultKind.SUCCESS

    def get_table_schema(self) -> TableSchema:
        """The result's columns: a query's; a SHOW's or DESCRIBE's; an INSERT's (the rows written to each
        table, ``default_catalog.default_database.t BIGINT``); a DDL statement's (``result STRING``)."""
        if self._table is not None:
            return self._table.get_schema()
        if self._shown is not None:
            names, rows = self._shown
            kinds = [DataTypes.BOOLEAN() if any(isinstance(r[i], bool) for r in rows) else DataTypes.STRING() for i in range(len(names))]
            return TableSchema([Column(n, t) for n, t in zip(names, kinds, strict=True)])
        if self._inserted:
            return TableSchema([Column(f"{DEFAULT_CATALOG}.{DEFAULT_DATABASE}.{t}", DataTypes.BIGINT()) for t in self._inserted])
        return TableSchema([Column("result", DataTypes.STRING())])

    def get_resolved_schema(self) -> ResolvedSchema:
        return self.get_table_schema().to_resolved_schema()

    def get_job_client(self) -> Any:
        return self._inner.get_job_client()

    @property
    def _shown(self) -> tuple[list[str], list[list[Any]]] | None:
        return self._inner.content if self._inner is not None else None

    def wait(self, timeout_ms: int | None = None) -> TableResult:
        """Block until the job ends; with ``timeout_ms``, raise ``TimeoutError`` if it has not ended by then
        (Flink's ``TableResult.await(timeout)`` throws its ``TimeoutException``)."""
        self._inner.wait(None if timeout_ms is None else timeout_ms / 1000)
        handle = self._inner.get_job_client()
        if timeout_ms is not None and handle is not None and not handle.done:
            raise TimeoutError(f"the job did not end within {timeout_ms} ms (TableResult.wait); it goes on running")
        return self

    def collect(self) -> CloseableIterator:
        """The result's ``Row``s, with their kinds, as the job gives them: PyFlink's ``CloseableIterator``
        (``with result.collect() as rows: ...`` stops the job, if it still runs, when the block is left)."""
        if self._table is None and self._shown is None:
            raise PlanError("collect() is for the result of a query (Table.execute() or execute_sql('SELECT ...'))")
        return CloseableIterator(self._rows(), self._inner.get_job_client())

    def _rows(self) -> Iterator[Row]:
        if self._shown is not None:  # a SHOW statement's answer
            _, rows = self._shown
            yield from (_row(r) for r in rows)
            return
        names = list(self._table.columns)
        for values in self._inner.collect():
            row = _row([values.get(n) for n in names])
            row.set_row_kind(RowKind.of_short(values.get(ROW_KIND_NAME)))  # (to_changelog_stream's column)
            yield row

    def print(self) -> None:
        """The rows as PyFlink 2.3 prints them: a table whose columns are as wide as their types print (a
        longer value cut with ``...``), with each row's kind in streaming mode; ``N rows in set``, or ``Empty set``."""
        if self._inner is not None and self._inner.is_plan:  # an EXPLAIN's: the plan's text, then a blank line, as Flink's
            print(self._shown[1][0][0].rstrip("\n") + "\n")
            return
        if self._shown is not None:  # a SHOW statement's answer: Flink prints it as wide as its values
            print(tableau(*self._shown))
            return
        if self._inserted:  # an INSERT's or a statement set's: each table's count of rows written, unknown (-1) as Flink's
            print(", ".join("-1" for _ in self._inserted))
            return
        if self._table is None:
            print("OK")
            return
        fields = table_fields(self._table)
        rows = list(self.collect())
        streaming = self._t_env._streaming
        names = (["op"] if streaming else []) + [f.name for f in fields]
        cells = [([str(r.get_row_kind())] if streaming else []) + [_tableau(v, f.dtype) for v, f in zip(r, fields, strict=True)] for r in rows]
        widths = ([2] if streaming else []) + [max(len(f.name), len(_NULL), _type_width(f.dtype)) for f in fields]
        print(tableau(names, cells, widths))


class StatementSet(fk_table.StatementSet):
    """Several inserts run as one job: ``add_insert_sql`` and ``add_insert(table_path, table)``."""

    def add_insert(self, target_path: str, table: Table, overwrite: bool = False) -> StatementSet:
        if overwrite:
            raise UnsupportedError("add_insert(overwrite=True): INSERT OVERWRITE is not supported by funke")
        self.add_insert_sql(f"INSERT INTO `{target_path}` SELECT * FROM {table}")
        return self

    def execute(self) -> TableResult:  # type: ignore[override]
        inserted = sink_names([s.explicit_uid.removeprefix("insert-") for s in self._sinks])
        return TableResult(self._t_env, super().execute(), None, inserted=inserted)


_NULL = "<NULL>"
_MAX_WIDTH = 30
#: Column widths PyFlink's print gives a type in streaming mode (a negative sign included); others 30.
_WIDTHS = {"tinyint": 4, "smallint": 6, "int": 11, "bigint": 20, "boolean": 5, "date": 10, "timestamp": 23}


def table_fields(table: Any) -> Any:
    """The table's columns in funke's ``Schema`` (Spark types), which a PyFlink table's ``get_schema()`` is not."""
    return fk_table.Table.get_schema(table).fields


def _type_width(spark: str | None) -> int:
    if spark is None:
        return _MAX_WIDTH
    if spark.startswith("decimal("):
        return int(spark[8:].split(",")[0]) + 2
    if (precision := time_precision(spark)) is not None:  # (HH:mm:ss and the fraction's digits)
        return 8 + (precision + 1 if precision else 0)
    return _WIDTHS.get(spark, _MAX_WIDTH)


def _tableau(value: Any, spark: str) -> str:
    """A value as PyFlink's printed table writes it (SQL's text forms: ``2021-01-01 10:00:00.000``)."""
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return java_float(value, single=spark == "float")
    if isinstance(value, dt.datetime):
        return f"{value:%Y-%m-%d %H:%M:%S}.{value.microsecond // 1000:03d}"
    if isinstance(value, (dt.date, decimal.Decimal)):
        return str(value)
    if isinstance(value, dt.time):  # (a TIME(p) of p > 0 keeps a digit of its fraction: ``12:34:56.0``)
        text = time_text(value)
        return text + ".0" if "." not in text and time_precision(spark) else text
    if isinstance(value, Row):
        return "(" + ", ".join(_tableau(v, "") for v in value) + ")"
    if isinstance(value, (list, tuple)):  # (a NULL in an array is NULL, as Flink's cast of the array to a string writes it)
        return "[" + ", ".join("NULL" if v is None else _tableau(v, "") for v in value) + "]"
    if isinstance(value, dict):  # (a MAP, a MULTISET's counts: ``{a=2, b=NULL}``)
        return "{" + ", ".join(f"{_tableau(k, '')}={'NULL' if v is None else _tableau(v, '')}" for k, v in value.items()) + "}"
    return str(value)
