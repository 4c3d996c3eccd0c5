"""Flink SQL's ``DROP [TEMPORARY] TABLE | VIEW [IF EXISTS] name`` and the Table API's ``drop_table``,
``drop_view``, ``drop_temporary_table`` and ``drop_temporary_view``, by Flink's rules.

Flink keeps temporary objects (``CREATE TEMPORARY TABLE``, ``CREATE TEMPORARY VIEW``,
``create_temporary_view``) apart from permanent ones (``CREATE TABLE``, ``CREATE VIEW``): ``DROP TABLE``
drops a permanent table and ``DROP TEMPORARY TABLE`` a temporary one; a view is dropped as a view. A drop
of the other kind, or of a temporary object as a permanent one, is refused, as Flink refuses it, even with
``IF EXISTS``; ``IF EXISTS`` keeps only a missing object from being an error.

Flink expands a view's query each time it is read: after a table or view under it is dropped, reading the
view fails ("not found"), and once one of the name is created again the view reads the new one. funke
plans a view when it is created; ``stale_views`` finds the views a drop leaves behind (those whose query
names the dropped object, or such a view), and the environment plans them again when they are next read,
which is Flink's answer either way. A view made from a Table (``create_temporary_view``) holds its
resolved query, in Flink as here, and is not planned again.

>>> sorted(stale_views({"v1": {"a"}, "v2": {"v1"}, "v3": {"b"}}, {"a"}))
['v1', 'v2']
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from sqlglot import exp

from funke.errors import PlanError, UnsupportedError
from funke.table.namespace import DEFAULT_CATALOG, DEFAULT_DATABASE, check, object_name


@dataclass(frozen=True)
class Drop:
    """What one DROP statement (or Table API call) drops."""

    kind: str  # "TABLE" or "VIEW"
    name: str
    temporary: bool
    if_exists: bool

    @property
    def what(self) -> str:
        return f"DROP {'TEMPORARY ' if self.temporary else ''}{self.kind} {self.name}"

    def refusal(self, exists: bool, temporary: bool) -> PlanError | None:
        """Flink's error for this drop of an object that ``exists`` as this kind (a ``temporary`` one, or not), or None
        when it drops (or is a drop ``IF EXISTS`` of nothing)."""
        identifier = f"{DEFAULT_CATALOG}.{DEFAULT_DATABASE}.{self.name}"
        if exists and temporary != self.temporary:
            if self.temporary:
                return PlanError(f"Flink SQL: {self.what}: temporary table or view with identifier '{identifier}' does not exist "
                                 f"({self.name} is a permanent {self.kind.lower()}: DROP {self.kind} {self.name})")  # fmt: skip
            return PlanError(f"Flink SQL: {self.what}: temporary {self.kind.lower()} with identifier '{identifier}' exists; "
                             f"drop it first before removing the permanent {self.kind.lower()} (DROP TEMPORARY {self.kind} {self.name})")  # fmt: skip
        if not exists and not self.if_exists:
            kind = "temporary table or view" if self.temporary else self.kind.lower()
            return PlanError(f"Flink SQL: {self.what}: {kind} with identifier '{identifier}' does not exist")
        return None


def drop_statement(statement: exp.Drop, where: str) -> Drop:
    """The drop of ``DROP [TEMPORARY] TABLE | VIEW [IF EXISTS] name``; a drop of anything else refused, naming it."""
    kind = (statement.args.get("kind") or "").upper()
    tables = statement.args.get("tables") or []
    if kind in ("DATABASE", "SCHEMA"):
        check(None, tables[0].name if tables else "?", f"DROP {kind} (at {where})")
        raise PlanError(f"Flink SQL: DROP {kind} (at {where}): the default database cannot be dropped")
    if kind not in ("TABLE", "VIEW") or len(tables) != 1:
        what = f"DROP {kind}" if kind not in ("TABLE", "VIEW") else f"DROP {kind} of {len(tables)} names"
        raise UnsupportedError(f"Flink SQL: {what} (at {where}) is not supported by funke; it drops one table or view: DROP [TEMPORARY] TABLE | VIEW [IF EXISTS] name")
    name = object_name(tables[0], f"DROP {kind} {tables[0].sql()} (at {where})")
    return Drop(kind, name, bool(statement.args.get("temporary")), bool(statement.args.get("exists")))


def is_temporary(create: exp.Create) -> bool:
    """Whether a CREATE statement says TEMPORARY."""
    props = create.args.get("properties")
    return props is not None and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions)


def api_drop(kind: str, path: str, *, temporary: bool, if_exists: bool) -> Drop:
    """The drop of a Table API call (``drop_temporary_view("v")``, ``drop_table("default_catalog.default_database.t")``)."""
    table = exp.to_table(path)
    return Drop(kind, object_name(table, f"drop_{'temporary_' if temporary else ''}{kind.lower()}({path!r})"), temporary, if_exists)


def named(query: exp.Expression) -> set[str]:
    """The tables and views a query's text names (a CTE's name too: a drop of that name plans it again, harmlessly)."""
    return {t.name for t in query.find_all(exp.Table) if t.name}


def stale_views(names: Mapping[str, Collection[str]], dropped: Collection[str]) -> set[str]:
    """The views (of ``names``: each view's named tables and views) that name one of ``dropped``, or such a view."""
    stale: set[str] = set()
    gone = set(dropped)
    while True:
        more = {v for v, uses in names.items() if v not in stale and gone & set(uses)}
        if not more:
            return stale
        stale |= more
        gone |= more
