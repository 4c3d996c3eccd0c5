"""Editing the state in a savepoint (Flink's State Processor API): ``funke.savepoints.transform``.

A savepoint holds each query's checkpoint cut at its committed batch ``N`` (state version
``N + 1``). An edited savepoint is a copy with one more micro-batch per edited query, ``N + 1``,
that read no data: its offset and commit log entries are copies of batch ``N``'s (the same
source positions and watermark, which is what Spark writes for its own no-data batches), and
the state version it wrote, ``N + 2``, is the edited state. A job restored from the copy
resumes with batch ``N + 2`` over that state, as after any committed batch.

Spark 4.3 has no public API that writes state, so version ``N + 2`` is written by Spark's own
state store provider (the one the checkpoint names: RocksDB for funke), opened on the driver
over the copied checkpoint, one store per partition: ``getStore(N + 1)``, ``remove`` and
``put`` of the changed keys, ``commit()``. The files are then Spark's own, whatever their
format version. The key and value rows are built by Spark from the edited table (a
DataFrame with the state's exact key and value schema), and each new key goes to the
partition Spark's hash partitioning gives it; keys already in the state must land where
they are, which is checked. Afterwards the state tables are exported again and must read
back exactly as edited.

A general-path operator (``funke.savepoints.general``) keeps one pickled snapshot per bucket
in the RocksDB column family of its state variable. Its edited tables are turned back into
snapshots, checked by loading them as the operator does, and only the buckets whose
snapshot changed are put (or removed, when their ``.buckets`` row is deleted) in that
column family. A key keeps its bucket; a key new to the state is refused, since its bucket
depends on the job's bucket count, which the savepoint does not record.
"""

from __future__ import annotations

import json
import pickle
import shutil
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from funke.plan.types import INTEGER_BITS, integer_range
from funke.savepoints import (
    MANIFEST,
    Savepoint,
    SavepointError,
    StateColumn,
    export_state,
    is_general,
    read,
    relocate_schema_paths,
    state_columns,
)
from funke.savepoints.general import FORMAT as GENERAL_FORMAT
from funke.savepoints.general import SNAPSHOT_VARIABLE, GeneralTables, edited_snapshots, encode_tables, table_names
from funke.savepoints.registry import registry

AGGREGATION = "stateStoreSave"  # Spark's StateStoreSaveExec: the state of a streaming aggregation
FAMILY = "default"  # an aggregation keeps one column family


@dataclass
class TableEdit:
    """One table's edit, worked out (and checked) before anything is written."""

    table: str
    query: str
    operator: dict[str, Any]
    columns: list[StateColumn]
    expected: Any  # the table as it must read back (pandas)
    upserts: Any  # changed and new rows: key and value columns, partition_id (null: a new key)
    deletes: Any  # removed keys: key columns, partition_id
    counts: dict[str, int] = field(default_factory=dict)


def transform(source: str | Path, target: str | Path, edits: Mapping[str, Any], *, spark: Any = None) -> Savepoint:
    """See ``funke.savepoints.transform``."""
    started = time.monotonic()
    sp = read(source)
    dest = Path(target)
    if dest.exists() and any(dest.iterdir()):
        raise SavepointError(f"transform() writes a new savepoint, but {dest} is not empty: choose a new directory")
    if not edits:
        raise SavepointError(f"transform() got no edits for {sp.path}: pass {{table name: new table or function}}; tables: {', '.join(sp.operators())}")
    spark = _classic_session(spark)
    planned = _plan_all(spark, sp, edits)
    manifest = json.loads(json.dumps(sp.manifest))
    try:
        shutil.copytree(sp.path, dest, dirs_exist_ok=True)
        for uid in manifest["queries"]:
            relocate_schema_paths(dest / "checkpoint" / uid, sp.path / "checkpoint" / uid)
        for uid in sorted({p.query for p in planned}):
            _append_batch(spark, dest / "checkpoint" / uid, manifest["queries"][uid], [p for p in planned if p.query == uid])
            batch = manifest["queries"][uid]["batch"]
            for op in manifest["queries"][uid]["operators"]:
                op["rows"] = export_state(spark, dest / "checkpoint" / uid, batch, op, dest / "state" / op["table"])
        for p in planned:
            if isinstance(p, GeneralEdit):
                _check_general_reads_back(Savepoint(dest, manifest), p)
            else:
                _check_reads_back(Savepoint(dest, manifest), p)
        manifest["created_at"] = datetime.now(UTC).isoformat(timespec="milliseconds")
        manifest["edited"] = {"from": str(sp.path), "tables": {p.table: p.counts for p in planned}}
        manifest["took_ms"] = round((time.monotonic() - started) * 1000)
        manifest["size_bytes"] = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
        (dest / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)  # no half-written savepoint is left to restore from
        raise
    edited = Savepoint(dest, manifest)
    registry().add_savepoint(str(dest), edited.job, batches=edited.batches, size_bytes=manifest["size_bytes"], took_ms=manifest["took_ms"])
    return edited


def _classic_session(spark: Any) -> Any:
    if spark is None:
        from pyspark.sql import SparkSession  # (pyspark's lazy import)

        spark = SparkSession.getActiveSession()
    if spark is None or getattr(spark, "_jvm", None) is None:
        raise SavepointError(
            "transform() writes state through Spark's state store on the driver, which needs a classic Spark session: "
            "pass spark=... (a Spark Connect client cannot do it)"
        )
    return spark


# -- working out an edit -----------------------------------------------------------------------


def _plan_all(spark: Any, sp: Savepoint, edits: Mapping[str, Any]) -> list[TableEdit | GeneralEdit]:
    """Every edit worked out and checked; a general-path operator's tables edited together."""
    planned: list[TableEdit | GeneralEdit] = []
    general: dict[tuple[str, int], dict[str, Any]] = {}
    for table, edit in edits.items():
        uid, op = _owner(sp, table)
        if is_general(op):
            general.setdefault((uid, op["operator_id"]), {})[table] = edit
        else:
            planned.append(_plan(spark, sp, table, edit))
    for (uid, operator_id), by_table in general.items():
        op = next(o for o in sp.manifest["queries"][uid]["operators"] if o["operator_id"] == operator_id)
        planned.append(_plan_general(sp, uid, op, by_table))
    return planned


def _owner(sp: Savepoint, table: str) -> tuple[str, dict[str, Any]]:
    """(query, operator entry) of a state table; the query's operators checked for being editable."""
    owners = [
        (uid, op) for uid, q in sp.manifest["queries"].items() for op in q["operators"]
        if op.get("table") == table or table in op.get("tables", {}).values()
    ]  # fmt: skip
    if not owners:
        raise SavepointError(f"savepoint {sp.path} has no state table {table!r}; it has: {', '.join(sp.operators()) or 'none'}")
    uid, op = owners[0]
    for other in sp.manifest["queries"][uid]["operators"]:
        whose = "its" if other is op else f"its query {uid!r} also holds {other['table']!r}, whose"
        if is_general(other) and other.get("format") != GENERAL_FORMAT:
            raise SavepointError(
                f"cannot edit table {table!r}: {whose} operator runs as Spark's {other.get('spark_operator')} (the general path), "
                f"and the savepoint was taken before funke wrote that state as tables ({GENERAL_FORMAT}): take a new savepoint "
                "from the job, then edit its tables"
            )
        if other.get("spark_operator") != AGGREGATION and not is_general(other):
            raise SavepointError(
                f"cannot edit table {table!r}: {whose} operator runs as Spark's {other.get('spark_operator')}; transform() "
                "edits native-path window aggregations (built-in aggregates on Spark's own operator) and funke's "
                "general-path operators only"
            )
    return uid, op


def _plan(spark: Any, sp: Savepoint, table: str, edit: Any) -> TableEdit:
    uid, op = _owner(sp, table)
    query = sp.manifest["queries"][uid]
    if "rows" not in op:
        raise SavepointError(f"savepoint {sp.path} holds no table for {table!r} (it was taken without Spark): take it again from the job")
    reader = spark.read.format("statestore").option("path", str(sp.path / "checkpoint" / uid))
    schema = reader.option("batchId", query["batch"]).option("operatorId", op["operator_id"]).load().schema
    columns = state_columns(schema)
    before = sp.table(table)
    after = _edited(table, before, edit)
    check_table(table, after, columns)
    upserts, deletes, counts = diff(before, after, columns)
    return TableEdit(table, uid, op, columns, normalized(after, columns), upserts, deletes, counts)


@dataclass
class GeneralEdit:
    """The edit of one general-path operator's tables: the buckets whose snapshot changes."""

    query: str
    operator: dict[str, Any]
    names: dict[str, str]  # role -> table name
    expected: GeneralTables  # the tables as they must read back
    snapshots: dict[int, dict[str, Any] | None]  # changed buckets: the new snapshot, None to delete the bucket
    partitions: dict[int, int]  # where each bucket's state is
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def table(self) -> str:
        return self.names["state"]


def _plan_general(sp: Savepoint, uid: str, op: dict[str, Any], by_table: dict[str, Any]) -> GeneralEdit:
    names = op.get("tables") or table_names(op["table"])
    if "rows" not in op:
        raise SavepointError(f"savepoint {sp.path} holds no table for {op['table']!r} (it was taken without Spark): take it again from the job")
    before = GeneralTables(*(sp.table(names[role]) for role in ("state", "timers", "buckets")))
    roles = {name: role for role, name in names.items()}
    after = before.by_role()
    for table, edit in by_table.items():
        after[roles[table]] = _edited(table, before.by_role()[roles[table]], edit)
    edited = GeneralTables(after["state"], after["timers"], after["buckets"])
    snapshots = edited_snapshots(before, edited, names)
    partitions = {int(b): int(p) for b, p in zip(before.buckets["bucket"], before.buckets["partition_id"], strict=True) if _known(p)}
    counts = {"buckets_rewritten": sum(1 for s in snapshots.values() if s is not None), "buckets_deleted": sum(1 for s in snapshots.values() if s is None)}
    return GeneralEdit(uid, op, names, edited, snapshots, partitions, counts)


def _known(v: Any) -> bool:
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

    return v is not None and not pd.isna(v)


def _edited(table: str, before: Any, edit: Any) -> Any:
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

    result = edit
    if not isinstance(edit, pd.DataFrame) and not hasattr(edit, "toPandas") and callable(edit):
        result = edit(before.copy())
    if not isinstance(result, pd.DataFrame) and hasattr(result, "toPandas"):
        result = result.toPandas()
    if not isinstance(result, pd.DataFrame):
        raise SavepointError(
            f"the edit of table {table!r} gave {type(result).__name__}: give a pandas or Spark DataFrame, or a function that "
            "takes the table (pandas) and returns the new one"
        )
    return result


def check_table(table: str, frame: Any, columns: list[StateColumn]) -> None:
    """Raise SavepointError when ``frame`` cannot be the state of an operator laid out as ``columns``."""
    names = [c.name for c in columns]
    keys = [c.name for c in columns if c.part == "key"]
    if not keys:
        raise SavepointError(f"table {table!r} is the state of an aggregate without keys, which transform() cannot edit yet")
    for name in frame.columns:
        if name not in names and name != "partition_id":
            raise SavepointError(
                f"table {table!r} has a column {name!r} that its operator's state does not have (it has: {', '.join(names)}); "
                "the state's layout is the job's: drop the column, or change the job and give the operator a new uid"
            )
    for c in columns:
        if c.name not in frame.columns:
            raise SavepointError(
                f"table {table!r} lacks the column {c.name!r}: every {c.part} column of the state must be there "
                "(only partition_id may be left out); keep it as read(...).table() gave it"
            )
        values = frame[c.name]
        nulls = values.isna()
        if nulls.any():
            why = "a state key cannot be null: fill it in, or drop the row" if c.part == "key" else "a state value cannot be null: drop the row to delete that key's state"
            raise SavepointError(f"table {table!r}: column {c.name!r} is null in row(s) {list(frame.index[nulls][:3])}; {why}")
        problem = _type_problem(values, c.dtype)
        if problem:
            raise SavepointError(f"table {table!r}: column {c.name!r} {problem}")
    twice = normalized(frame, columns).duplicated(keys, keep=False)
    if twice.any():
        first = frame[twice].iloc[0]
        raise SavepointError(
            f"table {table!r} has {int(twice.sum())} rows for one key ({', '.join(f'{k}={first[k]!r}' for k in keys)}): "
            "a key has one state, keep one row per key"
        )


def _type_problem(values: Any, dtype: Any) -> str | None:
    """Why pandas ``values`` cannot go into a state column of Spark type ``dtype`` (None: they can)."""
    from pyspark.sql import types as T  # (pyspark's lazy import)

    kind, want = values.dtype.kind, dtype.simpleString()
    wrong = f"holds {values.dtype} values, but the state keeps {want} there"
    if want in INTEGER_BITS:
        if kind not in "iu":
            return f"{wrong}: convert it, e.g. .astype('int64')"
        low, high = integer_range(want)
        if len(values) and (values.min() < low or values.max() > high):
            return f"has values outside {want}'s range [{low}, {high}]"
        return None
    if isinstance(dtype, (T.DoubleType, T.FloatType)):
        return None if kind in "fiu" else wrong
    if isinstance(dtype, T.BooleanType):
        return None if kind == "b" else wrong
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        if kind == "M" or (kind == "O" and all(isinstance(v, datetime) for v in values)):  # naive and aware mixed
            return None
        return f"{wrong}: give pandas timestamps (pd.to_datetime(...))"
    if isinstance(dtype, T.StringType):
        bad = next((v for v in values if not isinstance(v, str)), None)
        return None if bad is None else f"holds {type(bad).__name__} values ({bad!r}), but the state keeps {want} there"
    return f"is of type {want}, which transform() cannot write into a state store yet"


def normalized(frame: Any, columns: list[StateColumn]) -> Any:
    """``frame`` with timestamps as naive UTC nanoseconds, so that tables compare whatever their source."""
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)
    from pyspark.sql import types as T  # (pyspark's lazy import)

    out = frame.copy()
    for c in columns:
        if c.name in out.columns and isinstance(c.dtype, (T.TimestampType, T.TimestampNTZType)):
            out[c.name] = pd.to_datetime(out[c.name], utc=True).dt.tz_localize(None).astype("datetime64[ns]")
    return out


def diff(before: Any, after: Any, columns: list[StateColumn]) -> tuple[Any, Any, dict[str, int]]:
    """(changed and new rows, removed keys, counts) from table ``before`` to ``after``."""
    keys = [c.name for c in columns if c.part == "key"]
    values = [c.name for c in columns if c.part == "value"]
    old = normalized(before, columns)[[*keys, *values, "partition_id"]]
    new = normalized(after, columns)[[*keys, *values]]
    joined = new.merge(old, on=keys, how="left", suffixes=("", "__before"), indicator=True)
    added = joined["_merge"] == "left_only"
    changed = (joined["_merge"] == "both") & joined[values].ne(joined[[f"{v}__before" for v in values]].to_numpy()).any(axis=1)
    upserts = joined.loc[added | changed, [*keys, *values, "partition_id"]].astype({"partition_id": "Int64"})
    gone = old.merge(new[keys], on=keys, how="left", indicator=True)
    deletes = gone.loc[gone["_merge"] == "left_only", [*keys, "partition_id"]]
    counts = {"updated": int(changed.sum()), "inserted": int(added.sum()), "deleted": len(deletes)}
    return upserts.reset_index(drop=True), deletes.reset_index(drop=True), counts


# -- writing state version N + 2 ---------------------------------------------------------------


def _append_batch(spark: Any, checkpoint: Path, query: dict[str, Any], edits: list[TableEdit]) -> None:
    """Give the copied query checkpoint a no-data batch N + 1 whose state is the edited state."""
    batch = query["batch"]
    offsets = (checkpoint / "offsets" / str(batch)).read_text().splitlines()
    conf = json.loads(offsets[1]).get("conf", {}) if len(offsets) > 1 else {}
    store_conf = _store_conf(spark, conf)
    by_operator = {e.operator["operator_id"]: e for e in edits}
    for op in query["operators"]:
        # Every operator of the query needs version N + 2, edited or not.
        edit = by_operator.get(op["operator_id"])
        if is_general(op):
            _write_general_version(spark, checkpoint, batch, op, edit if isinstance(edit, GeneralEdit) else None, store_conf)
        else:
            _write_version(spark, checkpoint, batch, op, edit if isinstance(edit, TableEdit) else None, store_conf)
    for log in ("offsets", "commits"):
        for name in (str(batch), f".{batch}.crc"):
            if (checkpoint / log / name).exists():
                shutil.copy2(checkpoint / log / name, checkpoint / log / name.replace(str(batch), str(batch + 1)))
    query["batch"] = batch + 1


def _store_conf(spark: Any, conf: dict[str, str]) -> Any:
    """The state store settings the query ran with: the session's, with what its offset log recorded."""
    sql_conf = spark._jsparkSession.sessionState().conf().clone()
    for key, value in conf.items():
        sql_conf.setConfString(key, value)
    version = sql_conf.getConfString("spark.sql.streaming.stateStore.checkpointFormatVersion", "1")
    if version != "1":
        raise SavepointError(
            f"the savepoint's state uses Spark's state checkpoint format version {version}, which names each state version "
            "by a unique id in the commit log; transform() writes format version 1 only"
        )
    return spark._jvm.org.apache.spark.sql.execution.streaming.state.StateStoreConf.apply(sql_conf)


def _write_version(spark: Any, checkpoint: Path, batch: int, op: dict[str, Any], edit: TableEdit | None, store_conf: Any) -> None:
    jvm = spark._jvm
    reader = spark.read.format("statestore").option("path", str(checkpoint)).option("batchId", batch)
    schema = reader.option("operatorId", op["operator_id"]).load().schema
    key_type = jvm.org.apache.spark.sql.types.DataType.fromJson(schema["key"].dataType.json())
    value_type = jvm.org.apache.spark.sql.types.DataType.fromJson(schema["value"].dataType.json())
    op_dir = checkpoint / "state" / str(op["operator_id"])
    partitions = sum(1 for d in op_dir.iterdir() if d.name.isdigit())
    puts: dict[int, list[tuple[Any, Any]]] = {}
    removes: dict[int, list[Any]] = {}
    if edit is not None:
        for key, partition, value in _state_rows(spark, edit, edit.upserts, schema, partitions):
            puts.setdefault(partition, []).append((key, value))
        for key, partition, _ in _state_rows(spark, edit, edit.deletes, schema, partitions):
            removes.setdefault(partition, []).append(key)
    _commit_partitions(spark, checkpoint, op["operator_id"], batch, partitions, key_type, value_type, store_conf, FAMILY, puts, removes)


def _commit_partitions(
    spark: Any,
    checkpoint: Path,
    operator_id: int,
    batch: int,
    partitions: int,
    key_type: Any,
    value_type: Any,
    store_conf: Any,
    family: str,
    puts: dict[int, list[tuple[Any, Any]]],
    removes: dict[int, list[Any]],
    *,
    column_families: bool = False,
) -> None:
    """State version ``batch + 2`` of every partition of an operator, through Spark's own provider:
    version ``batch + 1`` with ``removes`` and ``puts`` (UnsafeRows by partition) applied to ``family``.

    Every partition gets the version, changed or not, as Spark expects one per batch.
    ``column_families``: a transformWithState store (one family per state variable).
    """
    jvm = spark._jvm
    state = jvm.org.apache.spark.sql.execution.streaming.state
    none = jvm.scala.Option.empty()
    encoder = state.NoPrefixKeyStateEncoderSpec(key_type)
    for partition in range(partitions):
        store_id = state.StateStoreId(str(checkpoint / "state"), operator_id, partition, state.StateStoreId.DEFAULT_STORE_NAME())
        provider_id = state.StateStoreProviderId(store_id, jvm.java.util.UUID.randomUUID())
        provider = state.StateStoreProvider.createAndInit(
            provider_id, key_type, value_type, encoder, column_families, store_conf, spark._jsc.hadoopConfiguration(), False, none
        )  # fmt: skip
        try:
            store = provider.getStore(batch + 1, none, False, False)
            try:
                if column_families:
                    store.createColFamilyIfAbsent(family, key_type, value_type, encoder, False, False)
                for key in removes.get(partition, []):
                    store.remove(key, family)
                for key, value in puts.get(partition, []):
                    store.put(key, value, family)
                store.commit()
            except BaseException:
                store.abort()
                raise
        finally:
            provider.close()


def _state_rows(spark: Any, edit: TableEdit, frame: Any, schema: Any, partitions: int) -> list[tuple[Any, int, Any]]:
    """``frame``'s rows as Spark's own UnsafeRows, built by Spark from the state's schema: (key, partition, value or None)."""
    if frame.empty:
        return []
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)
    from pyspark.sql import functions as F  # (pyspark's lazy import)
    from pyspark.sql import types as T

    used = [c for c in edit.columns if c.name in frame.columns]
    flat = pd.DataFrame({f"c{i}": frame[c.name] for i, c in enumerate(used)})
    for i, c in enumerate(used):
        if isinstance(c.dtype, T.TimestampType):  # an instant: pass it as UTC, whatever the session's time zone
            flat[f"c{i}"] = flat[f"c{i}"].dt.tz_localize("UTC")
    flat["stored"] = frame["partition_id"].astype("Int64")
    flat_schema = T.StructType([T.StructField(f"c{i}", c.dtype) for i, c in enumerate(used)] + [T.StructField("stored", T.IntegerType())])
    leaves = {(c.part, *c.path): F.col(f"c{i}") for i, c in enumerate(used)}
    key = F.struct(*_nested(schema["key"].dataType, ("key",), leaves))
    # Spark's hash partitioning of the aggregation's grouping columns: where the operator looks for a key.
    partition = F.pmod(F.hash(*(key.getField(f.name) for f in schema["key"].dataType.fields)), F.lit(partitions))
    columns = [key.alias("key"), partition.alias("partition"), F.coalesce(F.col("stored") != partition, F.lit(False)).alias("misplaced")]
    if any(c.part == "value" for c in used):
        columns.append(F.struct(*_nested(schema["value"].dataType, ("value",), leaves)).alias("value"))
    # Collected as Spark's UnsafeRows: nothing goes through Python's types on the way to the store.
    rows = spark.createDataFrame(flat, flat_schema).select(*columns)._jdf.queryExecution().executedPlan().executeCollect()
    if any(row.getBoolean(2) for row in rows):
        raise SavepointError(
            f"table {edit.table!r}: keys of the state hash to another partition than the one holding them; the state was "
            "not written by the hash partitioning transform() assumes, so it cannot place new keys"
        )
    width = {part: len(schema[part].dataType.fields) for part in ("key", "value")}
    return [
        (row.getStruct(0, width["key"]).copy(), row.getInt(1), row.getStruct(3, width["value"]).copy() if len(columns) > 3 else None)
        for row in rows
    ]


def _nested(dtype: Any, path: tuple[str, ...], leaves: dict[tuple[str, ...], Any]) -> list[Any]:
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    out = []
    for f in dtype.fields:
        here = (*path, f.name)
        out.append((leaves[here] if here in leaves else F.struct(*_nested(f.dataType, here, leaves))).alias(f.name))
    return out


def _write_general_version(spark: Any, checkpoint: Path, batch: int, op: dict[str, Any], edit: GeneralEdit | None, store_conf: Any) -> None:
    """Version N + 2 of a general-path operator's store: the changed buckets' snapshots put, deleted ones removed.

    The store keeps one RocksDB column family per state variable; only funke's snapshot
    variable is touched, the others (Spark's timer families, unused by funke) carry over.
    """

    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)
    from pyspark.sql import functions as F  # (pyspark's lazy import)
    from pyspark.sql import types as T

    jvm = spark._jvm
    reader = spark.read.format("statestore").option("path", str(checkpoint)).option("batchId", batch)
    schema = reader.option("operatorId", op["operator_id"]).option("stateVarName", SNAPSHOT_VARIABLE).load().schema
    key_type = jvm.org.apache.spark.sql.types.DataType.fromJson(schema["key"].dataType.json())
    value_type = jvm.org.apache.spark.sql.types.DataType.fromJson(schema["value"].dataType.json())
    (bucket_field,), (value_field,) = schema["key"].dataType.fields, schema["value"].dataType.fields
    op_dir = checkpoint / "state" / str(op["operator_id"])
    partitions = sum(1 for d in op_dir.iterdir() if d.name.isdigit())
    puts: dict[int, list[tuple[Any, Any]]] = {}
    removes: dict[int, list[Any]] = {}
    if edit is not None and edit.snapshots:
        buckets = sorted(edit.snapshots)
        blobs = [None if edit.snapshots[b] is None else pickle.dumps(edit.snapshots[b], protocol=pickle.HIGHEST_PROTOCOL) for b in buckets]
        flat = spark.createDataFrame(
            pd.DataFrame({"b": buckets, "v": blobs}), T.StructType([T.StructField("b", bucket_field.dataType), T.StructField("v", value_field.dataType)])
        )
        key = F.struct(F.col("b").alias(bucket_field.name))
        rows = flat.select(
            key.alias("key"), F.pmod(F.hash(F.col("b")), F.lit(partitions)).alias("partition"), F.struct(F.col("v").alias(value_field.name)).alias("value")
        )._jdf.queryExecution().executedPlan().executeCollect()
        for bucket, row in zip(buckets, rows, strict=True):
            partition = row.getInt(1)
            if edit.partitions.get(bucket, partition) != partition:
                raise SavepointError(
                    f"table {edit.table!r}: bucket {bucket} is in partition {edit.partitions[bucket]}, not where Spark's hash "
                    f"partitioning puts it ({partition}); the state was not written the way transform() assumes"
                )
            k = row.getStruct(0, 1).copy()
            if edit.snapshots[bucket] is None:
                removes.setdefault(partition, []).append(k)
            else:
                puts.setdefault(partition, []).append((k, row.getStruct(2, 1).copy()))
    _commit_partitions(
        spark, checkpoint, op["operator_id"], batch, partitions, key_type, value_type, store_conf, SNAPSHOT_VARIABLE, puts, removes,
        column_families=True,
    )  # fmt: skip

def _check_general_reads_back(sp: Savepoint, edit: GeneralEdit) -> None:
    """The new savepoint's tables must give the edited snapshots, bucket for bucket."""
    got = encode_tables(GeneralTables(*(sp.table(edit.names[role]) for role in ("state", "timers", "buckets"))), table=edit.table)
    want = encode_tables(edit.expected, table=edit.table)
    if got != want:
        differ = sorted(b for b in set(got) | set(want) if got.get(b) != want.get(b))
        raise SavepointError(f"table {edit.table!r} did not read back as edited from the new savepoint (buckets {differ[:5]} differ); nothing was kept")


def _check_reads_back(sp: Savepoint, edit: TableEdit) -> None:
    """The new savepoint's table must be the edited one, row for row (no key written twice)."""
    columns = [c.name for c in edit.columns]
    got = Counter(normalized(sp.table(edit.table), edit.columns)[columns].itertuples(index=False, name=None))
    want = Counter(edit.expected[columns].itertuples(index=False, name=None))
    if got != want:
        extra, lost = list((got - want).elements())[:3], list((want - got).elements())[:3]
        raise SavepointError(f"table {edit.table!r} did not read back as edited from the new savepoint (unexpected {extra}, missing {lost}); nothing was kept")
