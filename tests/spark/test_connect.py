"""Spark Connect (``remote="local[2]"``): the same jobs, the same results as classic Spark.

A local Connect server cannot start in a process that already runs a classic SparkContext
(the suite's shared session), so the job runs in a child Python process and prints its
results as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("grpc", reason="Spark Connect needs the connect extra: pip install -e '.[connect]'")

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    os.environ["TZ"] = "UTC"; time.tzset()
    import pyarrow.parquet as pq
    import funke as fk
    from funke.semantics.functions import OutputTag
    from funke.triggers import CountTrigger
    from funke.windows import TumblingEventTimeWindows

    home = sys.argv[1]
    rows = [{"k": "ab"[i % 2], "v": i, "t": i * 1000} for i in range(40)] + [{"k": "a", "v": 100, "t": 1000}]
    wm = fk.WatermarkStrategy.bounded_out_of_orderness(fk.seconds(1)).with_timestamp("t", unit="ms")
    out = {}
    for bounded in (False, True):
        env = fk.StreamEnvironment(app="connect", remote="local[2]", checkpoint_dir=f"{home}/ck-{bounded}")
        s = env.from_collection(rows, rows_per_batch=10, watermarks=wm)
        tumbling = TumblingEventTimeWindows.of(fk.seconds(10))
        native = s.key_by("k").window(tumbling).sum("v").collect()
        early = s.key_by("k").window(tumbling).trigger(CountTrigger.of(3)).sum("v").collect()
        late = OutputTag("late")
        w = s.key_by("k").window(tumbling).side_output_late_data(late).count()
        w.sink_to(fk.sinks.files(f"{home}/main-{bounded}"))
        w.get_side_output(late).sink_to(fk.sinks.files(f"{home}/late-{bounded}"))
        job = env.execute(bounded=bounded).wait(300)
        win = lambda rs, c: sorted([r["k"], int(r["window_start"].timestamp()), r[c]] for r in rs)
        out[str(bounded)] = {
            "native": win(native.rows, "v"),
            "early": win(early.rows, "v"),
            "main": win(pq.read_table(f"{home}/main-{bounded}").to_pylist(), "count"),
            "late": sorted([r["k"], r["v"], r["t"]] for r in pq.read_table(f"{home}/late-{bounded}").to_pylist()),
            "metrics": job.metrics(),
            "partitions": job.spark.conf.get("spark.sql.shuffle.partitions"),
            "session": type(job.spark).__module__,
        }
    # a Spark MLlib model fitted on the Connect server scores a stream there (fk.ml.predict, in the JVM)
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import LinearRegression

    spark = job.spark
    mrows = [{"id": i, "x0": float(i % 7), "x1": float(i % 3) if i != 5 else None} for i in range(40)]
    schema = "id bigint, x0 double, x1 double"
    complete = spark.createDataFrame([r for r in mrows if r["x1"] is not None], schema).selectExpr("*", "2 * x0 - x1 + 1 AS y")
    train = VectorAssembler(inputCols=["x0", "x1"], outputCol="features").transform(complete)
    model = LinearRegression(labelCol="y").fit(train)
    out["mllib"] = {"model": {r["id"]: r["prediction"] for r in model.transform(train).collect()}}
    for bounded in (False, True):
        env = fk.StreamEnvironment(app="connect-mllib", remote="local[2]", checkpoint_dir=f"{home}/ml-{bounded}")
        sink = env.from_collection(mrows, schema, rows_per_batch=20).map(fk.ml.predict(model, ["x0", "x1"])).collect()
        env.execute(bounded=bounded).wait(300)
        out["mllib"][str(bounded)] = {r["id"]: r["score"] for r in sink.rows}
    print("RESULT " + json.dumps(out, default=str))
    """
)


@pytest.mark.spark
def test_jobs_run_on_spark_connect_as_on_classic_spark(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=900)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-4000:]
    result = json.loads(lines[-1][len("RESULT ") :])
    streaming, bounded = result["False"], result["True"]
    assert streaming["session"].startswith("pyspark.sql.connect")
    assert streaming["partitions"] == "2"  # funke's local default reached the Connect server, not Spark's 200
    # 'a' holds the even values, 'b' the odd ones, 5 per 10 s window; a@1 s with v=100 comes last,
    # after the watermark (38 s) passed [0, 10 s): late in the streaming run, on time in the bounded run.
    sums = {
        ("a", 0): 20,
        ("a", 10): 70,
        ("a", 20): 120,
        ("a", 30): 170,
        ("b", 0): 25,
        ("b", 10): 75,
        ("b", 20): 125,
        ("b", 30): 175,
    }
    expected = sorted([k, start, v] for (k, start), v in sums.items())
    assert streaming["native"] == expected
    assert bounded["native"] == sorted([k, s, v + 100 if (k, s) == ("a", 0) else v] for k, s, v in expected)
    # CountTrigger(3) fires once per 5-element window, on the 3rd element, with the sum so far ...
    firsts = sorted([k, start, 3 * start + (6 if k == "a" else 9)] for k, start in sums)
    assert streaming["early"] == firsts
    # ... and in the bounded run the 6th element of 'a' in [0, 10 s) fires that window again
    assert bounded["early"] == sorted(firsts + [["a", 0, 120]])
    # the late element went to the side output, written by the query that also wrote the main output
    assert streaming["late"] == [["a", 100, "1970-01-01 00:00:01"]] and bounded["late"] == []
    assert streaming["main"] == sorted([k, s, 5] for k, s in sums)
    assert bounded["main"] == sorted([k, s, 6 if (k, s) == ("a", 0) else 5] for k, s in sums)
    m = streaming["metrics"]
    # dropped and counted by the native query and by the CountTrigger one; the third sent it aside
    assert m["input_rows"] == 3 * 41 and m["late_rows_dropped"] == 2 and m["watermark"] == "+inf (end of input)"
    # a bounded run is one Spark batch job per sink: four reads of the 41 rows
    assert bounded["metrics"]["mode"] == "batch" and bounded["metrics"]["input_rows"] == 4 * 41
    # the MLlib model, fitted on the Connect server, scored the stream there as its own transform does; x1 null: null
    ml = result["mllib"]
    expected_scores = {**ml["model"], "5": None}
    assert ml["False"] == expected_scores and ml["True"] == expected_scores
