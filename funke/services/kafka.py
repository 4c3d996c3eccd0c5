"""Apache Kafka on loopback: one KRaft node (broker and controller) from Maven Central's jars.

``install`` resolves the broker (``org.apache.kafka:kafka_2.13``) and its runtime
dependencies with ``mvn dependency:copy-dependencies`` into ``<services home>/kafka/<version>/libs``;
``start`` formats the log directory once and runs ``kafka.Kafka`` as a detached JVM whose
pid is kept beside its log. It counts as up when it answers an ApiVersions request.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import uuid
from pathlib import Path

from funke.services.base import (
    Say,
    Service,
    ServiceError,
    apt_install,
    listening,
    log_tail,
    pid_alive,
    read_pid,
    run_step,
    wait_until,
)

KAFKA_VERSION = "4.1.1"
SCALA = "2.13"
LOG4J_VERSION = "2.24.3"  # Kafka 4.1 logs through slf4j 1.7: the log4j-slf4j-impl binding, not slf4j2's

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>funke.services</groupId><artifactId>kafka-broker</artifactId><version>{kafka}</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_{scala}</artifactId><version>{kafka}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>{log4j}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>{log4j}</version></dependency>
  </dependencies>
</project>
"""

_LOG4J = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = info
"""


class Kafka(Service):
    name = "kafka"

    def __init__(self, root: Path, port: int = 9092, *, version: str = KAFKA_VERSION) -> None:
        self.root = root / "kafka"
        self.port = port
        self.controller_port = port + 1
        self.version = version

    @property
    def bootstrap(self) -> str:
        return self.address

    @property
    def libs(self) -> Path:
        return self.root / self.version / "libs"

    @property
    def data(self) -> Path:
        return self.root / f"data-{self.port}"

    @property
    def _pid_file(self) -> Path:
        return self.root / f"kafka-{self.port}.pid"

    @property
    def _log(self) -> Path:
        return self.root / f"kafka-{self.port}.log"

    def installed(self) -> bool:
        return (self.libs / ".complete").exists()

    def install(self, say: Say) -> None:
        _ensure_java(say)
        if shutil.which("mvn") is None:
            apt_install("install maven", ["maven"], say)
        work = self.libs.parent
        work.mkdir(parents=True, exist_ok=True)
        (work / "pom.xml").write_text(_POM.format(kafka=self.version, scala=SCALA, log4j=LOG4J_VERSION))
        shutil.rmtree(self.libs, ignore_errors=True)
        cmd = ["mvn", "-q", "-B", "dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={self.libs}"]
        say(f"fetch the Kafka {self.version} broker's jars: {shlex.join(cmd)} (in {work})")
        run_step(f"install kafka {self.version}", cmd, cwd=work)
        jars = sorted(p.name for p in self.libs.glob("*.jar"))
        if f"kafka_{SCALA}-{self.version}.jar" not in jars:
            raise ServiceError(
                f"install kafka {self.version} failed: mvn ran but {self.libs} has no kafka_{SCALA}-{self.version}.jar"
            )
        (self.libs / ".complete").write_text("\n".join(jars) + "\n")

    def answers(self) -> bool:
        """An ApiVersions request (key 18, v0) gets a reply with our correlation id and no error."""
        client = b"funke-services"
        body = struct.pack("!hhih", 18, 0, 7341, len(client)) + client
        try:
            with socket.create_connection((self.host, self.port), timeout=2) as s:
                s.sendall(struct.pack("!i", len(body)) + body)
                head = _recv_exactly(s, 10)
        except OSError:
            return False
        if head is None:
            return False
        _, correlation, error = struct.unpack("!iih", head)
        return correlation == 7341 and error == 0

    def _config(self) -> Path:
        props = self.root / f"server-{self.port}.properties"
        props.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.voters=1@{self.host}:{self.controller_port}",
                    f"listeners=PLAINTEXT://{self.host}:{self.port},CONTROLLER://{self.host}:{self.controller_port}",
                    f"advertised.listeners=PLAINTEXT://{self.host}:{self.port}",
                    "controller.listener.names=CONTROLLER",
                    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                    "inter.broker.listener.name=PLAINTEXT",
                    f"log.dirs={self.data}",
                    "num.partitions=1",
                    # One node: every internal topic has one replica.
                    "offsets.topic.replication.factor=1",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "share.coordinator.state.topic.replication.factor=1",
                    "share.coordinator.state.topic.min.isr=1",
                    "group.initial.rebalance.delay.ms=0",
                    # A missing topic is an error (or created on request), never created by a typo.
                    "auto.create.topics.enable=false",
                    # A record keeps the time its producer gave it, and funke's Kafka tests (like a replay of old
                    # events) write times years old: Kafka's default retention (7 days by record time, checked every
                    # 5 minutes) deleted them minutes after they were written, under a reader that had not read them
                    # yet. This broker keeps every record until its topic is deleted.
                    "log.retention.ms=-1",
                ]
            )
            + "\n"
        )
        return props

    def start(self, say: Say) -> None:
        _ensure_java(say)
        self.root.mkdir(parents=True, exist_ok=True)
        props = self._config()
        log4j = self.root / "log4j2.properties"
        log4j.write_text(_LOG4J.format(log=self.root / f"server-{self.port}.log"))
        java = ["java", "-cp", f"{self.libs}/*", f"-Dlog4j2.configurationFile={log4j}"]
        if not (self.data / "meta.properties").exists():
            cmd = [*java, "kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c", str(props)]
            say(f"format the Kafka log directory {self.data}")
            run_step("format kafka storage", cmd)
        cmd = [*java[:1], "-Xms256m", "-Xmx1g", *java[1:], "kafka.Kafka", str(props)]
        say(f"start kafka: {shlex.join(cmd)}")
        with open(self._log, "ab") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self._pid_file.write_text(str(proc.pid))
        if not wait_until(self.answers, seconds=120, alive=lambda: proc.poll() is None):
            code = proc.poll()
            if code is None:
                proc.kill()
            why = f"the broker exited with {code}" if code is not None else "no ApiVersions answer in 120 s"
            raise ServiceError(f"start kafka failed: {why} on {self.address} (command: {shlex.join(cmd)})\n{log_tail(self._log)}")

    def stop(self, say: Say) -> None:
        pid = read_pid(self._pid_file)
        if pid is None or not pid_alive(pid) or "kafka.Kafka" not in _cmdline(pid):
            raise ServiceError(
                f"stop kafka failed: {self.address} answers, but not from the broker funke started (no live pid in {self._pid_file})"
            )
        say(f"stop kafka: SIGTERM to {pid}")
        os.kill(pid, signal.SIGTERM)
        if not wait_until(lambda: not pid_alive(pid), seconds=60):
            say(f"kafka did not stop in 60 s: SIGKILL to {pid}")
            os.kill(pid, signal.SIGKILL)
            wait_until(lambda: not pid_alive(pid), seconds=10)
        self._pid_file.unlink(missing_ok=True)
        if not wait_until(lambda: not listening(self.host, self.port), seconds=10):
            raise ServiceError(f"stop kafka failed: {self.address} still listens after the broker {pid} ended")

    def detail(self) -> str:
        pid = read_pid(self._pid_file)
        alive = pid is not None and pid_alive(pid)
        return f"kafka {self.version}" + (f", pid {pid}" if alive else "")


def _recv_exactly(s: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (what ``random-uuid`` prints).

    Never one starting with ``-``: the storage tool's argument parser would read ``-t -K...`` as a missing
    value (Kafka's own ``Uuid.randomUuid`` draws again for the same reason).
    """
    import base64

    while True:
        found = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not found.startswith("-"):
            return found


def _ensure_java(say: Say) -> None:
    if shutil.which("java") is None:
        apt_install("install java", ["openjdk-17-jre-headless"], say)
