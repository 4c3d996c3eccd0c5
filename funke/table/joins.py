"""Flink SQL's regular join (``FROM a [LEFT|RIGHT|FULL] JOIN b ON a.k = b.k``, no time bounds) as a
DataStream function.

Rows of both sides are kept in keyed state (the key: the join keys) and each arriving row is paired
with every row of the other side kept so far, as Flink's ``StreamingJoinOperator`` does. An inner join
of two insert-only inputs is insert-only. An outer side's row that has met no row of the other side
yet is emitted padded with NULLs (``+I``); when its first partner arrives, the padded row is retracted
(``-D``) before the pair is inserted (``+I``): an updating result, with Flink's row kinds. The state
grows with the inputs unless ``table.exec.state.ttl`` lets rows expire: a row then pairs only with rows
of the other side written less than the TTL ago (processing time), as in Flink.

>>> join = RegularJoin([("k", "k"), ("x", "x")], [("y", "y")], outer=(True, False))
>>> state = ({}, {})
>>> [(r["_fk_row_kind"], r["x"], r["y"]) for r in join.arrive(state, 0, {"k": 1, "x": "a"})]
[('+I', 'a', None)]
>>> [(r["_fk_row_kind"], r["x"], r["y"]) for r in join.arrive(state, 1, {"k": 1, "y": "b"})]
[('-D', 'a', None), ('+I', 'a', 'b')]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from funke.semantics.co_process import KeyedCoProcessFunction
from funke.semantics.state import MapStateDescriptor
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
        # per side: {n: [row, matched]} (a map, so that marking a row matched rewrites that row alone)
        self.rows = tuple(with_ttl(MapStateDescriptor(name), ttl_ms) for name in ("left", "right"))

    @property
    def updating(self) -> bool:
        return any(self.outer)

    def __repr__(self) -> str:  # (the plan's uid)
        return f"RegularJoin({self.columns!r}, ttl_ms={self.ttl_ms}, outer={self.outer})"

    def arrive(self, kept: Any, side: int, value: dict[str, Any]) -> list[dict[str, Any]]:
        """The changes ``value`` arriving on ``side`` makes; ``kept`` holds both sides' rows as two
        mutable mappings (a dict or MapState each) of ``n -> [row, matched]``."""
        other = 1 - side
        out: list[dict[str, Any]] = []
        partners = sorted(_items(kept[other]), key=lambda item: item[0])  # (arrival order)
        for n, (row, matched) in partners:
            if self.outer[other] and not matched:  # its NULL-padded row is retracted, once
                out.append(self._row(DELETE, row, None, other))
                _put(kept[other], n, [row, True])
            out.append(self._row(INSERT, value, row, side))
        if self.outer[side] and not partners:
            out.append(self._row(INSERT, value, None, side))
        ids = [n for n, _ in _items(kept[side])]
        _put(kept[side], max(ids, default=-1) + 1, [value, bool(partners)])
        return out

    def _row(self, kind: str, row: dict[str, Any], other: dict[str, Any] | None, side: int) -> dict[str, Any]:
        pair = (row, other) if side == 0 else (other, row)
        out = {ROW_KIND: kind} if self.updating else {}
        for rows, columns in zip(pair, self.columns, strict=True):
            out.update((name, None if rows is None else rows[c]) for c, name in columns)
        return out

    def process_element1(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.arrive((ctx.get_map_state(self.rows[0]), ctx.get_map_state(self.rows[1])), 0, value)

    def process_element2(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.arrive((ctx.get_map_state(self.rows[0]), ctx.get_map_state(self.rows[1])), 1, value)


def _items(kept: Any) -> list[tuple[int, list[Any]]]:
    return list(kept.items())


def _put(kept: Any, n: int, entry: list[Any]) -> None:
    if isinstance(kept, dict):
        kept[n] = entry
    else:
        kept.put(n, entry)

