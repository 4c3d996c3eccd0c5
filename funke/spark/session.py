"""Getting a SparkSession with funke's local defaults, after checking Java is usable."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

from funke.config import FunkeSettings
from funke.errors import EnvironmentSetupError

MIN_JAVA = 17
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_FIX = (
    "install Java 17 or newer (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless; "
    "macOS: brew install openjdk@17) and put it on PATH or set JAVA_HOME"
)


def java_version(java: str | None = None) -> int | None:
    """Major version of the ``java`` Spark would start, or None when there is none."""
    java = java or _java_binary()
    if java is None:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def _java_binary() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("java")


def check_java(java: str | None = None) -> int:
    """Raise EnvironmentSetupError saying how to fix it when Java is missing or older than 17."""
    binary = java or _java_binary()
    if binary is None:
        raise EnvironmentSetupError(f"Spark needs Java {MIN_JAVA}+, but no 'java' was found (JAVA_HOME unset, nothing on PATH): {_FIX}")
    version = java_version(binary)
    if version is None:
        raise EnvironmentSetupError(f"Spark needs Java {MIN_JAVA}+, but '{binary} -version' did not say which Java it is: {_FIX}")
    if version < MIN_JAVA:
        raise EnvironmentSetupError(f"Spark needs Java {MIN_JAVA}+, but {binary} is Java {version}: {_FIX}")
    return version


def local_cores(master: str) -> int:
    m = re.match(r"local\[(\d+)", master)
    if m:
        return int(m.group(1))
    if master == "local":
        return 1
    return os.cpu_count() or 2


def default_conf(settings: FunkeSettings) -> dict[str, str]:
    """funke's Spark defaults; anything in ``spark_conf`` overrides them."""
    cores = local_cores(settings.master)
    return {
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions or cores),
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": str(settings.ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": settings.driver_memory,
        "spark.sql.adaptive.enabled": "false" if cores <= 2 else "true",
        "spark.default.parallelism": str(cores),
        # A loaded machine can take longer than Spark's 15 s for a Python worker to connect back.
        "spark.python.authenticate.socketTimeout": "120s",
    }


def get_session(settings: FunkeSettings, spark_conf: dict[str, str], app: str, spark: Any = None) -> Any:
    """The user's session, the active one, or a new one with funke's defaults."""
    from pyspark.sql import SparkSession

    if spark is not None:
        return spark
    if settings.remote:
        builder = SparkSession.builder.remote(settings.remote).appName(app)
        for k, v in spark_conf.items():
            builder = builder.config(k, v)
        return builder.getOrCreate()
    active = SparkSession.getActiveSession()
    if active is not None:
        for k, v in spark_conf.items():
            active.conf.set(k, v)
        return active
    check_java()
    builder = SparkSession.builder.master(settings.master).appName(app)
    for k, v in {**default_conf(settings), **spark_conf}.items():
        builder = builder.config(k, v)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(settings.log_level)
    return session
