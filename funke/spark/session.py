"""Getting a SparkSession with funke's local defaults, after checking Java is usable."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings
from typing import Any

from funke.config import FunkeSettings
from funke.errors import EnvironmentSetupError

MIN_JAVA = 17
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
THREAD_STACK = "32m"  # see default_conf
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
        out = subprocess.run([java, "-version"], check=False, capture_output=True, text=True, timeout=30)
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


def session_cores(spark: Any, settings: FunkeSettings, *, given: bool) -> int:
    """How many tasks run at once: funke sizes buckets and partitions by it."""
    if settings.remote:
        if settings.remote.startswith("local"):
            return local_cores(settings.remote)
        return int(spark.conf.get("spark.sql.shuffle.partitions"))
    if given:
        if is_connect(spark):
            return int(spark.conf.get("spark.sql.shuffle.partitions"))
        return spark.sparkContext.defaultParallelism
    return local_cores(settings.master)


def default_conf(settings: FunkeSettings) -> dict[str, str]:
    """funke's Spark defaults; anything in ``spark_conf`` overrides them."""
    cores = local_cores(settings.master)
    return {
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions or cores),
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        # Flink's JSON functions read an object with a key twice (the last value wins); Spark's parser of JSON
        # into VARIANT, which funke's JSON functions rewrite onto, refuses one unless told to keep the last.
        "spark.sql.variant.allowDuplicateKeys": "true",
        # Flink's maps keep the last value of a key given twice (MAP['a', 1, 'a', 2], MAP_FROM_ARRAYS, STR_TO_MAP);
        # Spark's fail the job (DUPLICATED_MAP_KEY) unless told to do the same.
        "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
        # Flink's DECODE and ENCODE are Java's String's: a malformed byte sequence is U+FFFD, a character the charset
        # lacks '?'. Spark 4's fail the job unless told to do as Spark 3 (and Java) did.
        "spark.sql.legacy.codingErrorAction": "true",
        # Flink SQL's TIME is Spark's TIME type, which Spark 4.x keeps behind this flag (funke.table.time_of_day).
        "spark.sql.timeType.enabled": "true",
        # PySpark's DataFrame call sites for Spark's error context: with it on, each Column function call also
        # asks the JVM for the active session and a conf and sets and clears the call site (about half of the
        # py4j calls that plan a small job, 918 -> 418). funke's frames are built by funke, so the call sites
        # named funke's lines, not the user's; funke reports a failure by the operator it compiled. A static conf.
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        "spark.ui.enabled": str(settings.ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": settings.driver_memory,
        "spark.sql.adaptive.enabled": "false" if cores <= 2 else "true",
        "spark.default.parallelism": str(cores),
        # A loaded machine can take longer than Spark's 15 s for a Python worker to connect back.
        "spark.python.authenticate.socketTimeout": "120s",
        # Stopping a query while its foreachBatch runs: Spark tells "stopped" from "failed" by
        # matching the Python error against ``calling((.|\r\n|\r|\n)*)(...)``, a regex that
        # recurses per character. With Java's default 1 MB thread stack a message over about
        # 1,500 characters (a traceback with the Java trace in it) overflows, and the query's
        # thread dies with a StackOverflowError instead of stopping. 32 MB stacks (reserved,
        # touched only when used) take messages of over 60,000 characters.
        "spark.driver.extraJavaOptions": f"-Xss{THREAD_STACK} {settings.jvm_options}".strip(),
        **({"spark.executor.extraJavaOptions": settings.jvm_options} if settings.jvm_options else {}),
    }



def connector_conf(settings: FunkeSettings, given: dict[str, str]) -> dict[str, str]:
    """``spark.jars`` with Spark's Kafka connector added (``funke.connectors.kafka_jvm``: fetched once, then
    read from the services home), for a session funke starts; the user's own jars kept. Nothing when it
    cannot be had: Kafka then goes through funke's Python data source, and ``explain()`` says why."""
    from funke.connectors.kafka_jvm import resolve

    connector = resolve(settings.services_root, settings.kafka_connector)
    if not connector.available:
        return {}
    jars = [j for j in given.get("spark.jars", "").split(",") if j]
    return {"spark.jars": ",".join([*jars, *(j for j in connector.jars if j not in jars)])}


# SQL confs funke's operators rely on; a Spark Connect session can set them per session.
SESSION_CONF = (
    "spark.sql.streaming.stateStore.providerClass",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled",
    "spark.sql.execution.arrow.pyspark.enabled",
    "spark.sql.session.timeZone",
    "spark.sql.variant.allowDuplicateKeys",
    "spark.sql.mapKeyDedupPolicy",
    "spark.sql.legacy.codingErrorAction",
    "spark.sql.timeType.enabled",
)


def remote_conf(settings: FunkeSettings) -> dict[str, str]:
    """funke's defaults for a Spark Connect session.

    ``remote="local[N]"`` starts a Connect server on local Spark, so it gets every local
    default (cores from the URL). A real server (``sc://...``) owns its static confs and its
    cores; funke sets only the per-session SQL confs its operators need, plus shuffle
    partitions when ``shuffle_partitions`` is given.
    """
    assert settings.remote is not None
    if settings.remote.startswith("local"):
        return default_conf(settings.model_copy(update={"master": settings.remote}))
    conf = {k: v for k, v in default_conf(settings).items() if k in SESSION_CONF}
    if settings.shuffle_partitions:
        conf["spark.sql.shuffle.partitions"] = str(settings.shuffle_partitions)
    return conf


def on_this_machine(master: str) -> bool:
    """Whether every Python process of a session with this master runs here: local, or a standalone
    cluster on loopback (``funke cluster up``), whose workers start their Python from this machine too.

    >>> [on_this_machine(m) for m in ("local[2]", "spark://127.0.0.1:7077", "spark://localhost:7077", "spark://10.0.0.5:7077", "yarn")]
    [True, True, True, False, False]
    """
    return master.startswith("local") or bool(re.match(r"spark://(127\.0\.0\.1|localhost)(:\d+)?$", master))


def is_connect(spark: Any) -> bool:
    """True for a Spark Connect session (the DataFrame API without a local JVM)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def get_session(settings: FunkeSettings, spark_conf: dict[str, str], app: str, spark: Any = None) -> Any:
    """The user's session, the active one, or a new one with funke's defaults."""
    from pyspark.sql import SparkSession
    from pyspark.sql.session import SparkSession as ClassicSession

    if spark is not None:
        return spark
    if settings.remote:
        if settings.remote.startswith("local"):
            check_java()
        builder = SparkSession.builder.remote(settings.remote).appName(app)
        local = connector_conf(settings, spark_conf) if settings.remote.startswith("local") else {}
        for k, v in {**remote_conf(settings), **spark_conf, **local}.items():
            builder = builder.config(k, v)
        from funke.spark.quiet import filtered_stderr_for_children, python_for_children

        here = settings.home if on_this_machine(settings.remote) else None
        with warnings.catch_warnings(), filtered_stderr_for_children(), python_for_children(here):
            # The local server takes static confs at start; setting them again per session only warns.
            warnings.filterwarnings("ignore", message=".*CANNOT_MODIFY_CONFIG.*")
            session = builder.getOrCreate()
        server = ClassicSession._instantiatedSession if settings.remote.startswith("local") else None
        if server is not None:
            server.sparkContext.setLogLevel(settings.log_level)
        return session
    active = SparkSession.getActiveSession()
    if active is not None:
        for k, v in spark_conf.items():
            active.conf.set(k, v)
        return active
    check_java()
    builder = SparkSession.builder.master(settings.master).appName(app)
    for k, v in {**default_conf(settings), **spark_conf, **connector_conf(settings, spark_conf)}.items():
        builder = builder.config(k, v)
    from funke.spark.quiet import filtered_stderr_for_children, python_for_children

    with filtered_stderr_for_children(), python_for_children(settings.home if on_this_machine(settings.master) else None):
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel(settings.log_level)
    return session
