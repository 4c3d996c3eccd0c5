"""``fk.sources``: where streams come from."""

from funke.connectors.sources import collection, files, generator

__all__ = ["collection", "files", "generator"]
