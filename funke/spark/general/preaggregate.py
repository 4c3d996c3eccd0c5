"""Pre-aggregation on the general path: a batch's elements of a key and pane (or pre-merged session)
enter the window operator as one :class:`Partial` where the result cannot tell (``PreAggregate``),
inside a bucket (``elements_of``) or before the shuffle to the buckets (``pre_shuffle``, ``pre_shuffled``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from funke.semantics.functions import Partial
from funke.spark.general.buckets import one_by_one, python_list
from funke.spark.general.program import BUCKET, CONTROL, PT, SEQ, TS, WM, PreAggregate, Program
from funke.spark.lazy import OnFirstUse

#: pandas and numpy on first use (``funke.spark.lazy``): the driver-side planner of transformWithState needs neither.
np: Any = OnFirstUse("numpy", "np", __name__)
pd: Any = OnFirstUse("pandas", "pd", __name__)

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


def elements_of(program: Program, elements: pd.DataFrame, watermark: int, convert: bool) -> Iterator[tuple[Any, Any, int | None]]:
    """(key, value, timestamp) in arrival order; on-time elements pre-aggregated where allowed."""
    pre = program.preaggregate
    if pre is not None and PARTIAL_N in elements:  # aggregated before the shuffle
        yield from _as_partials(program.keys, pre, elements)
        return
    stamps = elements[TS] if TS in elements else pd.Series([None] * len(elements), index=elements.index)
    if pre is None or stamps.isna().any():
        yield from one_by_one(program, elements, convert)
        return
    on_time = (stamps > watermark).to_numpy()
    singles = elements[~on_time]
    items: list[tuple[int, Any, Any, int | None]] = []
    if len(singles):
        positions = np.flatnonzero(~on_time)
        for pos, item in zip(positions, one_by_one(program, singles, convert), strict=True):
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
            accs.append(list(zip(python_list(parts[names[0]]), parts[names[1]].tolist(), strict=True)))
        else:
            accs.append(python_list(parts[names[0]]))
    rows = list(zip(*accs, strict=True)) if accs else [()] * len(parts)
    columns = [python_list(parts[k]) for k in keys]
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


def pre_shuffled(elements: DataFrame, program: Program, now: Column) -> DataFrame:
    """``elements`` (``BUCKET``, ``TS``, the keys and the aggregated columns: only what the partials
    need crosses to Python) pre-aggregated per partition, bucket, key and pane before the shuffle
    (``PreAggregate.before_shuffle``): a few partial rows travel to the buckets instead of every
    element, with the control columns of element rows (``now``: their processing time)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import DoubleType, IntegralType, LongType, StructField, StructType

    pre = program.preaggregate
    assert pre is not None and pre.before_shuffle
    spark_types = {f.name: f.dataType for f in elements.schema.fields}
    fields = [StructField(c, spark_types[c]) for c in (BUCKET, TS, *program.keys)]
    fields.append(StructField(PARTIAL_N, LongType()))
    if program.same_batch_bound_ms is not None:
        fields.append(StructField(PARTIAL_MAX, spark_types[TS]))
    for i, (fn, column) in enumerate(pre.aggregates):
        names = partial_column(i, fn)
        if not names:
            continue
        t = spark_types[column]
        if fn in ("sum", "avg"):  # a sum carried as Python would hold it: integers exact, else a double
            t = LongType() if isinstance(t, IntegralType) else DoubleType()
        fields.append(StructField(names[0], t))
        if fn == "avg":
            fields.append(StructField(names[1], LongType()))
    schema = StructType(fields)
    partials = elements.mapInArrow(pre_shuffle(program, to_arrow_schema(schema)), schema)
    nothing = F.lit(None).cast("bigint")
    return partials.select(
        BUCKET, nothing.alias(SEQ), F.lit(False).alias(CONTROL), TS, nothing.alias(WM), now.alias(PT),
        *(f"`{f.name}`" for f in fields[2:]),
    )
