"""Requests to a running job from other processes (``funke savepoint JOB``, ``funke stop JOB``).

A request is a file under ``$FUNKE_HOME/jobs/<job>/requests``, which the running job polls; it
answers with ``<id>.done.json``. Restoring from a savepoint is ``funke.savepoints.restore``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from funke.savepoints import SavepointError

POLL_S = 0.25


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
