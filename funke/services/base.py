"""What every local service shares: steps that run commands and name them when they fail.

A service is installed when missing (``apt-get``, ``mvn``), started on loopback, and
counted as up only once it answers its own protocol, not when its port merely opens.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from funke.errors import FunkeError

Say = Callable[[str], None]


class ServiceError(FunkeError, RuntimeError):
    """A local service could not be installed, started or stopped; names the step and its command."""


@dataclass(frozen=True)
class Status:
    name: str
    address: str
    installed: bool
    running: bool
    detail: str = ""


def run_step(
    step: str, cmd: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 900
) -> str:
    """Run ``cmd`` for ``step``; its output, or a ServiceError naming the step, the command and the output's tail."""
    shown = shlex.join(cmd)
    try:
        done = subprocess.run(
            list(cmd), capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise ServiceError(f"{step} failed: {cmd[0]} is not installed (command: {shown})") from None
    except subprocess.TimeoutExpired:
        raise ServiceError(f"{step} failed: no answer after {timeout:.0f} s (command: {shown})") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise ServiceError(f"{step} failed: `{shown}` exited with {done.returncode}\n{tail}")
    return done.stdout


def as_root(cmd: list[str]) -> list[str]:
    """``cmd`` as root: as it is when we are root, else through sudo (without a password prompt)."""
    if os.geteuid() == 0:
        return cmd
    if shutil.which("sudo") is None:
        raise ServiceError(
            f"`{shlex.join(cmd)}` needs root, and this user is not root and has no sudo: run `funke services up` as root once"
        )
    return ["sudo", "-n", *cmd]


_apt_updated = False


def apt_install(step: str, packages: Sequence[str], say: Say) -> None:
    """Install Debian packages; refreshes the package lists first (once per process)."""
    global _apt_updated
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    if not _apt_updated:
        say("apt-get update")
        run_step(step, as_root(["apt-get", "update", "-qq"]), env=env)
        _apt_updated = True
    say(f"apt-get install {' '.join(packages)}")
    run_step(step, as_root(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages]), env=env)


def listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_until(check: Callable[[], bool], *, seconds: float, alive: Callable[[], bool] = lambda: True) -> bool:
    """Poll ``check`` until it holds, ``alive`` stops holding (the process died) or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        if not alive():
            return check()
        time.sleep(0.2)
    return check()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (our own exited child not yet reaped) is not alive.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no log at {path})"


class Service:
    """One local server. Subclasses say how to install, start, probe and stop it."""

    name: str
    host = "127.0.0.1"
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def installed(self) -> bool:
        raise NotImplementedError

    def install(self, say: Say) -> None:
        raise NotImplementedError

    def answers(self) -> bool:
        """True when the server on our address speaks its protocol (not just an open port)."""
        raise NotImplementedError

    def start(self, say: Say) -> None:
        raise NotImplementedError

    def stop(self, say: Say) -> None:
        raise NotImplementedError

    def detail(self) -> str:
        return ""

    def status(self) -> Status:
        return Status(self.name, self.address, self.installed(), self.answers(), self.detail())

    def up(self, say: Say) -> None:
        """Idempotent: install when missing, start when not answering, then wait until it answers."""
        if self.answers():
            self.prepare(say)
            say(f"{self.name}: already running on {self.address}")
            return
        if listening(self.host, self.port):
            raise ServiceError(
                f"start {self.name} failed: {self.address} is taken by something that does not answer as {self.name}; "
                f"stop it or free the port"
            )
        if not self.installed():
            self.install(say)
        self.start(say)
        self.prepare(say)
        say(f"{self.name}: up on {self.address}")

    def prepare(self, say: Say) -> None:
        """After start: what the tests expect beyond a running server (users, databases)."""

    def down(self, say: Say) -> None:
        if not self.answers() and not listening(self.host, self.port):
            say(f"{self.name}: not running")
            return
        self.stop(say)
        say(f"{self.name}: stopped")
