"""``funke bench sql`` in small: YSB in Flink SQL, as a DataStream program and as plain PySpark over the
same events, each run's windows equal to the numpy reference; the SQL job's plan is the DataStream one's."""

from __future__ import annotations

import pytest

import funke as fk
from examples import ysb
from funke.bench.reference import reference_counts
from funke.bench.sql import DATASTREAM, PLAIN, SQL, pipeline, run_sql_bench, summary

pytestmark = pytest.mark.spark

EVENTS = 20_000


def test_sql_ysb_lowers_to_the_datastream_ysb_operators():
    def kinds(stream):
        node, out = stream.node, []
        while node.inputs:
            out.append(node.kind)
            node = node.inputs[0]
        return out

    sql = pipeline(fk.StreamEnvironment(app="a"), ysb.events(10))
    program = ysb.pipeline(fk.StreamEnvironment(app="b"), ysb.events(10))
    # the same lookup join, filter, keyed window count (SQL: the filter after the join, Spark pushes it below)
    assert [k for k in kinds(sql) if k not in ("select", "filter")] == [
        k for k in kinds(program) if k not in ("select", "filter")
    ]
    assert "lookup_join" in kinds(sql) and "window" in kinds(sql)


def test_the_three_jobs_run_over_the_same_events_and_equal_the_reference(spark):
    result = run_sql_bench(spark, EVENTS, warmup=False, rows_per_batch=8_000)
    expected = dict(reference_counts(EVENTS))
    for system in (DATASTREAM, SQL, PLAIN):
        (run,) = result.runs[system]
        assert run.events == EVENTS and run.late_rows_dropped == 0 and dict(run.windows) == expected
    assert result.ratio(SQL, DATASTREAM) is not None and "SQL / DataStream" in summary(result)
