"""Async I/O on Spark (``fk.AsyncDataStream``): each partition's micro-batch through an asyncio loop
in the Python worker. A call's completion waits for the calls it names (``after``), so the order in
which calls complete is fixed by the script; a call naming ``-1`` never completes and times out."""

from __future__ import annotations

import asyncio

import pytest

import funke as fk
from funke.functions import AsyncFunction
from funke.plan.capabilities import place
from funke.testing import TestStream, run

pytestmark = pytest.mark.spark

OUT = "id bigint, status string"


class Lookup(AsyncFunction):
    def open(self, runtime_context):
        self.status = "ok"

    def _done(self, i):
        self.events = getattr(self, "events", {})
        return self.events.setdefault(i, asyncio.Event())

    async def async_invoke(self, row):
        for j in (int(x) for x in row["after"].split(",") if x):
            if j < 0:
                await asyncio.Event().wait()  # never completes
            await self._done(j).wait()
        self._done(row["id"]).set()
        return [{"id": row["id"], "status": self.status}]

    def timeout(self, row):
        return [{"id": row["id"], "status": "timed out"}]


def script():
    return (
        TestStream(schema="id bigint, after string")
        .add_elements([(0, "2"), (1, ""), (2, "")], timestamps=[1, 2, 3])  # completes 1, 2, 0
        .add_elements([(3, "-1"), (4, "")], timestamps=[4, 5])  # 3 times out
    )


@pytest.mark.parametrize("ordered, expected", [(True, [0, 1, 2, 3, 4]), (False, [1, 2, 0, 4, 3])])
def test_ordered_and_unordered_emission_within_each_micro_batch(env, ordered, expected):
    wait = fk.AsyncDataStream.ordered_wait if ordered else fk.AsyncDataStream.unordered_wait
    out = wait(env.from_source(script()), Lookup(), fk.milliseconds(3_000), 10, output_schema=OUT)
    assert place(out.node).path == "native"
    rows = run(env, out)[out]
    assert [r["id"] for r in rows] == expected
    assert [(r["id"], r["status"], r["_step"]) for r in sorted(rows, key=lambda r: r["id"])] == [
        (0, "ok", 0), (1, "ok", 0), (2, "ok", 0), (3, "timed out", 1), (4, "ok", 1)
    ]


def test_a_bounded_run_gives_every_result_and_capacity_one_still_completes_a_chain(env):
    # capacity 1: 0 waits for 2, which cannot start while 0 is in flight: 0 times out, then 1 and 2 run
    out = fk.AsyncDataStream.ordered_wait(env.from_source(script()).filter(fk.col("id") < 3), Lookup(), fk.milliseconds(500), 1, output_schema=OUT)
    rows = run(env, out, bounded=True)[out]
    assert sorted((r["id"], r["status"]) for r in rows) == [(0, "timed out"), (1, "ok"), (2, "ok")]


class Broken(AsyncFunction):
    async def async_invoke(self, row):
        return {"id": row["id"], "status": "not a list"}


def test_a_result_that_is_not_a_list_fails_the_job_with_the_function_named(env):
    out = fk.AsyncDataStream.unordered_wait(env.from_source(script()), Broken(), fk.seconds(1), output_schema=OUT)
    with pytest.raises(fk.JobFailedError, match=r"Broken.async_invoke must return a list of results"):
        run(env, out, bounded=True)


def test_async_wait_refuses_what_it_cannot_run(env):
    stream = env.from_source(script())
    with pytest.raises(fk.PlanError, match="takes an AsyncFunction subclass"):
        fk.AsyncDataStream.ordered_wait(stream, lambda row: [row], fk.seconds(1), output_schema=OUT)
    with pytest.raises(fk.PlanError, match="capacity .* must be a positive int"):
        fk.AsyncDataStream.ordered_wait(stream, Lookup(), fk.seconds(1), 0, output_schema=OUT)
    with pytest.raises(fk.PlanError, match="timeout must be positive"):
        fk.AsyncDataStream.ordered_wait(stream, Lookup(), fk.seconds(0), output_schema=OUT)
