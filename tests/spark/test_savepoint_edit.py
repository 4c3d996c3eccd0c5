"""Scenario 6: edit a savepoint's state in the open format, write a new savepoint, resume from it."""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pandas as pd
import pytest

import funke as fk
from funke.savepoints import SavepointError, read, transform
from funke.windows import TumblingEventTimeWindows
from tests.spark.helpers import EVERY, RunningTotal, wait_for_batches

pytestmark = pytest.mark.spark
# 10 s windows of 2,000 events (500 per key); batches of at most 1,500 events, so windows
# straddle batches and the savepoint holds windows that go on filling after the resume.
EVENTS, KEYS, MS_PER_EVENT, RATE, PER_BATCH, WINDOW_S = 16_000, 4, 5, 2_500, 1_500, 10


def keyed_events(spark, tmp_path, app: str) -> tuple[fk.StreamEnvironment, Any]:
    """A job's environment and its paced events (KEYS keys, event time), keyed by ``key``."""
    env = fk.StreamEnvironment(app=app, spark=spark, checkpoint_dir=str(tmp_path / f"ck-{time.monotonic_ns()}"))
    source = fk.sources.generator(
        {"key": f"concat('k', cast(i % {KEYS} as string))", "event_time": f"i * {MS_PER_EVENT}"},
        schema="key string, event_time bigint",
        events=EVENTS,
        rows_per_second=RATE,
        rows_per_batch=PER_BATCH,
    )
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("event_time", unit="ms")
    return env, env.from_source(source, wm, uid="events").key_by("key")


def job(spark, tmp_path) -> tuple[fk.StreamEnvironment, Any]:
    env, keyed = keyed_events(spark, tmp_path, "sp-edit")
    counts = keyed.window(TumblingEventTimeWindows.of(fk.seconds(WINDOW_S))).count()
    return env, counts.uid("window").sink_to(fk.sinks.collect(), uid="counts")


def uninterrupted() -> Counter:
    """(key, window start in s) -> count, over all events."""
    return Counter((f"k{i % KEYS}", i * MS_PER_EVENT // 1000 // WINDOW_S * WINDOW_S) for i in range(EVENTS))


def outputs(sink: Any, *, upto: int | None = None) -> Counter:
    """(key, window start in s) -> count written, from the batches up to ``upto``; a window written twice counts twice."""
    out: Counter = Counter()
    for batch, rows in sink.batches:
        if upto is None or batch <= upto:
            for r in rows:
                assert (r["key"], int(r["window_start"].timestamp())) not in out, "a window was written twice"
                out[(r["key"], int(r["window_start"].timestamp()))] = r["count"]
    return out


@pytest.fixture(scope="module")
def stopped(spark, tmp_path_factory):
    """The job stopped with a savepoint mid-stream, while windows are open."""
    tmp = tmp_path_factory.mktemp("edit")
    env, sink = job(spark, tmp)
    handle = env.execute(name="sp-edit")
    wait_for_batches(handle, 2)  # 3 micro-batches committed, windows still open
    sp = handle.stop(savepoint=str(tmp / "savepoints"))
    return sp, sink, tmp


def resume(spark, tmp_path, savepoint: Any) -> Any:
    env, sink = job(spark, tmp_path)
    handle = env.execute(name="sp-edit", from_savepoint=str(savepoint.path)).wait(600)
    assert handle.done and handle.metrics()["resumed"] is True
    return sink


def test_an_edited_savepoint_resumes_with_the_edited_state(spark, tmp_path, stopped):
    sp, first, _ = stopped
    n = sp.batches["counts"]
    state = sp.table("window")
    state["start"] = (state["window_start"] - pd.Timestamp(0)).dt.total_seconds().astype(int)
    latest = state["start"].max()
    # Reset k1's count in the latest open window (it goes on counting from 0), delete k2's
    # row in the earliest one (its state starts empty), and give k3 a window the job has
    # not reached yet, counting from 1,000.
    reset = state[(state["key"] == "k1") & (state["start"] == latest)].iloc[0]
    dropped = state[(state["key"] == "k2") & (state["start"] == state["start"].min())].iloc[0]
    future = latest + 2 * WINDOW_S
    assert future + WINDOW_S <= EVENTS * MS_PER_EVENT // 1000, "the job was stopped too late: lower RATE"
    assert not (state["start"] == future).any()

    def edit(df: pd.DataFrame) -> pd.DataFrame:
        df = df[~((df["key"] == "k2") & (df["window_start"] == dropped["window_start"]))].copy()
        df.loc[(df["key"] == "k1") & (df["window_start"] == reset["window_start"]), "count"] = 0
        new = {"window_start": pd.Timestamp(future, unit="s"), "window_end": pd.Timestamp(future + WINDOW_S, unit="s"), "key": "k3", "count": 1_000}
        return pd.concat([df, pd.DataFrame([new])], ignore_index=True)

    edited = transform(sp.path, tmp_path / "edited", {"window": edit}, spark=spark)

    # the new savepoint: one batch on, its table shows the edit; the source is untouched
    assert edited.batches == {"counts": n + 1} and read(edited.path).manifest["edited"]["tables"]["window"] == {"updated": 1, "inserted": 1, "deleted": 1}
    table = read(edited.path).table("window")
    assert len(table) == len(state) and table["count"].sum() == state["count"].sum() - reset["count"] - dropped["count"] + 1_000
    assert read(sp.path).batches == {"counts": n} and read(sp.path).table("window").equals(state.drop(columns="start"))
    assert not (sp.path / "checkpoint" / "counts" / "commits" / str(n + 1)).exists()

    before, resumed = outputs(first, upto=n), outputs(resume(spark, tmp_path, edited))
    assert not set(before) & set(resumed), "a window was written before and after the savepoint"
    whole = before + resumed
    want = uninterrupted()
    want[("k1", latest)] -= reset["count"]
    want[("k2", dropped["start"])] -= dropped["count"]
    want[("k3", future)] += 1_000
    assert whole == +want, {k: (whole[k], want[k]) for k in set(whole) | set(want) if whole[k] != want[k]}
    assert whole[("k3", future)] == 1_000 + 500  # the inserted state counted on


def test_the_original_savepoint_still_resumes_unedited(spark, tmp_path, stopped):
    sp, first, _ = stopped
    before, resumed = outputs(first, upto=sp.batches["counts"]), outputs(resume(spark, tmp_path, sp))
    assert not set(before) & set(resumed) and before + resumed == uninterrupted()


def test_edits_that_do_not_fit_the_state_are_refused_before_anything_is_written(spark, tmp_path, stopped):
    sp, _, _ = stopped
    target = tmp_path / "refused"
    cases = {
        r"table 'window' has a column 'note' that its operator's state does not have": lambda df: df.assign(note="x"),
        r"table 'window': column 'count' holds float64 values, but the state keeps bigint there": lambda df: df.assign(count=df["count"] / 2),
        r"table 'window': column 'key' is null in row\(s\) \[0\]; a state key cannot be null": lambda df: df.assign(key=[None] + list(df["key"][1:])),
        r"table 'window' lacks the column 'window_end'": lambda df: df.drop(columns="window_end"),
        r"table 'window' has 2 rows for one key": lambda df: pd.concat([df, df.iloc[:1]]),
        r"has no state table 'windows'; it has: window": None,
    }
    for message, edit in cases.items():
        with pytest.raises(SavepointError, match=message):
            transform(sp.path, target, {"windows": lambda df: df} if edit is None else {"window": edit}, spark=spark)
        assert not target.exists()


# -- a general-path operator: a KeyedProcessFunction's value state, edited in its table ----------


def totals_job(spark, tmp_path) -> tuple[fk.StreamEnvironment, Any]:
    env, keyed = keyed_events(spark, tmp_path, "sp-edit-general")
    totals = keyed.process(RunningTotal(), output_schema="key string, n bigint", uid="running-total")
    return env, totals.sink_to(fk.sinks.collect(), uid="totals")


def test_a_general_path_operator_s_state_is_edited_in_its_table_and_the_job_goes_on_from_it(spark, tmp_path):
    env, first = totals_job(spark, tmp_path)
    handle = env.execute(name="sp-edit-general")
    wait_for_batches(handle, 1)
    sp = handle.stop(savepoint=str(tmp_path / "savepoints"))
    state = sp.table("running-total")
    saved = {json.loads(k): json.loads(v) for k, v in zip(state["key"], state["value"], strict=True)}
    assert set(saved) == {f"k{k}" for k in range(KEYS)}
    before = Counter((r["key"], r["n"]) for b, rows in first.batches if b <= sp.batches["totals"] for r in rows)
    assert before == Counter((k, m) for k in saved for m in range(EVERY, saved[k] + 1, EVERY))

    def edit(df):  # k0 counts on from 1,000 more; k1's state is deleted, so it counts from 0 again
        df.loc[df["key"] == '"k0"', "value"] = json.dumps(saved["k0"] + 1000)
        return df[df["key"] != '"k1"']

    edited = transform(sp.path, tmp_path / "edited", {"running-total": edit}, spark=spark)
    again = edited.table("running-total")
    assert {json.loads(k): json.loads(v) for k, v in zip(again["key"], again["value"], strict=True)} == {
        "k0": saved["k0"] + 1000, "k2": saved["k2"], "k3": saved["k3"]
    }  # fmt: skip
    assert edited.batches["totals"] == sp.batches["totals"] + 1 and edited.manifest["edited"]["tables"]["running-total"]["buckets_rewritten"] >= 1
    env2, resumed_sink = totals_job(spark, tmp_path)
    resumed = env2.execute(name="sp-edit-general", from_savepoint=str(edited.path)).wait(600)
    assert resumed.done and resumed.metrics()["resumed"] is True
    per_key = EVENTS // KEYS
    start = {"k0": saved["k0"] + 1000, "k1": 0, "k2": saved["k2"], "k3": saved["k3"]}
    want = Counter((k, n) for k, s in start.items() for n in range(s + 1, s + per_key - saved[k] + 1) if n % EVERY == 0)
    assert Counter((r["key"], r["n"]) for r in resumed_sink.rows) == want
    # an edit that does not fit is refused before anything is written
    with pytest.raises(SavepointError, match=r"table 'running-total': key \"k9\" is not in the savepoint's state"):
        transform(sp.path, tmp_path / "refused", {"running-total": lambda df: pd.concat([df, df.iloc[:1].assign(key='"k9"')])}, spark=spark)
    assert not (tmp_path / "refused").exists()
