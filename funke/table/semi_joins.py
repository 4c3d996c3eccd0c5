"""Flink SQL's semi and anti joins (``WHERE [NOT] EXISTS (SELECT ...)``, ``WHERE k IN (SELECT ...)``,
``INTERSECT``, ``EXCEPT``) as a DataStream function.

A left row goes out while the other side holds a row of its key (a semi join) or while it holds none
(an anti join), as Flink's ``StreamingSemiAntiJoinOperator`` does. Per key, the function counts the
right side's rows and keeps the left side's rows: when the count goes from 0 to 1, a semi join inserts
the kept rows (``+I``) and an anti join deletes them (``-D``); when it goes back to 0, the other way
round. An arriving left row goes out at once when it passes, with its own kind (an input changelog's
``+U`` stays a ``+U``). So a semi join of insert-only inputs is insert-only; an anti join is an updating
result (a row is deleted when its first partner comes), and so is any join over an updating input.

The left rows are kept only while they may still be needed: when the right side never retracts, a
matched key's rows never change again, so a semi join keeps none there, and an anti join forgets them
once it deleted them. ``table.exec.state.ttl`` expires a key's rows and count after their last write.

With a correlated condition other than the key's equalities (``EXISTS (SELECT ... WHERE b.k = a.k AND
b.y > a.x)``: a ``PairCondition``), the answer is each left row's own, as in Flink's operator with a
non-equi condition: the function keeps the right side's rows of the key too, and each left row with the
number of them it meets; a left row passes while that number is above 0 (an anti join: while it is 0).

>>> from funke.semantics.co_process import KeyedCoProcessOperator
>>> anti = KeyedCoProcessOperator(SemiAntiJoin(["k", "x"], anti=True))
>>> [(r.value["_fk_row_kind"], r.value["x"]) for r in anti.process_element1(1, {"k": 1, "x": "a"})]
[('+I', 'a')]
>>> [(r.value["_fk_row_kind"], r.value["x"]) for r in anti.process_element2(1, {"k": 1})]
[('-D', 'a')]
>>> [r.value for r in anti.process_element1(1, {"k": 1, "x": "b"})]
[]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from funke.semantics.co_process import KeyedCoProcessFunction
from funke.semantics.state import MapStateDescriptor, ValueStateDescriptor
from funke.table.changelog import DELETE, INSERT, INSERT_ONLY, ROW_KIND, ChangelogMode, is_retraction, with_ttl
from funke.table.pair_condition import PairCondition


class SemiAntiJoin(KeyedCoProcessFunction):
    """The left rows (their ``columns``) whose key the right side holds (``anti``: does not hold);
    ``updating`` says which inputs are changelogs (their rows carry a kind); ``condition``: a row of the
    key counts for a left row only where it holds."""

    def __init__(
        self, columns: Sequence[str], *, anti: bool = False, ttl_ms: int | None = None,
        updating: tuple[bool, bool] = (False, False), condition: PairCondition | None = None,
    ) -> None:  # fmt: skip
        self.columns, self.anti, self.ttl_ms, self.inputs_update = tuple(columns), anti, ttl_ms, tuple(updating)
        self.condition = condition
        # the left rows by arrival number (a map: a retraction rewrites one entry), the next number, the right's count
        self.rows = with_ttl(MapStateDescriptor("left"), ttl_ms)
        self.next_id = with_ttl(ValueStateDescriptor("left_next_id"), ttl_ms)
        self.matches = with_ttl(ValueStateDescriptor("right_rows"), ttl_ms)
        # with a condition: the right side's rows by arrival number (what the condition reads of them), the next number
        self.right_rows = with_ttl(MapStateDescriptor("right"), ttl_ms)
        self.right_next_id = with_ttl(ValueStateDescriptor("right_next_id"), ttl_ms)

    @property
    def updating(self) -> bool:
        """Whether the result is a changelog (its rows carry a kind)."""
        return self.anti or any(self.inputs_update)

    def __repr__(self) -> str:  # (the plan's uid)
        extra = f", updating={self.inputs_update}" if any(self.inputs_update) else ""
        if self.condition is not None:
            extra += f", condition={self.condition.sql!r}"
        return f"SemiAntiJoin({self.columns!r}, anti={self.anti}, ttl_ms={self.ttl_ms}{extra})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        if not self.updating:
            return INSERT_ONLY
        left, right = inputs
        kinds = set(left.kinds) | {INSERT}
        if self.anti or right.retracts:  # (the right side's changes insert and delete left rows)
            kinds |= {DELETE}
        key = left.upsert_key if left.upsert_key is not None and all(c in self.columns for c in left.upsert_key) else None
        return ChangelogMode(frozenset(kinds), key)

    def _passes(self, count: int) -> bool:
        return (count == 0) if self.anti else (count > 0)

    def _out(self, kind: str, row: dict[str, Any]) -> dict[str, Any]:
        out = {ROW_KIND: kind} if self.updating else {}
        out.update((c, row[c]) for c in self.columns)
        return out

    def left(self, state: Any, value: dict[str, Any]) -> list[dict[str, Any]]:
        """The changes a left row (or its retraction) makes."""
        if self.condition is not None:
            return self._left_paired(state, value, self.condition)
        kind = value.get(ROW_KIND, INSERT)
        row = {c: value[c] for c in self.columns}
        count = state.get_state(self.matches).value() or 0
        rows = state.get_map_state(self.rows)
        if is_retraction(value):
            _remove_latest(rows, lambda kept: kept == row)
        elif self.inputs_update[1] or count == 0:  # (else the key's answer never changes: nothing to keep)
            _append(rows, state.get_state(self.next_id), row)
        return [self._out(kind, row)] if self._passes(count) else []

    def right(self, state: Any, value: dict[str, Any]) -> list[dict[str, Any]]:
        """The changes a right row (or its retraction) makes: the kept left rows when the key's answer flips."""
        if self.condition is not None:
            return self._right_paired(state, value, self.condition)
        counter = state.get_state(self.matches)
        before = counter.value() or 0
        after = max(before - 1, 0) if is_retraction(value) else before + 1
        counter.update(after)
        if self._passes(before) == self._passes(after):
            return []
        rows = state.get_map_state(self.rows)
        kind = INSERT if self._passes(after) else DELETE
        out = [self._out(kind, row) for _, row in sorted(rows.items(), key=lambda item: item[0])]
        if not self.inputs_update[1]:  # (an insert-only right side never flips the key back: its rows are done)
            rows.clear()
            state.get_state(self.next_id).clear()
        return out

    # -- with a condition: each left row's answer is its own
    def _left_paired(self, state: Any, value: dict[str, Any], condition: PairCondition) -> list[dict[str, Any]]:
        """A left row: kept with the number of the key's right rows it meets (its retraction: taken out)."""
        kind = value.get(ROW_KIND, INSERT)
        row = {c: value[c] for c in (*self.columns, *condition.left)}
        met = sum(1 for r in state.get_map_state(self.right_rows).values() if condition.holds(row, r))
        rows = state.get_map_state(self.rows)
        if is_retraction(value):
            _remove_latest(rows, lambda kept: kept[0] == row)
        elif self.inputs_update[1] or met == 0:  # (else it met a row that stays: its answer never changes)
            _append(rows, state.get_state(self.next_id), [row, met])
        return [self._out(kind, row)] if self._passes(met) else []

    def _right_paired(self, state: Any, value: dict[str, Any], condition: PairCondition) -> list[dict[str, Any]]:
        """A right row (or its retraction): kept (taken out), and each kept left row it meets counted again;
        those whose answer flips go out (inserted or deleted)."""
        row = {c: value[c] for c in condition.right}
        kept_right = state.get_map_state(self.right_rows)
        step = -1 if is_retraction(value) else 1
        if step < 0:
            _remove_latest(kept_right, lambda kept: kept == row)
        else:
            _append(kept_right, state.get_state(self.right_next_id), row)
        rows = state.get_map_state(self.rows)
        out = []
        for n, (left, met) in sorted(rows.items(), key=lambda item: item[0]):
            if not condition.holds(left, row):
                continue
            after = max(met + step, 0)
            if self._passes(met) != self._passes(after):
                out.append(self._out(INSERT if self._passes(after) else DELETE, left))
            if not self.inputs_update[1] and after > 0:  # (an insert-only right side never takes it back: done)
                rows.remove(n)
            else:
                rows.put(n, [left, after])
        return out

    def process_element1(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.left(ctx, value)

    def process_element2(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.right(ctx, value)


def _append(rows: Any, counter: Any, entry: Any) -> None:
    """``entry`` kept in the map state ``rows`` under the next arrival number (``counter``)."""
    n = counter.value() or 0
    rows.put(n, entry)
    counter.update(n + 1)


def _remove_latest(rows: Any, equal: Callable[[Any], bool]) -> None:
    """Take the latest entry of the map state ``rows`` that is ``equal`` away (none when none is)."""
    for n, kept in sorted(rows.items(), key=lambda item: item[0], reverse=True):
        if equal(kept):
            rows.remove(n)
            return


class MultisetJoin(KeyedCoProcessFunction):
    """``INTERSECT ALL`` and ``EXCEPT ALL`` of two relations keyed by all their ``columns``: per row (the key),
    how often each side holds it, ``m`` and ``n``; the result holds it ``min(m, n)`` times (``except_``:
    ``max(m - n, 0)``). Each arrival sends the difference: copies of the row inserted or deleted. An
    INTERSECT ALL of insert-only inputs only grows (insert-only); an EXCEPT ALL deletes (``+I``, ``-D``).

    >>> from funke.semantics.co_process import KeyedCoProcessOperator
    >>> op = KeyedCoProcessOperator(MultisetJoin(["x"], except_=True))
    >>> [[(r.value["_fk_row_kind"], r.value["x"]) for r in op.process_element1("a", {"x": "a"})] for _ in range(2)]
    [[('+I', 'a')], [('+I', 'a')]]
    >>> [(r.value["_fk_row_kind"], r.value["x"]) for r in op.process_element2("a", {"x": "a"})]
    [('-D', 'a')]
    """

    def __init__(
        self, columns: Sequence[str], *, except_: bool = False, ttl_ms: int | None = None,
        updating: tuple[bool, bool] = (False, False),
    ) -> None:  # fmt: skip
        self.columns, self.except_, self.ttl_ms, self.inputs_update = tuple(columns), except_, ttl_ms, tuple(updating)
        self.counts = with_ttl(ValueStateDescriptor("counts"), ttl_ms)  # [m, n]

    @property
    def updating(self) -> bool:
        return self.except_ or any(self.inputs_update)

    def __repr__(self) -> str:  # (the plan's uid)
        extra = f", updating={self.inputs_update}" if any(self.inputs_update) else ""
        return f"MultisetJoin({self.columns!r}, except_={self.except_}, ttl_ms={self.ttl_ms}{extra})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        if not self.updating:
            return INSERT_ONLY
        return ChangelogMode(frozenset({INSERT, DELETE}))

    def _held(self, m: int, n: int) -> int:
        return max(m - n, 0) if self.except_ else min(m, n)

    def arrive(self, state: Any, side: int, value: dict[str, Any]) -> list[dict[str, Any]]:
        counter = state.get_state(self.counts)
        counts = list(counter.value() or (0, 0))
        before = self._held(*counts)
        counts[side] = max(counts[side] + (-1 if is_retraction(value) else 1), 0)
        counter.update(counts if any(counts) else None)
        change = self._held(*counts) - before
        row = {ROW_KIND: INSERT if change > 0 else DELETE} if self.updating else {}
        row.update((c, value[c]) for c in self.columns)
        return [dict(row) for _ in range(abs(change))]

    def process_element1(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.arrive(ctx, 0, value)

    def process_element2(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from self.arrive(ctx, 1, value)
