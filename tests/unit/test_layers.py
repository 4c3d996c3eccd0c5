"""DESIGN.md's layers: data flows api -> plan -> spark compiler -> runtime; nothing below imports from above.

Checked on the source (every ``import``, also those inside functions and under TYPE_CHECKING).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import funke

ROOT = Path(funke.__file__).parent

#: layer -> modules it must not import (a prefix matches the module and its submodules)
FORBIDDEN = {
    "semantics": ("pyspark", "funke.spark", "funke.api", "funke.runtime", "funke.cli"),
    "plan": ("pyspark", "funke.spark", "funke.api", "funke.runtime", "funke.cli", "funke.connectors"),
    "spark": ("funke.api", "funke.cli"),
    "runtime": ("funke.api", "funke.cli"),
    "savepoints": ("funke.api", "funke.cli"),
    "table": ("pyspark", "funke.spark", "funke.runtime", "funke.cli"),
    "cep": ("pyspark", "funke.spark", "funke.runtime", "funke.cli"),
    # PyFlink's API translated onto funke's API and plan (DESIGN.md: no second engine, no Spark of its own)
    "pyflink": ("pyspark", "funke.spark", "funke.runtime", "funke.cli", "funke.bench"),
    # ml scores with Spark MLlib models in the JVM (pyspark imported inside functions only: see below)
    "ml": ("funke.spark", "funke.runtime", "funke.cli"),
    # graph runs on Spark DataFrames itself (pyspark allowed) and takes streams through the public API
    # (DataStream, StreamEnvironment.execute), as cep does; never the stream compiler or jobs directly
    "graph": ("funke.spark", "funke.runtime", "funke.cli", "funke.bench"),
    # the benchmarks sit under the command line: `funke bench` and `funke ysb produce` call them, never the reverse
    "bench": ("funke.cli",),
}


def imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_layer_imports_from_above_it(layer):
    wrong = [
        f"{path.relative_to(ROOT.parent)} imports {name}"
        for path in sorted((ROOT / layer).rglob("*.py"))
        for name in sorted(imports(path))
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer])
    ]
    assert wrong == []


def test_ml_imports_pyspark_only_inside_functions():
    """funke/spark is the layer that imports pyspark on import; funke.ml loads on Spark's Python workers
    and with scikit-learn models alone, so it imports pyspark where a Spark MLlib model is used."""
    top = [
        f"{path.relative_to(ROOT.parent)} imports {a.name if isinstance(node, ast.Import) else node.module}"
        for path in sorted((ROOT / "ml").rglob("*.py"))
        for node in ast.parse(path.read_text()).body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
        if (a.name if isinstance(node, ast.Import) else node.module or "").startswith("pyspark")
    ]
    assert top == []


def test_savepoint_code_lives_in_one_package():
    assert sorted(p.name for p in ROOT.glob("savepoint*.py")) == []
    assert {p.name for p in (ROOT / "savepoints").glob("*.py")} >= {"__init__.py", "edit.py", "general.py"}
