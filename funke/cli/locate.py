"""Finding a job by import string (``examples.ysb:job``), with errors that say what to fix."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

from funke.errors import PlanError, did_you_mean


def locate(target: str) -> Any:
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise PlanError(f"'{target}' is not MODULE:JOB (e.g. examples.ysb:job)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            raise PlanError(f"no module '{module_name}' (looked in {os.getcwd()} and the Python path)") from None
        raise
    try:
        return getattr(module, attr)
    except AttributeError:
        raise PlanError(f"module '{module_name}' has no job '{attr}'" + did_you_mean(attr, jobs_of(module), "jobs")) from None


def jobs_of(module: Any) -> list[str]:
    """The jobs ``module`` defines: its StreamEnvironments and the functions of its own that return one
    (by their return annotation; without any such, every public function of its own)."""
    from funke.api.environment import StreamEnvironment

    envs, makers, functions = [], [], []
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, StreamEnvironment):
            envs.append(name)
        elif inspect.isfunction(obj) and obj.__module__ == module.__name__:
            functions.append(name)
            returns = inspect.signature(obj).return_annotation
            if returns is StreamEnvironment or str(returns).rsplit(".", 1)[-1].strip("'\"") == "StreamEnvironment":
                makers.append(name)
    return sorted(envs + (makers or functions))


def build(target: str, options: dict[str, Any]) -> Any:
    """The StreamEnvironment a job target gives: an environment, or a function called with the options it accepts,
    or a Flink SQL script (``FILE.sql``)."""
    from funke.api.environment import StreamEnvironment

    given = {k: v for k, v in options.items() if v is not None}
    if target.endswith(".sql"):
        return sql_job(target, given)
    obj = locate(target)
    if isinstance(obj, StreamEnvironment):
        if given:
            raise PlanError(f"{target} is a ready StreamEnvironment; it takes no options (got {', '.join('--' + k for k in given)})")
        return obj
    if not callable(obj):
        raise PlanError(f"{target} is a {type(obj).__name__}; expected a StreamEnvironment or a function returning one")
    params = inspect.signature(obj).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    unknown = [k for k in given if k not in params and not takes_any]
    if unknown:
        raise PlanError(f"{target} does not take {', '.join('--' + k for k in unknown)}; it takes: {', '.join(params) or 'nothing'}")
    env = obj(**{k: _typed(v, params.get(k)) for k, v in given.items()})
    if not isinstance(env, StreamEnvironment):
        raise PlanError(f"{target}(...) returned {type(env).__name__}; it must return the StreamEnvironment with its sinks")
    return env


def _typed(value: Any, param: inspect.Parameter | None) -> Any:
    """A ``--opt KEY=VALUE`` string as the type of the parameter's default (int, float, bool)."""
    if not isinstance(value, str) or param is None or param.default is inspect.Parameter.empty or param.default is None:
        return value
    kind = type(param.default)
    try:
        if kind is bool:
            return value.lower() in ("1", "true", "yes", "on")
        return kind(value) if kind in (int, float) else value
    except ValueError:
        raise PlanError(f"option {param.name}={value!r}: expected {kind.__name__}") from None


def sql_job(path: str, options: dict[str, Any]) -> Any:
    """The job of a Flink SQL script: its ``CREATE TABLE`` statements, and its ``INSERT INTO`` statements
    together as one job, named after the file (``clicks.sql``: ``clicks``)."""
    import re
    from pathlib import Path

    from funke.api.environment import StreamEnvironment
    from funke.table import StreamTableEnvironment

    if options:
        raise PlanError(f"{path} is a SQL script; it takes no options (got {', '.join('--' + k for k in options)})")
    file = Path(path)
    if not file.is_file():
        raise PlanError(f"no SQL script {path} (looked in {os.getcwd()})")
    env = StreamEnvironment(app=re.sub(r"[^A-Za-z0-9._-]", "-", file.stem) or "sql")
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_script(file.read_text())
    if not env.sinks:
        raise PlanError(f"{path} has no INSERT INTO statement: nothing to run")
    return env
