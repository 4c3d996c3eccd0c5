"""Stateless operators, joins, unions, Python functions, files, and errors raised before a query starts."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

import funke as fk

pytestmark = pytest.mark.spark
ROWS = [{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "a", "v": 3}]


@pytest.mark.parametrize("bounded", [False, True])
def test_expressions_python_functions_join_and_union(env, bounded):
    s = env.from_collection(ROWS, "k string, v bigint", rows_per_batch=2)
    names = fk.table([("a", "alpha"), ("b", "beta")], "k string, name string")
    doubled = s.with_column("w", fk.col("v") * 2).filter("w > 2")
    py = s.map(lambda r: {"k": r["k"], "v": r["v"] + 100, "w": 0}, output_schema="k string, v bigint, w bigint")
    py = py.filter(lambda r: r["v"] != 102).flat_map(lambda r: [r, {**r, "w": 1}], output_schema="k string, v bigint, w bigint")
    vec = s.map(lambda pdf: pdf.assign(v=pdf.v * 10, w=pdf.v), output_schema="k string, v bigint, w bigint", vectorized=True)
    out = doubled.union(py, vec).join(names, on="k").collect()
    env.execute(bounded=bounded).wait(timeout=180)
    got = sorted((r["k"], r["v"], r["w"], r["name"]) for r in out.rows)
    assert got == sorted(
        [("b", 2, 4, "beta"), ("a", 3, 6, "alpha")]
        + [("a", 101, 0, "alpha"), ("a", 101, 1, "alpha"), ("a", 103, 0, "alpha"), ("a", 103, 1, "alpha")]
        + [("a", 10, 1, "alpha"), ("b", 20, 2, "beta"), ("a", 30, 3, "alpha")]
    )


def test_unknown_column_in_sql_is_reported_before_any_query_starts(env, spark):
    s = env.from_collection(ROWS, "k string, v bigint")
    s.select("k", "v + nope AS x").collect()
    with pytest.raises(fk.SchemaError) as e:
        env.execute()
    assert "select: unknown column 'nope'" in str(e.value) and "available columns: k, v" in str(e.value)
    assert spark.streams.active == []


def test_function_output_that_only_shows_at_run_time_fails_the_job_clearly(env):
    def bad(row):
        if row["k"] == "x":  # the planning probe's placeholder string
            raise ValueError("the planning probe learns nothing")
        return {"k": row["k"], "v": "not a number"}

    s = env.from_collection([{"k": "a", "v": 0}], "k string, v bigint")
    s.map(bad, output_schema="k string, v bigint").collect()
    with pytest.raises(fk.JobFailedError) as e:
        env.execute().wait(timeout=120)
    assert "map(test_function_output_that_only_shows_at_run_time_fails_the_job_clearly.<locals>.bad)" in str(e.value)
    assert "column 'v' is declared bigint but the function returned 'not a number'" in str(e.value)


def test_files_source_and_sink_round_trip(spark, tmp_path):
    src = tmp_path / "in"
    spark.createDataFrame([("a", 1), ("b", 2)], "k string, v bigint").write.json(str(src))
    env = fk.StreamEnvironment(app="files", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    s = env.from_source(fk.sources.files(str(src), schema="k string, v bigint", format="json"))
    s.filter(fk.col("v") > 1).sink_to(fk.sinks.files(str(tmp_path / "out")))
    handle = env.execute()
    deadline = dt.datetime.now() + dt.timedelta(seconds=60)
    while handle.metrics()["output_rows"] < 1 and dt.datetime.now() < deadline:
        handle.wait(timeout=0.5)
    handle.stop()
    assert [tuple(r) for r in spark.read.parquet(str(tmp_path / "out")).collect()] == [("b", 2)]
    again = fk.StreamEnvironment(app="files", spark=spark, checkpoint_dir=str(tmp_path / "fresh-ck"))
    again.from_source(fk.sources.files(str(src), schema="k string, v bigint", format="json")).sink_to(fk.sinks.files(str(tmp_path / "out")))
    with pytest.raises(fk.PlanError, match="not empty and this run starts from a fresh checkpoint"):
        again.execute()


def test_unbounded_generator_cannot_run_bounded(env):
    env.from_source(fk.sources.generator({"x": "i"}, schema="x bigint")).collect()
    with pytest.raises(fk.PlanError, match="never end"):
        env.execute(bounded=True)


def test_a_finite_generator_ends_in_the_micro_batch_of_its_last_row(env):
    """The end-of-input marker rides with the last rows: 2,000 rows at 1,000 a micro-batch are two
    micro-batches (ids 0 and 1), not a third holding only the marker."""
    evens = fk.sources.generator({"x": "i"}, schema="x bigint", events=2_000, rows_per_batch=1_000)
    sink = env.from_source(evens).filter("x % 2 = 0").sink_to(fk.sinks.collect(), uid="evens")
    handle = env.execute()
    handle.wait(timeout=300)
    assert sorted(r["x"] for r in sink.rows) == list(range(0, 2_000, 2))
    assert handle.checkpoints.last_committed("evens") == 1


@pytest.mark.parametrize("bounded", [False, True])
def test_print_sink_shows_rows(env, capsys, bounded):
    env.from_collection(ROWS, "k string, v bigint").filter("v > 1").print()
    env.execute(bounded=bounded).wait(timeout=120)
    out = capsys.readouterr().out
    assert "{'k': 'b', 'v': 2}" in out and "{'k': 'a', 'v': 3}" in out and "'v': 1}" not in out


@dataclasses.dataclass
class Scored:
    k: str
    score: float
    note: str | None = None


def test_dataclass_schema_and_rows_returned_as_dataclasses(env):
    s = env.from_collection([{"k": "a", "v": 1}, {"k": "b", "v": 2}], "k string, v bigint")
    out = s.map(lambda r: Scored(r["k"], r["v"] / 4), output_schema=Scored).collect()
    env.execute(bounded=True).wait(timeout=120)
    assert sorted(out.rows, key=lambda r: r["k"]) == [{"k": "a", "score": 0.25, "note": None}, {"k": "b", "score": 0.5, "note": None}]
