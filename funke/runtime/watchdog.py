"""The checkpoint timeout: a micro-batch that has not committed within it restarts its query.

Flink declines a checkpoint that takes longer than ``execution.checkpointing.timeout`` (10
minutes unless set) and, tolerating no failed checkpoint by default, fails the job over to its
last completed checkpoint. A funke micro-batch is its query's checkpoint, so one that runs past
the timeout has its query stopped and started again from its checkpoint: Spark replays the batch
that did not commit and funke's sinks take a replayed batch once, so nothing is lost or written
twice. Such a batch is one Spark will not finish: Spark's state server for the general path's
operators (``transformWithStateInPandas``) has been seen to stop answering a Python worker, which
then waits on it for good. A query restarted ``MAX_RESTARTS`` times in a row fails the job,
naming the timeout. A real-time query's micro-batch runs its checkpoint interval by design: its
timeout counts from the interval's end.

The timeout is ``FUNKE_CHECKPOINT_TIMEOUT`` (ms), or PyFlink's ``set_checkpoint_timeout``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from funke.runtime.job import JobHandle


@dataclass
class BatchClock:
    """How long a query's current micro-batch has run, as seen by polling its status."""

    batches: int = -1  # the query's committed batches when last polled
    since: float | None = None  # when the running batch was first seen running

    def overdue(self, *, running: bool, batches: int, now: float, timeout_s: float) -> bool:
        """Whether the batch running now started more than ``timeout_s`` ago.

        >>> c = BatchClock()
        >>> c.overdue(running=True, batches=0, now=0.0, timeout_s=10)
        False
        >>> c.overdue(running=True, batches=0, now=11.0, timeout_s=10)
        True
        >>> c.overdue(running=True, batches=1, now=12.0, timeout_s=10)  # a batch committed: a new one runs
        False
        >>> c.overdue(running=False, batches=1, now=30.0, timeout_s=10)  # waiting for data is not a batch
        False
        >>> c.overdue(running=True, batches=1, now=31.0, timeout_s=10)
        False
        """
        if not running:
            self.batches, self.since = batches, None
            return False
        if batches != self.batches or self.since is None:
            self.batches, self.since = batches, now
            return False
        return now - self.since > timeout_s


def watch(handle: JobHandle, timeout_ms: int, poll_s: float = 1.0) -> None:
    """Poll the job's queries until it stops or ends; restart one whose micro-batch runs past ``timeout_ms``."""
    clocks: dict[int, BatchClock] = {}
    timeout_s = timeout_ms / 1000
    while not handle.stopping.wait(min(poll_s, timeout_s / 4)) and not handle.done:
        for st in list(handle.states):
            q = st.query
            if q is None or st.finished:
                continue
            try:
                running = q.isActive and bool(q.status.get("isTriggerActive"))
            except Exception:  # noqa: BLE001, S112 (the query or the session is stopping)
                continue
            clock = clocks.setdefault(id(q), BatchClock())
            allowed = timeout_s + st.batch_runs_ms / 1000  # (a real-time batch runs its interval, then checkpoints)
            if clock.overdue(running=running, batches=st.batches, now=time.monotonic(), timeout_s=allowed):
                clocks.pop(id(q))
                handle.restart_overdue(st, timeout_s)


def start_watch(handle: JobHandle, timeout_ms: int) -> threading.Thread:
    """The job's watchdog thread (streaming runs), started."""
    thread = threading.Thread(target=watch, args=(handle, timeout_ms), name=f"funke-watchdog-{handle.name}", daemon=True)
    thread.start()
    return thread
