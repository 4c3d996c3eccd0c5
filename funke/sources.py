"""``fk.sources``: where streams come from."""

from funke.connectors.kafka import kafka
from funke.connectors.redis_streams import redis_stream
from funke.connectors.sources import collection, files, generator

__all__ = ["collection", "files", "generator", "kafka", "redis_stream"]
