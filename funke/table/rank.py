"""Flink SQL's window Top-N (``ROW_NUMBER() OVER (PARTITION BY window_start, window_end ...)``) as
DataStream functions: one result per window, its first ``limit`` rows in order, when the window
closes. Window deduplication is the same with ``limit`` 1.

A Top-N keeps the rows ranked ``start`` to ``limit`` (Flink's rank range: ``rn > 2 AND rn <= 5`` is 3
to 5). A row's rank is its ``ROW_NUMBER()``; in batch mode (the window Top-N here, the regular one in
``funke.table.sort``) also its ``RANK()`` or ``DENSE_RANK()`` (``in_range``).

Order: by each ``Order`` in turn; nulls are the smallest values unless an order says otherwise
(Flink's default null collation, which sqlglot's ``nulls_first`` already spells out). Rows that tie
on every order column keep their arrival order (``ORDER BY v DESC``: the first of two equal values
ranks first, as in Flink's window Top-N), except in a window deduplication that keeps the last row
(``keep_last``: ``ORDER BY ts DESC`` on the time attribute, ``rn = 1``), which keeps the last arrival
among equal timestamps, as Flink's does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from funke.semantics.functions import KeyedProcessFunction, ProcessWindowFunction
from funke.semantics.joins import CoGroupFunction, JoinFunction
from funke.semantics.state import ListStateDescriptor, ValueStateDescriptor
from funke.semantics.time import millis_to_datetime, timestamp_to_millis
from funke.table.changelog import (
    DELETE,
    INSERT,
    ROW_KIND,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    ChangelogMode,
    is_retraction,
    rows_step,
    with_ttl,
)
from funke.table.pair_condition import PairCondition


@dataclass(frozen=True)
class Order:
    """One ``ORDER BY`` item of the ranking: a column, its direction and where nulls go."""

    column: str
    descending: bool = False
    nulls_first: bool = True


def ranked(
    rows: Iterable[dict[str, Any]], order: Sequence[Order], limit: int | None, *, stable: bool = False
) -> list[dict[str, Any]]:
    """The first ``limit`` (None: all) of ``rows`` (in arrival order) by ``order``; ties as the module's docstring
    says, or, ``stable``, always in arrival order (a sort's).

    >>> rows = [{"p": 2, "n": "a"}, {"p": None, "n": "b"}, {"p": 5, "n": "c"}, {"p": 2, "n": "d"}]
    >>> [r["n"] for r in ranked(rows, [Order("p", descending=True, nulls_first=False)], 3)]
    ['c', 'd', 'a']
    >>> [r["n"] for r in ranked(rows, [Order("p")], 4)]
    ['b', 'a', 'd', 'c']
    """
    out = list(rows)
    if order and order[0].descending and not stable:
        out.reverse()
    for o in reversed(order):  # stable sorts, the last key first: a lexicographic order
        nulls = [r for r in out if r.get(o.column) is None]
        values = sorted((r for r in out if r.get(o.column) is not None), key=lambda r: r[o.column], reverse=o.descending)
        out = nulls + values if o.nulls_first else values + nulls
    return out[:limit]


#: The ranking functions of a Top-N: ``ROW_NUMBER()`` numbers rows 1, 2, 3, ...; ``RANK()`` gives rows
#: equal in every ORDER BY column one rank and skips as many after them (1, 1, 3); ``DENSE_RANK()``
#: skips none (1, 1, 2).
ROW_NUMBER, RANK, DENSE_RANK = "ROW_NUMBER", "RANK", "DENSE_RANK"


def in_range(
    rows: Iterable[dict[str, Any]], order: Sequence[Order], start: int, end: int, *, function: str = ROW_NUMBER, stable: bool = False
) -> list[tuple[int, dict[str, Any]]]:  # fmt: skip
    """The rows (in arrival order) ranked ``start`` to ``end`` by ``order`` and ``function``, in order,
    each with its rank; ties as ``ranked`` orders them.

    >>> rows = [{"v": 5}, {"v": 7}, {"v": 5}, {"v": 3}]
    >>> desc = [Order("v", descending=True)]
    >>> [(r, row["v"]) for r, row in in_range(rows, desc, 2, 3)]
    [(2, 5), (3, 5)]
    >>> [(r, row["v"]) for r, row in in_range(rows, desc, 2, 3, function=RANK)]
    [(2, 5), (2, 5)]
    >>> [(r, row["v"]) for r, row in in_range(rows, desc, 2, 3, function=DENSE_RANK)]
    [(2, 5), (2, 5), (3, 3)]
    """
    out, rank, previous = [], 0, None
    for i, row in enumerate(ranked(rows, order, end if function == ROW_NUMBER else None, stable=stable), 1):
        if function == ROW_NUMBER:
            rank = i
        elif previous is None or compare(order, previous, row) != 0:
            rank = i if function == RANK else rank + 1
        if rank > end:
            break
        if rank >= start:
            out.append((rank, row))
        previous = row
    return out


def _range_repr(start: int, function: str) -> str:
    """The rank range's start and the function in a Top-N's repr (its plan's uid): nothing for the first
    rows by ``ROW_NUMBER()``, so the uids of such Top-Ns, and their savepoints, stay what they were."""
    return (f", start={start}" if start > 1 else "") + (f", function={function!r}" if function != ROW_NUMBER else "")


class WindowTopN(ProcessWindowFunction):
    """Top-N of a window TVF's rows: each window's elements ranked when it fires, those ranked ``start``
    to ``limit`` kept, with the TVF's ``window_start``, ``window_end`` and ``window_time`` columns (and
    the rank, if named). ``function``: ``ROW_NUMBER``, or in batch mode ``RANK`` or ``DENSE_RANK``."""

    def __init__(
        self, order: Sequence[Order], limit: int, rownum: str | None, *, start: int = 1, function: str = ROW_NUMBER,
        keep_last: bool = False,
    ) -> None:  # fmt: skip
        self.order, self.limit, self.rownum, self.start, self.function = tuple(order), limit, rownum, start, function
        self.keep_last = keep_last

    def __repr__(self) -> str:  # (the plan's uid: two Top-Ns of one view are two operators)
        return f"WindowTopN({self.order!r}, {self.limit}, rownum={self.rownum!r}{_range_repr(self.start, self.function)})"

    def process(self, key: Any, ctx: Any, elements: list[Any]) -> Iterator[dict[str, Any]]:
        w = ctx.window()
        bounds = {
            "window_start": millis_to_datetime(w.start),
            "window_end": millis_to_datetime(w.end),
            "window_time": millis_to_datetime(w.end - 1),
        }
        yield from _kept(self, elements, bounds)


def _kept(top: Any, rows: list[dict[str, Any]], extra: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A window Top-N's result: ``rows`` ranked ``top.start`` to ``top.limit``, with ``extra`` and the rank."""
    # (ties in arrival order, but a keep-last deduplication's; RANK and DENSE_RANK keep every tie, in arrival order)
    last = getattr(top, "keep_last", False) and top.function == ROW_NUMBER  # (an operator of an older savepoint: False)
    for rank, row in in_range(rows, top.order, top.start, top.limit, function=top.function, stable=not last):
        yield {**row, **extra, **({top.rownum: rank} if top.rownum else {})}


class WindowResultTopN(KeyedProcessFunction):
    """Top-N of rows that carry their window (a window aggregation's results), keyed by the
    window and the other partition columns: kept until the watermark passes the window's last
    millisecond, then ranked and those ranked ``start`` to ``limit`` emitted at once."""

    def __init__(
        self, order: Sequence[Order], limit: int, rownum: str | None, window_end: str = "window_end", *, start: int = 1,
        function: str = ROW_NUMBER, keep_last: bool = False,
    ) -> None:  # fmt: skip
        self.order, self.limit, self.rownum, self.window_end = tuple(order), limit, rownum, window_end
        self.start, self.function, self.keep_last = start, function, keep_last
        self.rows = ListStateDescriptor("rows")

    def __repr__(self) -> str:  # (the plan's uid)
        spelled = f"{self.order!r}, {self.limit}, rownum={self.rownum!r}, window_end={self.window_end!r}"
        return f"WindowResultTopN({spelled}{_range_repr(self.start, self.function)})"

    def process_element(self, value: dict[str, Any], ctx: Any) -> None:
        end: datetime | None = value[self.window_end]  # (a timestamp column reaches the function as a datetime)
        if end is None:
            raise ValueError(f"window Top-N: a row without {self.window_end}: {value!r}")
        ctx.get_list_state(self.rows).add(value)
        ctx.timer_service().register_event_time_timer(timestamp_to_millis(end) - 1)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[dict[str, Any]]:
        state = ctx.get_list_state(self.rows)
        rows = list(state.get())
        state.clear()
        yield from _kept(self, rows, {})


class Deduplicate(KeyedProcessFunction):
    """Flink SQL's deduplication on event time (``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY ts [DESC])
    = 1``), an updating result like Flink's ``RowTimeDeduplicateFunction``: a key's first row is inserted
    (``+I``); a later row replaces it (``-U`` the kept row, ``+U`` the new one) when its time is earlier
    (keep first, ``ORDER BY ts``) or the same or later (keep last, ``ORDER BY ts DESC``). No row is late.

    >>> keep_last = Deduplicate("ts", keep_last=True, rownum=None)
    >>> kept, out = None, []
    >>> for row in ({"k": "a", "ts": 2}, {"k": "a", "ts": 1}, {"k": "a", "ts": 2}):
    ...     kept, changes = keep_last.step(kept, row)
    ...     out += [(c[ROW_KIND], c["ts"]) for c in changes]
    >>> out
    [('+I', 2), ('-U', 2), ('+U', 2)]
    """

    def __init__(self, time: str, *, keep_last: bool, rownum: str | None, ttl_ms: int | None = None, partition: Sequence[str] | None = None) -> None:
        """``partition``: the PARTITION BY columns (the result's upsert key; None: not known)."""
        self.time, self.keep_last, self.rownum, self.ttl_ms = time, keep_last, rownum, ttl_ms
        self.partition = None if partition is None else tuple(partition)
        self.kept = with_ttl(ValueStateDescriptor("kept"), ttl_ms)

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        return ChangelogMode(frozenset({INSERT, UPDATE_BEFORE, UPDATE_AFTER}), self.partition)

    @property
    def keeps_event_time(self) -> str:
        """Its rows keep their time column (the plan's ``row_time`` where that is the input's event time)."""
        return self.time

    def __repr__(self) -> str:  # (the plan's uid: two deduplications of one view are two operators)
        return f"Deduplicate({self.time!r}, keep_last={self.keep_last}, rownum={self.rownum!r}, ttl_ms={self.ttl_ms})"

    def step(self, kept: dict[str, Any] | None, value: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The row kept after ``value``, and the changes it emits."""
        row = {ROW_KIND: INSERT, **value, **({self.rownum: 1} if self.rownum else {})}
        if kept is None:
            return row, [row]
        t, before = value[self.time], kept[self.time]
        if (t >= before) if self.keep_last else (t < before):
            return row, [{**kept, ROW_KIND: UPDATE_BEFORE}, {**row, ROW_KIND: UPDATE_AFTER}]
        return kept, []

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        state = ctx.get_state(self.kept)
        kept, out = self.step(state.value(), value)
        state.update(kept)
        yield from out


def compare(order: Sequence[Order], a: dict[str, Any], b: dict[str, Any]) -> int:
    """-1, 0 or 1 as row ``a`` sorts before, with or after ``b`` by ``order`` (nulls as each order says)."""
    for o in order:
        x, y = a.get(o.column), b.get(o.column)
        if x is None or y is None:
            if x is None and y is None:
                continue
            first = (x is None) == o.nulls_first
            return -1 if first else 1
        if x != y:
            c = -1 if x < y else 1
            return -c if o.descending else c
    return 0


class TopN(KeyedProcessFunction):
    """Flink SQL's regular Top-N over an insert-only input (``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY
    ...) <= N`` not per window), an updating result like Flink's ``AppendOnlyTopNFunction``.

    Per key a buffer of sort keys, each with its rows in arrival order. A row enters when the buffer
    holds fewer than N rows or it sorts strictly before the buffer's worst sort key (a tie with the
    worst of a full buffer stays out). Without the row number in the result: the row pushed out of the
    top N is deleted (``-D``), then the new one inserted (``+I``). With it (``rownum``): each row whose
    rank moves is updated at that rank (``-U`` the row that was there, ``+U`` the one that is now),
    and the row landing at a rank not held before is inserted (``+I``).

    A rank range that starts after 1 (``start``, Flink's ``rn > M AND rn <= N``) keeps the rows ranked
    ``start`` to N: its changes are those of the numbered Top-N at these ranks, shown or not, as Flink's
    are (a row that moves into the range from above updates the rank it lands on, as does the row
    it pushes on; the row pushed past N leaves with that update).

    >>> top = TopN([Order("v", descending=True)], 2, rownum=None)
    >>> buffer, out = [], []
    >>> for v in (3, 5, 4, 1):
    ...     buffer, changes = top.step(buffer, {"v": v})
    ...     out += [(c[ROW_KIND], c["v"]) for c in changes]
    >>> out
    [('+I', 3), ('+I', 5), ('-D', 3), ('+I', 4)]
    >>> second = TopN([Order("v", descending=True)], 2, "rn", start=2)
    >>> buffer, out = [], []
    >>> for v in (3, 5, 4, 1):
    ...     buffer, changes = second.step(buffer, {"v": v})
    ...     out += [(c[ROW_KIND], c["v"], c["rn"]) for c in changes]
    >>> out
    [('+I', 3, 2), ('-U', 3, 2), ('+U', 4, 2)]
    """

    def __init__(
        self, order: Sequence[Order], limit: int, rownum: str | None, *, numbered: bool | None = None, ttl_ms: int | None = None,
        partition: Sequence[str] | None = None, start: int = 1,
    ) -> None:  # fmt: skip
        """``numbered``: whether the result shows the row number (default: when ``rownum`` names it);
        unnumbered rows carry ``rownum`` as NULL. ``partition``: the PARTITION BY columns (None: not known).
        ``start``: the first rank kept (then the rows are numbered in ``rownum``, which must name a column)."""
        if start > 1 and not rownum:
            raise ValueError("a Top-N's rank range numbers its rows: name the rownum column")
        self.order, self.limit, self.rownum, self.ttl_ms, self.start = tuple(order), limit, rownum, ttl_ms, start
        self.numbered = (bool(rownum) if numbered is None else numbered) or start > 1
        self.partition = None if partition is None else tuple(partition)
        self.buffer = with_ttl(ValueStateDescriptor("buffer"), ttl_ms)

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        if not self.order:  # (LIMIT n [OFFSET m]: rows in arrival order, each ranked last, none pushed out)
            return top_n_mode(self, frozenset({INSERT}))
        return top_n_mode(self, frozenset({INSERT, UPDATE_BEFORE, UPDATE_AFTER}) if self.numbered else frozenset({INSERT, DELETE}))

    def __repr__(self) -> str:  # (the plan's uid)
        ranks = f", start={self.start}" if self.start > 1 else ""
        return f"TopN({self.order!r}, {self.limit}, rownum={self.rownum!r}, numbered={self.numbered}, ttl_ms={self.ttl_ms}{ranks})"  # fmt: skip

    def step(self, buffer: list[list[Any]], value: dict[str, Any]) -> tuple[list[list[Any]], list[dict[str, Any]]]:
        """The buffer after ``value`` (a sorted list of ``[row of the sort key, [rows]]``) and the changes."""
        buffer = [[key, list(rows)] for key, rows in buffer]
        held = sum(len(rows) for _, rows in buffer)
        if buffer and compare(self.order, value, buffer[-1][0]) >= 0 and held >= self.limit:
            return buffer, []  # (not in range: it stays out, as in Flink)
        at = 0
        while at < len(buffer) and compare(self.order, buffer[at][0], value) < 0:
            at += 1
        if at < len(buffer) and compare(self.order, buffer[at][0], value) == 0:
            buffer[at][1].append(value)
        else:
            buffer.insert(at, [value, [value]])
        if self.numbered:
            return self._numbered(buffer, at, value)
        return self._unnumbered(buffer, value, full=held >= self.limit)

    def _unnumbered(self, buffer: list[list[Any]], value: dict[str, Any], *, full: bool) -> tuple[list[list[Any]], list[dict[str, Any]]]:
        """``full``: whether the buffer held N rows before ``value`` (one is pushed out now)."""
        out = []
        blank = {self.rownum: None} if self.rownum else {}
        if full:
            last = buffer[-1][1].pop()
            if not buffer[-1][1]:
                buffer.pop()
            if last == value:
                return buffer, []
            out.append({ROW_KIND: DELETE, **last, **blank})
        out.append({ROW_KIND: INSERT, **value, **blank})
        return buffer, out

    def _numbered(self, buffer: list[list[Any]], at: int, value: dict[str, Any]) -> tuple[list[list[Any]], list[dict[str, Any]]]:
        def row(kind: str, r: dict[str, Any], rank: int) -> dict[str, Any]:
            return {ROW_KIND: kind, **r, str(self.rownum): rank}

        out, rank, current, i = [], 0, value, 0
        while i < len(buffer) and rank <= self.limit:
            rows = buffer[i][1]
            if i <= at:  # (up to the new row's sort key, ranks stay; the new row is its key's last)
                rank += len(rows)
            else:
                for prev in rows:
                    if rank > self.limit:
                        break
                    out += [row(UPDATE_BEFORE, prev, rank), row(UPDATE_AFTER, current, rank)]
                    current, rank = prev, rank + 1
            i += 1
        if rank <= self.limit:
            out.append(row(INSERT, current, rank))
        if self.start > 1:  # (the ranks before the range move too, unseen)
            out = [r for r in out if r[str(self.rownum)] >= self.start]
        return buffer[:i], out

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        state = ctx.get_state(self.buffer)
        buffer, out = self.step(state.value() or [], value)
        state.update(buffer)
        yield from out


def top_n_mode(top: Any, kinds: frozenset[str]) -> ChangelogMode:
    """A regular Top-N's changelog mode: with the row number, a row is identified by its partition and
    rank; without, by its partition when it keeps one row (else by nothing known)."""
    key = None
    if top.partition is not None and top.numbered and top.rownum:
        key = (*top.partition, top.rownum)
    elif top.partition is not None and top.limit == 1:
        key = top.partition
    return ChangelogMode(kinds, key)


class RetractableTopN(KeyedProcessFunction):
    """Flink SQL's regular Top-N over an updating input (``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY ...)
    <= N`` over a changelog; a deduplication over one too), Flink's ``RetractableTopNFunction``: every row
    of a key is kept in order (ties in arrival order), a ``-U``/``-D`` row taken out again, and the first
    N before and after each change compared. Without the row number in the result: the rows that left
    the first N are deleted (``-D``), then those that entered inserted (``+I``). With it (``rownum``):
    each rank whose row changed is updated (``-U`` the row that was there, ``+U`` the one that is now), a
    rank filled inserted (``+I``), a rank emptied deleted (``-D``). A rank range that starts after 1
    (``start``) compares the ranks ``start`` to N, numbered whether shown or not, as ``TopN`` does.

    >>> top = RetractableTopN([Order("v", descending=True)], 1, "rn", numbered=True)
    >>> rows, out = [], []
    >>> for kind, v in (("+I", 3), ("+I", 5), ("-D", 5)):
    ...     rows, changes = top.step(rows, {ROW_KIND: kind, "v": v})
    ...     out += [(c[ROW_KIND], c["v"]) for c in changes]
    >>> out
    [('+I', 3), ('-U', 3), ('+U', 5), ('-U', 5), ('+U', 3)]
    """

    def __init__(
        self, order: Sequence[Order], limit: int, rownum: str | None, *, numbered: bool | None = None, ttl_ms: int | None = None,
        partition: Sequence[str] | None = None, start: int = 1,
    ) -> None:  # fmt: skip
        if start > 1 and not rownum:
            raise ValueError("a Top-N's rank range numbers its rows: name the rownum column")
        self.order, self.limit, self.rownum, self.ttl_ms, self.start = tuple(order), limit, rownum, ttl_ms, start
        self.numbered = (bool(rownum) if numbered is None else numbered) or start > 1
        self.partition = None if partition is None else tuple(partition)
        self.rows = with_ttl(ValueStateDescriptor("rows"), ttl_ms)

    def __repr__(self) -> str:  # (the plan's uid)
        ranks = f", start={self.start}" if self.start > 1 else ""
        return f"RetractableTopN({self.order!r}, {self.limit}, rownum={self.rownum!r}, numbered={self.numbered}, ttl_ms={self.ttl_ms}{ranks})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        kinds = {INSERT, DELETE} | ({UPDATE_BEFORE, UPDATE_AFTER} if self.numbered else set())
        return top_n_mode(self, frozenset(kinds))

    def step(self, rows: list[dict[str, Any]], value: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The key's rows in order after ``value`` (a new list) and the changes it makes."""
        row = {c: v for c, v in value.items() if c != ROW_KIND}
        after = list(rows)
        if is_retraction(value):
            at = next((i for i, kept in enumerate(after) if kept == row), None)  # (the first equal row, as Flink takes)
            if at is None:  # (not held: it expired, or never came)
                return rows, []
            del after[at]
        else:
            at = len(after)
            while at > 0 and compare(self.order, after[at - 1], row) > 0:  # (after every row it does not sort before)
                at -= 1
            after.insert(at, row)
        return after, self._changes(rows[: self.limit], after[: self.limit])

    def _changes(self, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.numbered:
            out = []
            for rank in range(self.start, self.limit + 1):
                was = before[rank - 1] if rank <= len(before) else None
                now = after[rank - 1] if rank <= len(after) else None
                numbered = {str(self.rownum): rank}
                if was is not None and now is not None and was != now:
                    out += [{ROW_KIND: UPDATE_BEFORE, **was, **numbered}, {ROW_KIND: UPDATE_AFTER, **now, **numbered}]
                elif was is None and now is not None:
                    out.append({ROW_KIND: INSERT, **now, **numbered})
                elif was is not None and now is None:
                    out.append({ROW_KIND: DELETE, **was, **numbered})
            return out
        blank = {self.rownum: None} if self.rownum else {}
        gone, came = list(before), []
        for r in after:
            if r in gone:
                gone.remove(r)
            else:
                came.append(r)
        return [{ROW_KIND: DELETE, **r, **blank} for r in gone] + [{ROW_KIND: INSERT, **r, **blank} for r in came]

    def process_element(self, value: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        yield from rows_step(ctx, self.rows, self.step, value)


class PairRows(JoinFunction):
    """A SQL window join's pair as one row: each side's columns under the names in ``left``/``right``
    (column → name in the row)."""

    def __init__(self, left: dict[str, str], right: dict[str, str]) -> None:
        self.left, self.right = left, right

    def join(self, left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
        return {**{n: left.get(c) for c, n in self.left.items()}, **{n: right.get(c) for c, n in self.right.items()}}


class OuterPairRows(CoGroupFunction):
    """A SQL outer window join's rows for one key and window: every pair, and each row of an outer side
    that has no partner padded with NULLs (``outer``: which sides are outer; LEFT is the first).

    ``condition``: the ``ON``'s conditions besides the window and the keys; only the pairs that meet it are
    pairs, and a row of an outer side that meets none is padded.

    >>> fn = OuterPairRows({"k": "lk", "x": "x"}, {"k": "rk", "y": "y"}, (True, True))
    >>> fn.co_group([{"k": 1, "x": "a"}], [])
    [{'lk': 1, 'x': 'a', 'rk': None, 'y': None}]
    >>> len(fn.co_group([{"k": 1, "x": "a"}, {"k": 1, "x": "b"}], [{"k": 1, "y": "c"}]))
    2
    >>> from funke.plan.types import Schema
    >>> on = PairCondition("`ry` > `lx`", Schema.of("lx int, ry int"), ("lx",), ("ry",))
    >>> OuterPairRows({"x": "x"}, {"y": "y"}, (True, False), on).co_group([{"x": 1, "lx": 1}, {"x": 5, "lx": 5}], [{"y": 3, "ry": 3}])
    [{'x': 1, 'y': 3}, {'x': 5, 'y': None}]
    """

    def __init__(self, left: dict[str, str], right: dict[str, str], outer: tuple[bool, bool], condition: PairCondition | None = None) -> None:
        self.pair, self.outer, self.condition = PairRows(left, right), tuple(outer), condition

    def __repr__(self) -> str:  # (the plan's uid)
        extra = f", condition={self.condition.sql!r}" if self.condition is not None else ""
        return f"OuterPairRows({self.pair.left!r}, {self.pair.right!r}, {self.outer}{extra})"

    def co_group(self, lefts: list[dict[str, Any]], rights: list[dict[str, Any]]) -> list[dict[str, Any]]:
        holds = self.condition.holds if self.condition is not None else lambda a, b: True
        met = [(i, j) for i, a in enumerate(lefts) for j, b in enumerate(rights) if holds(a, b)]
        out = [self.pair.join(lefts[i], rights[j]) for i, j in met]
        if self.outer[0]:
            paired = {i for i, _ in met}
            out += [self.pair.join(a, {}) for i, a in enumerate(lefts) if i not in paired]
        if self.outer[1]:
            paired = {j for _, j in met}
            out += [self.pair.join({}, b) for j, b in enumerate(rights) if j not in paired]
        return out
