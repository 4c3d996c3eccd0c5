"""Flink SQL's connectors: the funke source, sink or lookup table each is, and its checks (``table_def``).

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
  ``csv``), ``scan.startup.mode`` (``earliest-offset``, ``latest-offset``, ``timestamp``, ``specific-offsets``),
  ``sink.delivery-guarantee`` (``exactly-once``, the default, or ``at-least-once``: what
  ``SET 'execution.latency-mode' = 'realtime'`` writes with); a sink keys its records by the primary key. Its metadata (``METADATA FROM ...``):
  ``topic``, ``partition``, ``offset`` and ``timestamp`` (the record's, Flink's TIMESTAMP_LTZ(3)), read only.
* ``redis-stream`` (source, funke's): ``stream``, ``url``.
* ``nexmark`` (source): the Nexmark benchmark's events (``funke.connectors.nexmark``): ``first-event.rate``
  (= ``next-event.rate``; events per second of event time, 10 000), ``events.num`` (0: unbounded),
  ``person.proportion``, ``auction.proportion``, ``bid.proportion`` (1, 3, 46), the hot ratios
  ``auction.hot-ratio.sellers``, ``bid.hot-ratio.auctions``, ``bid.hot-ratio.bidders`` (4, 2, 4), and
  ``rate.limited`` (false: as fast as Spark goes; true: ``first-event.rate`` rows a second). A
  micro-batch holds at most a second of event time (``first-event.rate`` rows).
* ``blackhole`` (sink): computes every row and keeps none (inserts and changelogs).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, urlsplit

from sqlglot import exp

from funke.connectors.base import TIMESTAMP_FORMATS
from funke.errors import PlanError, UnsupportedError
from funke.table.ddl import TableDef, parsed_table
from funke.table.time_of_day import time_truncated

#: The datagen connector's defaults (Flink's).
DATAGEN_ROWS_PER_SECOND = 10_000
DATAGEN_STRING_LENGTH = 100


def table_def(create: exp.Create, sql: str, at: Callable[[exp.Expression], str]) -> TableDef:
    """The table one ``CREATE TABLE`` declares, its connector and the connector's options checked."""
    t = parsed_table(create, sql, at)
    if t.connector not in CONNECTORS:
        raise UnsupportedError(f"Flink SQL: the connector {t.connector!r} of table {t.name} is not supported by funke; "
                               f"these are: {', '.join(sorted(CONNECTORS))}")  # fmt: skip
    if t.partition_by and t.connector != "filesystem":
        raise UnsupportedError(f"Flink SQL: PARTITIONED BY of table {t.name}: the {t.connector} connector writes no partitions; the filesystem connector does")
    CONNECTORS[t.connector].check(t)
    return t


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
    #: The metadata a source reads (``METADATA FROM 'key'``): key -> the column the source gives it as, and its type.
    metadata: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: Flink's metadata keys of the connector that funke does not read, each with why.
    unread: Mapping[str, str] = field(default_factory=dict)
    #: Option prefixes the connector takes whatever follows (kafka's ``properties.``: its client's settings).
    prefixes: tuple[str, ...] = ()

    def check(self, t: TableDef) -> None:
        for m in t.metadata:
            if m.key in self.unread:
                raise UnsupportedError(f"Flink SQL: table {t.name}: the {t.connector} metadata {m.key!r} (column {m.name}) is not supported by funke: {self.unread[m.key]}")
            if m.key not in self.metadata:
                has = f"its metadata keys are {', '.join(sorted(self.metadata))}" if self.metadata else "funke reads no metadata of it"
                raise UnsupportedError(f"Flink SQL: table {t.name}: the {t.connector} connector has no metadata key {m.key!r} (column {m.name}); {has}")
        for option in t.options:
            parts = option.split(".")
            per_field = len(parts) == 3 and parts[0] == "fields" and parts[2] in self.fields
            if per_field and parts[1] not in t.names:
                raise PlanError(f"Flink SQL: table {t.name}: option {option!r} names no column (columns: {', '.join(t.names)})")
            if option not in self.options and not per_field and not option.startswith(self.prefixes):
                known = sorted(self.options) + [f"fields.<column>.{f}" for f in sorted(self.fields)] + [f"{p}*" for p in self.prefixes]
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
        opt = lambda o, d=None, name=name: _number(t, f"fields.{name}.{o}", d)
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
    fmt = _required(t, "format")
    return files(_required(t, "path"), schema=_ddl(t), format=fmt, monitor_continuously=interval, **_json_rules(t, fmt), **_csv_format(t, fmt))


def _files_lookup(t: TableDef) -> Any:
    """A filesystem table in a lookup join (``JOIN t FOR SYSTEM_TIME AS OF s.pt``): its files read whole by
    Spark (Flink's filesystem lookup loads the whole file too, and reloads it after a TTL), json and csv by Flink's
    format rules as a source reads them; a record that breaks them fails the job."""
    from funke.connectors.sources import files
    from funke.connectors.tables import files_table

    if t.partition_by:
        raise UnsupportedError(f"Flink SQL: a lookup join of the partitioned filesystem table {t.name} is not supported by funke yet")
    fmt = _required(t, "format")
    if fmt not in ("csv", "json", "parquet"):
        raise UnsupportedError(f"Flink SQL: table {t.name}: the format {fmt!r} in a lookup join is not supported by funke (csv, json, parquet)")
    # (a TIME read cut to its precision, as Flink's reader keeps it)
    cuts = [(c, time_truncated(c, ty)) for c, ty in t.columns]
    columns = [f"{cut} AS `{c}`" if cut else f"`{c}`" for c, cut in cuts] if any(cut for _, cut in cuts) else []
    spec = files(_required(t, "path"), schema=_ddl(t), format=fmt, **_json_rules(t, fmt), **_csv_format(t, fmt))
    return files_table(spec, name=t.name, columns=columns)


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
#: The json format's option to read a value that fits none of its rules as NULL (Flink's default: the record fails).
IGNORE_PARSE_ERRORS = "json.ignore-parse-errors"
#: The csv format's option to read a value that fails as NULL, and a field a short line lacks (Flink's default: the record fails).
CSV_IGNORE_PARSE_ERRORS = "csv.ignore-parse-errors"
#: The json format's option to fail a record without a field of the schema (Flink's default: the field is NULL).
FAIL_ON_MISSING_FIELD = "json.fail-on-missing-field"
#: The json format's text of a TIMESTAMP: SQL's (``2024-05-01 12:00:10``) or ISO-8601's (``2024-05-01T12:00:10``).
TIMESTAMP_STANDARD = "json.timestamp-format.standard"
#: Flink's ``partition.default-name``: the directory of a NULL partition value.
DEFAULT_PARTITION = "__DEFAULT_PARTITION__"


def _files_sink(t: TableDef) -> Any:
    from funke.connectors.sinks import files

    fmt, ignore = _required(t, "format"), _flag(t, IGNORE_NULL_FIELDS)
    if IGNORE_NULL_FIELDS in t.options and fmt != "json":
        raise PlanError(f"Flink SQL: table {t.name}: {IGNORE_NULL_FIELDS!r} is an option of the json format, not of {fmt}")
    timestamp_standard(t, fmt)
    csv = _csv_format(t, fmt)  # (its comment is for reading: Flink's writer writes none)
    return files(_required(t, "path"), format=fmt, partition_by=t.partition_by, commit=_partition_commit(t), ignore_null_fields=ignore,
                 delimiter=csv.get("sep", ","), quote=csv.get("quote", '"'), null_literal=csv.get("nullValue", ""))  # fmt: skip


def timestamp_standard(t: TableDef, fmt: str) -> str:
    """``json.timestamp-format.standard``: SQL (Flink's default) or ISO-8601, how the json format reads and writes a
    TIMESTAMP (``2020-12-30 12:13:14``, ``2020-12-30T12:13:14``; funke.spark.parse.flink_time)."""
    if TIMESTAMP_STANDARD in t.options and fmt != "json":
        raise PlanError(f"Flink SQL: table {t.name}: {TIMESTAMP_STANDARD!r} is an option of the json format, not of {fmt}")
    standard = t.options.get(TIMESTAMP_STANDARD, "SQL")
    if standard not in TIMESTAMP_FORMATS:
        raise PlanError(f"Flink SQL: table {t.name}: {TIMESTAMP_STANDARD} must be 'SQL' or 'ISO-8601', got {standard!r}")
    return standard


def _json_rules(t: TableDef, fmt: str) -> dict[str, Any]:
    """The json format's reading options of ``t`` (and the csv format's ``csv.ignore-parse-errors``), as ``files()``'s
    and ``kafka()``'s arguments."""
    for option in (IGNORE_PARSE_ERRORS, FAIL_ON_MISSING_FIELD):
        if option in t.options and fmt != "json":
            raise PlanError(f"Flink SQL: table {t.name}: {option!r} is an option of the json format, not of {fmt}")
    if CSV_IGNORE_PARSE_ERRORS in t.options and fmt != "csv":
        raise PlanError(f"Flink SQL: table {t.name}: {CSV_IGNORE_PARSE_ERRORS!r} is an option of the csv format, not of {fmt}")
    standard = timestamp_standard(t, fmt)
    ignore = _flag(t, IGNORE_PARSE_ERRORS) or _flag(t, CSV_IGNORE_PARSE_ERRORS)
    rules: dict[str, Any] = {"ignore_parse_errors": ignore, "fail_on_missing_field": _flag(t, FAIL_ON_MISSING_FIELD)}
    if all(rules.values()):  # (Flink's message)
        raise PlanError(f"Flink SQL: table {t.name}: fail-on-missing-field and ignore-parse-errors shouldn't both be true.")
    if fmt == "json":  # (its DATE and TIMESTAMP columns as Flink's json format reads them)
        rules.update(timestamp_format=standard, instants=tuple(c for c, _ in t.columns if c in t.instants))
    return rules


#: The csv format's options funke reads and writes (a filesystem table's; ``csv.ignore-parse-errors`` apart).
CSV_OPTIONS = ("csv.field-delimiter", "csv.quote-character", "csv.null-literal", "csv.allow-comments")


def _csv_format(t: TableDef, fmt: str) -> dict[str, str]:
    """The csv format's options of ``t`` (``CSV_OPTIONS``) as the delimiter, quote and null literal funke's csv reader
    and writer take (``sep``, ``quote``, ``nullValue``, Spark's names) and ``comment``."""
    for option in CSV_OPTIONS:
        if option in t.options and fmt != "csv":
            raise PlanError(f"Flink SQL: table {t.name}: {option!r} is an option of the csv format, not of {fmt}")
    out = {}
    for option, key in (("csv.field-delimiter", "sep"), ("csv.quote-character", "quote")):
        if option in t.options:
            value = t.options[option]
            char = value.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in value else value  # (Flink unescapes Java's way)
            if len(char) != 1 or char in "\r\n":
                raise PlanError(f"Flink SQL: table {t.name}: {option} must be one character, not a line break, got {value!r}")
            out[key] = char
    if out.get("sep", ",") == out.get("quote", '"'):
        raise PlanError(f"Flink SQL: table {t.name}: csv.field-delimiter and csv.quote-character must differ")
    if "csv.null-literal" in t.options:
        out["nullValue"] = t.options["csv.null-literal"]
    if _flag(t, "csv.allow-comments"):
        out["comment"] = "#"
    return out


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


def _kafka_options(t: TableDef, *, read: bool = False) -> tuple[Any, str, str]:
    """A kafka table's topic (a source's: Flink's ``;``-separated list), bootstrap servers and format, checked."""
    fmt = t.options.get("format", "json")
    formats = ("json", "csv", "raw", *CDC_FORMATS) if read else ("json", "csv", "raw")
    if fmt not in formats:
        written = f" ({fmt} is read, not written)" if fmt in CDC_FORMATS else ""
        raise UnsupportedError(f"Flink SQL: table {t.name}: kafka format {fmt!r} is not supported by funke{written} ({', '.join(formats)})")
    for cdc, options in CDC_FORMATS.items():
        for option in options:
            if option in t.options and fmt != cdc:
                raise PlanError(f"Flink SQL: table {t.name}: {option!r} is an option of the {cdc} format, not of {fmt}")
    if fmt == "raw":
        _raw_format(t)
    topics = [name.strip() for name in _required(t, "topic").split(";") if name.strip()]
    if len(topics) != 1 and not read:
        raise UnsupportedError(f"Flink SQL: table {t.name}: a kafka sink writes one topic, and 'topic' names {len(topics)}: {t.options['topic']!r}")
    return (topics if len(topics) > 1 else topics[0] if topics else ""), _required(t, "properties.bootstrap.servers"), fmt


def _raw_format(t: TableDef) -> None:
    """Flink's raw format: the table's one physical column, a STRING (its UTF-8 bytes), is each record's value."""
    if len(t.columns) != 1 or t.columns[0][1] != "string":
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: funke's raw format reads and writes one physical column of type STRING as each "
            f"record's value (Flink's BYTES and numbers' bytes are not supported), got {', '.join(f'{c} {ty}' for c, ty in t.columns)}"
        )
    charset = t.options.get("raw.charset", "UTF-8")
    if charset.upper().replace("_", "-") not in ("UTF-8", "UTF8"):
        raise UnsupportedError(f"Flink SQL: table {t.name}: raw.charset {charset!r} is not supported by funke (UTF-8)")


def _kafka_properties(t: TableDef) -> dict[str, str]:
    """The table's ``properties.*`` options, Flink's Kafka client settings, as librdkafka's (which take the same names
    for what both have; one librdkafka does not know fails the job, naming it), but the bootstrap servers (funke's
    own option) and ``group.id``: funke keeps a source's offsets in Spark's checkpoint and commits none to a group
    (Flink commits them at each checkpoint, for monitoring; its restarts read its checkpoint too)."""
    return {k.removeprefix(KAFKA_PROPERTIES): v for k, v in t.options.items()
            if k.startswith(KAFKA_PROPERTIES) and k not in ("properties.bootstrap.servers", "properties.group.id")}  # fmt: skip


def _kafka_source(t: TableDef) -> Any:
    from funke.connectors.kafka import kafka

    topic, bootstrap, fmt = _kafka_options(t, read=True)
    include = ("", "")
    if fmt == "debezium-json":  # (change records of CDC tools: funke.spark.cdc_json reads their envelopes)
        envelope, rules = "debezium-schema" if _flag(t, DEBEZIUM_OPTIONS[0]) else "debezium", {"ignore_parse_errors": _flag(t, DEBEZIUM_OPTIONS[1])}
    elif fmt in CDC_FORMATS:
        envelope, rules = fmt.removesuffix("-json"), {"ignore_parse_errors": _flag(t, f"{fmt}.ignore-parse-errors")}
        include = (t.options.get("canal-json.database.include", ""), t.options.get("canal-json.table.include", ""))
    else:
        envelope, rules = "", _json_rules(t, fmt)
    source = kafka(topic, schema=_ddl(t), bootstrap=bootstrap, format="json" if envelope else fmt, starting=_kafka_starting(t),
                   ending=_kafka_ending(t), metadata=[m.key for m in t.metadata], **rules, **_kafka_properties(t))
    return replace(source, envelope=envelope, include=include)


#: The debezium-json format's options: the records inside ``{"schema", "payload"}``; a row value that fits no JSON rule NULL.
DEBEZIUM_OPTIONS = ("debezium-json.schema-include", "debezium-json.ignore-parse-errors")
#: The CDC formats a kafka table reads, and their options (canal-json's include options: which database's and
#: table's records are read, Java regexes).
CDC_FORMATS = {
    "debezium-json": DEBEZIUM_OPTIONS,
    "canal-json": ("canal-json.ignore-parse-errors", "canal-json.database.include", "canal-json.table.include"),
    "maxwell-json": ("maxwell-json.ignore-parse-errors",),
}


#: ``scan.startup.mode``'s options, each read by one mode only.
_STARTUP_OPTIONS = {"timestamp": "scan.startup.timestamp-millis", "specific-offsets": "scan.startup.specific-offsets"}
#: ``scan.bounded.mode``'s, the same.
_BOUNDED_OPTIONS = {"timestamp": "scan.bounded.timestamp-millis", "specific-offsets": "scan.bounded.specific-offsets"}


def _kafka_starting(t: TableDef) -> Any:
    """Where a kafka table is read from (``scan.startup.mode``), as funke's ``kafka(starting=...)``: the earliest or
    latest offsets, each partition's first record at or after ``scan.startup.timestamp-millis``, or the offsets of
    ``scan.startup.specific-offsets`` (``partition:0,offset:42;partition:1,offset:300``; a partition not named from
    its earliest offset, where Flink starts it at the group's committed offset if the group has one)."""
    starting = _kafka_position(t, "scan.startup", _STARTUP_OPTIONS, "earliest-offset")
    if starting is None:
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: scan.startup.mode {t.options['scan.startup.mode']!r} is not supported (earliest-offset, "
            "latest-offset, timestamp, specific-offsets; funke commits no offsets to a group, so it reads none: group-offsets)"
        )
    return starting


def _kafka_ending(t: TableDef) -> Any:
    """Where a kafka table's read ends (``scan.bounded.mode``), as funke's ``kafka(ending=...)``: never (``unbounded``),
    the latest offsets when the job starts, each partition's first record at or after ``scan.bounded.timestamp-millis``
    (not read), or the offsets of ``scan.bounded.specific-offsets`` (a partition not named reads nothing, where Flink
    stops it at the group's committed offset if the group has one). The job then ends when every partition is read to
    its end, streaming as bounded."""
    ending = _kafka_position(t, "scan.bounded", _BOUNDED_OPTIONS, "unbounded")
    if t.options.get("scan.bounded.mode", "unbounded") == "unbounded":
        return None
    if ending is None or ending == "earliest":
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: scan.bounded.mode {t.options['scan.bounded.mode']!r} is not supported (unbounded, "
            "latest-offset, timestamp, specific-offsets; funke commits no offsets to a group, so it reads none: group-offsets)"
        )
    return ending


def _kafka_position(t: TableDef, prefix: str, options: dict[str, str], default: str) -> Any:
    """``<prefix>.mode`` as a position of funke's ``kafka()`` (``earliest``, ``latest``, a datetime, ``{partition:
    offset}``), or None for a mode funke does not know; an option of a mode not chosen is refused (Flink ignores it)."""
    mode = t.options.get(f"{prefix}.mode", default)
    for other, option in options.items():
        if option in t.options and mode != other:
            raise PlanError(f"Flink SQL: table {t.name}: {option!r} is read in {prefix}.mode '{other}' only, and the mode is {mode!r}")
    if mode in options:
        text = _required(t, options[mode])
        return _timestamp_millis(t, options[mode], text) if mode == "timestamp" else _specific_offsets(t, options[mode], text)
    return {"earliest-offset": "earliest", "latest-offset": "latest"}.get(mode)


def _timestamp_millis(t: TableDef, option: str, text: str) -> dt.datetime:
    if not text.strip().lstrip("-").isdigit():
        raise PlanError(f"Flink SQL: table {t.name}: {option} must be milliseconds since the epoch, got {text!r}")
    return dt.datetime.fromtimestamp(int(text) / 1000, tz=dt.UTC)


def _specific_offsets(t: TableDef, option: str, text: str) -> dict[int, int]:
    """``partition:0,offset:42;partition:1,offset:300`` as ``{0: 42, 1: 300}`` (Flink's format, a trailing ``;`` allowed).

    >>> from funke.table.ddl import TableDef
    >>> _specific_offsets(TableDef("t", (), (), None, (), "kafka", {}, ""), "o", "partition:0,offset:42;partition:1,offset:300;")
    {0: 42, 1: 300}
    """
    offsets: dict[int, int] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        fields = dict(f.split(":", 1) for f in part.split(",") if ":" in f)
        p, o = (fields.get(n, "").strip() for n in ("partition", "offset"))
        if len(fields) != 2 or not p.isdigit() or not o.isdigit() or int(p) in offsets:
            raise PlanError(
                f"Flink SQL: table {t.name}: {option} should be like 'partition:0,offset:42;partition:1,offset:300' "
                f"(each partition once), got {text!r}"
            )
        offsets[int(p)] = int(o)
    if not offsets:
        raise PlanError(f"Flink SQL: table {t.name}: {option} names no partition")
    return offsets


def _kafka_sink(t: TableDef) -> Any:
    from funke.connectors.kafka_sink import kafka

    topic, bootstrap, fmt = _kafka_options(t)
    timestamp_standard(t, fmt)
    delivery = t.options.get("sink.delivery-guarantee", "exactly-once")
    if delivery not in ("exactly-once", "at-least-once"):
        raise UnsupportedError(
            f"Flink SQL: table {t.name}: sink.delivery-guarantee {delivery!r} is not supported (exactly-once, at-least-once)"
        )
    return kafka(topic, bootstrap=bootstrap, format=fmt, key=list(t.primary_key) or None, delivery=delivery, config=_kafka_properties(t))


def _upsert_kafka_sink(t: TableDef) -> Any:
    """Flink's upsert-kafka: records keyed by the primary key (``key.format`` json: a JSON object of its columns), an
    updating result written by key (``KafkaSink.changes``: a deleted row's key with no value, a tombstone)."""
    except_key = _upsert_kafka_formats(t)
    kafka = replace(_kafka_sink(replace(t, options={**t.options, "format": t.options["value.format"]})), key_format="json", connector="python")
    return replace(kafka, value_except_key=except_key)


def _upsert_kafka_formats(t: TableDef) -> bool:
    """Checks an upsert-kafka table's key and formats; whether its value leaves the key's columns out (EXCEPT_KEY)."""
    if not t.primary_key:
        raise PlanError(f"Flink SQL: table {t.name}: an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED, as in Flink")
    for option in ("key.format", "value.format"):
        if _required(t, option) not in ("json", "csv") or (option == "key.format" and t.options[option] != "json"):
            raise UnsupportedError(f"Flink SQL: table {t.name}: upsert-kafka {option} {t.options[option]!r} is not supported by funke (key: json; value: json, csv)")
    include = t.options.get("value.fields-include", "ALL")
    if include not in ("ALL", "EXCEPT_KEY"):
        raise PlanError(f"Flink SQL: table {t.name}: value.fields-include must be ALL or EXCEPT_KEY, got {include!r}")
    return include == "EXCEPT_KEY"


def _upsert_kafka_source(t: TableDef) -> Any:
    """Flink's upsert-kafka read: each record an upsert of its key's row (``+I``), or with no value a delete (``-D``);
    the table stream normalizes them into a changelog (``funke.table.upsert.ChangelogNormalize``), as Flink's planner
    does. From the topic's earliest offset, as Flink's upsert-kafka reads."""
    except_key = _upsert_kafka_formats(t)
    plain = replace(t, options={**t.options, "format": t.options["value.format"]}, metadata=())
    return replace(_kafka_source(plain), upsert_key=tuple(t.primary_key), value_except_key=except_key)


def _upsert_kafka_changelog(t: TableDef) -> Any:
    return replace(_upsert_kafka_sink(t), changes="row_kind")


def _redis_source(t: TableDef) -> Any:
    from funke.connectors.redis_streams import redis_stream

    return redis_stream(_required(t, "stream"), schema=_ddl(t), url=t.options.get("url", "redis://127.0.0.1:6379/0"))


#: The prefix of Flink's Kafka client settings in a kafka table's options.
KAFKA_PROPERTIES = "properties."
#: Kafka's record metadata as Flink names it: the source's column and its type (``timestamp``: Flink's TIMESTAMP_LTZ(3)).
KAFKA_METADATA = {k: (f"kafka_{k}", ty) for k, ty in (("topic", "string"), ("partition", "int"), ("offset", "bigint"), ("timestamp", "timestamp"))}
_KAFKA_UNREAD = {
    "headers": "funke's Kafka source reads no headers",
    "leader-epoch": "funke's Kafka source reads no leader epoch",
    "timestamp-type": "funke's Kafka source reads no timestamp type",
}

CONNECTORS: dict[str, Connector] = {
    "datagen": Connector(frozenset({"rows-per-second", "number-of-rows"}), source=_datagen,
                         fields=frozenset({"kind", "min", "max", "start", "end", "length", "max-past"})),
    "filesystem": Connector(frozenset({"path", "format", "source.monitor-interval", IGNORE_NULL_FIELDS, IGNORE_PARSE_ERRORS, FAIL_ON_MISSING_FIELD,
                                       TIMESTAMP_STANDARD, CSV_IGNORE_PARSE_ERRORS, *CSV_OPTIONS})
                            | PARTITION_OPTIONS | ROLLING_OPTIONS,
                            source=_files_source, sink=_files_sink, lookup=_files_lookup),
    "print": Connector(frozenset({"print-identifier"}), sink=_print_sink, changelog=_print_sink),
    "jdbc": Connector(frozenset({"url", "table-name", "username", "password"}), sink=_jdbc_sink, changelog=_jdbc_changelog_sink,
                   lookup=_jdbc_lookup),
    "kafka": Connector(frozenset({"topic", "properties.bootstrap.servers", "format", "scan.startup.mode", "sink.delivery-guarantee",
                                  IGNORE_PARSE_ERRORS, FAIL_ON_MISSING_FIELD, TIMESTAMP_STANDARD, CSV_IGNORE_PARSE_ERRORS, "raw.charset", *_STARTUP_OPTIONS.values(), *(o for opts in CDC_FORMATS.values() for o in opts), "scan.bounded.mode",
                                  *_BOUNDED_OPTIONS.values()}),
                       source=_kafka_source, sink=_kafka_sink, metadata=KAFKA_METADATA, unread=_KAFKA_UNREAD, prefixes=(KAFKA_PROPERTIES,)),
    "upsert-kafka": Connector(frozenset({"topic", "properties.bootstrap.servers", "key.format", "value.format", "value.fields-include",
                                         "sink.delivery-guarantee", "scan.bounded.mode", *_BOUNDED_OPTIONS.values()}), source=_upsert_kafka_source, sink=_upsert_kafka_sink, changelog=_upsert_kafka_changelog, prefixes=(KAFKA_PROPERTIES,),
                              unread=dict.fromkeys((*KAFKA_METADATA, *_KAFKA_UNREAD), "funke reads no metadata of an upsert-kafka table yet")),
    "redis-stream": Connector(frozenset({"stream", "url"}), source=_redis_source),
    "nexmark": Connector(frozenset({"first-event.rate", "next-event.rate", "events.num", "person.proportion", "auction.proportion",
                                    "bid.proportion", "rate.limited", "auction.hot-ratio.sellers", "bid.hot-ratio.auctions",
                                    "bid.hot-ratio.bidders"}), source=_nexmark),
    "blackhole": Connector(frozenset(), sink=_blackhole, changelog=_blackhole),
}  # fmt: skip
