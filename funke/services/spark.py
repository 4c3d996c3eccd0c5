"""A Spark standalone cluster on loopback: one master and N workers, from pyspark's own jars.

The pip package has no ``sbin/start-master.sh``; its ``bin/spark-class`` runs the master and
worker classes directly, each as a detached JVM whose pid is kept beside its log. The
cluster counts as up when the master's JSON status says ALIVE with every worker ALIVE.
Jobs reach it with ``FUNKE_MASTER=spark://127.0.0.1:7077`` (or ``master=`` in Python).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import urllib.request
from pathlib import Path

from funke.services.base import Say, Service, ServiceError, listening, log_tail, pid_alive, read_pid, wait_until


def _spark_class() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    path = Path(pyspark.__file__).parent / "bin" / "spark-class"
    return path if path.exists() else None


class SparkStandalone(Service):
    name = "spark"

    def __init__(self, root: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g", port: int = 7077, ui_port: int = 8080) -> None:
        self.root = root / "spark"
        self.port, self.ui_port = port, ui_port
        self.workers, self.cores, self.memory = workers, cores, memory

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    def _pid_file(self, role: str) -> Path:
        return self.root / f"{role}.pid"

    def installed(self) -> bool:
        return _spark_class() is not None

    def install(self, say: Say) -> None:
        raise ServiceError("start spark failed: pyspark's bin/spark-class is missing: pip install pyspark (funke depends on it)")

    def state(self) -> dict | None:
        """The master's JSON status, or None when nothing answers."""
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.ui_port}/json/", timeout=2) as r:
                return json.loads(r.read())
        except (OSError, ValueError):
            return None

    def alive_workers(self) -> int:
        s = self.state() or {}
        return sum(1 for w in s.get("workers", []) if w.get("state") == "ALIVE")

    def answers(self) -> bool:
        s = self.state()
        return s is not None and s.get("status") == "ALIVE" and self.alive_workers() >= self.workers

    def _launch(self, role: str, args: list[str], say: Say) -> int:
        spark_class = _spark_class()
        assert spark_class is not None
        cmd = [str(spark_class), *args]
        say(f"start {role}: {shlex.join(cmd)}")
        log = self.root / f"{role}.log"
        env = {**os.environ, "SPARK_NO_DAEMONIZE": "1"}
        with open(log, "ab") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        self._pid_file(role).write_text(str(proc.pid))
        return proc.pid

    def start(self, say: Say) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if self.state() is None:
            pid = self._launch(
                "master", ["org.apache.spark.deploy.master.Master", "--host", self.host, "--port", str(self.port), "--webui-port", str(self.ui_port)], say
            )
            if not wait_until(lambda: (self.state() or {}).get("status") == "ALIVE", seconds=120, alive=lambda: pid_alive(pid)):
                raise ServiceError(f"start spark master failed: no ALIVE status at http://{self.host}:{self.ui_port}/json/\n{log_tail(self.root / 'master.log')}")
        for i in range(self.alive_workers(), self.workers):
            work = self.root / f"work-{i}"
            work.mkdir(exist_ok=True)
            args = ["org.apache.spark.deploy.worker.Worker", self.master_url, "--host", self.host, "--cores", str(self.cores),
                    "--memory", self.memory, "--webui-port", "0", "--work-dir", str(work)]  # fmt: skip
            self._launch(f"worker-{i}", args, say)
        if not wait_until(lambda: self.alive_workers() >= self.workers, seconds=120):
            raise ServiceError(
                f"start spark workers failed: {self.alive_workers()} of {self.workers} registered with {self.master_url}\n{log_tail(self.root / 'worker-0.log')}"
            )

    def kill_worker(self, index: int = 0) -> int:
        """SIGKILL one worker with its executors (its process group), as a lost machine; its pid."""
        pid = read_pid(self._pid_file(f"worker-{index}"))
        if pid is None or not pid_alive(pid):
            raise ServiceError(f"kill spark worker {index} failed: it is not running")
        os.killpg(pid, signal.SIGKILL)
        wait_until(lambda: not pid_alive(pid), seconds=30)
        return pid

    def stop(self, say: Say) -> None:
        for pid_file in sorted(self.root.glob("*.pid"), key=lambda p: p.name != "master.pid"):  # workers first
            pid = read_pid(pid_file)
            if pid is not None and pid_alive(pid):
                say(f"stop {pid_file.stem}: SIGTERM to its process group {pid}")
                os.killpg(pid, signal.SIGTERM)
                if not wait_until(lambda pid=pid: not pid_alive(pid), seconds=30):
                    os.killpg(pid, signal.SIGKILL)
            pid_file.unlink(missing_ok=True)
        if not wait_until(lambda: not listening(self.host, self.port), seconds=30):
            raise ServiceError(f"stop spark failed: {self.master_url} still listens (a master funke did not start?)")

    def up(self, say: Say) -> None:
        """Idempotent: starts the master when down and as many workers as are missing."""
        if self.answers():
            say(f"spark: already running at {self.master_url} with {self.alive_workers()} worker(s)")
            return
        if listening(self.host, self.port) and self.state() is None:
            raise ServiceError(f"start spark failed: {self.address} is taken by something that is not a Spark master")
        if not self.installed():
            self.install(say)
        self.start(say)
        say(f"spark: up at {self.master_url} with {self.alive_workers()} worker(s), UI http://{self.host}:{self.ui_port}")

    def down(self, say: Say) -> None:
        if not listening(self.host, self.port) and not any(self.root.glob("*.pid")):
            say("spark: not running")
            return
        self.stop(say)
        say("spark: stopped")

    def detail(self) -> str:
        s = self.state()
        if s is None:
            return ""
        return f"{self.alive_workers()} worker(s) alive, {s.get('cores', '?')} cores, UI http://{self.host}:{self.ui_port}"
