"""Flink SQL's group aggregation without a window (``SELECT k, COUNT(*) FROM t GROUP BY k``): an
updating result, a changelog.

Each row of a key changes that key's aggregates. Like Flink's ``GroupAggFunction`` (retracting
mode), the first row of a key emits ``+I`` (insert) with the aggregates, and every later row that
changes them emits ``-U`` (the result as it was) then ``+U`` (as it is now); a row that changes no
aggregate (a ``MAX`` below the maximum) emits nothing, unless ``table.exec.state.ttl`` is set: then a key's
accumulators expire that long after their last write (its next row is a ``+I`` again) and every row emits. The row kind travels in a column,
``ROW_KIND`` inside a query; ``to_changelog_stream`` and ``collect()`` name it ``row_kind``.

Aggregates follow SQL: ``COUNT(*)`` counts rows; ``SUM``, ``MIN``, ``MAX`` and ``AVG`` skip nulls and
are NULL while a key has seen no value (the planner casts an integer ``AVG`` back to its type).

>>> agg = GroupAggregate(("k",), (("n", "count", None), ("top", "max", "v"), ("total", "sum", "v")))
>>> state = None
>>> for row in ({"k": "a", "v": 3}, {"k": "a", "v": 1}, {"k": "a", "v": None}):
...     state, out = agg.step(state, row)
...     print(out)
[{'_fk_row_kind': '+I', 'k': 'a', 'n': 1, 'top': 3, 'total': 3}]
[{'_fk_row_kind': '-U', 'k': 'a', 'n': 1, 'top': 3, 'total': 3}, {'_fk_row_kind': '+U', 'k': 'a', 'n': 2, 'top': 3, 'total': 4}]
[{'_fk_row_kind': '-U', 'k': 'a', 'n': 2, 'top': 3, 'total': 4}, {'_fk_row_kind': '+U', 'k': 'a', 'n': 3, 'top': 3, 'total': 4}]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.state import ValueStateDescriptor
from funke.table.changelog import INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE, with_ttl


def _add(fn: str, acc: Any, x: Any) -> Any:
    """``acc`` with the value ``x`` folded in (``count``: every row; the others skip nulls)."""
    if fn == "count":
        return acc + 1
    if x is None:
        return acc
    if fn in ("sum", "avg"):
        return (acc[0] + x, acc[1] + 1)
    if acc is None:
        return x
    return min(acc, x) if fn == "min" else max(acc, x)


def _result(fn: str, acc: Any) -> Any:
    if fn == "sum":
        return acc[0] if acc[1] else None
    if fn == "avg":
        return acc[0] / acc[1] if acc[1] else None
    return acc


def _initial(fn: str) -> Any:
    return 0 if fn == "count" else (0, 0) if fn in ("sum", "avg") else None


class GroupAggregate(KeyedProcessFunction):
    """Built-in aggregates per key as a changelog: ``aggregates`` are ``(alias, fn, column)`` with
    ``fn`` count (column None), sum, min, max or avg; ``keys`` are copied from the row."""

    def __init__(self, keys: Sequence[str], aggregates: Sequence[tuple[str, str, str | None]], ttl_ms: int | None = None) -> None:
        self.keys, self.aggregates, self.ttl_ms = tuple(keys), tuple(aggregates), ttl_ms
        self.accumulators = with_ttl(ValueStateDescriptor("accumulators"), ttl_ms)

    def __repr__(self) -> str:  # (the plan's uid: two aggregations of one view are two operators)
        return f"GroupAggregate({self.keys!r}, {self.aggregates!r}, ttl_ms={self.ttl_ms})"

    def step(self, accumulators: tuple[Any, ...] | None, value: dict[str, Any]) -> tuple[tuple[Any, ...], list[dict[str, Any]]]:
        """The key's new accumulators after ``value``, and the changelog rows it emits."""
        before = accumulators if accumulators is not None else tuple(_initial(fn) for _, fn, _ in self.aggregates)
        after = tuple(_add(fn, a, None if c is None else value[c]) for (_, fn, c), a in zip(self.aggregates, before, strict=True))
        new = self._row(after, value)
        if accumulators is None:
            return after, [{ROW_KIND: INSERT, **new}]
        old = self._row(before, value)
        if old == new and not self.ttl_ms:  # (with a TTL Flink emits it anyway: downstream state must not expire first)
            return after, []
        return after, [{ROW_KIND: UPDATE_BEFORE, **old}, {ROW_KIND: UPDATE_AFTER, **new}]

    def _row(self, accumulators: tuple[Any, ...], value: dict[str, Any]) -> dict[str, Any]:
        row = {k: value[k] for k in self.keys}
        row.update((alias, _result(fn, a)) for (alias, fn, _), a in zip(self.aggregates, accumulators, strict=True))
        return row

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        state = ctx.get_state(self.accumulators)
        after, out = self.step(state.value(), value)
        state.update(after)
        yield from out
