"""Found when tried as a new user would: funke's interpreter runs Spark's Python workers (with the installed
pyspark, not Spark's zip of it), and pyspark's worker chatter stays out of the terminal while real output still shows."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

JOB = textwrap.dedent(
    """
    import sys
    import funke as fk
    from funke.triggers import CountTrigger
    from funke.windows import TumblingEventTimeWindows

    def shout(row):
        import pyspark
        print(f"user-print {row['v']}", file=sys.stderr, flush=True)
        print(f"pyspark-from {pyspark.__file__}", file=sys.stderr, flush=True)
        return row

    env = fk.StreamEnvironment(app="new-user", master="local[2]")
    rows = [{"k": "a", "v": i, "ts": i * 1000} for i in range(6)]
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts", unit="ms")
    s = env.from_collection(rows, "k string, v bigint, ts bigint", rows_per_batch=3, watermarks=wm).map(shout)
    out = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).trigger(CountTrigger.of(3)).count()
    sink = out.sink_to(fk.sinks.collect())
    env.execute(fresh=True).wait(600)
    print("counts", sorted(r["count"] for r in sink.rows))
    """
)


@pytest.fixture
def path_without_funke(tmp_path):
    """A PATH whose ``python3`` has neither funke nor pyspark: a fresh venv's, as a user's shell
    outside the venv funke is installed in would find."""
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    bare = venv / "bin" / "python3"
    if subprocess.run([str(bare), "-c", "import pyspark"], capture_output=True, check=False).returncode == 0:
        pytest.fail(f"{bare} imports pyspark: the test needs an interpreter without it")
    return f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"


def test_general_path_job_from_an_unactivated_venv_runs_quietly(tmp_path, path_without_funke):
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    env.update(PATH=path_without_funke, FUNKE_HOME=str(tmp_path / "home"))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "counts [3, 6]" in done.stdout  # CountTrigger.of(3) fires at 3 and 6 elements, accumulating
    # The user's own prints from a Python function still reach the terminal (the workers' six,
    # and the plan-time probe's) ...
    assert {line for line in done.stderr.splitlines() if line.startswith("user-print")} == {f"user-print {i}" for i in range(6)}
    # ... pyspark's worker lifecycle lines do not; and a job waited for ends before the script: no warning.
    assert "TransformWithStateInPandas Python worker" not in done.stdout + done.stderr
    assert "still running" not in done.stderr
    # The workers import the installed pyspark (compiled once), not Spark's zip of it (compiled in each process).
    import pyspark

    assert {line.split(" ", 1)[1] for line in done.stderr.splitlines() if line.startswith("pyspark-from ")} == {pyspark.__file__}


LEFT_RUNNING = textwrap.dedent(
    """
    import funke as fk

    env = fk.StreamEnvironment(app="left-running", master="local[2]")
    env.from_source(fk.sources.generator({"i": "i"}, rows_per_second=10)).sink_to(fk.sinks.collect())
    job = env.execute_async(fresh=True)  # PyFlink's name; the same JobHandle as execute()
    print(type(job).__name__, job.name)
    """
)


def test_a_script_that_ends_while_its_job_runs_says_so_on_stderr(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(LEFT_RUNNING)
    env = {**os.environ, "FUNKE_HOME": str(tmp_path / "home"), "FUNKE_HTTP": "false"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["JobHandle", "left-running"]
    said = [line for line in done.stderr.splitlines() if line.startswith("funke: job 'left-running'")]
    assert said == [
        "funke: job 'left-running' is still running as this script ends, so it stops unfinished; "
        "call .wait() on the handle execute() returned to let it finish (or .stop() to end it)"
    ], done.stderr[-3000:]  # (8c1efe1 said nothing, and had no execute_async)
