"""A ``CREATE TABLE`` table read and written.

``table_stream`` is the stream a query reads the table as: its connector's source, TIME columns cut to their
precision, the metadata columns named and cast as declared, the computed columns, the columns in the order
declared (as Flink's ``SELECT *``), the watermark. ``insert_sink`` is the sink ``INSERT INTO`` writes through:
columns by position or by the list named, cast to the table's types, NOT NULL enforced, a NULL partition
value named, an updating result upserted by the primary key. ``create_as`` reads Flink's ``CREATE TABLE t WITH (...)
AS SELECT ...`` as the CREATE TABLE of the query's columns (their Flink types and NOT NULL) and the INSERT INTO of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlglot import exp

from funke.dialect.syntax import parse, position
from funke.errors import PlanError, UnsupportedError
from funke.plan import nodes
from funke.plan.expr import Sql
from funke.table.changelog import DELETE, INSERT, RETRACT, ROW_KIND, ROW_KIND_NAME, ChangelogMode, changelog_mode, state_mode
from funke.table.connectors import CONNECTORS, DEFAULT_PARTITION, TIMESTAMP_STANDARD
from funke.table.ddl import TableDef
from funke.table.describe import view_columns, view_rows
from funke.table.drops import is_temporary
from funke.table.insert_checks import check_sink_types, not_null_check
from funke.table.lowering import is_updating
from funke.table.namespace import object_name
from funke.table.planner import Planner
from funke.table.time_of_day import time_truncated
from funke.table.upsert import by_key, normalized, with_versions

#: What makes a result updating, for messages.
UPDATING = "a GROUP BY without a window, DISTINCT, a regular Top-N, a deduplication, an outer join, or one over such a result"


def table_stream(env: Any, t: TableDef, functions: Any, state_ttl_ms: int | None = None) -> Any:
    """The stream ``t`` is read as (a DataStream of ``env``); ``functions``: the catalog its computed columns call;
    ``state_ttl_ms``: the state TTL of an upsert source's normalization."""
    make = CONNECTORS[t.connector].source
    if make is None:
        raise PlanError(f"Flink SQL: table {t.name} ({t.connector}) can only be written (INSERT INTO), not read")
    source = make(t)
    stream = env.from_source(source, uid=f"table-{t.name}", name=t.name)
    key = getattr(source, "upsert_key", ())
    # (an upsert source's rows carry their kind, +I, or -D for a tombstone; a Debezium topic's, each change's)
    kind = [f"`{ROW_KIND}`"] if key or getattr(source, "envelope", "") else []
    if kind and not key:  # (Flink's planner takes a CDC table's primary key as its changes' upsert key)
        state_mode(stream.node, ChangelogMode(RETRACT.kinds, t.primary_key or None))
    cuts = [(c, ty, time_truncated(c, ty)) for c, ty in t.columns]
    if any(cut for _, _, cut in cuts):  # (a TIME read cut to its precision, as Flink's reader keeps it)
        stream = stream.select(*kind, *(Sql(f"{cut} AS `{c}`", declared=ty) if cut else f"`{c}`" for c, ty, cut in cuts))
    if t.metadata:  # (each metadata column as the connector's source gives it, named and cast as declared)
        given = CONNECTORS[t.connector].metadata
        read = [*(f"`{c}`" for c, _ in t.columns), *(Sql(f"CAST(`{given[m.key][0]}` AS {m.type}) AS `{m.name}`", declared=m.type) for m in t.metadata)]
        stream = stream.select(*kind, *read)
    planner = Planner({}, t.sql, functions=functions)
    for column, formula in t.computed:
        planner.check_calls(formula)
        stream = stream.with_column(column, planner.column_value(formula, stream.schema))
    if list(stream.columns) != [ROW_KIND] * len(kind) + list(t.names):  # (SELECT * reads the columns in the order declared)
        stream = stream.select(*kind, *(f"`{c}`" for c in t.names))
    strategy = t.strategy()
    if key:  # (as a changelog of whole rows, as Flink's planner reads an upsert source: ChangelogNormalize)
        state_mode(stream.node, ChangelogMode(frozenset({INSERT, DELETE}), key))
        upserts, stream = stream, normalized(stream, key, state_ttl_ms)
        if strategy is not None:  # (a tombstone has no time: the watermark comes after)
            stream = stream.assign_timestamps_and_watermarks(strategy)
            versions = upserts.filter(f"`{ROW_KIND}` = '{INSERT}'").select(*(f"`{c}`" for c in t.names))
            with_versions(stream, versions.assign_timestamps_and_watermarks(strategy))
    elif strategy is not None:
        stream = stream.assign_timestamps_and_watermarks(strategy)
    return stream


def insert_sink(
    tables: Mapping[str, TableDef],
    statement: exp.Insert,
    sql: str,
    plan: Callable[[exp.Expression], Any],
    known_columns: Callable[[str], Any],
    state_ttl_ms: int | None,
) -> nodes.Sink:
    """``INSERT INTO t [(columns)] SELECT ...`` as the sink node writing ``t`` of ``tables``; ``plan`` plans the query,
    ``known_columns`` gives a view's Flink column types (the casts Flink makes), ``state_ttl_ms`` the upsert state's TTL."""
    target = statement.this
    columns = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else None
    table = target.this if isinstance(target, exp.Schema) else target
    name = object_name(table, f"INSERT INTO {table.sql()} (at {position(table, sql)})")
    if name not in tables:
        known = ", ".join(sorted(tables)) or "none"
        raise PlanError(
            f"Flink SQL: INSERT INTO {name} (at {position(table, sql)}): no table of that name "
            f"(CREATE TABLE it); tables: {known}"
        )
    t = tables[name]
    make = CONNECTORS[t.connector].sink
    if make is None:
        raise PlanError(f"Flink SQL: table {name} ({t.connector}) can only be read, not written (INSERT INTO)")
    if statement.args.get("overwrite"):
        raise UnsupportedError(f"Flink SQL: INSERT OVERWRITE (at {position(statement, sql)}) is not supported by funke")
    stream = plan(statement.expression)
    updating = is_updating(stream)
    if updating:
        make = CONNECTORS[t.connector].changelog
        if make is None:
            raise UnsupportedError(
                f"Flink SQL: INSERT INTO {name} (at {position(table, sql)}): the query's result is updating "
                f"({changelog_mode(stream.node).describe()}: {UPDATING}) and a {t.connector} table takes "
                "inserts only; write it to a jdbc or upsert-kafka table with a PRIMARY KEY (upserted by it) or to print"
            )
        if ROW_KIND_NAME in dict(t.columns):
            raise PlanError(f"Flink SQL: table {name} has a column {ROW_KIND_NAME!r}, where an updating result's row kinds go")
    types = dict(t.columns)
    wanted = columns if columns is not None else [c for c in t.names if c in types or c in {m.name for m in t.written}]
    if written := [m for m in t.written if m.name in wanted]:
        m = written[0]
        raise UnsupportedError(
            f"Flink SQL: INSERT INTO {name} writes its metadata column {m.name} ({m.sql}): funke's {t.connector} sink writes "
            f"no metadata; name the columns it writes (INSERT INTO {name} ({', '.join(types)}) ...) or declare {m.name} VIRTUAL"
        )
    if unknown := [c for c in wanted if c not in types]:
        raise PlanError(f"Flink SQL: table {name} has no column {unknown[0]!r}; it has {', '.join(types)}")
    given = [c for c in stream.columns if c != ROW_KIND]
    if len(given) != len(wanted):
        raise PlanError(
            f"Flink SQL: INSERT INTO {name} gives {len(given)} column(s) ({', '.join(given)}) "
            f"for {len(wanted)} ({', '.join(wanted)})"
        )
    by_target = dict(zip(wanted, given, strict=True))
    known = {c: (g, stream.schema.field(g, node=f"INSERT INTO {name}").dtype) for c, g in by_target.items()}
    check_sink_types(t, known, view_columns(statement.expression, known_columns))
    if updating and t.primary_key:  # (upserted by the key: its changes one key at a time, in order)
        missing = [c for c in t.primary_key if c not in by_target]
        if missing:
            raise PlanError(f"Flink SQL: INSERT INTO {name} gives no value for its primary key column {missing[0]!r}")
        stream = by_key(stream, [by_target[c] for c in t.primary_key], state_ttl_ms)
    default = t.options.get("partition.default-name", DEFAULT_PARTITION).replace("'", "''")
    text = writes_text(t)
    iso = t.options.get(TIMESTAMP_STANDARD) == "ISO-8601"  # (checked where the sink is made: connectors.timestamp_standard)
    exprs = []
    for c, ty in t.columns:
        value = f"CAST(`{by_target[c]}` AS {ty})" if c in by_target else f"CAST(NULL AS {ty})"
        if text and ty == "timestamp":  # (Flink's json and csv text of a TIMESTAMP: SQL's, an instant's with a Z)
            value = f"CAST({value} AS STRING)" if not iso else f"REPLACE(CAST({value} AS STRING), ' ', 'T')"
            value = f"CONCAT({value}, 'Z')" if c in t.instants else value
        if c in t.not_null:  # (Flink's table.exec.sink.not-null-enforcer, ERROR: the job fails on a NULL)
            if c not in by_target:
                raise PlanError(f"Flink SQL: INSERT INTO {name} gives no value for its NOT NULL column {c!r}")
            value = not_null_check(name, c, value)
        if c in t.partition_by:  # (a NULL partition value's directory is Flink's partition.default-name)
            value = f"COALESCE(CAST({value} AS STRING), '{default}')"
        exprs.append(f"{value} AS `{c}`")
    if updating:  # (the kinds first, named as to_changelog_stream names them)
        exprs.insert(0, f"`{ROW_KIND}` AS {ROW_KIND_NAME}")
    out = stream.select(*exprs)
    return nodes.Sink((out.node,), spec=make(t), explicit_uid=f"insert-{name}")



def writes_text(t: TableDef) -> bool:
    """Whether ``t``'s sink writes its rows as Flink's json or csv format (a filesystem, kafka or upsert-kafka table),
    which writes a TIMESTAMP as SQL's text (``2024-05-01 12:00:10.25``, the fraction's trailing zeros cut), a
    TIMESTAMP_LTZ with a ``Z`` after it."""
    fmt = {"filesystem": "format", "kafka": "format", "upsert-kafka": "value.format"}.get(t.connector)
    return fmt is not None and t.options.get(fmt, "json" if t.connector == "kafka" else "") in ("json", "csv")


def is_create_as(statement: exp.Expression) -> bool:
    """Whether ``statement`` is a ``CREATE TABLE ... AS SELECT ...`` (Flink's CTAS)."""
    return isinstance(statement, exp.Create) and (statement.args.get("kind") or "").upper() == "TABLE" and statement.expression is not None


def create_as(statement: exp.Create, query: Any, known_columns: Mapping[str, Any], sql: str) -> tuple[exp.Create, exp.Insert]:
    """A CTAS as the CREATE TABLE of its ``query``'s columns (their Flink types and NOT NULL, as DESCRIBE gives them)
    and the INSERT INTO of its query. Its own schema, as Flink 2's: columns the query has not (computed ones too) come first,
    in the order written, then the query's, a type written for one of them in its place (the INSERT casts to it, as
    Flink's, or refuses it); a PRIMARY KEY (of NOT NULL columns) and a WATERMARK; or a list of the query's column names,
    which orders them. TEMPORARY is refused, as Flink refuses it."""
    where = f"CREATE TABLE ... AS SELECT (at {position(statement, sql)})"
    if is_temporary(statement):
        raise UnsupportedError(f"Flink SQL: {where}: a CREATE TABLE AS SELECT creates no temporary table, as in Flink; CREATE TABLE it")
    rows = view_rows(query.schema.select([c for c in query.columns if c != ROW_KIND]), view_columns(statement.expression, known_columns), query.node, sql)
    columns = [(r[0], r[1].split(" *")[0], not r[2]) for r in rows]
    table = statement.this.this if isinstance(statement.this, exp.Schema) else statement.this
    own = list(statement.this.expressions) if isinstance(statement.this, exp.Schema) else []
    names = [name for name, _, _ in columns]
    declared = {name: (f"`{name}` {kind}{' NOT NULL' if not_null else ''}", not_null) for name, kind, not_null in columns}
    if own and all(isinstance(e, exp.Identifier) for e in own):  # (b, a): the query's columns in this order
        listed = [e.name for e in own]
        if sorted(listed) != sorted(names):
            raise PlanError(
                f"Flink SQL: {where}: the column list ({', '.join(listed)}) must name each of the query's columns "
                f"({', '.join(names)}) once, as in Flink"
            )
        schema = parse(f"CREATE TABLE t ({', '.join(declared[n][0] for n in listed)})").this.expressions
    elif any(isinstance(e, exp.Identifier) for e in own):
        raise PlanError(f"Flink SQL: {where}: its schema is a list of the query's column names or columns with types, not both")
    else:
        typed = {e.name: e for e in own if isinstance(e, exp.ColumnDef)}
        for name, given in typed.items():
            if name in declared and given.find(exp.NotNullColumnConstraint) is not None and not declared[name][1]:
                raise PlanError(f"Flink SQL: {where}: column {name} is declared NOT NULL, and the query's {name} can be NULL (Flink refuses it too)")
        nullable = {n for n, (_, not_null) in declared.items() if not not_null and (n not in typed or typed[n].find(exp.NotNullColumnConstraint) is None)}
        for key in (e for e in own if isinstance(e, exp.PrimaryKey)):
            loose = [c.name for c in key.expressions if c.name in nullable]
            if loose:
                raise PlanError(f"Flink SQL: {where}: the PRIMARY KEY's column {loose[0]} can be NULL, and Flink's keys are NOT NULL (Flink refuses it too)")
        new = [e.copy() for e in own if isinstance(e, exp.ColumnDef) and e.name not in declared]
        queried = [typed[n].copy() if n in typed else parse(f"CREATE TABLE t ({declared[n][0]})").this.expressions[0] for n in names]
        schema = new + queried + [e.copy() for e in own if not isinstance(e, exp.ColumnDef)]
    create = statement.copy()
    create.set("expression", None)
    create.set("this", exp.Schema(this=table.copy(), expressions=schema))
    # (with a schema of its own Flink writes the query's columns by name, the others NULL, into a table there already
    # too; without one, by position)
    into = exp.Schema(this=table.copy(), expressions=[exp.to_identifier(n, quoted=True) for n in names]) if own else table.copy()
    return create, exp.Insert(this=into, expression=statement.expression.copy())
