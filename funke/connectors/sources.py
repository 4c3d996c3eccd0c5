"""Source descriptions: generator, collection, files. The Spark compiler runs them.

>>> g = generator({"n": "i * 2"}, schema="n bigint", events=10)
>>> (g.bounded, g.schema.names)
(True, ('n',))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from funke.connectors.base import SourceSpec, check_json_rules, check_timestamp_format
from funke.errors import PlanError, SchemaError, UnsupportedError
from funke.plan.expr import Expr, to_expr
from funke.plan.pytypes import as_row, is_typed_class, schema_of_class
from funke.plan.types import Field, Schema, held, python_type_name
from funke.semantics.time import Duration, to_millis

#: Name of the row index a generator's expressions are written in.
GENERATOR_INDEX = "i"


@dataclass(frozen=True, eq=False)
class GeneratorSource(SourceSpec):
    """Deterministic synthetic events: row ``i`` is a pure function of ``i`` (replayable by offset).

    Each column is a Spark SQL expression over the index ``i`` (bigint), evaluated by
    Spark itself, so the generator is not the bottleneck. ``rows_per_second`` throttles it
    (rows are released continuously, not once a second); ``events`` makes it finite.
    Unthrottled, a micro-batch holds ``rows_per_batch`` rows, or with ``batch_seconds`` as
    many as take about that long (adaptive: see ``funke.spark.datasources.BatchSizer``).
    """

    columns: tuple[tuple[str, Expr], ...]
    declared: Schema | None
    events: int | None
    rows_per_second: float | None
    rows_per_batch: int
    batch_seconds: float | None = None
    kind: ClassVar[str] = "generator"

    @property
    def schema(self) -> Schema:
        if self.declared is not None:
            return self.declared
        return Schema(tuple(Field(n, e.dtype(Schema((Field(GENERATOR_INDEX, "bigint"),)), "generator")) for n, e in self.columns))

    @property
    def bounded(self) -> bool:
        return self.events is not None

    def describe(self) -> str:
        n = f"{self.events:,} events" if self.events is not None else "unbounded"
        rate = f", {self.rows_per_second:,.0f} rows/s" if self.rows_per_second else ""
        return f"generator({n}{rate})"

    def fingerprint(self) -> str:
        return repr((self.columns, str(self.declared)))


def generator(
    columns: Mapping[str, Expr | str],
    *,
    schema: str | Schema | None = None,
    events: int | None = None,
    rows_per_second: float | None = None,
    rows_per_batch: int = 1_000_000,
    batch_seconds: float | None = None,
) -> GeneratorSource:
    """A deterministic generator of ``events`` rows (unbounded when ``None``).

    ``columns`` maps each output column to a Spark SQL expression of the row index ``i``;
    ``schema`` (DDL) casts them to declared types. In a streaming run each micro-batch holds
    at most ``rows_per_batch`` rows. ``batch_seconds`` sizes unthrottled micro-batches
    adaptively instead: each takes about that long (larger when Spark's fixed cost per
    batch dominates, smaller when rows get dearer), starting at ``rows_per_batch`` rows.

    Finite, its event time needs no check where its expression provably stays in range for every
    index (``funke.connectors.index_bounds``), and a bounded run knows its rows without counting them.
    """
    if not columns:
        raise PlanError("generator() needs at least one column: {'name': 'SQL expression of i'}")
    if events is not None and events < 0:
        raise PlanError(f"generator(events=...) must be >= 0, got {events}")
    if rows_per_second is not None and rows_per_second <= 0:
        raise PlanError(f"generator(rows_per_second=...) must be positive, got {rows_per_second}")
    if rows_per_batch <= 0:
        raise PlanError(f"generator(rows_per_batch=...) must be positive, got {rows_per_batch}")
    if batch_seconds is not None and (batch_seconds <= 0 or rows_per_second is not None):
        raise PlanError(
            f"generator(batch_seconds={batch_seconds}): give a positive number of seconds, and only to an unthrottled "
            "generator (with rows_per_second the rate decides what each micro-batch holds)"
        )
    declared = Schema.of(schema)
    if declared is not None and declared.names != tuple(columns):
        raise SchemaError(
            f"generator: schema columns ({', '.join(declared.names)}) differ from the expressions' ({', '.join(columns)})"
        )
    return GeneratorSource(
        tuple((k, to_expr(v)) for k, v in columns.items()), declared, events, rows_per_second, rows_per_batch, batch_seconds
    )


@dataclass(frozen=True, eq=False)
class CollectionSource(SourceSpec):
    """Rows held in memory. In streaming mode they arrive ``rows_per_batch`` per micro-batch."""

    rows: tuple[tuple[Any, ...], ...]
    declared: Schema
    rows_per_batch: int | None = None
    kind: ClassVar[str] = "collection"

    @property
    def schema(self) -> Schema:
        return self.declared

    @property
    def bounded(self) -> bool:
        return True

    def describe(self) -> str:
        return f"collection({len(self.rows)} rows)"

    def fingerprint(self) -> str:
        return f"collection({self.declared})"


def collection(rows: Iterable[Any], schema: str | Schema | None = None, *, rows_per_batch: int | None = None) -> CollectionSource:
    """Rows as tuples (with ``schema``) or dicts (schema inferred from the values when not given)."""
    rows = list(rows)
    declared = Schema.of(schema)
    if declared is None:
        declared = _infer_schema(rows)
    tuples = tuple(_as_tuple(r, declared, i) for i, r in enumerate(rows))
    for i, r in enumerate(tuples):
        for v, f in zip(r, declared):
            if not held(v, f.dtype):
                raise SchemaError(
                    f"collection row {i}: column '{f.name}' is declared {f.dtype} but the value {v!r} is {python_type_name(v)}"
                )
    if rows_per_batch is not None and rows_per_batch <= 0:
        raise PlanError(f"rows_per_batch must be positive, got {rows_per_batch}")
    return CollectionSource(tuples, declared, rows_per_batch)


def _infer_schema(rows: Sequence[Any]) -> Schema:
    if rows and is_typed_class(type(rows[0])) and all(type(r) is type(rows[0]) for r in rows):
        return schema_of_class(type(rows[0]))
    if not rows or not all(isinstance(r, Mapping) for r in rows):
        raise SchemaError("from_collection() needs schema= (e.g. 'key string, value bigint') unless the rows are dicts")
    names: list[str] = []
    for r in rows:
        names.extend(k for k in r if k not in names)
    types = {}
    for n in names:
        seen = {python_type_name(r.get(n)) for r in rows} - {None}
        if len(seen) > 1:
            if seen == {"bigint", "double"}:
                seen = {"double"}
            else:
                raise SchemaError(f"from_collection(): column '{n}' holds mixed types {sorted(seen)}; pass schema=")
        types[n] = seen.pop() if seen else "string"
    return Schema(tuple(Field(n, types[n]) for n in names))


def _as_tuple(row: Any, schema: Schema, i: int) -> tuple[Any, ...]:
    row = as_row(row)
    if isinstance(row, Mapping):
        extra = set(row) - set(schema.names)
        if extra:
            raise SchemaError(f"collection row {i} has column(s) {sorted(extra)} not in the schema ({schema})")
        return tuple(row.get(n) for n in schema.names)
    t = tuple(row) if isinstance(row, (tuple, list)) else (row,)
    if len(t) != len(schema):
        raise SchemaError(f"collection row {i} has {len(t)} values but the schema has {len(schema)} columns ({schema})")
    return t


@dataclass(frozen=True)
class FileSource(SourceSpec):
    """Parquet/JSON/CSV files in a directory, as Flink's ``FileSource``.

    Bounded by default: a streaming run reads the files present when the job starts, then
    ends with the +infinity watermark, so every window fires and the job finishes; files that
    land later are not read. ``monitor_ms`` (``monitor_continuously=``) makes it unbounded:
    new files are picked up as they land, the directory listed every ``monitor_ms``.
    """

    path: str
    format: str
    declared: Schema
    options: tuple[tuple[str, str], ...] = ()
    monitor_ms: int | None = None
    #: Flink's ``json.ignore-parse-errors``: a JSON value that fits no rule of Flink's JSON format is NULL, not a dead letter.
    ignore_parse_errors: bool = False
    #: Flink's ``json.fail-on-missing-field``: a JSON record without a field of the schema is a dead letter.
    fail_on_missing_field: bool = False
    #: Flink's ``json.timestamp-format.standard`` (SQL, ISO-8601): DATE and TIMESTAMP columns read by Flink's rules,
    #: ``instants`` as TIMESTAMP_LTZ (funke.spark.parse.flink_time); None: by Spark's reader.
    timestamp_format: str | None = None
    instants: tuple[str, ...] = ()
    kind: ClassVar[str] = "files"

    @property
    def schema(self) -> Schema:
        return self.declared

    @property
    def bounded(self) -> bool:
        return self.monitor_ms is None

    @property
    def batchable(self) -> bool:
        return True  # a bounded run reads the files present when it starts

    def describe(self) -> str:
        how = "" if self.bounded else f", new files every {self.monitor_ms} ms"
        return f"files({self.format}: {self.path}{how})"


def files(
    path: str,
    *,
    schema: str | Schema,
    format: str = "parquet",
    monitor_continuously: Duration | None = None,
    ignore_parse_errors: bool = False,
    fail_on_missing_field: bool = False,
    timestamp_format: str | None = None,
    instants: Sequence[str] = (),
    **options: Any,
) -> FileSource:
    """Files in ``path`` (``format``: parquet, json, csv, or text: each line a row of ``value string``;
    ``options`` go to Spark's reader).

    JSON is read by the rules of Flink's JSON format (a number's text in a string is a number, ...:
    :mod:`funke.spark.parse`); a record that breaks them goes to the job's dead letters, or with
    ``ignore_parse_errors=True`` (Flink's ``json.ignore-parse-errors``) a value that breaks them is
    NULL and its row kept. CSV is read by the rules of Flink's csv format (an empty field is '' for a
    STRING and fails a number, ...), ``ignore_parse_errors`` (``csv.ignore-parse-errors``) alike. ``fail_on_missing_field=True`` (``json.fail-on-missing-field``): a record without a
    field of the schema (or of a ROW column's object) is a dead letter; without it the field is NULL.
    ``timestamp_format="SQL"`` or ``"ISO-8601"`` (``json.timestamp-format.standard``): a DATE or TIMESTAMP column of
    json is read as Flink reads it (``2020-12-30 12:13:14.5``, or ``2020-12-30T12:13:14.5``; ``instants``, the columns
    Flink declares TIMESTAMP_LTZ, with a ``Z`` after it), any other text a dead letter; without it, as Spark's reader
    reads it (ISO-8601 with a zone, as funke's json file sink writes it, a number of seconds...).

    Bounded (Flink's default): the files present when the job starts, then the end of input.
    ``monitor_continuously=fk.seconds(10)``: unbounded, the directory listed every 10 s for
    new files (the micro-batch interval of the queries reading it).
    """
    fmt = format.lower()
    if fmt == "text" and Schema.of(schema) is not None and [(f.name, f.dtype) for f in Schema.of(schema)] != [("value", "string")]:
        raise PlanError("files(format='text') reads each line into one column: schema='value string'")
    if fmt not in ("parquet", "json", "csv", "text"):
        raise PlanError(f"files(format=...) must be 'parquet', 'json', 'csv' or 'text', got {format!r}")
    monitor = None
    if monitor_continuously is not None:
        monitor = to_millis(monitor_continuously, what="monitor_continuously")
        if monitor <= 0:
            raise PlanError(f"files(monitor_continuously=...) must be a positive interval, got {monitor} ms")
    declared = Schema.of(schema)
    assert declared is not None
    if fmt in ("json", "csv"):
        _check_line_options(fmt, options)
    check_json_rules("files", fmt, ignore_parse_errors, fail_on_missing_field, declared)
    check_timestamp_format("files", fmt, timestamp_format, tuple(instants), declared)
    return FileSource(str(path), fmt, declared, tuple(sorted((k, str(v)) for k, v in options.items())), monitor, bool(ignore_parse_errors),
                      bool(fail_on_missing_field), timestamp_format, tuple(instants))


def _check_line_options(fmt: str, options: dict[str, Any]) -> None:
    """Refuse reader options a line-by-line parse with dead letters cannot honour (funke.spark.file_source)."""
    given = {k.lower(): str(v) for k, v in options.items()}
    why = []
    if given.get("multiline", "false").lower() == "true":
        why.append("multiLine=true (funke reads one record per line: JSON Lines, or CSV without line breaks inside a value)")
    if given.get("mode", "PERMISSIVE").upper() != "PERMISSIVE" or "columnnameofcorruptrecord" in given:
        why.append("mode / columnNameOfCorruptRecord (bad records always go to the job's dead letters)")
    why.extend(
        f"{key}={given[key]} (funke reads {fmt} files as UTF-8)"
        for key in ("encoding", "charset")
        if given.get(key, "utf-8").lower().replace("_", "-") not in ("utf-8", "utf8")
    )
    if why:
        raise UnsupportedError(f"files(format={fmt!r}) cannot take {'; '.join(why)}")
