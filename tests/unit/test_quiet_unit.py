"""The JVM's stderr filter: pyspark's worker lifecycle lines go, everything else passes in order."""

from __future__ import annotations

import os
import subprocess
import sys

from funke.spark.quiet import filtered_stderr_for_children


def test_children_write_through_the_filter_and_our_own_stderr_is_restored(tmp_path):
    out = tmp_path / "stderr.txt"
    child = (
        "import sys\n"
        "w = sys.stderr.write\n"
        "w('Starting Streaming TransformWithStateInPandas Python worker.\\n\\n')\n"
        "w('real error: something broke\\n')\n"
        "w('Streaming TransformWithStateInPandas Python worker Completed execution of UDF: <f>.\\n\\n')\n"
        "w('\\n')\n"
        "w('x' * 200000 + '\\n')\n"  # more than a pipe holds: the copy must keep draining
        "w('last line\\n')\n"
    )
    script = (
        "import subprocess, sys\n"
        "from funke.spark.quiet import filtered_stderr_for_children\n"
        "with filtered_stderr_for_children():\n"
        f"    p = subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        "sys.stderr.write('parent after the block\\n'); sys.stderr.flush()\n"
        "p.wait()\n"
        "import threading\n"
        "[t.join(30) for t in threading.enumerate() if t.name == 'funke-jvm-stderr']\n"
    )
    with out.open("w") as f:
        done = subprocess.run([sys.executable, "-c", script], stderr=f, timeout=120, check=False)
    assert done.returncode == 0
    lines = out.read_text().splitlines()
    assert "parent after the block" in lines
    child_lines = [line for line in lines if line != "parent after the block"]
    assert child_lines == ["real error: something broke", "", "x" * 200000, "last line"]


def test_the_block_restores_fd_2():
    import os

    before = os.fstat(2)
    with filtered_stderr_for_children():
        assert os.fstat(2).st_ino != before.st_ino
    assert os.fstat(2).st_ino == before.st_ino


def test_a_line_passes_while_the_child_still_runs(tmp_path):
    """The filter holds back only a traceback being read: a plain line is out before the child ends."""
    import time

    out = tmp_path / "stderr.txt"
    child = "import sys\nsys.stderr.write('first\\n'); sys.stderr.flush()\nsys.stdin.read()\n"  # then waits for stdin's end
    script = (
        "import subprocess, sys\n"
        "from funke.spark.quiet import filtered_stderr_for_children\n"
        "with filtered_stderr_for_children():\n"
        f"    p = subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        "p.wait()\n"
    )
    with out.open("w") as f:
        parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stderr=f)
        try:
            deadline = time.monotonic() + 60
            while "first" not in out.read_text():  # the line itself, while the child still waits for its stdin
                assert parent.poll() is None and time.monotonic() < deadline, "the line did not pass while the child ran"
                time.sleep(0.01)
        finally:
            parent.stdin.close()
            assert parent.wait(timeout=60) == 0


def test_worker_python_leaves_out_sparks_zips_of_pyspark_and_keeps_the_rest_in_order(tmp_path):
    from funke.spark.quiet import spark_zips, worker_python

    zips = spark_zips()
    assert zips and all(z.endswith(".zip") and os.path.exists(z) for z in zips), zips  # pip's pyspark: Spark's home
    wrapper = worker_python(tmp_path)
    assert wrapper == worker_python(tmp_path)  # written once, found again
    path = os.pathsep.join(["/first dir", zips[0], "/b*", *zips[1:], "/last"])
    show = "import os, sys; print(os.environ.get('PYTHONPATH')); print(sys.executable)"
    done = subprocess.run([wrapper, "-c", show], env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, check=True)
    kept, interpreter = done.stdout.splitlines()
    assert kept == os.pathsep.join(["/first dir", "/b*", "/last"])
    assert os.path.realpath(interpreter) == os.path.realpath(sys.executable)
    only_zips = subprocess.run([wrapper, "-c", show], env={**os.environ, "PYTHONPATH": os.pathsep.join(zips)},
                               capture_output=True, text=True, check=True)  # fmt: skip
    assert only_zips.stdout.splitlines()[0] == "None"


def test_another_sparks_home_keeps_its_own_zips(tmp_path, monkeypatch):
    from funke.spark.quiet import python_for_children, spark_zips, worker_python

    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert spark_zips() == [] and worker_python(tmp_path) is None
    with python_for_children(tmp_path):
        assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert "PYSPARK_PYTHON" not in os.environ


def test_a_wrapper_that_cannot_run_where_it_is_written_is_not_used(tmp_path, monkeypatch):
    from funke.spark import quiet

    def noexec(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(quiet.subprocess, "run", noexec)
    assert quiet.worker_python(tmp_path) is None
    assert list((tmp_path / "bin").iterdir()) == []
