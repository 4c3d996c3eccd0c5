"""Flink SQL's regular join (``FROM a [LEFT|RIGHT|FULL] JOIN b ON a.k = b.k``, no time bounds) as a
DataStream function.

Rows of both sides are kept in keyed state (the key: the join keys) and each arriving row is paired
with every row of the other side kept so far, as Flink's ``StreamingJoinOperator`` does. An inner join
of two insert-only inputs is insert-only. An outer side's row that has met no row of the other side
yet is emitted padded with NULLs (``+I``); when its first partner arrives, the padded row is retracted
(``-D``) before the pair is inserted (``+I``): an updating result, with Flink's row kinds. The state
grows with the inputs unless ``table.exec.state.ttl`` lets rows expire: a row then pairs only with rows
of the other side written less than the TTL ago (processing time), as in Flink.

>>> from funke.semantics.co_process import KeyedCoProcessOperator
>>> join = KeyedCoProcessOperator(RegularJoin([("k", "k"), ("x", "x")], [("y", "y")], outer=(True, False)))
>>> [(r.value["_fk_row_kind"], r.value["x"], r.value["y"]) for r in join.process_element1(1, {"k": 1, "x": "a"})]
[('+I', 'a', None)]
>>> [(r.value["_fk_row_kind"], r.value["x"], r.value["y"]) for r in join.process_element2(1, {"k": 1, "y": "b"})]
[('-D', 'a', None), ('+I', 'a', 'b')]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from funke.semantics.co_process import KeyedCoProcessFunction
from funke.semantics.state import MapStateDescriptor, ValueStateDescriptor
from funke.table.changelog import DELETE, INSERT, ROW_KIND, with_ttl


class RegularJoin(KeyedCoProcessFunction):
    """Each pair of rows of equal keys as one row: ``left`` and ``right`` map each side's columns to
    their names in the result; ``outer`` says which sides keep their unmatched rows (LEFT: the first)."""

    def __init__(
        self, left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]], ttl_ms: int | None = None,
        outer: tuple[bool, bool] = (False, False),
    ) -> None:
        self.columns = (tuple(left), tuple(right))
        self.ttl_ms, self.outer = ttl_ms, tuple(outer)
        # per side: {n: [row, matched]} (a map, so that marking a row matched rewrites that row alone), n in arrival order
        self.rows = tuple(with_ttl(MapStateDescriptor(name), ttl_ms) for name in ("left", "right"))
        # per side: the n of its next row (a counter, not the highest n kept plus one: that reads every row)
        self.next_ids = tuple(with_ttl(ValueStateDescriptor(f"{name}_next_id"), ttl_ms) for name in ("left", "right"))

    @property
    def updating(self) -> bool:
        return any(self.outer)

    def __repr__(self) -> str:  # (the plan's uid)
        return f"RegularJoin({self.columns!r}, ttl_ms={self.ttl_ms}, outer={self.outer})"

    def arrive(self, state: Any, side: int, value: dict[str, Any]) -> list[dict[str, Any]]:
        """The changes ``value`` arriving on ``side`` makes; ``state``: the key's state (the ``ctx`` of
        ``process_element1``/``2``)."""
        other = 1 - side
        kept = [state.get_map_state(d) for d in self.rows]
        out: list[dict[str, Any]] = []
        partners = sorted(kept[other].items(), key=lambda item: item[0])  # (arrival order)
        for n, (row, matched) in partners:
            if self.outer[other] and not matched:  # its NULL-padded row is retracted, once
                out.append(self._row(DELETE, row, None, other))
                kept[other].put(n, [row, True])
            out.append(self._row(INSERT, value, row, side))
        if self.outer[side] and not partners:
            out.append(self._row(INSERT, value, None, side))
        # A kept row keeps its number. The counter expires with the TTL, but a row marked matched later lives
        # longer (and a savepoint from before the counter has rows and no counter): it restarts after the
        # highest number kept, at 0 only when the side keeps no row.
        counter = state.get_state(self.next_ids[side])
        n = counter.value()
        if n is None:
            n = max(kept[side].keys(), default=-1) + 1
        kept[side].put(n, [value, bool(partners)])
        counter.update(n + 1)
        return out

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

