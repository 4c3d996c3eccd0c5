"""Flink SQL's ``CREATE TABLE``: a table's columns (physical, computed and metadata ones), watermark,
primary key, ``PARTITIONED BY`` and ``WITH`` options, as a ``TableDef``. What each connector is in funke,
and its options, is ``funke.table.connectors``.

``WATERMARK FOR ts AS ts - INTERVAL 'n' unit`` is Flink SQL's watermark, ``max(ts) - n``: the
DataStream strategy ``for_bounded_out_of_orderness(n - 1 ms)`` (whose watermark is ``max - bound - 1``),
so windows close at the same instants as in Flink SQL. ``WATERMARK FOR ts AS ts`` is a bound of -1 ms.

A metadata column, ``name TYPE METADATA [FROM 'key'] [VIRTUAL]``, reads the connector's ``key`` (the
column's name without ``FROM``), cast to ``TYPE``; a ``VIRTUAL`` one is left out of what INSERT INTO writes.
As in Flink, one key is read by one column, and a primary key's columns are physical ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlglot import exp

from funke.dialect.date_arithmetic import interval_ms
from funke.dialect.syntax import Flink, MetadataColumn, is_multiset, parse
from funke.errors import PlanError, UnsupportedError
from funke.semantics.watermarks import WatermarkStrategy
from funke.table.namespace import check, object_name
from funke.table.time_of_day import check_time_columns, spark_time_type

_TYPES = {
    exp.DataType.Type.BIGINT: "bigint", exp.DataType.Type.INT: "int", exp.DataType.Type.SMALLINT: "smallint",
    exp.DataType.Type.TINYINT: "tinyint", exp.DataType.Type.BOOLEAN: "boolean", exp.DataType.Type.DOUBLE: "double",
    exp.DataType.Type.FLOAT: "float", exp.DataType.Type.TEXT: "string", exp.DataType.Type.VARCHAR: "string",
    exp.DataType.Type.CHAR: "string", exp.DataType.Type.TIMESTAMP: "timestamp", exp.DataType.Type.TIMESTAMPLTZ: "timestamp",
    exp.DataType.Type.DATE: "date",
}  # fmt: skip


@dataclass(frozen=True)
class Metadata:
    """A column ``name TYPE METADATA [FROM 'key'] [VIRTUAL]``: the connector's metadata ``key``, read as ``type``."""

    name: str
    key: str
    #: funke's type of the column, and Flink's as declared (DESCRIBE shows it).
    type: str
    declared: str
    #: Read only: INSERT INTO leaves it out.
    virtual: bool
    #: ``METADATA ...`` as written (DESCRIBE's extras).
    sql: str


@dataclass(frozen=True)
class TableDef:
    """A table ``CREATE TABLE`` declared."""

    name: str
    #: Physical columns, (name, funke type), in order.
    columns: tuple[tuple[str, str], ...]
    #: Computed columns, (name, expression), in order after the physical ones.
    computed: tuple[tuple[str, exp.Expression], ...]
    #: (time column, Flink SQL delay in ms) of ``WATERMARK FOR``, or None.
    watermark: tuple[str, int] | None
    primary_key: tuple[str, ...]
    connector: str
    options: Mapping[str, str]
    sql: str
    #: The physical columns declared TIMESTAMP_LTZ (funke holds them as Spark's TIMESTAMP; print shows instants).
    instants: frozenset[str] = frozenset()
    #: ``PARTITIONED BY`` columns, in order (a filesystem table's directories ``col=value/...``).
    partition_by: tuple[str, ...] = ()
    #: Each physical column's type as Flink writes it (``DECIMAL(10, 2)``, ``TIMESTAMP(3)``): what DESCRIBE shows.
    declared: tuple[str, ...] = ()
    #: The columns declared ``NOT NULL``, and the primary key's (Flink's key columns are NOT NULL).
    not_null: frozenset[str] = frozenset()
    #: ``WATERMARK FOR``'s expression as Flink writes it (``ts - INTERVAL '5' SECOND``, its names quoted), or None.
    watermark_sql: str | None = None
    #: The primary key's constraint name: ``CONSTRAINT name``'s, else Flink's ``PK_`` and the columns joined by ``_``.
    key_name: str | None = None
    #: The metadata columns (``METADATA FROM 'key'``), in order.
    metadata: tuple[Metadata, ...] = ()
    #: Every column's name in the order declared (empty: the physical ones, then the computed ones).
    order: tuple[str, ...] = ()
    #: The CREATE TABLE statement (``LIKE`` merges it into another).
    statement: exp.Create | None = field(default=None, compare=False, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        """The table's columns as SELECT * reads them: in the order declared, as Flink's."""
        return self.order or tuple(c for c, _ in self.columns) + tuple(c for c, _ in self.computed)

    @property
    def written(self) -> tuple[Metadata, ...]:
        """The metadata columns INSERT INTO writes (Flink's persisted ones: not VIRTUAL)."""
        return tuple(m for m in self.metadata if not m.virtual)

    def strategy(self) -> WatermarkStrategy | None:
        """The DataStream watermark strategy of ``WATERMARK FOR`` (see the module docstring)."""
        if self.watermark is None:
            return None
        column, delay_ms = self.watermark
        return WatermarkStrategy(max_out_of_orderness_ms=delay_ms - 1, timestamp_column=column)


def parsed_table(create: exp.Create, sql: str, at: Callable[[exp.Expression], str]) -> TableDef:
    """Read one ``CREATE TABLE`` statement, its connector not yet checked (``funke.table.connectors.table_def``
    does); anything funke would not honour is refused, naming it."""
    kind = (create.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA", "CATALOG"):
        check(None, create.this.sql(), f"CREATE {kind} (at {at(create)})")  # (refused: funke has Flink's default ones only)
    if kind != "TABLE" or not isinstance(create.this, exp.Schema):
        what = f"CREATE {kind} {create.this.sql(comments=False)[:40]}" if kind != "TABLE" else "CREATE TABLE without columns"
        raise UnsupportedError(
            f"Flink SQL: {what} (at {at(create)}) is not supported by funke: execute_sql takes CREATE TABLE with columns, "
            "CREATE VIEW and INSERT INTO"
        )
    name = object_name(create.this.this, f"CREATE TABLE {create.this.this.sql()} (at {at(create)})")
    columns: list[tuple[str, str]] = []
    computed: list[tuple[str, exp.Expression]] = []
    watermark = None
    watermark_sql = None
    key: tuple[str, ...] = ()
    key_name: str | None = None
    instants: set[str] = set()
    declared: list[str] = []
    not_null: set[str] = set()
    metadata: list[Metadata] = []
    for item in create.this.expressions:
        if isinstance(item, exp.ColumnDef):
            constraints = item.args.get("constraints") or []
            if meta := next((c.kind for c in constraints if isinstance(c.kind, MetadataColumn)), None):
                metadata.append(_metadata(item, meta, constraints, at))
                continue
            formula = next((c.kind.this for c in constraints if isinstance(c.kind, exp.ComputedColumnConstraint)), None)
            for c in constraints:  # (`id INT [CONSTRAINT name] PRIMARY KEY NOT ENFORCED`: a key of one column)
                if isinstance(c.kind, exp.PrimaryKeyColumnConstraint):
                    key, key_name = _primary_key(key, [item.name], c.kind, c.this, at(c))
            other = [
                c for c in constraints
                if not isinstance(c.kind, (exp.ComputedColumnConstraint, exp.NotNullColumnConstraint, exp.PrimaryKeyColumnConstraint))
            ]  # fmt: skip
            if other:
                raise UnsupportedError(
                    f"Flink SQL: the column constraint {other[0].sql()} (at {at(other[0])}) is not supported by funke"
                )
            if any(isinstance(c.kind, exp.NotNullColumnConstraint) and not c.kind.args.get("allow_null") for c in constraints):
                not_null.add(item.name)
            if formula is not None:
                computed.append((item.name, formula))
            else:
                if multiset := next((k for k in item.args["kind"].find_all(exp.DataType) if is_multiset(k)), None):
                    raise UnsupportedError(_multiset_column(item.name, at(multiset)))
                columns.append((item.name, _type(item.args["kind"], at)))
                declared.append(flink_type(item.args["kind"]))
                if item.args["kind"].this == exp.DataType.Type.TIMESTAMPLTZ:
                    instants.add(item.name)
        elif isinstance(item, exp.WatermarkColumnConstraint):
            if watermark is not None:  # (the last one would win: Flink refuses them)
                raise PlanError(f"Flink SQL: multiple WATERMARK declarations (at {at(item)}) are not supported, as in Flink")
            watermark = _watermark(item, at)
            watermark_sql = flink_sql(item.args["expression"])
        elif isinstance(item, exp.PrimaryKey):
            key, key_name = _primary_key(key, [e.name for e in item.expressions], item, None, at(item))
        elif isinstance(item, exp.Constraint) and [type(e) for e in item.expressions] == [exp.PrimaryKey]:
            pk = item.expressions[0]
            key, key_name = _primary_key(key, [e.name for e in pk.expressions], pk, item.this, at(item))
        else:
            raise UnsupportedError(f"Flink SQL: {item.sql()} (at {at(item)}) in CREATE TABLE is not supported by funke")
    names = [item.name for item in create.this.expressions if isinstance(item, exp.ColumnDef)]
    for c in {*key, *([watermark[0]] if watermark else [])}:
        if c not in names:
            raise PlanError(f"Flink SQL: table {name} has no column {c!r}; it has {', '.join(names)}")
    _check_metadata(name, metadata, key)
    if watermark and {**dict(columns), **{m.name: m.type for m in metadata}}.get(watermark[0], "timestamp") != "timestamp":
        raise PlanError(f"Flink SQL: the watermark's column {watermark[0]} of table {name} must be a TIMESTAMP")
    options, partition_by = _options(create, at)
    physical = [c for c, _ in columns]
    for c in partition_by:
        if c not in physical:
            raise PlanError(f"Flink SQL: PARTITIONED BY names no physical column {c!r} of table {name}; it has {', '.join(physical)}")
    if len(set(partition_by)) != len(partition_by) or (partition_by and len(partition_by) == len(physical)):
        raise PlanError(f"Flink SQL: PARTITIONED BY of table {name} names a column twice, or every column (its files would hold none)")
    if "connector" not in options and "connector.type" in options:
        options = _legacy_options(name, options)
    connector = options.pop("connector", None)
    if connector is None:
        raise PlanError(f"Flink SQL: table {name} needs WITH ('connector' = ...)")
    definition = TableDef(
        name, tuple(columns), tuple(computed), watermark, key, connector, options, sql, frozenset(instants), partition_by,
        tuple(declared), frozenset({*not_null, *key}), watermark_sql, key_name, tuple(metadata),
        tuple(names) if metadata or list(names) != [c for c, _ in (*columns, *computed)] else (), create,
    )  # fmt: skip
    items = [item for item in create.this.expressions if isinstance(item, exp.ColumnDef) and item.name in dict(columns)]
    check_time_columns(name, connector, options.get("format"), items, at)
    return definition


def _metadata(item: exp.ColumnDef, meta: MetadataColumn, constraints: list[exp.ColumnConstraint], at: Callable[[exp.Expression], str]) -> Metadata:
    """A metadata column ``name TYPE METADATA [FROM 'key'] [VIRTUAL]`` (its constraints: this one, NOT NULL at most)."""
    if other := [c for c in constraints if not isinstance(c.kind, (MetadataColumn, exp.NotNullColumnConstraint))]:
        raise UnsupportedError(f"Flink SQL: the constraint {other[0].sql(dialect=Flink)} (at {at(other[0])}) of the metadata column {item.name} is not supported by funke")
    key = meta.this.name if meta.this is not None else item.name
    return Metadata(item.name, key, _type(item.args["kind"], at), flink_type(item.args["kind"]), bool(meta.args.get("virtual")),
                    meta.sql(dialect=Flink))  # fmt: skip


def _check_metadata(table: str, metadata: list[Metadata], key: tuple[str, ...]) -> None:
    """Flink's rules for metadata columns: each key read by one column, none of them in the primary key."""
    seen: dict[str, str] = {}
    for m in metadata:
        if m.key in seen:
            raise PlanError(
                f"Flink SQL: table {table}: the columns {seen[m.key]} and {m.name} both read the metadata key {m.key!r}; "
                f"declare one of them, and the other as a computed column ({m.name} AS {seen[m.key]})"
            )
        seen[m.key] = m.name
    if bad := [c for c in key if c in seen.values()]:
        raise PlanError(f"Flink SQL: table {table}: the primary key's column {bad[0]} is a metadata column; a PRIMARY KEY is declared on physical columns")


#: Flink's legacy table descriptors funke reads ('connector.type' = 'filesystem', as Nexmark's q13 writes its
#: side input), each option as today's.
_LEGACY_OPTIONS = {"connector.type": "connector", "connector.path": "path", "format.type": "format"}


def _legacy_options(name: str, options: dict[str, str]) -> dict[str, str]:
    """A legacy ``'connector.type'`` table's options as today's ``'connector'`` ones (a filesystem table);
    any other legacy option is refused, named.

    >>> _legacy_options("s", {"connector.type": "filesystem", "connector.path": "file:///d/s.txt", "format.type": "csv"})
    {'connector': 'filesystem', 'path': 'file:///d/s.txt', 'format': 'csv'}
    """
    other = sorted(set(options) - set(_LEGACY_OPTIONS))
    if other or options["connector.type"] != "filesystem":
        raise UnsupportedError(
            f"Flink SQL: table {name}: the legacy 'connector.type' options (Flink's old table descriptors) funke reads are a "
            f"filesystem table's {', '.join(map(repr, _LEGACY_OPTIONS))}, not {', '.join(map(repr, other)) or repr(options['connector.type'])}; "
            "write 'connector' = ... with the connector's options (funke.table.connectors)"
        )
    return {_LEGACY_OPTIONS[k]: v for k, v in options.items()}


def _type(kind: exp.DataType, at: Callable[[exp.Expression], str]) -> str:
    if kind.this == exp.DataType.Type.STRUCT:  # ROW<name type, ...>: Spark's struct, the fields' names as written
        fields = [f"{f.name}:{_type(f.args['kind'], at)}" for f in kind.expressions if isinstance(f, exp.ColumnDef)]
        if len(fields) != len(kind.expressions) or not fields:
            raise UnsupportedError(f"Flink SQL: the type {kind.sql()} (at {at(kind)}) is not supported by funke: write ROW<name type, ...>")
        return f"struct<{','.join(fields)}>"
    if kind.this == exp.DataType.Type.DECIMAL:
        params = [p.name for p in kind.expressions]
        return f"decimal({','.join(params)})" if params else "decimal(10,0)"
    if kind.this == exp.DataType.Type.TIME:  # (Spark's TIME of milliseconds at most, as Flink's runtime keeps)
        return spark_time_type(kind).args["kind"].lower()
    if kind.this not in _TYPES:
        raise UnsupportedError(f"Flink SQL: the type {kind.sql()} (at {at(kind)}) is not supported by funke")
    return _TYPES[kind.this]


def _multiset_column(column: str, where: str) -> str:
    return (
        f"Flink SQL: the MULTISET column {column} (at {where}) in CREATE TABLE is not supported by funke: funke keeps a "
        "MULTISET as a MAP of each value to its count, which no connector of funke's reads or writes as Flink's MULTISET. "
        "Compute one with COLLECT(...) in a query or a view, and print or collect that (execute_sql('SELECT k, COLLECT(v) "
        "FROM t GROUP BY k').print()); give Python rows one with DataTypes.MULTISET(...) in from_elements"
    )


def flink_type(kind: exp.DataType) -> str:
    """A declared type as Flink writes it back (DESCRIBE): defaults filled in, ``DECIMAL(10, 2)``, ``ROW<`x` INT>``.

    >>> [flink_type(exp.DataType.build(t, dialect=Flink)) for t in ("decimal", "decimal(5)", "timestamp", "varchar(20)", "string")]
    ['DECIMAL(10, 0)', 'DECIMAL(5, 0)', 'TIMESTAMP(6)', 'VARCHAR(20)', 'STRING']
    """
    t, params = kind.this, [p.name for p in kind.expressions]
    if t == exp.DataType.Type.STRUCT:
        fields = [f"`{f.name}` {flink_type(f.args['kind'])}" for f in kind.expressions]
        return f"ROW<{', '.join(fields)}>"
    if t == exp.DataType.Type.DECIMAL:
        precision, scale = (params + ["10", "0"][len(params) :])[:2]
        return f"DECIMAL({precision}, {scale})"
    if t in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPLTZ):
        return f"{'TIMESTAMP' if t == exp.DataType.Type.TIMESTAMP else 'TIMESTAMP_LTZ'}({params[0] if params else 6})"
    if t == exp.DataType.Type.TIME:
        return f"TIME({params[0] if params else 0})"
    if t in (exp.DataType.Type.VARCHAR, exp.DataType.Type.CHAR):
        length = params[0] if params else "1"
        return "STRING" if length == str(2**31 - 1) else f"{t.value}({length})"
    return "STRING" if t == exp.DataType.Type.TEXT else _TYPES[t].upper()


def flink_sql(e: exp.Expression) -> str:
    """An expression as Flink writes it back (DESCRIBE's extras and watermark): names quoted, an interval's
    unit singular (``ts - INTERVAL '5' SECONDS`` as Flink's ``ts - INTERVAL '5' SECOND``, ts quoted)."""

    def singular(n: exp.Expression) -> exp.Expression:
        unit = n.args.get("unit") if isinstance(n, exp.Interval) else None
        if unit is not None and unit.name.upper().endswith("S"):
            n = n.copy()
            n.set("unit", exp.var(unit.name.upper()[:-1]))
        return n

    return e.transform(singular).sql(dialect=Flink, identify=True)


def watermark_strategy(column: str, expression: str, where: str) -> WatermarkStrategy:
    """The DataStream strategy of ``WATERMARK FOR column AS expression`` (declared in ``where``, for messages)."""
    body = parse(f"SELECT {expression}").expressions[0]
    _, delay_ms = _watermark(exp.WatermarkColumnConstraint(this=exp.column(column), expression=body), lambda _: where)
    return WatermarkStrategy(max_out_of_orderness_ms=delay_ms - 1, timestamp_column=column)


def _watermark(item: exp.WatermarkColumnConstraint, at: Callable[[exp.Expression], str]) -> tuple[str, int]:
    column, body = item.this.name, item.expression
    if isinstance(body, exp.Column) and body.name == column and not body.table:  # (AS ts: the largest timestamp, delay 0)
        return column, 0
    if isinstance(body, exp.Sub) and isinstance(body.this, exp.Column) and body.this.name == column:
        delay = interval_ms(body.expression)
        if delay is not None and delay >= 0:
            return column, delay
    raise UnsupportedError(
        f"Flink SQL: the watermark {body.sql()} (at {at(item)}) is not supported by funke; "
        f"write WATERMARK FOR {column} AS {column} - INTERVAL 'n' SECOND (n >= 0; or MILLISECOND, MINUTE, ...), or AS {column}"
    )


def _primary_key(
    held: tuple[str, ...], columns: list[str], node: exp.Expression, name: exp.Expression | None, where: str
) -> tuple[tuple[str, ...], str]:
    """A ``PRIMARY KEY (columns) NOT ENFORCED`` (``CONSTRAINT name`` before it or not): the key and its name."""
    if held:
        raise PlanError(f"Flink SQL: a second PRIMARY KEY at {where}: a table has one primary key")
    if not any("NOT ENFORCED" in str(o).upper() for o in node.args.get("options") or []):
        raise PlanError(f"Flink SQL: PRIMARY KEY at {where} must be NOT ENFORCED (Flink does not check keys)")
    return tuple(columns), name.name if name is not None else "PK_" + "_".join(columns)


def _options(create: exp.Create, at: Callable[[exp.Expression], str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The ``WITH`` options and the ``PARTITIONED BY`` columns."""
    props = create.args.get("properties")
    out: dict[str, str] = {}
    partition_by: tuple[str, ...] = ()
    for p in props.expressions if props is not None else []:
        if isinstance(p, exp.PartitionedByProperty) and isinstance(p.this, exp.Schema):
            partition_by = tuple(c.name for c in p.this.expressions)
            continue
        if isinstance(p, exp.TemporaryProperty):  # (CREATE TEMPORARY TABLE: funke's tables live in the session, as Flink's temporary ones)
            continue
        if type(p) is not exp.Property or "value" not in p.args:  # (other clauses are Property kinds too)
            raise UnsupportedError(f"Flink SQL: {p.sql()} in CREATE TABLE (at {at(create)}) is not supported by funke")
        out[p.this.name if isinstance(p.this, exp.Literal) else p.name] = p.args["value"].name
    return out, partition_by
