"""What ``set_latency_mode("realtime")`` runs, and why it refuses the rest: a table, read by the compiler,
``explain()`` and the tests.

Spark's real-time trigger runs a query as long-running tasks with a pipelined shuffle: a record
leaves milliseconds after it arrives instead of a micro-batch later. It runs only Spark's own
operators on an allowlist (Spark's ``RealTimeModeAllowlist``), reads only through Spark's Kafka
connector and writes only to its Kafka sink (at-least-once). So a job takes the mode when each of
its operators has a rule in ``RULES`` that allows it; anything else is refused while planning,
naming the operator and the reason, never run in micro-batches instead.

Semantics in this mode (``tests/spark/test_realtime.py`` checks each against the micro-batch run):

* A rolling aggregate (``key_by(...).sum/min/max/count``) emits one updated row per element, as
  Flink does: Spark's real-time aggregation updates its state and emits for every input row.
* A window aggregate is an upsert stream keyed by key and window: every element emits its
  window's updated aggregate (Flink's ``CountTrigger.of(1)``, Flink SQL's early fire with no
  delay); the last update of each window is the micro-batch run's result. A row is late against
  Spark's watermark as of the last real-time checkpoint, so fewer rows are dropped as late than in
  micro-batches (never ones the micro-batch run keeps).
* The Kafka sink is at-least-once: after a failure Spark replays from the last real-time
  checkpoint (the trigger's interval, ``checkpoint_interval``), so records written since then are
  written again. A keyed upsert (a window's or rolling aggregate's row, keyed by its key) written
  twice is the same row again: a consumer keeping the last value per key sees the exact result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from funke.errors import UnsupportedError
from funke.plan.capabilities import NATIVE_WINDOW_KINDS, split_watermark
from funke.plan.expr import Expr, ProcTime, Sql
from funke.plan.nodes import (
    SPARK_STATEFUL,
    Deduplicate,
    Filter,
    KeyBy,
    LookupJoin,
    Node,
    RollingAggregate,
    Select,
    Sink,
    Source,
    Union,
    Watermark,
    WindowAggregate,
    walk,
)

REALTIME = "real-time"

#: Why a node runs in real-time mode (explain()), per kind of node it allows.
ALLOWED_WHY = {
    Source: "Spark's Kafka connector under the real-time trigger: long-running tasks read each partition as records arrive",
    Watermark: "Spark withWatermark; Spark advances it at each real-time checkpoint",
    Select: "Spark expressions, record by record",
    Filter: "Spark expressions, record by record",
    Union: "Spark union, record by record",
    KeyBy: "the key of the aggregate after it: Spark's pipelined shuffle (records go on to the next stage as they come)",
    LookupJoin: "broadcast hash join with a static table, record by record",
    RollingAggregate: (
        "Spark's real-time aggregation (update mode): one updated row per element, as Flink's rolling aggregate "
        "(the other columns: the key's first element's for sum/min/max, the element's own for count)"
    ),
    WindowAggregate: (
        "Spark window aggregation in update mode: every element emits its window's updated aggregate, an upsert stream "
        "keyed by key and window (Flink's CountTrigger.of(1), Flink SQL's early fire); the last update of a window is "
        "the micro-batch result"
    ),
    Deduplicate: "Spark dropDuplicates in real time: a key's first element passes as it arrives, later ones are dropped",
    Sink: "Spark's Kafka sink under the real-time trigger: at-least-once (replays since the last real-time checkpoint)",
}


@dataclass(frozen=True)
class Refusal:
    """A node real-time mode cannot run: which, and what to do instead."""

    node: Node
    reason: str

    def message(self) -> str:
        return (
            f"set_latency_mode('realtime'): {self.node.label()} [{self.node.uid}] cannot run under Spark's real-time "
            f"trigger: {self.reason}; run the job in micro-batches (the default mode) or change that operator"
        )


def _source(node: Source) -> str | None:
    spec = node.spec
    if getattr(spec, "kind", None) != "kafka":
        return f"it reads {spec.describe()}, and the real-time trigger reads only Kafka, through Spark's Kafka connector"
    if node.scripted_time:
        return "a test script's time (TestStream) comes in micro-batches"
    why = spec.python_only(streaming=True)
    if why is not None:
        return f"it would be read by funke's Python data source ({why}), which the real-time trigger does not run"
    return None


def _watermark(node: Watermark) -> str | None:
    s = node.strategy
    if s.generator is not None:
        return "a WatermarkGenerator runs in Python between micro-batches"
    if s.ingestion_time:
        return "ingestion time is the micro-batch's start time, and a real-time batch lasts a whole checkpoint interval"
    if split_watermark(node):
        return (
            "its watermark is per Kafka partition (Flink's rule), which funke computes on the driver between micro-batches; "
            "give the source partition_watermarks=False to take Spark's watermark (one over all partitions)"
        )
    return None


def _lookup(node: LookupJoin) -> str | None:
    if node.table.loader is not None:
        return f"the table {node.table.describe()} is read by a data source the real-time trigger does not run; use a table of rows"
    return None


def _aggregated_before(node: Node) -> str | None:
    before = [x for x in walk(list(node.inputs)) if isinstance(x, (RollingAggregate, WindowAggregate))]
    if before:
        return f"it aggregates the updates of {before[-1].label()}, and Spark's update mode takes one aggregation per query"
    return None


def _rolling(node: RollingAggregate) -> str | None:
    if node.reduce_fn is not None:
        return "reduce() runs a Python function, outside Spark's real-time allowlist; use sum/min/max/count"
    return _aggregated_before(node)


def _window(node: WindowAggregate) -> str | None:
    a = node.assigner
    if a.kind not in NATIVE_WINDOW_KINDS or not a.is_event_time:
        return f"{a.describe()} runs on funke's general path (Python), outside Spark's real-time allowlist"
    reasons = {
        "a custom trigger": node.trigger is not None,
        "allowed lateness": bool(node.allowed_lateness_ms),
        "a late-data side output": node.late_tag is not None,
        "a Python window function or evictor": node.evictor is not None or node.function is not None,
        "on_path('general')": node.path_hint is not None,
    }
    named = [k for k, v in reasons.items() if v]
    if named:
        return f"{' and '.join(named)} run(s) on funke's general path (Python), outside Spark's real-time allowlist"
    return _aggregated_before(node)


#: Spark SQL that reads the clock: Spark fixes it when it plans a batch.
_CLOCK = re.compile(r"\b(current_timestamp|current_date|localtimestamp)\b|\bnow\s*\(", re.IGNORECASE)


def _reads_clock(e: Expr) -> bool:
    """Whether an expression reads the processing time (``PROCTIME()``, ``current_timestamp()``)."""
    if isinstance(e, ProcTime):
        return True
    if isinstance(e, Sql):
        return bool(_CLOCK.search(e.text))
    return any(_reads_clock(x) for x in (getattr(e, "expr", None), getattr(e, "left", None), getattr(e, "right", None), *getattr(e, "args", ())) if x is not None)


def _no_clock(node: Select | Filter) -> str | None:
    exprs = node.exprs if isinstance(node, Select) else (node.predicate,)
    if any(_reads_clock(e) for e in exprs):
        return (
            "it reads the processing time (PROCTIME(), current_timestamp()), which Spark fixes when it plans a batch: "
            "in real-time mode the start of a batch that runs for the whole checkpoint interval, not each record's time; "
            "run it in micro-batches"
        )
    return None


def _sink(node: Sink) -> str | None:
    spec = node.spec
    if getattr(spec, "kind", None) != "kafka":
        return f"it writes {spec.describe()}, and the real-time trigger writes only to Kafka (a file or table sink commits per micro-batch)"
    if spec.delivery != "at-least-once":
        return "Spark's real-time Kafka sink is at-least-once (it has no transactions): give fk.sinks.kafka(..., delivery='at-least-once')"
    if spec.connector == "python":
        return "connector='python' writes from the driver per micro-batch; the real-time trigger writes with Spark's connector"
    windows = [x for x in walk([node]) if isinstance(x, WindowAggregate)]
    if windows:
        needed = [*(windows[-1].input.keys or ()), "window_start"]
        columns = node.input.schema.names if node.input.schema is not None else tuple(needed)
        missing = [c for c in needed if c in columns and c not in spec.key]
        if missing:
            return (
                "window results in real-time mode are updates of each (key, window), and a topic without that key takes them "
                f"as separate records: give the sink key={needed!r} (an upsert topic), or run in micro-batches for final results"
            )
    return None


#: Per kind of node: None (allowed as it is), a check returning why not, or absent (refused: ``_refused``).
RULES: dict[type, Callable[..., str | None] | None] = {
    Source: _source,
    Watermark: _watermark,
    Select: _no_clock,
    Filter: _no_clock,
    Union: None,
    KeyBy: None,
    LookupJoin: _lookup,
    RollingAggregate: _rolling,
    Deduplicate: _aggregated_before,
    WindowAggregate: _window,
    Sink: _sink,
}


def _refused(node: Node) -> str:
    from funke.plan.capabilities import place

    if node.kind == "python":
        return "it runs a Python function (pandas/Arrow UDFs are outside Spark's real-time allowlist, and their batches wait to fill)"
    return f"it runs on funke's general path ({place(node).path}: transformWithStateInPandas, Python), outside Spark's real-time allowlist"


def refusal(node: Node) -> Refusal | None:
    """Why real-time mode refuses ``node``, or None when it runs it."""
    if type(node) not in RULES:
        return Refusal(node, _refused(node))
    check = RULES[type(node)]
    why = check(node) if check is not None else None
    return Refusal(node, why) if why is not None else None


def check_realtime(plan: Iterable[Node]) -> None:
    """Refuse (``UnsupportedError``) the first node of ``plan`` (every node, inputs first: ``walk``'s order)
    that real-time mode cannot run."""
    for node in plan:
        r = refusal(node)
        if r is not None:
            raise UnsupportedError(r.message())


def why_realtime(node: Node) -> str:
    """explain()'s reason for a node real-time mode runs."""
    return ALLOWED_WHY[type(node)]


def shuffles(sinks: Iterable[Sink]) -> int:
    """How many pipelined shuffles the nodes of one query need (each its own stage of tasks)."""
    return sum(isinstance(x, SPARK_STATEFUL) for x in walk(list(sinks)))


NOTES = [
    "notes (real-time mode):",
    "- Spark's real-time trigger: each source partition and each shuffle partition has a task running for the whole",
    "  checkpoint interval (checkpoint_interval; default 5 minutes), so the job needs that many task slots at once",
    "  (funke sizes a local master to them and checks a cluster's free slots before it starts);",
    "- rolling aggregates emit one updated row per element; windows emit every update of each (key, window);",
    "- metrics (rows, watermark) are reported once per real-time checkpoint;",
    "- Kafka sink: at-least-once; after a failure the records since the last checkpoint are written again",
    "  (for keyed results the same rows again: the last value per key is exact).",
]
