"""Python scalar functions that Spark SQL expressions call by name (Flink SQL's Python UDFs, lowered).

A query's expressions stay Spark SQL text (``funke.plan.expr.Sql``); a call of a Python scalar function
in them is written with the name Spark knows the function by, ``fk_py_<name>_<fingerprint>``. Each such
name stands for one ``PythonScalar`` here: the Spark compiler registers it in the session as an Arrow
UDF before it compiles a node whose expressions call it (``funke.spark.udfs``), so the expressions around
the call stay in the JVM and only the function's arguments cross to Python, a batch at a time.

The name is derived from what the function is (its name, code, kind and result type), never from when
it was registered, so a plan's node uids (and with them savepoints) stay the same from one run to the next.

>>> spec = PythonScalar.of("plus_one", lambda x: x + 1, kind="general", result_type="bigint", arity=1)
>>> spec.spark_name.startswith("fk_py_plus_one_")
True
>>> [s.name for s in calls_in(f"upper({spec.spark_name}(a)) || 'x'")]
['plus_one']
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from funke.errors import SchemaError
from funke.plan.expr import Expr, Sql
from funke.plan.node import Node
from funke.plan.types import Schema

#: How each kind runs (explain()).
KINDS = {
    "general": "Arrow UDF, one Python call per row over Arrow batches",
    "pandas": "Arrow UDF, one call per Arrow batch with pandas Series",
    "arrow": "Arrow UDF, one call per Arrow batch with Arrow arrays",
}
_CALL = re.compile(r"\b(fk_py_[a-z0-9_]+_[0-9a-f]{10})\s*\(", re.IGNORECASE)  # (SQL text may spell it in upper case)


@dataclass(frozen=True, eq=False)
class PythonScalar:
    """One Python scalar function as Spark calls it. ``function`` is the user's callable (a function, or a
    ``ScalarFunction``'s ``eval``); ``owner`` the object whose ``open(context)``/``close()`` run around a
    Spark task's batches (None for a plain function); ``dummy_argument``: called without arguments, the
    query passes one constant column so Spark knows each batch's length, which the function never sees."""

    name: str
    spark_name: str
    function: Any
    kind: str
    result_type: str
    arity: int | None
    deterministic: bool = True
    owner: Any = None
    context: Any = None
    dummy_argument: bool = False
    #: The Flink SQL type the result is declared as (messages).
    declared: str = field(default="")

    @classmethod
    def of(cls, name: str, function: Any, *, kind: str, result_type: str, arity: int | None, **more: Any) -> PythonScalar:
        if kind not in KINDS:
            raise ValueError(f"unknown kind of Python function {kind!r}: {', '.join(KINDS)}")
        safe = re.sub(r"[^a-z0-9_]", "_", name.lower())[:40] or "fn"
        what = (
            kind, result_type, more.get("deterministic", True), more.get("dummy_argument", False), repr(more.get("context")),
            fingerprint(more.get("owner") or function),
        )  # fmt: skip
        spec = cls(
            name, f"fk_py_{safe}_{hashlib.sha1(repr(what).encode()).hexdigest()[:10]}", function, kind, result_type, arity, **more
        )
        _REGISTERED.setdefault(spec.spark_name, spec)
        return _REGISTERED[spec.spark_name]

    def describe(self) -> str:
        det = "" if self.deterministic else ", non-deterministic"
        return f"{self.name} ({KINDS[self.kind]}{det})"


#: Every Python scalar function a plan of this process calls, by its Spark name.
_REGISTERED: dict[str, PythonScalar] = {}


def calls_in(text: str) -> list[PythonScalar]:
    """The Python scalar functions a Spark SQL expression calls, in order of first call."""
    seen: dict[str, PythonScalar] = {}
    for name in map(str.lower, _CALL.findall(text)):
        if name in _REGISTERED:
            seen.setdefault(name, _REGISTERED[name])
    return list(seen.values())


def fingerprint(obj: Any) -> str:
    """What a function is, stable across runs of the same program: its qualified name, its code and
    constants, the values it closes over, an object's attributes (a ``ScalarFunction`` with a factor)."""
    parts: list[str] = [type(obj).__module__, type(obj).__qualname__]
    target = obj
    if not hasattr(obj, "__code__"):
        parts.append(_state(obj))
        target = getattr(obj, "eval", None) or getattr(obj, "accumulate", None) or vars(type(obj)).get("__call__")
        target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if code is not None:
        parts += [
            getattr(target, "__module__", "") or "",
            getattr(target, "__qualname__", ""),
            code.co_code.hex(),
            repr(code.co_consts),
        ]
        for cell in getattr(target, "__closure__", None) or ():
            try:
                parts.append(_state(cell.cell_contents))
            except ValueError:  # (an empty cell)
                parts.append("<empty>")
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()


def _state(value: Any) -> str:
    if hasattr(value, "__code__"):
        return fingerprint(value)
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        return f"{type(value).__qualname__}({', '.join(f'{k}={_state(v)}' for k, v in sorted(attributes.items()))})"
    text = repr(value)
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # (a default repr's address differs from run to run)


def python_calls(node: Any) -> list[PythonScalar]:
    """The Python scalar functions the expressions of a plan node call."""
    texts: list[str] = []

    def visit(value: Any) -> None:
        if isinstance(value, Sql):
            texts.append(value.text)
        elif isinstance(value, Expr) and dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                visit(getattr(value, f.name))
        elif isinstance(value, (tuple, list)):
            for v in value:
                visit(v)

    if dataclasses.is_dataclass(node):
        for f in dataclasses.fields(node):
            if f.name != "inputs":
                visit(getattr(node, f.name))
    return list({spec.spark_name: spec for text in texts for spec in calls_in(text)}.values())


def expressions_why(node: Any) -> str:
    """How a select's or filter's expressions run (explain()): in the JVM, but for its Python functions."""
    specs = python_calls(node)
    if not specs:
        return "Spark expressions (whole-stage codegen)"
    return (
        "Spark expressions in the JVM (whole-stage codegen) around the Python functions "
        + "; ".join(s.describe() for s in specs)
        + ", each a Spark ArrowEvalPython step that sends only its arguments to Python"
    )


@dataclass(frozen=True, eq=False)
class LateralTable(Node):
    """``FROM v, LATERAL TABLE(f(args)) AS T(names)``: each row of the input joined with the rows the Python
    table function ``f`` makes of its arguments (columns of the input), as Spark's lateral join with a
    Python UDTF over Arrow. ``outer``: ``LEFT JOIN LATERAL ... ON TRUE``, a row with no result rows kept,
    its function columns NULL. ``function`` is what the worker calls (``funke.table.udf_lowering``)."""

    function: Any = field(kw_only=True)
    function_name: str = field(kw_only=True)
    args: tuple[str, ...] = field(kw_only=True)
    result: Schema = field(kw_only=True)
    outer: bool = field(default=False, kw_only=True)
    deterministic: bool = field(default=True, kw_only=True)
    kind: ClassVar[str] = "lateral_table"

    def validate(self, inputs: tuple[Schema | None, ...]) -> None:
        schema = inputs[0]
        if schema is None:
            return
        for a in self.args:
            schema.field(a, node=self.where())
        clash = [f.name for f in self.result if f.name in schema]
        if clash:
            raise SchemaError(
                f"{self.where()}: the table function's column(s) {', '.join(clash)} exist in its input already: name them otherwise (AS T(...))"
            )

    def derive_schema(self, inputs: tuple[Schema | None, ...]) -> Schema | None:
        return Schema(inputs[0].fields + self.result.fields) if inputs[0] is not None else None

    def where(self) -> str:
        return f"LATERAL TABLE({self.function_name})"

    def params(self) -> tuple[Any, ...]:
        return (self.function_name, fingerprint(self.function), self.args, str(self.result), self.outer)

    def label(self) -> str:
        side = "LEFT JOIN " if self.outer else ""
        return f"{side}lateral table {self.function_name}({', '.join(self.args)}) -> ({self.result}) [Python UDTF, Arrow batches]"
