"""One frozen settings model; every option is also an environment variable ``FUNKE_<NAME>``."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class FunkeSettings(BaseSettings):
    """Defaults for local Spark, overridable per environment variable or per ``StreamEnvironment``."""

    model_config = SettingsConfigDict(env_prefix="FUNKE_", frozen=True, extra="ignore")

    master: str = Field("local[*]", description="Spark master URL (FUNKE_MASTER)")
    remote: str | None = Field(None, description="Spark Connect URL, e.g. sc://host:15002 (FUNKE_REMOTE)")
    shuffle_partitions: int | None = Field(None, description="spark.sql.shuffle.partitions; default: the cores")
    home: Path = Field(Path.home() / ".funke", description="funke home: checkpoints, dead letters (FUNKE_HOME)")
    log_level: str = Field("FATAL", description="Spark log level (FUNKE_LOG_LEVEL)")
    ui: bool = Field(False, description="start Spark's web UI (FUNKE_UI)")
    driver_memory: str = Field("2g", description="spark.driver.memory for local Spark (FUNKE_DRIVER_MEMORY)")
    jvm_options: str = Field(
        "",
        description="extra options for the JVMs of a session funke starts (driver and executors), after funke's own -Xss32m; "
        "a session you pass in, an active one or a Spark Connect server keeps its own (FUNKE_JVM_OPTIONS)",
    )
    checkpoint_timeout: int = Field(
        600_000,
        gt=0,
        description="ms a streaming query's micro-batch (its checkpoint) may run before the query restarts from its last checkpoint, "
        "at most 3 times in a row, then the job fails; as Flink's execution.checkpointing.timeout (FUNKE_CHECKPOINT_TIMEOUT)",
    )
    http: bool = Field(True, description="serve a streaming job's metrics, state and dashboard over HTTP (FUNKE_HTTP)")
    http_host: str = Field("127.0.0.1", description="address the job's HTTP server binds; any but loopback needs a bearer token (FUNKE_HTTP_HOST)")
    http_port: int = Field(0, description="port of the job's HTTP server; 0 picks a free one, shown by funke list (FUNKE_HTTP_PORT)")
    operator_metrics: bool = Field(
        False,
        description="count rows out of every operator, native ones too (an observe after each: it splits Spark's generated code; "
        "sources, sinks and funke's operators are always counted) (FUNKE_OPERATOR_METRICS)",
    )
    services_home: Path | None = Field(
        None, description="where `funke services` keeps Kafka's jars, data and the servers' logs; default: <home>/services (FUNKE_SERVICES_HOME)"
    )

    kafka_connector: str = Field(
        "auto",
        description="Kafka through Spark's own connector where it serves (auto: fetched once into <services home>/spark-kafka), "
        "or always through funke's Python data source over confluent-kafka (python) (FUNKE_KAFKA_CONNECTOR)",
    )

    @property
    def services_root(self) -> Path:
        return self.services_home or self.home / "services"


def settings(**overrides: object) -> FunkeSettings:
    return FunkeSettings(**{k: v for k, v in overrides.items() if v is not None})
