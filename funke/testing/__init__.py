"""funke.testing: script a stream's elements, watermark and processing time, run it on Spark, compare.

``TestStream`` is Beam's and Flink's test source: a script of steps, each one micro-batch
on Spark. Elements carry their event time (epoch ms) in a column (``event_time`` unless
you name another); the watermark and processing time move only when the script says so,
and reach funke's operators as data, so processing-time triggers and timers are tested
without sleeping. The end of the script is the end of input: the watermark goes to
+infinity, as for every finite source.

>>> ts = (TestStream(schema="key string, value bigint")
...       .add_elements([("a", 1), ("a", 2)], timestamps=[1_000, 2_000])
...       .advance_watermark_to(9_999)
...       .advance_processing_time(fk.seconds(1)))
>>> [s.kind for s in ts.steps]
['elements', 'watermark', 'processing_time']
>>> ts.schema.names
('key', 'value', 'event_time')

Run with :func:`run`: ``result = fk.testing.run(env, out, late_tag)``; ``result[out]`` is the
list of rows (dicts) in emission order, each with ``_step``, the index of the script step
whose micro-batch emitted it (``len(steps)`` for the end of input).
"""

from __future__ import annotations

import difflib
import pprint
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import funke as fk
from funke.connectors.base import SourceSpec
from funke.connectors.sinks import CollectSink
from funke.errors import PlanError
from funke.plan import nodes
from funke.plan.types import Field, Schema
from funke.semantics.functions import OutputTag
from funke.semantics.time import Duration, to_millis

__all__ = ["Result", "Step", "TestStream", "assert_rows", "run", "run_until_idle"]


@dataclass(frozen=True)
class Step:
    """One script step: ``elements`` (rows and their timestamps), ``watermark`` or ``processing_time``.

    ``watermark`` and ``processing_time`` hold the value after the step.
    """

    kind: str
    rows: tuple[tuple[Any, ...], ...] = ()
    timestamps: tuple[int, ...] = ()
    watermark: int | None = None
    processing_time: int = 0


class TestStream(SourceSpec):
    """A scripted source for tests (Beam's ``TestStream``): elements, watermarks, processing time."""

    __test__ = False  # not a pytest test class

    kind: ClassVar[str] = "test_stream"
    scripted_time: ClassVar[bool] = True

    def __init__(self, schema: str | Schema, *, timestamp_column: str = "event_time") -> None:
        declared = Schema.of(schema)
        if declared is None:
            raise PlanError("TestStream needs a schema, e.g. TestStream(schema='key string, value bigint')")
        if timestamp_column in declared.names:
            raise PlanError(f"TestStream: column '{timestamp_column}' holds event time; name yours otherwise or pass timestamp_column=")
        self.schema_: Schema = declared
        self.timestamp_column = timestamp_column
        self.steps: list[Step] = []

    # -- the script ----------------------------------------------------------------
    @property
    def _watermark(self) -> int | None:
        return self.steps[-1].watermark if self.steps else None

    @property
    def _processing_time(self) -> int:
        return self.steps[-1].processing_time if self.steps else 0

    def add_elements(self, values: Iterable[Any], timestamps: Sequence[int] | None = None) -> TestStream:
        """Elements (tuples or dicts of the schema) with event times in epoch ms (one per element)."""
        declared = self.user_schema
        rows = tuple(_as_tuple(v, declared) for v in values)
        stamps = tuple(timestamps) if timestamps is not None else ()
        if len(stamps) != len(rows):
            raise PlanError(f"add_elements(): {len(rows)} element(s) but {len(stamps)} timestamp(s); give one per element")
        for t in stamps:
            if isinstance(t, bool) or not isinstance(t, int):
                raise PlanError(f"add_elements(): timestamps are epoch milliseconds (int), got {t!r}")
        self.steps.append(Step("elements", rows, stamps, self._watermark, self._processing_time))
        return self

    def advance_watermark_to(self, timestamp: int) -> TestStream:
        """Watermark ``timestamp``: no more elements at or before it (Flink's meaning)."""
        if self._watermark is not None and timestamp < self._watermark:
            raise PlanError(f"advance_watermark_to({timestamp}): the watermark is already {self._watermark} and never goes back")
        self.steps.append(Step("watermark", watermark=int(timestamp), processing_time=self._processing_time))
        return self

    def advance_watermark_to_infinity(self) -> TestStream:
        from funke.semantics.time import MAX_WATERMARK

        return self.advance_watermark_to(MAX_WATERMARK)

    def advance_processing_time(self, duration: Duration) -> TestStream:
        """Move the operators' processing-time clock forward (it starts at 0)."""
        step = to_millis(duration, what="processing time step")
        if step < 0:
            raise PlanError("advance_processing_time() takes a non-negative duration")
        self.steps.append(Step("processing_time", watermark=self._watermark, processing_time=self._processing_time + step))
        return self

    # -- SourceSpec ----------------------------------------------------------------
    @property
    def user_schema(self) -> Schema:
        return self.schema_

    @property
    def schema(self) -> Schema:
        return self.user_schema.with_field(Field(self.timestamp_column, "timestamp"))

    @property
    def event_time_column(self) -> str:
        return self.timestamp_column

    @property
    def bounded(self) -> bool:
        return True

    def describe(self) -> str:
        return f"test_stream({len(self.steps)} steps)"

    def fingerprint(self) -> str:
        return f"test_stream({self.user_schema})"


def _as_tuple(v: Any, schema: Schema) -> tuple[Any, ...]:
    if isinstance(v, dict):
        missing = [c for c in schema.names if c not in v]
        if missing:
            raise PlanError(f"TestStream element {v!r} lacks column(s) {', '.join(missing)}")
        return tuple(v[c] for c in schema.names)
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if len(t) != len(schema.names):
        raise PlanError(f"TestStream element {v!r} has {len(t)} field(s); the schema has {len(schema.names)}: {schema}")
    return t


# -- running ------------------------------------------------------------------------------


class Result:
    """Rows per requested stream or tag: ``result[stream]``, ``result[tag]``."""

    def __init__(self, rows: dict[Any, list[dict[str, Any]]], metrics: dict[str, Any]):
        self._rows = rows
        self.metrics = metrics

    def __getitem__(self, what: Any) -> list[dict[str, Any]]:
        key = _identity(what)
        if key not in self._rows:
            raise KeyError(f"{what!r} was not passed to run()")
        return self._rows[key]


def _identity(what: Any) -> Any:
    return ("tag", what.name) if isinstance(what, OutputTag) else id(what)


def run(env: fk.StreamEnvironment, *outputs: Any, timeout: float = 300, bounded: bool = False) -> Result:
    """Run ``env``'s job on Spark to the end of its script(s); collect each of ``outputs``.

    ``outputs`` are DataStreams, or OutputTags of a side output of one of those streams.
    """
    streams = [o for o in outputs if isinstance(o, fk.DataStream)]
    sinks: dict[Any, CollectSink] = {}
    for o in outputs:
        if isinstance(o, fk.DataStream):
            sinks[_identity(o)] = o.collect()
        elif isinstance(o, OutputTag):
            owner = next((s for s in streams if o.name in {t.name for t in nodes.side_output_tags(s.side_output_node)} or nodes.writes_any_tag(s.side_output_node)), None)
            if owner is None:
                raise PlanError(f"run(): no stream passed to run() sends to side output {o.name!r}")
            sinks[_identity(o)] = owner.get_side_output(o).collect()
        else:
            raise PlanError(f"run() takes DataStreams and OutputTags, got {o!r}")
    job = env.execute(bounded=bounded).wait(timeout)
    if not job.done:
        spark_says = _queries(job)
        job.stop()
        raise TimeoutError(f"the job did not finish within {timeout} s; metrics: {job.metrics()}; queries: {spark_says}")
    rows = {k: [{**r, "_step": b} for b, rs in sorted(s.batches, key=lambda x: x[0]) for r in rs] for k, s in sinks.items()}
    return Result(rows, job.metrics())


def _queries(job: Any) -> list[dict[str, Any]]:
    """What Spark says of each query of a job that did not end, beside what funke heard of it: a
    batch Spark ran that funke's listener never heard of, or a query waiting for data it never got."""
    out = []
    for st in job.states:
        q = st.query
        if q is None:
            out.append({"sink": st.sink.uid, "started": False})
            continue
        last = q.lastProgress
        out.append({
            "sink": st.sink.uid,
            "active": q.isActive,
            "status": q.status.get("message"),
            "spark_last_batch": None if last is None else last.batchId,
            "heard_last_batch": st.last_batch_id,
            "ends_heard": dict(st.end_batch),
        })
    return out


def run_until_idle(env: fk.StreamEnvironment, *outputs: Any, timeout: float = 300) -> Result:
    """Like :func:`run`: a script is finite, so its job goes idle exactly when the script has run."""
    return run(env, *outputs, timeout=timeout)


def assert_rows(actual: Sequence[dict[str, Any]], expected: Sequence[dict[str, Any]], *, ordered: bool = False, ignore: Iterable[str] = ("_step",)) -> None:
    """Compare rows exactly (only the columns in ``expected`` rows, minus ``ignore``); a readable diff when not equal."""
    drop = set(ignore)

    def norm(rows: Sequence[dict[str, Any]], like: Sequence[dict[str, Any]]) -> list[str]:
        cols = [c for c in (like[0] if like else (rows[0] if rows else {})) if c not in drop]
        out = [pprint.pformat({c: r.get(c) for c in cols}, sort_dicts=False, width=200) for r in rows]
        return out if ordered else sorted(out)

    a, e = norm(actual, expected), norm(expected, expected)
    if a != e:
        diff = "\n".join(difflib.unified_diff(e, a, "expected", "actual", lineterm=""))
        raise AssertionError(f"rows differ ({len(e)} expected, {len(a)} actual):\n{diff}")
