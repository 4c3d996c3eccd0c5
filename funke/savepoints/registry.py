"""The job registry: what ran under this funke home, and its savepoints (SQLite).

``$FUNKE_HOME/registry.db`` holds one row per job name (status, checkpoint root, plan
fingerprint, the process running it) and one per savepoint. Every process that starts,
stops or savepoints a job writes here; ``funke list`` and ``funke savepoints`` read it.
SQLite's own locking makes the short writes safe between processes on one machine.

>>> import tempfile
>>> r = Registry(tempfile.mkdtemp())
>>> r.job_started("ysb", checkpoint="/tmp/c", fingerprint="ab12", pid=1)
>>> [(j.name, j.status) for j in r.jobs()]
[('ysb', 'running')]
>>> r.job_ended("ysb", "finished")
>>> r.job("ysb").status
'finished'
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funke.config import settings as current_settings
from funke.errors import PlanError

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    name TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    checkpoint TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    pid INTEGER,
    started_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS savepoints (
    path TEXT PRIMARY KEY,
    job TEXT NOT NULL,
    created_at REAL NOT NULL,
    batches TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    took_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS endpoints (
    name TEXT PRIMARY KEY,
    address TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS spark_uis (
    name TEXT PRIMARY KEY,
    address TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS launches (
    name TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    options TEXT NOT NULL
);
"""
STATUSES = ("running", "finished", "stopped", "failed")


@dataclass(frozen=True)
class JobRecord:
    name: str
    status: str
    checkpoint: str
    fingerprint: str
    pid: int | None
    started_at: float
    updated_at: float

    @property
    def alive(self) -> bool:
        """Running, and its process still exists (a killed job's row still says running)."""
        return self.status == "running" and self.process_alive

    @property
    def process_alive(self) -> bool:
        """The process that ran the job last still exists (it may be finishing a stop)."""
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


@dataclass(frozen=True)
class SavepointRecord:
    path: str
    job: str
    created_at: float
    batches: dict[str, int]  # sink uid -> the committed micro-batch it holds
    size_bytes: int
    took_ms: int


class Registry:
    def __init__(self, home: str | Path):
        self.home = Path(home)
        self.path = self.home / "registry.db"

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.home.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30)
        try:
            conn.executescript(SCHEMA)
            with conn:
                yield conn
        finally:
            conn.close()

    # -- jobs -----------------------------------------------------------------------------
    def job_started(self, name: str, *, checkpoint: str, fingerprint: str, pid: int | None = None) -> None:
        now = time.time()
        with self._db() as db:
            db.execute(
                "INSERT INTO jobs VALUES (?, 'running', ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET status = 'running', "
                "checkpoint = excluded.checkpoint, fingerprint = excluded.fingerprint, pid = excluded.pid, "
                "started_at = excluded.started_at, updated_at = excluded.updated_at",
                (name, checkpoint, fingerprint, pid if pid is not None else os.getpid(), now, now),
            )

    def job_ended(self, name: str, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"job status must be one of {STATUSES}, got {status!r}")
        with self._db() as db:
            db.execute("UPDATE jobs SET status = ?, updated_at = ? WHERE name = ?", (status, time.time(), name))

    def jobs(self) -> list[JobRecord]:
        with self._db() as db:
            return [JobRecord(*row) for row in db.execute("SELECT * FROM jobs ORDER BY name")]

    def job(self, name: str) -> JobRecord:
        with self._db() as db:
            row = db.execute("SELECT * FROM jobs WHERE name = ?", (name,)).fetchone()
        if row is None:
            known = ", ".join(j.name for j in self.jobs()) or "none"
            raise PlanError(f"no job named {name!r} under {self.home} (jobs: {known})")
        return JobRecord(*row)

    def note_endpoint(self, name: str, address: str) -> None:
        """Where job ``name``'s HTTP server listens (metrics, state, dashboard)."""
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO endpoints VALUES (?, ?)", (name, address))

    def endpoint(self, name: str) -> str | None:
        with self._db() as db:
            row = db.execute("SELECT address FROM endpoints WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def note_spark_ui(self, name: str, address: str | None) -> None:
        """Where Spark's own UI of job ``name``'s run listens (none when the UI is off)."""
        with self._db() as db:
            if address:
                db.execute("INSERT OR REPLACE INTO spark_uis VALUES (?, ?)", (name, address))
            else:
                db.execute("DELETE FROM spark_uis WHERE name = ?", (name,))

    def spark_ui(self, name: str) -> str | None:
        with self._db() as db:
            row = db.execute("SELECT address FROM spark_uis WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def note_launch(self, name: str, target: str, options: dict[str, Any]) -> None:
        """How the CLI started job ``name`` (``MODULE:JOB`` and its options), for ``funke resume``."""
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO launches VALUES (?, ?, ?)", (name, target, json.dumps(options, sort_keys=True)))

    def launch(self, name: str) -> tuple[str, dict[str, Any]] | None:
        with self._db() as db:
            row = db.execute("SELECT target, options FROM launches WHERE name = ?", (name,)).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    # -- savepoints -----------------------------------------------------------------------
    def add_savepoint(self, path: str, job: str, *, batches: dict[str, int], size_bytes: int, took_ms: int) -> None:
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO savepoints VALUES (?, ?, ?, ?, ?, ?)",
                (path, job, time.time(), json.dumps(batches, sort_keys=True), size_bytes, took_ms),
            )

    def savepoints(self, job: str | None = None) -> list[SavepointRecord]:
        query, args = "SELECT * FROM savepoints", ()
        if job is not None:
            query, args = query + " WHERE job = ?", (job,)
        with self._db() as db:
            rows = db.execute(query + " ORDER BY created_at", args).fetchall()
        return [SavepointRecord(p, j, c, json.loads(b), s, t) for p, j, c, b, s, t in rows]

    def forget_savepoint(self, path: str) -> bool:
        with self._db() as db:
            return db.execute("DELETE FROM savepoints WHERE path = ?", (path,)).rowcount > 0


def registry(settings: Any = None) -> Registry:
    """The registry of the funke home in ``settings`` (FUNKE_HOME)."""
    return Registry((settings or current_settings()).home)
