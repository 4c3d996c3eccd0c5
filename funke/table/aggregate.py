"""Flink SQL's group aggregation without a window (``SELECT k, COUNT(*) FROM t GROUP BY k``): an
updating result, a changelog.

Each row of a key changes that key's aggregates. Like Flink's ``GroupAggFunction``, the first row of a
key emits ``+I`` (insert) with the aggregates, and every later row that changes them emits ``-U`` (the
result as it was) then ``+U`` (as it is now); a row that changes no aggregate (a ``MAX`` below the
maximum) emits nothing, unless ``table.exec.state.ttl`` is set: then a key's accumulators expire that
long after their last write (its next row is a ``+I`` again) and every row emits. The row kind travels
in a column, ``ROW_KIND`` inside a query; ``to_changelog_stream`` and ``collect()`` name it ``row_kind``.

Over an updating input (a changelog itself) a ``-U`` or ``-D`` row is retracted from its key's
accumulators, a ``+I`` or ``+U`` row accumulated: retract, then accumulate. When a key's last row is
retracted, its result is deleted (``-D``) and its state cleared; a retraction for a key without state
(its rows expired) is dropped, as Flink drops it.

The aggregates are aggregate functions of PyFlink's shape (``funke.table.builtin_aggregates``: COUNT,
SUM, AVG, MIN, MAX, the variances, each also over DISTINCT arguments; a user's function the same way), each with
its argument columns and an optional ``FILTER (WHERE ...)`` column: a row counts for an aggregate only
where that column is TRUE.

>>> agg = GroupAggregate(("k",), (("n", "count", None), ("top", "max", "v"), ("total", "sum", "v")))
>>> state = None
>>> for row in ({"k": "a", "v": 3}, {"k": "a", "v": 1}, {"k": "a", "v": None}):
...     state, out = agg.step(state, row)
...     print(out)
[{'_fk_row_kind': '+I', 'k': 'a', 'n': 1, 'top': 3, 'total': 3}]
[{'_fk_row_kind': '-U', 'k': 'a', 'n': 1, 'top': 3, 'total': 3}, {'_fk_row_kind': '+U', 'k': 'a', 'n': 2, 'top': 3, 'total': 4}]
[{'_fk_row_kind': '-U', 'k': 'a', 'n': 2, 'top': 3, 'total': 4}, {'_fk_row_kind': '+U', 'k': 'a', 'n': 3, 'top': 3, 'total': 4}]
>>> agg = GroupAggregate(("k",), (AggregateCall("top", "max", ("v",)),), retracting=True)
>>> state, _ = agg.step(None, {"k": "a", "v": 3})
>>> state, out = agg.step(state, {"k": "a", "v": 3, "_fk_row_kind": "-D"})
>>> out, state
([{'_fk_row_kind': '-D', 'k': 'a', 'top': 3}], None)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from funke.semantics.functions import AggregateFunction, KeyedProcessFunction, KeyGroup
from funke.semantics.state import ValueStateDescriptor
from funke.table.builtin_aggregates import BUILTINS, Distinct, builtin
from funke.table.changelog import (
    DELETE,
    INSERT,
    ROW_KIND,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    ChangelogMode,
    held_step,
    held_steps,
    is_retraction,
    with_ttl,
)


@dataclass(frozen=True)
class AggregateCall:
    """One aggregate of a GROUP BY: its result column, the function (a built-in's name, or a user's
    function object in ``function``), its argument columns, DISTINCT, and its FILTER column."""

    alias: str
    name: str
    args: tuple[str, ...] = ()
    distinct: bool = False
    filter: str | None = None
    function: Any = None

    def __repr__(self) -> str:
        fn = repr(self.function) if self.function is not None else self.name
        extra = (", distinct" if self.distinct else "") + (f", filter={self.filter!r}" if self.filter else "")
        return f"{self.alias}={fn}({', '.join(self.args)}{extra})"

    @property
    def legacy(self) -> tuple[str, str, str | None] | None:
        """The ``(alias, fn, column)`` the first GroupAggregate took, where this call is one of those."""
        plain = self.function is None and not self.distinct and self.filter is None and self.name in BUILTINS
        if plain and ((self.name == "count" and not self.args) or (self.name != "count" and len(self.args) == 1)):
            return self.alias, self.name, self.args[0] if self.args else None
        return None

    def make(self, retracting: bool) -> Any:
        if self.function is None:
            return builtin(self.name, retracting=retracting, distinct=self.distinct)
        return Distinct(self.function) if self.distinct else self.function


def as_call(spec: AggregateCall | tuple[str, str, str | None]) -> AggregateCall:
    """A call, or the ``(alias, fn, column)`` of a built-in (column None: ``COUNT(*)``)."""
    if isinstance(spec, AggregateCall):
        return spec
    alias, fn, column = spec
    return AggregateCall(alias, fn, () if column is None else (column,))


def apply_calls(
    calls: Sequence[AggregateCall], functions: Sequence[Any], accumulators: Sequence[Any], value: dict[str, Any], retract: bool
) -> None:
    """Accumulate ``value`` into (or, ``retract``, take it out of) each call's accumulator, where its FILTER holds."""
    for call, fn, acc in zip(calls, functions, accumulators, strict=True):
        if call.filter is not None and value[call.filter] is not True:
            continue
        args = [value[a] for a in call.args]
        (fn.retract if retract else fn.accumulate)(acc, *args)


class WindowAggregates(AggregateFunction):
    """A window aggregation's calls as one DataStream ``AggregateFunction`` (funke's window operator runs
    it): for what Spark's window aggregation cannot compute, ``COUNT(DISTINCT ...)`` or a user's function.

    >>> fn = WindowAggregates((AggregateCall("n", "count", ("v",), distinct=True),))
    >>> acc = fn.create_accumulator()
    >>> for v in (1, 2, 1):
    ...     acc = fn.add({"v": v}, acc)
    >>> fn.get_result(acc)
    {'n': 2}
    """

    def __init__(self, calls: Sequence[AggregateCall]) -> None:
        self.calls = tuple(calls)
        self.functions = tuple(c.make(False) for c in self.calls)

    def __repr__(self) -> str:  # (the plan's uid)
        return f"WindowAggregates({self.calls!r})"

    def create_accumulator(self) -> list[Any]:
        return [f.create_accumulator() for f in self.functions]

    def add(self, value: dict[str, Any], accumulator: list[Any]) -> list[Any]:
        apply_calls(self.calls, self.functions, accumulator, value, retract=False)
        return accumulator

    def get_result(self, accumulator: list[Any]) -> dict[str, Any]:
        return {c.alias: f.get_value(a) for c, f, a in zip(self.calls, self.functions, accumulator, strict=True)}

    def merge(self, a: list[Any], b: list[Any]) -> list[Any]:
        for f, x, y in zip(self.functions, a, b, strict=True):
            f.merge(x, [y])
        return a


class GroupAggregate(KeyedProcessFunction):
    """Aggregates per key as a changelog: ``aggregates`` are ``AggregateCall`` s (or a built-in's
    ``(alias, fn, column)``); ``keys`` are copied from the row. ``retracting``: the input is a changelog
    with retractions (MIN and MAX then keep their values). ``global_``: one group for all rows (its
    key a constant the planner adds), whose result is at most one row."""

    def __init__(
        self, keys: Sequence[str], aggregates: Sequence[Any], ttl_ms: int | None = None, *,
        retracting: bool = False, global_: bool = False,
    ) -> None:  # fmt: skip
        self.keys, self.ttl_ms, self.retracting, self.global_ = tuple(keys), ttl_ms, retracting, global_
        self.aggregates = tuple(as_call(a) for a in aggregates)
        self.functions = tuple(a.make(retracting) for a in self.aggregates)
        self.accumulators = with_ttl(ValueStateDescriptor("accumulators"), ttl_ms)

    def __repr__(self) -> str:  # (the plan's uid: two aggregations of one view are two operators)
        legacy = [a.legacy for a in self.aggregates]
        if not self.retracting and all(x is not None for x in legacy):  # (as the first version spelled it: its savepoints' uid)
            return f"GroupAggregate({self.keys!r}, {tuple(legacy)!r}, ttl_ms={self.ttl_ms})"
        return f"GroupAggregate({self.keys!r}, {self.aggregates!r}, ttl_ms={self.ttl_ms}, retracting={self.retracting})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        kinds = {INSERT, UPDATE_BEFORE, UPDATE_AFTER} | ({DELETE} if inputs[0].retracts else set())
        return ChangelogMode(frozenset(kinds), () if self.global_ else self.keys)

    def step(self, state: Any, value: dict[str, Any]) -> tuple[list[Any] | None, list[dict[str, Any]]]:
        """The key's state after ``value`` (None: cleared) and the changelog rows it emits. The state is
        ``[rows held, accumulator, ...]``, changed in place."""
        retract = is_retraction(value)
        first = state is None
        if first:
            if retract:  # (nothing held to take it from: its rows expired, or it never came)
                return None, []
            state = [0, *(f.create_accumulator() for f in self.functions)]
        elif isinstance(state, tuple):
            state = self._restored(state)
        before = None if first else self._row(state, value)
        apply_calls(self.aggregates, self.functions, state[1:], value, retract)
        state[0] += -1 if retract else 1
        if retract and state[0] <= 0:  # its last row went: the result is deleted
            return None, [] if before is None else [{ROW_KIND: DELETE, **before}]
        after = self._row(state, value)
        if before is None:
            return state, [{ROW_KIND: INSERT, **after}]
        if before == after and not self.ttl_ms:  # (with a TTL Flink emits it anyway: downstream state must not expire first)
            return state, []
        return state, [{ROW_KIND: UPDATE_BEFORE, **before}, {ROW_KIND: UPDATE_AFTER, **after}]

    def _restored(self, accumulators: tuple[Any, ...]) -> list[Any]:
        """State kept by versions before retractions (a tuple of a count, a sum or (sum, count), a MIN or
        MAX value, an AVG's (sum, count)) as accumulators (an insert-only input's: no row count needed)."""
        state: list[Any] = [0]
        for (_, fn, _), a in zip((c.legacy for c in self.aggregates), accumulators, strict=True):  # type: ignore[misc]
            if fn == "count":
                state.append([a])
            elif fn == "sum" and isinstance(a, tuple):  # (a pair, in savepoints of the first version)
                state.append([a[0] if a[1] else None, a[1]])
            elif fn == "sum":
                state.append([a, 0 if a is None else 1])
            elif fn == "avg":
                state.append(list(a))
            else:
                state.append([a])
        return state

    def _row(self, state: list[Any], value: dict[str, Any]) -> dict[str, Any]:
        row = {k: value[k] for k in self.keys}
        for call, fn, acc in zip(self.aggregates, self.functions, state[1:], strict=True):
            row[call.alias] = fn.get_value(acc)
        return row

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from held_step(ctx, self.accumulators, self.step, value)

    def process_batch(self, key_groups: Iterator[KeyGroup], ctx: Any) -> Iterator[dict[str, Any]]:
        return held_steps(key_groups, ctx, self.accumulators, self.step)
