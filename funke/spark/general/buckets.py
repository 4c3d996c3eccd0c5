"""A bucket's rows in and out (pure pandas; no Spark): the input frame Spark hands a bucket as the
operator's (key, value, timestamp) elements, and the records the operator emits as the tagged output frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from funke.plan.pytypes import as_row
from funke.semantics.functions import OutputRecord
from funke.semantics.window_operator import WindowResult
from funke.spark.general.program import COUNT, DROPPED, DUE, NULLS, OUT_SEQ, TAG, TS, Output, Program, carried_type, column_name
from funke.spark.lazy import OnFirstUse

#: pandas on first use (``funke.spark.lazy``): the driver-side planner of transformWithState does not need it.
pd: Any = OnFirstUse("pandas", "pd", __name__)
np: Any = OnFirstUse("numpy", "np", __name__)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


#: funke's integer types and their nullable pandas dtypes.
_INTEGERS = {"tinyint": "Int8", "smallint": "Int16", "int": "Int32", "bigint": "Int64"}


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


def python_list(series: pd.Series) -> list[Any]:
    return [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in series.tolist()]


def one_by_one(program: Program, elements: pd.DataFrame, convert: bool) -> Iterator[tuple[Any, Any, int | None]]:
    values = python_rows(elements, program, convert)
    stamps = _timestamps(elements) if TS in elements else [None] * len(values)
    key_of = program.key_of
    for value, ts in zip(values, stamps, strict=True):
        yield key_of(value), value, ts


def _timestamps(elements: pd.DataFrame) -> list[int | None]:
    """The elements' event times as ints (epoch ms), a missing one as None; one pass over the column."""
    s = elements[TS]
    missing = s.isna().to_numpy()
    if not missing.any():
        return s.to_numpy(dtype="int64").tolist()
    times = s.to_numpy(dtype="int64", na_value=0).tolist()
    return [None if m else t for t, m in zip(times, missing, strict=True)]


def python_rows(elements: pd.DataFrame, program: Program, convert: bool = False) -> list[dict[str, Any]]:
    """Rows as dicts of Python values (integers stay integers where nulls made pandas use floats;
    a null is None); with ``convert``, the timestamp columns (``program.micros``) as datetimes."""
    names = list(program.values)
    columns = []
    for c in names:
        values = _python_values(elements[c], program.types.get(c) in _INTEGERS)
        if (program.types.get(c) or "").startswith("array"):  # (pandas gives an ARRAY as a numpy array: a list, as PyFlink's)
            values = [_plain(v) for v in values]
        if convert and c in program.micros:
            values = [None if v is None else _EPOCH + timedelta(microseconds=v) for v in values]
        columns.append(values)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)] if names else [{} for _ in range(len(elements))]


def _plain(value: Any) -> Any:
    """A value of an ARRAY column as Python's: a numpy array as a list (of plain values), a numpy scalar as
    its Python value, a NaN that stands for NULL (pandas' missing value) as None."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _python_values(s: pd.Series, integer: bool) -> list[Any]:
    """A column's values as Python objects, a null as None (an ``integer`` column pandas made float: as ints)."""
    if integer and s.dtype.kind == "f":
        s = s.astype("Int64")
    values = s.tolist()
    nulls = s.isna().to_numpy()
    if nulls.any():
        values = [None if null else v for v, null in zip(values, nulls, strict=True)]
    return values


def max_or_none(frame: pd.DataFrame, column: str) -> int | None:
    if column not in frame or not len(frame):
        return None
    s = frame[column].dropna()
    return int(s.max()) if len(s) else None


def _from_user(v: Any) -> Any:
    if isinstance(v, datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=UTC)
        return (v - _EPOCH) // timedelta(microseconds=1)
    return v


def encode(program: Program, records: list[OutputRecord], dropped: int, due: int | None = None) -> pd.DataFrame:
    """Records to the operator's output frame (one column set per output, tagged); with
    ``program.beat``, then the run's ``DUE`` row (``due``: its next processing-time timer).

    Built column by column: the records' rows first (a side output nobody reads is dropped, as
    Flink drops it), each checked to have its output's columns, then each column in one pass."""
    outputs = program.outputs
    index = {o.label: i for i, o in enumerate(outputs)}
    labels: list[str] = []
    sides: list[int] = []
    rows: list[dict[str, Any]] = []
    for rec in records:
        label = "" if rec.tag is None else rec.tag.name
        i = index.get(label)
        if i is None:
            continue
        labels.append(label)
        sides.append(i)
        rows.append(_row_of(program, rec) if i == 0 else _as_dict(rec.value, outputs[i], program.uid))
    wanted = [{c for c, _ in o.columns} for o in outputs]
    for row, i in zip(rows, sides, strict=True):
        if not row.keys() >= wanted[i]:
            missing = [c for c, _ in outputs[i].columns if c not in row]
            raise ValueError(f"{program.uid}: output row {row!r} lacks column(s) {', '.join(missing)}")
    n = len(rows)
    tail = [(tag, count) for tag, count, want in ((DROPPED, dropped, bool(dropped)), (DUE, due, program.beat)) if want]
    data: dict[str, Any] = {
        TAG: labels + [tag for tag, _ in tail],
        OUT_SEQ: list(range(n + len(tail))),
        COUNT: [None] * n + [count for _, count in tail],
    }
    only = len(outputs) == 1
    for i, o in enumerate(outputs):
        for c, t in o.columns:
            values = [r.get(c) for r in rows] if only else [r.get(c) if side == i else None for r, side in zip(rows, sides, strict=True)]
            if any(isinstance(v, datetime) for v in values):  # (a datetime: epoch microseconds, as carried)
                values = [_from_user(v) for v in values]
            name = column_name(i, c)
            data[name] = _column(program.uid, name, carried_type(t), values + [None] * len(tail))
    return pd.DataFrame(data)


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
    if type(value) is dict:  # (the common case, without as_row's class checks)
        return value
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
            main_cols = [c for c, _ in program.outputs[0].columns if c not in row and c != program.window_time]
            row[main_cols[0] if main_cols else "value"] = inner
        if program.window_time is not None:  # (a reduced row's own time gives way to the window's)
            row[program.window_time] = _window_time(value)
        return row
    return _as_dict(value, program.outputs[0], program.uid)


#: The greatest epoch-millisecond magnitude whose microseconds fit a 64-bit integer (Long.MIN/MAX_VALUE do not).
_MS_IN_MICROS = (2**63 - 1) // 1000


def _window_time(result: WindowResult) -> int | None:
    """A window result's time in epoch microseconds: its window's last millisecond; a global (count) window's is
    the time of what fired it, as PyFlink stamps it (None without one, or past what a timestamp holds)."""
    if result.window_end is not None:
        return (result.window_end - 1) * 1000
    fired = result.fired_at
    return None if fired is None or abs(fired) > _MS_IN_MICROS else fired * 1000
