"""The compiler's dispatch and the Java check, without starting Spark."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import ClassVar

import pytest

import funke as fk
from funke.plan import nodes
from funke.spark.compiler import Compiler
from funke.spark.session import check_java, default_conf
from funke.config import settings


@dataclass(frozen=True, eq=False)
class Mystery(nodes.Node):
    kind: ClassVar[str] = "mystery"


def test_node_without_rule_names_itself_and_the_path():
    c = Compiler(spark=None, mode="streaming")  # type: ignore[arg-type]
    with pytest.raises(fk.UnsupportedError) as e:
        c.compile(Mystery(()))
    assert "mystery" in str(e.value) and "[mystery-" in str(e.value) and "no rule for mystery nodes" in str(e.value)


def _fake_java(tmp_path, version_line: str) -> str:
    p = tmp_path / "java"
    p.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def test_old_java_is_refused_with_a_fix(tmp_path):
    java = _fake_java(tmp_path, 'openjdk version "11.0.2" 2019-01-15')
    with pytest.raises(fk.EnvironmentSetupError) as e:
        check_java(java)
    assert "Spark needs Java 17+, but" in str(e.value) and "is Java 11" in str(e.value)
    assert "openjdk-17" in str(e.value)


def test_java_8_version_string_is_read_as_8(tmp_path):
    java = _fake_java(tmp_path, 'java version "1.8.0_292"')
    with pytest.raises(fk.EnvironmentSetupError, match="is Java 8"):
        check_java(java)


def test_missing_java_is_refused_with_a_fix(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(fk.EnvironmentSetupError, match="no 'java' was found"):
        check_java()


def test_java_17_passes(tmp_path):
    assert check_java(_fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15')) == 17


def test_local_defaults_fit_the_machine():
    conf = default_conf(settings(master="local[2]"))
    assert conf["spark.sql.shuffle.partitions"] == "2"
    assert conf["spark.sql.streaming.stateStore.providerClass"].endswith("RocksDBStateStoreProvider")
    assert conf["spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"] == "true"
    assert conf["spark.sql.execution.arrow.pyspark.enabled"] == "true"
    assert default_conf(settings(master="local[2]", shuffle_partitions=7))["spark.sql.shuffle.partitions"] == "7"


def test_jvm_options_go_after_funkes_own_to_the_driver_and_to_the_executors():
    plain = default_conf(settings(master="local[2]", jvm_options=""))
    assert plain["spark.driver.extraJavaOptions"] == "-Xss32m" and "spark.executor.extraJavaOptions" not in plain
    given = default_conf(settings(master="local[2]", jvm_options="-XX:TieredStopAtLevel=1 -Dx=y"))
    assert given["spark.driver.extraJavaOptions"] == "-Xss32m -XX:TieredStopAtLevel=1 -Dx=y"
    assert given["spark.executor.extraJavaOptions"] == "-XX:TieredStopAtLevel=1 -Dx=y"


def test_settings_come_from_environment(monkeypatch):
    monkeypatch.setenv("FUNKE_MASTER", "spark://h:7077")
    assert settings().master == "spark://h:7077"
    env = fk.StreamEnvironment(app="x", master="local[3]")
    assert env.settings.master == "local[3]"
    assert os.environ["FUNKE_MASTER"] == "spark://h:7077"
