"""A missing optional dependency: one line naming the extra to install, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from funke.extras import EXTRA_OF

#: Runs the funke command with some modules made impossible to import, as in an install without their extra.
WITHOUT = textwrap.dedent(
    """
    import sys

    class Missing:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {blocked!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

    sys.meta_path.insert(0, Missing())
    sys.argv = ["funke", *{argv!r}]
    from funke.cli.main import main
    main()
    """
)


def funke_without(blocked: set[str], *argv: str) -> subprocess.CompletedProcess:
    script = WITHOUT.format(blocked=blocked, argv=list(argv))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.mark.parametrize("blocked, extra", [({"redis", "hiredis"}, "redis"), ({"confluent_kafka"}, "kafka")])
def test_ysb_produce_to_kafka_without_an_extra_says_which_to_install(blocked, extra):
    topic = f"funke-test-extras-{uuid.uuid4().hex[:8]}"  # (never created: the command stops before)
    done = funke_without(blocked, "ysb", "produce", "--to", "kafka", "--events", "10", "--topic", topic)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and f"pip install 'funke[{extra}]'" in lines[0]


def test_any_command_that_hits_a_missing_extra_names_it(monkeypatch, capsys):
    import funke.cli.main as cli

    def command():
        import networkx  # noqa: F401  (as funke bench graph does, with networkx not installed)

    monkeypatch.setattr(cli, "app", command)
    monkeypatch.setattr(sys, "argv", ["funke", "bench", "graph", "--edges", "10"])
    monkeypatch.setitem(sys.modules, "networkx", None)  # (an import of it raises ModuleNotFoundError)
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: funke bench graph needs the Python package 'networkx'"), err
    assert err.rstrip().endswith("pip install 'funke[graph]' (from a clone of funke: pip install -e '.[graph]')")


def test_every_extra_named_is_one_of_pyproject_s():
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRA_OF.values()) <= set(extras)
