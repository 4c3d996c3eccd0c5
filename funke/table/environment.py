"""``StreamTableEnvironment`` and ``Table``: Flink's Table API over funke's DataStream programs.

A ``Table`` is a DataStream with a name for SQL: ``sql_query`` plans the query at once (an
unknown view or column, or a construct funke does not run, is refused before anything
starts) and lowers it onto the same DataStream operations a program would use
(``funke.table.planner``), so a query gets the native and general paths, ``explain()``,
exactly-once sinks, savepoints and dead letters like any job of its environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from funke.api.streams import DataStream
from funke.connectors.tables import StaticTable
from funke.dialect.syntax import Flink, parse, parse_script, position
from funke.errors import PlanError, UnsupportedError
from funke.plan import nodes
from funke.plan.expr import Sql
from funke.table.catalog import FunctionCatalog, function_ddl_text, is_function_ddl
from funke.table.changelog import INSERT, ROW_KIND, ROW_KIND_NAME, changelog_mode
from funke.table.connectors import CONNECTORS, table_def
from funke.table.ddl import TableDef
from funke.table.describe import COLUMNS as DESCRIBE_COLUMNS
from funke.table.describe import function_names, table_columns, table_rows, unknown_table, view_columns, view_rows
from funke.table.drops import Drop, api_drop, drop_statement, is_temporary, named, stale_views
from funke.table.like import like_of, like_table
from funke.table.lowering import is_updating
from funke.table.multiset_columns import refuse_multiset_functions
from funke.table.namespace import (
    COLUMNS,
    DEFAULT_CATALOG,
    DEFAULT_DATABASE,
    catalog_statement,
    check,
    is_namespace_statement,
    like,
    object_name,
    refuse_statement,
    show_statement,
    use_statement,
)
from funke.table.planner import Planner
from funke.table.results import StatementSet, TableResult, merged_inserts
from funke.table.statements import Script, is_wrapped, read_script
from funke.table.table_config import TableConfig
from funke.table.table_io import UPDATING, create_as, insert_sink, is_create_as, table_stream
from funke.table.tableau import tableau
from funke.table.udf_table import FunctionCalls, GroupedFunctionCalls, TableFunctions
from funke.table.upsert import changes_table_stream, upserts
from funke.table.windows import GroupWindow, window_columns

#: The names of the views ``Table.select``/``where`` query through (not listed as the user's).
_ANONYMOUS = "_fk_table_"


class Table(TableFunctions):
    """The result of ``sql_query`` (or a stream brought in with ``from_data_stream``). Its Python function
    methods (``join_lateral``, ``flat_map``, ``map``, ``flat_aggregate``, ...) are ``funke.table.udf_table``'s."""

    def __init__(self, t_env: StreamTableEnvironment, stream: DataStream):
        self._t_env, self._stream = t_env, stream
        #: Its columns' Flink types as ``sql_query`` knows them: a view of it keeps them (a COLLECT's MULTISET stays one).
        self._known_columns: dict[str, tuple[str, bool]] = {}

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c for c in self._stream.columns if c != ROW_KIND)

    @property
    def updating(self) -> bool:
        """Whether the table is an updating result (a changelog: ``to_changelog_stream``), not insert-only."""
        return is_updating(self._stream)

    def get_schema(self) -> Any:
        """The table's columns and their types (funke's ``Schema``)."""
        return self._stream.schema.select(self.columns)

    def select(self, *exprs: Any) -> Table:
        """Columns or SQL expressions (``"price * qty AS total"``), as ``SELECT`` would; also Python
        functions called on columns (``add(col("a"), col("b")).alias("total")``, ``funke.table.udf``)."""
        return self._t_env.sql_query(f"SELECT {self._t_env._select_items(exprs)} FROM {self._t_env._anonymous(self)}")

    def where(self, condition: Any) -> Table:
        return self._t_env.sql_query(f"SELECT * FROM {self._t_env._anonymous(self)} WHERE {self._t_env._items([condition])}")

    filter = where

    def group_by(self, *keys: str) -> GroupedTable:
        """Group the rows by these columns; ``select`` then takes aggregates (an updating result, as
        ``GROUP BY`` in Flink SQL): ``t.group_by("k").select("k", "SUM(v) AS total")``."""
        return GroupedTable(self, keys)

    def window(self, window: GroupWindow) -> GroupWindowedTable:
        """A group window (``funke.table.windows``: ``Tumble``, ``Slide``, ``Session``) to group by:
        ``t.window(Tumble.over(fk.seconds(10)).on("ts").alias("w")).group_by("w", "k").select("k", "w.start", "COUNT(*) AS n")``."""
        if not isinstance(window, GroupWindow):
            raise PlanError(f"window() takes Tumble, Slide or Session from funke.table.windows, got {window!r}")
        return GroupWindowedTable(self, window)

    def execute(self) -> TableResult:
        """Run this table's query as its own job; ``collect()`` on the result yields its rows as they come."""
        from funke.connectors.sinks import CollectSink

        sink = CollectSink()
        # (funke's changelog stream, also where a subclass's to_changelog_stream gives another kind of stream)
        stream = StreamTableEnvironment.to_changelog_stream(self._t_env, self) if self.updating else self._stream
        node = nodes.Sink((stream.node,), spec=sink, explicit_uid="collect")
        return TableResult(self._t_env._run([node], f"{self._t_env.env.app}-collect"), sink)

    def explain(self) -> str:
        """The plan of this table's stream (per node: uid, native or general path, and why)."""
        from funke.plan.explain import explain as explain_plan

        return explain_plan([self._stream.node], mode="streaming")

    def __repr__(self) -> str:
        return f"Table({', '.join(self.columns)})"


class GroupedTable(GroupedFunctionCalls):
    """``table.group_by(keys)``: ``select`` its keys and aggregates (SQL expressions, or Python aggregate
    functions called on columns); ``aggregate`` and ``flat_aggregate`` (``funke.table.udf_table``)."""

    def __init__(self, table: Table, keys: Sequence[str]) -> None:
        self._table, self._keys = table, tuple(keys)

    def select(self, *exprs: Any) -> Table:
        t_env = self._table._t_env
        group = f" GROUP BY {', '.join(self._keys)}" if self._keys else ""
        return t_env.sql_query(f"SELECT {t_env._select_items(exprs)} FROM {t_env._anonymous(self._table)}{group}")


class GroupWindowedTable:
    """``table.window(w)``: ``group_by`` the window's alias (and keys)."""

    def __init__(self, table: Table, window: GroupWindow) -> None:
        self._table, self._window = table, window

    def group_by(self, *keys: str) -> WindowGroupedTable:
        if self._window.name not in keys:
            raise PlanError(f"group_by() of a windowed table must name the window ({self._window.name!r}) among {keys}")
        return WindowGroupedTable(self._table, self._window, tuple(k for k in keys if k != self._window.name))


class WindowGroupedTable:
    """``table.window(w).group_by(w, keys)``: ``select`` the keys, the window's ``w.start``, ``w.end``,
    ``w.rowtime`` and aggregates; one row per window and key when the window closes."""

    def __init__(self, table: Table, window: GroupWindow, keys: tuple[str, ...]) -> None:
        self._table, self._window, self._keys = table, window, keys

    def select(self, *exprs: Any) -> Table:
        t_env, w = self._table._t_env, self._window
        tvf = w.tvf(t_env._anonymous(self._table).strip("`"), self._keys)
        items = ", ".join(window_columns(t_env._items([e]), str(w.name)) for e in exprs)
        return t_env.sql_query(f"SELECT {items} FROM {tvf} GROUP BY {', '.join(('window_start', 'window_end', *self._keys))}")


class StreamTableEnvironment(FunctionCalls):
    """Flink's ``StreamTableEnvironment`` over a funke ``StreamEnvironment``.

    >>> import funke as fk
    >>> from funke.table import StreamTableEnvironment
    >>> env = fk.StreamEnvironment(app="sql")
    >>> t_env = StreamTableEnvironment.create(env)
    >>> t_env.create_temporary_view("orders", env.from_collection([{"item": "a", "qty": 3}], "item string, qty int"))
    >>> t_env.sql_query("SELECT item, qty / 2 AS half FROM orders WHERE qty > 1").columns
    ('item', 'half')
    """

    #: The class of the tables it makes (``funke.pyflink.table`` makes PyFlink's).
    _table: type[Table] = Table

    def __init__(self, env: Any):
        self.env = env
        self._config = self._config_class(env)
        self._views: dict[str, Table] = {}
        self._static: dict[str, StaticTable] = {}
        self._anonymous_views = 0
        self._tables: dict[str, TableDef] = {}
        self._read: dict[str, DataStream] = {}  # a DDL table's source stream, made once
        self._functions = FunctionCatalog()
        #: Each CREATE VIEW view's columns whose Flink type is known (DESCRIBE's type and null columns).
        self._known: dict[str, dict[str, tuple[str, bool]]] = {}
        #: The tables and views created TEMPORARY (``funke.table.drops``: Flink drops them apart).
        self._temporary: set[str] = set()
        #: Each CREATE VIEW view's statement and its text; the views a DROP left stale, planned again when read.
        self._view_queries: dict[str, tuple[exp.Create, str]] = {}
        self._stale: set[str] = set()

    @classmethod
    def create(cls, env: Any) -> StreamTableEnvironment:
        return cls(env)

    @property
    def _config_class(self) -> type[TableConfig]:
        return TableConfig

    def get_config(self) -> TableConfig:
        """The options queries are planned with (``get_config().set("table.exec.state.ttl", "1 h")``)."""
        return self._config

    def from_data_stream(self, stream: DataStream) -> Table:
        """A stream as a table: its columns, its event time (the watermark's column) as the time attribute."""
        if not isinstance(stream, DataStream):
            raise PlanError(f"from_data_stream() takes a DataStream, got {type(stream).__name__}")
        return self._table(self, stream)

    def from_changelog_stream(self, stream: DataStream, *, changelog_mode: str = "all", key: Sequence[str] | None = None) -> Table:
        """A stream of changes as an updating table, each row's kind in its column ``row_kind`` (as ``to_changelog_stream``
        gives them); ``changelog_mode="upsert"`` with the ``key``: normalized as Flink does (``funke.table.upsert``)."""
        return self._table(self, changes_table_stream(self.from_data_stream(stream)._stream, ROW_KIND_NAME, changelog_mode, key, self._config.state_ttl_ms))

    def create_temporary_view(self, name: str, stream_or_table: DataStream | Table | StaticTable) -> None:
        """Name a stream or table for SQL (``FROM name``); a view of the same name is replaced. A static
        table (``fk.table(rows, schema)``) is what a lookup join reads (``JOIN name FOR SYSTEM_TIME AS OF ...``)."""
        if isinstance(stream_or_table, StaticTable):
            self._views.pop(name, None)
            self._static[name] = stream_or_table
            self._temporary.add(name)
            return
        self._static.pop(name, None)
        table = stream_or_table if isinstance(stream_or_table, Table) else self.from_data_stream(stream_or_table)
        self._views[name] = table
        self._temporary.add(name)
        self._view_queries.pop(name, None)
        self._stale.discard(name)
        self._known[name] = getattr(table, "_known_columns", {})  # (a Table made without __init__: none known)

    def list_temporary_views(self) -> list[str]:
        return sorted(name for name in (*self._views, *self._static) if not name.startswith(_ANONYMOUS))

    def sql_query(self, sql: str) -> Table:
        """Plan one ``SELECT`` (Flink SQL) over the views and tables; see ``funke.table.planner`` for what runs."""
        tree = parse(sql, self._functions.names())
        table = self._table(self, self._planned(sql, tree))
        table._known_columns = view_columns(tree, self._known_columns)
        return table

    def execute_sql(self, sql: str) -> TableResult:
        """Run one statement: ``CREATE TABLE`` (registers the table: see ``funke.table.connectors`` for its
        connectors) or ``INSERT INTO table SELECT ...``, which starts a job writing the table (named
        after the environment's app; ``wait()`` on the result waits for it)."""
        if is_function_ddl(sql):
            self._functions.execute(sql)
            return TableResult()
        if is_namespace_statement(sql):
            return self._namespace(sql)
        if is_wrapped(sql):  # EXPLAIN ..., EXECUTE STATEMENT SET BEGIN ... END, EXECUTE INSERT ... (funke.table.statements)
            script = read_script(sql)
            statements = self._statements(script)
            if any(e is not None for e in script.explained):
                return TableResult(content=(["result"], [[self._explain(statements, script.text)]]), is_plan=True)
            if script.statement_set:
                return TableResult(self._run([self._set_insert(s, script.text) for s in statements], self.env.app))
            sql = script.text
        statement = parse(sql, self._functions.names())
        if isinstance(statement, exp.Insert) or is_create_as(statement):
            return TableResult(self._run([self._insert(statement, sql)], self.env.app))
        if isinstance(statement, exp.Set):  # SET 'key' = 'value': the table config's option (TableConfig)
            self._config.set_statement(statement, sql)
            return TableResult()
        if _is_reset(statement):
            self._config.reset_statement(statement, sql)
            return TableResult()
        self._ddl(statement, sql)
        return TableResult()

    def create_statement_set(self) -> StatementSet:
        """Several ``INSERT INTO`` statements run as one job (``add_insert_sql``, then ``execute``)."""
        return StatementSet(self)

    def explain_sql(self, sql: str) -> str:
        """The plan of a query, an ``INSERT INTO`` or a statement set (``STATEMENT SET BEGIN ...; END``), as
        ``EXPLAIN`` gives it: funke's plan (``funke.plan.explain``), not Flink's optimizer's."""
        script = read_script(sql)
        return self._explain(self._statements(script), script.text)

    def list_tables(self) -> list[str]:
        """The tables and views of the (one) database, as Flink's ``listTables``."""
        return sorted({*self._tables, *self.list_temporary_views()})

    def list_views(self) -> list[str]:
        return self.list_temporary_views()

    def list_catalogs(self) -> list[str]:
        """Flink's default catalog, funke's one (``funke.table.namespace``)."""
        return [DEFAULT_CATALOG]

    def list_databases(self) -> list[str]:
        return [DEFAULT_DATABASE]

    def get_current_catalog(self) -> str:
        return DEFAULT_CATALOG

    def get_current_database(self) -> str:
        return DEFAULT_DATABASE

    def use_catalog(self, catalog_name: str) -> None:
        """Flink's ``useCatalog``: the default catalog is the one there is; another is refused, naming it."""
        check(catalog_name, None, f"use_catalog({catalog_name!r})")

    def use_database(self, database_name: str) -> None:
        check(None, database_name, f"use_database({database_name!r})")

    def _namespace(self, sql: str) -> TableResult:
        """``USE ...`` (Flink's defaults only) or ``SHOW ...``: a one-column result, as Flink answers."""
        if (catalog := catalog_statement(sql)) is not None:
            verb, name = catalog
            if name == DEFAULT_CATALOG:
                why = "a catalog of that name exists already" if verb == "CREATE" else "the catalog in use cannot be dropped"
                raise PlanError(f"Flink SQL: {verb} CATALOG {name}: {why} (Flink's default)")
            check(name, None, f"{verb} CATALOG {name}")
        used = use_statement(sql)
        if used is not None:
            check(*used, " ".join(sql.split()))
            return TableResult()
        show = show_statement(sql)
        if show is None:
            raise refuse_statement(sql)
        if show.what == "COLUMNS":
            rows = self._describe(show.table or "", " ".join(sql.split()))
            shown = like(show.like, [r[0] for r in rows], negated=show.negated)
            return TableResult(content=(DESCRIBE_COLUMNS, [r for r in rows if r[0] in shown]))
        names = {
            "CATALOGS": self.list_catalogs,
            "DATABASES": self.list_databases,
            "CURRENT CATALOG": lambda: [self.get_current_catalog()],
            "CURRENT DATABASE": lambda: [self.get_current_database()],
            "TABLES": self.list_tables,
            "VIEWS": self.list_views,
            "FUNCTIONS": lambda: function_names(self.list_user_defined_functions()),
            "USER FUNCTIONS": self.list_user_defined_functions,
        }[show.what]()
        return TableResult(content=([COLUMNS[show.what]], [[v] for v in like(show.like, names, negated=show.negated)]))

    def _describe(self, name: str, statement: str) -> list[list[Any]]:
        """DESCRIBE's rows for a table or view (``funke.table.describe``)."""
        if name in self._tables:
            t = self._tables[name]
            return table_rows(t, self._source(name).schema if t.computed and CONNECTORS[t.connector].source else None, statement)
        if name in self._views:
            return view_rows(self._views[name].get_schema(), self._known.get(name, {}), self._views[name]._stream.node, statement)
        if name in self._static:
            return view_rows(self._static[name].schema, {}, None, statement)
        raise unknown_table(name, statement, [n for n in {*self._tables, *self._views, *self._static} if not n.startswith(_ANONYMOUS)])

    def execute_script(self, script: str) -> None:
        """A SQL script: each ``CREATE TABLE`` registered, each ``INSERT INTO`` added to the environment's
        job (all of them run together when the environment executes, as ``funke sql FILE.sql`` does)."""
        read = read_script(script)
        text = read.text
        for statement, explain in zip(self._statements(read), read.explained, strict=True):
            own = statement.sql(dialect=Flink) if isinstance(statement, (exp.Use, exp.Command, exp.Describe)) else ""
            if explain is not None:  # (EXPLAIN ...: its plan printed, as Flink's SQL client prints it)
                print(self._explain([statement], text))
            elif _is_reset(statement):
                self._config.reset_statement(statement, text)
            elif is_namespace_statement(own):  # (USE, CREATE CATALOG: checked; SHOW, DESCRIBE: its table printed, as Flink's SQL client does)
                shown = self._namespace(own).content
                if shown is not None:
                    print(tableau(*shown))
            elif isinstance(statement, exp.Insert) or is_create_as(statement):
                sinks = merged_inserts([*self.env.sinks, self._insert(statement, text)])
                self.env._sinks = sinks
            elif isinstance(statement, exp.Set):
                self._config.set_statement(statement, text)
            else:
                self._ddl(statement, text)

    # -- internals ---------------------------------------------------------------------------
    def _statements(self, script: Script) -> list[exp.Expression]:
        """The statements of a script read by ``read_script``, one for each of its ``explained`` entries."""
        statements = [s for s, _ in parse_script(script.text, self._functions.names()) if not isinstance(s, exp.Semicolon)]
        if len(statements) != len(script.explained):
            raise PlanError(f"Flink SQL: cannot tell the statements of this script apart:\n{script.text}")
        return statements

    def _set_insert(self, statement: exp.Expression, sql: str) -> nodes.Sink:
        if not isinstance(statement, exp.Insert):
            raise PlanError(f"Flink SQL: a statement set holds INSERT INTO statements only, not {statement.sql(dialect=Flink)[:60]}")
        return self._insert(statement, sql)

    def _explain(self, statements: list[exp.Expression], sql: str) -> str:
        """funke's plan of ``statements``: a query or INSERTs (a statement set's, together)."""
        from funke.plan.explain import explain as explain_plan

        planned = []
        for statement in statements:
            if isinstance(statement, exp.Insert) or is_create_as(statement):
                planned.append(self._insert(statement, sql))
            elif isinstance(statement, (exp.Query, exp.Values)) and len(statements) == 1:
                planned.append(self._planned(sql, statement).node)
            else:
                raise PlanError(
                    f"Flink SQL: EXPLAIN takes a query, an INSERT INTO or a statement set of them, not {statement.sql(dialect=Flink)[:60]}"
                )
        return explain_plan(planned, mode="batch" if self._batch_mode() else "streaming", latency_mode=self.env.latency_mode)

    def _planner(self, sql: str) -> Planner:
        views: dict[str, Any] = {name: (lambda t=t: t._stream) for name, t in self._views.items()}
        views.update({name: (lambda name=name: self._replanned(name)._stream) for name in self._stale})
        views.update({name: (lambda t=t: t) for name, t in self._static.items()})
        views.update({name: (lambda name=name: self._source(name)) for name in self._tables if name not in views})
        lookups: dict[str, Any] = {}
        for name, t in self._tables.items():  # a table a lookup join reads (jdbc, filesystem): its StaticTable
            connector = CONNECTORS[t.connector]
            if connector.lookup is not None and name not in self._views:
                if connector.source is None:  # (only a lookup join reads it)
                    views[name] = lambda t=t, make=connector.lookup: make(t)
                else:
                    lookups[name] = lambda t=t, make=connector.lookup: make(t)
        self._functions.job_parameters = self._config.job_parameters
        return Planner(
            views, sql, state_ttl_ms=self._config.state_ttl_ms, functions=self._functions, lookups=lookups, batch=self._batch_mode(),
            rows=self._numbered_rows,
        )  # fmt: skip

    def _numbered_rows(self, count: int) -> Any:
        """A bounded stream of ``count`` rows numbered 0, 1, ... (``_fk_row``): what VALUES rows are computed over."""
        return self.env.from_collection([{"_fk_row": i} for i in range(count)], "_fk_row int")

    def _ddl(self, statement: exp.Expression, sql: str) -> None:
        at = lambda node: position(node, sql)
        if (text := function_ddl_text(statement)) is not None:  # (in a script: CREATE / DROP FUNCTION)
            self._functions.execute(text)
            return
        if isinstance(statement, exp.Drop):
            self._drop(drop_statement(statement, at(statement)))
            return
        if not isinstance(statement, exp.Create):
            raise UnsupportedError(
                f"Flink SQL: a {type(statement).__name__.upper()} statement (at {at(statement)}) is not supported by "
                "execute_sql; it runs CREATE TABLE, CREATE VIEW, INSERT INTO, EXECUTE STATEMENT SET, EXPLAIN, SHOW and USE (sql_query runs SELECT)"
            )
        if statement.args.get("kind") == "VIEW":
            self._create_view(statement, sql)
            return
        if like_of(statement) is not None:  # (CREATE TABLE ... LIKE base: funke.table.like)
            statement = like_table(statement, self._tables, {*self._views, *self._static}, at(statement))
        t = table_def(statement, sql, at)
        if t.name in self._tables or t.name in self._views:
            if statement.args.get("exists"):
                return
            raise PlanError(f"Flink SQL: a table or view named {t.name!r} exists already (CREATE TABLE IF NOT EXISTS keeps it)")
        self._tables[t.name] = t
        if is_temporary(statement):
            self._temporary.add(t.name)

    def drop_table(self, table_path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop a table CREATE TABLE declared (Flink's ``dropTable``): True if it was there (``funke.table.drops``)."""
        return self._drop(api_drop("TABLE", table_path, temporary=False, if_exists=ignore_if_not_exists))

    def drop_view(self, view_path: str, ignore_if_not_exists: bool = True) -> bool:
        return self._drop(api_drop("VIEW", view_path, temporary=False, if_exists=ignore_if_not_exists))

    def drop_temporary_table(self, table_path: str) -> bool:
        """Drop a temporary table: True if there was one of the name, else False (Flink's ``dropTemporaryTable``)."""
        drop = api_drop("TABLE", table_path, temporary=True, if_exists=True)
        return drop.name in self._temporary and drop.name in self._tables and self._drop(drop)

    def drop_temporary_view(self, view_path: str) -> bool:
        drop = api_drop("VIEW", view_path, temporary=True, if_exists=True)
        return drop.name in self._temporary and drop.name not in self._tables and self._drop(drop)

    def _drop(self, drop: Drop) -> bool:
        """Drop a table or view by Flink's rules (``funke.table.drops``): True if it was there; the views over it stale."""
        objects = self._tables if drop.kind == "TABLE" else {**self._views, **self._static}
        exists = drop.name in objects and not drop.name.startswith(_ANONYMOUS)
        if (error := drop.refusal(exists, drop.name in self._temporary)) is not None:
            raise error
        if not exists:
            return False
        for store in (self._tables, self._views, self._static, self._read, self._known, self._view_queries):
            store.pop(drop.name, None)
        self._temporary.discard(drop.name)
        self._stale.discard(drop.name)
        self._stale |= stale_views({v: named(s.expression) for v, (s, _) in self._view_queries.items()}, {drop.name})
        return True

    def _replanned(self, name: str) -> Table:
        """A view a DROP left stale planned again from its statement, over the tables and views there are now."""
        statement, sql = self._view_queries[name]
        view, known = self._views.pop(name), self._known.pop(name, {})
        try:
            self._create_view(statement, sql)
        except PlanError:
            self._views[name], self._known[name] = view, known
            raise
        return self._views[name]

    def _create_view(self, statement: exp.Create, sql: str) -> None:
        """``CREATE [TEMPORARY] VIEW [IF NOT EXISTS] v [(c1, c2, ...)] AS SELECT ...``: the query planned
        now, over the views and tables there are, and named (``create_temporary_view``)."""
        target = statement.this
        table = target.this if isinstance(target, exp.Schema) else target
        name = object_name(table, f"CREATE VIEW {table.sql()} (at {position(table, sql)})")
        if name in self._tables or name in self._views or name in self._static:
            if statement.args.get("exists"):
                return
            raise PlanError(f"Flink SQL: a table or view named {name!r} exists already (CREATE VIEW IF NOT EXISTS keeps it)")
        query = self._table(self, self._planned(sql, statement.expression))
        known = view_columns(statement.expression, self._known_columns)
        if isinstance(target, exp.Schema):
            names = [c.name for c in target.expressions]
            if len(names) != len(query.columns):
                raise PlanError(
                    f"Flink SQL: view {name} at {position(table, sql)} names {len(names)} column(s) ({', '.join(names)}) "
                    f"for a query of {len(query.columns)} ({', '.join(query.columns)})"
                )
            known = {x: known[c] for c, x in zip(query.columns, names, strict=True) if c in known}
            query = query.select(*(c if c == x else f"`{c}` AS `{x}`" for c, x in zip(query.columns, names, strict=True)))
        self._views[name] = query
        self._known[name] = known
        self._view_queries[name] = (statement, sql)
        self._stale.discard(name)
        if is_temporary(statement):
            self._temporary.add(name)

    def _known_columns(self, name: str) -> dict[str, tuple[str, bool]] | None:
        """A table's or view's columns whose Flink type is known, with whether they are NOT NULL (DESCRIBE)."""
        if name in self._tables:
            return table_columns(self._describe(name, f"DESCRIBE {name}"))
        return self._known.get(name)

    def _source(self, name: str) -> DataStream:
        """The stream a DDL table is read as (``funke.table.table_io.table_stream``), made once."""
        if name not in self._read:
            self._read[name] = table_stream(self.env, self._tables[name], self._functions, self._config.state_ttl_ms)
        return self._read[name]

    def _insert(self, statement: exp.Insert | exp.Create, sql: str) -> nodes.Sink:
        """``INSERT INTO t [(columns)] SELECT ...`` as the sink node writing ``t`` (``funke.table.table_io.insert_sink``);
        a ``CREATE TABLE t WITH (...) AS SELECT ...`` creates ``t`` with the query's columns first (with IF NOT EXISTS,
        a table there is written, as in Flink)."""
        before = dict(self._tables)
        if isinstance(statement, exp.Create):
            create, statement = create_as(statement, self._planned(sql, statement.expression), self._known_columns, sql)
            self._ddl(create, sql)
        try:
            return insert_sink(self._tables, statement, sql, lambda tree: self._planned(sql, tree), self._known_columns, self._config.state_ttl_ms)
        except Exception:  # (a CTAS's table is not created when its INSERT is refused, as in Flink)
            self._tables.clear(), self._tables.update(before)
            raise

    def _run(self, sinks: list[nodes.Sink], name: str) -> Any:
        """Start a job of exactly ``sinks`` (not the environment's other sinks, as Flink runs each INSERT)."""
        bounded = self._bounded(sinks)
        saved = self.env._sinks
        self.env._sinks = merged_inserts(sinks)
        try:
            return self.env.execute(name=name, bounded=bounded)
        finally:
            self.env._sinks = saved

    def _planned(self, sql: str, tree: exp.Expression) -> Any:
        """A query's stream as Flink plans it for the mode: in batch mode, an updating result's final rows
        (``funke.table.sort.SortLowering.final_rows``)."""
        planner = self._planner(sql)
        refuse_multiset_functions(tree, sql, self._known_columns)
        stream = planner.lower(tree)
        return planner.final_rows(stream) if self._batch_mode() and is_updating(stream) else stream

    def _batch_mode(self) -> bool:
        """Whether queries are planned for batch mode (the environment's ``runtime_mode``): Flink plans a
        query for its environment's mode, and a sort of the whole result runs in batch mode only."""
        return self.env.runtime_mode == "batch"

    def _bounded(self, sinks: list[nodes.Sink]) -> bool | None:
        """Whether the job of ``sinks`` runs as a batch job (None: as the environment's runtime mode says)."""
        return None

    def to_data_stream(self, table: Table) -> DataStream:
        """The table as a DataStream (an insert-only table: every row an insert)."""
        if not isinstance(table, Table):
            raise PlanError(f"to_data_stream() takes a Table, got {type(table).__name__}")
        if table.updating:
            raise PlanError(
                f"to_data_stream() takes an insert-only table, and this one is updating ({changelog_mode(table._stream.node).describe()}: "
                f"{UPDATING}): to_changelog_stream() gives its changes, each row with its kind"
            )
        return table._stream

    def to_changelog_stream(self, table: Table, *, changelog_mode: str = "all", key: Sequence[str] | None = None) -> DataStream:
        """The table's changes as a DataStream: each row with its kind in a first column ``row_kind``,
        Flink's ``RowKind``: ``+I`` insert, ``-U`` the row as it was before an update, ``+U`` as it is
        after, ``-D`` delete. Every row of an insert-only table is an insert.

        ``changelog_mode="upsert"`` (Flink's ``ChangelogMode.upsert()``): one row per ``key`` (default: the
        table's upsert key, ``explain()`` names it), its changes ``+I``, ``+U`` (the row now; no ``-U``)
        and ``-D``: applied by key in order, the last change wins."""
        if not isinstance(table, Table):
            raise PlanError(f"to_changelog_stream() takes a Table, got {type(table).__name__}")
        if ROW_KIND_NAME in table.columns:
            raise PlanError(f"to_changelog_stream(): the table has a column named {ROW_KIND_NAME!r}, where the row kinds go; rename it")
        if changelog_mode not in ("all", "upsert"):
            raise PlanError(f"to_changelog_stream(): changelog_mode is 'all' (every kind) or 'upsert', got {changelog_mode!r}")
        stream = table._stream
        if changelog_mode == "upsert":
            key = self._upsert_key(table, key)
            stream = upserts(stream if table.updating else self._as_changelog(stream), key, self._config.state_ttl_ms)
        elif key is not None:
            raise PlanError("to_changelog_stream(): key= is for changelog_mode='upsert'")
        kind = f"`{ROW_KIND}` AS {ROW_KIND_NAME}" if is_updating(stream) else f"'{INSERT}' AS {ROW_KIND_NAME}"
        return stream.select(kind, *(f"`{c}`" for c in table.columns))

    def _upsert_key(self, table: Table, key: Sequence[str] | None) -> list[str]:
        if key is None:
            found = changelog_mode(table._stream.node).upsert_key
            if not found:
                raise PlanError(
                    f"to_changelog_stream(changelog_mode='upsert'): the table has no upsert key ({changelog_mode(table._stream.node).describe()}): "
                    "name the columns that identify a row, key=[...]"
                )
            return list(found)
        key = list(key)
        if unknown := [c for c in key if c not in table.columns]:
            raise PlanError(f"to_changelog_stream(): key column {unknown[0]!r} is not a column of the table ({', '.join(table.columns)})")
        return key

    @staticmethod
    def _as_changelog(stream: DataStream) -> DataStream:
        return stream.with_column(ROW_KIND, Sql(f"'{INSERT}'", declared="string"))

    def _anonymous(self, table: Table) -> str:
        self._anonymous_views += 1
        name = f"{_ANONYMOUS}{self._anonymous_views}"
        self._views[name] = table
        return f"`{name}`"


def _is_reset(statement: exp.Expression) -> bool:
    """Flink SQL's ``RESET ['key']`` (the dialect reads it as a command)."""
    return isinstance(statement, exp.Command) and str(statement.this).upper() == "RESET"
