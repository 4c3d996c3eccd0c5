"""A COLLECT column read through a subquery, a WITH query or a view: funke keeps Flink's MULTISET as a MAP of
each value to its count, and Spark's functions over that column would read the MAP (``CARDINALITY`` counting
distinct values, ``m['x']`` a count, where Flink's planner fails on both). As over ``COLLECT(x)`` itself
(``funke.table.aggregate_lowering``), the column runs selected as it is (printed ``{a=2, b=1}``, collected as a
dict); anything over it is refused, naming what, before the query is planned.

The MULTISET columns of what a SELECT reads are found as DESCRIBE finds a view's types
(``funke.table.describe.view_columns``): a subquery's or WITH query's from its text, a view's from what the
environment kept of its query.

>>> from funke.dialect.syntax import parse
>>> sql = "SELECT k, CARDINALITY(m) FROM (SELECT k, COLLECT(v) AS m FROM t GROUP BY k)"
>>> refuse_multiset_functions(parse(sql, frozenset()), sql, lambda name: None)
Traceback (most recent call last):
...
funke.errors.UnsupportedError: Flink SQL: CARDINALITY(m) (at line 1, column 23) over the MULTISET column m (a COLLECT read through a subquery or view) is not supported by funke: funke keeps a MULTISET as a MAP of each value to its count, which CARDINALITY would read as a MAP, not as Flink's MULTISET; select the column as it is (printed {a=2, b=1}), or compute over the values before COLLECT
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlglot import exp

from funke.dialect.syntax import Flink, position
from funke.errors import UnsupportedError
from funke.table.describe import view_columns

Known = Callable[[str], Mapping[str, tuple[str, bool]] | None]


def refuse_multiset_functions(tree: exp.Expression, sql: str, known: Known) -> None:
    """Refuse, in every SELECT of ``tree``, an expression, WHERE, GROUP BY, ORDER BY or join condition over a
    MULTISET column of what it reads; ``known`` gives a view's or table's known columns (None: none known)."""
    ctes = {cte.alias: cte.this for w in tree.find_all(exp.With) for cte in w.expressions}

    def columns(query: exp.Expression) -> Mapping[str, tuple[str, bool]]:
        if isinstance(query, exp.SetOperation):  # (UNION ALL and the like: the first query's names)
            return columns(query.this)
        return view_columns(query, source)

    def source(name: str) -> Mapping[str, tuple[str, bool]] | None:
        return columns(ctes[name]) if name in ctes else known(name)

    for select in tree.find_all(exp.Select):
        multisets = _multisets(select, columns, source)
        if not multisets:
            continue
        for column in _own_columns(select):
            name = column.name
            multiset = name in multisets.get(column.table, ()) or (not column.table and any(name in m for m in multisets.values()))
            if multiset and not _as_it_is(column, select):
                raise UnsupportedError(_message(column, sql))


def _multisets(select: exp.Select, columns: Callable[[exp.Expression], Mapping[str, tuple[str, bool]]], source: Known) -> dict[str, set[str]]:
    """The MULTISET columns of each relation ``select`` reads, by its name or alias."""
    from_ = select.args.get("from_") or select.args.get("from")
    relations = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    out: dict[str, set[str]] = {}
    for r in relations:
        if isinstance(r, exp.Subquery):
            found = columns(r.this)
        elif isinstance(r, exp.Table) and isinstance(r.this, exp.Identifier):
            found = source(r.name) or {}
        else:
            continue
        names = {c for c, (kind, _) in found.items() if kind.startswith("MULTISET<")}
        if names:
            out[r.alias_or_name] = names
    return out


def _own_columns(select: exp.Select) -> list[exp.Column]:
    """The columns of ``select`` itself, not of the queries nested in it (they read their own relations)."""
    nested = (exp.Subquery, exp.Select, exp.SetOperation)
    return [n for n in select.walk(prune=lambda n: n is not select and isinstance(n, nested)) if isinstance(n, exp.Column) and n.find_ancestor(*nested) is select]


def _as_it_is(column: exp.Column, select: exp.Select) -> bool:
    """Whether ``column`` is an item of ``select``'s list as it is (``m`` or ``m AS n``)."""
    item = column.parent if isinstance(column.parent, exp.Alias) else column
    return item.parent is select and item.arg_key == "expressions"


def _message(column: exp.Column, sql: str) -> str:
    over = column.parent
    assert over is not None
    if isinstance(over, exp.Alias):  # (``m AS n`` in an ORDER BY's or GROUP BY's reach: what holds it)
        over = over.parent or over
    text = over.sql(dialect=Flink).replace(" AS TEXT)", " AS STRING)")  # (sqlglot writes Flink's STRING as TEXT)
    if isinstance(over, exp.Anonymous):
        what, name = text, over.name.upper()
    elif isinstance(over, exp.Func):
        what, name = text, over.sql_name()
    elif isinstance(over, (exp.Group, exp.Order, exp.Ordered, exp.Window)):
        name = {exp.Group: "GROUP BY", exp.Window: "PARTITION BY"}.get(type(over), "ORDER BY")
        what = f"{name} {column.name}"
    else:
        what = name = text
    return (
        f"Flink SQL: {what} (at {position(column, sql)}) over the MULTISET column {column.name} (a COLLECT read through a "
        f"subquery or view) is not supported by funke: funke keeps a MULTISET as a MAP of each value to its count, which "
        f"{name} would read as a MAP, not as Flink's MULTISET; select the column as it is (printed {{a=2, b=1}}), or "
        "compute over the values before COLLECT"
    )
