"""DESIGN.md's layers: data flows api -> plan -> spark compiler -> runtime; nothing below imports from above.

Checked on the source (every ``import``, also those inside functions and under TYPE_CHECKING): no layer
imports what it must not, no two packages import each other (directly or round a loop), and no module
imports another module's private names. The last test plants each kind of wrong import in a copy and
checks that these checks find it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import funke

ROOT = Path(funke.__file__).parent

#: layer -> modules it must not import (a prefix matches the module and its submodules)
FORBIDDEN = {
    "semantics": ("pyspark", "funke.spark", "funke.api", "funke.runtime", "funke.cli"),
    "plan": ("pyspark", "funke.spark", "funke.api", "funke.runtime", "funke.cli", "funke.connectors"),
    "spark": ("funke.api", "funke.cli"),
    "runtime": ("funke.api", "funke.cli"),
    "savepoints": ("funke.api", "funke.cli", "funke.runtime"),  # jobs take and restore savepoints, not the reverse
    "table": ("pyspark", "funke.spark", "funke.runtime", "funke.cli"),
    "cep": ("pyspark", "funke.spark", "funke.runtime", "funke.cli"),
    # PyFlink's API translated onto funke's API and plan (DESIGN.md: no second engine, no Spark of its own)
    "pyflink": ("pyspark", "funke.spark", "funke.runtime", "funke.cli", "funke.bench"),
    # ml scores with Spark MLlib models in the JVM (pyspark imported inside functions only: see below)
    "ml": ("funke.spark", "funke.runtime", "funke.cli"),
    # graph runs on Spark DataFrames itself (pyspark allowed) and takes streams through the public API
    # (DataStream, StreamEnvironment.execute), as cep does; never the stream compiler or jobs directly
    "graph": ("funke.spark", "funke.runtime", "funke.cli", "funke.bench"),
    # Flink SQL's language (parse, built-in functions, an evaluator), below both table and cep
    "dialect": ("pyspark", "funke.spark", "funke.runtime", "funke.cli", "funke.api", "funke.table", "funke.cep"),
    # sources and sinks as specs and clients; the compiler reads them (DESIGN.md: connectors never start servers)
    "connectors": ("funke.spark", "funke.api", "funke.runtime", "funke.cli", "funke.services"),
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


def upward(root: Path, layer: str) -> list[str]:
    """``layer``'s imports of what FORBIDDEN keeps from it."""
    return [
        f"{path.relative_to(root.parent)} imports {name}"
        for path in sorted((root / layer).rglob("*.py"))
        for name in sorted(imports(path))
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer])
    ]


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(root: Path, module: str) -> str:
    """The package (or top-level module) a funke module belongs to: ``funke.spark.compiler`` -> ``spark``,
    ``funke.errors`` -> ``errors``; the package root itself (what ``import funke`` runs) is ``funke``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(root: Path) -> nx.DiGraph:
    """Which of funke's packages imports which, each edge with the imports that make it."""
    graph = nx.DiGraph()
    for path in sorted(root.rglob("*.py")):
        here = part_of(root, module_name(root, path))
        for name in imports(path):
            if name != root.name and not name.startswith(root.name + "."):
                continue
            there = part_of(root, name)
            if there != here and (there == root.name or (root / there).is_dir() or (root / f"{there}.py").is_file()):
                graph.add_edge(here, there)
                graph.edges[here, there].setdefault("by", set()).add(f"{module_name(root, path)} -> {name}")
    return graph


def loops(root: Path) -> list[str]:
    graph = package_graph(root)
    out = []
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            edges = sorted(e for edge in graph.subgraph(component).edges for e in sorted(graph.edges[edge]["by"])[:2])
            out.append(f"{sorted(component)} import each other: {edges}")
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(root: Path, dotted: str) -> bool:
    path = root.parent / Path(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def private_imports(root: Path) -> list[str]:
    """``from funke.x import _name`` in another module than ``funke.x``, and ``x._name`` where ``x`` is another
    funke module imported by name (``from funke.bench import ysb`` ... ``ysb._safe``). A package's private
    module (``funke.pyflink.datastream._adapters``) is its own modules' to import."""
    out = []
    for path in sorted(root.rglob("*.py")):
        here = module_name(root, path)
        tree = ast.parse(path.read_text())
        modules: dict[str, str] = {}  # a name bound to another funke module -> that module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules.update({a.asname: a.name for a in node.names if a.asname and a.name.split(".")[0] == root.name})
            if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == root.name):
                continue
            for alias in node.names:
                if _is_module(root, f"{node.module}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if not _private(alias.name):
                    continue
                own_package = here.startswith(node.module + ".") or here == node.module
                if (root.parent / Path(*node.module.split("."), f"{alias.name}.py")).is_file() and own_package:
                    continue
                out.append(f"{here}: from {node.module} import {alias.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
                module = modules.get(node.value.id)
                if module is not None and module != here:
                    out.append(f"{here}: {node.value.id}.{node.attr} ({module}'s)")
    return sorted(set(out))


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_layer_imports_from_above_it(layer):
    assert upward(ROOT, layer) == []


def test_no_two_packages_import_each_other():
    """Also not round a loop, nor through the package root (``import funke`` is the public API's, not a layer's)."""
    assert loops(ROOT) == []


def test_no_module_imports_another_module_s_private_names():
    assert private_imports(ROOT) == []


def test_the_checks_find_a_planted_upward_import_a_loop_and_a_private_name(tmp_path):
    root = tmp_path / "funke"
    files = {
        "__init__.py": "",
        "plan/__init__.py": "",
        "plan/nodes.py": "def f():\n    from funke.spark.compiler import Compiler  # planted, in a function body\n",
        "spark/__init__.py": "",
        "spark/compiler.py": "from funke.plan.nodes import _private\n",
        "spark/query.py": "from funke.spark import compiler as c\nfrom funke.plan import nodes\nc._lower(nodes._walk)\n",
        "pyflink/__init__.py": "",
        "pyflink/_hook.py": "",
        "pyflink/run.py": "from funke.pyflink import _hook\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert upward(root, "plan") == ["funke/plan/nodes.py imports funke.spark.compiler", "funke/plan/nodes.py imports funke.spark.compiler.Compiler"]
    assert len(loops(root)) == 1 and "['plan', 'spark'] import each other" in loops(root)[0]
    assert private_imports(root) == [
        "funke.spark.compiler: from funke.plan.nodes import _private",
        "funke.spark.query: c._lower (funke.spark.compiler's)",
        "funke.spark.query: nodes._walk (funke.plan.nodes's)",
    ]


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


def test_importing_funke_runtime_job_does_not_import_pyspark():
    """A job's runtime module loads without Spark's Python side (``funke --help`` and the pure-Python
    tests import it); pyspark comes with the first compile or session (``# (pyspark's lazy import)``)."""
    script = "import sys, funke.runtime.job; print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark')[:5])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_savepoint_code_lives_in_one_package():
    assert sorted(p.name for p in ROOT.glob("savepoint*.py")) == []
    assert {p.name for p in (ROOT / "savepoints").glob("*.py")} >= {"__init__.py", "edit.py", "general.py"}
