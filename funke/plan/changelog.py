"""Changelogs: a relation whose rows can change (an updating result of Flink SQL) carries each row's
kind, Flink's ``RowKind``, in a hidden column; ``changelog_mode`` says, per plan node, which kinds its
rows may have and which columns identify a row of the result they build (its upsert key), as Flink's
planner infers them (``FlinkChangelogModeInferenceProgram``, ``FlinkRelMdUpsertKeys``).

The kinds: ``+I`` insert, ``-U`` the row as it was before an update, ``+U`` the row after it, ``-D``
delete. funke's updating operators always send ``-U`` before ``+U`` (Flink's retract mode); an upsert
key tells a consumer that, materialized, the changelog holds at most one row per value of those
columns (a sink upserting by a primary key that contains it can take the changes as they come).

The modes are derived from the plan, not stored: a node without the row-kind column is insert-only;
a process function the planner made declares its output's mode from its inputs' (``changelog_mode``
on the function); a projection keeps an upsert key whose columns it passes through (renamed or not);
a filter, a key_by and a watermark keep their input's mode; anything else updating is a retracting changelog of no known key.

>>> ChangelogMode(frozenset({INSERT, UPDATE_BEFORE, UPDATE_AFTER}), ("k",)).describe()
'[+I, -U, +U] upsert key (k)'
>>> INSERT_ONLY.describe(), INSERT_ONLY.updating
('insert-only', False)
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from funke.plan import nodes
from funke.plan.expr import Col, Expr, Sql

#: The hidden column of an updating result that holds each row's kind.
ROW_KIND = "_fk_row_kind"
#: Its name where users read it (``to_changelog_stream``, ``collect()``, sinks).
ROW_KIND_NAME = "row_kind"
#: Flink's row kinds: insert, the row before an update, the row after it, delete.
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = "+I", "-U", "+U", "-D"
#: The kinds that take a row away (a consumer retracts them).
RETRACTIONS = frozenset({UPDATE_BEFORE, DELETE})
_ORDER = (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE)


@dataclass(frozen=True)
class ChangelogMode:
    """The row kinds a relation's changelog may hold, and its upsert key (None: no key known; ``()``:
    at most one row, as a global aggregation's)."""

    kinds: frozenset[str]
    upsert_key: tuple[str, ...] | None = None

    @property
    def updating(self) -> bool:
        return self.kinds != {INSERT}

    @property
    def retracts(self) -> bool:
        """Whether rows are ever taken away (``-U`` or ``-D``): a consumer must retract what it kept."""
        return bool(self.kinds & RETRACTIONS)

    def describe(self) -> str:
        if not self.updating:
            return "insert-only"
        kinds = ", ".join(k for k in _ORDER if k in self.kinds)
        key = "no upsert key" if self.upsert_key is None else f"upsert key ({', '.join(self.upsert_key)})"
        return f"[{kinds}] {key}"

    def keyed(self, key: Iterable[str] | None) -> ChangelogMode:
        return ChangelogMode(self.kinds, None if key is None else tuple(key))


INSERT_ONLY = ChangelogMode(frozenset({INSERT}))
#: Every kind, no key known: what an updating relation is when nothing more is known of it.
RETRACT = ChangelogMode(frozenset(_ORDER))

#: Modes the planner states for nodes whose mode it knows better than the rules below (a union of a
#: join's matched rows with its NULL-keyed ones, which keeps the join's key).
_STATED: weakref.WeakKeyDictionary[nodes.Node, ChangelogMode] = weakref.WeakKeyDictionary()


def state_mode(node: nodes.Node, mode: ChangelogMode) -> None:
    """Record ``mode`` as the changelog mode of ``node`` (made by the planner, which knows it)."""
    _STATED[node] = mode


def is_updating(node: nodes.Node) -> bool:
    """Whether ``node``'s rows are a changelog: their kinds are in ``ROW_KIND``."""
    return node.schema is not None and ROW_KIND in node.schema


def changelog_mode(node: nodes.Node) -> ChangelogMode:
    """The changelog mode of ``node``'s output (the module's docstring gives the rules)."""
    if not is_updating(node):
        return INSERT_ONLY
    if node in _STATED:
        return _STATED[node]
    declare = getattr(getattr(node, "function", None), "changelog_mode", None)
    if callable(declare):
        return declare(tuple(changelog_mode(i) for i in node.inputs))
    if isinstance(node, (nodes.Filter, nodes.KeyBy, nodes.Watermark)):
        return changelog_mode(node.input)
    if isinstance(node, nodes.Select):
        return _projected(changelog_mode(node.input), node.exprs)
    kinds = frozenset().union(*(changelog_mode(i).kinds for i in node.inputs)) if node.inputs else RETRACT.kinds
    return ChangelogMode(kinds | {INSERT})


def _projected(mode: ChangelogMode, exprs: tuple[Expr, ...]) -> ChangelogMode:
    """``mode`` after a projection: its key renamed as the projection passes each key column on, or
    no key when one is not passed on."""
    if mode.upsert_key is None:
        return mode
    passed: dict[str, str] = {}
    for e in exprs:
        moved = passes_on(e)
        if moved is not None:
            passed.setdefault(moved[0], moved[1])
    if not all(k in passed for k in mode.upsert_key):
        return mode.keyed(None)
    return mode.keyed(passed[k] for k in mode.upsert_key)


_NAME = r"(?:`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*))"
_PASS = re.compile(rf"^\s*{_NAME}(?:\s+as\s+{_NAME})?\s*$", re.IGNORECASE)


def passes_on(e: Expr) -> tuple[str, str] | None:
    """``(input column, output name)`` when ``e`` is a column passed on as it is (``k``, ``k AS x``)."""
    if isinstance(e, Col):
        return e.name, e.name
    if isinstance(e, Sql):
        m = _PASS.match(e.text)
        if m:
            source = m.group(1) or m.group(2)
            return source, (m.group(3) or m.group(4) or source)
    return None


def describe_modes(plan: Iterable[Any]) -> dict[int, str]:
    """Each node's changelog mode, described, by ``id(node)`` (for ``explain()``); empty when no node
    is updating (an insert-only plan says nothing of changelogs)."""
    every = list(plan)
    if not any(is_updating(x) for x in every):
        return {}
    return {id(x): changelog_mode(x).describe() for x in every}
