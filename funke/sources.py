"""``fk.sources``: where streams come from."""

from funke.connectors.redis_streams import redis_stream
from funke.connectors.sources import collection, files, generator

__all__ = ["collection", "files", "generator", "redis_stream"]
