"""funke's optional dependencies, by the pip extra that installs them (``pip install 'funke[redis]'``).

The core (``pip install funke``) runs jobs on Spark with the generator, collections, files and
the dashboard; each connector or library that needs more names its extra. A module missing
at run time becomes one line saying what to install (``missing_extra``), not a traceback.

>>> EXTRA_OF["confluent_kafka"], EXTRA_OF["psycopg"]
('kafka', 'postgres')
>>> missing_extra(ModuleNotFoundError("No module named 'redis'", name="redis"))
"needs the Python package 'redis' (No module named 'redis'): pip install 'funke[redis]' (from a clone of funke: pip install -e '.[redis]')"
>>> missing_extra(ModuleNotFoundError("No module named 'left_pad'", name="left_pad")) is None
True
"""

from __future__ import annotations

#: Top-level module -> the extra of pyproject.toml that installs it.
EXTRA_OF = {
    "redis": "redis",
    "hiredis": "redis",
    "psycopg": "postgres",
    "psycopg_binary": "postgres",
    "confluent_kafka": "kafka",
    "sklearn": "ml",
    "onnx": "ml",
    "onnxruntime": "ml",
    "river": "ml",
    "networkx": "graph",
    "grpc": "connect",
    "grpc_status": "connect",
    "zstandard": "connect",
}


def install_hint(extra: str) -> str:
    return f"pip install 'funke[{extra}]' (from a clone of funke: pip install -e '.[{extra}]')"


def missing_extra(error: ModuleNotFoundError) -> str | None:
    """What to install for ``error`` when the missing module is one of an extra's; None otherwise."""
    top = (error.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return f"needs the Python package '{top}' ({error}): {install_hint(extra)}"
