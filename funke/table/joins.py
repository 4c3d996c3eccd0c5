"""Flink SQL's regular join (``FROM a JOIN b ON a.k = b.k``, no time bounds) as a DataStream function.

An inner join of two insert-only inputs keeps every row of each side in keyed state (its key: the
join keys) and pairs each arriving row with every row of the other side kept so far, as Flink's
``StreamingJoinOperator`` does; its result is insert-only. The state grows with the inputs unless
``table.exec.state.ttl`` lets rows expire: a row then pairs only with rows of the other side written
less than the TTL ago (processing time), as in Flink.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from funke.semantics.co_process import KeyedCoProcessFunction
from funke.semantics.state import ListStateDescriptor
from funke.table.changelog import with_ttl


class RegularJoin(KeyedCoProcessFunction):
    """Each pair of rows of equal keys as one row: ``left`` and ``right`` map each side's columns
    to their names in the result."""

    def __init__(self, left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]], ttl_ms: int | None = None) -> None:
        self.left, self.right, self.ttl_ms = tuple(left), tuple(right), ttl_ms
        self.rows = (with_ttl(ListStateDescriptor("left"), ttl_ms), with_ttl(ListStateDescriptor("right"), ttl_ms))

    def __repr__(self) -> str:  # (the plan's uid)
        return f"RegularJoin({self.left!r}, {self.right!r}, ttl_ms={self.ttl_ms})"

    def pair(self, left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
        return {**{name: left[c] for c, name in self.left}, **{name: right[c] for c, name in self.right}}

    def process_element1(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        ctx.get_list_state(self.rows[0]).add(value)
        for other in ctx.get_list_state(self.rows[1]).get():
            yield self.pair(value, other)

    def process_element2(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        ctx.get_list_state(self.rows[1]).add(value)
        for other in ctx.get_list_state(self.rows[0]).get():
            yield self.pair(other, value)
