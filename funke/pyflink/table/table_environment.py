"""PyFlink's ``TableEnvironment`` and ``Table`` on funke: a thin translation onto ``funke.table`` (each Table
API call is the Flink SQL it stands for, planned by funke's SQL planner), with PyFlink's conventions: rows a
function takes whole are ``Row``s, ``"%s" % table`` names the table for SQL, and its results are PyFlink's
``TableResult`` (``funke.pyflink.table.table_result``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.pyflink.common.types import Row, RowKind
from funke.pyflink.table.descriptors import Schema, TableDescriptor
from funke.pyflink.table.table_result import StatementSet, TableResult, table_fields
from funke.pyflink.table.table_schema import Column, ResolvedSchema, TableSchema, UniqueConstraint, Watermark
from funke.table import environment as fk_table
from funke.table.changelog import ROW_KIND, ROW_KIND_NAME
from funke.table.data_types import DataType, RowType
from funke.table.describe import view_columns, view_rows
from funke.table.time_of_day import time_precision, truncated
from funke.table.upsert import changes_table_stream


def _named_row(names: Sequence[str], values: Sequence[Any]) -> Row:
    """A row a Python function takes whole (``map``, ``flat_map`` of a Table), its fields named, as PyFlink's."""
    row = Row(*values)
    row.set_field_names(list(names))
    return row


class EnvironmentSettings:
    """``EnvironmentSettings.in_streaming_mode()`` / ``in_batch_mode()`` (or ``new_instance()...build()``)."""

    def __init__(self, streaming: bool = True) -> None:
        self._streaming = streaming

    @staticmethod
    def in_streaming_mode() -> EnvironmentSettings:
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> EnvironmentSettings:
        return EnvironmentSettings(False)

    @staticmethod
    def new_instance() -> EnvironmentSettings:
        return EnvironmentSettings(True)

    def build(self) -> EnvironmentSettings:
        return self

    def is_streaming_mode(self) -> bool:
        return self._streaming

    def __getattr__(self, name: str) -> Any:
        raise UnsupportedError(f"EnvironmentSettings.{name} is not translated by funke; it takes in_streaming_mode() and in_batch_mode()")


#: The options naming jars for Flink's JVM (``'pipeline.jars'``: ``file:///path/flink-sql-connector-kafka.jar;...``).
JARS = ("pipeline.jars", "pipeline.classpaths")


class TableConfig(fk_table.TableConfig):
    """PyFlink's ``TableConfig``: funke's options, and ``parallelism.default`` and ``pipeline.name``. The
    parallelism is a hint, as ``StreamExecutionEnvironment.set_parallelism`` is (funke's parallelism is
    Spark's: its shuffle partitions and the source's partitions); the pipeline name names the job."""

    OPTIONS = (*fk_table.TableConfig.OPTIONS, "parallelism.default", "pipeline.name", *JARS)

    def set(self, key: str, value: str) -> TableConfig:
        if key in JARS:
            # Flink's connector and format jars, for Flink's JVM (``StreamExecutionEnvironment.add_jars`` too): funke's
            # connectors are its own, and what only a jar could bring (a connector funke lacks, a Java function) is
            # refused where the job names it. Nothing to load.
            if not all(j.strip() for j in str(value).split(";")):
                raise PlanError(f"{key} is a list of jar URLs separated by ';', got {value!r}")
            self._options[key] = str(value)
            return self
        if key == "parallelism.default":
            if not str(value).strip().isdigit() or int(value) < 1:
                raise PlanError(f"parallelism.default is a whole number above 0, got {value!r}")
            self._options[key] = str(value)
            return self
        if key == "pipeline.name":
            self._options[key] = str(value)
            if self._env is not None:
                self._env.app = str(value)
            return self
        super().set(key, value)
        return self


class TableEnvironment(fk_table.StreamTableEnvironment):
    """``TableEnvironment.create(EnvironmentSettings.in_streaming_mode())``: Flink SQL and the Table API on
    funke (``funke.table.StreamTableEnvironment`` with PyFlink's conventions)."""

    row_factory = staticmethod(_named_row)

    def __init__(self, env: Any, streaming: bool = True) -> None:
        super().__init__(env)
        self._streaming = streaming

    @property
    def _config_class(self) -> type[fk_table.TableConfig]:
        return TableConfig

    @classmethod
    def create(cls, environment_settings: Any = None) -> TableEnvironment:  # type: ignore[override]
        import funke as fk

        if environment_settings is not None and not isinstance(environment_settings, EnvironmentSettings):
            raise UnsupportedError(
                "TableEnvironment.create(Configuration): funke takes EnvironmentSettings.in_streaming_mode() or in_batch_mode()"
            )
        streaming = environment_settings is None or environment_settings.is_streaming_mode()
        return cls(fk.StreamEnvironment(app="pyflink"), streaming)

    # -- tables ---------------------------------------------------------------------------------
    def from_elements(self, elements: Iterable[Any], schema: Any = None, verify_schema: bool = True) -> Table:
        """A bounded table of ``elements`` (tuples, lists or ``Row``s): ``schema`` the column names (types
        from the values), a ``DataTypes.ROW`` of fields, or None (names ``_1``, ``_2``, ...)."""
        rows = [tuple(e) if isinstance(e, (tuple, list, Row)) else (e,) for e in elements]
        if isinstance(schema, RowType):
            names, types = schema.field_names(), [t.spark_type for t in schema.field_types()]
        elif schema is None or isinstance(schema, (list, tuple)):
            width = max((len(r) for r in rows), default=0)
            names = list(schema) if schema is not None else [f"_{i + 1}" for i in range(width)]
            types = [_inferred([r[i] for r in rows if i < len(r)], names[i]) for i in range(len(names))]
        else:
            raise UnsupportedError(f"from_elements(schema={schema!r}): funke takes column names or a DataTypes.ROW")
        if any(len(r) != len(names) for r in rows):
            raise PlanError(f"from_elements(): every element needs {len(names)} value(s) ({', '.join(names)})")
        precisions = [time_precision(t) for t in types]
        if any(p is not None for p in precisions):  # (a TIME(p) column holds p digits of fraction)
            rows = [tuple(v if p is None else truncated(v, p) for v, p in zip(r, precisions, strict=True)) for r in rows]
        ddl = ", ".join(f"`{n}` {t}" for n, t in zip(names, types, strict=True))
        table = self.from_data_stream(self.env.from_collection(rows, ddl))
        if isinstance(schema, RowType):  # (the declared types, as get_schema() prints them: TIMESTAMP(3), INT NOT NULL)
            table._declared = {n: (t.flink, not t.nullable) for n, t in zip(names, schema.field_types(), strict=True)}
        return table

    def from_pandas(self, pdf: Any, schema: Any = None, splits_num: int = 1) -> Table:
        """A bounded table of a pandas DataFrame's rows (its column names, or ``schema``'s)."""
        rows = [tuple(_plain(v) for v in r) for r in pdf.itertuples(index=False, name=None)]
        if schema is None:
            schema = [str(c) for c in pdf.columns]
        return self.from_elements(rows, schema)

    def from_path(self, path: str) -> Table:
        table = self.sql_query(f"SELECT * FROM `{path}`")
        table._path = path
        return table

    def sql_query(self, query: str) -> Table:  # type: ignore[override]
        table = super().sql_query(query)
        table._sql = query  # (what get_schema() reads its columns' Flink types and nullability from)
        return table

    # -- schemas (get_schema(), DESCRIBE) ---------------------------------------------------------
    def _schema(self, table: Table) -> TableSchema:
        """``table``'s PyFlink ``TableSchema``: its columns as DESCRIBE gives them (``funke.table.describe``)."""
        schema = fk_table.Table.get_schema(table)
        rows = view_rows(schema, self._flink_columns(table), table._stream.node, "Table.get_schema()")
        columns = []
        for (name, kind, nullable, *_), f in zip(rows, schema.fields, strict=True):
            text, _, marker = kind.partition(" *")
            columns.append(Column(name, DataType(text, f.dtype or "", bool(nullable)), f" *{marker}" if marker else ""))
        if table._path is None:  # (a primary key: from_changelog_stream's, named as Flink names it)
            return TableSchema(columns, None, UniqueConstraint("PK_" + "_".join(table._key), table._key) if table._key else None)
        declared = self._tables.get(table._path)
        key = declared.primary_key if declared is not None else ()
        return TableSchema(columns, self._watermark(table._path), UniqueConstraint(declared.key_name, key) if key else None)

    def _watermark(self, path: str) -> Watermark | None:
        """The watermark of a table of ``CREATE TABLE`` (part of its schema, as Flink's; a query's schema has none)."""
        declared = self._tables.get(path)
        if declared is None or not declared.watermark:
            return None
        column = declared.watermark[0]
        kind = {n: k for n, k, *_ in self._describe(path, f"DESCRIBE {path}")}[column]
        return Watermark(column, kind.split(" *")[0], declared.watermark_sql or "")

    def _flink_columns(self, table: Table) -> dict[str, tuple[str, bool]]:
        """The columns of ``table`` whose Flink type is known, with whether they are NOT NULL (``view_columns``)."""
        if table._sql is None:
            return dict(table._declared)
        from funke.dialect.syntax import parse

        return view_columns(parse(table._sql, self._functions.names()), self._known_columns)

    def _known_columns(self, name: str) -> dict[str, tuple[str, bool]] | None:
        view = self._views.get(name)
        if name not in self._known and isinstance(view, Table):  # (a Table API table's: its query's)
            return self._flink_columns(view)
        return super()._known_columns(name)

    def _describe(self, name: str, statement: str) -> list[list[Any]]:
        view = self._views.get(name)
        if name not in self._tables and isinstance(view, Table):  # (its get_schema() is PyFlink's TableSchema: funke's is its stream's)
            return view_rows(fk_table.Table.get_schema(view), self._known_columns(name) or {}, view._stream.node, statement)
        return super()._describe(name, statement)

    def create_temporary_table(self, path: str, descriptor: TableDescriptor) -> None:
        """A table of a connector (``TableDescriptor.for_connector(...)...build()``): its ``CREATE TABLE``."""
        if not isinstance(descriptor, TableDescriptor):
            raise PlanError(f"create_temporary_table() takes a TableDescriptor, got {type(descriptor).__name__}")
        self.execute_sql(descriptor.create_table_sql(path))

    create_table = create_temporary_table

    def from_data_stream(self, data_stream: Any, *fields_or_schema: Any) -> Table:  # type: ignore[override]
        """A PyFlink DataStream as a table: a ROW type's fields as columns (``f0``, ``f1``, ... unless named), any
        other type as one column ``f0``. A ``Schema`` picks and types the columns (in its order, when it
        declares any), adds computed columns (``column_by_expression``) and the watermark (``watermark``)."""
        from funke.api.streams import DataStream as FunkeStream

        if isinstance(data_stream, FunkeStream) and not fields_or_schema:
            return super().from_data_stream(data_stream)
        if not callable(getattr(data_stream, "_chained", None)):
            raise PlanError(f"from_data_stream() takes a DataStream, got {type(data_stream).__name__}")
        if len(fields_or_schema) > 1 or (fields_or_schema and not isinstance(fields_or_schema[0], Schema)):
            raise UnsupportedError("from_data_stream(ds, col(...), ...): funke takes a Schema (Schema.new_builder()...build()), or none")
        table = super().from_data_stream(_columns_of(data_stream))
        return _with_schema(table, fields_or_schema[0]) if fields_or_schema else table

    def from_changelog_stream(self, data_stream: Any, schema: Schema | None = None, changelog_mode: Any = None) -> Table:  # type: ignore[override]
        """A PyFlink DataStream of ``Row``s, each with its ``RowKind``, as an updating table, as Flink's planner reads it:
        every kind as it comes, or with ``ChangelogMode.upsert()`` (and the ``Schema``'s primary key) a key's row
        now (``+I``/``+U``) or gone (``-D``), normalized into whole rows. A ``Schema`` types the columns as in
        ``from_data_stream``."""
        from funke.api.streams import DataStream as FunkeStream

        mode = "all" if changelog_mode is None else getattr(changelog_mode, "_mode", None)
        if mode not in ("all", "upsert"):
            raise UnsupportedError(f"from_changelog_stream(..., {changelog_mode!r}): funke takes ChangelogMode.all() and upsert(); "
                                   "an insert-only stream is from_data_stream's")  # fmt: skip
        if isinstance(data_stream, FunkeStream):
            raise PlanError("from_changelog_stream(): a funke DataStream's changes are read by funke.table's from_changelog_stream(stream)")
        keys = [e[1] for e in (schema.entries if schema is not None else ()) if e[0] == "key"]
        table = super().from_data_stream(_columns_of(data_stream, kinds=True))
        if schema is not None:
            table = _with_schema(table, Schema(tuple(e for e in schema.entries if e[0] != "key")))
        key = keys[0] if keys else None
        out = self._table(self, changes_table_stream(table._stream, ROW_KIND, mode, key, self._config.state_ttl_ms))
        if schema is not None:  # (its schema: the columns' declared types, NOT NULL, and the key, as PyFlink prints them)
            out._declared = {e[1]: (e[2].flink, not e[2].nullable or e[1] in (key or ())) for e in schema.entries if e[0] == "column"}
        out._key = tuple(key or ())
        return out

    def to_data_stream(self, table: Any) -> Any:  # type: ignore[override]
        """An insert-only table as a PyFlink DataStream of named ``Row``s (its columns' types)."""
        env = self._streams("to_data_stream")
        stream = super().to_data_stream(table)  # (refused for an updating table, saying why)
        return self._rows(env, table, stream, kinds=None)

    def to_append_stream(self, table: Any, type_info: Any = None) -> Any:
        return self.to_data_stream(table)

    def to_changelog_stream(self, table: Any, target_schema: Any = None, changelog_mode: Any = None) -> Any:  # type: ignore[override]
        """A table's changes as a PyFlink DataStream of named ``Row``s, each with its ``RowKind`` (printed
        ``+I[...]``, ``-U[...]``, ...); an insert-only table's rows are inserts. Every kind, as PyFlink gives
        them without a ``target_schema`` (it passes ``changelog_mode`` on only with one; funke warns)."""
        if target_schema is not None:
            raise UnsupportedError(
                "to_changelog_stream(table, target_schema[, changelog_mode]): funke takes the table's own columns; "
                "select and cast them in the table first"
            )
        if changelog_mode is not None:
            warnings.warn(
                "to_changelog_stream(table, changelog_mode=...) without a target_schema gives every kind of change: PyFlink "
                "passes changelog_mode on only with a target_schema, and funke does as PyFlink does", stacklevel=2,
            )  # fmt: skip
        env = self._streams("to_changelog_stream")
        stream = super().to_changelog_stream(table)
        return self._rows(env, table, stream, kinds=ROW_KIND_NAME)

    def _streams(self, what: str) -> Any:
        """The PyFlink StreamExecutionEnvironment the table environment was created over (``what`` needs one)."""
        env = getattr(self, "_pyflink_env", None)
        if env is None:
            raise PlanError(f"{what}() is StreamTableEnvironment's: create it with StreamTableEnvironment.create(env)")
        return env

    def _rows(self, env: Any, table: Any, stream: Any, *, kinds: str | None) -> Any:
        """``stream`` (``table``'s columns, with ``kinds`` its row kind column) as a DataStream of ``env`` of named Rows."""
        from funke.pyflink.common.typeinfo import Types
        from funke.pyflink.datastream._wire import RowReader
        from funke.pyflink.datastream.data_stream import DataStream

        fields = table_fields(table)
        row_type = Types.ROW_NAMED([f.name for f in fields], [_type_info(f.dtype, f.name) for f in fields])
        columns = [f"`{f.name}`" for f in fields] + ([kinds] if kinds else [])
        return DataStream(env, stream.select(*columns), type_info=row_type, reader=RowReader(row_type, kinds=kinds), known=True)

    def to_retract_stream(self, table: Any, type_info: Any = None) -> Any:
        raise UnsupportedError("StreamTableEnvironment.to_retract_stream (removed in PyFlink 2) is not translated by funke: to_changelog_stream gives each row with its RowKind")

    def execute_sql(self, stmt: str) -> TableResult:  # type: ignore[override]
        """DDL, ``INSERT INTO`` (a job) or a ``SELECT`` (a job whose rows ``print()`` / ``collect()`` give)."""
        if stmt.lstrip().upper().startswith(("SELECT", "WITH", "VALUES")):
            return self.sql_query(stmt).execute()
        result = super().execute_sql(stmt)
        if result.get_job_client() is None:
            return TableResult(self, result, None)
        from sqlglot import exp

        from funke.dialect.syntax import parse_script
        from funke.table.statements import read_script, sink_names

        targets = [s.this for s, _ in parse_script(read_script(stmt).text, self._functions.names()) if isinstance(s, exp.Insert)]
        # (an INSERT INTO's or a statement set's: its result has a column per table written)
        return TableResult(self, result, None, inserted=sink_names([(t.this if isinstance(t, exp.Schema) else t).name for t in targets]))

    def _select_items(self, exprs: Any) -> str:
        """PyFlink's names for a select's unnamed expressions: ``EXPR$i`` for an aggregate call, the i-th
        aggregate call of the list; ``_c<position>`` for any other expression; a column keeps its name."""
        from funke.pyflink.table.expressions import Column, Expression, aggregate_calls

        items, calls = [], 0
        for position, e in enumerate(exprs):
            text = self._items([e])
            if isinstance(e, Expression) and not isinstance(e, Column) and e._alias is None:
                text += f" AS `EXPR${calls}`" if e._aggregate is not None else f" AS `_c{position}`"
            calls += aggregate_calls(e)
            items.append(text)
        return ", ".join(items)

    def explain_sql(self, stmt: str, *extra_details: Any) -> str:  # type: ignore[override]
        """funke's plan of a query, an INSERT or a statement set, whatever the details (``ExplainDetail``)."""
        return super().explain_sql(stmt)

    def create_statement_set(self) -> StatementSet:  # type: ignore[override]
        return StatementSet(self)

    def _batch_mode(self) -> bool:
        return not self._streaming

    def _bounded(self, sinks: list[Any]) -> bool:
        """Over bounded sources a Spark batch job (the streaming run's results, as PyFlink's DataStream jobs run
        here), else a streaming one; batch mode takes bounded sources only."""
        from funke.plan import nodes

        bounded = all(x.spec.bounded for x in nodes.walk(sinks) if isinstance(x, nodes.Source))
        if not self._streaming and not bounded:
            raise UnsupportedError("EnvironmentSettings.in_batch_mode() with an unbounded source: batch mode reads bounded input only, as in Flink")
        return bounded


class StreamTableEnvironment(TableEnvironment):
    """``StreamTableEnvironment.create(stream_execution_environment)``: the Table API over a PyFlink
    ``StreamExecutionEnvironment``'s funke environment."""

    @classmethod
    def create(cls, stream_execution_environment: Any = None, environment_settings: Any = None) -> StreamTableEnvironment:  # type: ignore[override]
        import funke as fk

        if stream_execution_environment is None:
            return cls(fk.StreamEnvironment(app="pyflink"), True)
        inner = getattr(stream_execution_environment, "_fk", None)
        if inner is None:
            raise PlanError(f"StreamTableEnvironment.create() takes a StreamExecutionEnvironment, got {type(stream_execution_environment).__name__}")
        streaming = environment_settings is None or environment_settings.is_streaming_mode()
        t_env = cls(inner, streaming)
        t_env._pyflink_env = stream_execution_environment
        return t_env


class Table(fk_table.Table):
    """PyFlink's ``Table``: funke's, with columns as attributes (``table.data``), PyFlink's expressions,
    ``"%s" % table`` naming it for SQL, and PyFlink's schemas (``get_schema()``, ``get_resolved_schema()``)."""

    _t_env: TableEnvironment
    #: The query the table is (``sql_query``), the Flink types its columns were declared with (``from_elements``),
    #: and the table it reads (``from_path``), whose watermark is in its schema: what its schema is read from.
    _sql: str | None = None
    _declared: Any = ()
    _path: str | None = None
    #: The primary key ``from_changelog_stream``'s Schema declared.
    _key: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        stream = self.__dict__.get("_stream")
        if stream is not None and not name.startswith("_") and name in stream.columns:
            from funke.pyflink.table.expressions import col

            return col(name)
        raise AttributeError(f"'Table' object has no attribute {name!r}")

    def __str__(self) -> str:
        return self._t_env._anonymous(self)

    def _keys(self, keys: Sequence[Any]) -> list[str]:
        return [k if isinstance(k, str) else getattr(k, "name", None) or self._t_env._items([k]) for k in keys]

    def group_by(self, *fields: Any) -> Any:
        return super().group_by(*self._keys(fields))

    def window(self, window: Any) -> Any:
        from funke.pyflink.table.window import GroupWindow

        if not isinstance(window, GroupWindow):
            raise UnsupportedError(f"window({window!r}): funke takes Tumble, Slide and Session of pyflink.table.window (Over windows: SQL's OVER)")
        return _WindowedTable(super().window(window), self)

    def add_columns(self, *fields: Any) -> Table:
        return self.select("*", *fields)

    def add_or_replace_columns(self, *fields: Any) -> Table:
        given = [(self._t_env._items([f]), getattr(f, "_alias", None)) for f in fields]
        replacing = {name: text for text, name in given if name in self.columns}  # (in place, as in Flink)
        kept = [replacing.get(c, f"`{c}`") for c in self.columns]
        return self.select(*kept, *(text for text, name in given if name not in replacing))

    def drop_columns(self, *fields: Any) -> Table:
        dropped = {getattr(f, "name", f) for f in fields}
        if unknown := [d for d in dropped if d not in self.columns]:
            raise PlanError(f"drop_columns(): {unknown[0]!r} is not a column of the table ({', '.join(self.columns)})")
        return self.select(*(f"`{c}`" for c in self.columns if c not in dropped))

    def rename_columns(self, *fields: Any) -> Table:
        renames = {}
        for f in fields:
            alias, bare = getattr(f, "_alias", None), f._bare().to_sql(str) if hasattr(f, "_bare") else ""
            if alias is None or not (bare.startswith("`") and bare.endswith("`")):
                raise PlanError(f"rename_columns() takes col('old').alias('new') for each column it renames, got {f!r}")
            renames[bare[1:-1].replace("``", "`")] = alias
        if unknown := [c for c in renames if c not in self.columns]:
            raise PlanError(f"rename_columns(): {unknown[0]!r} is not a column of the table ({', '.join(self.columns)})")
        return self.select(*(f"`{c}` AS `{renames[c]}`" if c in renames else f"`{c}`" for c in self.columns))

    def distinct(self) -> Table:
        return self._t_env.sql_query(f"SELECT DISTINCT * FROM {self}")

    def join(self, right: Table, join_predicate: Any = None) -> Table:
        on = "TRUE" if join_predicate is None else self._t_env._items([join_predicate])
        return self._t_env.sql_query(f"SELECT * FROM {self} JOIN {right} ON {on}")

    def union_all(self, right: Table) -> Table:
        return self._t_env.sql_query(f"SELECT * FROM {self} UNION ALL SELECT * FROM {right}")

    def limit(self, fetch: int, offset: int = 0) -> Table:
        return self._t_env.sql_query(f"SELECT * FROM {self} LIMIT {int(fetch)}" + (f" OFFSET {int(offset)}" if offset else ""))

    def fetch(self, fetch: int) -> Table:
        return self.limit(fetch)

    def offset(self, offset: int) -> Table:
        """``OFFSET m`` of the rows in arrival order (batch mode, as Flink takes it)."""
        return self._t_env.sql_query(f"SELECT * FROM {self} OFFSET {int(offset)}")

    def over_window(self, *over_windows: Any) -> _OverWindowedTable:
        """``over_window(Over...alias('w')).select(col('v').max.over(col('w')), ...)``: SQL's OVER aggregation."""
        from funke.pyflink.table.window import OverWindow

        for w in over_windows:
            if not isinstance(w, OverWindow):
                raise PlanError(f"over_window() takes Over windows (Over.partition_by(...).order_by(...)...alias('w')), got {w!r}")
        return _OverWindowedTable(self, {w.name: w for w in over_windows})

    def order_by(self, *fields: Any) -> _OrderedTable:
        """``order_by(col('v').desc)``: ``ORDER BY``; ``.fetch(n)`` (or ``.limit(n)``) ``ORDER BY ... LIMIT n``, a
        Top-N in a stream; ``.offset(m)`` (batch mode) ``OFFSET m``."""
        return _OrderedTable(self, ", ".join(self._t_env._items([f]) for f in fields))

    def execute_insert(self, table_path_or_descriptor: Any, overwrite: bool = False) -> TableResult:
        """Write the table into a registered table (a job; ``wait()`` waits for a bounded one to end)."""
        if overwrite:
            raise UnsupportedError("execute_insert(overwrite=True): INSERT OVERWRITE is not supported by funke")
        if isinstance(table_path_or_descriptor, TableDescriptor):
            raise UnsupportedError("execute_insert(TableDescriptor): register the table with create_temporary_table and insert by its name")
        return self._t_env.execute_sql(f"INSERT INTO `{table_path_or_descriptor}` SELECT * FROM {self}")

    def execute(self) -> TableResult:  # type: ignore[override]
        result = super().execute()
        return TableResult(self._t_env, result, self)

    def to_pandas(self) -> Any:
        import pandas as pd

        rows = [tuple(r) for r in self.execute().collect() if r.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER)]
        return pd.DataFrame(rows, columns=list(self.columns))

    def get_schema(self) -> TableSchema:  # type: ignore[override]
        """PyFlink's ``TableSchema`` of the table: its columns' names and ``DataTypes`` (funke's own ``Schema``
        of Spark types is ``funke.table.Table.get_schema``)."""
        return self._t_env._schema(self)

    def get_resolved_schema(self) -> ResolvedSchema:
        return self.get_schema().to_resolved_schema()

    def print_schema(self) -> None:
        print(self.get_resolved_schema())

    def explain(self, *extra_details: Any) -> str:  # type: ignore[override]
        return super().explain()


class _WindowedTable:
    """``table.window(w)``: ``group_by`` takes expressions (``col('w')``) as well as names."""

    def __init__(self, inner: Any, table: Table) -> None:
        self._inner, self._table = inner, table

    def group_by(self, *fields: Any) -> Any:
        return self._inner.group_by(*self._table._keys(fields))


class _OverWindowedTable:
    """``table.over_window(w, ...)``: ``select`` with aggregates over the windows (``agg.over(col('w'))``)."""

    def __init__(self, table: Table, windows: dict[str, Any]) -> None:
        self._table, self._windows = table, windows

    def select(self, *fields: Any) -> Table:
        return self._table.select(*(self._resolved(f) for f in fields))

    def _resolved(self, e: Any) -> Any:
        from funke.pyflink.table.expressions import Expression, OverCall, escaped

        if isinstance(e, OverCall):
            window = self._windows.get(e.window)
            if window is None:
                raise PlanError(f"over({e.window!r}): no Over window named so; over_window() has {', '.join(map(repr, self._windows))}")
            return Expression("{0} OVER " + escaped(window.sql()), e.call, alias=e._alias, aggregate=e.call._aggregate)
        if isinstance(e, Expression) and e._operands and type(e) is Expression:
            return Expression(e._template, *(self._resolved(o) for o in e._operands), alias=e._alias, aggregate=e._aggregate)
        return e


class _OrderedTable:
    """``table.order_by(...)``: with ``fetch(n)`` / ``limit(n)`` ``ORDER BY ... LIMIT n`` (a Top-N in a
    stream), with ``offset(m)`` ``OFFSET m``; used as a table, ``ORDER BY`` alone (a sort on a time attribute
    in a stream, any sort in batch mode: funke.table.sort)."""

    def __init__(self, table: Table, order: str, skip: int = 0) -> None:
        self._table, self._order, self._skip = table, order, skip

    def offset(self, offset: int) -> _OrderedTable:
        return _OrderedTable(self._table, self._order, int(offset))

    def limit(self, fetch: int, offset: int = 0) -> Table:
        return self._query(f" LIMIT {int(fetch)}", int(offset) or self._skip)

    def fetch(self, fetch: int) -> Table:
        return self.limit(fetch)

    def _query(self, limit: str, skip: int) -> Table:
        sql = f"SELECT * FROM {self._table} ORDER BY {self._order}{limit}" + (f" OFFSET {skip}" if skip else "")
        return self._table._t_env.sql_query(sql)

    def __getattr__(self, name: str) -> Any:  # (select, execute, ... of the sorted table)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._query("", self._skip), name)


class ChangelogMode:
    """PyFlink's ``ChangelogMode`` (``all()``, ``upsert()``, ``insert_only()``): what PyFlink's
    ``to_changelog_stream`` takes with a ``target_schema`` (which funke refuses), and without one ignores."""

    def __init__(self, mode: str) -> None:
        self._mode = mode

    @staticmethod
    def all() -> ChangelogMode:
        return ChangelogMode("all")

    @staticmethod
    def upsert() -> ChangelogMode:
        return ChangelogMode("upsert")

    @staticmethod
    def insert_only() -> ChangelogMode:
        return ChangelogMode("insert-only")

    def __repr__(self) -> str:
        return f"ChangelogMode.{self._mode.replace('-', '_')}()"


TableEnvironment._table = Table


def _inferred(values: list[Any], name: str) -> str:
    """A column's type from its Python values, as PyFlink infers it (int BIGINT, float DOUBLE, ...)."""
    kinds = {type(v) for v in values if v is not None}
    order = [(bool, "boolean"), (int, "bigint"), (float, "double"), (str, "string"), (bytes, "binary"),
             (dt.datetime, "timestamp"), (dt.date, "date"), (decimal.Decimal, "decimal(38,18)")]  # fmt: skip
    if kinds == {int, float}:
        return "double"
    for python, spark in order:
        if kinds == {python}:
            return spark
    if not kinds:
        raise PlanError(f"from_elements(): column {name!r} has only NULLs; give a DataTypes.ROW schema")
    raise UnsupportedError(
        f"from_elements(): column {name!r} has values of {', '.join(sorted(k.__name__ for k in kinds))}; "
        "funke infers BOOLEAN, BIGINT, DOUBLE, STRING, BYTES, TIMESTAMP, DATE and DECIMAL: give a DataTypes.ROW schema"
    )


def _columns_of(ds: Any, *, kinds: bool = False) -> Any:
    """A PyFlink DataStream's values as a funke stream of typed columns (a ROW's fields, or ``f0``); with ``kinds``, each
    Row's ``RowKind`` in ``ROW_KIND`` first."""
    from funke.pyflink.common.typeinfo import RowTypeInfo, TupleTypeInfo, Types
    from funke.pyflink.datastream._wire import Tail

    t = ds._type
    if t is None:
        raise PlanError(
            "from_data_stream(): the stream's values have no declared type (PyFlink pickles them); declare it, "
            "e.g. map(..., output_type=Types.ROW([Types.STRING(), Types.LONG()])) or from_collection(..., type_info=...)"
        )
    if isinstance(t, TupleTypeInfo):  # (a tuple's fields f0, f1, ..., as Flink's)
        t = Types.ROW_NAMED([f"f{i}" for i in range(len(t.field_types))], t.field_types)
        ds = ds.map(_tuple_row, output_type=t)
    elif not isinstance(t, RowTypeInfo):
        t, ds = Types.ROW_NAMED(["f0"], [t]), ds.map(Row, output_type=Types.ROW_NAMED(["f0"], [t]))
    names = t.get_field_names()
    if untyped := [n for n, ft in zip(names, t.field_types, strict=True) if ft.sql_type is None]:
        raise UnsupportedError(f"from_data_stream(): field {untyped[0]!r} has a type funke's columns do not hold ({t!r})")
    ddl = ", ".join([f"`{ROW_KIND}` string"] * kinds + [f"`{n}` {ft.sql_type}" for n, ft in zip(names, t.field_types, strict=True)])
    return ds._chained(Tail("changes" if kinds else "columns", out_type=t), ddl, "")


def _tuple_row(value: tuple[Any, ...]) -> Row:
    return Row(*value)


def _with_schema(table: Table, schema: Schema) -> Table:
    """``table`` (a stream's fields) as ``schema`` declares it: its columns, computed columns and watermark (an
    updating table's row kinds kept)."""
    from funke.pyflink.table.descriptors import type_sql
    from funke.table.ddl import watermark_strategy

    entries, fields = schema.entries, table.columns
    if any(e[0] == "key" for e in entries):
        raise UnsupportedError("from_data_stream(): a Schema's primary_key is not supported by funke (the stream is insert-only)")
    items = []
    if any(e[0] == "column" for e in entries):
        for kind, name, value in (e for e in entries if e[0] in ("column", "computed")):
            if kind == "column" and name not in fields:
                raise PlanError(f"from_data_stream(): the Schema's column {name!r} is not a field of the stream ({', '.join(fields)})")
            items.append(f"CAST(`{name}` AS {type_sql(value).removesuffix(' NOT NULL')}) AS `{name}`" if kind == "column" else f"{value} AS `{name}`")
    else:
        items = [f"`{c}`" for c in fields] + [f"{e[2]} AS `{e[1]}`" for e in entries if e[0] == "computed"]
    out = table.select(*items)
    marks = [e for e in entries if e[0] == "watermark"]
    if len(marks) > 1:
        raise PlanError("from_data_stream(): a Schema has one watermark")
    if marks:
        strategy = watermark_strategy(marks[0][1], marks[0][2], "Schema.watermark")
        out = out._t_env._table(out._t_env, out._stream.assign_timestamps_and_watermarks(strategy))
    return out


def _type_info(spark: str, name: str) -> Any:
    """The PyFlink type of a column of funke type ``spark`` (what ``to_data_stream`` gives)."""
    from funke.pyflink.common.typeinfo import Types

    basic = {"bigint": Types.LONG, "int": Types.INT, "smallint": Types.SHORT, "tinyint": Types.BYTE, "string": Types.STRING,
             "double": Types.DOUBLE, "float": Types.FLOAT, "boolean": Types.BOOLEAN, "timestamp": Types.SQL_TIMESTAMP,
             "date": Types.SQL_DATE}  # fmt: skip
    if spark in basic:
        return basic[spark]()
    raise UnsupportedError(f"to_data_stream(): column {name!r} of type {spark} has no PyFlink type in funke's translation")


def _plain(value: Any) -> Any:
    """A pandas/numpy value as a plain Python one."""
    item = getattr(value, "item", None)
    return item() if callable(item) and not isinstance(value, (str, bytes)) else value


__all__ = [
    "DataType", "EnvironmentSettings", "Schema", "StreamTableEnvironment", "Table", "TableConfig", "TableDescriptor",
    "TableEnvironment",
]  # fmt: skip
