"""A general-path operator's state in a savepoint, as open tables (format ``funke-general-v1``).

A general-path operator (``process``, rolling aggregates, custom triggers) runs on Spark's
``transformWithStateInPandas`` with its keys in buckets: Spark keeps one value per bucket,
the pickled snapshot of the funke operator that runs the bucket's keys
(``funke.spark.general``). A snapshot reads as plain rows (``KeyedStateBackend.export_rows``,
``InternalTimerService.export_rows``; it keeps them column by column, older ones as the rows,
``funke.semantics.snapshot_columns``); this module lays them out as three tables that
anyone can read without funke, and back:

``<table>``: one row per state entry (per state, key and namespace)
    ``key`` (JSON), ``scope``, ``state``, ``kind``, ``namespace``, ``value`` (JSON),
    ``last_access`` (JSON), ``bucket``
``<table>.timers``: one row per pending timer
    ``key`` (JSON), ``domain``, ``namespace``, ``timestamp``, ``bucket``
``<table>.buckets``: one row per bucket
    ``bucket``, ``partition_id``, ``watermark``, ``late_records_dropped``, ``inputs`` (JSON: a
    two-input operator's watermark per input), ``other`` (JSON: the parts of the operator with no
    table of their own, e.g. an interval join's buffers and cleanup timers, broadcast state)

``scope`` says whose state it is: ``user`` (the function's own, under its descriptor's
name), ``window`` (window contents, the merging window set of sessions), ``trigger`` (a
trigger's state) or ``rolling`` (a rolling aggregate's accumulated record, state ``acc``).

Keys and values are JSON text (``json.loads`` reads them). Types JSON has no exact form
for are tagged: an object with one member whose name starts with ``$``
(``{"$tuple": [1, 2]}``); see :func:`encode_value`. In ``key`` (and wherever a value must
be hashable: map keys, set elements) an array is a tuple, since a list cannot be a key.
Nothing is dropped or approximated: a value of any other type is kept as its pickle, tagged
``$pickle`` with its type and ``repr``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import pickle
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from funke.savepoints.errors import SavepointError
from funke.semantics.clock import ManualClock
from funke.semantics.evictors import TimestampedValue
from funke.semantics.state import KeyedStateBackend
from funke.semantics.timers import InternalTimerService

FORMAT = "funke-general-v1"
#: The state variable a general operator keeps per bucket, and the store's column names
#: (``funke.spark.general``: ``BUCKET`` and ``BucketProcessor``'s schema).
SNAPSHOT_VARIABLE, BUCKET_COLUMN, SNAPSHOT_COLUMN = "operator", "fk_b", "snapshot"
SCOPES = ("user", "window", "trigger")
ROLLING_SCOPE, ROLLING_STATE = "rolling", "acc"

STATE_COLUMNS = ("key", "scope", "state", "kind", "namespace", "value", "last_access", "bucket")
TIMER_COLUMNS = ("key", "domain", "namespace", "timestamp", "bucket")
BUCKET_COLUMNS = ("bucket", "partition_id", "watermark", "late_records_dropped", "inputs", "other")
#: Bucket columns an older savepoint's tables lack.
_ADDED_COLUMNS = frozenset({"inputs", "other"})
_SNAPSHOT_FIELDS = {"state", "timers", "watermark", "late_records_dropped", "acc"}
#: A two-input operator's snapshot (``funke.spark.general``): the operator's own, and each input's watermark.
_TWO_INPUTS = frozenset({"operator", "input_watermarks"})
#: In ``other``: the snapshot's own field names, in order.
_FIELDS = "snapshot_fields"


def table_names(table: str) -> dict[str, str]:
    """The names of an operator's three tables, by role (recorded in the manifest)."""
    return {"state": table, "timers": f"{table}.timers", "buckets": f"{table}.buckets"}


# -- values as JSON -----------------------------------------------------------------------------


def encode_value(value: Any) -> str:
    """A state value as JSON text; :func:`decode_value` gives it back, equal and of the same type.

    JSON's own types stand for themselves (a list is an array, a dict with string keys an
    object). The rest is tagged: ``$tuple``, ``$map`` (a dict with other keys, or with a key
    starting with ``$``: ``[[key, value], ...]``), ``$set``, ``$frozenset``, ``$float``
    (``"nan"``, ``"inf"``, ``"-inf"``), ``$datetime``/``$date``/``$time`` (ISO 8601, naive or
    with a fixed offset such as ``+00:00``), ``$timedelta`` (``[days, seconds, microseconds]``),
    ``$decimal`` (text), ``$bytes`` (base64), ``$timestamped`` (a window element kept with
    its timestamp: ``[value, timestamp]``), and ``$pickle`` for anything else
    (``{"type", "repr", "base64"}``). numpy scalars are written as the Python number they
    equal.

    >>> encode_value({"n": 3, "seen": (1, 2)})
    '{"n":3,"seen":{"$tuple":[1,2]}}'
    >>> decode_value(encode_value({1: float("nan")}))
    {1: nan}
    """
    return json.dumps(_plain(value, key=False), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_key(key: Any) -> str:
    """A state key as JSON text: a string or a number as itself, a tuple as an array.

    >>> encode_key("k0"), encode_key(("a", 7))
    ('"k0"', '["a",7]')
    """
    return json.dumps(_plain(key, key=True), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def decode_value(text: str) -> Any:
    """The inverse of :func:`encode_value`."""
    return _python(json.loads(text), key=False)


def decode_key(text: str) -> Any:
    """The inverse of :func:`encode_key` (every array is a tuple).

    >>> decode_key('["a",7]')
    ('a', 7)
    """
    return _python(json.loads(text), key=True)


def _plain(v: Any, *, key: bool) -> Any:
    t = type(v)
    if v is None or t in (bool, int, str):
        return v
    if t is float:
        if math.isfinite(v):
            return v
        return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if t is tuple:
        items = [_plain(x, key=key) for x in v]
        return items if key else {"$tuple": items}
    if t is list:
        return [_plain(x, key=key) for x in v]
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in v):
            return {k: _plain(x, key=False) for k, x in v.items()}
        return {"$map": [[_plain(k, key=True), _plain(x, key=False)] for k, x in v.items()]}
    if t in (set, frozenset):
        items = sorted((_plain(x, key=True) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
        return {f"${t.__name__}": items}
    if t is dt.datetime and _fixed_offset(v):
        return {"$datetime": v.isoformat()}
    if t is dt.date:
        return {"$date": v.isoformat()}
    if t is dt.time and _fixed_offset(v):
        return {"$time": v.isoformat()}
    if t is dt.timedelta:
        return {"$timedelta": [v.days, v.seconds, v.microseconds]}
    if t is decimal.Decimal:
        return {"$decimal": str(v)}
    if t is bytes:
        return {"$bytes": base64.b64encode(v).decode("ascii")}
    if t is TimestampedValue:
        return {"$timestamped": [_plain(v.value, key=False), v.timestamp]}
    if _is_numpy_scalar(v):
        return _plain(v.item(), key=key)
    kept = base64.b64encode(pickle.dumps(v)).decode("ascii")
    return {"$pickle": {"type": f"{t.__module__}.{t.__qualname__}", "repr": repr(v), "base64": kept}}


def _fixed_offset(v: dt.datetime | dt.time) -> bool:
    """ISO 8601 gives it back exactly: naive or at a fixed offset (a named zone keeps its pickle)."""
    return (v.tzinfo is None or type(v.tzinfo) is dt.timezone) and not v.fold


def _is_numpy_scalar(v: Any) -> bool:
    module = type(v).__module__
    return module == "numpy" and hasattr(v, "item") and getattr(v, "shape", None) == () and type(v.item()) in (bool, int, float, str)


_TAGGED = {
    "$float": lambda x: float(x),
    "$datetime": dt.datetime.fromisoformat,
    "$date": dt.date.fromisoformat,
    "$time": dt.time.fromisoformat,
    "$timedelta": lambda x: dt.timedelta(days=x[0], seconds=x[1], microseconds=x[2]),
    "$decimal": decimal.Decimal,
    "$bytes": base64.b64decode,
    "$pickle": lambda x: pickle.loads(base64.b64decode(x["base64"])),
}


def _python(v: Any, *, key: bool) -> Any:
    if isinstance(v, list):
        items = [_python(x, key=key) for x in v]
        return tuple(items) if key else items
    if not isinstance(v, dict):
        return v
    if len(v) == 1 and next(iter(v)).startswith("$"):
        tag, x = next(iter(v.items()))
        if tag == "$tuple":
            return tuple(_python(i, key=False) for i in x)
        if tag == "$map":
            return {_python(k, key=True): _python(i, key=False) for k, i in x}
        if tag in ("$set", "$frozenset"):
            return (set if tag == "$set" else frozenset)(_python(i, key=True) for i in x)
        if tag == "$timestamped":
            return TimestampedValue(_python(x[0], key=False), x[1])
        if tag in _TAGGED:
            return _TAGGED[tag](x)
        raise ValueError(f"unknown tag {tag!r} in a {FORMAT} value; known: $tuple, $map, $set, $frozenset, $timestamped, {', '.join(_TAGGED)}")
    return {k: _python(x, key=False) for k, x in v.items()}


# -- bucket snapshots <-> tables ------------------------------------------------------------------


@dataclass(frozen=True)
class GeneralTables:
    """One general-path operator's state as three pandas DataFrames (see the module's docstring)."""

    state: Any
    timers: Any
    buckets: Any

    def by_role(self) -> dict[str, Any]:
        return {"state": self.state, "timers": self.timers, "buckets": self.buckets}


def decode_buckets(raw: Any, *, table: str) -> GeneralTables:
    """The tables of an operator from its raw state rows: one per bucket, with the bucket
    (``fk_b``), the pickled snapshot (``snapshot``) and, when known, ``partition_id``."""
    for column in (BUCKET_COLUMN, SNAPSHOT_COLUMN):
        if column not in raw.columns:
            raise SavepointError(f"state table {table!r}: the raw rows of a general-path operator need a {column!r} column, got {list(raw.columns)}")
    state: list[dict[str, Any]] = []
    timers: list[dict[str, Any]] = []
    buckets: list[dict[str, Any]] = []
    partitions = raw["partition_id"].tolist() if "partition_id" in raw.columns else [None] * len(raw)
    for bucket, blob, partition in sorted(zip(raw[BUCKET_COLUMN].tolist(), raw[SNAPSHOT_COLUMN].tolist(), partitions, strict=True), key=lambda r: r[0]):
        snapshot = _unpickle(blob, table, bucket)
        s, t, b = decode_snapshot(snapshot, bucket=int(bucket), table=table)
        state += s
        timers += t
        buckets.append({**b, "partition_id": None if partition is None else int(partition)})
    return GeneralTables(_frame(state, STATE_COLUMNS), _frame(timers, TIMER_COLUMNS), _frame(buckets, BUCKET_COLUMNS))


def _unpickle(blob: Any, table: str, bucket: Any) -> dict[str, Any]:
    try:
        snapshot = pickle.loads(bytes(blob))
    except Exception as e:
        raise SavepointError(
            f"state table {table!r}: the state of bucket {bucket} cannot be unpickled ({type(e).__name__}: {e}). It holds "
            "objects of the job's own code: take the savepoint from the running job (funke savepoint <job>), or with the "
            "job's modules importable (PYTHONPATH)"
        ) from e
    if not isinstance(snapshot, dict):
        raise SavepointError(f"state table {table!r}: bucket {bucket} holds a {type(snapshot).__name__}, not a funke operator snapshot")
    return snapshot


def decode_snapshot(snapshot: dict[str, Any], *, bucket: int, table: str = "?") -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """One bucket's snapshot as (state rows, timer rows, bucket row).

    Parts without a table of their own (fields other than keyed state, timers, rolling
    accumulators, and timers not in the keyed timer service's shape) go whole into the bucket
    row's ``other``, as JSON: nothing is dropped.
    """
    inputs = None
    if set(snapshot) == _TWO_INPUTS:
        inputs, snapshot = snapshot["input_watermarks"], snapshot["operator"]
    other = {k: v for k, v in snapshot.items() if k not in _SNAPSHOT_FIELDS}
    if any("domain" not in t for t in snapshot.get("timers", ())):
        other["timers"] = snapshot["timers"]
    if other:
        other[_FIELDS] = list(snapshot)  # which fields the snapshot has, so that it comes back exactly
    state = []
    for row in snapshot.get("state", ()):
        scope, name = split_state_name(row["state"])
        state.append({
            "key": encode_key(row["key"]), "scope": scope, "state": name, "kind": row["kind"], "namespace": row["namespace"],
            "value": encode_value(row["value"]), "last_access": encode_value(row["last_access"]), "bucket": bucket,
        })  # fmt: skip
    for key, acc in snapshot.get("acc", {}).items():
        state.append({
            "key": encode_key(key), "scope": ROLLING_SCOPE, "state": ROLLING_STATE, "kind": "value", "namespace": "void",
            "value": encode_value(acc), "last_access": None, "bucket": bucket,
        })  # fmt: skip
    timers = [
        {"key": encode_key(t["key"]), "domain": t["domain"], "namespace": t["namespace"], "timestamp": t["timestamp"], "bucket": bucket}
        for t in (() if "timers" in other else snapshot.get("timers", ()))
    ]
    info = {
        "bucket": bucket, "watermark": snapshot.get("watermark"), "late_records_dropped": snapshot.get("late_records_dropped"),
        "inputs": None if inputs is None else encode_value(list(inputs)), "other": encode_value(other) if other else None,
    }  # fmt: skip
    return state, timers, info


def split_state_name(name: str) -> tuple[str, str]:
    """``"user:n"`` -> ``("user", "n")``: the backend's table name as (scope, the state's own name)."""
    scope, sep, rest = name.partition(":")
    return (scope, rest) if sep and scope in SCOPES else ("", name)


def join_state_name(scope: str, name: str) -> str:
    return f"{scope}:{name}" if scope else name


def encode_tables(tables: GeneralTables, *, table: str = "?") -> dict[int, dict[str, Any]]:
    """The inverse of :func:`decode_buckets`: bucket -> the operator snapshot its rows give."""
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

    snapshots: dict[int, dict[str, Any]] = {}
    for b in tables.buckets.to_dict("records"):
        snap: dict[str, Any] = {}
        if _given(b.get("watermark")):
            snap.update(state=[], timers=[], watermark=int(b["watermark"]))
        if _given(b.get("late_records_dropped")):
            snap["late_records_dropped"] = int(b["late_records_dropped"])
        if _given(b.get("other")):
            snap.update(decode_value(b["other"]))
        snapshots[int(b["bucket"])] = snap
    inputs = {int(b["bucket"]): decode_value(b["inputs"]) for b in tables.buckets.to_dict("records") if _given(b.get("inputs"))}
    for r in tables.state.to_dict("records"):
        snap = _bucket(snapshots, r, table, "state")
        if r["scope"] == ROLLING_SCOPE:
            snap.setdefault("acc", {})[decode_key(r["key"])] = decode_value(r["value"])
            continue
        if "state" not in snap:
            raise SavepointError(f"table {table!r}: bucket {r['bucket']} has keyed state but no watermark in {table}.buckets")
        last = r["last_access"]
        snap["state"].append({
            "state": join_state_name(r["scope"], r["state"]), "kind": r["kind"], "key": decode_key(r["key"]),
            "namespace": r["namespace"], "value": decode_value(r["value"]),
            "last_access": None if last is None or (not isinstance(last, str) and pd.isna(last)) else decode_value(last),
        })  # fmt: skip
    for r in tables.timers.to_dict("records"):
        snap = _bucket(snapshots, r, table, "timers")
        if "timers" not in snap:
            raise SavepointError(f"table {table!r}: bucket {r['bucket']} has timers but no watermark in {table}.buckets")
        snap["timers"].append({"domain": r["domain"], "key": decode_key(r["key"]), "namespace": r["namespace"], "timestamp": int(r["timestamp"])})
    for bucket, snap in snapshots.items():
        fields = snap.pop(_FIELDS, None)
        if fields is not None:
            snapshots[bucket] = {f: snap[f] for f in fields}
    for bucket, marks in inputs.items():
        snapshots[bucket] = {"operator": snapshots[bucket], "input_watermarks": marks}
    return snapshots


def _given(v: Any) -> bool:
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

    return v is not None and not pd.isna(v)


def _bucket(snapshots: dict[int, dict[str, Any]], row: dict[str, Any], table: str, role: str) -> dict[str, Any]:
    bucket = int(row["bucket"])
    if bucket not in snapshots:
        raise SavepointError(f"table {table!r}: a {role} row is in bucket {bucket}, which {table}.buckets does not list")
    return snapshots[bucket]


def _frame(rows: Iterable[dict[str, Any]], columns: tuple[str, ...]) -> Any:
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

    frame = pd.DataFrame(list(rows), columns=list(columns))
    for c in ("bucket", "timestamp", "partition_id", "watermark", "late_records_dropped"):
        if c in frame.columns:
            frame[c] = frame[c].astype("Int64")
    return frame


def write_tables(tables: GeneralTables, names: dict[str, str], root: Any) -> None:
    """Write the tables as Parquet under ``root`` (the savepoint's ``state/``), one directory each."""

    import pyarrow as pa  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)
    import pyarrow.parquet as pq

    types = {
        "bucket": pa.int64(), "timestamp": pa.int64(), "partition_id": pa.int64(), "watermark": pa.int64(),
        "late_records_dropped": pa.int64(),
    }  # fmt: skip
    for role, frame in tables.by_role().items():
        out = root / names[role]
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        schema = pa.schema([(c, types.get(c, pa.string())) for c in frame.columns])
        pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), out / "part-00000.parquet")


# -- edits (funke.savepoints.transform) -----------------------------------------------------------

_NULLABLE = {"state": {"last_access"}, "timers": set(), "buckets": {"partition_id", "watermark", "late_records_dropped", *_ADDED_COLUMNS}}
_COLUMNS = {"state": STATE_COLUMNS, "timers": TIMER_COLUMNS, "buckets": BUCKET_COLUMNS}
_KINDS = ("value", "list", "map", "reducing", "aggregating")


def edited_snapshots(before: GeneralTables, after: GeneralTables, names: dict[str, str]) -> dict[int, dict[str, Any] | None]:
    """Check edited tables of one operator; bucket -> its new snapshot (``None``: delete the bucket), changed buckets only.

    A key keeps its bucket: the bucket of a key new to the state depends on the job's
    bucket count, which a savepoint does not record, so new keys are refused.
    """
    for role, frame in after.by_role().items():
        _check_frame(names[role], role, frame)
    homes = _key_buckets(before, names)
    for role in ("state", "timers"):
        frame = after.by_role()[role]
        for key, bucket in zip(frame["key"], frame["bucket"], strict=True):
            home = homes.get(key)
            if home is None:
                raise SavepointError(
                    f"table {names[role]!r}: key {key} is not in the savepoint's state; transform() edits the state of keys "
                    "the operator already holds (a new key's bucket depends on the job's bucket count, which the savepoint does not record)"
                )
            if home != int(bucket):
                raise SavepointError(f"table {names[role]!r}: key {key} is in bucket {home}, not {int(bucket)}: a key's bucket cannot change")
    twice = after.state.duplicated(["bucket", "key", "scope", "state", "namespace"], keep=False)
    if twice.any():
        first = after.state[twice].iloc[0]
        raise SavepointError(
            f"table {names['state']!r} has {int(twice.sum())} rows for state {first['scope']}:{first['state']} of key {first['key']} in "
            f"namespace {first['namespace']}: keep one row per state, key and namespace"
        )
    if after.buckets["bucket"].duplicated().any():
        raise SavepointError(f"table {names['buckets']!r} lists a bucket twice: keep one row per bucket")
    old = encode_tables(before, table=names["state"])
    try:
        new = encode_tables(after, table=names["state"])
    except (ValueError, TypeError, KeyError) as e:
        raise SavepointError(f"table {names['state']!r}: a row cannot be read back ({type(e).__name__}: {e}); keep the JSON as read(...).table() gave it") from e
    for bucket, snap in new.items():
        _check_snapshot(snap, bucket, names)
    changed: dict[int, dict[str, Any] | None] = {b: s for b, s in new.items() if old.get(b) != s}
    for gone in set(old) - set(new):
        changed[gone] = None
    unknown = set(new) - set(old)
    if unknown:
        raise SavepointError(f"table {names['buckets']!r} lists bucket(s) {sorted(unknown)} that the savepoint does not have: a bucket cannot be added")
    return changed


def _check_frame(table: str, role: str, frame: Any) -> None:
    import pandas as pd  # (pandas and pyarrow load where state tables are read, as Spark's Arrow stack does)

    if not isinstance(frame, pd.DataFrame):
        raise SavepointError(f"the edit of table {table!r} gave {type(frame).__name__}: give a pandas DataFrame")
    want = _COLUMNS[role]
    extra = [c for c in frame.columns if c not in want]
    missing = [c for c in want if c not in frame.columns and not (role == "buckets" and c in _ADDED_COLUMNS)]
    if extra or missing:
        what = "; ".join(x for x in (extra and f"has column(s) {extra} it cannot have", missing and f"lacks {missing}") if x)
        raise SavepointError(f"table {table!r} {what}: its columns are {', '.join(want)}, as read(...).table() gave them")
    for c in want:
        if c in _NULLABLE[role]:
            continue
        nulls = frame[c].isna()
        if nulls.any():
            raise SavepointError(f"table {table!r}: column {c!r} is null in row(s) {list(frame.index[nulls][:3])}; drop the row to delete it")
    for c in ("key", "value", "last_access", "scope", "state", "kind", "namespace", "domain"):
        if c in frame.columns:
            bad = next((v for v in frame[c] if v is not None and not (isinstance(v, float) and math.isnan(v)) and not isinstance(v, str)), None)
            if bad is not None:
                raise SavepointError(f"table {table!r}: column {c!r} holds {type(bad).__name__} values ({bad!r}); it holds text (JSON for key and value)")
    if role == "state":
        untimed = frame["last_access"].isna() & (frame["scope"] != ROLLING_SCOPE)
        if untimed.any():
            raise SavepointError(f"table {table!r}: column 'last_access' is null in row(s) {list(frame.index[untimed][:3])}; only a rolling aggregate's acc has none")
        bad_kind = sorted(set(frame["kind"]) - set(_KINDS))
        if bad_kind:
            raise SavepointError(f"table {table!r}: kind {bad_kind[0]!r} is not one of {', '.join(_KINDS)}")
        bad_scope = sorted(set(frame["scope"]) - {*SCOPES, ROLLING_SCOPE, ""})
        if bad_scope:
            raise SavepointError(f"table {table!r}: scope {bad_scope[0]!r} is not one of {', '.join((*SCOPES, ROLLING_SCOPE))}")
    for c in ("bucket", "timestamp", "watermark", "late_records_dropped"):
        if c in frame.columns and len(frame) and frame[c].dropna().map(lambda v: float(v) != int(v)).any():
            raise SavepointError(f"table {table!r}: column {c!r} holds numbers that are not whole")


def _key_buckets(tables: GeneralTables, names: dict[str, str]) -> dict[str, int]:
    homes: dict[str, int] = {}
    for frame in (tables.state, tables.timers):
        for key, bucket in zip(frame["key"], frame["bucket"], strict=True):
            homes.setdefault(key, int(bucket))
    return homes


def _check_snapshot(snap: dict[str, Any], bucket: int, names: dict[str, str]) -> None:
    """Load the snapshot's rows the way the operator does; its errors become the table's."""
    try:
        for row in snap.get("state", ()):
            if row["kind"] in ("list", "map") and type(row["value"]) is not (list if row["kind"] == "list" else dict):
                raise ValueError(f"{row['kind']} state {row['state']!r} of key {row['key']!r} needs a JSON {'array' if row['kind'] == 'list' else 'object'} value")
        KeyedStateBackend(ManualClock()).import_rows(snap.get("state", ()))
        InternalTimerService(ManualClock()).import_rows(snap.get("timers", ()))
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise SavepointError(f"table {names['state']!r}: bucket {bucket}'s edited state does not load ({type(e).__name__}: {e})") from e
