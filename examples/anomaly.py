"""Telemetry anomalies (Ericsson's case): a per-host baseline learned online, alerts to PostgreSQL.

Every host reports its CPU load (%) and request latency (ms) every 15 minutes. Both follow a
daily cycle (a "day" here is ``DAY_TICKS`` readings) around a level of the host's own, with
noise; at a known set of (host, reading) points an anomaly is injected: a CPU spike, a latency
spike, or both (:data:`ANOMALIES`). Nothing in the job knows where they are.

The job keys the readings by host and keeps, per host, a :class:`Baseline`: exponentially
weighted mean and variance of each metric (``river.stats.EWMean`` / ``EWVar``), which follow the
daily drift. ``fk.ml.online`` takes a host's readings in event-time order and scores each against its host's baseline *before* learning
from it: the score is the largest ``|x - mean| / std`` of the two metrics; a host's first
``WARM_UP`` readings only train. Readings scoring over ``THRESHOLD`` are alerts, written to
PostgreSQL exactly once (each micro-batch in one transaction with its marker)::

    funke services up postgres
    funke run examples.anomaly:job --events 4800

The baselines are keyed state: a job stopped with a savepoint and resumed goes on with every
host's baseline as it was (``funke stop --savepoint``, ``funke resume --from``).

The readings come from funke's generator (Spark computes row ``i`` from ``i``: replayable
by offset, so a resumed job reads on where it stopped); :func:`reading` computes the same row in
Python, to the bit, and :func:`reference` the scores plain Python gives.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

import funke as fk

SEED = 18
HOSTS = 8
#: 2024-01-01T00:00:00Z; a host reports every STEP_MS, a "day" is DAY_TICKS reports.
START_MS = 1_704_067_200_000
STEP_MS = 15 * 60_000
DAY_TICKS = 96
#: The baseline: weight of the newest reading in the level and in the spread, the largest deviation it
#: learns from (in standard deviations); readings that only train; the alert level (standard deviations).
LEVEL_FADING, SPREAD_FADING, CLIP = 0.3, 0.05, 3.0
WARM_UP, THRESHOLD = 24, 5.0
SCHEMA = "host string, ts timestamp, cpu double, latency_ms double, i bigint"

_rnd = random.Random(SEED)
#: Each host's level: CPU % and latency ms.
CPU_LEVEL = [round(_rnd.uniform(25, 55), 1) for _ in range(HOSTS)]
LATENCY_LEVEL = [round(_rnd.uniform(40, 120), 1) for _ in range(HOSTS)]
#: The daily cycle (added to every host's level), and noise tables of prime lengths (row i takes entry i % length).
CPU_DAY = [round(15 * math.sin(2 * math.pi * t / DAY_TICKS), 3) for t in range(DAY_TICKS)]
LATENCY_DAY = [round(20 * math.sin(2 * math.pi * (t - 6) / DAY_TICKS), 3) for t in range(DAY_TICKS)]
CPU_NOISE = [round(_rnd.gauss(0, 2.0), 3) for _ in range(1_009)]
LATENCY_NOISE = [round(_rnd.gauss(0, 4.0), 3) for _ in range(1_013)]


def _anomalies(count: int, ticks: int) -> dict[tuple[int, int], tuple[float, float]]:
    """``count`` (host, tick) points past the warm-up, at least a day apart on a host: (CPU, latency) added."""
    rnd = random.Random(SEED + 1)
    points: dict[tuple[int, int], tuple[float, float]] = {}
    while len(points) < count:
        host, tick = rnd.randrange(HOSTS), rnd.randrange(WARM_UP + 8, ticks)
        if any(h == host and abs(t - tick) < DAY_TICKS for h, t in points):
            continue
        kind = rnd.choice(("cpu", "latency", "both"))
        cpu = round(rnd.uniform(18, 35), 1) if kind != "latency" else 0.0
        latency = round(rnd.uniform(35, 80), 1) if kind != "cpu" else 0.0
        points[(host, tick)] = (cpu, latency)
    return dict(sorted(points.items()))


#: Injected anomalies over the first MAX_TICKS readings of each host: (host, tick) -> (CPU, latency) added.
MAX_TICKS = 1_000
ANOMALIES = _anomalies(40, MAX_TICKS)


def host(h: int) -> str:
    return f"host-{h}"


def reading(i: int) -> dict[str, Any]:
    """Row ``i`` of :func:`telemetry`, computed in Python: host ``i % HOSTS``'s reading number ``i // HOSTS``."""
    h, tick = i % HOSTS, i // HOSTS
    spike = ANOMALIES.get((h, tick), (0.0, 0.0))
    cpu = CPU_LEVEL[h] + CPU_DAY[tick % DAY_TICKS] + CPU_NOISE[i % len(CPU_NOISE)] + spike[0]
    latency = LATENCY_LEVEL[h] + LATENCY_DAY[tick % DAY_TICKS] + LATENCY_NOISE[i % len(LATENCY_NOISE)] + spike[1]
    return {"host": host(h), "ts": START_MS + tick * STEP_MS, "cpu": cpu, "latency_ms": latency, "i": i}


def injected(events: int) -> set[tuple[str, int]]:
    """The anomalies among the first ``events`` readings, as (host, reading index ``i``)."""
    return {(host(h), t * HOSTS + h) for h, t in ANOMALIES if t * HOSTS + h < events}


def _table(values: list[float], index: str) -> str:
    """Spark SQL: entry ``index`` (0-based) of ``values``, as doubles written exactly (``1.5D``)."""
    return f"element_at(array({', '.join(f'{v!r}D' for v in values)}), cast({index} as int) + 1)"


def _spikes(which: int) -> str:
    points = {t * HOSTS + h: v[which] for (h, t), v in ANOMALIES.items() if v[which]}
    return f"coalesce(element_at(map({', '.join(f'{i}L, {v!r}D' for i, v in points.items())}), i), 0D)"


def telemetry(events: int, *, rate: float | None = None, rows_per_batch: int = 800) -> Any:
    """The readings as funke's generator: row ``i`` equals :func:`reading` ``(i)``, to the bit
    (the same doubles, added in the same order)."""
    if events > HOSTS * MAX_TICKS:
        raise fk.PlanError(f"examples.anomaly: at most {HOSTS * MAX_TICKS} events (the anomalies are placed in those)")
    tick = f"(i div {HOSTS})"
    return fk.sources.generator(
        {
            "host": f"concat('host-', cast(i % {HOSTS} as string))",
            "ts": f"timestamp_millis({START_MS}L + {tick} * {STEP_MS}L)",
            "cpu": f"{_table(CPU_LEVEL, f'i % {HOSTS}')} + {_table(CPU_DAY, f'{tick} % {DAY_TICKS}')}"
            f" + {_table(CPU_NOISE, f'i % {len(CPU_NOISE)}')} + {_spikes(0)}",
            "latency_ms": f"{_table(LATENCY_LEVEL, f'i % {HOSTS}')} + {_table(LATENCY_DAY, f'{tick} % {DAY_TICKS}')}"
            f" + {_table(LATENCY_NOISE, f'i % {len(LATENCY_NOISE)}')} + {_spikes(1)}",
            "i": "i",
        },
        schema=SCHEMA,
        events=events,
        rows_per_second=rate,
        rows_per_batch=rows_per_batch,
    )


class Baseline:
    """A river-style anomaly detector, per metric: the level (an exponentially weighted mean, quick to
    follow the daily drift) and the spread of readings around it (an exponentially weighted mean of
    squared deviations, slower, and robust: a deviation counts at most ``CLIP`` standard deviations,
    so a spike hardly widens it). A reading's score is its largest deviation, in standard deviations."""

    def __init__(self, level_fading: float = LEVEL_FADING, spread_fading: float = SPREAD_FADING) -> None:
        self.level_fading, self.spread_fading = level_fading, spread_fading
        self.level: dict[str, Any] = {}
        self.spread: dict[str, Any] = {}  # of squared deviations

    def learn_one(self, x: dict[str, float]) -> None:
        from river import stats

        for name, v in x.items():
            if name not in self.level:
                self.level[name], self.spread[name] = stats.EWMean(self.level_fading), stats.EWMean(self.spread_fading)
                self.level[name].update(v)
                continue
            deviation = v - self.level[name].get()
            if self.spread[name].get() > 0:
                limit = CLIP * math.sqrt(self.spread[name].get())
                deviation = max(-limit, min(limit, deviation))
            self.spread[name].update(deviation * deviation)
            self.level[name].update(self.level[name].get() + deviation)

    def score_one(self, x: dict[str, float]) -> float:
        scores = [0.0]
        for name, v in x.items():
            if name in self.level and self.spread[name].get() > 0:
                scores.append(abs(v - self.level[name].get()) / math.sqrt(self.spread[name].get()))
        return max(scores)

    def __repr__(self) -> str:
        parts = (f"{k}: {m.get():.2f} ± {math.sqrt(self.spread[k].get()):.2f}" for k, m in self.level.items())
        return f"Baseline({', '.join(parts)})"


def scorer() -> fk.ml.OnlineModel:
    return fk.ml.online(Baseline, features=["cpu", "latency_ms"], output="score", warm_up=WARM_UP, order="event_time")


def build(env: fk.StreamEnvironment, source: Any) -> fk.DataStream:
    """Every reading with its score (null during its host's warm-up)."""
    # a micro-batch's readings come from several partitions: the baseline takes a host's in event-time order
    readings = env.from_source(
        source,
        fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(STEP_MS)).with_timestamp_assigner("ts"),
        uid="telemetry",
    )
    model = scorer()
    return readings.key_by("host").process(model, uid="baseline")


def alerts(scored: fk.DataStream) -> fk.DataStream:
    return scored.filter(fk.col("score") > THRESHOLD)


def reference(events: int) -> Iterator[dict[str, Any]]:
    """Each reading with the score plain Python gives it (the job's, by construction)."""
    baselines: dict[str, Baseline] = {}
    seen: dict[str, int] = {}
    for i in range(events):
        r = reading(i)
        b = baselines.setdefault(r["host"], Baseline())
        x = {"cpu": r["cpu"], "latency_ms": r["latency_ms"]}
        score = b.score_one(x) if seen.get(r["host"], 0) >= WARM_UP else None
        b.learn_one(x)
        seen[r["host"]] = seen.get(r["host"], 0) + 1
        yield {**r, "score": score}


def job(
    events: int | None = 4_800,
    output: str | None = None,
    rate: float | None = None,
    dsn: str | None = None,
    table: str = "anomaly_alerts",
    spark: Any = None,
    checkpoint_dir: str | None = None,
    rows_per_batch: int = 1_600,
) -> fk.StreamEnvironment:
    """``funke run examples.anomaly:job --events N [--rate R]``: alerts into PostgreSQL ``table``
    (``dsn``: funke's local server), or as Parquet in ``--output DIR``."""
    if events is None:
        raise fk.PlanError(f"examples.anomaly:job needs --events N (at most {HOSTS * MAX_TICKS})")
    from funke.services import POSTGRES_DSN

    env = fk.StreamEnvironment(app="anomaly", spark=spark, checkpoint_dir=checkpoint_dir)
    sink = fk.sinks.files(output, overwrite=True) if output else fk.sinks.postgres(table, dsn=dsn or POSTGRES_DSN)
    alerts(build(env, telemetry(events, rate=rate, rows_per_batch=rows_per_batch))).sink_to(sink, uid="alerts")
    return env


if __name__ == "__main__":
    job().execute().wait()
