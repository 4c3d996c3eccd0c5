"""``fk.sinks``: where results go."""

from funke.connectors.kafka_sink import kafka
from funke.connectors.postgres import postgres
from funke.connectors.redis_sink import redis
from funke.connectors.sinks import blackhole, collect, files
from funke.connectors.sinks import print_ as print  # noqa: A001  (fk.sinks.print(), as PyFlink)

__all__ = ["blackhole", "collect", "files", "kafka", "postgres", "print", "redis"]
