"""Watermarks funke computes on the driver, for operators whose watermark Spark cannot give.

Spark keeps one watermark per query, the minimum over its watermarked inputs, and has no idle
inputs. Flink's two-input operator takes the minimum over its inputs' watermarks, except an
input marked idle (``with_idleness(d)``: no row for ``d`` of processing time), which stops
holding it back until it sends rows again. funke computes that here, after each micro-batch,
from what the query's watermark observes report (each input's maximum event time and rows),
and writes it where the operator's ``funke_clock`` control source reads it for the next
micro-batch (``funke.spark.general.program.ClockSpec``).

The file also counts the micro-batches folded in (``folds``, under this run's ``run`` id): the
source waits for the previous micro-batch's fold before it hands a watermark to the next one, so
the watermark computed after batch *n* reaches the operator with batch *n + 1*'s rows, as Spark's
own watermark does, whatever the listener's delay.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from funke.semantics.time import MIN_WATERMARK
from funke.spark.general.program import UNLISTED


def _millis(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, str):
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    return int(value)


@dataclass
class Clock:
    """One operator's watermark: Flink's minimum over its non-idle inputs, never moving back.

    An input holds the watermark at -infinity until its first row (Flink's rule too), unless it
    is idle by then. A source with per-split watermarks comes as one input per split
    (``funke.spark.general.program.split_input``: ``observe#split``, read from the observe's fields
    ``max_event_time_<split>`` and ``rows_<split>``): the minimum over them all is the minimum
    over the sources' minima, and a source is idle when each of its splits is (Flink's rule).

    >>> c = Clock("/dev/null", (("wm#0", 1_000, None), ("wm#1", 1_000, None), ("wm#x", 1_000, None)))
    >>> c.write = lambda: None
    >>> c.update({"wm": {"max_event_time_0": 50_000, "rows_0": 3, "rows_1": 0, "rows_x": 0}}) == MIN_WATERMARK
    True
    >>> c.update({"wm": {"max_event_time_1": 9_000, "rows_1": 1, "rows_0": 0, "rows_x": 0}})
    7999
    """

    path: str
    inputs: tuple[tuple[str, int, int | None], ...]  # (observe name, bound ms, idleness ms)
    #: The operator's uid: its clock source's offsets carry it, so a restart finds them.
    uid: str = ""
    started: float = field(default_factory=time.monotonic)
    watermark: int = MIN_WATERMARK
    run: str = field(default_factory=lambda: uuid.uuid4().hex)
    folds: int = 0
    #: The operator's processing-time timers (``None``: the clock source sends time rows every batch).
    timers: DueTimers | None = None
    #: The query's commit log (a local checkpoint) and the last batch folded in: the clock
    #: source waits until every committed batch is folded before it decides on the next.
    commits: str | None = None
    batch: int = -1
    _max: dict[str, int] = field(default_factory=dict)
    _active: dict[str, float] = field(default_factory=dict)
    _idle_at: float | None = None

    def update(self, observed: dict[str, dict[str, Any]], now: float | None = None, batch: int | None = None) -> int:
        """Fold one micro-batch's observed metrics in; write and return the watermark."""
        if batch is not None:
            self.batch = max(self.batch, batch)
        if self.timers is not None:
            self.timers.fold(observed)
        now = time.monotonic() if now is None else now
        for name, _, _ in self.inputs:
            observe, _, split = name.partition("#")
            d = observed.get(observe)
            if d is None:
                continue
            suffix = f"_{split}" if split else ""
            top = _millis(d.get(f"max_event_time{suffix}"))
            if top is not None:
                self._max[name] = max(top, self._max.get(name, top))
            if int(d.get(f"rows{suffix}") or 0) > 0:
                self._active[name] = now
        marks = []
        for name, bound, idleness in self.inputs:
            quiet_ms = (now - self._active.get(name, self.started)) * 1000
            if idleness is not None and quiet_ms >= idleness:
                continue  # idle: does not hold the watermark back
            top = self._max.get(name)
            if top is None and name.partition("#")[2] == UNLISTED:
                continue  # no partition added since the start has sent a record
            marks.append(MIN_WATERMARK if top is None else top - bound - 1)
        if marks:
            self.watermark = max(self.watermark, min(marks))
        self.folds += 1
        self._idle_at = self._next_idle(now)
        self.write()
        return self.watermark

    def _next_idle(self, now: float) -> float | None:
        """When the next input that is not idle yet becomes idle (monotonic seconds), if one can."""
        at = [
            self._active.get(name, self.started) + idleness / 1000
            for name, _, idleness in self.inputs
            if idleness is not None and (now - self._active.get(name, self.started)) * 1000 < idleness
        ]
        return min(at, default=None)

    def due(self) -> int | None:
        """When (epoch ms) a batch is due though no row comes: a processing-time timer, or an input
        turning idle (the batch then folds it in, and the watermark it frees comes the batch after)."""
        marks = [] if self.timers is None or self.timers.due is None else [self.timers.due]
        if self._idle_at is not None:
            marks.append(int((time.time() + (self._idle_at - time.monotonic())) * 1000) + 1)
        return min(marks, default=None)

    def restore(self, offset: dict[str, Any]) -> None:
        """Go on from the state a clock source's offset kept (a restart from a checkpoint): each
        input's maximum event time and the watermark, which never moves back."""
        for name, top in (offset.get("max") or {}).items():
            self._max[name] = max(int(top), self._max.get(name, int(top)))
        if offset.get("wm") is not None:
            self.watermark = max(self.watermark, int(offset["wm"]))
        self.write()

    def write(self) -> None:
        wm = None if self.watermark == MIN_WATERMARK else self.watermark
        content = {"watermark": wm, "run": self.run, "folds": self.folds, "max": self._max, "id": self.uid}
        if self.commits is not None and self.timers is not None:
            content.update(commits=self.commits, batch=self.batch, due=self.due())
        _write_json(self.path, content)


@dataclass
class DueTimers:
    """The earliest processing-time timer of a general operator's buckets, from its observe
    (``pt_due``: the minimum over the buckets that ran in the batch; ``runs``: how many ran).

    When every bucket ran, their minimum is the answer; otherwise it can only come earlier (a
    bucket that did not run keeps what it reported before). A timer reported and then deleted
    costs one batch that fires nothing, never a late one.

    >>> d = DueTimers(4, "late")
    >>> d.fold({"late": {"runs": 4, "pt_due": 5_000}}); d.fold({"late": {"runs": 1, "pt_due": 9_000}}); d.due
    5000
    >>> d.fold({"late": {"runs": 4, "pt_due": None}}); d.due is None
    True
    """

    buckets: int
    observe: str
    due: int | None = None

    def fold(self, observed: dict[str, dict[str, Any]]) -> None:
        d = observed.get(self.observe)
        if d is None:
            return
        due = _millis(d.get("pt_due"))
        if int(d.get("runs") or 0) >= self.buckets:
            self.due = due
        elif due is not None:
            self.due = due if self.due is None else min(self.due, due)


@dataclass
class Beat:
    """When a general operator on Spark's watermark needs a micro-batch that Spark would not run
    (``funke.spark.datasources.BeatDataSource`` reads what this writes to ``path``).

    * A beat at the start of each run (the source sees a new ``run``) and one when the
      watermark first leaves 0: Spark runs no batch for that move, though it does for every
      later one, which wakes the buckets through their event-time timers. The source reads that
      move in the query's commit log (``commits``, a local checkpoint) before it answers; where
      there is none, this asks for the beat (``want``) when the listener reports the move.
    * ``due``: when the earliest processing-time timer of a bucket is due (``DueTimers``).
    * One after each micro-batch that read a source's end of input (an observed ``eos`` new to
      it): a stateful query ends with the batch after the one that read its last source's end,
      which Spark would not run when the end moved no watermark (a process function over a
      stream without event time; a union or join of two such streams that end in different batches).
    * The end of input (``end``): once every one of the query's finite sources (``ends``, their
      observes) has sent its end, the beat that follows says so, and the operator fires every
      timer, processing-time ones too, as Flink's sources end with the watermark at +infinity
      and its batch mode with processing time at the end of time. Without it a finite stream
      without watermarks left its last processing-time windows to the wall clock, and the query
      ended before they fired. ``closed`` turns true when a micro-batch has read that beat
      (``saw``): the query has not ended before. (``linked``: a micro-batch read this run's
      beats at all; a source that cannot read the file, on a Spark Connect server elsewhere,
      beats every micro-batch and never the end.)

    >>> b = Beat("/dev/null", DueTimers(4, "late"))
    >>> b.write = lambda: None
    >>> b.update({}, "1970-01-01T00:00:00.000Z"); b.want
    0
    >>> b.update({}, "2024-01-01T00:00:00.000Z"); b.update({}, "2024-01-01T00:00:01.000Z"); b.want
    1
    >>> b.update({"funke_src_x": {"rows": 1, "eos": 1}}, None); b.update({"funke_src_x": {"eos": 1}}, None); b.want
    2
    >>> b.update({"funke_src_y": {"rows": 2, "eos": 1}}, None); b.want
    3
    >>> e = Beat("/dev/null", DueTimers(4, "late"), ends=("funke_src_x", "funke_src_y"))
    >>> e.write = lambda: None
    >>> e.update({"funke_src_x": {"eos": 1}}, None); e.end
    False
    >>> e.update({"funke_src_y": {"eos": 1}}, None); e.end, e.want
    (True, 2)
    >>> e.saw([{"endOffset": '{"beat": 3, "run": "other", "end": true}'}]); e.closed, e.linked
    (False, False)
    >>> e.saw([{"endOffset": {"beat": 2, "run": e.run}}]); e.closed, e.linked
    (False, True)
    >>> e.saw([{"endOffset": {"beat": 3, "run": e.run, "end": True}}]); e.closed
    True
    """

    path: str
    timers: DueTimers
    run: str = field(default_factory=lambda: uuid.uuid4().hex)
    want: int = 0
    commits: str | None = None
    ends: tuple[str, ...] = ()
    closed: bool = False
    linked: bool = False
    _moved: bool = False
    _ended: set[str] = field(default_factory=set)

    def update(self, observed: dict[str, dict[str, Any]], watermark: Any) -> None:
        """Fold one micro-batch in: its observed metrics and Spark's watermark after it."""
        wm = _millis(watermark)
        if self.commits is None and not self._moved and wm is not None and wm > 0:
            self._moved = True
            self.want += 1
        ended = {name for name, m in observed.items() if m.get("eos") == 1} - self._ended
        if ended:  # (each source's end: a query of several ends with the batch after the last one's)
            self._ended |= ended
            self.want += 1
        self.timers.fold(observed)
        self.write()

    @property
    def end(self) -> bool:
        """Every one of the query's finite sources has sent its end."""
        return bool(self.ends) and self._ended.issuperset(self.ends)

    def saw(self, sources: Any) -> None:
        """Fold in a micro-batch's sources' progress: ``closed`` once one of them (this beat's source)
        has read the end-of-input beat of this run."""
        for s in sources or ():
            offset = s.get("endOffset") if isinstance(s, dict) else getattr(s, "endOffset", None)
            if isinstance(offset, str):
                try:
                    offset = json.loads(offset)
                except ValueError:
                    continue
            if isinstance(offset, dict) and offset.get("run") == self.run:
                self.linked = True
                self.closed = self.closed or bool(offset.get("end"))

    def write(self) -> None:
        _write_json(self.path, {"run": self.run, "want": self.want, "due": self.timers.due, "commits": self.commits, "end": self.end})


def _write_json(path: str, content: dict[str, Any]) -> None:
    part = f"{path}.part"
    with open(part, "w") as f:
        json.dump(content, f)
    os.replace(part, path)
