"""funke's Python data sources for Spark: replayable by offset, deterministic.

* ``funke_collection``: in-memory rows, ``rows_per_batch`` per micro-batch, then an
  end-of-input row (``__funke_eos``) so the watermark can jump to +infinity.
* ``funke_ticks``: index ranges ``[lo, hi)`` released at a fixed rate, or (``rate`` 0)
  as fast as Spark takes them in micro-batches sized to take about ``target_s`` each;
  read on the driver (Spark's simple stream reader); Spark expands them into rows
  natively (``explode(sequence(...))``), so Python never touches a row.
* ``funke_clock`` and ``funke_beat``: a general operator's time rows, one per bucket, with the
  watermark funke computes (every micro-batch), or only when the driver says one is due.
* ``funke_postgres``: a PostgreSQL table read whole (batch), for a lookup join: a streaming
  query reads it again in every micro-batch, so each batch joins the table as it is then.
"""

from __future__ import annotations

import base64
import pickle
import time
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
    SimpleDataSourceStreamReader,
)

EOS = "__funke_eos"
#: A watermark that says the input has ended (9999-12-31 UTC, the end-of-input row's time): a general
#: operator fires every timer on it, processing-time ones too.
END_OF_INPUT_MS = 253402214400000


def encode(obj: Any) -> str:
    return base64.b64encode(pickle.dumps(obj)).decode("ascii")


def decode(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))


class CollectionDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "funke_collection"

    def schema(self) -> str:
        return self.options["schema"]

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _CollectionStream(decode(self.options["batches"]))

    def reader(self, schema: Any) -> DataSourceReader:
        return _CollectionBatch(decode(self.options["batches"]))


class _CollectionStream(DataSourceStreamReader):
    """Offset = number of batches released. The last batch carries the end-of-input row."""

    def __init__(self, batches: list[list[tuple[Any, ...]]]):
        self.batches = batches

    def initialOffset(self) -> dict:
        return {"batch": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        begin = start["batch"] if start else 0
        return {"batch": min(len(self.batches), begin + 1)}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition(b) for b in range(start["batch"], end["batch"])]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        yield from self.batches[partition.value]

    def commit(self, end: dict) -> None:
        pass


class _CollectionBatch(DataSourceReader):
    def __init__(self, batches: list[list[tuple[Any, ...]]]):
        self.batches = batches

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(b) for b in range(len(self.batches))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        yield from self.batches[partition.value]


class _DriverSide(DataSource):
    """A streaming source read on the driver side only (Spark's simple stream reader): a
    micro-batch's few rows need no Python worker on an executor."""

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        from pyspark.errors import PySparkNotImplementedError

        raise PySparkNotImplementedError(errorClass="NOT_IMPLEMENTED", messageParameters={"feature": "streamReader"})


class _DriverFile(SimpleDataSourceStreamReader):
    """A reader of what the driver writes to a JSON file at ``path``, for ``buckets`` buckets."""

    def __init__(self, path: str, buckets: int):
        self.path, self.buckets = path, buckets

    def _state(self) -> dict | None:
        import json

        try:
            with open(self.path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None  # not written yet (or being replaced)

    def commit(self, end: dict) -> None:
        pass


class TicksDataSource(_DriverSide):
    """Ranges of row indexes at ``rate`` rows/s up to ``events`` (or forever)."""

    @classmethod
    def name(cls) -> str:
        return "funke_ticks"

    def schema(self) -> str:
        return "lo bigint, hi bigint"

    def simpleStreamReader(self, schema: Any) -> SimpleDataSourceStreamReader:
        o = self.options
        return _Ticks(
            float(o["rate"]),
            int(o["events"]) if o.get("events") not in (None, "", "None") else None,
            int(o["max_per_batch"]),
            int(o.get("parallelism", "2")),
            float(o.get("target_s", "0")),
            int(o.get("first", "1000000")),
        )


class _Ticks(SimpleDataSourceStreamReader):
    """Offsets (``{"i": next index}``) and ranges of ``funke_ticks``, read on the driver.

    A micro-batch is its ranges: at least ``parallelism`` of them, none over ``CHUNK``
    indexes; the query spreads them over the cores (``funke.spark.sources.generator_split``).
    """

    CHUNK = 65_536

    def __init__(
        self, rate: float, events: int | None, max_per_batch: int, parallelism: int, target_s: float = 0.0, first: int = 1_000_000
    ):
        self.rate, self.events, self.max_per_batch, self.parallelism = rate, events, max_per_batch, parallelism
        self.clock_start: tuple[float, int] | None = None
        self.sizer = BatchSizer(target_s, max_per_batch, first) if target_s > 0 else None

    def initialOffset(self) -> dict:
        return {"i": 0}

    def read(self, start: dict) -> tuple[Iterator[tuple[int, int]], dict]:
        end = {"i": self._end(start["i"])}
        return self.readBetweenOffsets(start, end), end

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple[int, int]]:
        lo, hi = start["i"], end["i"]
        step = min(self.CHUNK, max(1, -(-(hi - lo) // self.parallelism)))
        return iter([(a, min(hi, a + step)) for a in range(lo, hi, step)])

    def commit(self, end: dict) -> None:
        pass

    def _end(self, begin: int) -> int:
        """Where the micro-batch starting at ``begin`` ends (exclusive)."""
        now = time.monotonic()
        if self.sizer is not None:
            end = begin + self.sizer.next_rows(now)
        else:
            if self.clock_start is None:  # also after a restart: pace from where the checkpoint left off
                self.clock_start = (now, begin)
            t0, i0 = self.clock_start
            due = i0 + int((now - t0) * self.rate)
            end = max(begin, min(due, begin + self.max_per_batch))
        if self.events is not None:
            end = min(end, self.events + 1)  # index `events` is the end-of-input marker
        if self.sizer is not None:
            self.sizer.released(end - begin)
        return end


class BatchSizer:
    """Micro-batch sizes for a source that always has more: each batch sized to take about ``target_s``.

    The time between two offset requests is the previous micro-batch's duration (Spark asks
    for the next end offset when it plans the next batch). A batch that took longer than the
    target makes the next one smaller, a faster one makes it larger: by the square root of
    the ratio, at most twice or half, between ``MIN_ROWS`` and ``max_rows``. Spark's fixed
    cost per micro-batch (offset log, planning, state commit: a few hundred ms) is then
    spread over more rows under load, and the batches stay near the target when the cost per
    row changes.

    >>> s = BatchSizer(2.0, 10_000_000, first=1_000_000)
    >>> s.next_rows(0.0); s.released(1_000_000)
    1000000
    >>> s.next_rows(0.5)        # 1 M rows took 0.5 s: twice as many next
    2000000
    >>> s.released(2_000_000); s.next_rows(0.5 + 4.0)   # 2 M took 4 s: 1/sqrt(2) as many
    1414213
    """

    MIN_ROWS = 10_000

    def __init__(self, target_s: float, max_rows: int, first: int = 1_000_000):
        self.target_s, self.max_rows = target_s, max(self.MIN_ROWS, max_rows)
        self.rows = min(first, self.max_rows)
        self._asked: float | None = None
        self._last = 0

    def next_rows(self, now: float) -> int:
        if self._asked is not None and self._last > 0:
            took = max(now - self._asked, 1e-3)
            factor = min(2.0, max(0.5, (self.target_s / took) ** 0.5))
            self.rows = int(min(self.max_rows, max(self.MIN_ROWS, self._last * factor)))
        self._asked = now
        return self.rows

    def released(self, rows: int) -> None:
        """How many rows the batch just planned holds (fewer than asked at the end of input)."""
        self._last = rows


class ClockDataSource(_DriverSide):
    """funke's heartbeat with a watermark funke computed: one row per bucket per micro-batch that needs it.

    The watermark comes from a JSON file (``path``) that the driver rewrites after each
    micro-batch (``funke.runtime.watermarks``); the offset keeps it, so a replayed micro-batch
    gets the very rows it had. Where the file names the query's commit log, rows come only when
    the watermark or an input's maximum moved, or a processing-time timer or an input's
    idleness is due; otherwise in every micro-batch. Read on the driver side (a simple reader).
    """

    @classmethod
    def name(cls) -> str:
        return "funke_clock"

    def schema(self) -> str:
        return "fk_b int, fk_wm bigint"

    def simpleStreamReader(self, schema: Any) -> SimpleDataSourceStreamReader:
        return _Clock(self.options["path"], int(self.options["buckets"]))


class _Clock(_DriverFile):
    """Offsets ``{"batch": n, "wm": watermark or None, "run": .., "folds": k, "max": .., "id": uid}``
    (``max``: each input's maximum event time, for a restart); each micro-batch one row per bucket.

    A micro-batch's read waits (up to ``CLOCK_WAIT_S``) until the driver has folded in the
    micro-batch before it (``folds`` above the last read's, same run), so the watermark it
    carries is computed from every earlier micro-batch: Spark's own schedule, whatever the
    listener's delay. A run that does not match (the first read, or the first after a restart,
    whose driver counts afresh) takes the file as it is.
    """

    def initialOffset(self) -> dict:
        return {"batch": 0, "wm": None}

    def read(self, start: dict) -> tuple[Iterator[tuple[int, int | None]], dict]:
        state = self._state()
        if state is not None and state.get("commits"):
            return self._read_when_due(start, state)
        if state is not None and start.get("run") == state.get("run") and start.get("folds") is not None:
            deadline = time.monotonic() + CLOCK_WAIT_S
            while state is not None and state.get("folds", 0) <= start["folds"] and time.monotonic() < deadline:
                time.sleep(0.002)
                state = self._state() or state
        if state is None:
            end = {"batch": start["batch"] + 1, "wm": start.get("wm")}
        else:
            end = {"batch": start["batch"] + 1, "wm": state.get("watermark"), **{k: state.get(k) for k in ("run", "folds", "max", "id")}}
        return self.readBetweenOffsets(start, end), end

    def _read_when_due(self, start: dict, state: dict) -> tuple[Iterator[tuple[int, int | None]], dict]:
        """Time rows only in a batch that needs them: once every committed batch is folded in
        (up to ``CLOCK_WAIT_S``), when the watermark or an input's maximum moved since the last
        rows, at a new run, or when a processing-time timer or an input's idleness is due."""
        committed = _last_commit(state["commits"])
        deadline = time.monotonic() + CLOCK_WAIT_S
        while state.get("batch", -1) < committed and time.monotonic() < deadline:
            time.sleep(0.002)
            state = self._state() or state
        due, now = state.get("due"), int(time.time() * 1000)
        fired = due if due is not None and now >= due and due != start.get("fired") else None
        end = {"batch": start["batch"] + 1, "wm": state.get("watermark")}
        end.update({k: state.get(k) for k in ("run", "folds", "max", "id")})
        if all(start.get(k) == end[k] for k in ("run", "wm", "max")) and fired is None:
            return iter([]), start
        end["fired"] = fired if fired is not None else start.get("fired")
        return self.readBetweenOffsets(start, end), end

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple[int, int | None]]:
        return iter([(b, end["wm"]) for b in range(self.buckets)])


class BeatDataSource(_DriverSide):
    """funke's heartbeat for a general operator on Spark's watermark: one row per bucket, only when due.

    A bucket runs when it has elements, and (a Spark event-time timer each bucket keeps one
    millisecond past the watermark, ``funke.spark.general``) in every micro-batch that moves
    the watermark, Spark's own no-data batches included. The beat is for what Spark cannot
    see: the start of a run (every bucket sets its timer), the watermark's first move (Spark
    runs no batch for it), and a bucket's processing-time timer coming due. The driver
    (``funke.runtime.watermarks.Beat``) writes to a JSON file at ``path`` how many beats it
    wants and when the earliest processing-time timer is due; between those, this source
    has no new data and the query sits idle. Read on the driver side (a simple reader).
    """

    @classmethod
    def name(cls) -> str:
        return "funke_beat"

    def schema(self) -> str:
        return "fk_b int, fk_wm bigint"

    def simpleStreamReader(self, schema: Any) -> SimpleDataSourceStreamReader:
        return _Beat(self.options["path"], int(self.options["buckets"]))


class _Beat(_DriverFile):
    """Offsets ``{"beat": n, "run": .., "want": k, "fired": due, "end": bool}``: a new one (one row per
    bucket) when the driver's run is not the offset's (a start or restart), it wants more beats than the
    offset had (``want``), or a processing-time timer is due that no beat has fired yet. Without
    the driver's file (a Spark Connect server on another host) it beats every micro-batch.

    Each row's watermark (``fk_wm``) is null, or ``END_OF_INPUT_MS`` once the driver says the query's
    finite input has all ended (``end``): the operator then fires every timer."""

    def initialOffset(self) -> dict:
        return {"beat": 0}

    def read(self, start: dict) -> tuple[Iterator[tuple[int]], dict]:
        state = self._state()
        end = {"beat": start["beat"] + 1}
        if state is None:
            return self.readBetweenOffsets(start, end), end
        due = state.get("due")
        now = int(time.time() * 1000)
        # The watermark's first move, read from the commit log Spark wrote before this read
        # (no listener to wait for): Spark runs no batch for it.
        moved = bool(start.get("moved")) or (bool(state.get("commits")) and _next_watermark(state["commits"]) > 0)
        wanted = int(state.get("want", 0)) > int(start.get("want", 0))
        ended = bool(state.get("end")) != bool(start.get("end"))
        if state.get("run") != start.get("run") or wanted or moved != bool(start.get("moved")) or ended:
            fired = start.get("fired")
        elif due is not None and now >= due and due != start.get("fired"):
            fired = due
        else:
            return iter([]), start
        end.update(run=state.get("run"), want=int(state.get("want", 0)), fired=fired, moved=moved, end=bool(state.get("end")))
        return self.readBetweenOffsets(start, end), end

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple[int, int | None]]:
        wm = END_OF_INPUT_MS if end.get("end") else None
        return iter([(b, wm) for b in range(self.buckets)])


class PostgresDataSource(DataSource):
    """A PostgreSQL table's columns (``columns``: comma-separated, as the schema names them), read
    with psycopg in one partition. Options: ``dsn``, ``table``, ``columns``, ``schema`` (DDL)."""

    @classmethod
    def name(cls) -> str:
        return "funke_postgres"

    def schema(self) -> str:
        return self.options["schema"]

    def reader(self, schema: Any) -> DataSourceReader:
        return _PostgresRead(self.options["dsn"], self.options["table"], self.options["columns"].split(","))


class _PostgresRead(DataSourceReader):
    def __init__(self, dsn: str, table: str, columns: list[str]):
        self.dsn, self.table, self.columns = dsn, table, columns

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        import psycopg
        from psycopg import sql

        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(map(sql.Identifier, self.columns)), sql.Identifier(*self.table.split(".", 1))
        )
        with psycopg.connect(self.dsn, connect_timeout=10) as conn:
            yield from (tuple(row) for row in conn.execute(query))


def _next_watermark(commits: str) -> int:
    """The watermark (ms) Spark's last committed batch passes on to the next (0: none yet)."""
    import json
    import os

    last = _last_commit(commits)
    if last < 0:
        return 0
    try:
        with open(os.path.join(commits, str(last))) as f:
            lines = f.read().splitlines()
        return int(json.loads(lines[1]).get("nextBatchWatermarkMs", 0)) if len(lines) > 1 else 0
    except (OSError, ValueError):
        return 0


def _last_commit(commits: str) -> int:
    """The last batch in a query's commit log (a local directory; -1: none yet)."""
    import os

    try:
        return max((int(n) for n in os.listdir(commits) if n.isdigit()), default=-1)
    except OSError:
        return -1


#: How long a micro-batch waits for the driver's fold of the one before (a stalled listener
#: must not stall the job: past this, the watermark is the one last written).
CLOCK_WAIT_S = 30.0


def register(spark: Any) -> None:
    """Register funke's data sources with a session (idempotent)."""
    if getattr(spark, "_funke_sources_registered", False):
        return
    spark.dataSource.register(CollectionDataSource)
    spark.dataSource.register(TicksDataSource)
    spark.dataSource.register(ClockDataSource)
    spark.dataSource.register(BeatDataSource)
    spark.dataSource.register(PostgresDataSource)
    try:
        spark._funke_sources_registered = True
    except AttributeError:  # Spark Connect sessions may refuse attributes
        pass
