"""A module imported where it is first used, then bound in its owner's namespace in its place.

Spark's Python processes import a processor's module for more than running it: the driver-side planner
of ``transformWithStateInPandas`` imports it only to call ``init`` (the state's schema). pandas and
numpy cost about half a second of CPU to import, at every start of a query with a funke operator, so
the modules that run on pandas (``funke.spark.general``, ``funke.spark.generated``) import them on
first use.

>>> import sys, types
>>> owner = types.ModuleType("owner_doc"); sys.modules["owner_doc"] = owner
>>> owner.js = OnFirstUse("json", "js", "owner_doc")
>>> owner.js.dumps([1]), type(owner.js).__name__
('[1]', 'module')
"""

from __future__ import annotations

import importlib
from typing import Any


class OnFirstUse:
    """Stands for module ``module`` in module ``owner`` under the name ``alias`` until an attribute is read."""

    def __init__(self, module: str, alias: str, owner: str) -> None:
        self.module, self.alias, self.owner = module, alias, owner

    def __reduce__(self) -> tuple[Any, ...]:  # (a function pickled with its module's names: still unimported)
        return OnFirstUse, (self.module, self.alias, self.owner)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # (pickle, copy and inspect probe dunders: not a use)
            raise AttributeError(name)
        module = importlib.import_module(self.module)
        setattr(importlib.import_module(self.owner), self.alias, module)
        return getattr(module, name)
