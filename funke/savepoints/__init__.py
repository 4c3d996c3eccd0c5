"""Savepoints: a job's state and source positions as of one committed micro-batch, in an open format.

A savepoint is a directory::

    manifest.json              job, time, versions, per query: batch, watermark, source
                               positions, stateful operators (funke uid, Spark operator)
    checkpoint/<sink uid>/     the query's Spark checkpoint cut at that batch (what a
                               restore resumes from)
    state/<operator>/          each operator's keyed state as Parquet (key columns, value
                               columns, partition), read by ``read(path)`` without Spark; a
                               general-path operator's as three tables (state, timers,
                               buckets: ``funke.savepoints.general``)

``transform(source, target, edits)`` writes a new savepoint from edited state tables
(``funke.savepoints.edit``).

Spark commits a query's batch by writing ``commits/<N>``; the state written by batch ``N``
is version ``N + 1`` of each state store. Cutting the checkpoint at the last committed
batch ``N`` (offsets and commits up to ``N``, state versions up to ``N + 1``, nothing
newer) gives a consistent copy even while the job runs on: Spark writes each file once
and never rewrites an older one. Starting a job from the copy resumes exactly after
batch ``N``, the way Spark resumes after a crash, except that the query gets a new id (its
exactly-once sinks then write the replayed batches again, as a new run should).

Restore rules (Flink's, by uid): a query is matched by its sink's uid and each stateful
operator in it by its own uid and state layout. A query in the savepoint that the job no
longer has is refused unless ``allow_non_restored_state``; a query new in the job starts
empty, reading its sources from the beginning (its query has no positions yet); a
stateful operator whose uid, kind or state fields changed is refused before any record is
processed, naming the operator and the field. Stateless changes (a filter, a map, a
changed step after a window) restore (``funke.savepoints.restore``).

The package sits below the runtime: a job takes and restores savepoints through it, and it
holds what both read, the job's checkpoint directory (``checkpoints``) and the registry of
jobs and savepoints under the funke home (``registry``).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from funke.errors import PlanError
from funke.savepoints.checkpoints import BUCKETS, Checkpoints
from funke.savepoints.errors import CheckpointChangedError, SavepointError
from funke.savepoints.general import FORMAT as GENERAL
from funke.savepoints.general import SNAPSHOT_VARIABLE, decode_buckets, table_names, write_tables
from funke.savepoints.registry import registry

#: The savepoint format this funke writes. 2: a general-path operator's snapshots in the checkpoint keep
#: their keyed state and timers column by column (``funke.semantics.snapshot_columns``), which a funke
#: that reads format 1 only cannot unpickle, so it refuses the savepoint by its format instead.
FORMAT = 2
#: The formats this funke restores: format 1's snapshots hold the same state as rows.
READABLE_FORMATS = (1, 2)
#: What a query's ``layout`` lists: 2 adds the two-input operators (connect, broadcast state, joins)
#: to the one-input ones (windows, rolling aggregates, process functions) of layout 1.
LAYOUT_VERSION = 2
MANIFEST = "manifest.json"
_VERSIONED = re.compile(r"^\.?(\d+)\.(changelog|zip|delta|snapshot)(\.crc)?$")
_BATCH = re.compile(r"^\.?(\d+)(\.crc)?$")


#: How many times ``take`` cuts a running job's checkpoint before it gives up (each try at
#: the batch committed last when it starts; Spark's cleanup rarely meets two tries in a row).
TAKE_TRIES = 5


@dataclass(frozen=True)
class Savepoint:
    path: Path
    manifest: dict[str, Any]

    @property
    def job(self) -> str:
        return self.manifest["job"]

    @property
    def batches(self) -> dict[str, int]:
        """Sink uid -> the committed micro-batch the savepoint holds."""
        return {uid: q["batch"] for uid, q in self.manifest["queries"].items()}

    def operators(self) -> list[str]:
        """Names of the state tables (``state/<name>``); a general-path operator has three."""
        names = set()
        for q in self.manifest["queries"].values():
            for op in q["operators"]:
                if op.get("table"):
                    names.add(op["table"])
                names.update(op.get("tables", {}).values())
        return sorted(names)

    def table(self, name: str) -> Any:
        """One operator's state as a pandas DataFrame (read with pyarrow: no Spark needed)."""
        import pyarrow.parquet as pq  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

        path = self.path / "state" / name
        if not path.is_dir():
            raise SavepointError(f"savepoint {self.path} has no state table {name!r}; it has: {', '.join(self.operators()) or 'none'}")
        return pq.read_table(path).to_pandas()

    def tables(self) -> dict[str, Any]:
        return {name: self.table(name) for name in self.operators()}


def read(path: str | Path) -> Savepoint:
    """The savepoint at ``path``: its manifest and (``.tables()``) its state in the open format."""
    root = Path(path)
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise SavepointError(f"{root} is not a funke savepoint: it has no {MANIFEST}")
    data = json.loads(manifest.read_text())
    if data.get("format") not in READABLE_FORMATS:
        raise SavepointError(
            f"savepoint {root} has format {data.get('format')!r}; this funke reads formats {', '.join(map(str, READABLE_FORMATS))}"
        )
    return Savepoint(root, data)


def dispose(path: str | Path) -> None:
    """Delete a savepoint (and forget it in the registry)."""
    sp = read(path)
    shutil.rmtree(sp.path)
    registry().forget_savepoint(str(sp.path))


def transform(source: str | Path, target: str | Path, edits: Mapping[str, Any], *, spark: Any = None) -> Savepoint:
    """A new savepoint at ``target``: ``source``'s, with some operators' state replaced by
    edited tables (Flink's State Processor API). ``source`` stays as it was.

    ``edits`` maps a state table's name (``Savepoint.operators()``) to its new content: a
    pandas DataFrame, a Spark DataFrame, or a function that takes the table as pandas and
    returns the new one. Rows left out are deleted from the state, changed rows updated, new
    rows inserted (their Spark partition is computed; ``partition_id`` may be left out).
    Every edit is checked against the operator's state layout before anything is written:
    an unknown or missing column, a wrong type, a null, a key given twice raise
    ``SavepointError`` naming the table and the column.

    The new savepoint holds one more micro-batch per edited query: a batch without data
    (same source positions and watermark as the saved one) whose state is the edited
    state, so a job restored from it goes on from there. Editing needs a classic Spark
    session (``spark``, else the active one) and works for native-path window aggregations
    (built-in ``count()``, ``sum()``...) and for general-path operators' tables (their
    ``value`` JSON edited, rows deleted; keys new to the state are refused). Example::

        sp = funke.savepoints.read("/tmp/savepoints/savepoint-ysb-...")
        def reset(df):
            df.loc[df["campaign_id"] == "c7", "count"] = 0
            return df
        edited = funke.savepoints.transform(sp.path, "/tmp/savepoints/ysb-reset-c7", {"campaign-window": reset})
        env.execute(name="ysb", from_savepoint=str(edited.path))
    """
    from funke.savepoints.edit import transform as run  # (edit.py builds on this module: a module-level import would be circular)

    return run(source, target, edits, spark=spark)


# -- taking ----------------------------------------------------------------------------------


def take(
    checkpoint_root: str,
    *,
    job: str,
    target: str | Path,
    layouts: dict[str, list[dict[str, Any]]] | None = None,
    spark: Any = None,
) -> Savepoint:
    """Cut every query's checkpoint under ``checkpoint_root`` at its last committed batch into a
    new savepoint directory inside ``target``; export each operator's state as Parquet when
    ``spark`` is given. ``layouts``: sink uid -> its stateful operators (``state_layout``).

    A running job's queries go on committing while the copy runs, and Spark's cleanup can
    remove a file of the cut meanwhile: the cut is then taken again at the new last batch,
    up to ``TAKE_TRIES`` times."""
    tries = 1
    while True:
        try:
            return _take_once(checkpoint_root, job=job, target=target, layouts=layouts, spark=spark)
        except CheckpointChangedError as e:
            if tries == TAKE_TRIES:
                raise CheckpointChangedError(f"{e} ({TAKE_TRIES} tries, each met Spark's cleanup)") from None
            tries += 1


def _take_once(
    checkpoint_root: str,
    *,
    job: str,
    target: str | Path,
    layouts: dict[str, list[dict[str, Any]]] | None,
    spark: Any,
) -> Savepoint:
    started = time.monotonic()
    checkpoints = Checkpoints(checkpoint_root)
    if checkpoints.uri:
        raise PlanError(f"savepoints read the checkpoint through the local filesystem; {checkpoint_root} is not local")
    root = Path(checkpoints.local_root())
    if not root.is_dir():
        raise SavepointError(f"job {job!r} has no checkpoint at {root}: it has not run as a streaming job yet")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    out = Path(target) / f"savepoint-{job}-{stamp}-{uuid.uuid4().hex[:6]}"
    try:  # no savepoint without its manifest is left behind
        queries = _cut(root, checkpoints, out, layouts)
        if not queries:
            raise SavepointError(f"job {job!r} has committed no micro-batch yet under {root}: nothing to save")
        if (root / BUCKETS).is_file():  # the key buckets the restored job must keep (Checkpoints.recorded_buckets)
            shutil.copy2(root / BUCKETS, out / "checkpoint" / BUCKETS)
        if spark is not None:
            for uid, q in queries.items():
                for op in q["operators"]:
                    if is_general(op):
                        op["format"], op["tables"] = GENERAL, table_names(op["table"])
                    op["rows"] = export_state(spark, out / "checkpoint" / uid, q["batch"], op, out / "state" / op["table"])
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    manifest = {
        "format": FORMAT,
        "layout_version": LAYOUT_VERSION,
        "job": job,
        "created_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "versions": _versions(spark),
        "queries": queries,
        "took_ms": round((time.monotonic() - started) * 1000),
        "size_bytes": sum(f.stat().st_size for f in out.rglob("*") if f.is_file()),
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return Savepoint(out, manifest)


def _cut(root: Path, checkpoints: Checkpoints, out: Path, layouts: dict[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
    """Each query's checkpoint under ``root`` cut at its last committed batch into ``out/checkpoint``; its manifest entry."""
    queries: dict[str, Any] = {}
    for query in sorted(p for p in root.iterdir() if p.is_dir()):
        markers = [m.name for m in root.iterdir() if m.is_file() and m.name.startswith(("_END_" + query.name + "__", "_FINISHED_" + query.name))]
        batch = checkpoints.last_committed(query.name)
        if batch < 0:
            continue  # nothing committed yet: the query starts empty on restore
        dest = out / "checkpoint" / query.name
        _copy_cut(query, dest, batch)
        for m in markers:
            shutil.copy2(root / m, out / "checkpoint" / m)
        relocate_schema_paths(dest, query)
        offsets = (dest / "offsets" / str(batch)).read_text().splitlines()
        meta = json.loads(offsets[1]) if len(offsets) > 1 else {}
        queries[query.name] = {
            "batch": batch,
            "watermark_ms": meta.get("batchWatermarkMs"),
            "source_offsets": [json.loads(x) if x.strip() not in ("", "-") else None for x in offsets[2:]],
            "operators": _operators(dest, (layouts or {}).get(query.name, [])),
            "layout": (layouts or {}).get(query.name, []),
        }
    return queries


def _copy_cut(src: Path, dest: Path, batch: int) -> None:
    """Copy a query's checkpoint without anything written after ``batch`` committed."""

    def newer(path: Path) -> bool:
        if path.name.endswith(".tmp"):  # a file Spark is writing (it renames it when done)
            return True
        rel = path.relative_to(src).parts
        if rel[0] in ("offsets", "commits") and len(rel) == 2:
            m = _BATCH.match(rel[1])
            return bool(m) and int(m.group(1)) > batch
        if rel[0] == "state":
            m = _VERSIONED.match(path.name)
            return bool(m) and int(m.group(1)) > batch + 1
        return False

    for path in sorted(src.rglob("*")):
        target = dest / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif not newer(path):
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(path, target)
            except FileNotFoundError:  # Spark's maintenance removed an old file meanwhile
                if not path.name.startswith("."):
                    raise CheckpointChangedError(f"{path} vanished while it was copied (Spark cleaned it up)") from None


def relocate_schema_paths(dest: Path, src: Path) -> None:
    """Operator metadata v2 names its state schema files by absolute path: point them at the copy."""
    for meta in dest.glob("state/*/_metadata/v2/*"):
        if meta.name.startswith("."):
            continue
        text = meta.read_text()
        moved = text.replace(f"file:{src}/", f"file:{dest}/").replace(f"file://{src}/", f"file://{dest}/")
        if moved != text:
            meta.write_text(moved)
            (meta.parent / f".{meta.name}.crc").unlink(missing_ok=True)  # Hadoop would refuse the old checksum


def _operators(checkpoint: Path, layout: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spark's stateful operators of one query, named after funke's when it is unambiguous."""

    def listing(sub: str) -> list[str]:
        d = checkpoint / sub
        return [p.name for p in d.iterdir()] if d.is_dir() else []

    return operators_of(checkpoint.name, layout, listing, lambda sub: (checkpoint / sub).read_text())


def operators_of(query: str, layout: list[dict[str, Any]], listing: Any, read_text: Any) -> list[dict[str, Any]]:
    """:func:`_operators` over any filesystem: ``listing(sub)`` names the entries of a folder of the
    query's checkpoint ([] when missing), ``read_text(sub)`` reads a file (a local path or Hadoop's)."""
    ops = []
    for name in sorted((n for n in listing("state") if n.isdigit()), key=int):
        info = _operator_metadata(f"state/{name}", listing, read_text)
        ops.append({"operator_id": int(name), "spark_operator": info.get("operatorName", "?"), "state_variables": info.get("variables", [])})
    # Named after funke's operator only when the query has one: Spark numbers several in its
    # own order, which funke does not rely on.
    single = layout[0] if len(layout) == 1 and len(ops) == 1 else None
    for op in ops:
        op["uid"] = single["uid"] if single else None
        op["table"] = single["uid"] if single else f"{query}-op{op['operator_id']}"
    return ops


def _operator_metadata(op_dir: str, listing: Any, read_text: Any) -> dict[str, Any]:
    v2 = [f"{op_dir}/_metadata/v2/{n}" for n in sorted(listing(f"{op_dir}/_metadata/v2")) if not n.startswith(".")]
    v1 = [f"{op_dir}/_metadata/metadata"] if "metadata" in listing(f"{op_dir}/_metadata") else []
    for meta in v2 + v1:
        try:
            lines = read_text(meta).splitlines()
        except (OSError, IsADirectoryError):
            continue
        data = json.loads(lines[1]) if len(lines) > 1 else {}
        props = json.loads(data.get("operatorPropertiesJson") or "{}")
        variables = [v["stateName"] for v in props.get("stateVariables", [])]
        return {"operatorName": data.get("operatorInfo", {}).get("operatorName"), "variables": variables}
    return {}


def is_general(op: dict[str, Any]) -> bool:
    """Whether a manifest operator entry is a funke general-path operator (one pickled snapshot per bucket)."""
    variables = [v for v in op.get("state_variables", []) if not v.startswith("$")]
    return str(op.get("spark_operator", "")).startswith("transformWithState") and variables == ["operator"]


def export_state(spark: Any, checkpoint: Path, batch: int, op: dict[str, Any], out: Path) -> int:
    """One operator's state at ``batch`` as Parquet: key and value fields as columns; the number of rows.

    A general-path operator's per-bucket snapshots are decoded into the tables of
    ``funke.savepoints.general`` (state, timers, buckets: ``out`` and its siblings). Another
    transformWithState operator keeps one store per state variable; its table holds every
    variable's rows with the variable's name in ``state_variable``.
    """
    state = load_state(spark, checkpoint, batch, op)
    if is_general(op):
        write_tables(state, table_names(op["table"]), out.parent)
        return len(state.state)
    state.write.mode("overwrite").parquet(str(out))
    import pyarrow.parquet as pq  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

    return sum(pq.read_metadata(f).num_rows for f in out.glob("*.parquet"))


def load_state(spark: Any, checkpoint: Path, batch: int, op: dict[str, Any]) -> Any:
    """One operator's state at ``batch`` (read in place: Spark never rewrites a state version):
    a Spark DataFrame of key and value columns, or a general-path operator's decoded tables."""
    from pyspark.sql import functions as F  # (pyspark's lazy import)

    def load(**options: Any) -> Any:
        reader = spark.read.format("statestore").option("path", str(checkpoint)).option("batchId", batch)
        reader = reader.option("operatorId", op["operator_id"])
        for k, v in options.items():
            reader = reader.option(k, v)
        df = reader.load()
        return df.select(F.col("partition_id"), *(column.getter().alias(column.name) for column in state_columns(df.schema)))

    variables = [v for v in op.get("state_variables", []) if not v.startswith("$")]
    if is_general(op):
        return decode_buckets(load(stateVarName=SNAPSHOT_VARIABLE).toPandas(), table=op["table"])
    if variables:
        frames = [load(stateVarName=v).withColumn("state_variable", F.lit(v)) for v in variables]
        df = frames[0]
        for other in frames[1:]:
            df = df.unionByName(other, allowMissingColumns=True)
        return df
    return load()


@dataclass(frozen=True)
class StateColumn:
    """One column of a state table: where it sits in Spark's key or value row."""

    name: str  # the table's column
    part: str  # "key" or "value": the state store row it belongs to
    path: tuple[str, ...]  # field names from that row down to the column
    dtype: Any  # its pyspark DataType

    def getter(self) -> Any:
        from pyspark.sql import functions as F  # (pyspark's lazy import)

        column = F.col(self.part)
        for field in self.path:
            column = column.getField(field)
        return column


def state_columns(schema: Any) -> list[StateColumn]:
    """The table columns of a state data source schema: the key's and the value's fields, a
    nested struct flattened one level (``window_start``); a name taken twice gets its part as
    prefix (``value_key``)."""
    out: list[StateColumn] = []
    taken = {"partition_id"}
    for part in ("key", "value"):
        if part not in schema.names:
            continue
        for name, path, dtype in _flat(schema[part].dataType):
            name = name or part  # a key or value that is not a struct is one column
            alias = name if name not in taken else f"{part}_{name}"
            taken.add(alias)
            out.append(StateColumn(alias, part, path, dtype))
    return out


def _flat(dtype: Any, path: tuple[str, ...] = (), depth: int = 0) -> list[tuple[str, tuple[str, ...], Any]]:
    if not hasattr(dtype, "fields") or depth > 1:
        return [("_".join(path), path, dtype)]
    return [leaf for f in dtype.fields for leaf in _flat(f.dataType, (*path, f.name), depth + 1)]


def _versions(spark: Any) -> dict[str, str]:
    try:  # (the installed distribution's version: the package root sits above this layer)
        out = {"funke": importlib.metadata.version("funke")}
    except importlib.metadata.PackageNotFoundError:
        out = {"funke": "?"}
    try:
        import pyspark  # (optional: a savepoint is read and edited without Spark)

        out["pyspark"] = pyspark.__version__
    except ImportError:
        pass
    return out
