"""Joins of more than two relations, and queries that aggregate, rank or deduplicate joined rows, as
queries over a join of two: ``JoinViews``, methods of ``funke.table.planner.Planner``.

* ``FROM a JOIN b ON ... JOIN c ON ...`` (or ``FROM a, b, c WHERE ...``) is a chain of joins, each the
  left input of the next, as Flink's planner joins them: the join of all relations but the last becomes
  a hidden view with every column under its own name, and the query joins that view with the last
  relation (``_chained``). Each join of the chain may be updating (an outer join, or one over an
  updating relation): the next retracts what it takes back.
* A query whose GROUP BY, aggregates or ROW_NUMBER read joined rows (``SELECT a.k, MAX(b.v) FROM a JOIN b
  ON ... GROUP BY a.k``, a Top-N over a join) reads the whole join as a hidden view (``_over_join``).

In both, every column reference of the query (``a.x``, or ``x`` where one relation has it) is
rewritten to the view's column, a column of the SELECT list keeping its name.

Conditions in WHERE on the view's relations alone are applied inside the view where that is the
same (every later join inner or LEFT: no later join pads the view's side with NULLs); the ON of a
join stays with it.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from funke.connectors.tables import StaticTable
from funke.errors import PlanError
from funke.plan.types import Schema
from funke.table.changelog import ROW_KIND
from funke.table.join_lowering import numbered
from funke.table.lowering import conjuncts

#: The alias the view of the joined relations takes in the query reading it.
_VIEW = "_fk_joined"


class JoinViews:
    """``Planner``'s methods for chains of joins and queries over joined rows. They use the planner's
    ``_source``, ``_windowed``, ``_table``, ``_join``, ``_hide``, ``refuse``, ``at`` and ``views``."""

    def _chained(self, query: exp.Select) -> exp.Select:
        """``FROM r0 JOIN r1 ... JOIN rn``: the join of ``r0 .. r(n-1)`` as a view, joined with ``rn``."""
        joins = query.args["joins"]
        *first, last = joins
        rels = self._named_relations(query)
        inner = [name for name, _ in rels[:-1]]
        terms = conjuncts(query.args["where"].this) if query.args.get("where") else []
        pushable = last.side in ("", "LEFT") and last.kind not in ("SEMI", "ANTI")
        resolve = _Resolver(self, rels)
        pushed = [t for t in terms if pushable and resolve.relations(t) and resolve.relations(t) <= set(inner)]
        rest = [t for t in terms if not any(t is p for p in pushed)]
        view, mapping = self._join_view(query.args["from_"].this, first, pushed, rels[:-1])
        out = query.copy()
        out.set("with_", None)
        out.set(
            "from_", exp.From(this=exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(_VIEW))))
        )
        out.set("joins", [out.args["joins"][-1]])
        out.set("where", exp.Where(this=exp.and_(*(t.copy() for t in rest))) if rest else None)
        resolve.rewrite(out, mapping, keep=rels[-1][0])
        return out

    def _over_join(self, query: exp.Select) -> exp.Select:
        """``query`` (with joins) reading the whole join as one relation, a view: its GROUP BY, aggregates,
        HAVING and OVER windows then read the view's columns."""
        for rel in (query.args["from_"].this, *(j.this for j in query.args["joins"])):
            if self._windowed(rel, lower=False):
                raise self.refuse(
                    rel, "an aggregation or Top-N over a window join", "aggregate the window join's rows in a query over it"
                )
        rels = self._named_relations(query)
        terms = conjuncts(query.args["where"].this) if query.args.get("where") else []
        view, mapping = self._join_view(query.args["from_"].this, query.args["joins"], terms, rels)
        out = query.copy()
        out.set("with_", None)
        out.set(
            "from_", exp.From(this=exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(_VIEW))))
        )
        out.set("joins", None)
        out.set("where", None)
        _Resolver(self, rels).rewrite(out, mapping, keep=None)
        return out

    def _named_relations(self, query: exp.Select) -> list[tuple[str, Schema]]:
        """The query's relations in join order with their names and columns. Each view or subquery is
        lowered once here and read through a hidden view of the same alias (the query's node replaced),
        so the joins below read the same stream; a static table or window TVF stays as it is."""
        out = []
        for rel in (query.args["from_"].this, *(j.this for j in query.args["joins"])):
            name = rel.alias_or_name
            if not name:
                raise PlanError(f"Flink SQL: name the relation at {self.at(rel)} in this join (AS x)")
            if any(name == other for other, _ in out):
                raise PlanError(f"Flink SQL: two relations of the join at {self.at(rel)} are named {name!r}: give one an alias")
            static = self._table(rel) if isinstance(rel, exp.Table) and isinstance(rel.this, exp.Identifier) else None
            if isinstance(static, StaticTable):
                out.append((name, static.schema))
                continue
            if rel.args.get("version") is not None:
                raise self.refuse(
                    rel,
                    "FOR SYSTEM_TIME AS OF a view (a temporal join)",
                    "a lookup join reads a static table: create_temporary_view(name, fk.table(...))",
                )
            if self._windowed(rel, lower=False):
                raise self.refuse(
                    rel, "a window TVF in a join of more than two relations", "join two window TVFs, then the result"
                )
            stream, _ = self._source(rel)
            hidden = self._hide()
            self.views = {**self.views, hidden: lambda stream=stream: stream}
            rel.replace(exp.Table(this=exp.to_identifier(hidden), alias=exp.TableAlias(this=exp.to_identifier(name))))
            out.append((name, stream.schema.without((ROW_KIND,))))
        return out

    def _join_view(
        self, source: exp.Expression, joins: list[exp.Join], terms: list[exp.Expression], rels: list[tuple[str, Schema]]
    ) -> tuple[str, dict[tuple[str, str], str]]:
        """The join of ``source`` and ``joins`` (conditions ``terms`` in its WHERE) with every column of
        ``rels`` under a name of its own, as a hidden view: the view's name and each (relation, column)'s
        name in it."""
        mapping = {(name, c): self._hide() for name, schema in rels for c in schema.names}
        items = [exp.alias_(exp.column(c, table=name, quoted=True), u, quoted=True) for (name, c), u in mapping.items()]
        select = exp.Select(expressions=items)
        select.set("from_", exp.From(this=source.copy()))
        select.set("joins", [j.copy() for j in joins])
        if terms:
            select.set("where", exp.Where(this=exp.and_(*(t.copy() for t in terms))))
        stream = self._join(select)
        view = self._hide()
        self.views = {**self.views, view: lambda: stream}
        return view, mapping


class _Resolver:
    """Which relation of a join each column of a query is, and the query rewritten over the view."""

    def __init__(self, planner: Any, rels: list[tuple[str, Schema]]) -> None:
        self.planner, self.rels = planner, dict(rels)

    def relation(self, column: exp.Column) -> str:
        if column.table:
            if column.table not in self.rels:
                raise PlanError(
                    f"Flink SQL: no relation {column.table!r} in this join (at {self.planner.at(column)}); it joins {', '.join(self.rels)}"
                )
            self.rels[column.table].field(column.name, node=f"{column.table}.{column.name} at {self.planner.at(column)}")
            return column.table
        on = [name for name, schema in self.rels.items() if column.name in schema]
        if len(on) > 1:
            raise PlanError(
                f"Flink SQL: {' and '.join(on)} have a column {column.name!r} (at {self.planner.at(column)}): say which, "
                + " or ".join(f"{r}.{column.name}" for r in on)
            )
        if not on:
            raise PlanError(f"Flink SQL: no relation of the join has a column {column.name!r} (at {self.planner.at(column)})")
        return on[0]

    def relations(self, e: exp.Expression) -> set[str]:
        return {self.relation(c) for c in e.find_all(exp.Column) if not isinstance(c.this, exp.Star)}

    def rewrite(self, query: exp.Select, mapping: dict[tuple[str, str], str], *, keep: str | None) -> None:
        """Every column reference of ``query`` (not of its subqueries) to a relation in the view as the
        view's column; those of ``keep`` (the relation joined with the view) as they are. A column of
        the SELECT list keeps its name; ``*`` and ``r.*`` of the view's relations become their columns."""
        in_view = {name for name, _ in mapping}
        items: list[exp.Expression] = []
        seen: set[str] = set()
        for e in query.expressions:
            star = isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            if star:
                table = e.table if isinstance(e, exp.Column) else ""
                for name in [table] if table else list(self.rels):
                    if name not in self.rels:
                        raise PlanError(f"Flink SQL: no relation {name!r} in this join (at {self.planner.at(e)})")
                    if name == keep:
                        items.append(exp.Column(this=exp.Star(), table=exp.to_identifier(name)))
                        continue
                    for c in self.rels[name].names:
                        items.append(exp.alias_(exp.column(c, table=name, quoted=True), numbered(c, seen), quoted=True))
                continue
            if isinstance(e, exp.Column):
                e = exp.alias_(e.copy(), numbered(e.name, seen), quoted=True)
            elif isinstance(e, exp.Alias):
                seen.add(e.alias)
            items.append(e)
        query.set("expressions", items)

        def swap(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star) and n.find_ancestor(exp.Select) is query:
                name = self.relation(n)
                if name in in_view:  # (qualified where another relation is joined with the view)
                    return exp.column(mapping[(name, n.name)], table=_VIEW if keep else None, quoted=True)
            return n

        query.transform(swap, copy=False)
