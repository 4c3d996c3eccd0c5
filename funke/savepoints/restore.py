"""Restoring a job from a savepoint, by Flink's rules: the savepoints' side of a job's start.

* ``state_layout(sinks)``: what a query keeps as state (its stateful operators, by uid, with
  the fields that shape their state), recorded in a savepoint and compared on restore.
* ``check_restore`` / ``restore``: Flink's restore rules, then the savepoint's checkpoints
  copied in as the job's own, before any query starts.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from pathlib import Path
from typing import Any

from funke.plan import connect, joins, nodes
from funke.savepoints import LAYOUT_VERSION, Savepoint, SavepointError, relocate_schema_paths

# -- state layout ------------------------------------------------------------------------------


#: The stateful operators of two inputs (connect, broadcast state, interval and window joins).
TWO_INPUTS = (connect.CoProcess, connect.BroadcastProcess, joins.IntervalJoin, joins.WindowJoin)
TWO_INPUT_KINDS = frozenset(t.kind for t in TWO_INPUTS)


def state_layout(sinks: list[nodes.Sink]) -> list[dict[str, Any]]:
    """The stateful operators feeding ``sinks`` (one query), upstream first, with their state's shape.

    A two-input operator's ``keys`` are its first input's (none for an unkeyed one), ``second_keys``
    its second input's.
    """
    out = []
    for node in nodes.walk(sinks):
        if isinstance(node, (*nodes.SPARK_STATEFUL, nodes.KeyedProcess, *TWO_INPUTS)):
            entry: dict[str, Any] = {"uid": node.uid, "kind": node.kind, "where": node.where(), "keys": _keys(node.inputs[0], node)}
            if isinstance(node, TWO_INPUTS):
                entry["second_keys"] = _keys(node.inputs[1], node)
            if isinstance(node, (nodes.WindowAggregate, joins.WindowJoin)):
                entry["window"] = node.assigner.describe()
            if isinstance(node, nodes.WindowAggregate):
                entry["trigger"] = node.trigger.describe() if node.trigger is not None else None
                entry["aggregates"] = [str(a) for a in node.aggregates] or [_qualname(node.function)]
            elif isinstance(node, nodes.RollingAggregate):
                entry["aggregates"] = [str(a) for a in getattr(node, "aggregates", ())]
            else:
                entry["function"] = _qualname(getattr(node, "function", None))
            if isinstance(node, joins.IntervalJoin):
                entry["bounds"] = node.bounds
            out.append(entry)
    return out


def _keys(upstream: nodes.Node, node: nodes.Node) -> list[list[Any]]:
    schema = upstream.schema
    return [[k, schema.field(k, node=node.where()).dtype if schema is not None else None] for k in (upstream.keys or ())]


def _qualname(fn: Any) -> str | None:
    if fn is None:
        return None
    t = fn if isinstance(fn, type) else type(fn)
    return f"{t.__module__}.{t.__qualname__}"


def fingerprint(layouts: dict[str, list[dict[str, Any]]]) -> str:
    return hashlib.sha1(json.dumps(layouts, sort_keys=True).encode()).hexdigest()[:12]


# -- restoring ---------------------------------------------------------------------------------


def check_restore(sp: Savepoint, layouts: dict[str, list[dict[str, Any]]], *, allow_non_restored_state: bool) -> list[str]:
    """Raise SavepointError when the job cannot take the savepoint's state; else the notes
    (queries that start empty, state left behind with ``allow_non_restored_state``)."""
    notes = []
    saved = sp.manifest["queries"]
    if sp.manifest.get("layout_version", 1) < LAYOUT_VERSION:  # its layouts name no two-input operator: compare the others
        layouts = {uid: [op for op in ops if op["kind"] not in TWO_INPUT_KINDS] for uid, ops in layouts.items()}
    gone = sorted(set(saved) - set(layouts))
    if gone and not allow_non_restored_state:
        raise SavepointError(
            f"savepoint {sp.path} holds state of {', '.join(repr(g) for g in gone)}, which this job no longer writes "
            "(matched by sink uid); pass allow_non_restored_state=True (--allow-non-restored-state) to drop it"
        )
    notes += [f"state of {g!r} dropped (allow_non_restored_state)" for g in gone]
    for uid, layout in layouts.items():
        if uid not in saved:
            notes.append(f"{uid!r} is new: it starts empty and reads its sources from the beginning")
            continue
        before = {op["uid"]: op for op in saved[uid].get("layout", [])}
        now = {op["uid"]: op for op in layout}
        for op_uid, op in before.items():
            if op_uid not in now:
                if allow_non_restored_state:
                    notes.append(f"{uid!r}: operator {op['where']} (uid {op_uid}) is gone; the query starts empty")
                    continue
                raise SavepointError(
                    f"savepoint {sp.path}: {op['where']} (uid {op_uid}) in the query writing {uid!r} is not in this job; "
                    "Spark cannot drop a stateful operator from a query it restores. Pass --allow-non-restored-state to "
                    "start that query empty, or keep the operator"
                )
            for key in sorted(set(op) | set(now[op_uid])):
                if key in ("where",):
                    continue
                if op.get(key) != now[op_uid].get(key):
                    raise SavepointError(
                        f"savepoint {sp.path}: the state of {now[op_uid]['where']} (uid {op_uid}) no longer fits: "
                        f"its {key} was {op.get(key)!r}, now {now[op_uid].get(key)!r}. Give the changed operator a new uid "
                        "(it then starts empty, with --allow-non-restored-state), or restore with the old code"
                    )
        added = [op["where"] for op_uid, op in now.items() if op_uid not in before]
        if added and before:
            raise SavepointError(
                f"savepoint {sp.path}: {', '.join(added)} would join the restored query writing {uid!r}; Spark cannot add "
                "a stateful operator to a query it restores: give it its own sink, or start fresh"
            )
    return notes


def restore(sp: Savepoint, root: Path, layouts: dict[str, list[dict[str, Any]]], file_sinks: dict[str, list[str]]) -> None:
    """Make ``root`` (the job's checkpoint root) hold the savepoint's queries that the job still has."""
    saved = sp.manifest["queries"]
    for uid, paths in file_sinks.items():
        if uid not in saved:
            continue
        for path in paths:
            # Batch N + 1 may be in the sink's log already (stopped between its write and its
            # commit): Spark skips it there, rightly, as the same code replays the same rows.
            written = _file_sink_batches(Path(path))
            if written > saved[uid]["batch"] + 1:
                raise SavepointError(
                    f"the output {path} already holds batch {written} of a later run (Spark's file sink would skip the "
                    f"replayed batches {saved[uid]['batch'] + 1}..{written} there): write to another directory, or empty it"
                )
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for uid in saved:
        src = sp.path / "checkpoint" / uid
        if uid not in layouts or not src.is_dir() or _dropped(saved[uid], layouts[uid]):
            continue
        shutil.copytree(src, root / uid)
        # A new query id: exactly-once sinks (keyed by it) write the replayed batches anew.
        (root / uid / "metadata").write_text(json.dumps({"id": str(uuid.uuid4())}))
        (root / uid / ".metadata.crc").unlink(missing_ok=True)
        relocate_schema_paths(root / uid, src)
        for marker in (sp.path / "checkpoint").iterdir():
            if marker.is_file() and marker.name.startswith((f"_END_{uid}__", f"_FINISHED_{uid}")):
                shutil.copy2(marker, root / marker.name)


def _dropped(saved: dict[str, Any], layout: list[dict[str, Any]]) -> bool:
    """An operator of the saved query is gone (allowed by the flag): the query starts empty."""
    return bool({op["uid"] for op in saved.get("layout", [])} - {op["uid"] for op in layout})


def _file_sink_batches(path: Path) -> int:
    log = path / "_spark_metadata"
    if not log.is_dir():
        return -1
    ids = [int(p.name.split(".")[0]) for p in log.iterdir() if p.name.split(".")[0].isdigit()]
    return max(ids, default=-1)
