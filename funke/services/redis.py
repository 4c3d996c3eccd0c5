"""Redis on loopback, nothing on disk: Debian's ``redis-server``, started as a daemon."""

from __future__ import annotations

import shlex
import shutil
import socket
from pathlib import Path

from funke.services.base import Say, Service, ServiceError, apt_install, listening, log_tail, run_step, wait_until


class Redis(Service):
    name = "redis"

    def __init__(self, root: Path, port: int = 6379) -> None:
        self.root = root / "redis"
        self.port = port

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def installed(self) -> bool:
        return shutil.which("redis-server") is not None

    def install(self, say: Say) -> None:
        apt_install("install redis", ["redis-server"], say)

    def _call(self, *words: str) -> bytes:
        """One command in Redis's wire protocol; its raw reply."""
        request = f"*{len(words)}\r\n".encode() + b"".join(f"${len(w)}\r\n{w}\r\n".encode() for w in words)
        with socket.create_connection((self.host, self.port), timeout=2) as s:
            s.sendall(request)
            return s.recv(256)

    def answers(self) -> bool:
        try:
            return self._call("PING").startswith(b"+PONG")
        except OSError:
            return False

    def start(self, say: Say) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        log = self.root / "redis.log"
        cmd = [
            "redis-server", "--daemonize", "yes", "--bind", self.host, "--port", str(self.port),
            "--save", "", "--appendonly", "no", "--dir", str(self.root),
            "--pidfile", str(self.root / "redis.pid"), "--logfile", str(log),
        ]  # fmt: skip
        say(f"start redis: {shlex.join(cmd)}")
        run_step("start redis", cmd)
        if not wait_until(self.answers, seconds=30):
            raise ServiceError(
                f"start redis failed: nothing answered PING on {self.address} after `{shlex.join(cmd)}`\n{log_tail(log)}"
            )

    def stop(self, say: Say) -> None:
        say(f"stop redis: SHUTDOWN NOSAVE to {self.address}")
        try:
            self._call("SHUTDOWN", "NOSAVE")
        except OSError:
            pass  # the server closes the connection as it goes
        if not wait_until(lambda: not listening(self.host, self.port), seconds=30):
            raise ServiceError(f"stop redis failed: {self.address} still answers after SHUTDOWN NOSAVE")

    def detail(self) -> str:
        if not self.answers():
            return ""
        info = self._call("INFO", "server").decode(errors="replace")
        version = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("redis_version:")), "?")
        return f"redis {version}"
