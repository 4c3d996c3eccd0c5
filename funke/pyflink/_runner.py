"""Run a PyFlink script on funke: the import hook, quiet logs, the script as ``__main__`` with its arguments."""

from __future__ import annotations

import ast
import logging
import os
import runpy
import sys
from pathlib import Path

from funke.pyflink._hook import install

#: Loggers of Spark's Python side, py4j and funke: to stderr at WARNING, never through a handler the
#: script configures on the root logger (PyFlink's examples send the root logger to stdout).
QUIET = ("py4j", "pyspark", "funke")


def quiet_logs() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    for name in QUIET:
        logger = logging.getLogger(name)
        logger.propagate = False
        logger.handlers = [handler]
        logger.setLevel(logging.WARNING)


def imports_pyflink(path: str | Path) -> bool:
    """Whether a Python file imports ``pyflink`` (how ``funke run FILE.py`` tells a PyFlink script)."""
    try:
        tree = ast.parse(Path(path).read_text(), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "pyflink" or a.name.startswith("pyflink.") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (node.module == "pyflink" or node.module.startswith("pyflink.")):
            return True
    return False


def run_script(script: str, args: list[str]) -> None:
    """Run ``script`` as ``__main__`` with ``sys.argv = [script, *args]``, ``pyflink`` resolved to funke's."""
    path = Path(script)
    if not path.is_file():
        raise SystemExit(f"funke.pyflink: no such script: {script}")
    folder = str(path.resolve().parent)
    os.environ["FUNKE_PYFLINK"] = "1"  # (Spark's workers install the hook too)
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if folder not in parts:  # (the script's own modules, for the workers)
        os.environ["PYTHONPATH"] = os.pathsep.join([folder, *parts])
    quiet_logs()
    install()
    sys.argv = [str(path), *args]
    sys.path.insert(0, folder)
    runpy.run_path(str(path), run_name="__main__")
