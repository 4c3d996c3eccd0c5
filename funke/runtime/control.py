"""Savepoints of a running job and restores from them: the runtime's side of ``funke.savepoints``.

* ``state_layout(plan)``: what a query keeps as state (its stateful operators, by uid, with
  the fields that shape their state), recorded in a savepoint and compared on restore.
* ``check_restore`` / ``restore``: Flink's restore rules, then the savepoint's checkpoints
  copied in as the job's own, before any query starts.
* Requests from other processes (``funke savepoint JOB``, ``funke stop JOB``): a request
  file under ``$FUNKE_HOME/jobs/<job>/requests``, which the running job polls; it answers
  with ``<id>.done.json``.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from funke.plan import connect as c
from funke.plan import joins as j
from funke.plan import nodes as n
from funke.savepoints import LAYOUT_VERSION, Savepoint, SavepointError, _relocate_schema_paths

POLL_S = 0.25


# -- state layout ------------------------------------------------------------------------------


#: The stateful operators of two inputs (connect, broadcast state, interval and window joins).
TWO_INPUTS = (c.CoProcess, c.BroadcastProcess, j.IntervalJoin, j.WindowJoin)
TWO_INPUT_KINDS = frozenset(t.kind for t in TWO_INPUTS)


def state_layout(sinks: list[n.Sink]) -> list[dict[str, Any]]:
    """The stateful operators feeding ``sinks`` (one query), upstream first, with their state's shape.

    A two-input operator's ``keys`` are its first input's (none for an unkeyed one), ``second_keys``
    its second input's.
    """
    out = []
    for node in n.walk(sinks):
        if isinstance(node, (*n.SPARK_STATEFUL, n.KeyedProcess, *TWO_INPUTS)):
            entry: dict[str, Any] = {"uid": node.uid, "kind": node.kind, "where": node.where(), "keys": _keys(node.inputs[0], node)}
            if isinstance(node, TWO_INPUTS):
                entry["second_keys"] = _keys(node.inputs[1], node)
            if isinstance(node, (n.WindowAggregate, j.WindowJoin)):
                entry["window"] = node.assigner.describe()
            if isinstance(node, n.WindowAggregate):
                entry["trigger"] = node.trigger.describe() if node.trigger is not None else None
                entry["aggregates"] = [str(a) for a in node.aggregates] or [_qualname(node.function)]
            elif isinstance(node, n.RollingAggregate):
                entry["aggregates"] = [str(a) for a in getattr(node, "aggregates", ())]
            else:
                entry["function"] = _qualname(getattr(node, "function", None))
            if isinstance(node, j.IntervalJoin):
                entry["bounds"] = node.bounds
            out.append(entry)
    return out


def _keys(upstream: n.Node, node: n.Node) -> list[list[Any]]:
    schema = upstream.schema
    return [[k, schema.field(k, node=node.where()).dtype if schema is not None else None] for k in (upstream.keys or ())]


def _qualname(fn: Any) -> str | None:
    if fn is None:
        return None
    t = fn if isinstance(fn, type) else type(fn)
    return f"{t.__module__}.{t.__qualname__}"


def fingerprint(layouts: dict[str, list[dict[str, Any]]]) -> str:
    import hashlib

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
        _relocate_schema_paths(root / uid, src)
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


# -- requests from other processes -------------------------------------------------------------


def requests_dir(home: str | Path, job: str) -> Path:
    return Path(home) / "jobs" / job / "requests"


def serve(handle: Any, home: str | Path, stop_event: threading.Event) -> threading.Thread:
    """Answer savepoint and stop requests for ``handle``'s job until ``stop_event`` is set."""
    folder = requests_dir(home, handle.name)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in [*folder.glob("*.json"), *folder.glob("*.part")]:  # requests to an earlier run of the job
        stale.unlink(missing_ok=True)

    def loop() -> None:
        while not stop_event.wait(POLL_S):
            for req in sorted(folder.glob("*.request.json")):
                try:
                    ask = json.loads(req.read_text())
                except (OSError, json.JSONDecodeError):
                    continue
                req.unlink(missing_ok=True)
                # Held until the answer is written: wait() does not return (and the process end)
                # while a stop-with-savepoint is still taking its savepoint.
                with handle.request_lock:
                    # written whole, then renamed: the asker polls for the name and must never read half of it
                    part = folder / f"{ask['id']}.done.part"
                    part.write_text(json.dumps(_answer(handle, ask)))
                    part.rename(folder / f"{ask['id']}.done.json")

    t = threading.Thread(target=loop, name=f"funke-requests-{handle.name}", daemon=True)
    t.start()
    return t


def _answer(handle: Any, ask: dict[str, Any]) -> dict[str, Any]:
    try:
        target = ask.get("target")
        if ask.get("action") == "stop":
            sp = handle.stop(savepoint=target) if target else handle.stop()
            batches = _committed(handle)
            return {"stopped": True, "savepoint": str(sp.path) if sp is not None else None, "batches": batches}
        return {"savepoint": str(handle.savepoint(target).path)}
    except Exception as e:  # noqa: BLE001 (the asking process shows it)
        return {"error": f"{type(e).__name__}: {e}"}


def _committed(handle: Any) -> dict[str, int]:
    """The last micro-batch each query committed (its checkpoint's commit log; what the listener heard without one)."""
    ckpt = getattr(handle, "checkpoints", None)
    got = {st.sink.uid: ckpt.last_committed(st.sink.uid) if ckpt is not None else st.last_batch_id for st in handle.states}
    return {uid: b for uid, b in got.items() if b >= 0}


def ask(home: str | Path, job: str, action: str, target: str | None, *, alive: Any, timeout_s: float = 600.0) -> dict[str, Any]:
    """Ask the running job for a savepoint or to stop; wait for its answer while ``alive()``."""
    folder = requests_dir(home, job)
    folder.mkdir(parents=True, exist_ok=True)
    rid = uuid.uuid4().hex[:12]
    tmp = folder / f"{rid}.tmp"
    tmp.write_text(json.dumps({"id": rid, "action": action, "target": target}))
    tmp.rename(folder / f"{rid}.request.json")
    done = folder / f"{rid}.done.json"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if done.exists():
            answer = json.loads(done.read_text())
            done.unlink(missing_ok=True)
            if "error" in answer:
                raise SavepointError(f"job {job!r} could not {action}: {answer['error']}")
            return answer
        if not alive():
            (folder / f"{rid}.request.json").unlink(missing_ok=True)
            raise SavepointError(f"job {job!r} ended before it answered the {action} request")
        time.sleep(POLL_S)
    raise SavepointError(f"job {job!r} did not answer the {action} request within {timeout_s:.0f} s")
