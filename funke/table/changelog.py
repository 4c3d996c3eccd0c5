"""An updating result's rows carry their kind, Flink's ``RowKind``, in a column: hidden (``ROW_KIND``)
inside a query, ``row_kind`` where users read it (``to_changelog_stream``, ``collect()``, sinks)."""

from __future__ import annotations

from funke.semantics.state import StateDescriptor, StateTtlConfig

#: The hidden column of an updating result that holds each row's kind.
ROW_KIND = "_fk_row_kind"
#: Its name where users read it.
ROW_KIND_NAME = "row_kind"
#: Flink's row kinds: insert, the row before an update, the row after it, delete.
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = "+I", "-U", "+U", "-D"


def with_ttl(descriptor: StateDescriptor, ttl_ms: int | None) -> StateDescriptor:
    """``descriptor`` expiring ``ttl_ms`` after each write (Flink SQL's ``table.exec.state.ttl``, which the
    updating operators and the regular join honour), or as it is."""
    if ttl_ms:
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(ttl_ms).build())
    return descriptor
