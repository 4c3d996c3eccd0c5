"""PostgreSQL on loopback: Debian's cluster, trusted over 127.0.0.1, with a database ``test``.

The tests and examples connect as ``user=postgres`` without a password over loopback, so
``up`` puts a trust rule for loopback at the top of the cluster's ``pg_hba.conf`` (marked,
added once) and reloads the server.
"""

from __future__ import annotations

import shlex
import shutil
import socket
import struct
from dataclasses import dataclass
from pathlib import Path

from funke.services.base import Say, Service, ServiceError, apt_install, as_root, log_tail, run_step, wait_until

DATABASE, USER = "test", "postgres"
_MARK = "# funke services: trust on loopback"
_TRUST = f"{_MARK}\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"


@dataclass(frozen=True)
class Cluster:
    version: str
    name: str
    port: int
    log: Path

    @property
    def hba(self) -> Path:
        return Path("/etc/postgresql") / self.version / self.name / "pg_hba.conf"


class Postgres(Service):
    name = "postgres"

    def __init__(self, port: int = 5432) -> None:
        self.port = port

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} dbname={DATABASE} user={USER}"

    def installed(self) -> bool:
        return shutil.which("pg_ctlcluster") is not None and bool(_server_versions())

    def install(self, say: Say) -> None:
        apt_install("install postgres", ["postgresql"], say)

    def answers(self) -> bool:
        # An SSLRequest: any PostgreSQL server answers it with one byte, 'S' or 'N', before authentication.
        try:
            with socket.create_connection((self.host, self.port), timeout=2) as s:
                s.sendall(struct.pack("!ii", 8, 80877103))
                return s.recv(1) in (b"S", b"N")
        except OSError:
            return False

    def _cluster(self, say: Say | None = None) -> Cluster:
        """The cluster on our port; created when there is none (and ``say`` is given)."""
        for c in _clusters():
            if c.port == self.port:
                return c
        versions = _server_versions()
        if say is None or not versions:
            raise ServiceError(
                f"no PostgreSQL cluster on port {self.port} (pg_lsclusters lists none): run `funke services up postgres`"
            )
        names = {c.name for c in _clusters() if c.version == versions[-1]}
        name = "main" if "main" not in names else f"funke{self.port}"
        cmd = as_root(["pg_createcluster", versions[-1], name, "--port", str(self.port)])
        say(f"create cluster: {shlex.join(cmd)}")
        run_step("create postgres cluster", cmd)
        return self._cluster()

    def _ctl(self, cluster: Cluster, action: str) -> list[str]:
        return as_root(["pg_ctlcluster", "--skip-systemctl-redirect", cluster.version, cluster.name, action])

    def _trust_loopback(self, cluster: Cluster, say: Say) -> bool:
        """Put the trust rule first in pg_hba.conf; True when the file changed."""
        try:
            text = cluster.hba.read_text()
        except OSError as e:
            raise ServiceError(f"configure postgres failed: cannot read {cluster.hba}: {e}") from None
        if _MARK in text:
            return False
        say(f"trust loopback connections: {cluster.hba}")
        try:
            cluster.hba.write_text(_TRUST + text)
        except OSError as e:
            raise ServiceError(
                f"configure postgres failed: cannot write {cluster.hba}: {e} (run `funke services up postgres` as root)"
            ) from None
        return True

    def start(self, say: Say) -> None:
        cluster = self._cluster(say)
        self._trust_loopback(cluster, say)
        cmd = self._ctl(cluster, "start")
        say(f"start postgres: {shlex.join(cmd)}")
        run_step("start postgres", cmd)
        if not wait_until(self.answers, seconds=60):
            raise ServiceError(
                f"start postgres failed: nothing answered on {self.address} after `{shlex.join(cmd)}`\n{log_tail(cluster.log)}"
            )

    def prepare(self, say: Say) -> None:
        cluster = self._cluster()
        if self._trust_loopback(cluster, say):
            run_step("reload postgres", self._ctl(cluster, "reload"))
        psql = ["psql", "-h", self.host, "-p", str(self.port), "-U", USER, "-d", "postgres", "-tAc"]
        # A reload takes effect asynchronously: retry the first query until the trust rule holds.
        answer: list[str] = []
        failures: list[ServiceError] = []

        def database_listed() -> bool:
            try:
                answer.append(
                    run_step("connect to postgres", [*psql, f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"]).strip()
                )
                return True
            except ServiceError as e:
                failures.append(e)
                return False

        if not wait_until(database_listed, seconds=15):
            raise failures[-1]
        exists = answer[-1]
        if exists != "1":
            say(f"create database {DATABASE}")
            run_step("create database", [*psql, f"CREATE DATABASE {DATABASE}"])

    def stop(self, say: Say) -> None:
        cmd = self._ctl(self._cluster(), "stop")
        say(f"stop postgres: {shlex.join(cmd)}")
        run_step("stop postgres", cmd)

    def detail(self) -> str:
        c = next((c for c in _clusters() if c.port == self.port), None)
        return f"cluster {c.version}/{c.name}" if c else ""


def _server_versions() -> list[str]:
    root = Path("/usr/lib/postgresql")
    found = [p.name for p in root.glob("*") if (p / "bin" / "postgres").exists()] if root.is_dir() else []
    return sorted(found, key=lambda v: [int(x) if x.isdigit() else 0 for x in v.split(".")])


def _clusters() -> list[Cluster]:
    if shutil.which("pg_lsclusters") is None:
        return []
    out = run_step("list postgres clusters", ["pg_lsclusters", "--no-header"])
    found = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 7 and parts[2].isdigit():
            found.append(Cluster(parts[0], parts[1], int(parts[2]), Path(parts[6])))
    return found
