"""The import hook of ``python -m funke.pyflink``: ``pyflink.X`` is ``funke.pyflink.X`` (the same module objects).

A name funke's translation lacks is refused naming it, rather than resolved to a real PyFlink.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

#: Where each alias's module really lives (its own spec, put back after the import system set the alias's).
_PREFIX = "funke."


class PyFlinkAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "pyflink" and not fullname.startswith("pyflink."):
            return None
        real = _PREFIX + fullname
        try:
            found = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r} in funke's PyFlink translation (funke.pyflink): it has pyflink.common, "
                "pyflink.datastream (with connectors.file_system, connectors.kafka, formats.json, formats.csv) and "
                "pyflink.table; see README, 'Coming from PyFlink'",
                name=fullname,
            )
        return importlib.util.spec_from_loader(fullname, self, is_package=found.submodule_search_locations is not None)

    def create_module(self, spec: Any) -> ModuleType:
        module = importlib.import_module(_PREFIX + spec.name)
        self._own = getattr(self, "_own", {})
        self._own[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        own = self._own.pop(module.__spec__.name if module.__spec__ else "", None)
        if own is not None:
            module.__spec__ = own  # (the module stays funke's: pickles and find_spec name it so)


def install() -> None:
    """Make ``import pyflink...`` import funke's translation (idempotent)."""
    if not any(isinstance(f, PyFlinkAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, PyFlinkAlias())
