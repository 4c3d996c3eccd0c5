"""Spark's own Kafka connector (``spark-sql-kafka-0-10``): which version, where its jars are, and why not.

funke reads and writes Kafka through Spark's JVM connector wherever it serves (micro-batches
and Spark's real-time trigger), and through its Python data source over confluent-kafka
(``funke.connectors.kafka``) where it does not. This module picks the connector for the
installed pyspark and fetches it once; ``funke.spark.session`` loads it into the sessions
funke creates.

* The version: the installed pyspark's own when Maven Central serves it, else the newest
  final release below it (Spark keeps its data source API stable within a major version).
  Pairings funke's Kafka tests have run are in ``CHECKED``; another pairing is loaded and
  ``explain()`` says it was not checked.
* The jars: ``mvn dependency:copy-dependencies`` of the connector into
  ``<services home>/spark-kafka/<version>`` (``funke services``' home, which outlives a job's
  or a test run's ``FUNKE_HOME``), keeping only what pyspark does not ship itself:
  the connector, its token provider, ``kafka-clients`` and ``commons-pool2``. Fetched once,
  then read from there (no network when a session starts).
* ``FUNKE_KAFKA_CONNECTOR=python`` never fetches it: every Kafka source and sink then runs on
  the Python data source (as when Maven Central or ``mvn`` cannot be reached).

>>> pick_version("4.3.0", ["4.1.3", "4.2.0", "4.2.0-preview5", "4.2.1-preview1", "3.5.7"])
'4.2.0'
>>> pick_version("4.2.0", ["4.1.3", "4.2.0"]), pick_version("3.4.0", ["4.0.0"])
('4.2.0', None)
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("funke.kafka")

GROUP = "org.apache.spark"
ARTIFACT = "spark-sql-kafka-0-10_2.13"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
#: pyspark version -> the connector version funke's Kafka tests ran with it (tests/spark/test_kafka_*.py).
CHECKED = {"4.3.0": "4.2.0"}
#: What the connector needs beyond pyspark's own jars (artifact names, without versions).
NEEDED = ("spark-sql-kafka-0-10_2.13", "spark-token-provider-kafka-0-10_2.13", "kafka-clients", "commons-pool2")
#: The class Spark finds ``format("kafka")`` by.
PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
CHOICES = ("auto", "spark", "python")

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>funke.connectors</groupId><artifactId>spark-kafka</artifactId><version>{version}</version>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
"""


@dataclass(frozen=True)
class Connector:
    """The connector's version and jars (``available``), or why funke has none (``reason``)."""

    version: str | None
    jars: tuple[str, ...]
    reason: str = ""

    @property
    def available(self) -> bool:
        return bool(self.jars)

    @property
    def checked(self) -> bool:
        return CHECKED.get(pyspark_version()) == self.version

    def describe(self) -> str:
        """For ``explain()``: which connector, and whether this pairing was checked."""
        if not self.available:
            return f"no Spark Kafka connector ({self.reason})"
        pairing = "checked" if self.checked else f"not checked with pyspark {pyspark_version()} (funke's tests ran {_checked_text()})"
        return f"Spark's Kafka connector {ARTIFACT} {self.version} (pyspark {pyspark_version()}; {pairing})"


def _checked_text() -> str:
    return ", ".join(f"pyspark {p} with {c}" for p, c in CHECKED.items())


def pyspark_version() -> str:
    try:
        return importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _release(v: str) -> tuple[int, ...] | None:
    """``"4.2.0"`` -> (4, 2, 0); None for a preview or anything else."""
    return tuple(int(x) for x in v.split(".")) if re.fullmatch(r"\d+\.\d+\.\d+", v) else None


def pick_version(pyspark: str, served: Iterable[str]) -> str | None:
    """The same version when it is served, else the newest final release below it of the same major version."""
    mine = _release(pyspark)
    if mine is None:
        return None
    releases = sorted(r for r in (_release(v) for v in served) if r is not None and r <= mine and r[0] == mine[0])
    return ".".join(map(str, releases[-1])) if releases else None


def served_versions(timeout: float = 20.0) -> list[str]:
    """The connector's versions Maven Central lists (its ``maven-metadata.xml``)."""
    import urllib.request

    url = f"{MAVEN_CENTRAL}/{GROUP.replace('.', '/')}/{ARTIFACT}/maven-metadata.xml"
    with urllib.request.urlopen(url, timeout=timeout) as reply:  # noqa: S310 (a fixed https URL)
        text = reply.read().decode()
    return re.findall(r"<version>([^<]+)</version>", text)


def cache_root(services_root: Path) -> Path:
    return Path(services_root) / "spark-kafka"


def _pyspark_jars() -> Path | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "jars"


def _artifact(jar: str) -> str:
    """The artifact a jar file is of, without its version.

    >>> _artifact("kafka-clients-3.9.2.jar"), _artifact("spark-sql-kafka-0-10_2.13-4.2.0.jar"), _artifact("zstd-jni-1.5.7-7.jar")
    ('kafka-clients', 'spark-sql-kafka-0-10_2.13', 'zstd-jni')
    """
    m = re.match(r"^(.*?)-\d+\.\d+(?:\.\d+)*(?:[.-]\w+)*\.jar$", jar)
    return m.group(1) if m else jar.removesuffix(".jar")


def fetch(version: str, target: Path) -> tuple[str, ...]:
    """The connector ``version``'s jars that pyspark lacks, copied into ``target`` by ``mvn`` (once)."""
    done = target / ".complete"
    if done.exists():
        return tuple(str(target / j) for j in done.read_text().split())
    if shutil.which("mvn") is None:
        raise RuntimeError("mvn is not installed (apt-get install maven), so funke cannot fetch it")
    with tempfile.TemporaryDirectory(prefix="funke-spark-kafka-") as work:
        (Path(work) / "pom.xml").write_text(_POM.format(group=GROUP, artifact=ARTIFACT, version=version))
        out = Path(work) / "jars"
        cmd = ["mvn", "-q", "-B", "dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={out}"]
        log.info("fetching %s:%s:%s with %s", GROUP, ARTIFACT, version, " ".join(cmd))
        run = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600, check=False)
        if run.returncode != 0:
            tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
            raise RuntimeError(f"mvn could not fetch {ARTIFACT} {version}: {' / '.join(tail)}")
        shipped = {_artifact(j.name) for j in (_pyspark_jars() or Path(work)).glob("*.jar")}
        keep = sorted(j.name for j in out.glob("*.jar") if _artifact(j.name) in NEEDED and _artifact(j.name) not in shipped)
        missing = [a for a in NEEDED if not any(_artifact(j) == a for j in keep)]
        if missing:
            raise RuntimeError(f"mvn fetched {ARTIFACT} {version} but not {', '.join(missing)}")
        target.mkdir(parents=True, exist_ok=True)
        for name in keep:
            shutil.copy2(out / name, target / name)
    done.write_text("\n".join(keep) + "\n")
    return tuple(str(target / j) for j in keep)


_lock = threading.Lock()
_resolved: dict[tuple[str, str], Connector] = {}


def resolve(services_root: Path, choice: str = "auto") -> Connector:
    """The connector for the installed pyspark, fetched into the cache when missing; remembered per process.

    Never raises: a connector funke cannot have comes back with the reason (``available`` False),
    and its jobs read and write Kafka with the Python data source.
    """
    if choice not in CHOICES:
        return Connector(None, (), f"FUNKE_KAFKA_CONNECTOR={choice!r} is not one of {', '.join(CHOICES)}")
    if choice == "python":
        return Connector(None, (), "FUNKE_KAFKA_CONNECTOR=python")
    key = (str(services_root), pyspark_version())
    with _lock:
        if key not in _resolved:
            _resolved[key] = _resolve(cache_root(services_root), pyspark_version())
        return _resolved[key]


#: Seconds a failed fetch is remembered before a new process tries again (no network wait at every session start).
RETRY_AFTER_S = 3600


def _resolve(root: Path, pyspark: str) -> Connector:
    record, failed = root / f"for-pyspark-{pyspark}.json", root / f"failed-for-pyspark-{pyspark}.json"
    try:
        known = json.loads(record.read_text())
        if all(Path(j).exists() for j in known["jars"]):
            return Connector(known["version"], tuple(known["jars"]))
    except (OSError, ValueError, KeyError):
        pass
    try:
        earlier = json.loads(failed.read_text())
        if time.time() - earlier["at"] < RETRY_AFTER_S:
            return Connector(earlier.get("version"), (), f"{earlier['reason']} (tried {time.time() - earlier['at']:.0f} s ago)")
    except (OSError, ValueError, KeyError):
        pass
    found = _fetched(root, pyspark)
    if found.available:
        root.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"version": found.version, "jars": list(found.jars)}))
    else:
        try:
            root.mkdir(parents=True, exist_ok=True)
            failed.write_text(json.dumps({"version": found.version, "reason": found.reason, "at": time.time()}))
        except OSError:
            pass
    return found


def _fetched(root: Path, pyspark: str) -> Connector:
    try:
        version = pick_version(pyspark, served_versions())
    except OSError as e:
        version = CHECKED.get(pyspark)
        if version is None:
            return Connector(None, (), f"Maven Central could not be asked which versions it serves ({e})")
    if version is None:
        return Connector(None, (), f"Maven Central serves no {ARTIFACT} of Spark {pyspark.split('.')[0]}.x at or below {pyspark}")
    try:
        return Connector(version, fetch(version, root / version))
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        return Connector(version, (), str(e))
