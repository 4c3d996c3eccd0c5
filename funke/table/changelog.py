"""An updating result's rows carry their kind, Flink's ``RowKind``, in a column: hidden (``ROW_KIND``)
inside a query, ``row_kind`` where users read it (``to_changelog_stream``, ``collect()``, sinks). The
kinds and each relation's changelog mode (its kinds and upsert key) are ``funke.plan.changelog``'s."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funke.plan.changelog import (
    DELETE,
    INSERT,
    INSERT_ONLY,
    RETRACT,
    RETRACTIONS,
    ROW_KIND,
    ROW_KIND_NAME,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    ChangelogMode,
    changelog_mode,
    state_mode,
)
from funke.semantics.state import StateDescriptor
from funke.semantics.ttl import StateTtlConfig

__all__ = [
    "DELETE", "INSERT", "INSERT_ONLY", "RETRACT", "RETRACTIONS", "ROW_KIND", "ROW_KIND_NAME", "UPDATE_AFTER",
    "UPDATE_BEFORE", "ChangelogMode", "changelog_mode", "held_step", "is_retraction", "rows_step", "state_mode", "with_ttl",
]  # fmt: skip


def is_retraction(row: dict) -> bool:
    """Whether ``row`` of a changelog takes a row away (``-U``, ``-D``); an insert-only row has no kind."""
    return row.get(ROW_KIND) in RETRACTIONS


def with_ttl(descriptor: StateDescriptor, ttl_ms: int | None) -> StateDescriptor:
    """``descriptor`` expiring ``ttl_ms`` after each write (Flink SQL's ``table.exec.state.ttl``, which the
    updating operators and the regular join honour), or as it is."""
    if ttl_ms:
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(ttl_ms).build())
    return descriptor


def rows_step(ctx: Any, rows: StateDescriptor, step: Callable[[list, dict], tuple[list, list]], value: dict) -> list[dict]:
    """Run ``step(rows held, value) -> (rows held after, changes)`` of an operator that keeps a key's rows as
    one list in value state ``rows`` (cleared when none is left); the changes."""
    return held_step(ctx, rows, lambda held, v: step(held or [], v), value, empty=[])


def held_step(ctx: Any, descriptor: StateDescriptor, step: Callable[[Any, dict], tuple[Any, list]], value: dict, empty: Any = None) -> list[dict]:
    """Run ``step(what the key holds in value state descriptor (None: nothing), value) -> (what it holds after, changes)``,
    the state cleared where it holds ``empty`` after; the changes."""
    state = ctx.get_state(descriptor)
    after, out = step(state.value(), value)
    if after is None or after == empty:
        state.clear()
    else:
        state.update(after)
    return out
