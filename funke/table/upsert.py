"""An updating result written by a key (an upsert sink's primary key, ``to_changelog_stream(...,
changelog_mode="upsert")``): each key's changes as one row per key, the last change winning.

Where the result's upsert key is within the sink's key, every change of a sink key comes from one key
of the operator that made it, in order: the sink can apply them as they come (``-U``/``-D`` delete,
``+I``/``+U`` upsert, the last change of a batch winning). Elsewhere (no upsert key, or another one)
the changes of one sink key come from several places, in any order, and Flink's
``SinkUpsertMaterializer`` puts them in order first: ``UpsertMaterializer`` keeps, per sink key, the
rows the changelog holds for it, and sends the latest of them (``+I`` the first, ``+U`` the next) or,
when none is left, a ``-D``. An update that comes as ``-U`` then ``+U`` of the only row of a key is
therefore sent as ``-D`` then ``+I`` (what Flink's materializer sends for it too; Flink's planner drops
the ``-U`` before it where it can tell that it is safe, funke does not yet).

Read the other way, an upsert stream (an ``upsert-kafka`` table, ``from_changelog_stream(...,
changelog_mode="upsert")``: each row its key's row now, or a delete of it) becomes a changelog of whole
rows through ``ChangelogNormalize``, as Flink's planner reads one; ``changes_table_stream`` reads a
stream whose rows carry their kinds; ``versions`` is what an event-time temporal join reads of an upsert table.

>>> m = UpsertMaterializer(("k",))
>>> rows, out = [], []
>>> for kind, v in (("+I", 1), ("+I", 2), ("-D", 2), ("-U", 1)):
...     rows, changes = m.step(rows, {"_fk_row_kind": kind, "k": "a", "v": v})
...     out += [(c["_fk_row_kind"], c["v"]) for c in changes]
>>> out
[('+I', 1), ('+U', 2), ('+U', 1), ('-D', 1)]
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from typing import Any

from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.plan.types import Field, Schema
from funke.semantics.functions import KeyedProcessFunction, KeyGroup
from funke.semantics.state import ValueStateDescriptor
from funke.table.changelog import (
    DELETE,
    INSERT,
    ROW_KIND,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    ChangelogMode,
    changelog_mode,
    held_step,
    held_steps,
    is_retraction,
    rows_step,
    rows_steps,
    state_mode,
    with_ttl,
)


class UpsertMaterializer(KeyedProcessFunction):
    """Per value of ``key``: the rows held, in arrival order; its changes as an upsert changelog."""

    def __init__(self, key: Sequence[str], ttl_ms: int | None = None) -> None:
        self.key, self.ttl_ms = tuple(key), ttl_ms
        self.rows = with_ttl(ValueStateDescriptor("rows"), ttl_ms)

    def __repr__(self) -> str:  # (the plan's uid)
        return f"UpsertMaterializer({self.key!r}, ttl_ms={self.ttl_ms})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        return ChangelogMode(frozenset({INSERT, UPDATE_AFTER, DELETE}), self.key)

    def step(self, rows: list[dict[str, Any]], value: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The key's rows after ``value`` (a new list) and the changes to send."""
        row = {c: v for c, v in value.items() if c != ROW_KIND}
        if not is_retraction(value):
            return [*rows, row], [{ROW_KIND: UPDATE_AFTER if rows else INSERT, **row}]
        at = next((i for i, kept in enumerate(rows) if kept == row), None)
        if at is None:  # (not held: it expired, or never came)
            return rows, []
        after = rows[:at] + rows[at + 1 :]
        if not after:
            return after, [{ROW_KIND: DELETE, **row}]
        if at == len(rows) - 1:  # the latest row went: the one before it is the key's row now
            return after, [{ROW_KIND: UPDATE_AFTER, **after[-1]}]
        return after, []

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from rows_step(ctx, self.rows, self.step, value)

    def process_batch(self, key_groups: Iterator[KeyGroup], ctx: Any) -> Iterator[dict[str, Any]]:
        return rows_steps(key_groups, ctx, self.rows, self.step)


class ChangelogNormalize(KeyedProcessFunction):
    """Flink's ``ChangelogNormalize``, which its planner puts after an upsert source (upsert-kafka): per value of
    ``key`` the row it holds now; each change as a changelog of whole rows. A key's first row is ``+I``; a new row
    ``-U`` the one held and ``+U`` it, or nothing where it equals the one held (without a state TTL: with one Flink sends
    it again, lest the state downstream expire first); a delete (``-D`` or ``-U``, maybe with the key's columns
    only, as a tombstone gives them) ``-D`` the whole row held, or nothing for a key not held.

    >>> n = ChangelogNormalize(("k",))
    >>> held, out = None, []
    >>> for kind, v in (("+I", 1), ("+I", 2), ("+I", 2), ("-D", None), ("-D", None), ("+I", 3)):
    ...     held, changes = n.step(held, {ROW_KIND: kind, "k": "a", "v": v})
    ...     out += [(c[ROW_KIND], c["v"]) for c in changes]
    >>> out
    [('+I', 1), ('-U', 1), ('+U', 2), ('-D', 2), ('+I', 3)]
    """

    def __init__(self, key: Sequence[str], ttl_ms: int | None = None) -> None:
        self.key, self.ttl_ms = tuple(key), ttl_ms
        self.held = with_ttl(ValueStateDescriptor("row"), ttl_ms)

    def __repr__(self) -> str:  # (the plan's uid)
        return f"ChangelogNormalize({self.key!r}, ttl_ms={self.ttl_ms})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        return ChangelogMode(frozenset({INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE}), self.key)

    def step(self, held: dict[str, Any] | None, value: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The row held after ``value`` and the changes to send."""
        if is_retraction(value):
            return None, [] if held is None else [{ROW_KIND: DELETE, **held}]
        row = {c: v for c, v in value.items() if c != ROW_KIND}
        if held is None:
            return row, [{ROW_KIND: INSERT, **row}]
        if row == held and not self.ttl_ms:
            return held, []
        return row, [{ROW_KIND: UPDATE_BEFORE, **held}, {ROW_KIND: UPDATE_AFTER, **row}]

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from held_step(ctx, self.held, self.step, value)

    def process_batch(self, key_groups: Iterator[KeyGroup], ctx: Any) -> Iterator[dict[str, Any]]:
        return held_steps(key_groups, ctx, self.held, self.step)


def changes_table_stream(stream: Any, column: str, changelog_mode: str, key: Sequence[str] | None, ttl_ms: int | None) -> Any:
    """``stream``'s rows as the changes of an updating table, each row's kind (``+I``, ``-U``, ``+U``, ``-D``) in its
    ``column`` (a kind of none of them fails the job, naming it). ``changelog_mode="all"``: every kind, as they come
    (``key``: the columns identifying a row, its upsert key, if known); ``"upsert"`` (Flink's ``ChangelogMode.upsert()``,
    which needs a primary key): ``+I``/``+U`` a key's row now, ``-D`` (or ``-U``) it gone, normalized into whole rows
    (``ChangelogNormalize``), as Flink's planner reads such a stream."""
    if changelog_mode not in ("all", "upsert"):
        raise PlanError(f"from_changelog_stream(): changelog_mode is 'all' (every kind) or 'upsert', got {changelog_mode!r}")
    if column not in stream.columns:
        raise PlanError(f"from_changelog_stream(): the stream has no column {column!r} holding each row's kind (+I, -U, +U, -D): "
                        f"its columns are {', '.join(stream.columns)}")  # fmt: skip
    if changelog_mode == "upsert" and not key:
        raise PlanError("from_changelog_stream(changelog_mode='upsert') needs the key that identifies a row: key=[...] (Flink: the schema's primary key)")
    missing = [k for k in key or () if k not in stream.columns]
    if missing:
        raise PlanError(f"from_changelog_stream(): the key's column {missing[0]!r} is not a column of the stream ({', '.join(stream.columns)})")
    known = ", ".join(f"'{k}'" for k in (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE))
    kind = (f"CASE WHEN `{column}` IN ({known}) THEN `{column}` ELSE RAISE_ERROR(CONCAT('from_changelog_stream(): a row of kind ', "
            f"COALESCE(`{column}`, 'NULL'), ', not one of {known.replace(chr(39), '')}')) END AS `{ROW_KIND}`")  # fmt: skip
    changes = stream.select(Sql(kind, declared="string"), *(f"`{c}`" for c in stream.columns if c != column))
    if changelog_mode == "upsert":
        return normalized(changes, key, ttl_ms)  # type: ignore[arg-type]
    state_mode(changes.node, ChangelogMode(frozenset({INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE}), tuple(key) if key else None))
    return changes


def normalized(stream: Any, key: Sequence[str], ttl_ms: int | None = None) -> Any:
    """An upsert source's ``stream`` (``+I`` a key's row now, ``-D`` it gone) as a changelog keyed by ``key``."""
    return stream.key_by(list(key), nulls=True).process(ChangelogNormalize(key, ttl_ms), output_schema=stream.schema, name="ChangelogNormalize")


#: An upsert table's versions as Flink's event-time temporal join reads them, by the node of its normalized stream.
_VERSIONS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def with_versions(stream: Any, versions: Any) -> None:
    """Record ``versions`` as what an event-time temporal join of the upsert table ``stream`` reads: Flink's planner
    gives the join the upsert source's records as they come, without ChangelogNormalize, each row a version of its key
    from its time on, and a tombstone, whose time is NULL (read as 0), never the version in force."""
    _VERSIONS[stream.node] = versions


def versions(stream: Any) -> Any:
    """What an event-time temporal join reads of the versioned table ``stream``: an upsert table's own records, else
    ``stream``."""
    return _VERSIONS.get(stream.node, stream)


def by_key(stream: Any, key: Sequence[str], ttl_ms: int | None = None) -> Any:
    """``stream`` (an updating result) as changes one sink key at a time, in order: as it is where its
    upsert key is within ``key``, else through ``UpsertMaterializer``."""
    mode = changelog_mode(stream.node)
    if mode.upsert_key is not None and set(mode.upsert_key) <= set(key):
        return stream
    return upserts(stream, key, ttl_ms)


def upserts(stream: Any, key: Sequence[str], ttl_ms: int | None = None) -> Any:
    """``stream``'s changes as an upsert changelog by ``key``: ``+I``, ``+U`` and ``-D`` only, one row per key
    (a ``-U`` is no delete there unless no row of its key is left: the materializer tells)."""
    schema = Schema((Field(ROW_KIND, "string"), *(f for f in stream.schema if f.name != ROW_KIND)))
    return stream.key_by(list(key), nulls=True).process(
        UpsertMaterializer(key, ttl_ms), output_schema=schema, name="UpsertMaterializer"
    )
