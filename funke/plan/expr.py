"""Column expressions users write (``fk.col("event_type") == "view"``), as an immutable tree.

The tree is pyspark-free: the plan can name the columns an expression reads and infer
its type, so an unknown column is reported while planning. The Spark compiler turns it
into a native ``Column`` (no Python per row). SQL strings are kept as ``Sql`` nodes and
resolved by Spark's analyzer at compile time, still before any query starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from funke.errors import PlanError, SchemaError, did_you_mean
from funke.plan.types import INTEGRAL, Field, Schema, is_numeric, normalize_type, python_type_name

_COMPARE = {"==", "!=", "<", "<=", ">", ">="}
_ARITH = {"+", "-", "*", "/", "%"}
_LOGIC = {"and", "or"}


class Expr:
    """Base of expression nodes; operators build new nodes."""

    # -- operators -----------------------------------------------------------------
    def _bin(self, op: str, other: Any, reverse: bool = False) -> BinOp:
        o = lift(other)
        return BinOp(op, o, self) if reverse else BinOp(op, self, o)

    def __eq__(self, other: Any) -> BinOp:  # type: ignore[override]
        return self._bin("==", other)

    def __ne__(self, other: Any) -> BinOp:  # type: ignore[override]
        return self._bin("!=", other)

    def __lt__(self, other: Any) -> BinOp:
        return self._bin("<", other)

    def __le__(self, other: Any) -> BinOp:
        return self._bin("<=", other)

    def __gt__(self, other: Any) -> BinOp:
        return self._bin(">", other)

    def __ge__(self, other: Any) -> BinOp:
        return self._bin(">=", other)

    def __add__(self, o: Any) -> BinOp:
        return self._bin("+", o)

    def __radd__(self, o: Any) -> BinOp:
        return self._bin("+", o, True)

    def __sub__(self, o: Any) -> BinOp:
        return self._bin("-", o)

    def __rsub__(self, o: Any) -> BinOp:
        return self._bin("-", o, True)

    def __mul__(self, o: Any) -> BinOp:
        return self._bin("*", o)

    def __rmul__(self, o: Any) -> BinOp:
        return self._bin("*", o, True)

    def __truediv__(self, o: Any) -> BinOp:
        return self._bin("/", o)

    def __mod__(self, o: Any) -> BinOp:
        return self._bin("%", o)

    def __and__(self, o: Any) -> BinOp:
        return self._bin("and", o)

    def __rand__(self, o: Any) -> BinOp:
        return self._bin("and", o, True)

    def __or__(self, o: Any) -> BinOp:
        return self._bin("or", o)

    def __ror__(self, o: Any) -> BinOp:
        return self._bin("or", o, True)

    def __invert__(self) -> Call:
        return Call("not", (self,))

    def __neg__(self) -> BinOp:
        return BinOp("-", Lit(0), self)

    def __hash__(self) -> int:
        return hash(repr(self))

    def __bool__(self) -> bool:
        raise PlanError(
            f"{self!r} is a column expression, not a Python bool: combine conditions with & and | "
            "(not 'and'/'or'), wrap each comparison in parentheses, and use .isin([...]) instead of 'in'"
        )

    # -- helpers ------------------------------------------------------------------
    def alias(self, name: str) -> Alias:
        return Alias(self, name)

    def cast(self, dtype: str) -> Cast:
        return Cast(self, normalize_type(dtype) or dtype)

    def isin(self, values: list[Any] | tuple[Any, ...] | set[Any]) -> Call:
        return Call("isin", (self, *(lift(v) for v in values)))

    def is_null(self) -> Call:
        return Call("isnull", (self,))

    def is_not_null(self) -> Call:
        return Call("isnotnull", (self,))

    # -- analysis -----------------------------------------------------------------
    def columns(self) -> frozenset[str] | None:
        """Columns this expression reads; ``None`` when only Spark can tell (SQL text)."""
        raise NotImplementedError

    def output_name(self) -> str | None:
        return None

    def renamed(self) -> str | None:
        """The input column this expression is, under another name (``col("ts").alias("t")``, ``ts AS t``); else None."""
        return None

    def dtype(self, schema: Schema, node: str) -> str | None:
        raise NotImplementedError


def lift(v: Any) -> Expr:
    return v if isinstance(v, Expr) else Lit(v)


@dataclass(frozen=True, eq=False)
class Col(Expr):
    name: str

    def __repr__(self) -> str:
        return f"col({self.name!r})"

    def columns(self) -> frozenset[str]:
        return frozenset({self.name})

    def output_name(self) -> str:
        return self.name

    def dtype(self, schema: Schema, node: str) -> str | None:
        return schema.field(self.name, node=node).dtype


@dataclass(frozen=True, eq=False)
class Lit(Expr):
    value: Any

    def __repr__(self) -> str:
        return f"lit({self.value!r})"

    def columns(self) -> frozenset[str]:
        return frozenset()

    def dtype(self, schema: Schema, node: str) -> str | None:
        t = python_type_name(self.value)
        return "int" if t == "bigint" and -(2**31) <= self.value < 2**31 else t


@dataclass(frozen=True, eq=False)
class ProcTime(Expr):
    """Flink SQL's ``PROCTIME()``: the time a row is processed (a ``timestamp`` in milliseconds: the
    micro-batch's time, which funke's operators read as their processing time too). A column made of
    it is the stream's processing-time attribute (``Node.proc_time``): windows and deduplications
    can run on it."""

    def __repr__(self) -> str:
        return "proctime()"

    def columns(self) -> frozenset[str]:
        return frozenset()

    def dtype(self, schema: Schema, node: str) -> str | None:
        return "timestamp"


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr

    def __repr__(self) -> str:
        return f"({self.left!r} {self.op} {self.right!r})"

    def columns(self) -> frozenset[str] | None:
        a, b = self.left.columns(), self.right.columns()
        return None if a is None or b is None else a | b

    def dtype(self, schema: Schema, node: str) -> str | None:
        lt, rt = self.left.dtype(schema, node), self.right.dtype(schema, node)
        if self.op in _COMPARE or self.op in _LOGIC:
            return "boolean"
        if lt is None or rt is None:
            return None
        if not (is_numeric(lt) and is_numeric(rt)):
            if self.op in ("+", "-") and "timestamp" in (lt, rt):
                return None
            raise SchemaError(f"{node}: cannot apply '{self.op}' to {lt} and {rt} in {self!r}")
        if self.op == "/":
            return "double"
        if lt in INTEGRAL and rt in INTEGRAL:
            order = ["tinyint", "smallint", "int", "bigint"]
            return max(lt, rt, key=order.index)
        return "double"


_BOOL_FUNCS = {"not", "isin", "isnull", "isnotnull", "like", "startswith", "endswith", "contains"}


@dataclass(frozen=True, eq=False)
class Call(Expr):
    """A Spark SQL function by name (``fn("concat", ...)``); type known for a few, else ``None``."""

    name: str
    args: tuple[Expr, ...]

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(map(repr, self.args))})"

    def columns(self) -> frozenset[str] | None:
        out: frozenset[str] = frozenset()
        for a in self.args:
            c = a.columns()
            if c is None:
                return None
            out |= c
        return out

    def output_name(self) -> str | None:
        return None

    def dtype(self, schema: Schema, node: str) -> str | None:
        types = [a.dtype(schema, node) for a in self.args]  # validates columns
        if self.name in _BOOL_FUNCS:
            return "boolean"
        if self.name in ("concat", "upper", "lower", "substring"):
            return "string"
        if self.name in ("coalesce",) and types:
            return types[0]
        return None


@dataclass(frozen=True, eq=False)
class Alias(Expr):
    expr: Expr
    name: str

    def __repr__(self) -> str:
        return f"{self.expr!r}.alias({self.name!r})"

    def columns(self) -> frozenset[str] | None:
        return self.expr.columns()

    def output_name(self) -> str:
        return self.name

    def renamed(self) -> str | None:
        return self.expr.name if isinstance(self.expr, Col) else self.expr.renamed()

    def dtype(self, schema: Schema, node: str) -> str | None:
        return self.expr.dtype(schema, node)


@dataclass(frozen=True, eq=False)
class Cast(Expr):
    expr: Expr
    to: str

    def __repr__(self) -> str:
        return f"{self.expr!r}.cast({self.to!r})"

    def columns(self) -> frozenset[str] | None:
        return self.expr.columns()

    def output_name(self) -> str | None:
        return self.expr.output_name()

    def dtype(self, schema: Schema, node: str) -> str | None:
        self.expr.dtype(schema, node)
        return self.to


#: A column name, plain or in backticks (then any characters but a backtick: Flink SQL's ``EXPR$1``).
_NAME = r"(?:`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*))"
_IDENT = re.compile(rf"^{_NAME}$")
_PLAIN = re.compile(r"^`?([A-Za-z_][A-Za-z0-9_]*)`?$")  # (a column funke refers to by name)
_AS = re.compile(rf"\s+as\s+{_NAME}\s*$", re.IGNORECASE)


def _named(m: re.Match[str] | None) -> str | None:
    return (m.group(1) or m.group(2)) if m else None


@dataclass(frozen=True, eq=False)
class Sql(Expr):
    """A SQL expression string, resolved by Spark's analyzer at compile time. ``declared`` is its
    type when the writer knows it for certain (Flink SQL's planner does for some), else it is
    known only to Spark (but for a bare column's)."""

    text: str
    declared: str | None = None

    def __repr__(self) -> str:
        return f"expr({self.text!r})"

    def columns(self) -> frozenset[str] | None:
        name = _named(_IDENT.match(self.text.strip()))
        return frozenset({name}) if name else None

    def output_name(self) -> str | None:
        t = self.text.strip()
        return _named(_IDENT.match(t)) or _named(_AS.search(t))

    def renamed(self) -> str | None:
        t = self.text.strip()
        alias = _AS.search(t)
        return _named(_IDENT.match(t[: alias.start()].strip())) if alias else None

    def dtype(self, schema: Schema, node: str) -> str | None:
        if self.declared is not None:
            return self.declared
        name = _named(_IDENT.match(self.text.strip()))
        return schema.field(name, node=node).dtype if name else None


def col(name: str) -> Col:
    """A column by name. ``fk.col("event_type") == "view"``."""
    if not isinstance(name, str) or not name:
        raise PlanError(f"col() takes a column name, got {name!r}")
    return Col(name)


def lit(value: Any) -> Lit:
    return Lit(value)


def expr(sql: str) -> Sql:
    """A Spark SQL expression string: ``fk.expr("price * quantity AS total")``."""
    if not isinstance(sql, str) or not sql.strip():
        raise PlanError(f"expr() takes a SQL expression string, got {sql!r}")
    return Sql(sql)


def fn(name: str, *args: Any) -> Call:
    """Any Spark SQL function by name: ``fk.fn("concat", fk.col("a"), "-", fk.col("b"))``."""
    return Call(name.lower(), tuple(lift(a) for a in args))


def to_expr(e: Expr | str) -> Expr:
    """User input to an expression: a string is a SQL expression (a bare name is a column)."""
    if isinstance(e, Expr):
        return e
    if isinstance(e, str):
        m = _PLAIN.match(e.strip())
        return Col(m.group(1)) if m else Sql(e)
    raise PlanError(f"expected a column expression (fk.col(...)) or a SQL string, got {type(e).__name__} {e!r}")


def output_field(e: Expr, schema: Schema, node: str) -> Field:
    """The field an expression produces in a select, naming unknown columns clearly."""
    cols = e.columns()
    if cols is not None:
        for c in sorted(cols):
            if c not in schema:
                raise SchemaError(f"{node}: unknown column '{c}' in {e!r}{did_you_mean(c, schema.names)}")
    name = e.output_name()
    if name is None:
        name = repr(e) if not isinstance(e, Sql) else e.text.strip()
    return Field(name, e.dtype(schema, node))
