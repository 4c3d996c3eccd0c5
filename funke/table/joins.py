"""Flink SQL's regular join (``FROM a [LEFT|RIGHT|FULL] JOIN b ON a.k = b.k``, no time bounds) as a
DataStream function.

Rows of both sides are kept in keyed state (the key: the join keys) and each arriving row is paired
with every row of the other side kept so far, as Flink's ``StreamingJoinOperator`` does. An inner join
of two insert-only inputs is insert-only. An outer side's row that has met no row of the other side
yet is emitted padded with NULLs (``+I``); when its first partner arrives, the padded row is retracted
(``-D``) before the pair is inserted (``+I``): an updating result, with Flink's row kinds. The state
grows with the inputs unless ``table.exec.state.ttl`` lets rows expire: a row then pairs only with rows
of the other side written less than the TTL ago (processing time), as in Flink.

Either input may be updating (a changelog): a ``-U`` or ``-D`` row is taken out of its side's rows and
its pairs are retracted, as Flink's ``JoinHelper`` does: an inner join forwards the input's kind
(``+U`` pairs for a ``+U`` row, ``-U`` pairs for a ``-U`` row), an outer join sends ``+I`` and ``-D``;
an outer side's row whose last partner goes is padded with NULLs again (``+I``). Each kept row counts
its partners on the other side (its associations) for that.

An outer join's ``ON`` may hold conditions besides the keys (``LEFT JOIN b ON a.k = b.k AND b.ts > a.ts``):
a row's partners are then the other side's rows of its key that meet them (a ``PairCondition``), and its
count of associations counts those, as in Flink's join with a non-equi condition.

>>> from funke.semantics.co_process import KeyedCoProcessOperator
>>> join = KeyedCoProcessOperator(RegularJoin([("k", "k"), ("x", "x")], [("y", "y")], outer=(True, False)))
>>> [(r.value["_fk_row_kind"], r.value["x"], r.value["y"]) for r in join.process_element1(1, {"k": 1, "x": "a"})]
[('+I', 'a', None)]
>>> [(r.value["_fk_row_kind"], r.value["x"], r.value["y"]) for r in join.process_element2(1, {"k": 1, "y": "b"})]
[('-D', 'a', None), ('+I', 'a', 'b')]
>>> [(r.value["_fk_row_kind"], r.value["x"], r.value["y"]) for r in join.process_element2(1, {"k": 1, "y": "b", "_fk_row_kind": "-D"})]
[('-D', 'a', 'b'), ('+I', 'a', None)]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from funke.semantics.co_process import KeyedCoProcessFunction
from funke.semantics.state import MapStateDescriptor, ValueStateDescriptor
from funke.table.changelog import DELETE, INSERT, INSERT_ONLY, RETRACTIONS, ROW_KIND, ChangelogMode, is_retraction, with_ttl
from funke.table.pair_condition import PairCondition


class RegularJoin(KeyedCoProcessFunction):
    """Each pair of rows of equal keys as one row: ``left`` and ``right`` map each side's columns to
    their names in the result; ``outer`` says which sides keep their unmatched rows (LEFT: the first);
    ``updating`` which inputs are changelogs (their rows carry a kind)."""

    def __init__(
        self, left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]], ttl_ms: int | None = None,
        outer: tuple[bool, bool] = (False, False), updating: tuple[bool, bool] = (False, False),
        condition: PairCondition | None = None,
    ) -> None:  # fmt: skip
        self.columns = (tuple(left), tuple(right))
        self.ttl_ms, self.outer, self.inputs_update = ttl_ms, tuple(outer), tuple(updating)
        self.condition = condition
        # per side: {n: [row, partners]} (a map, so that counting a row's partners rewrites that row alone), n in
        # arrival order; partners: how many rows of the other side it pairs with (earlier versions: whether any)
        self.rows = tuple(with_ttl(MapStateDescriptor(name), ttl_ms) for name in ("left", "right"))
        # per side: the n of its next row (a counter, not the highest n kept plus one: that reads every row)
        self.next_ids = tuple(with_ttl(ValueStateDescriptor(f"{name}_next_id"), ttl_ms) for name in ("left", "right"))

    @property
    def updating(self) -> bool:
        """Whether the join's result is a changelog (its rows carry a kind)."""
        return any(self.outer) or any(self.inputs_update)

    def __repr__(self) -> str:  # (the plan's uid; as earlier versions spelled it where they ran the join)
        extra = f", updating={self.inputs_update}" if any(self.inputs_update) else ""
        if self.condition is not None:
            extra += f", condition={self.condition.sql!r}"
        return f"RegularJoin({self.columns!r}, ttl_ms={self.ttl_ms}, outer={self.outer}{extra})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        if not self.updating:
            return INSERT_ONLY
        kinds = {INSERT} | ({DELETE} if any(self.outer) else set())
        for outer, mode in zip(self.outer, inputs, strict=True):
            if outer:
                kinds |= {DELETE} if mode.retracts else set()
            elif any(self.outer):  # (an inner side of an outer join: +I pairs, its retractions' kinds)
                kinds |= mode.kinds & RETRACTIONS
            else:  # (an inner join forwards its inputs' kinds)
                kinds |= mode.kinds
        keys = [m.upsert_key for m in inputs]
        key = None
        if all(k is not None for k in keys):  # (a pair is one row of each side: both sides' keys identify it)
            named = [dict(cols) for cols in self.columns]
            if all(c in named[s] for s, k in enumerate(keys) for c in k):  # type: ignore[union-attr]
                key = tuple(named[s][c] for s, k in enumerate(keys) for c in k)  # type: ignore[union-attr]
        return ChangelogMode(frozenset(kinds), key)

    def arrive(self, state: Any, side: int, value: dict[str, Any]) -> list[dict[str, Any]]:
        """The changes ``value`` arriving on ``side`` makes; ``state``: the key's state (the ``ctx`` of
        ``process_element1``/``2``)."""
        retract = is_retraction(value)
        kind = value.get(ROW_KIND, INSERT)
        row = {c: v for c, v in value.items() if c != ROW_KIND}
        other = 1 - side
        kept = [state.get_map_state(d) for d in self.rows]
        partners = sorted(kept[other].items(), key=lambda item: item[0])  # (arrival order)
        if self.condition is not None:  # (a pair meets the ON's other conditions too)
            holds = self.condition.holds
            partners = [p for p in partners if (holds(row, p[1][0]) if side == 0 else holds(p[1][0], row))]
        out: list[dict[str, Any]] = []
        if retract:
            self._forget(kept[side], row)
            if not partners:
                if self.outer[side]:
                    out.append(self._row(DELETE, row, None, side))
                return out
            out += [self._row(DELETE if self.outer[side] else kind, row, r, side) for _, (r, _) in partners]
            if self.outer[other]:
                for n, (r, matched) in partners:
                    if matched == 1:  # its last partner went: padded with NULLs again
                        out.append(self._row(INSERT, r, None, other))
                    kept[other].put(n, [r, max(int(matched) - 1, 0)])
            return out
        if self.outer[other]:
            for n, (r, matched) in partners:
                if not matched:  # its NULL-padded row is retracted, once
                    out.append(self._row(DELETE, r, None, other))
                kept[other].put(n, [r, int(matched) + 1])
        if partners:
            pair_kind = INSERT if any(self.outer) else kind  # (an inner join forwards +I or +U)
            out += [self._row(pair_kind, row, r, side) for _, (r, _) in partners]
        elif self.outer[side]:
            out.append(self._row(INSERT, row, None, side))
        self._keep(state, kept[side], side, row, len(partners))
        return out

    def _keep(self, state: Any, rows: Any, side: int, row: dict[str, Any], partners: int) -> None:
        # A kept row keeps its number. The counter expires with the TTL, but a row whose partners are counted
        # later lives longer (and a savepoint from before the counter has rows and no counter): it restarts after
        # the highest number kept, at 0 only when the side keeps no row.
        counter = state.get_state(self.next_ids[side])
        n = counter.value()
        if n is None:
            n = max(rows.keys(), default=-1) + 1
        rows.put(n, [row, partners])
        counter.update(n + 1)

    @staticmethod
    def _forget(rows: Any, row: dict[str, Any]) -> None:
        """Take one kept row equal to ``row`` away (the latest; none when it expired or never came)."""
        for n, (kept, _) in sorted(rows.items(), key=lambda item: item[0], reverse=True):
            if kept == row:
                rows.remove(n)
                return

    def _row(self, kind: str, row: dict[str, Any], other: dict[str, Any] | None, side: int) -> dict[str, Any]:
        pair = (row, other) if side == 0 else (other, row)
        out = {ROW_KIND: kind} if self.updating else {}
        for rows, columns in zip(pair, self.columns, strict=True):
            out.update((name, None if rows is None else rows[c]) for c, name in columns)
        return out

    def process_element1(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.arrive(ctx, 0, value)

    def process_element2(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.arrive(ctx, 1, value)
