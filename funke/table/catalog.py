"""The Python functions a ``StreamTableEnvironment`` knows by name, and the SQL that names them:
``CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'module.attr' LANGUAGE PYTHON`` and
``DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] name``.

Names are case-insensitive, as in Flink. A name resolves to a temporary system function first, then a
temporary function, then a catalog function (``CREATE FUNCTION`` without ``TEMPORARY``, or
``create_function``: funke keeps no catalog beyond the session, as Flink's default in-memory catalog).
A function a Table API call uses without registering it gets a name of its own (its Python name, or that
with a number when taken), kept out of ``list_user_defined_functions``.

One difference from Flink: a Python function's name takes precedence over a built-in function of the
same name (Flink resolves built-in functions before temporary catalog functions, so there only a
temporary system function overrides a built-in). Give your functions names no built-in has.

>>> from funke.table.udf import udf
>>> catalog = FunctionCatalog()
>>> catalog.create_temporary("Plus_One", udf(lambda x: x + 1, result_type="BIGINT"))
>>> catalog.resolve("PLUS_ONE").name, catalog.list_user_defined()
('lambda', ['plus_one'])
>>> catalog.execute("DROP TEMPORARY FUNCTION plus_one"); catalog.list_user_defined()
[]
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.table.udf import UserDefinedFunctionWrapper, as_function

_CREATE = re.compile(
    r"^\s*CREATE\s+(?P<temporary>TEMPORARY\s+)?(?P<system>SYSTEM\s+)?FUNCTION\s+(?P<exists>IF\s+NOT\s+EXISTS\s+)?"
    r"(?P<name>[`\w.]+)(?P<rest>.*?);?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_AS = re.compile(r"\s+AS\s+(?P<q>['\"])(?P<path>[^'\"]+)(?P=q)", re.IGNORECASE)
_LANGUAGE = re.compile(r"\s+LANGUAGE\s+(?P<language>\w+)", re.IGNORECASE)
_DROP = re.compile(
    r"^\s*DROP\s+(?P<temporary>TEMPORARY\s+)?(?P<system>SYSTEM\s+)?FUNCTION\s+(?P<exists>IF\s+EXISTS\s+)?(?P<name>[`\w.]+)\s*;?\s*$",
    re.IGNORECASE,
)
_FUNCTION_DDL = re.compile(r"^\s*(CREATE|DROP|ALTER)\s+(TEMPORARY\s+)?(SYSTEM\s+)?FUNCTION\b", re.IGNORECASE)


def is_function_ddl(text: str) -> bool:
    """``text`` is a CREATE, DROP or ALTER FUNCTION statement."""
    return bool(_FUNCTION_DDL.match(text))


class FunctionCatalog:
    """A table environment's Python functions by (lower-case) name, in Flink's four scopes."""

    def __init__(self) -> None:
        self.temporary_system: dict[str, UserDefinedFunctionWrapper] = {}
        self.temporary: dict[str, UserDefinedFunctionWrapper] = {}
        self.catalog: dict[str, UserDefinedFunctionWrapper] = {}
        self.inline: dict[str, UserDefinedFunctionWrapper] = {}
        #: ``pipeline.global-job-parameters``: what ``FunctionContext.get_job_parameter`` reads.
        self.job_parameters: dict[str, str] = {}

    def resolve(self, name: str) -> UserDefinedFunctionWrapper | None:
        key = _key(name)
        for scope in (self.temporary_system, self.temporary, self.catalog, self.inline):
            if key in scope:
                return scope[key]
        return None

    def names(self) -> frozenset[str]:
        return frozenset((*self.temporary_system, *self.temporary, *self.catalog, *self.inline))

    def list_user_defined(self) -> list[str]:
        return sorted({*self.temporary_system, *self.temporary, *self.catalog})

    def list_temporary(self) -> list[str]:
        return sorted({*self.temporary_system, *self.temporary})

    # -- registering ------------------------------------------------------------------------------
    def create_temporary_system(self, name: str, function: Any) -> None:
        self._add(self.temporary_system, name, function, "temporary system function")

    def create_temporary(self, name: str, function: Any) -> None:
        self._add(self.temporary, name, function, "temporary function")

    def create(self, name: str, function: Any, ignore_if_exists: bool = False) -> None:
        if _key(name) in self.catalog and ignore_if_exists:
            return
        self._add(self.catalog, name, function, "function")

    def _add(self, scope: dict[str, UserDefinedFunctionWrapper], name: str, function: Any, what: str) -> None:
        key = _key(name)
        if key in scope:
            raise PlanError(f"a {what} named {key!r} exists already: drop it first (drop_{what.replace(' ', '_')}({key!r}))")
        scope[key] = as_function(function, key)

    def drop(self, scope: str, name: str) -> bool:
        """Drop ``name`` from ``scope`` (temporary_system, temporary, catalog); whether there was one."""
        return getattr(self, scope).pop(_key(name), None) is not None

    def name_of(self, function: UserDefinedFunctionWrapper) -> str:
        """The name a Table API call of ``function`` uses in the SQL it becomes: the name it is registered
        by, or one of its own (its Python name, numbered when taken)."""
        for scope in (self.temporary_system, self.temporary, self.catalog, self.inline):
            for key, registered in scope.items():
                if registered is function and self.resolve(key) is function:
                    return key
        base = re.sub(r"\W", "_", function.name.lower()) or "fn"
        key, n = base, 1
        while self.resolve(key) is not None:
            n += 1
            key = f"{base}_{n}"
        self.inline[key] = function
        return key

    # -- SQL --------------------------------------------------------------------------------------
    def execute(self, text: str) -> None:
        """Run a CREATE or DROP FUNCTION statement."""
        if re.match(r"^\s*ALTER\b", text, re.IGNORECASE):
            raise UnsupportedError(
                "Flink SQL: ALTER FUNCTION is not supported by funke: DROP FUNCTION it, then CREATE FUNCTION it again"
            )
        drop = _DROP.match(text)
        if drop is not None:
            scope = "temporary_system" if drop["system"] else "temporary" if drop["temporary"] else "catalog"
            name = _plain_name(drop["name"])
            if not self.drop(scope, name) and not drop["exists"]:
                what = scope.replace("_", " ") + " function" if scope != "catalog" else "function"
                raise PlanError(
                    f"Flink SQL: DROP FUNCTION {name}: there is no {what} of that name{self.hint(name)} (DROP FUNCTION IF EXISTS passes)"
                )
            return
        create = _CREATE.match(text)
        if create is None:
            raise PlanError(
                f"Flink SQL: cannot read {text.strip()!r}: write CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS "
                "'module.attribute' LANGUAGE PYTHON"
            )
        rest = create["rest"]
        path, language = _AS.search(rest), _LANGUAGE.search(rest)
        if path is None:
            raise PlanError(f"Flink SQL: CREATE FUNCTION {create['name']}: say where the function is, AS 'module.attribute'")
        language = (language["language"] if language is not None else "JAVA").upper()
        rest = _LANGUAGE.sub("", _AS.sub("", rest, count=1), count=1)
        if language != "PYTHON":
            raise UnsupportedError(
                f"Flink SQL: CREATE FUNCTION ... LANGUAGE {language} is not supported by funke (it runs no JVM functions): "
                "write a Python function and CREATE FUNCTION name AS 'module.attribute' LANGUAGE PYTHON"
            )
        if rest.strip():
            raise UnsupportedError(
                f"Flink SQL: {rest.strip()!r} in CREATE FUNCTION is not supported by funke (a Python function needs no JARs)"
            )
        name = _plain_name(create["name"])
        scope = self.temporary_system if create["system"] else self.temporary if create["temporary"] else self.catalog
        if _key(name) in scope and create["exists"]:
            return
        function = load(path["path"], name)
        if create["system"]:
            self.create_temporary_system(name, function)
        elif create["temporary"]:
            self.create_temporary(name, function)
        else:
            self.create(name, function)

    def hint(self, name: str) -> str:
        """``" (did you mean 'x'?); functions: a, b"`` for an unknown function name."""
        import difflib

        known = sorted(self.names())
        close = difflib.get_close_matches(_key(name), known, n=1)
        return (
            f" (did you mean '{close[0]}'?)" if close else ""
        ) + f"; Python functions: {', '.join(known) or 'none registered'}"


def load(path: str, name: str) -> Any:
    """The object at ``module.attribute`` (``CREATE FUNCTION ... AS 'module.attribute'``)."""
    module_name, _, attribute = path.strip().rpartition(".")
    if not module_name:
        raise PlanError(f"Flink SQL: CREATE FUNCTION {name} AS {path!r}: name the function's module too ('my_udfs.{path}')")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise PlanError(f"Flink SQL: CREATE FUNCTION {name} AS {path!r}: cannot import {module_name!r} ({e})") from None
    if not hasattr(module, attribute):
        public = sorted(a for a in vars(module) if not a.startswith("_"))
        raise PlanError(
            f"Flink SQL: CREATE FUNCTION {name} AS {path!r}: module {module_name} has no {attribute!r}; it has {', '.join(public)}"
        )
    return as_function(getattr(module, attribute), _key(name))


def _key(name: str) -> str:
    return name.strip("`").lower()


def _plain_name(text: str) -> str:
    parts = text.strip("`").split(".")
    if len(parts) > 1:
        raise UnsupportedError(
            f"Flink SQL: the qualified function name {text} is not supported by funke (it has one catalog): name it {parts[-1]}"
        )
    return parts[0]


def function_ddl_text(statement: Any) -> str | None:
    """A parsed statement's text when it is CREATE or DROP FUNCTION (sqlglot reads some of those as a
    ``Command``, some as ``Create``/``Drop`` of kind FUNCTION); None for any other statement."""
    from sqlglot import exp

    if isinstance(statement, exp.Command):
        text = f"{statement.this} {statement.expression.sql() if isinstance(statement.expression, exp.Expression) else statement.expression}"
    elif isinstance(statement, (exp.Create, exp.Drop)) and str(statement.args.get("kind", "")).upper() == "FUNCTION":
        text = statement.sql(comments=False)  # (a script's comment before the statement is no part of it)
    else:
        return None
    return text if is_function_ddl(text) else None
