"""The general path: funke's own operators (``funke/semantics``) on Spark's ``transformWithStateInPandas``.

Spark calls a stateful Python processor once per grouping key per micro-batch, at about
1.2 ms a call here, so grouping by the user's key cannot scale. funke groups by a bounded
number of **buckets** (``hash(key) % buckets``) instead. One call handles a bucket's many
keys: it loads the bucket's operator state in one read (one value, the operator's
snapshot), runs the elements through the pure-Python operator, advances processing time
and the watermark, and writes the state back in one write.

Time reaches the operator as data, Flink's way (a watermark is a record): a micro-batch can
carry one **control row** per bucket, which makes every bucket run in it, with or without
elements, so that timers fire at their moment. It carries them only when something is due,
so a job whose input is quiet runs no micro-batch at all (Spark's "waiting for data"):

* On Spark's watermark (the query's one watermark, ``timerValues``) each bucket keeps a Spark
  event-time timer one millisecond past it: Spark calls the bucket in every micro-batch that
  moves the watermark (no-data batches included) and it applies the new watermark. Control
  rows (``funke_beat``) come at the start of a run, at the watermark's first move (for which
  Spark runs no batch) and when a bucket's processing-time timer is due (each bucket run
  reports its next one; ``funke.runtime.watermarks.Beat``). Their processing time is the
  micro-batch's timestamp.
* On funke's own watermark (``ClockSpec``: two inputs, idleness) the control rows
  (``funke_clock``) carry it, in the batches after it or an input's maximum moved, or when a
  processing-time timer or an input's idleness is due.
* Under ``funke.testing.TestStream`` the control rows come from the test script, one set per
  step, and carry its watermark and processing time, so tests set both exactly.

Every element row carries the micro-batch's processing time too (Spark's ``current_timestamp()``; a
test script's comes only in its time rows), so a bucket run without a time row knows it; in a bounded
run it is the job's one instant. At the end of input (a bounded run's end, a finite stream's
watermark at +infinity) every pending processing-time timer fires, as in Flink's batch mode
(``_end_of_processing_time``).

Per batch a bucket applies, in order: processing time (timers due), the batch's elements
(in arrival order, checked for lateness against the watermark of the previous batch), then
the new watermark. That is the schedule "each batch's elements, then the watermark", the
same one the native path follows, so both give the same results.

**Same-batch firing** (``set_latency_mode("latency-first")``, ``Program.same_batch_bound_ms``):
Spark's watermark is computed after a batch, so a window whose end a batch's elements pass
fires only in the next batch. With a bounded-out-of-orderness bound B on Spark's watermark
(one input, not funke's clock, a test script or a WatermarkGenerator), a bucket also keeps the
largest event time it has seen (across batches, in its snapshot) and, after the batch's
elements and Spark's watermark, advances its operator to Flink's watermark for it,
``largest - B - 1``. A bucket's largest event time is never above the query's, so this is never
above the watermark Spark computes after the batch (``max - B``, Flink's ``- 1``): no timer
fires before Flink's per-record watermark lets it, and a window leaves in the batch whose
elements pass its end. Later batches' elements are checked for lateness against it (closer to
Flink's per-record rule): only an element more than B behind the bucket's largest event time
can be late where it was not before. Pre-aggregated partial rows carry their largest event
time (``PARTIAL_MAX``). Two-input operators keep the schedule above.

Output rows of all kinds leave the operator in one frame, tagged by ``__tag``: ``""`` for
the main output, the tag's name for a side output, ``__dropped`` for the count of late
elements dropped, ``__due`` for a bucket run's next processing-time timer. The compiler
splits the frame.
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from funke.plan.pytypes import as_row
from funke.semantics.functions import OutputRecord, OutputTag, Partial
from funke.semantics.time import MAX_WATERMARK, MIN_WATERMARK
from funke.semantics.window_operator import WindowResult
from funke.spark.lazy import OnFirstUse
from funke.spark.user_errors import user_calls

#: pandas and numpy on first use (``funke.spark.lazy``): the driver-side planner of transformWithState needs neither.
np: Any = OnFirstUse("numpy", "np", __name__)
pd: Any = OnFirstUse("pandas", "pd", __name__)

#: Columns the general operator adds around the user's columns.
BUCKET, SEQ, CONTROL, TS, WM, PT = "fk_b", "fk_seq", "fk_ctl", "fk_ts", "fk_wm", "fk_pt"
#: A two-input operator's elements and time rows say which input they come from (0 or 1); the
#: second input's columns travel renamed with ``SECOND_PREFIX``.
SIDE, SECOND_PREFIX = "fk_side", "fk_2_"
TAG, OUT_SEQ, COUNT = "__tag", "__oseq", "__n"
DROPPED = "__dropped"
#: A bucket run's report (``Program.beat``): ``COUNT`` is its next processing-time timer, or null.
DUE = "__due"
CONTROL_COLUMNS = (BUCKET, SEQ, CONTROL, TS, WM, PT)
#: A bigint column ``c`` travels to the operator null-free (nulls as 0) beside ``NULLS + c``, its
#: null mask: a nullable int64 column reaches pandas as float64, which rounds above 2**53
#: (control rows and the other input's rows are null in every value column).
NULLS = "fk_null_"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Output:
    """One output of the operator: its tag (``None`` = main) and columns as (name, funke type)."""

    tag: OutputTag | None
    columns: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        return "" if self.tag is None else self.tag.name


@dataclass
class Program:
    """Everything an executor needs to run one general operator (pickled to the workers).

    ``make`` builds a fresh semantics operator; ``keys`` and ``values`` name the input
    columns; ``micros`` are timestamp columns carried as epoch microseconds (converted to
    ``datetime`` for user functions when ``user_rows``); ``shape`` turns a main-output
    record into a row.
    """

    uid: str
    make: Callable[[], Any]
    keys: tuple[str, ...]
    values: tuple[str, ...]
    outputs: tuple[Output, ...]
    micros: frozenset[str] = frozenset()
    user_rows: bool = False
    window_result: bool = False
    buckets: int = 8
    preaggregate: PreAggregate | None = None
    #: funke type per input column (``values``).
    types: dict[str, str] = field(default_factory=dict)
    #: A two-input operator's second input (``keys``/``values`` above are the first's).
    second: SecondInput | None = None
    #: The watermark comes only from funke's clock (``ClockSpec``), never from Spark's.
    clock: bool = False
    #: Time rows come only when due (``funke_beat``, or ``funke_clock`` with a commit log to
    #: follow): each bucket run reports its next processing-time timer (a ``DUE`` row).
    beat: bool = False
    #: The operator's input columns in order, as Spark sends them (``named``).
    columns: tuple[str, ...] = ()
    #: Same-batch firing (``set_latency_mode("latency-first")``): the bound B (ms) of the input's
    #: bounded-out-of-orderness watermark; each run then also applies ``largest event time - B - 1``.
    same_batch_bound_ms: int | None = None
    #: Time comes from a test script (``funke.testing.TestStream``): processing time moves only as it says,
    #: at the end of input too (``_end_of_processing_time``).
    scripted: bool = False

    def second_view(self) -> Program:
        """This program as seen by the second input's rows (its keys, columns and types)."""
        s = self.second
        assert s is not None
        return replace(self, keys=s.keys, values=s.values, micros=s.micros, types=s.types, preaggregate=None, second=None)

    def key_of(self, row: dict[str, Any]) -> Any:
        if len(self.keys) == 1:
            return row[self.keys[0]]
        return tuple(row[k] for k in self.keys)

    def output_ddl(self) -> str:
        cols = [f"`{TAG}` string", f"`{OUT_SEQ}` bigint", f"`{COUNT}` bigint"]
        for i, o in enumerate(self.outputs):
            cols += [f"`{column_name(i, name)}` {_carried_type(t)}" for name, t in o.columns]
        return ", ".join(cols)


@dataclass(frozen=True)
class SecondInput:
    """The second input of a two-input operator. ``broadcast``: its rows reach every bucket
    (Flink's broadcast stream) and are applied before the batch's other elements."""

    keys: tuple[str, ...]
    values: tuple[str, ...]
    micros: frozenset[str]
    types: dict[str, str]
    broadcast: bool = False


@dataclass(frozen=True)
class ClockSpec:
    """A general operator whose watermark funke computes on the driver (Flink's rule, idleness
    included) and sends in its control rows through ``funke_clock`` reading ``path``.

    ``inputs``: per watermarked input, its observe (``funke_wm_<uid>``), bound and idleness (ms).
    A source with per-split watermarks (Kafka partitions) is one input per split, named by
    ``split_input``.
    """

    path: str
    inputs: tuple[tuple[str, int, int | None], ...]
    uid: str = ""
    #: The operator's output observe (its buckets' next processing-time timers) and bucket count.
    observe: str = ""
    buckets: int = 0


@dataclass(frozen=True)
class BeatSpec:
    """A general operator on Spark's watermark whose time rows come from ``funke_beat`` reading
    ``path`` (``funke.runtime.watermarks.Beat`` writes it from the ``observe``'s ``runs`` and
    ``pt_due``)."""

    path: str
    observe: str
    buckets: int


#: The split that gathers a source's partitions added after the start (it holds nothing back
#: until one of them sends a record).
UNLISTED = "x"


def split_input(observe: str, split: str) -> str:
    """A clock input for one split of a source: its fields in ``observe`` are
    ``max_event_time_<split>`` and ``rows_<split>`` (``funke.runtime.watermarks.Clock``)."""
    return f"{observe}#{split}"


def column_name(output_index: int, name: str) -> str:
    """The operator's output column for ``name`` of output ``output_index`` (0 = main)."""
    return name if output_index == 0 else f"__o{output_index}_{name}"


def _carried_type(t: str) -> str:
    return "bigint" if t in ("timestamp", "timestamp_ntz") else t


# -- one bucket, one batch (pure pandas; no Spark) --------------------------------------------


def run_bucket(
    program: Program,
    snapshot: dict[str, Any] | None,
    batch: pd.DataFrame,
    *,
    spark_watermark: int | None,
    processing_time: int | None,
    final: bool = False,
) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """Apply one micro-batch of a bucket to its operator; returns (output rows, new snapshot).

    ``spark_watermark`` is Spark's (``max_ts - delay``; 0 or less = none yet), turned into
    Flink's (``- 1``); a control row's ``__wm`` wins over it. ``final`` (a bounded run's
    end) moves the watermark to +infinity. With ``program.same_batch_bound_ms`` (B), the
    watermark then moves on to the bucket's largest event time so far - B - 1 where that is
    later (same-batch firing; the module's docstring).
    """
    batch = exact_integers(named(batch, program.columns))
    if program.second is not None:
        return _run_two_inputs(program, snapshot, batch, spark_watermark=spark_watermark, processing_time=processing_time, final=final)
    op = program.make()
    latest: int | None = None
    if snapshot is not None:
        if LATEST in snapshot:  # same-batch firing's, not the operator's (older snapshots lack it)
            latest = snapshot[LATEST]
            snapshot = {k: v for k, v in snapshot.items() if k != LATEST}
        op.restore(snapshot)
    records: list[OutputRecord] = []
    is_control = batch[CONTROL].fillna(False).astype(bool) if CONTROL in batch else pd.Series(False, index=batch.index)
    control = batch[is_control]
    elements = batch[~is_control]
    if SEQ in elements and len(elements) > 1 and elements[SEQ].notna().all():
        elements = elements.sort_values(SEQ, kind="stable")

    pt = _max_or_none(batch, PT)  # (the batch's time: on its element rows and its time rows)
    if pt is None and processing_time is not None and processing_time >= 0:
        pt = processing_time
    if pt is not None:
        records += op.advance_processing_time(pt)

    convert = program.user_rows and bool(program.micros)
    dropped_before = getattr(op, "num_late_records_dropped", 0)
    if len(elements):
        for key, value, ts in _elements(program, elements, op.current_watermark, convert):
            records += op.process_element(key, value, ts)

    wm = MAX_WATERMARK if final else _max_or_none(control, WM)
    if program.clock and wm is not None and wm >= _END_OF_INPUT_MS:
        wm = MAX_WATERMARK
    if wm is None and not program.clock:  # funke's clock: no row with a watermark yet means -infinity
        wm = _flink_watermark(spark_watermark)
    if wm is not None and wm > op.current_watermark:
        records += op.advance_watermark(wm)
    records += _end_of_processing_time(program, op, wm, final)
    bound = program.same_batch_bound_ms
    if bound is not None:
        latest = _largest_time(elements, latest)
        local = None if latest is None else _flink_watermark(latest - bound)
        if local is not None and local > op.current_watermark:
            records += op.advance_watermark(local)
    dropped = getattr(op, "num_late_records_dropped", 0) - dropped_before

    _close(op)
    out = encode(program, records, convert, dropped, _next_processing_time(op))
    snap = op.snapshot()
    if bound is not None and latest is not None:
        snap[LATEST] = latest
    return out, (None if _empty(snap) else snap)


#: A bucket's largest event time so far, in its snapshot (same-batch firing).
LATEST = "fk_latest"


def _largest_time(elements: pd.DataFrame, latest: int | None) -> int | None:
    """The largest of ``latest`` and the elements' event times (a partial row's: ``PARTIAL_MAX``)."""
    m = _max_or_none(elements, PARTIAL_MAX if PARTIAL_MAX in elements else TS)
    if m is None:
        return latest
    return m if latest is None else max(latest, m)


def named(batch: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``batch`` with the input's column names: Spark's streaming operator names a column ``_<i>``
    where its optimizer made it a constant (``with_column(c, "0")`` before the operator)."""
    if not columns or len(columns) != len(batch.columns) or tuple(batch.columns) == columns:
        return batch
    return batch.set_axis(list(columns), axis=1)


def exact_integers(batch: pd.DataFrame) -> pd.DataFrame:
    """``batch`` with each null-free bigint column and its ``NULLS`` mask joined into one nullable
    ``Int64`` column (exact, unlike the float64 pandas makes of a nullable int64)."""
    masks = [c for c in batch.columns if c.startswith(NULLS)]
    if not masks:
        return batch
    joined = {
        m[len(NULLS) :]: pd.arrays.IntegerArray(batch[m[len(NULLS) :]].to_numpy(dtype="int64"), batch[m].to_numpy(dtype=bool))
        for m in masks
    }
    return batch.drop(columns=masks).assign(**joined)


def _close(op: Any) -> None:
    """The end of the operator's run in this micro-batch: its user function's ``close()`` (it was opened
    at the run's first element; the next run makes a new operator and opens it again)."""
    close = getattr(op, "close", None)
    if callable(close):
        close()


def _next_processing_time(op: Any) -> int | None:
    """The operator's earliest processing-time timer (operators without such timers: ``None``)."""
    nxt = getattr(op, "next_processing_time", None)
    return None if nxt is None else nxt()


def _flink_watermark(spark_watermark: int | None) -> int | None:
    """Spark's watermark (``max_ts - delay``; 0 or less = none yet) as Flink's (``- 1``)."""
    if spark_watermark is None or spark_watermark <= 0:
        return None
    if spark_watermark >= _END_OF_INPUT_MS:
        # Only the end-of-input row reaches year 9999 (later event times are dead letters): its
        # watermark (minus the out-of-orderness) is Flink's MAX_WATERMARK, which a global
        # window's end-of-stream trigger waits for.
        return MAX_WATERMARK
    return spark_watermark - 1


#: A two-input operator's snapshot: the operator's own, and each input's watermark so far.
_OPERATOR, _INPUT_WATERMARKS = "operator", "input_watermarks"


def _run_two_inputs(
    program: Program,
    snapshot: dict[str, Any] | None,
    batch: pd.DataFrame,
    *,
    spark_watermark: int | None,
    processing_time: int | None,
    final: bool,
) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """``run_bucket`` for a two-input operator: ``process_element1``/``2`` by the rows' ``SIDE``.

    A broadcast input's rows go first (Flink's batch mode reads the broadcast side first too;
    in a stream they are concurrent with the batch's other rows). The watermark is the
    minimum of the inputs': a test script's per input (each input's time rows say which
    input they belong to), otherwise funke's clock's (``program.clock``: Flink's rule, computed
    on the driver); Spark's query watermark only where neither is there (a bucket function
    called by hand).
    """
    assert program.second is not None
    op = program.make()
    marks = [MIN_WATERMARK, MIN_WATERMARK]
    if snapshot is not None:
        op.restore(snapshot[_OPERATOR])
        marks = list(snapshot[_INPUT_WATERMARKS])
    is_control = batch[CONTROL].fillna(False).astype(bool)
    control, elements = batch[is_control], batch[~is_control]
    records: list[OutputRecord] = []
    pt = _max_or_none(batch, PT)  # (the batch's time: on its element rows and its time rows)
    if pt is None and processing_time is not None and processing_time >= 0:
        pt = processing_time
    if pt is not None:
        records += op.advance_processing_time(pt)

    dropped_before = getattr(op, "num_late_records_dropped", 0)
    second = program.second_view()
    renamed = {SECOND_PREFIX + c: c for c in second.values}
    sides = [(0, program, op.process_element1), (1, second, op.process_element2)]
    if program.second.broadcast:
        sides.reverse()
    for side, view, feed in sides:
        rows = elements[elements[SIDE] == side]
        if not len(rows):
            continue
        if side == 1:  # (the first input's columns are there too, empty: the union put them in)
            rows = rows[[TS, *renamed]].rename(columns=renamed)
        convert = view.user_rows and bool(view.micros)
        if side == 0 and callable(getattr(op, "process_elements", None)):  # (after every broadcast row: one call)
            records += op.process_elements(list(_one_by_one(view, rows, convert)))
            continue
        for key, value, ts in _one_by_one(view, rows, convert):
            records += feed(key, value, ts)

    scripted = control[control[WM].notna()] if WM in control else control.iloc[0:0]
    combined = scripted[scripted[SIDE].isna()] if len(scripted) else scripted  # funke's clock: the operator's own
    if final:
        wm: int | None = MAX_WATERMARK
    elif len(combined) or program.clock:  # funke's clock: no row with a watermark yet means -infinity
        wm = _max_or_none(combined, WM)
        wm = MAX_WATERMARK if wm is not None and wm >= _END_OF_INPUT_MS else wm
    elif len(scripted):
        for side in (0, 1):
            m = _max_or_none(scripted[scripted[SIDE] == side], WM)
            if m is not None:
                marks[side] = max(marks[side], m)
        wm = min(marks)
    else:
        wm = _flink_watermark(spark_watermark)
    if wm is not None and wm > op.current_watermark:
        records += op.advance_watermark(wm)
    records += _end_of_processing_time(program, op, wm, final)
    dropped = getattr(op, "num_late_records_dropped", 0) - dropped_before

    _close(op)
    out = encode(program, records, program.user_rows, dropped, _next_processing_time(op))
    snap = op.snapshot()
    if _empty(snap) and marks == [MIN_WATERMARK, MIN_WATERMARK]:
        return out, None
    return out, {_OPERATOR: snap, _INPUT_WATERMARKS: marks}


# 9000-01-01 UTC: below the end-of-input row's 9999-12-31 by more than any sane out-of-orderness.
_END_OF_INPUT_MS = 221845392000000


def _end_of_processing_time(program: Program, op: Any, wm: int | None, final: bool) -> list[OutputRecord]:
    """At the end of input (a bounded run's, or a finite stream's watermark at +infinity) every pending
    processing-time timer fires, as in Flink's batch mode ("processing time ... fast-forwards to the end
    of time when the whole input is processed"): a finite stream's processing-time windows all fire, so it
    ends with the result its bounded run gives, none left waiting for a clock the job no longer runs.
    (Flink's streaming mode drops them when a bounded job finishes.) A test script's processing time
    moves only as the script says."""
    if not final and (program.scripted or wm is None or wm < _END_OF_INPUT_MS):
        return []
    return op.advance_processing_time(MAX_WATERMARK)
#: funke's integer types and their nullable pandas dtypes.
_INTEGERS = {"tinyint": "Int8", "smallint": "Int16", "int": "Int32", "bigint": "Int64"}


@dataclass(frozen=True)
class PreAggregate:
    """How to pre-aggregate a batch's on-time elements per key and pane, vectorized.

    Valid for event-time tumbling/sliding windows of built-in aggregates whose trigger does
    not read elements: every element of a pane falls in the same windows, and an element
    newer than the watermark is late for none of them, so a group of them may enter the
    operator as one :class:`Partial` at the position (and timestamp) of its first arrival.
    """

    pane_ms: int
    offset_ms: int
    aggregates: tuple[tuple[str, str | None], ...]  # (fn, column) in NamedAggregates order
    #: For session windows with a static gap: elements of a key within ``gap`` of each other
    #: form one pre-merged session (``pane_ms`` is then unused).
    session_gap_ms: int | None = None
    #: Pre-aggregate every element before the shuffle to the buckets (``pre_shuffle``), not only
    #: the on-time ones inside a bucket. Sound when the allowed lateness is 0 and no late side
    #: output is read: then a pane's elements are all late (its windows are past the watermark:
    #: dropped and counted, which a partial's count does) or all go into the same windows, where
    #: an element older than the watermark is treated like a newer one (no trigger fires on an
    #: element of a window the watermark has not passed).
    before_shuffle: bool = False


#: A partial aggregate made before the shuffle travels as the number of elements it stands for
#: (``PARTIAL_N``) and one column per aggregate (``partial_column``; an average has two).
PARTIAL_N = "fk_p_n"
#: With same-batch firing, a partial row made before the shuffle also carries its largest event time.
PARTIAL_MAX = "fk_p_max"
_POS, _START, _LAST, _PANE, _ROW = "fk_p_pos", "fk_p_start", "fk_p_last", "fk_p_pane", "fk_p_row"


def partial_column(index: int, fn: str) -> list[str]:
    """The columns carrying aggregate ``index``'s partial accumulator (none for a count: ``PARTIAL_N`` is it)."""
    if fn == "count":
        return []
    return [f"fk_p_{index}", f"fk_p_{index}_n"] if fn == "avg" else [f"fk_p_{index}"]


def _elements(program: Program, elements: pd.DataFrame, watermark: int, convert: bool) -> Iterator[tuple[Any, Any, int | None]]:
    """(key, value, timestamp) in arrival order; on-time elements pre-aggregated where allowed."""
    pre = program.preaggregate
    if pre is not None and PARTIAL_N in elements:  # aggregated before the shuffle
        yield from _as_partials(program.keys, pre, elements)
        return
    stamps = elements[TS] if TS in elements else pd.Series([None] * len(elements), index=elements.index)
    if pre is None or stamps.isna().any():
        yield from _one_by_one(program, elements, convert)
        return
    on_time = (stamps > watermark).to_numpy()
    singles = elements[~on_time]
    items: list[tuple[int, Any, Any, int | None]] = []
    if len(singles):
        positions = np.flatnonzero(~on_time)
        for pos, item in zip(positions, _one_by_one(program, singles, convert), strict=True):
            items.append((int(pos), *item))
    grouped = elements[on_time]
    if len(grouped):
        parts = partial_frame(program.keys, pre, grouped, np.flatnonzero(on_time))
        items += [(pos, *item) for pos, item in zip(parts[_POS].tolist(), _as_partials(program.keys, pre, parts), strict=True)]
    items.sort(key=lambda x: x[0])
    for _, key, value, ts in items:
        yield key, value, ts


def partial_frame(keys: tuple[str, ...], pre: PreAggregate, frame: pd.DataFrame, positions: np.ndarray) -> pd.DataFrame:
    """One row per key and pane (or pre-merged session) of ``frame``'s elements, in order of first
    arrival: the keys, the first arrival's position and timestamp (``TS``), the smallest and
    largest timestamp, the element count (``PARTIAL_N``) and the aggregates' partial columns."""
    ts = frame[TS].to_numpy(dtype="int64")
    cols: dict[str, Any] = {_POS: positions, TS: ts}
    for k in keys:
        cols[k] = frame[k].to_numpy()
    for i, (_, column) in enumerate(pre.aggregates):
        if column is not None:
            cols[f"fk_v{i}"] = frame[column].array
    work = pd.DataFrame(cols)
    if pre.session_gap_ms is None:
        work[_PANE] = (ts - pre.offset_ms) // pre.pane_ms
    else:
        work[_PANE] = _session_ids(work, keys, pre.session_gap_ms)
    g = work.groupby([*keys, _PANE], sort=False, dropna=False)
    # rows are in arrival order: "first" is the first arrival (a trigger may align to its timestamp)
    out = g.agg(**{_POS: (_POS, "first"), TS: (TS, "first"), _START: (TS, "min"), _LAST: (TS, "max"), PARTIAL_N: (_POS, "size")})
    for i, (fn, _) in enumerate(pre.aggregates):
        names = partial_column(i, fn)
        if not names:
            continue
        gc = g[f"fk_v{i}"]
        if fn == "sum":  # (NULL for a group of nulls only, as SumAggregate)
            out[names[0]] = gc.sum(min_count=1)
        elif fn == "avg":
            out[names[0]] = gc.sum(min_count=0)
        elif fn == "min":
            out[names[0]] = gc.min()
        elif fn == "max":
            out[names[0]] = gc.max()
        if fn == "avg":  # (sum, count of non-null)
            out[names[1]] = gc.count()
    return out.reset_index().drop(columns=_PANE)


def _as_partials(keys: tuple[str, ...], pre: PreAggregate, parts: pd.DataFrame) -> list[tuple[Any, Partial, int]]:
    """(key, :class:`Partial`, timestamp of its first arrival) per row of a ``partial_frame``."""
    counts = parts[PARTIAL_N].tolist()
    accs: list[list[Any]] = []
    for i, (fn, _) in enumerate(pre.aggregates):
        names = partial_column(i, fn)
        if fn == "count":
            accs.append(counts)
        elif fn == "avg":
            accs.append(list(zip(_py(parts[names[0]]), parts[names[1]].tolist(), strict=True)))
        else:
            accs.append(_py(parts[names[0]]))
    rows = list(zip(*accs, strict=True)) if accs else [()] * len(parts)
    columns = [_py(parts[k]) for k in keys]
    key_values = columns[0] if len(keys) == 1 else list(zip(*columns, strict=True))
    stamps = parts[TS].tolist()
    gap = pre.session_gap_ms
    if gap is None:
        windows: list[tuple[int, int] | None] = [None] * len(parts)
    else:
        windows = [(int(a), int(b) + gap) for a, b in zip(parts[_START].tolist(), parts[_LAST].tolist(), strict=True)]
    return [
        (key, Partial(tuple(acc), n, window), int(t))
        for key, acc, n, window, t in zip(key_values, rows, counts, windows, stamps, strict=True)
    ]


def pre_shuffle(program: Program, schema: Any) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function that pre-aggregates a partition's elements per bucket, key and
    pane before they are shuffled to the buckets (``PreAggregate.before_shuffle``).

    In: ``BUCKET``, ``TS``, the keys and the aggregated columns. Out: ``schema``'s columns
    (``BUCKET``, ``TS``, the keys, ``PARTIAL_N`` and the partial columns), a row per group in
    order of the group's first element, with that element's timestamp (the partials
    ``partial_frame`` makes, at a tenth of its cost).
    """
    pre = program.preaggregate
    assert pre is not None and pre.before_shuffle and pre.session_gap_ms is None
    keys = [BUCKET, *program.keys]

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        received = [b for b in batches if b.num_rows]
        if not received:
            return
        table = pa.Table.from_batches(received)
        if table[TS].null_count:
            raise ValueError(f"{program.uid}: an element without an event timestamp reached an event-time window")
        stamps = table[TS].to_numpy()
        columns = {k: table[k] for k in keys}
        columns[_PANE] = pa.array((stamps - pre.offset_ms) // pre.pane_ms)
        columns[_ROW] = pa.array(np.arange(table.num_rows))
        aggregations: list[tuple[Any, str, Any]] = [(_ROW, "min", None), ([], "count_all", None)]
        if program.same_batch_bound_ms is not None:
            columns[TS] = table[TS]
            aggregations.append((TS, "max", None))
        for i, (fn, column) in enumerate(pre.aggregates):
            if fn == "count":
                continue
            columns[f"fk_v{i}"] = table[column]
            if fn in ("sum", "avg"):  # a sum of nulls only: NULL (SumAggregate), an average's 0 (with its count 0)
                aggregations.append((f"fk_v{i}", "sum", pc.ScalarAggregateOptions(min_count=1 if fn == "sum" else 0)))
            else:
                aggregations.append((f"fk_v{i}", fn, None))
            if fn == "avg":
                aggregations.append((f"fk_v{i}", "count", None))
        grouped = pa.table(columns).group_by([*keys, _PANE], use_threads=False).aggregate(aggregations)
        # Arrow's group order is not the order of first arrival (a three-column key reorders), so sort by it
        grouped = grouped.take(pc.sort_indices(grouped[f"{_ROW}_min"]))
        first = grouped[f"{_ROW}_min"]  # each group's first row, whose timestamp the partial carries
        out = {k: grouped[k] for k in keys}
        out[TS], out[PARTIAL_N] = table[TS].take(first), grouped["count_all"]
        if program.same_batch_bound_ms is not None:
            out[PARTIAL_MAX] = grouped[f"{TS}_max"]
        for i, (fn, _) in enumerate(pre.aggregates):
            names = partial_column(i, fn)
            if names:
                out[names[0]] = grouped[f"fk_v{i}_{'sum' if fn == 'avg' else fn}"]
            if fn == "avg":
                out[names[1]] = grouped[f"fk_v{i}_count"]
        arrays = [out[f.name].cast(f.type) for f in schema]
        yield from pa.Table.from_arrays(arrays, schema=schema).to_batches()

    return run


def _session_ids(work: pd.DataFrame, keys: tuple[str, ...], gap: int) -> np.ndarray:
    """Per row, an id shared by the rows of its key whose sessions ``[ts, ts + gap)`` chain together."""
    order = work.sort_values([*keys, TS], kind="stable").index.to_numpy()
    sorted_keys = [work[k].to_numpy()[order] for k in keys]
    ts = work[TS].to_numpy()[order]
    new = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        same_key = np.ones(len(order) - 1, dtype=bool)
        for col in sorted_keys:
            same_key &= col[1:] == col[:-1]
        new[1:] = ~same_key | (ts[1:] - ts[:-1] > gap)  # touching sessions ([a, a+gap), [a+gap, ...)) merge
    ids = np.empty(len(order), dtype=np.int64)
    ids[order] = np.cumsum(new)
    return ids


def _py(series: pd.Series) -> list[Any]:
    return [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in series.tolist()]


def _one_by_one(program: Program, elements: pd.DataFrame, convert: bool) -> Iterator[tuple[Any, Any, int | None]]:
    values = _python_rows(elements, program, convert)
    stamps = elements[TS].tolist() if TS in elements else [None] * len(values)
    key_of = program.key_of
    for value, ts in zip(values, stamps, strict=True):
        yield key_of(value), value, (None if ts is None or pd.isna(ts) else int(ts))


def _python_rows(elements: pd.DataFrame, program: Program, convert: bool = False) -> list[dict[str, Any]]:
    """Rows as dicts of Python values (integers stay integers where nulls made pandas use floats;
    a null is None); with ``convert``, the timestamp columns (``program.micros``) as datetimes."""
    names = list(program.values)
    columns = []
    for c in names:
        values = _python_values(elements[c], program.types.get(c) in _INTEGERS)
        if convert and c in program.micros:
            values = [None if v is None else _EPOCH + timedelta(microseconds=v) for v in values]
        columns.append(values)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)] if names else [{} for _ in range(len(elements))]


def _python_values(s: pd.Series, integer: bool) -> list[Any]:
    """A column's values as Python objects, a null as None (an ``integer`` column pandas made float: as ints)."""
    if integer and s.dtype.kind == "f":
        s = s.astype("Int64")
    values = s.tolist()
    nulls = s.isna().to_numpy()
    if nulls.any():
        values = [None if null else v for v, null in zip(values, nulls, strict=True)]
    return values


def _max_or_none(frame: pd.DataFrame, column: str) -> int | None:
    if column not in frame or not len(frame):
        return None
    s = frame[column].dropna()
    return int(s.max()) if len(s) else None


def _empty(snap: dict[str, Any]) -> bool:
    """Nothing worth keeping: no state, timers, buffers or counts, and no watermark yet (the next
    batch's late check needs it)."""
    rest = (v for k, v in snap.items() if k != "watermark")
    return not any(rest) and snap.get("watermark", MIN_WATERMARK) == MIN_WATERMARK


def _from_user(v: Any) -> Any:
    if isinstance(v, datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=UTC)
        return (v - _EPOCH) // timedelta(microseconds=1)
    return v


def encode(program: Program, records: list[OutputRecord], converted: bool, dropped: int, due: int | None = None) -> pd.DataFrame:
    """Records to the operator's output frame (one column set per output, tagged); with
    ``program.beat``, then the run's ``DUE`` row (``due``: its next processing-time timer)."""
    index = {o.label: i for i, o in enumerate(program.outputs)}
    data: dict[str, list[Any]] = {TAG: [], OUT_SEQ: [], COUNT: []}
    names = [column_name(i, c) for i, o in enumerate(program.outputs) for c, _ in o.columns]
    for name in names:
        data[name] = []
    n = 0
    for rec in records:
        label = "" if rec.tag is None else rec.tag.name
        if label not in index:  # a side output nobody reads (Flink drops those too)
            continue
        i = index[label]
        row = _row_of(program, rec) if i == 0 else _as_dict(rec.value, program.outputs[i], program.uid)
        filled = {column_name(i, c): row.get(c) for c, _ in program.outputs[i].columns}
        missing = [c for c, _ in program.outputs[i].columns if c not in row]
        if missing:
            raise ValueError(f"{program.uid}: output row {row!r} lacks column(s) {', '.join(missing)}")
        data[TAG].append(label)
        data[OUT_SEQ].append(n)
        data[COUNT].append(None)
        for name in names:
            v = filled.get(name)
            data[name].append(_from_user(v) if converted or isinstance(v, datetime) else v)
        n += 1
    for tag, count, wanted in ((DROPPED, dropped, bool(dropped)), (DUE, due, program.beat)):
        if not wanted:
            continue
        data[TAG].append(tag)
        data[OUT_SEQ].append(n)
        data[COUNT].append(count)
        for name in names:
            data[name].append(None)
        n += 1
    types = {column_name(i, c): _carried_type(t) for i, o in enumerate(program.outputs) for c, t in o.columns}
    return pd.DataFrame({name: _column(program.uid, name, types.get(name), values) for name, values in data.items()})


def _column(uid: str, name: str, carried: str | None, values: list[Any]) -> Any:
    """An output column: integers (timestamps too: epoch microseconds) with nulls as a nullable
    ``Int64`` array, which Arrow takes exactly (pandas would make float64 of them, and round)."""
    if carried not in _INTEGERS or not any(v is None for v in values):
        return values
    try:
        return pd.array(values, dtype=_INTEGERS[carried])
    except (TypeError, ValueError) as e:
        raise ValueError(f"{uid}: output column {name} is {carried}; got a value that is not an integer ({e})") from e


def _as_dict(value: Any, output: Output, uid: str) -> dict[str, Any]:
    value = as_row(value)  # a dataclass or pydantic instance
    if isinstance(value, dict):
        return value
    if isinstance(value, (tuple, list)) and len(value) == len(output.columns):
        return {c: v for (c, _), v in zip(output.columns, value, strict=True)}
    if hasattr(value, "asDict"):
        return value.asDict()
    raise ValueError(
        f"{uid}: output {output.label or 'main'} needs a dict, a dataclass or pydantic instance, or a tuple of {len(output.columns)} fields; got {value!r}"
    )


def _row_of(program: Program, rec: OutputRecord) -> dict[str, Any]:
    value = rec.value
    if program.window_result and isinstance(value, WindowResult):
        row: dict[str, Any] = {}
        key = value.key
        if len(program.keys) == 1:
            row[program.keys[0]] = key
        else:
            row.update(zip(program.keys, key, strict=True))
        # window bounds in epoch microseconds, like every timestamp the operator carries
        row["window_start"] = None if value.window_start is None else value.window_start * 1000
        row["window_end"] = None if value.window_end is None else value.window_end * 1000
        inner = value.value
        if isinstance(inner, dict):
            row.update(inner)
        else:
            main_cols = [c for c, _ in program.outputs[0].columns if c not in row]
            row[main_cols[0] if main_cols else "value"] = inner
        return row
    return _as_dict(value, program.outputs[0], program.uid)


# -- Spark adapters ---------------------------------------------------------------------------


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while a bucket runs (its state is unpickled, changed and
    pickled whole: many new objects, few cycles), then run as usual; FUNKE_GC=1 keeps it on (to measure)."""
    if os.environ.get("FUNKE_GC") == "1" or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_heap_frozen = False


def _freeze_worker_heap() -> None:
    """Once per Python worker: move every object alive now (the modules the worker imported, the job's
    functions) to the permanent generation, so that the full ``gc.collect()`` PySpark runs after
    each task of a reused worker walks only what later tasks make (it walked them all, about 8 % of
    a CEP worker's time); FUNKE_GC=1 leaves the heap as it is (to measure). Outside a Spark task (a
    bucket run in the driver or a test's process) nothing is frozen."""
    global _heap_frozen
    if _heap_frozen or os.environ.get("FUNKE_GC") == "1":
        return
    from pyspark import TaskContext

    if TaskContext.get() is None:
        return
    _heap_frozen = True
    gc.freeze()


def processor(program: Program, wake: bool = False) -> Any:
    """A ``StatefulProcessor`` running ``program`` per bucket (state: one pickled snapshot).

    ``wake`` (event-time mode, ``Program.beat``): each bucket keeps one Spark event-time timer one
    millisecond past the watermark, so Spark calls it in every micro-batch that moves the
    watermark (with its elements, or through the timer in a batch without any), and in no other.
    """
    from pyspark.sql.streaming import StatefulProcessor

    class BucketProcessor(StatefulProcessor):
        def init(self, handle: Any) -> None:
            _freeze_worker_heap()
            self._handle = handle
            self._state = handle.getValueState("operator", "snapshot binary")

        def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
            frames = list(rows)
            batch = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            out = self._run(batch, timerValues)
            if wake:
                wanted = max(timerValues.getCurrentWatermarkInMs(), 0) + 1
                timers = list(self._handle.listTimers())
                if timers != [wanted]:
                    for t in timers:
                        self._handle.deleteTimer(t)
                    self._handle.registerTimer(wanted)
            if len(out):
                yield out

        def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[pd.DataFrame]:
            out = self._run(_no_rows(), timerValues)
            # (Spark deletes the timer that fired, this bucket's only one, after this call.)
            self._handle.registerTimer(max(timerValues.getCurrentWatermarkInMs(), 0) + 1)
            if len(out):
                yield out

        def _run(self, batch: pd.DataFrame, timerValues: Any) -> pd.DataFrame:
            with _no_cycle_collection():
                snapshot = pickle.loads(self._state.get()[0]) if self._state.exists() else None
                with user_calls(f"operator {program.uid}"):
                    out, snap = run_bucket(
                        program,
                        snapshot,
                        batch,
                        spark_watermark=timerValues.getCurrentWatermarkInMs(),
                        processing_time=timerValues.getCurrentProcessingTimeInMs(),
                    )
                if snap is None:
                    self._state.clear()
                else:
                    self._state.update((dump_snapshot(snap),))
            return out

        def close(self) -> None:
            pass

    return BucketProcessor()


def dump_snapshot(snap: dict[str, Any]) -> bytes:
    """A bucket's snapshot as bytes: pickle, or cloudpickle where state holds an instance of a class
    defined in the job's script (``__main__``: a class a Spark worker cannot import by name, which
    cloudpickle carries by value). ``pickle.loads`` reads both."""
    try:
        return pickle.dumps(snap, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        import cloudpickle

        return cloudpickle.dumps(snap, protocol=pickle.HIGHEST_PROTOCOL)


@functools.cache
def _no_rows() -> pd.DataFrame:
    """A bucket's batch without rows (a run that a timer, not an element, started); built once, when first needed."""
    return pd.DataFrame({c: pd.Series(dtype=object) for c in (*CONTROL_COLUMNS, SIDE)})


def batch_function(program: Program) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """For a bounded run (``applyInPandas`` per bucket): every element, then watermark +infinity."""

    def run(batch: pd.DataFrame) -> pd.DataFrame:
        _freeze_worker_heap()
        with _no_cycle_collection(), user_calls(f"operator {program.uid}"):
            out, _ = run_bucket(program, None, batch, spark_watermark=None, processing_time=None, final=True)
        # A bucket without output: pandas makes its empty columns float64, which Arrow turns into a
        # ChunkedArray (not an Array) for a string column, and Spark fails; empty object columns convert.
        return out if len(out) else out.astype(object)

    return run
