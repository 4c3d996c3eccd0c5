"""A user ``WatermarkGenerator`` on Spark: one stateful operator that sees the whole stream.

Every row of the watermarked stream (besides going on downstream) also goes, with its
position, to one ``transformWithStateInPandas`` group, where the generator (pickled in the
group's state between micro-batches) gets the batch's records in Spark's read order, then one
``on_periodic_emit``. A heartbeat row makes it run every micro-batch, records or not. Its one
output row per micro-batch is the watermark, in the shape of a test script's time rows
(``SCRIPT_WM``, ``SCRIPT_PT``): the general-path operators downstream take it as their
control rows, in the same micro-batch, after the batch's elements.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from funke.semantics.generators import GeneratorRun, make_generator
from funke.semantics.time import MIN_WATERMARK
from funke.spark.datasources import EOS
from funke.spark.lazy import OnFirstUse
from funke.spark.sources import SCRIPT_PT, SCRIPT_WM

#: pandas on first use (``funke.spark.lazy``): the driver-side planner of transformWithState needs none.
pd: Any = OnFirstUse("pandas", "pd", __name__)

_KEY, _POS, _TS, _END, _BEAT = "fk_gen", "fk_gen_pos", "fk_gen_ts", "fk_gen_end", "fk_gen_beat"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INTEGRAL = frozenset({"byte", "short", "integer", "long"})


def control_frame(
    spark: SparkSession, rows: DataFrame, column: str, usable: Column, end: Column | None, supplier: Any
) -> DataFrame:
    """The generator's watermark, one row per micro-batch (``SCRIPT_WM``, ``SCRIPT_PT``).

    ``rows``: the stream with its event time in ``column`` (a timestamp); ``usable``: the rows
    whose event time is valid (the others are dead letters, which Flink's generator would not
    see either); ``end``: true on a finite input's end-of-input row.
    """
    make_generator(supplier)  # a supplier that does not make a generator fails here, not in a task
    values = [f for f in rows.schema.fields if f.name != EOS]
    kinds = {}
    for f in values:
        t = f.dataType.typeName()
        kinds[f.name] = "ts" if t in ("timestamp", "timestamp_ntz") else ("int" if t in _INTEGRAL else "")
    elements = rows.where(usable).select(
        F.lit(0).alias(_KEY),
        F.lit(0).cast("bigint").alias(_POS),
        F.unix_millis(F.col(column)).alias(_TS),
        (end if end is not None else F.lit(False)).alias(_END),
        F.lit(False).alias(_BEAT),
        *((F.unix_micros(F.col(f.name)) if kinds[f.name] == "ts" else F.col(f.name)).alias(f.name) for f in values),
    )
    elements = elements.mapInArrow(_positions, elements.schema)  # Spark's read order, kept through the shuffle
    beat = (
        spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).option("numPartitions", 1).load()
        .select(F.lit(0).alias(_KEY), F.lit(True).alias(_BEAT))
    )  # fmt: skip
    merged = elements.unionByName(beat, allowMissingColumns=True)
    out = merged.groupBy(_KEY).transformWithStateInPandas(_processor(supplier, kinds), f"`{SCRIPT_WM}` bigint", "Append", "None")
    return out.select(F.col(SCRIPT_WM), F.unix_millis(F.current_timestamp()).alias(SCRIPT_PT))


def _positions(batches: Iterator[Any]) -> Iterator[Any]:
    """Each row's place in Spark's read order: (source partition, position in it)."""
    import pyarrow as pa
    from pyspark import TaskContext

    ctx = TaskContext.get()
    next_pos = (ctx.partitionId() if ctx is not None else 0) << 40
    for batch in batches:
        i = batch.schema.get_field_index(_POS)
        positions = pa.array(range(next_pos, next_pos + batch.num_rows), type=pa.int64())
        next_pos += batch.num_rows
        yield batch.set_column(i, _POS, positions)


def run_batch(
    run: GeneratorRun | None, supplier: Any, kinds: dict[str, str], batch: pd.DataFrame
) -> tuple[GeneratorRun, int | None]:
    """One micro-batch through the generator (pure pandas): the run after it and the watermark (None = none yet)."""
    if run is None:
        run = GeneratorRun(make_generator(supplier))
    records = batch[~batch[_BEAT].eq(True)]
    ends = records[_END].eq(True)
    end = bool(ends.any())
    records = records[~ends]
    records = records.sort_values(_POS, kind="stable")
    wm = run.run_batch(_events(records, kinds), end_of_input=end)
    return run, (None if wm == MIN_WATERMARK else wm)


def _events(records: pd.DataFrame, kinds: dict[str, str]) -> Iterator[tuple[dict[str, Any], int]]:
    columns = {}
    for name, kind in kinds.items():
        s = records[name]
        if kind == "int" and s.dtype.kind == "f":  # nulls made pandas use floats
            s = s.astype("Int64")
        s = s.astype(object).where(s.notna(), None)
        if kind == "ts":
            s = s.map(lambda v: None if v is None else _EPOCH + timedelta(microseconds=int(v)))
        columns[name] = s.tolist()
    stamps = records[_TS].tolist()
    names = list(kinds)
    for i, ts in enumerate(stamps):
        yield {name: columns[name][i] for name in names}, int(ts)


def _processor(supplier: Any, kinds: dict[str, str]) -> Any:
    from pyspark import cloudpickle
    from pyspark.sql.streaming import StatefulProcessor

    class GeneratorProcessor(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self._state = handle.getValueState("generator", "run binary")

        def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
            frames = list(rows)
            batch = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            run = pickle.loads(self._state.get()[0]) if self._state.exists() else None
            run, wm = run_batch(run, supplier, kinds, batch)
            self._state.update((cloudpickle.dumps(run),))
            yield pd.DataFrame({SCRIPT_WM: pd.array([wm], dtype="Int64")})

        def close(self) -> None:
            pass

    return GeneratorProcessor()
