"""Change records of CDC tools in Kafka values, read as Flink's CDC formats read them: ``debezium-json``,
``canal-json`` and ``maxwell-json``. Each record becomes the changes it holds, one row each, the kind in
``ROW_KIND``; the row values by Flink's JSON rules (:mod:`funke.spark.parse`). A record Flink fails the job on is
one dead letter with its reason; one Flink skips (a Debezium tombstone, a Canal DDL record, a record of a database
or table not included) gives no row.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from funke.connectors import kafka as kc
from funke.plan.changelog import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE
from funke.spark import parse
from funke.spark.parse import CORRUPT

#: The columns of a Debezium record on its way to its changes.
_BEFORE, _AFTER, _CHANGE, _WHY = "_funke_before", "_funke_after", "_funke_change", "_funke_why"
#: The rows each Debezium ``op`` needs.
_NEEDS = {"c": ("after",), "r": ("after",), "u": ("before", "after"), "d": ("before",)}


def debezium(raw: DataFrame, spec: kc.KafkaSource, no_value: Column, malformed: Column) -> tuple[DataFrame, list[Column], Column, Column]:
    """Flink's debezium-json record: ``{"before": row, "after": row, "op": ...}`` (inside ``{"schema", "payload"}``
    for "debezium-schema"), each row read by Flink's JSON rules; ``c`` and ``r`` are ``+I`` of ``after``, ``u`` is
    ``-U`` of ``before`` then ``+U`` of ``after``, ``d`` ``-D`` of ``before``, and a record with no value (the tombstone
    Debezium sends after a delete) is skipped, as in Flink. A record that is no such JSON, of another ``op``, or without
    the row its ``op`` needs (Flink fails the job on each) is one dead letter. The frame (a row per change), the row's
    columns, the corrupt text, the reason."""
    text = F.col("value").cast("string")
    fields = "`before` string, `after` string, `op` string"
    ddl = f"`payload` struct<{fields.replace('` string', '`: string')}>" if spec.envelope == "debezium-schema" else fields
    envelope = F.from_json(text, f"{ddl}, `{CORRUPT}` string", {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT})
    record = envelope["payload"] if spec.envelope == "debezium-schema" else envelope
    for name, column in (("before", _BEFORE), ("after", _AFTER)):
        side = record[name]
        raw = parse.with_parsed(raw, side, "json", spec.declared, ignore_errors=spec.ignore_parse_errors)
        bad = parse.corrupt_text("json", side, side.isNotNull())
        raw = raw.withColumn(column, F.struct(F.col(parse.PARSED).alias("row"), bad.alias("bad"))).drop(parse.PARSED)
    op, before, after = record["op"], F.col(f"{_BEFORE}.row"), F.col(f"{_AFTER}.row")
    where = f"{spec.describe()}: "
    reason = F.when(envelope.isNull() | envelope[CORRUPT].isNotNull() | record.isNull(), malformed)
    reason = reason.when(~F.coalesce(op.isin(*_NEEDS), F.lit(False)), F.concat(F.lit(where + "unknown op "), F.coalesce(op, F.lit("null")), F.lit(" (Flink fails the job)")))
    for name in ("before", "after"):
        ops = [o for o, rows in _NEEDS.items() if name in rows]
        which = " or ".join(repr(o) for o in ops)
        hint = " (Debezium's Postgres connector: set the table's REPLICA IDENTITY to FULL)" if name == "before" else ""
        reason = reason.when(op.isin(*ops) & record[name].isNull(), F.lit(where + f"the {name!r} of an op {which} record is null{hint} (Flink fails the job)"))
    reason = F.when(text.isNotNull(), reason.when(F.col(f"{_BEFORE}.bad").isNotNull() | F.col(f"{_AFTER}.bad").isNotNull(), malformed))
    change = lambda kind, row: F.struct(F.lit(kind).alias("kind"), row.alias("row"))
    one = F.array(change(None, after))  # (a dead letter, or the end-of-input row: kept once)
    changes = (F.when(no_value, F.filter(one, lambda _: F.lit(False)))
               .when(F.col(_WHY).isNotNull() | text.isNull(), one)
               .when(op.isin("c", "r"), F.array(change(INSERT, after)))
               .when(op == "u", F.array(change(UPDATE_BEFORE, before), change(UPDATE_AFTER, after)))
               .otherwise(F.array(change(DELETE, before))))  # fmt: skip
    raw = raw.withColumn(_WHY, reason).withColumn(_CHANGE, F.explode(changes))
    columns = [F.col(f"{_CHANGE}.kind").alias(ROW_KIND), *(F.col(f"{_CHANGE}.row.`{f.name}`").alias(f.name) for f in spec.declared)]
    return raw, columns, F.when(F.col(_WHY).isNotNull(), text), F.col(_WHY)


#: What a canal-json (upper case) or maxwell-json (lower case) record's ``type`` asks for.
_TYPES = {"canal": ("INSERT", "UPDATE", "DELETE"), "maxwell": ("insert", "update", "delete")}
#: The change of each row of a record, and the record's row of the old values an update's rows are paired with.
_PIECE, _OLD_KEYS = "_funke_piece", "_funke_old_keys"


def canal(raw: DataFrame, spec: kc.KafkaSource, no_value: Column, malformed: Column) -> tuple[DataFrame, list[Column], Column, Column]:
    """Flink's canal-json record (``{"data": [row, ...], "old": [row, ...], "type": "INSERT"|"UPDATE"|"DELETE",
    "database", "table", ...}``) or maxwell-json record (the same with one row each, ``data`` and ``old`` objects, the
    type in lower case): an insert is ``+I`` of each row of ``data``, a delete ``-D`` of each, an update ``-U`` of the
    row before (``old``'s values of the columns it has, the others ``data``'s) then ``+U`` of ``data``'s, row by row.

    As Flink: a column of ``old`` that is NULL or missing is taken from ``data`` unless some row of ``old`` names it (so
    in a Canal record of several rows, one row's change to a column makes that column NULL in the others' rows before:
    Flink's ``findValue`` over the whole array; funke looks at the rows' top-level keys, Flink at every depth). Canal's
    ``CREATE`` records (DDL) are skipped, and so are records of a database or table that
    ``canal-json.database.include`` / ``table.include`` (Java regexes, matching the whole name) leave out. Flink fails
    the job on any other type, a record without the ``data`` (or, for an update, the ``old``) its type needs, a
    record with no ``database``/``table`` where a filter is set, and a row that fits no JSON rule: funke sends the
    record to the dead letters with its reason. A record is read whole or not at all."""
    kind = spec.envelope
    many = "array<string>" if kind == "canal" else "string"
    opts = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    text = F.col("value").cast("string")
    record = F.from_json(text, f"`data` {many}, `old` {many}, `type` string, `database` string, `table` string, `{CORRUPT}` string", opts)
    as_rows = (lambda c: c) if kind == "canal" else (lambda c: F.when(c.isNotNull(), F.array(c)))
    data, old, op = as_rows(record["data"]), as_rows(record["old"]), record["type"]
    insert, update, delete = _TYPES[kind]
    where = f"{spec.describe()}: "
    rows = F.transform(data, lambda d: parse.parsed_json(d, spec.declared, ignore_errors=spec.ignore_parse_errors))
    olds = F.transform(old, lambda o: parse.parsed_json(o, spec.declared, ignore_errors=spec.ignore_parse_errors))
    unreadable = lambda parsed: F.coalesce(F.exists(parsed, lambda r: r.isNull() | r[CORRUPT].isNotNull()), F.lit(False))
    skip, why = F.lit(""), F.when(record.isNull() | record[CORRUPT].isNotNull(), malformed)  # (why: "" skips the record)
    for field, pattern in zip(("database", "table"), spec.include, strict=True):
        if pattern:
            why = why.when(record[field].isNull(), F.lit(where + f"no {field!r} in the record, which canal-json.{field}.include reads (Flink fails the job)"))
            why = why.when(~record[field].rlike(f"^(?:{pattern})$"), skip)
    if kind == "canal":
        why = why.when(op == "CREATE", skip)
    why = (why.when(~F.coalesce(op.isin(*_TYPES[kind]), F.lit(False)),
                    F.concat(F.lit(where + "unknown type "), F.coalesce(op, F.lit("null")), F.lit(" (Flink fails the job)")))
           .when(data.isNull(), F.concat(F.lit(where + "the 'data' of a record of type "), op, F.lit(" is null (Flink fails the job)")))
           .when((op == update) & old.isNull(), F.lit(where + f"the 'old' of a record of type {update} is null (Flink fails the job)"))
           .when((op == update) & (F.size(old) < F.size(data)),
                 F.lit(where + f"the 'old' of a record of type {update} has fewer rows than its 'data' (Flink fails the job)"))
           .when(unreadable(rows) | ((op == update) & unreadable(olds)), malformed))  # fmt: skip
    names = [f.name for f in spec.declared]
    row_type = "struct<" + ", ".join(f"`{f.name}`: {f.dtype or 'string'}" for f in spec.declared) + ">"
    none = F.array().cast(f"array<struct<kind: string, row: {row_type}>>")
    change = lambda k, row: F.struct(F.lit(k).alias("kind"), row.alias("row"))
    values = lambda parsed: F.struct(*(parsed[n].alias(n) for n in names))  # (without the parse's corrupt-record column)
    before = lambda after, was: F.struct(*(  # (old's value, or data's where old neither has one nor names the column)
        F.when(was[n].isNull() & ~F.array_contains(F.col(_OLD_KEYS), n), after[n]).otherwise(was[n]).alias(n) for n in names
    ))  # fmt: skip
    pieces = (F.when(no_value, none)
              .when(text.isNull(), F.array(change(None, F.lit(None).cast(row_type))))  # (the end-of-input row: kept once)
              .when(F.col(_WHY) == "", none)
              .when(F.col(_WHY).isNotNull(), F.array(change(None, F.lit(None).cast(row_type))))  # (a dead letter: once)
              .when(op == insert, F.transform(rows, lambda r: change(INSERT, values(r))))
              .when(op == delete, F.transform(rows, lambda r: change(DELETE, values(r))))
              .otherwise(F.flatten(F.zip_with(rows, F.slice(olds, 1, F.size(rows)), lambda a, b: F.array(
                  change(UPDATE_BEFORE, before(a, b)), change(UPDATE_AFTER, values(a)))))))  # fmt: skip
    named = F.array_distinct(F.flatten(F.transform(F.coalesce(old, F.array().cast("array<string>")), lambda o: F.coalesce(F.json_object_keys(o), F.array().cast("array<string>")))))
    raw = raw.withColumn(_WHY, F.when(text.isNotNull(), why)).withColumn(_OLD_KEYS, named).withColumn(_PIECE, F.explode(pieces))
    columns = [F.col(f"{_PIECE}.kind").alias(ROW_KIND), *(F.col(f"{_PIECE}.row.`{n}`").alias(n) for n in names)]
    dead = F.col(_WHY).isNotNull() & (F.col(_WHY) != "")
    return raw, columns, F.when(dead, text), F.when(dead, F.col(_WHY))
