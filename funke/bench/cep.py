"""``funke bench cep``: a three-step pattern per key over generated events (issue 17).

The job: ``events`` events from funke's generator source, event ``i`` on key ``i mod keys``
(10 000 keys by default), each key seeing one event per second of event time, in order; an
``amount`` in 0..99 drawn by ``xxhash64(i)``. The pattern, per key, in event time::

    begin("a").where(amount < 10).followed_by("b").where(40 <= amount < 50)
              .followed_by("c").where(amount >= 90).within(5.5 s)

(a fraud-like rule: small, then medium, then large, within about five of the key's events),
``select`` giving ``(k, a, b, c)`` (the events' ``i``) per match, written as Parquet.

The matches must equal the reference before the figures count: the pure-Python automaton
(``funke.semantics.cep.NFA``, no Spark) run per key over the same events, computed by the
same expressions in a batch query. The events/s are Spark's steady micro-batch rate (the
first two micro-batches left out, as ``JobHandle.metrics`` counts it) and start to end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from funke.bench.measure import TOO_SMALL, steady_text
from funke.bench.ysb import BenchMismatchError

BASE_MS = 1_700_000_000_000
WITHIN_MS = 5_500
BOUND_MS = 1_000
SCHEMA = "i bigint, k bigint, amount int, ts timestamp"
OUTPUT = "k bigint, a bigint, b bigint, c bigint"
Match = tuple[int, int, int, int]


def columns(keys: int) -> dict[str, str]:
    """The events as Spark SQL expressions of the index ``i``: one event per key and second, in order."""
    return {
        "i": "i",
        "k": f"pmod(i, {keys})",
        "amount": "pmod(xxhash64(i), 100)",
        "ts": f"timestamp_millis({BASE_MS} + div(i * 1000, {keys}))",
    }


def timestamp_ms(i: int, keys: int) -> int:
    """Event ``i``'s event time in ms (``columns``' ``ts``)."""
    return BASE_MS + i * 1000 // keys


def is_small(e: Any) -> bool:
    return e["amount"] < 10


def is_medium(e: Any) -> bool:
    return 40 <= e["amount"] < 50


def is_large(e: Any) -> bool:
    return e["amount"] >= 90


#: The conditions as SQL (``--conditions sql``): the same tests as ``is_small``, ``is_medium``, ``is_large``.
SQL_CONDITIONS = ("amount < 10", "amount >= 40 AND amount < 50", "amount >= 90")
CONDITIONS = ("sql", "python")


def pattern(conditions: str = "python") -> Any:
    """Small, then (relaxed) medium, then (relaxed) large, within ``WITHIN_MS``; the conditions as
    Python functions or (``conditions="sql"``) as SQL, which lets Spark drop the events no
    condition accepts before the operator (``funke.cep.sql``)."""
    import funke as fk
    from funke.cep import Pattern

    if conditions not in CONDITIONS:
        raise ValueError(f"conditions must be one of {', '.join(CONDITIONS)}, got {conditions!r}")
    small, medium, large = SQL_CONDITIONS if conditions == "sql" else (is_small, is_medium, is_large)
    return (
        Pattern.begin("a").where(small)
        .followed_by("b").where(medium)
        .followed_by("c").where(large)
        .within(fk.milliseconds(WITHIN_MS))
    )  # fmt: skip


def as_row(match: dict[str, list[Any]]) -> dict[str, int]:
    a, b, c = match["a"][0], match["b"][0], match["c"][0]
    return {"k": a["k"], "a": a["i"], "b": b["i"], "c": c["i"]}


def build(env: Any, events: int, keys: int, rows_per_batch: int, conditions: str = "python") -> Any:
    """The matches as a stream: the generated events keyed by ``k`` through :func:`pattern`."""
    import funke as fk
    from funke.cep import CEP

    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(BOUND_MS)).with_timestamp_assigner("ts")
    src = fk.sources.generator(columns(keys), schema=SCHEMA, events=events, rows_per_batch=rows_per_batch)
    stream = env.from_source(src, wm, name="events", uid="events")
    return CEP.pattern(stream.key_by("k"), pattern(conditions)).select(as_row, output_schema=OUTPUT, uid="small-medium-large")


# -- the reference ------------------------------------------------------------------------------


def event_amounts(spark: Any, events: int, keys: int) -> Any:
    """``amount`` of every event, in ``i`` order (a numpy array), by the generator's own expression in a batch query."""
    frame = spark.range(events).withColumnRenamed("id", "i").selectExpr("i", f"{columns(keys)['amount']} AS amount")
    table = frame.orderBy("i").toPandas()
    if len(table) != events or (events and int(table["i"].iloc[-1]) != events - 1):
        raise BenchMismatchError(f"the reference read {len(table):,} events, not {events:,}")
    return table["amount"].to_numpy()


def reference_matches(amounts: Any, keys: int) -> set[Match]:
    """The matches of :func:`pattern` by the pure-Python automaton, run per key over the events in time order."""
    from funke.semantics.cep import NFA

    nfa = NFA.compile(pattern())
    found: set[Match] = set()
    n = len(amounts)
    for k in range(min(keys, n)):
        state = nfa.initial_state()
        for i in range(k, n, keys):
            e = {"i": i, "k": k, "amount": int(amounts[i])}
            for m in nfa.process(state, e, timestamp_ms(i, keys)).matches:
                row = as_row(m)
                found.add((row["k"], row["a"], row["b"], row["c"]))
        nfa.advance_time(state, 2**62)  # end of input: what is left times out (no pattern here completes on time)
    return found


def scan_matches(amounts: Any, keys: int) -> set[Match]:
    """The same matches by a plain scan (an independent check of the automaton on this pattern): with
    ``followed_by`` each small event takes the first medium after it and that the first large after
    it, and matches when the large one is less than ``WITHIN_MS`` after the small one."""
    found: set[Match] = set()
    n = len(amounts)
    for k in range(min(keys, n)):
        idx = range(k, n, keys)
        for pos, a in enumerate(idx):
            if not amounts[a] < 10:
                continue
            b = next((j for j in idx[pos + 1 :] if 40 <= amounts[j] < 50), None)
            c = None if b is None else next((j for j in range(b + keys, n, keys) if amounts[j] >= 90), None)
            if c is not None and timestamp_ms(c, keys) - timestamp_ms(a, keys) < WITHIN_MS:
                found.add((k, a, b, c))
    return found


# -- the run --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CepRun:
    """The job's figures and its checked output."""

    events: int
    keys: int
    rows_per_batch: int
    wall_s: float
    steady_events_per_s: int | None
    batch_ms_p50: int | None
    batch_ms_p99: int | None
    batches: int
    matches: int
    load: float
    conditions: str = "python"
    latency_mode: str = "micro-batch"

    @property
    def events_per_s(self) -> float:
        """Start to end: Spark's start of the query, every micro-batch, the end."""
        return self.events / self.wall_s if self.wall_s > 0 else 0.0


def run_cep_bench(
    spark: Any,
    events: int,
    keys: int = 10_000,
    *,
    rows_per_batch: int = 100_000,
    conditions: str = "sql",
    latency_mode: str = "micro-batch",
    timeout_s: float = 3_600,
    on_step: Callable[[str], None] = lambda s: None,
) -> CepRun:
    """The CEP job over ``events`` events of ``keys`` keys, streaming, its matches checked against the reference;
    raises ``BenchMismatchError`` (no figures) when they differ. ``conditions``: ``sql`` or ``python``
    (:func:`pattern`); the reference always runs the Python ones. ``latency_mode``: the environment's
    (``latency-first``: each bucket's matches leave in the micro-batch whose events complete them)."""
    import funke as fk

    if events <= 0 or keys <= 0:
        raise ValueError(f"the CEP bench needs events > 0 and keys > 0, got {events} and {keys}")
    pattern(conditions)  # refuses an unknown kind before any work
    root = tempfile.mkdtemp(prefix="funke-bench-cep-")
    try:
        out = os.path.join(root, "out")
        env = fk.StreamEnvironment(app="bench-cep", spark=spark, checkpoint_dir=os.path.join(root, "checkpoint"))
        env.set_latency_mode(latency_mode)
        build(env, events, keys, rows_per_batch, conditions).sink_to(fk.sinks.files(out), uid="matches")
        on_step(
            f"CEP job: {events:,} events over {keys:,} keys, {rows_per_batch:,} a micro-batch, {conditions} conditions, {latency_mode}"
        )
        started = time.monotonic()
        handle = env.execute(fresh=True)
        handle.wait(timeout=timeout_s)
        if not handle.done:
            handle.stop()
            raise BenchMismatchError(f"the CEP job did not finish within {timeout_s:.0f} s")
        wall = time.monotonic() - started
        m = handle.metrics()
        got = {tuple(int(x) for x in r) for r in spark.read.parquet(out).select("k", "a", "b", "c").collect()}
        on_step(f"reference: the pure-Python automaton per key over the same {events:,} events")
        want = reference_matches(event_amounts(spark, events, keys), keys)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    problems = check(got, want, events, m)
    if problems:
        raise BenchMismatchError("the CEP bench's matches are wrong, so its figures are not kept:\n- " + "\n- ".join(problems))
    return CepRun(
        events, keys, rows_per_batch, round(wall, 1), m.get("steady_rows_per_s"), m.get("steady_batch_ms_p50"), m.get("steady_batch_ms_p99"),
        int(m.get("batches") or 0), len(got), round(os.getloadavg()[0], 1), conditions, latency_mode,
    )  # fmt: skip


def check(got: set[Match], want: set[Match], events: int, metrics: dict[str, Any]) -> list[str]:
    """What is wrong with a run (empty: nothing): its matches against the reference, the events it read.

    >>> check({(1, 1, 2, 3)}, {(1, 1, 2, 3)}, 10, {"input_rows": 10})
    []
    >>> for p in check({(1, 1, 2, 3), (2, 0, 4, 6)}, {(1, 1, 2, 3), (1, 5, 6, 7)}, 10, {"input_rows": 9, "late_rows_dropped": 1}):
    ...     print(p)
    the job read 9 events, not 10
    the job dropped 1 events as late; the generator makes none late
    1 matches missing (e.g. [(1, 5, 6, 7)]), 1 not in the reference (e.g. [(2, 0, 4, 6)])
    """
    problems = []
    if metrics.get("input_rows") != events:
        problems.append(f"the job read {metrics.get('input_rows') or 0:,} events, not {events:,}")
    if metrics.get("late_rows_dropped"):
        problems.append(f"the job dropped {metrics['late_rows_dropped']:,} events as late; the generator makes none late")
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        problems.append(
            f"{len(missing):,} matches missing (e.g. {missing[:3]}), {len(extra):,} not in the reference (e.g. {extra[:3]})"
        )
    return problems


def summary(run: CepRun) -> str:
    """One line for docs/benchmarks.md.

    >>> print(summary(CepRun(1_000_000, 10_000, 100_000, 50.0, 25_000, 4_000, 4_500, 11, 7_000, 2.5)))
    1,000,000 events over 10,000 keys (100,000 a micro-batch, 11 batches), 3-step pattern (followed_by, within 5.5 s, python conditions, micro-batch mode): 7,000 matches equal to the pure-Python automaton per key; steady 25,000 events/s (micro-batch p50 / p99 4,000 / 4,500 ms), 20,000 events/s start to end (50.0 s); target ≥ 200,000 events/s: **0.12** of it; load 2.5 at the end
    """
    steady = run.steady_events_per_s  # (None: too few micro-batches to leave the first two out)
    target = f"**{steady / 200_000:.2f}** of it" if steady else TOO_SMALL
    return (
        f"{run.events:,} events over {run.keys:,} keys ({run.rows_per_batch:,} a micro-batch, {run.batches} batches), "
        f"3-step pattern (followed_by, within {WITHIN_MS / 1000:g} s, {run.conditions} conditions, {run.latency_mode} mode): "
        f"{run.matches:,} matches equal to the pure-Python "
        f"automaton per key; steady {steady_text(steady)} (micro-batch p50 / p99 {run.batch_ms_p50 or 0:,} / "
        f"{run.batch_ms_p99 or 0:,} ms), {run.events_per_s:,.0f} events/s start to end ({run.wall_s:.1f} s); "
        f"target ≥ 200,000 events/s: {target}; load {run.load} at the end"
    )
