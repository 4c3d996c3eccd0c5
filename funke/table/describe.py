"""Flink SQL's ``DESCRIBE t`` (``DESC t``, ``SHOW COLUMNS FROM t [[NOT] LIKE ...]``): a row per column with
Flink's six columns, ``name``, ``type``, ``null``, ``key``, ``extras`` and ``watermark``.

For a table of ``CREATE TABLE`` each row is what the statement declared, written as Flink writes it back:
the type with its defaults (``DECIMAL(10, 0)``, ``TIMESTAMP(6)``) and ``*ROWTIME*`` on the watermark's
column, ``*PROCTIME*`` on a ``PROCTIME()`` column; ``null`` FALSE for a ``NOT NULL`` or primary-key column;
``key`` ``PRI(k1, k2)``; ``extras`` a computed column's ``AS expression``; ``watermark`` the watermark's
expression. A view's (or a Table API table's) columns have its query's types, its time attributes marked
too (of precision 3, as Flink's: ``TIMESTAMP(3) *ROWTIME*``), and the Flink type and NOT NULL that
``funke.table.flink_schema`` finds while planning (checked against PyFlink 2.3's: a literal's ``CHAR(n)``, a
COUNT, a window's bounds, a comparison or function of NOT NULL values, a GROUP BY's aggregates, an outer
join's padded side, ...). Where it has no rule funke says TRUE, where Flink's fuller inference may say FALSE.

>>> from funke.dialect.syntax import parse
>>> never_null(parse("SELECT k || 'x'", frozenset()).selects[0], {"k"}), never_null(parse("SELECT v + 1", frozenset()).selects[0], {"k"})
(True, False)
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from typing import Any

from sqlglot import exp

from funke.dialect.functions import BUILTINS, REFUSED
from funke.dialect.syntax import Collect, TableArg, WindowTvf
from funke.errors import PlanError, UnsupportedError
from funke.plan.nodes import Node
from funke.plan.types import Schema, split_top_level
from funke.table.data_types import flink_name
from funke.table.ddl import TableDef, flink_sql
from funke.table.flink_schema import infer, join_columns, plainly_grouped, union_columns, values_columns
from funke.table.lowering import item_name
from funke.table.planner import is_proctime

#: COLLECT's type in ``view_columns``: ``MULTISET<?>`` (``?`` the element's Flink type, from the MAP funke keeps it as).
_MULTISET = "MULTISET<"
#: DESCRIBE's columns, as Flink names them.
COLUMNS = ["name", "type", "null", "key", "extras", "watermark"]

_WINDOW_BOUNDS = frozenset({"window_start", "window_end", "window_time"})


def table_rows(t: TableDef, schema: Schema | None, statement: str) -> list[list[Any]]:
    """DESCRIBE's rows for a ``CREATE TABLE`` table, in the order declared; ``schema``: the stream it is read as (its
    computed columns' types), None for a table with none, or one only written."""
    if t.computed and schema is None:
        raise UnsupportedError(f"Flink SQL: {statement}: the computed columns of table {t.name} ({t.connector}), which is only written, have no types in funke")
    types = {f.name: f.dtype for f in schema.fields} if schema is not None else {}
    proctime = {c for c, formula in t.computed if is_proctime(formula)}
    key = f"PRI({', '.join(t.primary_key)})" if t.primary_key else None
    watermark = t.watermark[0] if t.watermark else None
    rows: dict[str, list[Any]] = {}
    for (name, _), declared in zip(t.columns, t.declared, strict=True):
        rowtime = " *ROWTIME*" if name == watermark else ""
        rows[name] = [name, declared + rowtime, name not in t.not_null, _key(name, t.primary_key, key), None,
                      t.watermark_sql if name == watermark else None]  # fmt: skip
    for m in t.metadata:
        rowtime = " *ROWTIME*" if m.name == watermark else ""
        rows[m.name] = [m.name, m.declared + rowtime, m.name not in t.not_null, None, m.sql, t.watermark_sql if m.name == watermark else None]
    for name, formula in t.computed:
        kind = "TIMESTAMP_LTZ(3) *PROCTIME*" if name in proctime else _flink_type(types[name])
        rows[name] = [name, kind, not (name in proctime or never_null(formula, t.not_null)), _key(name, t.primary_key, key),
                      f"AS {flink_sql(formula)}", None]  # fmt: skip
    return [rows[name] for name in t.names]


def _key(name: str, primary_key: tuple[str, ...], key: str | None) -> str | None:
    return key if name in primary_key else None


def view_rows(schema: Schema, known: Mapping[str, tuple[str, bool]], node: Node | None, statement: str) -> list[list[Any]]:
    """DESCRIBE's rows for a view: its columns, those whose Flink type and nullability are known
    (``view_columns``), its time attributes (``node``'s; Flink's are of precision 3)."""
    if unknown := [f.name for f in schema.fields if f.dtype is None and not known.get(f.name, ("",))[0]]:
        raise UnsupportedError(f"Flink SQL: {statement}: funke does not know the type of the column {unknown[0]} before it runs; CAST it in the view")
    rowtime, proctime = (node.event_time, node.proc_time) if node is not None else (None, None)

    def kind(name: str, spark: str | None) -> str:
        if name == rowtime:
            return "TIMESTAMP(3) *ROWTIME*"
        if name == proctime:
            return "TIMESTAMP_LTZ(3) *PROCTIME*"
        given = known.get(name, ("",))[0]
        if given.startswith(_MULTISET) and spark is not None and spark.startswith("map<"):  # (COLLECT's: its element's type)
            return given.replace("?", _flink_type(split_top_level(spark[4:-1])[0]), 1)
        return given or _flink_type(spark)

    return [[f.name, kind(f.name, f.dtype), not (f.name in known and known[f.name][1]) and f.name != proctime, None, None, None]
            for f in schema.fields]  # fmt: skip


def unknown_table(name: str, statement: str, names: Collection[str]) -> PlanError:
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return PlanError(f"Flink SQL: {statement}: no table or view named {name!r}{hint}; tables and views: {', '.join(sorted(names)) or 'none'}")


def table_columns(rows: list[list[Any]]) -> dict[str, tuple[str, bool]]:
    """A table's columns (DESCRIBE's ``rows``) as ``view_columns`` reads them: (type without a time marker, NOT NULL)."""
    return {r[0]: (r[1].split(" *")[0], not r[2]) for r in rows}


def _flink_type(kind: str | None) -> str:
    if kind is None:
        return "NULL"  # (a computed column of NULL alone)
    return flink_name(kind, summary=True)


def never_null(e: exp.Expression, not_null: Collection[str]) -> bool:
    """Whether Flink surely types ``e`` NOT NULL, its columns ``not_null`` known NOT NULL (``funke.table.flink_schema``)."""
    return infer(e, {c: ("", True) for c in not_null})[1]


def view_columns(query: exp.Expression, source: Callable[[str], Mapping[str, tuple[str, bool]] | None]) -> dict[str, tuple[str, bool]]:
    """The output columns of ``query`` (a view's) whose Flink type or NOT NULL is known (``funke.table.flink_schema``):
    over one table, view, WITH query, subquery or ``VALUES`` (``source`` gives a table's or view's columns, None if
    they are not known), or a UNION of such queries; a window TVF's bounds are NOT NULL TIMESTAMP(3)s."""
    ctes = {cte.alias: cte.this for cte in (query.args.get("with_") or query.args.get("with") or exp.With()).expressions}
    if ctes:
        outer = source

        def source(name: str) -> Mapping[str, tuple[str, bool]] | None:
            return view_columns(ctes[name], outer) if name in ctes else outer(name)

    if isinstance(query, exp.Union):
        left, right = query.this, query.expression
        return union_columns(view_columns(left, source), view_columns(right, source), _names(left), _names(right))
    if not isinstance(query, exp.Select):
        return {}
    from_ = query.args.get("from_") or query.args.get("from")
    columns = _relation(from_.this, source) if from_ is not None else {}
    if joins := query.args.get("joins"):
        relations = [(from_.this.alias_or_name, columns, any(j.side in ("RIGHT", "FULL") for j in joins))]
        for j in joins:
            later = [k for k in joins[joins.index(j) + 1 :] if k.side in ("RIGHT", "FULL")]
            relations.append((j.this.alias_or_name, _relation(j.this, source), j.side in ("LEFT", "FULL") or bool(later)))
        columns = join_columns(relations)
    if any(isinstance(s, exp.Star) for s in query.selects):
        return {} if joins else columns
    grouped = plainly_grouped(query)
    # (ROLLUP, CUBE, GROUPING SETS: a key a group leaves out is NULL there; of the rest funke says only COUNT's)
    sets = query.args.get("group") is not None and not grouped
    out: dict[str, tuple[str, bool]] = {}
    for i, s in enumerate(query.selects):
        e, name = s.unalias(), item_name(s, i)
        if isinstance(e.this if isinstance(e, exp.Filter) else e, Collect):  # (a MULTISET, never NULL)
            value = (e.this if isinstance(e, exp.Filter) else e).this
            value = value.expressions[0] if isinstance(value, exp.Distinct) else value
            element, never = infer(value, columns)
            out[name] = (f"{_MULTISET}{element or '?'}{' NOT NULL' if never else ''}>", True)
            continue
        kind, never = infer(e, columns, grouped)
        if kind or never:
            out[name] = (kind, never and (not sets or isinstance(e, exp.Count)))
    return out


def _relation(table: exp.Expression, source: Callable[[str], Mapping[str, tuple[str, bool]] | None]) -> dict[str, tuple[str, bool]]:
    """The known columns of what a FROM or JOIN reads: a table or view, a window TVF over one (its bounds NOT
    NULL TIMESTAMP(3)s), a subquery, ``VALUES``; none for anything else."""
    columns: dict[str, tuple[str, bool]] = {}
    tvf = table.find(WindowTvf) if isinstance(table, exp.Table) else None
    if tvf is not None and isinstance(tvf.expressions[0], TableArg):  # (a window TVF over a table: its columns and bounds)
        columns.update(source(tvf.expressions[0].this.name) or {})
        columns.update({b: ("TIMESTAMP(3)", True) for b in _WINDOW_BOUNDS})
    elif isinstance(table, exp.Table) and table.name:
        columns.update(source(table.name) or {})
    elif isinstance(table, exp.Subquery):  # (a subquery's columns as a view's: a COLLECT's MULTISET, a COUNT's BIGINT)
        columns.update(view_columns(table.this, source))
    elif isinstance(table, exp.Values):
        columns.update(values_columns(table))
    return columns


def _names(query: exp.Expression) -> list[str]:
    """The output names of a UNION's query (its first query's, for a UNION of UNIONs)."""
    while isinstance(query, exp.SetOperation):
        query = query.this
    return [item_name(s, i) for i, s in enumerate(query.selects)] if isinstance(query, exp.Select) else []


def function_names(user: Collection[str]) -> list[str]:
    """``SHOW FUNCTIONS``: the built-in functions funke runs (upper case; none it refuses) and the user's (lower
    case, as Flink lists them), in Flink's order (by code point)."""
    builtins = {n for b in BUILTINS.values() if b.status != REFUSED for n in b.names if n.replace("_", "").isalnum()}
    return sorted({*builtins, *user})
