"""Queryable state: a running job's keyed state, as of its last committed micro-batch.

``job.state(uid)`` reads one stateful operator's state the way a savepoint exports it
(``funke.savepoints.load_state``: Spark's state data source over the job's own checkpoint,
read in place, since Spark writes every state version once and never rewrites it), without
copying anything. So it is read-committed: a key's state as the last committed batch left
it, never a batch in flight.

Native aggregations give one row per key and window (key columns, then the aggregate
buffer); general-path operators (windows, process functions, rolling aggregates) give the
rows of the savepoint's open format (key and value as JSON text, ``funke.savepoints.general``).

The checkpoint root may be a local path, a ``file://`` URI or any Hadoop filesystem URI
(``hdfs://``, ``s3a://``): its folders are listed through ``Checkpoints`` (Hadoop's
filesystem for URIs) and the state is read by Spark's state data source at that URI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funke.errors import FunkeError, PlanError
from funke.savepoints import is_general, load_state, operators_of


class StateView:
    """One stateful operator's state in a running job (``JobHandle.state(uid)``)."""

    def __init__(self, handle: Any, uid: str) -> None:
        self.handle = handle
        self.uid = uid

    def _locate(self) -> tuple[str, dict[str, Any], list[str]]:
        h = self.handle
        if h.checkpoints is None:
            raise PlanError(f"job '{h.name}': queryable state is read from a streaming run's checkpoint (a bounded run has none)")
        ck = h.checkpoints  # a local path or any Hadoop filesystem URI: listed and read through Checkpoints
        names: list[str] = []
        for query, layout in h.layouts.items():
            keys = {e["uid"]: [k for k, _ in e["keys"]] for e in layout}
            try:
                ops = operators_of(query, layout, lambda sub, q=query: ck.listing(f"{q}/{sub}"), lambda sub, q=query: ck.read_text(f"{q}/{sub}"))
            except FunkeError:
                raise
            except Exception as e:  # noqa: BLE001 (a filesystem Hadoop cannot reach: say which and why)
                reason = e.java_exception.toString() if hasattr(e, "java_exception") else str(e)  # Hadoop's reason, without py4j's trace
                raise PlanError(
                    f"job '{h.name}': cannot read the checkpoint at {ck.location(query)} for queryable state: {reason}; "
                    "give a root on a filesystem whose Hadoop client is on Spark's classpath"
                ) from e
            if not ops:
                names += [e["uid"] for e in layout]
                continue
            for op in ops:
                names.append(op["table"])
                if self.uid in (op["uid"], op["table"]):
                    return query, op, keys.get(op["uid"] or "", [])
        if self.uid in names:
            raise PlanError(f"job '{h.name}': operator {self.uid!r} has committed no micro-batch yet: its state is not readable yet")
        raise PlanError(f"job '{h.name}' has no stateful operator {self.uid!r}; it has: {', '.join(names) or 'none'}")

    def rows(self, key: Any = None) -> list[dict[str, Any]]:
        """Every state row (of ``key`` only, when given) as of the last committed micro-batch."""
        query, op, key_columns = self._locate()
        ck = self.handle.checkpoints
        checkpoint = ck.location(query) if ck.uri else str(Path(ck.local_root()) / query)
        batch = ck.last_committed(query)
        if batch < 0:
            raise PlanError(f"job '{self.handle.name}': operator {self.uid!r} has committed no micro-batch yet: its state is not readable yet")
        state = load_state(self.handle.spark, checkpoint, batch, op)
        frame = state.state if is_general(op) else state.toPandas()
        self.batch = batch
        records = json.loads(frame.to_json(orient="records", date_format="iso", date_unit="ms"))
        if key is None:
            return records
        if is_general(op):
            return [r for r in records if _matches(json.loads(r["key"]), key)]
        return [r for r in records if _matches([r[c] for c in key_columns if c in r], key)]

    def keys(self) -> list[Any]:
        """The keys that have state, in first-seen order."""
        _, op, key_columns = self._locate()
        seen: dict[str, Any] = {}
        for r in self.rows():
            k = json.loads(r["key"]) if is_general(op) else (r[key_columns[0]] if len(key_columns) == 1 else [r[c] for c in key_columns])
            seen.setdefault(json.dumps(k, sort_keys=True, default=str), k)
        return list(seen.values())

    def get(self, key: Any) -> list[dict[str, Any]]:
        """The state rows of ``key`` (a native window aggregation keeps one per open window)."""
        return self.rows(key)

    def as_json(self, key: str | None) -> dict[str, Any]:
        if key is None:
            keys = self.keys()
            return {"job": self.handle.name, "uid": self.uid, "batch": getattr(self, "batch", None), "keys": keys}
        rows = self.get(key)
        return {"job": self.handle.name, "uid": self.uid, "batch": self.batch, "key": key, "rows": rows}


def _matches(actual: Any, wanted: Any) -> bool:
    """``wanted`` (from a URL or CLI: text, or JSON for a composite key) names ``actual``."""
    if isinstance(actual, list) and len(actual) == 1:
        actual = actual[0]
    if actual == wanted or str(actual) == str(wanted):
        return True
    if isinstance(wanted, str):
        try:
            parsed = json.loads(wanted)
        except ValueError:
            return False
        return actual == parsed or (isinstance(actual, list) and isinstance(parsed, list) and [str(a) for a in actual] == [str(p) for p in parsed])
    return False
