"""Flink SQL's group aggregation without a window (``SELECT k, COUNT(*) FROM t GROUP BY k``): an
updating result, a changelog.

Each row of a key changes that key's aggregates. Like Flink's ``GroupAggFunction`` (retracting
mode), the first row of a key emits ``+I`` (insert) with the aggregates, and every later row that
changes them emits ``-U`` (the result as it was) then ``+U`` (as it is now); a row that changes no
aggregate (a ``MAX`` below the maximum) emits nothing, unless ``table.exec.state.ttl`` is set: then a key's
accumulators expire that long after their last write (its next row is a ``+I`` again) and every row emits. The row kind travels in a column,
``ROW_KIND`` inside a query; ``to_changelog_stream`` and ``collect()`` name it ``row_kind``.

Aggregates follow SQL: ``COUNT(*)`` counts rows; ``SUM``, ``MIN``, ``MAX`` and ``AVG`` skip nulls and
are NULL while a key has seen no value (the planner casts an integer ``AVG`` back to its type). They are
the built-in aggregates of ``funke.semantics.functions``.

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

from funke.semantics.functions import KeyedProcessFunction, NamedAggregates, builtin_aggregate
from funke.semantics.state import ValueStateDescriptor
from funke.table.changelog import INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE, with_ttl


class GroupAggregate(KeyedProcessFunction):
    """Built-in aggregates per key as a changelog: ``aggregates`` are ``(alias, fn, column)`` with
    ``fn`` count (column None), sum, min, max or avg, or an ``AggregateFunction`` (a Python aggregate
    function, ``funke.table.udf_runtime.PythonAggregate``; column None); ``keys`` are copied from the row."""

    def __init__(self, keys: Sequence[str], aggregates: Sequence[tuple[str, str, str | None]], ttl_ms: int | None = None) -> None:
        self.keys, self.aggregates, self.ttl_ms = tuple(keys), tuple(aggregates), ttl_ms
        self.functions = NamedAggregates(
            tuple((alias, builtin_aggregate(fn, c) if isinstance(fn, str) else fn) for alias, fn, c in self.aggregates)
        )
        self.accumulators = with_ttl(ValueStateDescriptor("accumulators"), ttl_ms)

    def __repr__(self) -> str:  # (the plan's uid: two aggregations of one view are two operators)
        return f"GroupAggregate({self.keys!r}, {self.aggregates!r}, ttl_ms={self.ttl_ms})"

    def step(self, accumulators: tuple[Any, ...] | None, value: dict[str, Any]) -> tuple[tuple[Any, ...], list[dict[str, Any]]]:
        """The key's new accumulators after ``value``, and the changelog rows it emits."""
        before = self._restored(accumulators) if accumulators is not None else self.functions.create_accumulator()
        after = self.functions.add(value, before)
        new = self._row(after, value)
        if accumulators is None:
            return after, [{ROW_KIND: INSERT, **new}]
        old = self._row(before, value)
        if old == new and not self.ttl_ms:  # (with a TTL Flink emits it anyway: downstream state must not expire first)
            return after, []
        return after, [{ROW_KIND: UPDATE_BEFORE, **old}, {ROW_KIND: UPDATE_AFTER, **new}]

    def _restored(self, accumulators: tuple[Any, ...]) -> tuple[Any, ...]:
        """Accumulators as kept; a SUM's from before it became a number (a ``(sum, count)`` pair, in
        savepoints of the first version) read as that number."""
        return tuple(
            (a[0] if a[1] else None) if fn == "sum" and isinstance(a, tuple) else a
            for (_, fn, _), a in zip(self.aggregates, accumulators, strict=True)
        )

    def _row(self, accumulators: tuple[Any, ...], value: dict[str, Any]) -> dict[str, Any]:
        return {**{k: value[k] for k in self.keys}, **self.functions.get_result(accumulators)}

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        state = ctx.get_state(self.accumulators)
        after, out = self.step(state.value(), value)
        state.update(after)
        yield from out
