"""Flink SQL's ``CREATE TABLE``: a table's columns, computed columns, watermark, primary key and
connector, and the funke source or sink each connector is.

Connectors (Flink's names and options; an option funke does not know is refused, never ignored):

* ``datagen`` (source): ``rows-per-second`` (default 10 000), ``number-of-rows`` (default: unbounded),
  per field ``fields.<f>.kind`` = ``random`` (default; ``min``/``max`` for numbers, ``length`` for
  strings, ``max-past`` for timestamps) or ``sequence`` (``start``/``end``; the table ends with its
  shortest sequence). Unlike Flink's, the random values are a pure function of the row number, so
  a run is replayable; a timestamp is the micro-batch's clock minus a random part of ``max-past``.
* ``filesystem`` (source and sink): ``path``, ``format`` (``parquet``, ``json``, ``csv``), and for a
  source ``source.monitor-interval`` (new files are read as they land). A json sink writes a null
  field as ``null``, or leaves it out with ``json.encode.ignore-null-fields`` = ``true``. A sink ``PARTITIONED BY (cols)``
  writes ``col=value/...`` directories (a NULL value: ``partition.default-name``, ``__DEFAULT_PARTITION__``)
  and commits partitions with a success file (``sink.partition-commit.policy.kind`` = ``success-file``,
  ``.trigger`` ``process-time`` or ``partition-time``, ``.delay``, ``.success-file.name``;
  ``partition.time-extractor.timestamp-pattern`` / ``-formatter``: ``funke.connectors.partitions``).
  The rolling options (``sink.rolling-policy.rollover-interval``, ``check-interval``,
  ``inactivity-interval``) are met by Spark's file sink, whose micro-batches each finish their own files.
* ``print`` (sink): rows to the terminal.
* ``jdbc`` (sink; PostgreSQL): ``url`` (``jdbc:postgresql://host:port/db``), ``table-name``,
  ``username``, ``password``; with a ``PRIMARY KEY ... NOT ENFORCED`` the sink upserts by it.
* ``kafka`` (source and sink): ``topic``, ``properties.bootstrap.servers``, ``format`` (``json``,
  ``csv``), ``scan.startup.mode`` (``earliest-offset``, ``latest-offset``),
  ``sink.delivery-guarantee`` (``exactly-once``, the default, or ``at-least-once``: what
  ``SET 'execution.latency-mode' = 'realtime'`` writes with); a sink keys its records by the primary key.
* ``redis-stream`` (source, funke's): ``stream``, ``url``.
* ``nexmark`` (source): the Nexmark benchmark's events (``funke.connectors.nexmark``): ``first-event.rate``
  (= ``next-event.rate``; events per second of event time, 10 000), ``events.num`` (0: unbounded),
  ``person.proportion``, ``auction.proportion``, ``bid.proportion`` (1, 3, 46), the hot ratios
  ``auction.hot-ratio.sellers``, ``bid.hot-ratio.auctions``, ``bid.hot-ratio.bidders`` (4, 2, 4), and
  ``rate.limited`` (false: as fast as Spark goes; true: ``first-event.rate`` rows a second). A
  micro-batch holds at most a second of event time (``first-event.rate`` rows).
* ``blackhole`` (sink): computes every row and keeps none (inserts and changelogs).

``WATERMARK FOR ts AS ts - INTERVAL 'n' unit`` is Flink SQL's watermark, ``max(ts) - n``: the
DataStream strategy ``for_bounded_out_of_orderness(n - 1 ms)`` (whose watermark is ``max - bound - 1``),
so windows close at the same instants as in Flink SQL. ``WATERMARK FOR ts AS ts`` (no delay) is refused:
funke's watermark trails the largest timestamp by at least 1 ms.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, urlsplit

from sqlglot import exp

from funke.dialect.date_arithmetic import interval_ms
from funke.dialect.syntax import Flink, is_multiset, parse
from funke.errors import PlanError, UnsupportedError
from funke.semantics.watermarks import WatermarkStrategy
from funke.table.namespace import check, object_name
from funke.table.time_of_day import check_time_columns, spark_time_type, time_truncated

_TYPES = {
    exp.DataType.Type.BIGINT: "bigint", exp.DataType.Type.INT: "int", exp.DataType.Type.SMALLINT: "smallint",
    exp.DataType.Type.TINYINT: "tinyint", exp.DataType.Type.BOOLEAN: "boolean", exp.DataType.Type.DOUBLE: "double",
    exp.DataType.Type.FLOAT: "float", exp.DataType.Type.TEXT: "string", exp.DataType.Type.VARCHAR: "string",
    exp.DataType.Type.CHAR: "string", exp.DataType.Type.TIMESTAMP: "timestamp", exp.DataType.Type.TIMESTAMPLTZ: "timestamp",
    exp.DataType.Type.DATE: "date",
}  # fmt: skip
#: The datagen connector's defaults (Flink's).
DATAGEN_ROWS_PER_SECOND = 10_000
DATAGEN_STRING_LENGTH = 100


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

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns) + tuple(c for c, _ in self.computed)

    def strategy(self) -> WatermarkStrategy | None:
        """The DataStream watermark strategy of ``WATERMARK FOR`` (see the module docstring)."""
        if self.watermark is None:
            return None
        column, delay_ms = self.watermark
        return WatermarkStrategy(max_out_of_orderness_ms=delay_ms - 1, timestamp_column=column)


def table_def(create: exp.Create, sql: str, at: Callable[[exp.Expression], str]) -> TableDef:
    """Read one ``CREATE TABLE`` statement; anything funke would not honour is refused, naming it."""
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
    for item in create.this.expressions:
        if isinstance(item, exp.ColumnDef):
            constraints = item.args.get("constraints") or []
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
            watermark = _watermark(item, at)
            watermark_sql = flink_sql(item.args["expression"])
        elif isinstance(item, exp.PrimaryKey):
            key, key_name = _primary_key(key, [e.name for e in item.expressions], item, None, at(item))
        elif isinstance(item, exp.Constraint) and [type(e) for e in item.expressions] == [exp.PrimaryKey]:
            pk = item.expressions[0]
            key, key_name = _primary_key(key, [e.name for e in pk.expressions], pk, item.this, at(item))
        else:
            raise UnsupportedError(f"Flink SQL: {item.sql()} (at {at(item)}) in CREATE TABLE is not supported by funke")
    names = [c for c, _ in columns] + [c for c, _ in computed]
    for c in {*key, *([watermark[0]] if watermark else [])}:
        if c not in names:
            raise PlanError(f"Flink SQL: table {name} has no column {c!r}; it has {', '.join(names)}")
    if watermark and dict(columns).get(watermark[0], "timestamp") != "timestamp":
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
        raise PlanError(f"Flink SQL: table {name} needs WITH ('connector' = ...): one of {', '.join(sorted(CONNECTORS))}")
    if connector not in CONNECTORS:
        raise UnsupportedError(f"Flink SQL: the connector {connector!r} of table {name} is not supported by funke; "
                               f"these are: {', '.join(sorted(CONNECTORS))}")  # fmt: skip
    definition = TableDef(
        name, tuple(columns), tuple(computed), watermark, key, connector, options, sql, frozenset(instants), partition_by,
        tuple(declared), frozenset({*not_null, *key}), watermark_sql, key_name,
    )  # fmt: skip
    if partition_by and connector != "filesystem":
        raise UnsupportedError(f"Flink SQL: PARTITIONED BY of table {name}: the {connector} connector writes no partitions; the filesystem connector does")
    CONNECTORS[connector].check(definition)
    items = [item for item in create.this.expressions if isinstance(item, exp.ColumnDef)]
    check_time_columns(name, connector, options.get("format"), items, at)
    return definition


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
            f"write 'connector' = ... with the connector's options: one of {', '.join(sorted(CONNECTORS))}"
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


# -- connectors --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Connector:
    """What one connector takes (``options``; ``fields`` are per-column ``fields.<f>.<option>``) and
    the funke source or sink it is (None: it is not that kind)."""

    options: frozenset[str]
    source: Callable[[TableDef], Any] | None = None
    sink: Callable[[TableDef], Any] | None = None
    fields: frozenset[str] = frozenset()
    #: The sink for an updating query's changelog (its kinds in a ``row_kind`` column); None: inserts only.
    changelog: Callable[[TableDef], Any] | None = None
    #: The table a lookup join reads (``JOIN t FOR SYSTEM_TIME AS OF ...``); None: not a lookup table.
    lookup: Callable[[TableDef], Any] | None = None

    def check(self, t: TableDef) -> None:
        for option in t.options:
            parts = option.split(".")
            per_field = len(parts) == 3 and parts[0] == "fields" and parts[2] in self.fields
            if per_field and parts[1] not in t.names:
                raise PlanError(f"Flink SQL: table {t.name}: option {option!r} names no column (columns: {', '.join(t.names)})")
            if option not in self.options and not per_field:
                known = sorted(self.options) + [f"fields.<column>.{f}" for f in sorted(self.fields)]
                raise UnsupportedError(
                    f"Flink SQL: table {t.name}: the {t.connector} option {option!r} is not supported by funke; "
                    f"it takes: {', '.join(known)}"
                )


def _required(t: TableDef, option: str) -> str:
    if option not in t.options:
        raise PlanError(f"Flink SQL: table {t.name} ({t.connector}) needs the option {option!r}")
    return t.options[option]


def _number(t: TableDef, option: str, default: float | None = None) -> float | None:
    text = t.options.get(option)
    if text is None:
        return default
    try:
        return float(text)
    except ValueError:
        raise PlanError(f"Flink SQL: table {t.name}: option {option!r} must be a number, got {text!r}") from None


def _ddl(t: TableDef) -> str:
    return ", ".join(f"`{c}` {ty}" for c, ty in t.columns)


def _datagen(t: TableDef) -> Any:
    from funke.connectors.sources import generator

    columns: dict[str, str] = {}
    rows = _number(t, "number-of-rows")
    for seed, (name, ty) in enumerate(t.columns, start=1):
        opt = lambda o, d=None: _number(t, f"fields.{name}.{o}", d)  # noqa: E731
        kind = t.options.get(f"fields.{name}.kind", "random")
        rand = f"xxhash64(i, {seed})"
        if kind == "sequence":
            if ty not in ("tinyint", "smallint", "int", "bigint"):
                raise PlanError(f"Flink SQL: table {t.name}: a sequence field must be an integer, {name} is {ty}")
            start, end = opt("start"), opt("end")
            if start is None or end is None or end < start:
                raise PlanError(
                    f"Flink SQL: table {t.name}: sequence field {name} needs fields.{name}.start <= fields.{name}.end"
                )
            columns[name] = f"CAST({int(start)} + i AS {ty})"
            rows = min(rows, end - start + 1) if rows is not None else end - start + 1
        elif kind != "random":
            raise PlanError(f"Flink SQL: table {t.name}: fields.{name}.kind must be 'random' or 'sequence', got {kind!r}")
        elif ty in ("tinyint", "smallint", "int", "bigint"):
            lo, hi = int(opt("min", 0)), int(opt("max", {"tinyint": 127, "smallint": 32767, "int": 2**31 - 1}.get(ty, 2**62)))
            columns[name] = f"CAST({lo} + pmod({rand}, {hi - lo + 1}) AS {ty})"
        elif ty in ("double", "float") or ty.startswith("decimal"):
            lo, hi = opt("min", 0.0), opt("max", 1.0)
            columns[name] = f"CAST({lo!r} + ({hi!r} - {lo!r}) * (pmod({rand}, 9007199254740992) / 9007199254740992.0) AS {ty})"
        elif ty == "boolean":
            columns[name] = f"pmod({rand}, 2) = 1"
        elif ty == "string":
            length = int(opt("length", DATAGEN_STRING_LENGTH))
            columns[name] = f"substr(repeat(sha2(CAST({rand} AS STRING), 256), {length // 64 + 1}), 1, {length})"
        elif ty == "timestamp":
            past = int(opt("max-past", 0))
            columns[name] = f"timestamp_millis(unix_millis(current_timestamp()) - pmod({rand}, {past + 1}))"
        elif ty == "date":
            columns[name] = "current_date()"
        else:
            raise PlanError(f"Flink SQL: table {t.name}: datagen cannot make {name} of type {ty}")
    rate = _number(t, "rows-per-second", DATAGEN_ROWS_PER_SECOND)
    return generator(columns, schema=_ddl(t), events=int(rows) if rows is not None else None, rows_per_second=rate)


def _nexmark(t: TableDef) -> Any:
    """Nexmark's events (``funke.connectors.nexmark``), into the table's ``event_type`` and ROW columns."""
    from funke.connectors.nexmark import FIELDS, Nexmark
    from funke.connectors.sources import generator
    from funke.plan.types import struct_fields

    rate = _number(t, "first-event.rate", 10_000)
    if _number(t, "next-event.rate", rate) != rate:
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: next-event.rate differs from first-event.rate; funke's nexmark has one rate (no rate.shape)"
        )
    ints = {o: int(_number(t, o, d)) for o, d in (("person.proportion", 1), ("auction.proportion", 3), ("bid.proportion", 46),
            ("auction.hot-ratio.sellers", 4), ("bid.hot-ratio.auctions", 2), ("bid.hot-ratio.bidders", 4), ("events.num", 0))}  # fmt: skip
    limited = _flag(t, "rate.limited")
    model = Nexmark(rate, ints["person.proportion"], ints["auction.proportion"], ints["bid.proportion"],
                    ints["auction.hot-ratio.sellers"], ints["bid.hot-ratio.auctions"], ints["bid.hot-ratio.bidders"])  # fmt: skip
    fields: dict[str, tuple[str, ...]] = {}
    for name, ty in t.columns:
        if name == "event_type" and ty in ("tinyint", "smallint", "int", "bigint"):
            continue
        row = struct_fields(ty)
        if name not in FIELDS or not row:
            raise PlanError(
                f"Flink SQL: table {t.name}: a nexmark table's columns are event_type INT and the ROWs person, auction and bid "
                f"(fields of each: {'; '.join(f'{k}: {chr(44).join(v)}' for k, v in FIELDS.items())}); {name} {ty} is none of them"
            )
        fields[name] = tuple(row)
    made = model.columns(fields)
    columns = {name: made[name] for name, _ in t.columns}
    events = ints["events.num"] or None
    # a micro-batch holds at most one second of event time, so the watermark moves on in steps of a second at most
    return generator(columns, schema=_ddl(t), events=events, rows_per_second=rate if limited else None,
                     rows_per_batch=max(1, int(rate)))  # fmt: skip


def _files_source(t: TableDef) -> Any:
    from funke.connectors.sources import files

    if t.partition_by:
        raise UnsupportedError(f"Flink SQL: reading the partitioned filesystem table {t.name} is not supported by funke yet; it writes them")
    monitor = t.options.get("source.monitor-interval")
    interval = interval_text_ms(monitor, f"table {t.name}") if monitor else None
    return files(_required(t, "path"), schema=_ddl(t), format=_required(t, "format"), monitor_continuously=interval)


def _files_lookup(t: TableDef) -> Any:
    """A filesystem table in a lookup join (``JOIN t FOR SYSTEM_TIME AS OF s.pt``): its files read whole by
    Spark (Flink's filesystem lookup loads the whole file too, and reloads it after a TTL)."""
    from funke.connectors.tables import spark_table

    if t.partition_by:
        raise UnsupportedError(f"Flink SQL: a lookup join of the partitioned filesystem table {t.name} is not supported by funke yet")
    path, fmt, schema = _required(t, "path"), _required(t, "format"), _ddl(t)
    if fmt not in ("csv", "json", "parquet"):
        raise UnsupportedError(f"Flink SQL: table {t.name}: the format {fmt!r} in a lookup join is not supported by funke (csv, json, parquet)")
    cuts = [(c, time_truncated(c, ty)) for c, ty in t.columns]

    def read(spark: Any) -> Any:  # (a TIME read cut to its precision, as Flink's reader keeps it)
        df = spark.read.schema(schema).format(fmt).load(path)
        return df.selectExpr(*(f"{cut} AS `{c}`" if cut else f"`{c}`" for c, cut in cuts)) if any(cut for _, cut in cuts) else df

    return spark_table(read, schema, name=t.name)


#: Flink's duration units (``TimeUtils``), in ms.
_DURATION_UNITS = {
    **dict.fromkeys(("ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1_000),
    **dict.fromkeys(("min", "m", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
}


def interval_text_ms(text: str, where: str) -> int:
    """Flink's duration options: a number and a unit (``10 s``, ``500ms``, ``1 min``, ``2 hours``, ``1d``),
    a bare number being milliseconds; ``where`` names the option's place in an error.

    >>> [interval_text_ms(v, "table x") for v in ("10 s", "500ms", "1 min", "2 hours", "1d", "250", " 3 SECONDS ")]
    [10000, 500, 60000, 7200000, 86400000, 250, 3000]
    >>> interval_text_ms("ten s", "table x")
    Traceback (most recent call last):
    ...
    funke.errors.PlanError: Flink SQL: table x: 'ten s' is not a duration (e.g. '10 s', '500 ms', '1 min')
    """
    number = text.strip()
    digits = len(number) - len(number.lstrip("0123456789"))
    value, unit = number[:digits], number[digits:].strip().lower() or "ms"
    if not value or unit not in _DURATION_UNITS:
        raise PlanError(f"Flink SQL: {where}: {text!r} is not a duration (e.g. '10 s', '500 ms', '1 min')")
    return int(value) * _DURATION_UNITS[unit]


#: A filesystem table's partition options (Flink's names), with the Flink default where funke reads one.
PARTITION_OPTIONS = frozenset({
    "partition.default-name", "sink.partition-commit.trigger", "sink.partition-commit.delay", "sink.partition-commit.policy.kind",
    "sink.partition-commit.success-file.name", "partition.time-extractor.kind", "partition.time-extractor.timestamp-pattern",
    "partition.time-extractor.timestamp-formatter", "sink.partition-commit.watermark-time-zone",
})  # fmt: skip
#: Rolling options a Spark file sink meets: each micro-batch writes and finishes files of its own, so no part
#: file stays open longer than a micro-batch (Flink rolls a part file after these intervals at most).
ROLLING_OPTIONS = frozenset({"sink.rolling-policy.rollover-interval", "sink.rolling-policy.check-interval", "sink.rolling-policy.inactivity-interval"})
#: The json format's option to leave null fields out of a record written (Flink's default: write them ``null``).
IGNORE_NULL_FIELDS = "json.encode.ignore-null-fields"
#: Flink's ``partition.default-name``: the directory of a NULL partition value.
DEFAULT_PARTITION = "__DEFAULT_PARTITION__"


def _files_sink(t: TableDef) -> Any:
    from funke.connectors.sinks import files

    fmt, ignore = _required(t, "format"), _flag(t, IGNORE_NULL_FIELDS)
    if IGNORE_NULL_FIELDS in t.options and fmt != "json":
        raise PlanError(f"Flink SQL: table {t.name}: {IGNORE_NULL_FIELDS!r} is an option of the json format, not of {fmt}")
    return files(_required(t, "path"), format=fmt, partition_by=t.partition_by, commit=_partition_commit(t), ignore_null_fields=ignore)


def _flag(t: TableDef, option: str) -> bool:
    """A true/false option of ``t`` (any case; false when not given)."""
    value = t.options.get(option, "false").lower()
    if value not in ("true", "false"):
        raise PlanError(f"Flink SQL: table {t.name}: {option} must be true or false, got {value!r}")
    return value == "true"


def _partition_commit(t: TableDef) -> Any:
    """The partition commit a filesystem table's options ask for (``sink.partition-commit.*``), or None."""
    from funke.connectors.partitions import PartitionCommit

    o = t.options
    commit_options = sorted(k for k in o if k.startswith(("sink.partition-commit.", "partition.time-extractor.")))
    if not t.partition_by and (commit_options or "partition.default-name" in o):
        raise PlanError(f"Flink SQL: table {t.name}: {(commit_options or ['partition.default-name'])[0]!r} is for a table with PARTITIONED BY")
    policy = o.get("sink.partition-commit.policy.kind")
    if policy is None:
        if commit_options:
            raise PlanError(
                f"Flink SQL: table {t.name}: {commit_options[0]!r} without 'sink.partition-commit.policy.kind' commits nothing; "
                "name the policy: 'success-file'"
            )
        return None
    if policy != "success-file":
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: the partition commit policy {policy!r} is not supported by funke; it writes 'success-file' "
            "(no metastore: a Spark file sink's partitions are directories)"
        )
    if o.get("partition.time-extractor.kind", "default") != "default":
        raise UnsupportedError(f"Flink SQL: table {t.name}: partition.time-extractor.kind {o['partition.time-extractor.kind']!r}: funke reads 'default'")
    if o.get("sink.partition-commit.watermark-time-zone", "UTC") != "UTC":
        raise UnsupportedError(f"Flink SQL: table {t.name}: sink.partition-commit.watermark-time-zone: funke reads partition times in 'UTC'")
    delay = o.get("sink.partition-commit.delay")
    return PartitionCommit(
        o.get("sink.partition-commit.trigger", "process-time"),
        interval_text_ms(delay, f"table {t.name}") if delay else 0,
        o.get("partition.time-extractor.timestamp-pattern"),
        o.get("partition.time-extractor.timestamp-formatter"),
        o.get("sink.partition-commit.success-file.name", "_SUCCESS"),
    )


def _print_sink(t: TableDef) -> Any:
    from funke.table.print_sink import RowsPrint

    columns = tuple((c, "timestamp_ltz" if c in t.instants else ty) for c, ty in t.columns)  # (instants: ...05Z)
    return RowsPrint(columns, t.options.get("print-identifier"))


def _blackhole(t: TableDef) -> Any:
    from funke.connectors.sinks import blackhole

    return blackhole()


def _jdbc_sink(t: TableDef) -> Any:
    from funke.connectors.postgres import postgres

    mode = "upsert" if t.primary_key else "append"
    return postgres(_required(t, "table-name"), dsn=_jdbc_dsn(t), mode=mode, key=list(t.primary_key) or None)


def _jdbc_dsn(t: TableDef) -> str:
    """A jdbc table's PostgreSQL connection URL (libpq's), from ``url``, ``username`` and ``password``."""
    url = _required(t, "url")
    if not url.startswith("jdbc:postgresql://"):
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: the jdbc url {url!r} is not PostgreSQL's; funke writes PostgreSQL only"
        )
    parts = urlsplit(url.removeprefix("jdbc:"))
    user, password = t.options.get("username"), t.options.get("password")
    auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "") + "@" if user else ""
    return f"postgresql://{auth}{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def _jdbc_lookup(t: TableDef) -> Any:
    """A jdbc table in a lookup join: read whole in every micro-batch (the table as it is then)."""
    from funke.connectors.postgres import postgres_table

    return postgres_table(_required(t, "table-name"), _ddl(t), dsn=_jdbc_dsn(t), name=t.name)


def _jdbc_changelog_sink(t: TableDef) -> Any:
    """An updating query into a jdbc table: upserted and deleted by its primary key."""
    if not t.primary_key:
        raise UnsupportedError(
            f"Flink SQL: table {t.name} (jdbc) has no PRIMARY KEY, so it takes inserts only, and the query's result "
            "is updating: declare the key, PRIMARY KEY (...) NOT ENFORCED, to upsert"
        )
    return replace(_jdbc_sink(t), changes="row_kind")


def _kafka_options(t: TableDef) -> tuple[str, str, str]:
    fmt = t.options.get("format", "json")
    if fmt not in ("json", "csv"):
        raise UnsupportedError(f"Flink SQL: table {t.name}: kafka format {fmt!r} is not supported by funke (json, csv)")
    return _required(t, "topic"), _required(t, "properties.bootstrap.servers"), fmt


def _kafka_source(t: TableDef) -> Any:
    from funke.connectors.kafka import kafka

    topic, bootstrap, fmt = _kafka_options(t)
    mode = t.options.get("scan.startup.mode", "earliest-offset")
    starting = {"earliest-offset": "earliest", "latest-offset": "latest"}.get(mode)
    if starting is None:
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: scan.startup.mode {mode!r} is not supported (earliest-offset, latest-offset)"
        )
    return kafka(topic, schema=_ddl(t), bootstrap=bootstrap, format=fmt, starting=starting)


def _kafka_sink(t: TableDef) -> Any:
    from funke.connectors.kafka_sink import kafka

    topic, bootstrap, fmt = _kafka_options(t)
    delivery = t.options.get("sink.delivery-guarantee", "exactly-once")
    if delivery not in ("exactly-once", "at-least-once"):
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: sink.delivery-guarantee {delivery!r} is not supported (exactly-once, at-least-once)"
        )
    return kafka(topic, bootstrap=bootstrap, format=fmt, key=list(t.primary_key) or None, delivery=delivery)


def _redis_source(t: TableDef) -> Any:
    from funke.connectors.redis_streams import redis_stream

    return redis_stream(_required(t, "stream"), schema=_ddl(t), url=t.options.get("url", "redis://127.0.0.1:6379/0"))


CONNECTORS: dict[str, Connector] = {
    "datagen": Connector(frozenset({"rows-per-second", "number-of-rows"}), source=_datagen,
                         fields=frozenset({"kind", "min", "max", "start", "end", "length", "max-past"})),
    "filesystem": Connector(frozenset({"path", "format", "source.monitor-interval", IGNORE_NULL_FIELDS}) | PARTITION_OPTIONS | ROLLING_OPTIONS,
                            source=_files_source, sink=_files_sink, lookup=_files_lookup),
    "print": Connector(frozenset({"print-identifier"}), sink=_print_sink, changelog=_print_sink),
    "jdbc": Connector(frozenset({"url", "table-name", "username", "password"}), sink=_jdbc_sink, changelog=_jdbc_changelog_sink,
                   lookup=_jdbc_lookup),
    "kafka": Connector(frozenset({"topic", "properties.bootstrap.servers", "format", "scan.startup.mode", "sink.delivery-guarantee"}),
                       source=_kafka_source, sink=_kafka_sink),
    "redis-stream": Connector(frozenset({"stream", "url"}), source=_redis_source),
    "nexmark": Connector(frozenset({"first-event.rate", "next-event.rate", "events.num", "person.proportion", "auction.proportion",
                                    "bid.proportion", "rate.limited", "auction.hot-ratio.sellers", "bid.hot-ratio.auctions",
                                    "bid.hot-ratio.bidders"}), source=_nexmark),
    "blackhole": Connector(frozenset(), sink=_blackhole, changelog=_blackhole),
}  # fmt: skip
