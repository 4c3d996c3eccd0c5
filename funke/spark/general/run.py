"""Running a bucket: ``run_bucket`` applies one micro-batch of a bucket to its operator (pure pandas; no
Spark); ``processor`` (streaming, ``transformWithStateInPandas``) and ``batch_function`` (a bounded run,
``applyInPandas``) are its Spark adapters. The schedule is the package's (``funke.spark.general``).
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from funke.semantics.functions import OutputRecord
from funke.semantics.time import MAX_WATERMARK, MIN_WATERMARK
from funke.spark.general.buckets import encode, exact_integers, max_or_none, named, one_by_one
from funke.spark.general.preaggregate import PARTIAL_MAX, elements_of
from funke.spark.general.program import CONTROL, CONTROL_COLUMNS, PT, SECOND_PREFIX, SEQ, SIDE, TS, WM, Program
from funke.spark.lazy import OnFirstUse
from funke.spark.user_errors import user_calls

#: pandas on first use (``funke.spark.lazy``): the driver-side planner of transformWithState does not need it.
pd: Any = OnFirstUse("pandas", "pd", __name__)


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
    if program.time_ordered and TS in elements and len(elements) > 1:  # (an element without a timestamp: Long.MIN_VALUE's place)
        elements = elements.sort_values(TS, kind="stable", na_position="first")

    pt = max_or_none(batch, PT)  # (the batch's time: on its element rows and its time rows)
    if pt is None and processing_time is not None and processing_time >= 0:
        pt = processing_time
    if pt is not None:
        records += op.advance_processing_time(pt)

    convert = program.user_rows and bool(program.micros)
    dropped_before = getattr(op, "num_late_records_dropped", 0)
    if len(elements):
        items = elements_of(program, elements, op.current_watermark, convert)
        if callable(getattr(op, "process_elements", None)):  # (one call for all: the keyed process operator's)
            records += op.process_elements(items)
        else:
            for key, value, ts in items:
                records += op.process_element(key, value, ts)

    wm = MAX_WATERMARK if final else max_or_none(control, WM)
    if (program.clock or program.beat) and wm is not None and wm >= _END_OF_INPUT_MS:  # (the beat's end of input)
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
    out = encode(program, records, dropped, _next_processing_time(op))
    snap = op.snapshot()
    if bound is not None and latest is not None:
        snap[LATEST] = latest
    return out, (None if _empty(snap) else snap)


#: A bucket's largest event time so far, in its snapshot (same-batch firing).
LATEST = "fk_latest"


def _largest_time(elements: pd.DataFrame, latest: int | None) -> int | None:
    """The largest of ``latest`` and the elements' event times (a partial row's: ``PARTIAL_MAX``)."""
    m = max_or_none(elements, PARTIAL_MAX if PARTIAL_MAX in elements else TS)
    if m is None:
        return latest
    return m if latest is None else max(latest, m)


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
    pt = max_or_none(batch, PT)  # (the batch's time: on its element rows and its time rows)
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
    merged: list[tuple[int, int, int, Any, Any, Any, int | None]] = []  # (BATCH mode: both inputs by timestamp)
    for side, view, feed in sides:
        rows = elements[elements[SIDE] == side]
        if not len(rows):
            continue
        if side == 1:  # (the first input's columns are there too, empty: the union put them in)
            rows = rows[[TS, *renamed]].rename(columns=renamed)
        convert = view.user_rows and bool(view.micros)
        if program.time_ordered and not program.second.broadcast:
            items = enumerate(one_by_one(view, rows, convert))
            merged += [(MIN_WATERMARK if ts is None else ts, side, i, feed, key, value, ts) for i, (key, value, ts) in items]
            continue
        if side == 0 and callable(getattr(op, "process_elements", None)):  # (after every broadcast row: one call)
            records += op.process_elements(list(one_by_one(view, rows, convert)))
            continue
        for key, value, ts in one_by_one(view, rows, convert):
            records += feed(key, value, ts)
    # Flink's BATCH execution merges a keyed two-input operator's sorted inputs by key and timestamp (ties: the
    # first input, then arrival); its broadcast input is read whole first, as above
    merged.sort(key=lambda item: item[:3])
    for _, _, _, feed, key, value, ts in merged:
        records += feed(key, value, ts)

    scripted = control[control[WM].notna()] if WM in control else control.iloc[0:0]
    combined = scripted[scripted[SIDE].isna()] if len(scripted) else scripted  # funke's clock: the operator's own
    if final:
        wm: int | None = MAX_WATERMARK
    elif len(combined) or program.clock:  # funke's clock: no row with a watermark yet means -infinity
        wm = max_or_none(combined, WM)
        wm = MAX_WATERMARK if wm is not None and wm >= _END_OF_INPUT_MS else wm
    elif len(scripted):
        for side in (0, 1):
            m = max_or_none(scripted[scripted[SIDE] == side], WM)
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
    out = encode(program, records, dropped, _next_processing_time(op))
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


def _empty(snap: dict[str, Any]) -> bool:
    """Nothing worth keeping: no state, timers, buffers or counts, and no watermark yet (the next
    batch's late check needs it)."""
    rest = (v for k, v in snap.items() if k != "watermark")
    return not any(rest) and snap.get("watermark", MIN_WATERMARK) == MIN_WATERMARK


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
