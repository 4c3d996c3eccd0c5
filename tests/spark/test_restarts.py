"""A query that Spark's own machinery fails transiently is restarted from its checkpoint, and
the job's result is exactly the one an undisturbed run gives.

Spark gives a Python worker it starts by itself (the runner of a Python source's reader) a
fixed 10 s to connect back. The tests make that happen for real: a ``.pth`` file in
site-packages (run by every Python process as it starts) holds the first such runner until the
test lets it go, which it does once the job has restarted the query. Only the first runner
the test's JVM starts after the test arms the hook is held; the hook is removed whatever happens.
"""

from __future__ import annotations

import site
import time
from collections import Counter
from pathlib import Path

import pytest

import funke as fk
from funke.windows import TumblingEventTimeWindows

from .helpers import ts, window_rows

pytestmark = pytest.mark.spark
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("t")
EVENTS = [("a", 1_000), ("b", 2_000), ("a", 11_000), ("a", 12_000), ("b", 25_000), ("a", 31_000)]
EXPECTED = {("a", 0, 10_000, 1), ("b", 0, 10_000, 1), ("a", 10_000, 20_000, 2), ("b", 20_000, 30_000, 1), ("a", 30_000, 40_000, 1)}

HOOK = """\
import os, sys
if {module!r} in sys.orig_argv and os.getppid() == {jvm}:
    import time
    try:
        os.rename({armed!r}, {held!r})
    except OSError:
        pass
    else:
        while os.path.exists({held!r}):
            time.sleep(0.05)
        os._exit(1)
"""


@pytest.fixture
def hold_runner(tmp_path, spark):
    """Arm a hook holding the next Python process this session's JVM starts with ``-m <module>``;
    yields ``(armed, held)``: ``armed`` is gone once a process took it, ``held`` while it is held."""
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    pth = Path(site.getsitepackages()[0]) / "funke_test_hold_runner.pth"
    armed, held = tmp_path / "armed", tmp_path / "held"

    def arm(module: str) -> tuple[Path, Path]:
        armed.touch()
        code = HOOK.format(module=module, jvm=jvm, armed=str(armed), held=str(held))
        pth.write_text(f"import sys; exec({code!r})\n")
        return armed, held

    try:
        yield arm
    finally:
        pth.unlink(missing_ok=True)
        armed.unlink(missing_ok=True)
        held.unlink(missing_ok=True)  # lets a held process go


def wait_for(condition, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def failed(handle) -> bool:
    return any(st.query is not None and not st.query.isActive and st.query.exception() is not None for st in handle.states)


def counts_job(env):
    rows = [{"k": k, "t": ts(t)} for k, t in EVENTS]
    s = env.from_collection(rows, "k string, t timestamp", rows_per_batch=2, watermarks=WM)
    return s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()


def test_a_source_runner_that_misses_spark_s_connect_back_wait_restarts_the_query_exactly(env, hold_runner):
    sink = counts_job(env)
    armed, held = hold_runner("pyspark.sql.streaming.python_streaming_source_runner")
    handle = env.execute()
    wait_for(lambda: not armed.exists() or handle.done, "the source's runner to start")
    assert held.exists(), "the hook did not hold the source's runner"
    wait_for(lambda: handle.metrics()["restarts"] >= 1 or handle.done or failed(handle), "the query to be restarted")
    held.unlink()
    handle.wait(timeout=180)
    assert handle.done, "job did not finish"
    assert handle.metrics()["restarts"] == 1
    assert window_rows(sink.rows) == Counter(EXPECTED)  # each window once



def test_a_micro_batch_past_the_checkpoint_timeout_restarts_its_query_exactly(spark, tmp_path):
    """As a Python worker waiting for good on Spark's state server that stopped answering: the first
    call of the reduce function, in whichever worker, never returns. The job restarts the query from its
    checkpoint once the batch has run past the checkpoint timeout, and every running sum is written once."""
    from funke.config import settings

    marker = str(tmp_path / "stuck-once")

    def longest_sum(a, b):
        import os
        import threading

        if not os.path.exists(marker):
            open(marker, "w").close()
            threading.Event().wait()  # never set
        return {**b, "v": a["v"] + b["v"]}

    env = fk.StreamEnvironment(app="test", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"), settings_=settings(checkpoint_timeout=20_000))
    rows = [{"k": k, "v": v} for k, v in [("a", 1), ("b", 10), ("a", 2), ("a", 3), ("b", 20)]]
    sums = env.from_collection(rows, "k string, v bigint", rows_per_batch=2).key_by("k").reduce(longest_sum).collect()
    handle = env.execute()
    handle.wait(timeout=300)
    assert handle.done, "job did not finish"
    assert Path(marker).exists(), "the reduce function never hung"
    assert handle.metrics()["restarts"] >= 1
    assert any("did not commit within the checkpoint timeout (20 s)" in e["headline"] for e in handle.exceptions)
    assert sorted((r["k"], r["v"]) for r in sums.rows) == [("a", 1), ("a", 3), ("a", 6), ("b", 10), ("b", 30)]
