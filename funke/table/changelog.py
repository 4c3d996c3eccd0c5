"""An updating result's rows carry their kind, Flink's ``RowKind``, in a column: hidden (``ROW_KIND``)
inside a query, ``row_kind`` where users read it (``to_changelog_stream``, ``collect()``, sinks). The
kinds and each relation's changelog mode (its kinds and upsert key) are ``funke.plan.changelog``'s."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
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
    "UPDATE_BEFORE", "ChangelogMode", "changelog_mode", "held_step", "held_steps", "is_retraction", "rows_step", "rows_steps", "state_mode",
    "with_ttl",
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
    return held_step(ctx, rows, _rows(step), value, empty=[])


def held_step(ctx: Any, descriptor: StateDescriptor, step: Callable[[Any, dict], tuple[Any, list]], value: dict, empty: Any = None) -> list[dict]:
    """Run ``step(what the key holds in value state descriptor (None: nothing), value) -> (what it holds after, changes)``,
    the state cleared where it holds ``empty`` after; the changes."""
    state = ctx.get_state(descriptor)
    after, out = step(state.value(), value)
    _keep(state, after, empty)
    return out


def held_steps(key_groups: Iterable[Any], ctx: Any, descriptor: StateDescriptor, step: Callable[[Any, dict], tuple[Any, list]],
               empty: Any = None) -> Iterator[dict]:  # fmt: skip
    """``held_step`` over a micro-batch's elements grouped by key (a ``KeyedProcessFunction.process_batch``): each
    key's state read once, its elements stepped in their order, what it holds after written once; the changes in
    order. The same changes as ``held_step`` per element; each carries its key group's latest timestamp (the
    operators that use it give results with no time attribute, or one read from a column)."""
    for group in key_groups:
        state = ctx.get_state(descriptor)
        held = state.value()
        for value in group.values:
            held, out = step(held, value)
            yield from out
        _keep(state, held, empty)


def rows_steps(key_groups: Iterable[Any], ctx: Any, rows: StateDescriptor, step: Callable[[list, dict], tuple[list, list]]) -> Iterator[dict]:
    """``rows_step`` over a micro-batch's key groups, as ``held_steps``."""
    return held_steps(key_groups, ctx, rows, _rows(step), empty=[])


def _rows(step: Callable[[list, dict], tuple[list, list]]) -> Callable[[Any, dict], tuple[list, list]]:
    return lambda held, v: step(held or [], v)


def _keep(state: Any, held: Any, empty: Any) -> None:
    if held is None or held == empty:
        state.clear()
    else:
        state.update(held)
