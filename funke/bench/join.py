"""``funke bench join``: funke's interval join (native and general path) against a hand-written PySpark stream-stream join.

The same events for both systems: two generated streams of ``events`` rows each ("auctions"
and "bids"), row ``i`` a pure function of ``i`` (key ``i % keys``, time ``BASE + i`` ms minus a
jitter below the watermark bound, so no row is late). Pairs of one key with
``bid time - auction time`` in ``[LOWER, UPPER]`` are written to Parquet by Spark's file sink.

* funke (native): ``auctions.key_by("k").interval_join(bids.key_by("k")).between(...)
  .on_path("native").select(...)`` over two ``fk.sources.generator`` s (Spark's join).
* funke general: the same join without ``on_path`` (the default), which runs Flink's interval
  join operator on funke's two-input general path, its watermark on funke's clock.
* plain PySpark: what Spark's guide shows: two ``rate-micro-batch`` streams with the same
  column expressions, ``withWatermark`` on each, an inner join on the key with the time-range
  condition, append mode, the file sink. No funke code runs in the query.

Both outputs must hold exactly the pairs a numpy computation finds (count and a checksum
of the pairs), and each other's (``exceptAll`` both ways), else ``BenchMismatchError``.
Events/s counts both streams' rows over the wall time from start to the last pair written.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from funke.bench.measure import finish_within
from funke.bench.plain import parquet_until_read, rate_events
from funke.bench.ysb import BenchMismatchError
from funke.errors import PlanError

BASE_MS = 1_700_000_000_000
LOWER_MS, UPPER_MS = -500, 500
BOUND_MS = 1_000
#: Jitter below the bound: with one row per millisecond on each side, no row is ever late.
JITTER = {"auction": (7_919, 997), "bid": (104_729, 991)}
CHECKSUM_MOD = 2_147_483_647


def _time_sql(side: str) -> str:
    mult, mod = JITTER[side]
    return f"{BASE_MS} + i - ((i * {mult}) % {mod})"


def _columns(side: str, keys: int) -> dict[str, str]:
    return {"k": f"i % {keys}", "t": f"timestamp_millis({_time_sql(side)})", "id": "i"}


@dataclass(frozen=True)
class JoinRun:
    system: str
    events: int  # both streams' rows
    wall_s: float
    pairs: int
    checksum: int

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else 0.0


@dataclass(frozen=True)
class JoinBench:
    events: int  # per stream
    keys: int
    rows_per_batch: int
    reference_pairs: int
    funke_runs: tuple[JoinRun, ...]
    plain_runs: tuple[JoinRun, ...]
    #: The general path's runs (empty when not measured).
    general_runs: tuple[JoinRun, ...] = ()

    @property
    def round_ratios(self) -> tuple[float, ...]:
        return tuple(a.events_per_s / b.events_per_s for a, b in zip(self.funke_runs, self.plain_runs, strict=True))

    @property
    def ratio(self) -> float:
        return statistics.median(self.round_ratios)

    @property
    def general_ratio(self) -> float | None:
        """The general path over plain PySpark, median of the rounds' ratios."""
        if not self.general_runs:
            return None
        return statistics.median(a.events_per_s / b.events_per_s for a, b in zip(self.general_runs, self.plain_runs, strict=True))

    def median(self, system: str) -> JoinRun:
        pick = {"funke": self.funke_runs, "funke general": self.general_runs}.get(system, self.plain_runs)
        runs = sorted(pick, key=lambda r: r.events_per_s)
        return runs[len(runs) // 2]


def reference(events: int, keys: int) -> tuple[int, int]:
    """The pairs' count and checksum, in numpy: per auction, the bids of its key within the interval."""
    i = np.arange(events, dtype=np.int64)
    times = {side: BASE_MS + i - ((i * m) % mod) for side, (m, mod) in JITTER.items()}
    k = i % keys
    # bids sorted by (key, time); each auction's partners are one contiguous run of them
    order = np.lexsort((times["bid"], k))
    span = np.int64(1) << 42  # times differ by far less than this within the run
    bid_pos = k[order] * span + (times["bid"][order] - BASE_MS)
    auction_pos = k * span + (times["auction"] - BASE_MS)
    lo = np.searchsorted(bid_pos, auction_pos + LOWER_MS, side="left")
    hi = np.searchsorted(bid_pos, auction_pos + UPPER_MS, side="right")
    counts = hi - lo
    total = int(counts.sum())
    auction_ids = np.repeat(i, counts)
    starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
    bid_ids = order[starts + np.arange(total)]
    checksum = int(((auction_ids * 1_000_003 + bid_ids) % CHECKSUM_MOD).sum())
    return total, checksum


def _checksum(spark: Any, path: str) -> tuple[int, int]:
    from pyspark.sql import functions as F

    df = spark.read.parquet(path)
    row = df.agg(F.count(F.lit(1)).alias("n"), F.sum((F.col("aid") * 1_000_003 + F.col("bid")) % CHECKSUM_MOD).alias("s")).first()
    return int(row["n"]), int(row["s"] or 0)


def run_funke(spark: Any, events: int, keys: int, rows_per_batch: int, workdir: Path, timeout_s: float, *, general: bool = False) -> JoinRun:
    import funke as fk

    env = fk.StreamEnvironment(app="join-bench", spark=spark, checkpoint_dir=str(workdir / "checkpoint"))
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(BOUND_MS)).with_timestamp_assigner("t")
    schema = "k bigint, t timestamp, id bigint"
    streams = {
        side: env.from_source(
            fk.sources.generator(_columns(side, keys), schema=schema, events=events, rows_per_batch=rows_per_batch), wm
        )
        for side in JITTER
    }
    joined = (
        streams["auction"]
        .key_by("k")
        .interval_join(streams["bid"].key_by("k"))
        .between(fk.milliseconds(LOWER_MS), fk.milliseconds(UPPER_MS))
    )
    if not general:
        joined = joined.on_path("native")
    pairs = joined.select("left.k", aid="left.id", bid="right.id", at="left.t", bt="right.t")
    out = str(workdir / "out")
    pairs.sink_to(fk.sinks.files(out), uid="pairs")
    wall = finish_within(env, timeout_s, "funke's interval join")
    n, s = _checksum(spark, out)
    return JoinRun("funke general" if general else "funke", 2 * events, wall, n, s)


def run_funke_general(spark: Any, events: int, keys: int, rows_per_batch: int, workdir: Path, timeout_s: float) -> JoinRun:
    return run_funke(spark, events, keys, rows_per_batch, workdir, timeout_s, general=True)


def run_plain(spark: Any, events: int, keys: int, rows_per_batch: int, workdir: Path, timeout_s: float) -> JoinRun:
    """The join as a Spark user writes it (see the module's docstring)."""
    from pyspark.sql import functions as F

    def stream(side: str) -> Any:
        return rate_events(spark, events, rows_per_batch, _columns(side, keys), BOUND_MS)

    a, b = stream("auction").alias("a"), stream("bid").alias("b")
    cond = (
        (F.col("a.k") == F.col("b.k"))
        & (F.col("b.t") >= F.col("a.t") + F.expr(f"INTERVAL '{LOWER_MS / 1000:.3f}' SECOND"))
        & (F.col("b.t") <= F.col("a.t") + F.expr(f"INTERVAL '{UPPER_MS / 1000:.3f}' SECOND"))
    )
    pairs = a.join(b, cond, "inner").select(
        F.col("a.k").alias("k"),
        F.col("a.id").alias("aid"),
        F.col("b.id").alias("bid"),
        F.col("a.t").alias("at"),
        F.col("b.t").alias("bt"),
    )
    out = str(workdir / "out")
    wall = parquet_until_read(spark, pairs, events, out, str(workdir / "checkpoint"), timeout_s)
    n, s = _checksum(spark, out)
    return JoinRun("plain PySpark", 2 * events, wall, n, s)


def run_join_bench(
    spark: Any,
    *,
    events: int = 2_000_000,
    keys: int = 1_000,
    rows_per_batch: int = 50_000,
    rounds: int = 1,
    warmup: bool = True,
    general: bool = True,
    timeout_s: float | None = None,
    on_step: Callable[[str], None] | None = None,
) -> JoinBench:
    """Every system over the same events, ``rounds`` times each, alternating the order; results checked.

    ``general``: also the interval join on funke's general path (the default, without ``on_path("native")``)."""
    if events <= 0 or keys <= 0 or rows_per_batch <= 0 or rounds <= 0:
        raise PlanError(
            f"events, keys, rows per batch and rounds must be positive, got {events}, {keys}, {rows_per_batch}, {rounds}"
        )
    step = on_step or (lambda _: None)
    timeout = timeout_s or 300 + events / 5_000
    systems: dict[str, Callable[..., JoinRun]] = {"funke": run_funke, "plain PySpark": run_plain}
    if general:
        systems["funke general"] = run_funke_general
    step(f"reference: the pairs of {events:,} auctions and {events:,} bids over {keys:,} keys, in numpy")
    expected = reference(events, keys)
    workdir = Path(tempfile.mkdtemp(prefix="funke-bench-join-"))
    runs: dict[str, list[JoinRun]] = {name: [] for name in systems}
    mismatches: list[str] = []
    try:
        if warmup:
            for name, fn in systems.items():
                small = min(events, max(rows_per_batch, 100_000))
                step(f"warm-up: {name}, {small:,} events a stream (JIT, code generation)")
                fn(spark, small, keys, rows_per_batch, workdir / f"{name}-warm-up".replace(" ", "-"), timeout)
        for r in range(rounds):
            order = list(systems) if r % 2 == 0 else list(systems)[::-1]
            for name in order:
                step(f"{name}: {events:,} events a stream, {rows_per_batch:,} per micro-batch (round {r + 1} of {rounds})")
                path = workdir / f"{name}-{r}".replace(" ", "-")
                run = systems[name](spark, events, keys, rows_per_batch, path, timeout)
                runs[name].append(run)
                if (run.pairs, run.checksum) != expected:
                    mismatches.append(
                        f"{name} wrote {run.pairs:,} pairs (checksum {run.checksum}); numpy finds {expected[0]:,} ({expected[1]})"
                    )
            plain = spark.read.parquet(str(workdir / f"plain-PySpark-{r}" / "out"))
            for name in systems:
                if name == "plain PySpark":
                    continue
                ours = spark.read.parquet(str(workdir / f"{name}-{r}".replace(" ", "-") / "out")).select(*plain.columns)
                if ours.exceptAll(plain).limit(1).count() or plain.exceptAll(ours).limit(1).count():
                    mismatches.append(f"round {r + 1}: {name}'s pairs and plain PySpark's differ")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if mismatches:
        raise BenchMismatchError("the benchmark's results are wrong, so its figures are not kept:\n- " + "\n- ".join(mismatches))
    return JoinBench(
        events, keys, rows_per_batch, expected[0], tuple(runs["funke"]), tuple(runs["plain PySpark"]), tuple(runs.get("funke general", ()))
    )


def summary(result: JoinBench) -> str:
    f, p = result.median("funke"), result.median("plain PySpark")
    rounds = f" (median of rounds {', '.join(f'{x:.2f}' for x in result.round_ratios)})" if len(result.round_ratios) > 1 else ""
    return (
        f"{result.events:,} auctions + {result.events:,} bids, {result.keys:,} keys, {result.rows_per_batch:,} rows per micro-batch "
        f"a stream, interval [{LOWER_MS}, {UPPER_MS}] ms, {result.reference_pairs:,} pairs (exact in every run): funke native "
        f"{f.events_per_s:,.0f} events/s ({f.wall_s:.1f} s), plain PySpark {p.events_per_s:,.0f} events/s ({p.wall_s:.1f} s), "
        f"funke/plain **{result.ratio:.2f}**{rounds}"
    ) + _general_summary(result)


def _general_summary(result: JoinBench) -> str:
    if result.general_ratio is None:
        return ""
    g = result.median("funke general")
    return f"; general path (the default) {g.events_per_s:,.0f} events/s ({g.wall_s:.1f} s), general/plain **{result.general_ratio:.2f}**"
