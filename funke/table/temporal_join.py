"""Flink SQL's event-time temporal join (``FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.k = r.k``) as a
DataStream function: each row of the left side joined with the version of the right side's row of its key
that was valid at the left row's time, as Flink's ``TemporalRowTimeJoinOperator`` does.

The right side is a versioned table: each of its rows is a version of its key from its event time on
(an updating result's ``+I``/``+U``; a ``-D`` ends its key's versions from its time; a ``-U`` is not read,
as Flink reads a versioned table in upsert mode). A left row waits, keyed, until the watermark passes its
time; then it is joined with the latest version at or before its time, or (``LEFT JOIN``) padded with NULLs
when there is none or it was deleted, and it goes out once: the result is insert-only. Versions older
than the latest one at or before the watermark are let go. A left row that arrives behind the watermark
is joined at the next watermark with the versions still kept.

>>> from funke.semantics.co_process import KeyedCoProcessOperator
>>> join = KeyedCoProcessOperator(TemporalJoin([("k", "k"), ("t", "t")], [("rate", "rate"), ("u", "u")], "t", "u", outer=True))
>>> for r in ({"k": "eur", "rate": 2, "u": 10}, {"k": "eur", "rate": 3, "u": 20}):
...     _ = join.process_element2("eur", r, r["u"])
>>> for t in (5, 15, 25):
...     _ = join.process_element1("eur", {"k": "eur", "t": t}, t)
>>> [(r.value["t"], r.value["rate"]) for r in join.advance_watermark(30)]
[(5, None), (15, 2), (25, 3)]
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import Any

from funke.semantics.co_process import KeyedCoProcessFunction
from funke.semantics.state import MapStateDescriptor, ValueStateDescriptor
from funke.semantics.time import timestamp_to_millis
from funke.table.changelog import DELETE, INSERT_ONLY, ROW_KIND, UPDATE_BEFORE, ChangelogMode
from funke.table.pair_condition import PairCondition


def _ms(t: Any) -> int:
    return t if isinstance(t, int) else timestamp_to_millis(t)


class TemporalJoin(KeyedCoProcessFunction):
    """``left`` and ``right`` map each side's columns to their names in the result; ``left_time`` and
    ``right_time`` are the sides' event-time columns; ``outer``: a ``LEFT JOIN`` (a left row without a
    version is padded with NULLs)."""

    def __init__(
        self, left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]], left_time: str, right_time: str, *, outer: bool = False,
        condition: PairCondition | None = None,
    ) -> None:  # fmt: skip
        self.columns = (tuple(left), tuple(right))
        self.left_time, self.right_time, self.outer = left_time, right_time, outer
        self.condition = condition  # (a LEFT join's ON besides the keys: a row meets its version only where it holds)
        self.waiting = MapStateDescriptor("waiting")  # n -> [time ms, left row], n in arrival order
        self.next_id = ValueStateDescriptor("next_id")
        self.versions = MapStateDescriptor("versions")  # time ms -> right row (None: deleted from then on)

    def __repr__(self) -> str:  # (the plan's uid)
        extra = f", condition={self.condition.sql!r}" if self.condition is not None else ""
        return f"TemporalJoin({self.columns!r}, {self.left_time!r}, {self.right_time!r}, outer={self.outer}{extra})"

    def changelog_mode(self, inputs: tuple[ChangelogMode, ...]) -> ChangelogMode:
        return INSERT_ONLY  # (each left row goes out once, when the watermark passes it)

    def process_element1(self, value: dict[str, Any], ctx: Any) -> None:
        t = value[self.left_time]
        if t is None:
            raise ValueError(f"temporal join: a row without its time attribute {self.left_time}: {value!r}")
        ms = _ms(t)
        counter = ctx.get_state(self.next_id)
        n = counter.value() or 0
        ctx.get_map_state(self.waiting).put(n, [ms, value])
        counter.update(n + 1)
        ctx.timer_service().register_event_time_timer(ms)

    def process_element2(self, value: dict[str, Any], ctx: Any) -> None:
        kind = value.get(ROW_KIND)
        if kind == UPDATE_BEFORE:  # (upsert mode: the +U after it is the new version)
            return
        t = value[self.right_time]
        if t is None:
            raise ValueError(f"temporal join: a version without its time attribute {self.right_time}: {value!r}")
        row = {c: v for c, v in value.items() if c != ROW_KIND}
        ctx.get_map_state(self.versions).put(_ms(t), None if kind == DELETE else row)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[dict[str, Any]]:
        watermark = max(timestamp, ctx.timer_service().current_watermark())
        waiting = ctx.get_map_state(self.waiting)
        versions = ctx.get_map_state(self.versions)
        times = sorted(versions.keys())
        due = sorted(((ms, n, row) for n, (ms, row) in waiting.items() if ms <= watermark), key=lambda x: (x[0], x[1]))
        for ms, n, row in due:
            waiting.remove(n)
            at = bisect.bisect_right(times, ms)
            version = versions.get(times[at - 1]) if at else None
            if version is not None and (self.condition is None or self.condition.holds(row, version)):
                yield self._row(row, version)
            elif self.outer:
                yield self._row(row, None)
        # Let go of the versions before the latest one at or before the watermark (no waiting row reads them),
        # and of that one too when it is a deletion (with nothing older kept, no version reads the same).
        current = bisect.bisect_right(times, watermark)
        latest_deleted = current and versions.get(times[current - 1]) is None
        for t in times[: current if latest_deleted else max(current - 1, 0)]:
            versions.remove(t)

    def _row(self, left: dict[str, Any], right: dict[str, Any] | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for rows, columns in zip((left, right), self.columns, strict=True):
            out.update((name, None if rows is None else rows[c]) for c, name in columns)
        return out
