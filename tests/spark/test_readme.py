"""Every code block of README.md runs as written, in the README's order, or is marked as a fragment.

``bash`` blocks run through bash, each in a new empty directory; ``python`` blocks run in one
Python process (tests/readme_runner.py: one Spark session for all of them), each in a new empty
directory too. The checkout's ``examples`` are importable, as from a clone; funke's home is the
test's own. A block passes when it exits 0 without a Python traceback (output that changes
from run to run is not compared), and a Python block also when it leaves no job running. The
servers the README starts (``funke services up``) are this machine's shared ones, so the README
names only what is its own (Redis keys ``ysb:*``, topic ``ysb-events``); two runs of this test
at once take turns (a lock file).

``python3 -m pip install ...`` is not run: it would re-point this machine's funke at this
checkout. It checks instead that what it would install is installed (tests/readme_blocks.py).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import subprocess
import sys
import tempfile
from multiprocessing.connection import Listener
from pathlib import Path

import pytest

from tests.readme_blocks import PYTHONS, SHELLS, pip_check_script, readme

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
#: The longest one block may take before the test gives up on it (a guard, not a measure).
BLOCK_TIMEOUT_S = 900


def test_every_block_is_runnable_or_marked_as_a_fragment():
    found = readme(ROOT)
    assert found, "README.md has no code blocks?"
    unknown = [f"{b.where} ```{b.language}" for b in found if not b.fragment and b.language not in SHELLS + PYTHONS]
    assert not unknown, (
        f"blocks in no language this test runs: {unknown}; write them as bash or python, or mark a true fragment "
        "with <!-- fragment: why --> on the line before it"
    )


@pytest.fixture(scope="module")
def readme_lock():
    with open(os.path.join(tempfile.gettempdir(), "funke-readme-test.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
        fcntl.flock(lock, fcntl.LOCK_UN)


class PythonBlocks:
    """The runner process and its connection."""

    def __init__(self, env: dict[str, str], log: Path):
        key = secrets.token_hex(16).encode()
        self.listener = Listener(("127.0.0.1", 0), authkey=key)
        host, port = self.listener.address
        self.log = log.open("w")
        runner = [sys.executable, str(ROOT / "tests" / "readme_runner.py"), host, str(port)]
        self.process = subprocess.Popen(runner, stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.process.stdin.write(key + b"\n")
        self.process.stdin.close()
        self.conn = self.listener.accept()

    def run(self, code: str, where: str, cwd: Path) -> dict:
        self.conn.send({"code": code, "where": where, "cwd": str(cwd)})
        if not self.conn.poll(BLOCK_TIMEOUT_S):
            return {"ok": False, "error": f"no answer within {BLOCK_TIMEOUT_S} s"}
        return self.conn.recv()

    def close(self) -> None:
        try:
            self.conn.send(None)
            self.process.wait(timeout=120)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self.conn.close()
            self.listener.close()
            self.log.close()


def test_every_block_runs_as_written(tmp_path, readme_lock):
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").write_text(pip_check_script(sys.executable))
    (shims / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "FUNKE_MASTER")}
    env.update(
        PATH=f"{shims}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
        PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        FUNKE_HOME=str(tmp_path / "home"),
        PYTHONUNBUFFERED="1",
    )
    python: PythonBlocks | None = None
    failures, ran = [], []
    try:
        for i, block in enumerate(readme(ROOT)):
            if block.fragment:
                continue
            cwd = tmp_path / f"block-{i}-line-{block.line}"
            cwd.mkdir()
            if block.language in SHELLS:
                done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=cwd, env=env,
                                      capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, check=False)  # fmt: skip
                output = done.stdout + done.stderr
                if done.returncode != 0 or "Traceback (most recent call last)" in output:
                    failures.append(f"{block.where} (bash, exit {done.returncode}):\n{block.code}\n--- output ---\n{output[-4000:]}")
            elif block.language in PYTHONS:
                python = python or PythonBlocks(env, tmp_path / "python-blocks.log")
                result = python.run(block.code, block.where, cwd)
                if not result["ok"]:
                    failures.append(f"{block.where} (python):\n{block.code}\n--- error ---\n{result['error'][-4000:]}")
            ran.append(block.where)
    finally:
        if python is not None:
            python.close()
    log = tmp_path / "python-blocks.log"
    tail = log.read_text()[-3000:] if log.exists() else ""
    assert not failures, "\n\n".join(failures) + (f"\n\n--- the Python blocks' process ---\n{tail}" if tail else "")
    assert ran
