"""Which path runs each node, and why: a table, read by the planner, explain() and tests.

Native = Spark's own operators (JVM, codegen), used only where Spark's semantics are
Flink's exactly. General = funke's operators on ``transformWithStateInPandas``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from funke.errors import UnsupportedError
from funke.plan.connect import BroadcastProcess, CoProcess
from funke.plan.functions import LateralTable, expressions_why
from funke.plan.generators import GENERATED_TIME, GENERATOR_RUN
from funke.plan.joins import IntervalJoin, WindowJoin
from funke.plan.unkeyed import AsyncWait, Process
from funke.plan.nodes import (
    Filter,
    KeyBy,
    Deduplicate,
    KeyedProcess,
    LookupJoin,
    Node,
    PythonFunction,
    RollingAggregate,
    Select,
    SideOutput,
    Sink,
    Source,
    Union,
    Watermark,
    WindowAggregate,
)

if TYPE_CHECKING:
    from funke.plan.facts import PlanFacts

NATIVE = "native"
GENERAL = "general"
#: A window's ``path_hint`` under ``set_latency_mode("latency-first")``: general where it would be native.
LATENCY_FIRST = "latency-first"

#: Why (explain()).
LATENCY_FIRST_WHY = (
    "latency-first: Spark's window fires in the micro-batch after the one whose elements pass the watermark (Spark "
    "computes its watermark after a batch); funke's operator also moves each bucket's watermark to its largest event "
    "time - bound - 1 after the batch's elements (never past Spark's next watermark), so results leave in the "
    "micro-batch whose elements pass the watermark"
)

#: Window assigners whose default-trigger, zero-lateness results Spark computes exactly.
#: Spark's watermark is ``max_ts - delay``; Flink's is ``max_ts - delay - 1`` with a window
#: complete when ``end - 1 <= watermark``: the same instants. Spark applies the watermark
#: computed after batch n at the end of batch n+1 (after that batch's rows; it fires windows
#: then) and drops a row only when its window closed in an earlier batch. That is Flink's
#: result for the schedule "each batch's elements, then the watermark", which funke
#: documents as the native path's watermark schedule.
#: Session windows are not here: Spark drops a row whose own session ``[t, t + gap)`` is
#: late before merging it into an open session, where Flink merges first and keeps it
#: (tests/spark/test_paths_agree.py), so sessions run on the general path.
#: (tests/spark/test_windows_native.py and test_paths_agree.py check each case.)
#: Why a deduplication runs on Spark's operator (explain()).
DEDUPLICATE_WHY = (
    "Spark dropDuplicates: a key's first element passes, later ones are dropped (Flink SQL's keep-first "
    "deduplication on processing time); the keys seen are in Spark's state store for the job's life"
)
NATIVE_WINDOW_KINDS = frozenset({"tumbling", "sliding"})


#: How the general path sees time (explain() says it per operator).
GENERAL_TIME = (
    " [funke operator on transformWithStateInPandas, keys in buckets; time arrives as data each micro-batch: "
    "the batch's elements, then the watermark (Spark's query watermark where it is this operator's; funke's own, "
    "computed on the driver with Flink's rule from the operator's watermarked inputs, where the query also reads others "
    "or idle inputs meet here; or a test script's or WatermarkGenerator's), processing time = the batch's time]"
)


@dataclass(frozen=True)
class Placement:
    path: str
    why: str


#: How a two-input operator runs on the general path (explain() says it per operator).
TWO_INPUT_GENERAL = (
    " [funke two-input operator on transformWithStateInPandas: both inputs' rows in one operator, keys in buckets "
    "(both keys hashed alike); watermark = Flink's rule, computed by funke on the driver after each micro-batch and "
    "applied after the next one's rows: the minimum over the watermarked inputs (each max event time - bound - 1), "
    "-infinity until each has sent a row, an input quiet for its with_idleness skipped (a test script's per input "
    "under TestStream); an input without event time does not hold it back]"
)

#: What the native interval join is, and the one place its pairs are not Flink's (README, "Joins").
NATIVE_INTERVAL_JOIN = (
    "asked for with on_path('native'): Spark stream-stream inner join on the key with a time-range condition, append "
    "mode. Each side's watermark is declared to Spark 2 ms further behind than the strategy's bound, so that Spark drops "
    "exactly the rows Flink calls late (time < Flink's watermark = max - bound - 1, as of the batch before); every other "
    "pair of the key within the interval is emitted, as Flink emits it, with one exception: an element whose time equals "
    "Flink's watermark when it arrives still meets a partner at the far edge of its interval here, where Flink's cleanup "
    "timer has just removed that partner (Flink loses the pair, Spark keeps it). The pair's time (Flink: max of both) is "
    "not carried as event time"
)

#: Why an interval join runs on the general path unless on_path('native') asks for Spark's join.
INTERVAL_JOIN_DEFAULT = (
    "Flink's pairs exactly: Spark's own stream-stream join would also emit a pair Flink loses (an element arriving "
    "exactly at the watermark meets a partner at the far edge of its interval, which Flink's cleanup timer has just "
    "removed), and no condition on the pair can tell which side arrived when; on_path('native') runs Spark's join "
    "(JVM only, faster) with that one difference"
)

#: Why an event-time operator downstream of a per-partition watermark runs on the general path.
SPLIT_TIME = (
    "the source's watermark is per partition (Flink's rule: the minimum over its partitions' watermarks, -infinity until "
    "each has sent a record, a partition quiet for with_idleness skipped), which Spark's query watermark (from the largest "
    "event time over all partitions) is not, so funke computes it on the driver; kafka(partition_watermarks=False) takes "
    "Spark's watermark and Spark's own operators"
)


def split_watermark(w: Node) -> bool:
    """A watermark strategy given with a source whose splits (Kafka partitions) each have their own
    watermark, the source's being their minimum (Flink's per-split watermarks)."""
    if not isinstance(w, Watermark) or not isinstance(w.input, Source) or w.input.scripted_time:
        return False
    return bool(getattr(w.input.spec, "split_watermarks", False)) and w.strategy.generator is None and not w.strategy.ingestion_time


def _split_reason(node: Node, meeting: Meeting) -> str | None:
    split = [w for w in meeting(node) if split_watermark(w)]
    return f"{split[0].where()}: {SPLIT_TIME}" if split else None


#: Operators that compute their own watermark from their inputs' (funke's clock or a test script's).
OWN_CLOCK = (CoProcess, BroadcastProcess, WindowJoin)

#: The watermark strategies meeting at a node (``watermarks_meeting``, or ``PlanFacts.meeting``).
Meeting = Callable[[Node], list[Watermark]]


def watermarks_meeting(node: Node) -> list[Watermark]:
    """The watermark strategies whose Spark watermark the rows entering ``node`` carry (one each),
    up to operators that compute their own watermark (funke's two-input operators)."""
    seen: dict[int, Watermark] = {}

    def visit(x: Node) -> None:
        if isinstance(x, Watermark):
            seen.setdefault(id(x), x)
        elif not (isinstance(x, OWN_CLOCK) or (isinstance(x, IntervalJoin) and place(x).path == GENERAL)):
            for i in x.inputs:
                visit(i)

    for i in node.inputs:
        visit(i)
    return list(seen.values())


def idle_inputs(node: Node, meeting: Meeting = watermarks_meeting) -> list[Watermark]:
    """The inputs with ``with_idleness`` among several watermarked ones meeting at ``node`` (where
    idleness matters: an idle input stops holding their minimum back); [] otherwise."""
    met = meeting(node)
    return [w for w in met if w.strategy.idleness_ms is not None] if len(met) > 1 else []


def _idleness_reason(node: Node, meeting: Meeting) -> str | None:
    idle = idle_inputs(node, meeting)
    if not idle:
        return None
    w = idle[0]
    return (
        f"with_idleness({w.strategy.idleness_ms} ms) on {w.where()}, one of {len(meeting(node))} watermarked inputs "
        "meeting here: Spark's query watermark has no idle inputs, so funke computes this operator's watermark on the driver "
        "(Flink's rule: the minimum over the inputs, -infinity until each has sent a row, an input quiet that long skipped)"
    )


def check_idleness(facts: PlanFacts) -> None:
    """Refuse ``with_idleness`` where funke cannot honour it, instead of ignoring it.

    Idleness matters where several watermarked inputs meet: an idle one stops holding their
    minimum back. Operators where they meet and that read the watermark run on the general path
    with a watermark funke computes (Flink's rule, idle inputs skipped: ``funke.runtime.watermarks``):
    ``place`` sends a window over such inputs and the interval join there. What Spark's own
    operators still see is Spark's query watermark, which has no idle inputs: a native operator
    reading it where an idle input meets others is refused (the planner never makes one today).
    """
    for node in facts.nodes:
        if not isinstance(node, (WindowAggregate, IntervalJoin)) or facts.place(node).path != NATIVE:
            continue
        idle = idle_inputs(node, facts.meeting)
        if idle:
            raise UnsupportedError(
                f"{idle[0].where()}: with_idleness({idle[0].strategy.idleness_ms} ms) on one of the watermarked inputs of "
                f"{node.where()}, which runs on Spark's own operator and follows Spark's query watermark (no idle inputs); "
                "remove with_idleness, or let funke run it (on_path('general'))"
            )


def place(node: Node, meeting: Meeting = watermarks_meeting) -> Placement:
    """The path a node runs on, with the reason in words a user can act on. ``meeting``: the watermarks
    meeting at a node (``funke.plan.facts`` gives the ones it worked out for the whole plan)."""
    if isinstance(node, IntervalJoin):
        return _place_interval_join(node, meeting)
    if isinstance(node, WindowJoin):
        op = "co-group" if node.co_group else "join"
        return Placement(
            GENERAL,
            f"a window {op} runs Flink's way, both inputs tagged into one window operator with the user's function"
            + TWO_INPUT_GENERAL,
        )
    if isinstance(node, CoProcess):
        what = "keyed state shared by both inputs and timers" if node.keyed else "one function over both inputs"
        return Placement(GENERAL, f"{type(node.function).__qualname__}: {what}" + TWO_INPUT_GENERAL)
    if isinstance(node, BroadcastProcess):
        return Placement(
            GENERAL,
            "broadcast state: every broadcast row reaches every bucket (Flink: every parallel instance) and is applied "
            "before the micro-batch's other rows, so a rule applies to every later element" + TWO_INPUT_GENERAL,
        )
    if isinstance(node, WindowAggregate):
        return _place_window(node, meeting)
    if isinstance(node, Process):
        return Placement(
            GENERAL,
            "a ProcessFunction on an unkeyed stream (the element's timestamp, the watermark, side outputs) runs as a funke "
            "operator, each Spark partition's elements in one bucket, in order" + GENERAL_TIME,
        )
    if isinstance(node, AsyncWait):
        return Placement(
            NATIVE,
            "Spark mapInArrow: each partition's micro-batch through an asyncio loop in the Python worker, at most "
            f"{node.capacity} elements in flight, results {'in input order' if node.ordered else 'as they complete'}",
        )
    if isinstance(node, KeyedProcess):
        return Placement(GENERAL, "a KeyedProcessFunction with keyed state and timers runs as a funke operator" + GENERAL_TIME)
    if isinstance(node, SideOutput):
        return Placement(GENERAL, "rows a funke operator sent to this tag, split from its output in the same query")
    if isinstance(node, RollingAggregate):
        return Placement(GENERAL, "Flink emits one updated row per element; Spark's streaming aggregation emits one per key per batch")
    if isinstance(node, Deduplicate):
        return Placement(NATIVE, DEDUPLICATE_WHY)
    if isinstance(node, PythonFunction):
        form = "pandas batches" if node.vectorized else "rows of Arrow batches"
        # a library's function (fk.ml.predict) says how it runs
        return Placement(NATIVE, getattr(node.fn, "explain_why", None) or f"Spark mapInArrow over {form}; no per-row pickling")
    if isinstance(node, Watermark) and node.strategy.generator is not None:
        return Placement(GENERAL, GENERATOR_RUN)
    if isinstance(node, Watermark) and split_watermark(node):
        idle = f"; a partition quiet for {node.strategy.idleness_ms} ms is skipped until it sends again" if node.strategy.idleness_ms is not None else ""
        return Placement(
            NATIVE,
            "Spark withWatermark for Spark's own operators; per partition for funke's (Flink's per-split watermarks: each "
            "partition's largest event time - bound - 1, the source's the minimum over them, -infinity until each partition "
            "has sent a record), computed on the driver from each micro-batch's per-partition maxima" + idle,
        )
    if isinstance(node, Watermark):
        idle = ""
        if node.strategy.idleness_ms is not None:
            idle = (
                f"; idleness {node.strategy.idleness_ms} ms: no effect with this one input, as in Flink (an idle sole input"
                " does not move the watermark; idleness matters where several inputs meet: funke's two-input operators skip"
                " an input idle that long, computing their watermark on the driver)"
            )
        return Placement(
            NATIVE,
            "Spark withWatermark; one watermark per query (the minimum over sources), advanced after each micro-batch" + idle,
        )
    if isinstance(node, (Select, Filter)):
        return Placement(NATIVE, expressions_why(node))
    if isinstance(node, LateralTable):
        return Placement(NATIVE, f"Spark lateral join with the Python table function {node.function_name} as an Arrow UDTF: only its arguments go to Python, the other columns stay in the JVM")
    if isinstance(node, LookupJoin):
        return Placement(NATIVE, "broadcast hash join with a static table")
    if isinstance(node, (Source, Sink)) and hasattr(node.spec, "engine"):
        return Placement(NATIVE, node.spec.engine())
    if isinstance(node, (Source, Sink, Union, KeyBy)):
        return Placement(NATIVE, "Spark")
    return Placement(GENERAL, f"no native rule for {node.kind}")


def _time_reasons(node: Node, meeting: Meeting) -> list[str]:
    """Why Spark's query watermark is not this operator's: where its time comes from instead."""
    reasons = []
    if node.scripted_time:
        reasons.append("the watermark comes from a test script, which Spark's watermark cannot follow")
    if node.generated_time:
        reasons.append(GENERATED_TIME)
    return reasons + [r for r in (_idleness_reason(node, meeting), _split_reason(node, meeting)) if r]


def _place_interval_join(node: IntervalJoin, meeting: Meeting) -> Placement:
    reasons = []
    if node.function is not None:
        reasons.append(f"the ProcessJoinFunction {type(node.function).__qualname__} runs in Python")
    if any(i.watermark is None for i in node.inputs):
        reasons.append("a stream's event time has no watermark strategy Spark can follow")
    reasons += _time_reasons(node, meeting)
    if reasons:
        asked = "on_path('native') asked for Spark's join, but " if node.path_hint == NATIVE else ""
        return Placement(GENERAL, asked + "; ".join(reasons) + TWO_INPUT_GENERAL)
    if node.path_hint != NATIVE:
        return Placement(GENERAL, INTERVAL_JOIN_DEFAULT + TWO_INPUT_GENERAL)
    return Placement(NATIVE, NATIVE_INTERVAL_JOIN)


def _place_window(node: WindowAggregate, meeting: Meeting) -> Placement:
    a = node.assigner
    reasons = []
    if a.kind not in NATIVE_WINDOW_KINDS or not a.is_event_time:
        why = " (Spark's sessions drop a late element before merging it)" if a.kind == "session" else ""
        reasons.append(f"{a.describe()} is not an event-time tumbling/sliding assigner{why}")
    if getattr(a, "is_dynamic", False):
        reasons.append("session gap is dynamic")
    if node.trigger is not None:
        reasons.append(f"custom trigger {node.trigger.describe()}")
    if node.allowed_lateness_ms:
        reasons.append("allowed lateness re-fires windows (Spark emits each window once)")
    if node.late_tag is not None:
        reasons.append("late data goes to a side output (Spark only drops and counts it)")
    if node.evictor is not None or node.function is not None:
        reasons.append("a user window function or evictor runs in Python")
    if node.path_hint == GENERAL:
        reasons.append("asked for with on_path('general')")
    if node.path_hint == LATENCY_FIRST:
        reasons.append(LATENCY_FIRST_WHY)
    reasons += _time_reasons(node, meeting)
    if reasons:
        return Placement(GENERAL, "; ".join(reasons) + GENERAL_TIME)
    return Placement(
        NATIVE,
        "Spark window aggregation, append mode: each window emitted once when the watermark passes its end; "
        "the watermark from batch n is applied after batch n+1's rows; rows for windows closed in an "
        "earlier batch are dropped and counted (as late (key, window) rows per batch, not elements)",
    )
