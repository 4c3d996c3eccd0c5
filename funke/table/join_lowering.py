"""The lowering of Flink SQL's joins, ``FROM a JOIN b ON ...`` (or ``FROM a, b WHERE ...``), onto
DataStream operations: ``JoinLowering``, the methods of ``funke.table.planner.Planner`` that lower them.

* an inner interval join: key equalities and both time attributes bounded against each other, in
  ``ON`` or ``WHERE``: ``key_by(keys).interval_join(key_by(keys)).between(...)`` (``funke.api.joins``);
* a regular join, inner or outer: keys without both time bounds (``funke.table.joins``; an outer one
  is an updating result);
* a window join, inner or outer, of two window TVFs of the same windows (``funke.table.rank.PairRows``,
  ``OuterPairRows``);
* a lookup join of a stream with a static table (``create_temporary_view(name, fk.table(...))``).

The join's two sides may have columns of one name: ``_JoinColumns`` gives each an internal name and
reads the conditions and the SELECT list over them; ``_Bounds`` reads an interval join's time bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from funke.connectors.tables import StaticTable
from funke.dialect.date_arithmetic import interval_ms
from funke.errors import PlanError
from funke.plan.types import Field, Schema
from funke.table.changelog import DELETE, INSERT, ROW_KIND, UPDATE_BEFORE, changelog_mode, state_mode
from funke.table.joins import RegularJoin
from funke.table.lowering import (
    WINDOW_END,
    WINDOW_START,
    WINDOW_TIME,
    SplitCondition,
    conjuncts,
    is_updating,
    keys_known,
    kind_first,
)
from funke.table.namespace import object_name
from funke.table.pair_condition import PairCondition
from funke.table.rank import OuterPairRows, PairRows
from funke.table.temporal_join import TemporalJoin
from funke.table.upsert import versions

if TYPE_CHECKING:
    from funke.table.from_lowering import Tvf
    from funke.table.planner import Planner


class JoinLowering:
    """``Planner``'s join methods (``class Planner(JoinLowering)``); ``Planner.lower`` calls ``_join``.
    They use the planner's own methods (``refuse``, ``at``, ``spark_sql``, ``typed_sql``, ``_source``,
    ``_tvf_rows``, ``_hide``, ``_insert_only``, ``_known_types``, ``_no_refused_parts``) and read its
    ``views`` and ``state_ttl_ms``."""

    def _join(self, query: exp.Select) -> Any:
        """``FROM a [AS l] JOIN b [AS r] ON ...`` (or ``FROM a, b WHERE ...``) with equality of keys and
        both time attributes bounded against each other (``l.ts BETWEEN r.ts - INTERVAL ... AND r.ts``):
        Flink's interval join, ``key_by(l keys).interval_join(key_by(r keys)).between(...)``; conditions
        on anything else filter the joined rows. Late rows are dropped, as Flink SQL does."""
        joins = query.args["joins"]
        if len(joins) > 1:
            return self._join(self._chained(query))
        join = joins[0]
        if isinstance(join.this, exp.Table) and isinstance(join.this.this, exp.Identifier):
            name = object_name(join.this, f"{join.this.sql()} (at {self.at(join.this)})")
            if join.this.args.get("version") is not None and name in self.lookups:  # (a filesystem table, looked up)
                return self._lookup_join(query, join, self.lookups[name]())
            if isinstance(table := self._table(join.this), StaticTable):
                return self._lookup_join(query, join, table)
        if join.this.args.get("version") is not None:
            return self._temporal_join(query, join)
        rels = (query.args["from_"].this, join.this)
        windowed = [self._windowed(rel) for rel in rels]
        if any(w is not None for w in windowed):
            return self._window_join(query, join, windowed)
        outer = self._outer_sides(
            join, ("", "INNER", "CROSS", "OUTER"), "JOIN", "inner joins and LEFT, RIGHT and FULL regular joins run"
        )
        self._plain_join_query(query)
        sides = []
        for rel in rels:
            stream, tvf = self._source(rel)
            if tvf is not None:
                raise self.refuse(rel, "a join of a window TVF with a relation that is not one")
            sides.append((rel.alias_or_name, stream))
        (ln, left), (rn, right) = sides
        if ln == rn:
            raise PlanError(f"Flink SQL: both sides of the join at {self.at(join)} are named {ln!r}: give one an alias")
        columns = _JoinColumns(self, ln, left.schema, rn, right.schema)
        terms = _join_terms(query, join)
        keys: list[tuple[str, str]] = []
        bounds = _Bounds()
        rest = []
        times = (left.node.event_time, right.node.event_time)
        for t in terms:
            pair = columns.key_pair(t)
            if pair is not None and times not in (pair, pair[::-1]):
                keys.append(pair)
            elif not bounds.take(t, columns, times):
                rest.append(t)
        if not keys:
            raise self.refuse(join, "a join without an equality of the two sides' columns", "a join needs keys: ON l.k = r.k")
        if any(outer) and bounds.complete():
            raise self.refuse(
                join, f"a {join.side} interval join", "an inner interval join runs, and LEFT, RIGHT and FULL regular joins"
            )
        if not bounds.complete():  # a regular join; time conditions, if any, filter its pairs
            rest = [t for t in terms if (pair := columns.key_pair(t)) is None or pair in (times, times[::-1])]
            on: list[SplitCondition] = []
            if any(outer):  # (ON decides which rows pair up, the join's condition besides its keys; WHERE filters the result)
                on, rest = self._split_on(join, columns, rest, lambda t: columns.key_pair(t) in (None, times, times[::-1]))
            regular = self._regular_join(left, right, keys, columns, outer, on)
            return columns.finish(regular, rest, query.expressions)
        for rel, (_, stream) in zip(rels, sides, strict=True):
            self._insert_only(stream, rel, "an interval join")
        joined = left.key_by([k for k, _ in keys]).interval_join(right.key_by([k for _, k in keys]))
        joined = bounds.apply(joined)
        pairs = joined.select(**{internal: f"{side}.{name}" for internal, side, name in columns.all()})
        return columns.finish(pairs, rest, query.expressions)

    def _split_on(
        self, join: exp.Join, columns: _JoinColumns, rest: list[exp.Expression], is_condition: Callable[[exp.Expression], bool]
    ) -> tuple[list[SplitCondition], list[exp.Expression]]:
        """The terms of ``join``'s ``ON`` that ``is_condition`` takes (not its keys), split for the join's
        ``PairCondition``, and ``rest`` without them (they decide which rows pair up, not what the result keeps)."""
        on = [t for t in conjuncts(join.args["on"]) if is_condition(t)] if join.args.get("on") else []
        return [SplitCondition.of(t, columns.side_of, self._hide) for t in on], [r for r in rest if not any(r is t for t in on)]

    def _on_condition(
        self, on: Sequence[SplitCondition], left: Any, right: Any, where: str
    ) -> tuple[Any, Any, PairCondition | None]:
        """An outer join's ``ON`` conditions besides its keys (``on``) as the join's ``PairCondition`` (None
        without any), and both sides with the hidden columns it reads of them. Those need no type the
        planner knows: the condition reads them, nothing writes them out."""
        if not on:
            return left, right, None
        left, right = (
            SplitCondition.add(on, at, stream, lambda e, schema=stream.schema: self.typed_sql(_bare(e), schema))
            for at, stream in enumerate((left, right))
        )
        return left, right, SplitCondition.pair(self, on, (left.schema, right.schema), where)

    def _outer_sides(self, join: exp.Join, kinds: tuple[str, ...], noun: str, hint: str) -> tuple[bool, bool]:
        """Which sides of ``join`` keep their unmatched rows (LEFT: the first, RIGHT: the second, FULL: both);
        a join of a kind not in ``kinds``, or with USING, is refused as ``a <side> <kind> <noun>``."""
        if join.kind not in kinds or join.args.get("using"):
            what = f"a {' '.join(x for x in (join.side, join.kind) if x)} {noun}" if join.side or join.kind else "JOIN ... USING"
            raise self.refuse(join, what, hint)
        return join.side in ("LEFT", "FULL"), join.side in ("RIGHT", "FULL")

    def _regular_join(
        self, left: Any, right: Any, keys: list[tuple[str, str]], columns: _JoinColumns, outer: tuple[bool, bool],
        on: Sequence[SplitCondition] = (),
    ) -> Any:  # fmt: skip
        """Flink SQL's regular join (``funke.table.joins``): every row of both sides kept (for
        ``table.exec.state.ttl`` when set), each arriving row paired with the other side's of equal keys;
        an outer side's unmatched rows padded with NULLs (an updating result). A row with a NULL key
        matches nothing (SQL's ``=``): an outer side's goes straight out padded, an inner side's nowhere.
        ``on``: an outer join's ``ON`` conditions besides its keys; a pair must meet them too (each side's
        rows carry the hidden columns they read of it)."""
        updating = (is_updating(left), is_updating(right))
        for stream in (left, right):
            self._known_types(stream, "a regular join")
        left, right, condition = self._on_condition(on, left, right, f"the ON of the join of {' and '.join(columns.names)}")
        streams = (left, right)
        mapped, fields = columns.renamed(columns.schemas)
        fn = RegularJoin(list(mapped[0].items()), list(mapped[1].items()), self.state_ttl_ms, outer, updating, condition=condition)
        if fn.updating:
            fields.insert(0, Field(ROW_KIND, "string"))
        schema = Schema(tuple(fields))
        keyed, unmatched = [], []
        for side, names in ((0, [k for k, _ in keys]), (1, [k for _, k in keys])):
            known = keys_known(names)
            keyed.append(streams[side].filter(known).key_by(names))
            if outer[side]:  # (its NULL-keyed rows: padded at once; a retraction of one deletes its padded row)
                kind = f"CASE WHEN `{ROW_KIND}` IN ('{UPDATE_BEFORE}', '{DELETE}') THEN '{DELETE}' ELSE '{INSERT}' END" if updating[side] else f"'{INSERT}'"
                unmatched.append(streams[side].filter(f"NOT ({known})").select(*_padded(mapped[side], schema.fields, kind)))
        out = keyed[0].connect(keyed[1]).process(fn, output_schema=schema, name="RegularJoin")
        joined = out
        for rows in unmatched:
            out = out.union(rows)
        if out is not joined:  # (the padded rows are the join's rows: its changelog mode is the join's)
            state_mode(out.node, changelog_mode(joined.node))
        return out

    def _windowed(self, rel: exp.Expression, *, lower: bool = True) -> tuple[Any, Tvf] | bool | None:
        """A window TVF in FROM, bare (``TABLE(TUMBLE(...)) AS l``) or as ``(SELECT * FROM TABLE(TUMBLE(...)) [WHERE ...]) AS l``:
        its stream (filtered) and TVF (``lower=False``: True, nothing lowered); None for any other relation."""
        inner: exp.Expression = rel
        where = None
        if isinstance(rel, exp.Subquery) and isinstance(rel.this, exp.Select):
            q = rel.this
            star = len(q.expressions) == 1 and isinstance(q.expressions[0], exp.Star)
            extra = [a for a in ("joins", "group", "having", "order", "limit", "with_", "qualify", "distinct") if q.args.get(a)]
            if not star or extra or q.args.get("from_") is None:
                return None
            inner, where = q.args["from_"].this, q.args.get("where")
        if not (isinstance(inner, exp.Table) and isinstance(inner.this, exp.Anonymous) and inner.this.name.upper() == "TABLE"):
            return None
        if not lower:
            return True
        stream, tvf = self._source(inner)
        assert tvf is not None
        return self._tvf_rows(stream, where), tvf

    def _window_join(self, query: exp.Select, join: exp.Join, sides: list[tuple[Any, Tvf] | None]) -> Any:
        """Two window TVFs of the same windows joined ``ON l.window_start = r.window_start AND l.window_end =
        r.window_end AND keys``: Flink's window join, ``l.join(r).where(keys).equal_to(keys).window(assigner)``;
        each window's pairs when the watermark passes its end, late rows dropped. Other conditions filter the pairs."""
        outer = self._outer_sides(join, ("", "INNER", "OUTER"), "window join", "inner, LEFT, RIGHT and FULL window joins run")
        self._plain_join_query(query)
        rels = (query.args["from_"].this, join.this)
        for rel, side in zip(rels, sides, strict=True):
            if side is None:
                raise self.refuse(rel, "a join of a window TVF with a relation that is not one")
        (left, ltvf), (right, rtvf) = sides  # type: ignore[misc]
        if ltvf.kind == "SESSION" or rtvf.kind == "SESSION":
            raise self.refuse(join, "a window join of SESSION windows")
        if ltvf.assigner != rtvf.assigner:
            raise self.refuse(
                join, f"a window join of different windows ({ltvf.assigner.describe()} and {rtvf.assigner.describe()})"
            )
        ln, rn = rels[0].alias_or_name, rels[1].alias_or_name
        if not ln or not rn or ln == rn:
            raise PlanError(f"Flink SQL: name both sides of the window join at {self.at(join)} (AS l, AS r)")
        bounds = (WINDOW_START, WINDOW_END, WINDOW_TIME)
        windowed = [Schema((*sch.fields, *(Field(b, "timestamp") for b in bounds))) for sch in (left.schema, right.schema)]
        columns = _JoinColumns(self, ln, windowed[0], rn, windowed[1])
        terms = _join_terms(query, join)
        keys, same, rest = [], set(), []
        for t in terms:
            pair = columns.key_pair(t)
            if pair is not None and pair[0] == pair[1] and pair[0] in bounds:
                same.add(pair[0])
            elif pair is not None and pair[0] not in bounds and pair[1] not in bounds:
                keys.append(pair)
            else:
                rest.append(t)
        if not {WINDOW_START, WINDOW_END} <= same:
            raise self.refuse(
                join,
                "a join of window TVFs not on both window_start and window_end",
                "ON l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k",
            )
        if not keys:
            raise self.refuse(join, "a window join without an equality of the two sides' columns", "add ON l.k = r.k")
        for side in (0, 1):
            columns.internal[(side, WINDOW_START)], columns.internal[(side, WINDOW_END)] = WINDOW_START, WINDOW_END
        window_time = self._hide()
        for side in (0, 1):
            columns.internal[(side, WINDOW_TIME)] = window_time
        pairs_of, out_fields = columns.renamed((left.schema, right.schema))
        lkeys = [k for k, _ in keys]
        if any(outer):  # Flink's outer window join: a row without a partner in its window, padded with NULLs
            if not join.args.get("on"):
                raise self.refuse(join, f"a {join.side} window join without ON")
            # (the ON's conditions besides the window and the keys decide which rows pair up; WHERE filters the result)
            splits, rest = self._split_on(join, columns, rest, lambda t: columns.key_pair(t) is None)
            for t in (split.written for split in splits):
                if any(c.name in bounds for c in t.find_all(exp.Column)):
                    raise self.refuse(t, f"a condition on the window's columns in the ON of a {join.side} window join", "put it in WHERE")
            left, right, condition = self._on_condition(splits, left, right, f"the ON of the window join of {ln} and {rn}")
            # Keyed by the keys as JSON; a NULL-keyed row by its side alone: it meets nobody and goes out padded.
            # Each side's window columns are NULL where it is padded (a marker column tells).
            key = self._hide()
            grouped, bounds_of = [], []
            for side, stream, names in ((0, left, lkeys), (1, right, [k for _, k in keys])):
                known = keys_known(names)
                fields = ", ".join(f"'{i}', `{k}`" for i, k in enumerate(names))
                marker = self._hide()
                stream = stream.with_column(key, f"CASE WHEN {known} THEN to_json(named_struct({fields})) ELSE '{side}' END")
                grouped.append(stream.with_column(marker, "1 = 1"))
                pairs_of[side][marker] = marker
                out_fields.append(Field(marker, "boolean"))
                bounds_of.append((marker, {b: self._hide() for b in bounds}))
            joined = (
                grouped[0].co_group(grouped[1]).where(key).equal_to(key).window(ltvf.assigner)
                .apply(OuterPairRows(pairs_of[0], pairs_of[1], outer, condition), output_schema=Schema(tuple(out_fields)))
            )  # fmt: skip
            whole = {
                WINDOW_START: f"`{WINDOW_START}`",
                WINDOW_END: f"`{WINDOW_END}`",
                WINDOW_TIME: f"`{WINDOW_END}` - INTERVAL 1 MILLISECOND",
            }
            for side, (marker, names) in enumerate(bounds_of):
                for b, name in names.items():
                    joined = joined.with_column(name, f"CASE WHEN `{marker}` THEN {whole[b]} END")
                    columns.internal[(side, b)] = name
            return columns.finish(joined, rest, query.expressions)
        joined = (
            left.join(right).where(lkeys).equal_to([k for _, k in keys]).window(ltvf.assigner)
            .apply(PairRows(pairs_of[0], pairs_of[1]), output_schema=Schema(tuple(out_fields)))
        )  # fmt: skip
        for k in lkeys:  # (the window join's result has the left keys under their names)
            columns.internal[(0, k)] = k
        joined = joined.with_column(window_time, f"`{WINDOW_END}` - INTERVAL 1 MILLISECOND")
        return columns.finish(joined, rest, query.expressions)

    def _table(self, table: exp.Table) -> Any:
        name = object_name(table, f"{table.sql()} (at {self.at(table)})")
        return self.views[name]() if name in self.views else None

    def _lookup_join(self, query: exp.Select, join: exp.Join, table: StaticTable) -> Any:
        """``FROM s [AS e] [LEFT] JOIN t [FOR SYSTEM_TIME AS OF e.x] [AS c] ON e.k = c.k`` with ``t`` a static
        table (``create_temporary_view(name, fk.table(...))``, a jdbc table, or a filesystem table as of a
        time): Flink's lookup join, each row joined with the table as it is (one version: the AS OF time
        reads nothing). ``stream.join(table, on=keys)``; a key may be an expression of the stream's columns
        (``ON MOD(e.k, 100) = c.k``: computed into a column first); conditions on anything else filter the
        joined rows."""
        if join.kind not in ("", "INNER") or join.side not in ("", "LEFT") or join.args.get("using"):
            raise self.refuse(join, f"a {join.side or join.kind} JOIN with a static table", "INNER and LEFT lookup joins run")
        self._plain_join_query(query)
        rel = query.args["from_"].this
        stream, tvf = self._source(rel)
        if tvf is not None or isinstance(stream, StaticTable):
            raise self.refuse(rel, "a lookup join whose left side is not a stream")
        self._insert_only(stream, rel, "a lookup join")
        ln, rn = rel.alias_or_name, join.this.alias_or_name
        columns = _JoinColumns(self, ln, stream.schema, rn, table.schema, rename=False)
        terms = _join_terms(query, join)
        keys, rest = [], []
        for t in terms:
            pair = columns.key_pair(t)
            if pair is None and (computed := columns.computed_key(t)) is not None:  # (a key expression of the stream's columns)
                stream = stream.with_column(hidden := self._hide(), self.typed_sql(columns.rewrite(computed[0]), stream.schema))
                pair = (hidden, computed[1])
            (keys if pair is not None else rest).append(pair if pair is not None else t)
        if not keys:
            raise self.refuse(join, "a lookup join without an equality of a stream column and a table column", "ON s.k = t.k")
        if join.side == "LEFT" and rest and any(columns.sides_of(t) != {0} for t in rest):
            raise self.refuse(join, "a LEFT lookup join with conditions on the table besides its keys")
        for left_key, table_key in keys:
            if left_key != table_key:
                if table_key in stream.schema:
                    raise PlanError(
                        f"Flink SQL: the lookup join at {self.at(join)} pairs {left_key} with the table's {table_key}, which the stream also has"
                    )
                stream = stream.with_column(table_key, f"`{left_key}`")
        joined = stream.join(table, on=[k for _, k in keys], how=join.side.lower() or "inner")
        for _, table_key in keys:
            columns.internal[(1, table_key)] = table_key
        return columns.finish(joined, rest, query.expressions)

    def _temporal_join(self, query: exp.Select, join: exp.Join) -> Any:
        """``FROM o [LEFT] JOIN r FOR SYSTEM_TIME AS OF o.ts [AS v] ON o.k = v.k [AND ...]``, ``ts`` the left's
        event-time attribute and ``r`` a versioned table (a view with event time: an updating result's rows by
        its upsert key, or insert-only rows, each a version of its join key): Flink's event-time temporal join
        (``funke.table.temporal_join``), insert-only. Conditions besides the keys filter the joined rows; in the
        ON of a LEFT join they decide whether a row meets its version (else it is padded)."""
        outer = self._outer_sides(join, ("", "INNER", "OUTER"), "temporal join", "INNER and LEFT temporal joins run")
        if outer[1]:
            raise self.refuse(join, f"a {join.side} temporal join", "INNER and LEFT temporal joins run")
        self._plain_join_query(query)
        rel, versioned = query.args["from_"].this, join.this
        left, tvf = self._source(rel)
        if tvf is not None:
            raise self.refuse(rel, "a temporal join of a window TVF")
        self._insert_only(left, rel, "the left side of a temporal join")
        ln, rn = rel.alias_or_name, versioned.alias_or_name
        as_of = versioned.args["version"].expression
        if not isinstance(as_of, exp.Column) or as_of.table not in ("", ln) or as_of.name not in (left.node.event_time, left.node.proc_time):
            raise self.refuse(
                as_of, f"FOR SYSTEM_TIME AS OF {as_of.sql()}",
                f"a temporal join reads the left side's time attribute: FOR SYSTEM_TIME AS OF {ln}.{left.node.event_time or 'ts'}",
            )
        if as_of.name != left.node.event_time:
            raise self.refuse(
                as_of, "a temporal join on processing time of a view",
                "join on the left side's event time, or look a static, jdbc or filesystem table up as of PROCTIME()",
            )
        table = versioned.copy()
        table.set("version", None)
        table.set("alias", None)
        right, _ = self._source(table)
        right = versions(right)  # (an upsert table's own records: Flink's planner gives them to the join as they come)
        if right.node.row_time is None:
            raise PlanError(
                f"Flink SQL: the temporal join at {self.at(join)} reads {versioned.name} as a versioned table, which needs an event-time "
                "attribute (WATERMARK FOR ...) and a key: a table or view with a watermark, such as a deduplication keeping each key's last row"
            )
        columns = _JoinColumns(self, ln, left.schema, rn, right.schema)
        keys, rest = [], []
        for t in _join_terms(query, join):
            pair = columns.key_pair(t)
            (keys if pair is not None else rest).append(pair if pair is not None else t)
        if not keys:
            raise self.refuse(join, "a temporal join without an equality of the two sides' columns", f"ON {ln}.k = {rn}.k")
        key = changelog_mode(right.node).upsert_key
        if is_updating(right) and (key is None or not set(key) <= {r for _, r in keys}):
            none = "it has none: keep each key's last row first, ROW_NUMBER() ... = 1"
            raise PlanError(
                f"Flink SQL: the temporal join at {self.at(join)} must join on the versioned table's key "
                f"({', '.join(key) if key else none})"
            )
        # (a LEFT join's ON says which version a row meets: its conditions besides the keys too, as in Flink)
        splits, rest = self._split_on(join, columns, rest, lambda t: columns.key_pair(t) is None) if outer[0] else ([], rest)
        self._known_types(left, "a temporal join")
        self._known_types(right, "a temporal join")
        left, right, condition = self._on_condition(splits, left, right, f"the ON of the temporal join at {self.at(join)}")
        mapped, fields = columns.renamed(columns.schemas)
        fn = TemporalJoin(
            list(mapped[0].items()), list(mapped[1].items()), left.node.event_time, right.node.row_time, outer=outer[0], condition=condition
        )
        left_keys, right_keys = [k for k, _ in keys], [k for _, k in keys]
        # (a NULL key matches nothing: such rows are not kept, a LEFT join's left ones padded below)
        kept = [left.filter(keys_known(left_keys)).key_by(left_keys), right.filter(keys_known(right_keys)).key_by(right_keys)]
        joined = kept[0].connect(kept[1]).process(fn, output_schema=Schema(tuple(fields)), name="TemporalJoin")
        if outer[0]:  # (a NULL-keyed left row matches no version: padded at once)
            joined = joined.union(left.filter(f"NOT ({keys_known(left_keys)})").select(*_padded(mapped[0], fields)))
        return columns.finish(joined, rest, query.expressions)

    def _plain_join_query(self, query: exp.Select) -> None:
        """A join's SELECT: no other refused part (an aggregation over the joined rows reads the join as a
        view first: ``funke.table.join_views``)."""
        self._no_refused_parts(query, allowed=("joins",))


def numbered(name: str, seen: set[str]) -> str:
    """``name``, or if ``seen`` has it already ``name0``, ``name1``, ... (Flink's unique output names); added to ``seen``."""
    out, n = name, 0
    while out in seen:
        out, n = f"{name}{n}", n + 1
    seen.add(out)
    return out


def _bare(e: exp.Expression) -> exp.Expression:
    """``e`` (of one side's columns) with its columns unqualified, as that side's rows name them."""
    e = e.copy()
    for c in e.find_all(exp.Column):
        c.set("table", None)
    return e


def _padded(mapped: dict[str, str], fields: Sequence[Field], kind: str | None = None) -> list[str]:
    """The projection of one side's row (``mapped``: its columns' names in the join's ``fields``) as a join row
    padded with NULLs on the other side; ``kind``: the row kind's SQL, where the join's rows carry one."""
    own = {i: c for c, i in mapped.items()}
    return [
        f"{kind} AS `{f.name}`" if f.name == ROW_KIND and kind is not None
        else f"`{own[f.name]}` AS `{f.name}`" if f.name in own else f"CAST(NULL AS {f.dtype}) AS `{f.name}`"
        for f in fields
    ]  # fmt: skip


def _join_terms(query: exp.Select, join: exp.Join) -> list[exp.Expression]:
    """A join's conditions: the terms of its ON and of the query's WHERE."""
    where = query.args.get("where")
    return [t for c in (join.args.get("on"), where.this if where else None) if c is not None for t in conjuncts(c)]


class _JoinColumns:
    """The columns of a join's two sides under internal names (``l.x`` and ``r.x`` may both exist)."""

    def __init__(self, planner: Planner, ln: str, ls: Schema, rn: str, rs: Schema, *, rename: bool = True) -> None:
        self.planner, self.names = planner, (ln, rn)
        self.schemas = (ls.without((ROW_KIND,)), rs.without((ROW_KIND,)))  # (an updating side's kinds are no column of it)
        self.internal = {
            (side, c): planner._hide() if rename else c for side, schema in enumerate(self.schemas) for c in schema.names
        }

    def finish(self, joined: Any, rest: list[exp.Expression], expressions: list[exp.Expression]) -> Any:
        """The joined rows filtered by the conditions ``rest`` (ANDed), then the SELECT list ``expressions``."""
        if rest:
            joined = joined.filter(self.planner.spark_sql(self.rewrite(exp.and_(*rest)), joined.schema))
        return joined.select(
            *kind_first(joined, [self.planner.typed_sql(x, joined.schema) for x in self.projection(expressions)])
        )

    def projection(self, expressions: list[exp.Expression]) -> list[exp.Expression]:
        """A join's SELECT list over the joined columns (a column kept under its own name stays a column;
        ``*`` is the left's columns, then the right's, ``l.*`` one side's); a name taken already gets a
        number, as Flink names them (``B.dateTime, A.dateTime``: ``dateTime``, ``dateTime0``)."""
        items: list[exp.Expression] = []
        seen: set[str] = set()
        for i, e in enumerate(expressions):
            if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
                table = e.table if isinstance(e, exp.Column) else ""
                if table and table not in self.names:
                    raise PlanError(f"Flink SQL: no relation {table!r} in this join (at {self.planner.at(e)}); it joins {' and '.join(self.names)}")
                side = self.names.index(table) if table else None
                for (s, c), internal in self.internal.items():
                    if side is None or s == side:
                        items.append(exp.alias_(exp.column(internal, quoted=True), numbered(c, seen), quoted=True))
                continue
            name = numbered(e.alias_or_name if isinstance(e, (exp.Alias, exp.Column)) else f"EXPR${i}", seen)
            body = self.rewrite(e.this if isinstance(e, exp.Alias) else e)
            same = isinstance(body, exp.Column) and body.name == name
            items.append(body if same else exp.alias_(body, name, quoted=True))
        return items

    def renamed(self, schemas: tuple[Schema, Schema]) -> tuple[list[dict[str, str]], list[Field]]:
        """Each side's columns of ``schemas`` under their internal names: per side, column to internal
        name; and the fields they make, the left's then the right's."""
        names = [{c: self.internal[(side, c)] for c in schema.names} for side, schema in enumerate(schemas)]
        return names, [Field(names[side][f.name], f.dtype) for side, schema in enumerate(schemas) for f in schema.fields]

    def sides_of(self, e: exp.Expression) -> set[int | None]:
        return {self.side_of(c) for c in e.find_all(exp.Column)}

    def all(self) -> list[tuple[str, str, str]]:
        return [(i, ("left", "right")[side], c) for (side, c), i in self.internal.items()]

    def side_of(self, column: exp.Column) -> int | None:
        """Which side a column is on (None: not a column of either)."""
        if column.table:
            if column.table not in self.names:
                raise PlanError(
                    f"Flink SQL: no relation {column.table!r} in this join (at {self.planner.at(column)}); it joins {' and '.join(self.names)}"
                )
            side = self.names.index(column.table)
            self.schemas[side].field(column.name, node=f"{column.table}.{column.name} at {self.planner.at(column)}")
            return side
        on = [side for side, schema in enumerate(self.schemas) if column.name in schema]
        if len(on) > 1:
            raise PlanError(
                f"Flink SQL: both sides of the join have a column {column.name!r} (at {self.planner.at(column)}): say which, {self.names[0]}.{column.name} or {self.names[1]}.{column.name}"
            )
        if not on:
            raise PlanError(f"Flink SQL: neither side of the join has a column {column.name!r} (at {self.planner.at(column)})")
        return on[0]

    def key_pair(self, t: exp.Expression) -> tuple[str, str] | None:
        """``l.a = r.b`` as (a, b), the left's column first; None for any other condition."""
        if not isinstance(t, exp.EQ) or not isinstance(t.this, exp.Column) or not isinstance(t.expression, exp.Column):
            return None
        a, b = self.side_of(t.this), self.side_of(t.expression)
        if {a, b} != {0, 1}:
            return None
        return (t.this.name, t.expression.name) if a == 0 else (t.expression.name, t.this.name)

    def computed_key(self, t: exp.Expression) -> tuple[exp.Expression, str] | None:
        """``f(l.a, ...) = r.b`` (either way round) as (``f(l.a, ...)``, b): an expression of the left's columns
        only, equal to a column of the right; None for any other condition."""
        if not isinstance(t, exp.EQ):
            return None
        for this, other in ((t.this, t.expression), (t.expression, t.this)):
            if isinstance(other, exp.Column) and self.side_of(other) == 1 and this.find(exp.Column) is not None and self.sides_of(this) == {0}:
                return this, other.name
        return None

    def rewrite(self, e: exp.Expression) -> exp.Expression:
        def swap(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column):
                side = self.side_of(n)
                return exp.column(self.internal[(side, n.name)], quoted=True)
            return n

        return e.copy().transform(swap)


@dataclass
class _Bounds:
    """An interval join's time conditions as bounds on ``right time - left time`` (ms, inclusive or not)."""

    lower: tuple[int, bool] | None = None
    upper: tuple[int, bool] | None = None

    def take(self, t: exp.Expression, columns: _JoinColumns, times: tuple[str | None, str | None]) -> bool:
        """Record ``t`` if it compares the two time attributes; False if it is another condition."""
        if isinstance(t, exp.Between):
            parts = [exp.GTE(this=t.this, expression=t.args["low"]), exp.LTE(this=t.this, expression=t.args["high"])]
            offsets = [self._operands(p, columns, times) for p in parts]
            if None in offsets:
                return False
            for p, o in zip(parts, offsets, strict=True):
                self._add(type(p), *o)
            return True
        if isinstance(t, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
            o = self._operands(t, columns, times)
            if o is None:
                return False
            self._add(type(t), *o)
            return True
        return False

    @staticmethod
    def _operands(
        t: exp.Expression, columns: _JoinColumns, times: tuple[str | None, str | None]
    ) -> tuple[tuple[int, int], tuple[int, int]] | None:
        sides = []
        for e in (t.this, t.expression):
            offset = 0
            while isinstance(e, exp.Paren):
                e = e.this
            if isinstance(e, (exp.Add, exp.Sub)) and isinstance(e.expression, exp.Interval):
                ms = interval_ms(e.expression)
                if ms is None:
                    return None
                offset, e = (ms if isinstance(e, exp.Add) else -ms), e.this
            if not isinstance(e, exp.Column):
                return None
            side = columns.side_of(e)
            if side is None or e.name != times[side]:
                return None
            sides.append((side, offset))
        if {sides[0][0], sides[1][0]} != {0, 1}:
            return None
        return sides[0], sides[1]

    def _add(self, op: type, a: tuple[int, int], b: tuple[int, int]) -> None:
        """``a op b`` with a, b = (side, offset): side 0's time + offset against side 1's."""
        if op in (exp.GT, exp.GTE):  # a > b  is  b < a
            a, b, op = b, a, exp.LT if op is exp.GT else exp.LTE
        inclusive = op is exp.LTE
        (sa, oa), (_, ob) = a, b
        if sa == 0:  # left + oa <= right + ob:  right - left >= oa - ob
            self._tighten("lower", (oa - ob, inclusive))
        else:  # right + oa <= left + ob:  right - left <= ob - oa
            self._tighten("upper", (ob - oa, inclusive))

    def _tighten(self, which: str, bound: tuple[int, bool]) -> None:
        old = getattr(self, which)
        if old is None:
            setattr(self, which, bound)
            return
        tighter = max if which == "lower" else min
        value = tighter(old[0], bound[0])
        inclusive = (old[1] if old[0] == value else True) and (bound[1] if bound[0] == value else True)
        setattr(self, which, (value, inclusive))

    def complete(self) -> bool:
        return self.lower is not None and self.upper is not None

    def apply(self, joined: Any) -> Any:
        assert self.lower is not None and self.upper is not None
        out = joined.between(self.lower[0], self.upper[0])
        if not self.lower[1]:
            out = out.lower_bound_exclusive()
        if not self.upper[1]:
            out = out.upper_bound_exclusive()
        return out
