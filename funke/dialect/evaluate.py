"""MATCH_RECOGNIZE's DEFINE and MEASURES expressions, compiled to Python with SQL's NULL semantics.

An expression reads rows of the (partial) match through a *scope*: ``rows(variable)`` are the rows
mapped to a pattern variable so far (``None``: all rows, in order). In DEFINE (:class:`RowsScope`)
the row being tested counts as mapped to the variable being defined, as in Flink; in MEASURES
(:class:`MatchScope`) the scope is the whole match.

* ``A.col`` is ``LAST(A.col)``: the last row of ``A`` (in DEFINE of ``A``: the row being tested);
  ``col`` without a variable reads the last row of all (in DEFINE: the row being tested);
* ``LAST(A.col, n)`` / ``FIRST(A.col, n)``: the ``n``-th row from the last / first of ``A``;
* ``PREV(A.col, n)``: the row ``n`` before the last row of ``A`` in the match (NULL before its first);
* ``COUNT``, ``SUM``, ``AVG``, ``MIN``, ``MAX`` over the rows of one variable (or all);
* ``MATCH_ROWTIME()`` (MEASURES): the time attribute of the match's last row.

A NULL operand makes a comparison or arithmetic NULL; ``AND``/``OR``/``NOT`` are three-valued; a
DEFINE condition holds only when TRUE.

>>> from funke.plan.types import Schema
>>> import sqlglot
>>> c = ExprCompiler(Schema.of("price double"), ("A", "B"), None, define=True)
>>> c.defining = "B"
>>> fn = c.compile(sqlglot.parse_one("B.price < LAST(A.price) AND AVG(A.price) > 1"))
>>> class Ctx:
...     def get_events_for_pattern(self, name): return [{"price": 3.0}, {"price": 5.0}] if name == "A" else []
>>> fn(RowsScope(("A", "B"), Ctx(), "B", {"price": 4.0}), None)
True
>>> fn(RowsScope(("A", "B"), Ctx(), "B", {"price": None}), None) is None
True
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal, localcontext
from typing import Any

from sqlglot import exp

from funke.dialect.date_arithmetic import interval_ms
from funke.errors import PlanError
from funke.plan.types import INTEGRAL, Schema, decimal_scale, normalize_type, truncated_division

#: A compiled expression: ``fn(scope, row)``; ``row`` is the row a navigation picked (None: the scope's).
Compiled = Callable[[Any, Any], Any]


class RowsScope:
    """DEFINE: the partial match (``ctx``) with ``event`` mapped to ``variable``."""

    __slots__ = ("_cache", "ctx", "event", "names", "variable")

    def __init__(self, names: tuple[str, ...], ctx: Any, variable: str, event: Any) -> None:
        self.names, self.ctx, self.variable, self.event = names, ctx, variable, event
        self._cache: dict[str | None, list] = {}

    def rows(self, name: str | None) -> list:
        if name not in self._cache:
            if name is None:
                self._cache[None] = [r for n in self.names for r in self.rows(n)]
            else:
                rows = self.ctx.get_events_for_pattern(name)
                self._cache[name] = [*rows, self.event] if name == self.variable else rows
        return self._cache[name]


class MatchScope:
    """MEASURES: a whole match, ``{variable: rows}``."""

    __slots__ = ("match", "names")

    def __init__(self, names: tuple[str, ...], match: dict) -> None:
        self.names, self.match = names, match

    def rows(self, name: str | None) -> list:
        if name is None:
            return [r for n in self.names for r in self.match.get(n, ())]
        return list(self.match.get(name, ()))


def _prev_rows(scope: Any, name: str | None) -> tuple[list, int]:
    """All rows in order and the index of ``name``'s last row (-1: none)."""
    everything = scope.rows(None)
    if name is None:
        return everything, len(everything) - 1
    end = 0
    for n in scope.names:
        end += len(scope.rows(n))
        if n == name:
            return everything, end - 1 if scope.rows(n) else -1
    return everything, -1


def _numbers(a: Any, b: Any) -> tuple[Any, Any]:
    if isinstance(a, Decimal) and isinstance(b, float):
        return float(a), b
    if isinstance(b, Decimal) and isinstance(a, float):
        return a, float(b)
    return a, b


def _div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        return truncated_division(a, b)
    if b == 0 and isinstance(b, float):
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def _mod(a: Any, b: Any) -> Any:
    return math.fmod(a, b) if isinstance(a, float) or isinstance(b, float) else int(math.fmod(a, b))


_BINARY: dict[type[exp.Expression], Callable[[Any, Any], Any]] = {
    exp.EQ: lambda a, b: a == b, exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b, exp.GTE: lambda a, b: a >= b, exp.LT: lambda a, b: a < b, exp.LTE: lambda a, b: a <= b,
    exp.Add: lambda a, b: a + b, exp.Sub: lambda a, b: a - b, exp.Mul: lambda a, b: a * b, exp.Div: _div, exp.Mod: _mod,
}  # fmt: skip
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_AGGREGATES = {exp.Count: "COUNT", exp.Sum: "SUM", exp.Avg: "AVG", exp.Min: "MIN", exp.Max: "MAX"}
_CASTS: dict[str, Callable[[Any], Any]] = {
    "int": int, "bigint": int, "smallint": int, "tinyint": int, "double": float, "float": float,
    "string": str, "boolean": bool,
}  # fmt: skip
_REFUSED_FUNCTIONS = {
    "NEXT": "NEXT (Flink refuses it too: a match is emitted when its last row arrives)",
    "CLASSIFIER": "CLASSIFIER()", "MATCH_NUMBER": "MATCH_NUMBER()", "MATCH_PROCTIME": "MATCH_PROCTIME() (processing time)",
    "RUNNING": "RUNNING", "FINAL": "FINAL",
}  # fmt: skip


def _sum(values: list) -> Any:
    """The sum of ``values``; of DECIMALs exact (Python's default context keeps 28 digits, a DECIMAL(38, s) has 38)."""
    with localcontext() as ctx:
        ctx.prec = 80
        return sum(values)


def _avg(values: list, dtype: str | None) -> Any:
    """Flink's AVG of ``values`` of type ``dtype``: of an integer type that type, truncated; of a DECIMAL(p, s) the
    DECIMAL(38, max(6, s)) of the sum over the count, rounded half up; else a float.

    >>> _avg([1, 2], "int"), _avg([Decimal("0.01"), Decimal("0.02"), Decimal("0.02")], "decimal(10,2)")
    (1, Decimal('0.016667'))
    >>> _avg([Decimal("-0.01"), Decimal("-0.02")], "decimal(10,2)"), _avg([Decimal("1.123456789")], "decimal(20,9)")
    (Decimal('-0.015000'), Decimal('1.123456789'))
    """
    if not values:
        return None
    if dtype in INTEGRAL:  # (Flink: AVG of an integer type is of that type, truncated)
        return _div(sum(values), len(values))
    scale = decimal_scale(dtype)
    if scale is None:
        return sum(values) / len(values)
    scale, total = max(6, scale), _sum(values)
    quotient, rest = divmod(abs(int(total.scaleb(scale))), len(values))
    quotient += 2 * rest >= len(values)  # (half up: away from zero)
    return Decimal(-quotient if total < 0 else quotient).scaleb(-scale)


class ExprCompiler:
    """Compiles DEFINE (``define=True``, the variable in ``defining``) or MEASURES expressions, and types them."""

    def __init__(self, schema: Schema, names: tuple[str, ...], refuse: Any, *, define: bool, time: str | None = None) -> None:
        self.schema, self.names, self._refuse, self.define, self.time = schema, names, refuse, define, time
        self.defining: str | None = None

    def refused(self, node: exp.Expression, what: str, hint: str = "") -> PlanError:
        if self._refuse is None:
            return PlanError(f"Flink SQL: {what} in MATCH_RECOGNIZE is not supported")
        return self._refuse(node, what, hint)

    # -- which variable an expression reads
    def variable_of(self, e: exp.Expression) -> str | None:
        """The one pattern variable ``e``'s columns name (None: none, all rows)."""
        found = {self._column_variable(c) for c in e.find_all(exp.Column)}
        if len(found) > 1:
            raise self.refused(e, f"{e.sql()} (it reads rows of several variables: {', '.join(sorted(str(v) for v in found))})")
        return found.pop() if found else None

    def _column_variable(self, c: exp.Column) -> str | None:
        if not c.table:
            self.schema.field(c.name, node=f"MATCH_RECOGNIZE's {c.sql()}")
            return None
        if c.table not in self.names:
            raise PlanError(f"Flink SQL: {c.sql()} in MATCH_RECOGNIZE: {c.table} is no pattern variable ({', '.join(self.names)})")
        self.schema.field(c.name, node=f"MATCH_RECOGNIZE's {c.sql()}")
        return c.table

    # -- compiling
    def compile(self, e: exp.Expression) -> Compiled:
        if isinstance(e, exp.Paren):
            return self.compile(e.this)
        if isinstance(e, exp.Column):
            variable, column = self._column_variable(e), e.name

            def read(scope: Any, row: Any) -> Any:
                if row is None:
                    rows = scope.rows(variable)
                    if not rows:
                        return None
                    row = rows[-1]
                return row.get(column)

            return read
        if isinstance(e, exp.Literal):
            value = e.to_py() if not e.is_string else e.name
            if isinstance(value, Decimal):
                value = float(value)
            return lambda scope, row: value
        if isinstance(e, exp.Boolean):
            value = bool(e.this)
            return lambda scope, row: value
        if isinstance(e, exp.Null):
            return lambda scope, row: None
        if isinstance(e, exp.Interval):
            ms = interval_ms(e)
            if ms is None:
                raise self.refused(e, f"the interval {e.sql()}")
            delta = dt.timedelta(milliseconds=ms)
            return lambda scope, row: delta
        if isinstance(e, (exp.And, exp.Or)):
            left, right = self.compile(e.this), self.compile(e.expression)
            stop = isinstance(e, exp.Or)  # (the value that decides: TRUE for OR, FALSE for AND)

            def logic(scope: Any, row: Any) -> Any:
                a = left(scope, row)
                if a is stop:
                    return stop
                b = right(scope, row)
                if b is stop:
                    return stop
                return None if a is None or b is None else not stop

            return logic
        if isinstance(e, exp.Not):
            inner = self.compile(e.this)
            return lambda scope, row: None if (v := inner(scope, row)) is None else not v
        if isinstance(e, exp.Is):
            if not isinstance(e.expression, exp.Null):
                raise self.refused(e, e.sql())
            inner = self.compile(e.this)
            return lambda scope, row: inner(scope, row) is None
        if type(e) in _BINARY:
            op, left, right = _BINARY[type(e)], self.compile(e.this), self.compile(e.expression)

            def binary(scope: Any, row: Any) -> Any:
                a, b = left(scope, row), right(scope, row)
                return None if a is None or b is None else op(*_numbers(a, b))

            return binary
        if isinstance(e, exp.Neg):
            inner = self.compile(e.this)
            return lambda scope, row: None if (v := inner(scope, row)) is None else -v
        if isinstance(e, exp.Between):
            value, low, high = self.compile(e.this), self.compile(e.args["low"]), self.compile(e.args["high"])

            def between(scope: Any, row: Any) -> Any:
                v, lo, hi = value(scope, row), low(scope, row), high(scope, row)
                return None if v is None or lo is None or hi is None else lo <= v <= hi

            return between
        if isinstance(e, exp.In) and not e.args.get("query"):
            value, options = self.compile(e.this), [self.compile(x) for x in e.expressions]

            def within(scope: Any, row: Any) -> Any:
                v = value(scope, row)
                if v is None:
                    return None
                seen = [o(scope, row) for o in options]
                return True if v in seen else (None if None in seen else False)

            return within
        if isinstance(e, exp.Case):
            subject = self.compile(e.this) if e.this is not None else None
            branches = [(self.compile(i.this), self.compile(i.args["true"])) for i in e.args["ifs"]]
            default = self.compile(e.args["default"]) if e.args.get("default") is not None else None

            def case(scope: Any, row: Any) -> Any:
                s = subject(scope, row) if subject is not None else None
                for when, then in branches:
                    w = when(scope, row)
                    if (w is True) if subject is None else (s is not None and w is not None and s == w):
                        return then(scope, row)
                return default(scope, row) if default is not None else None

            return case
        if isinstance(e, exp.Coalesce):
            parts = [self.compile(x) for x in (e.this, *e.expressions)]
            return lambda scope, row: next((v for p in parts if (v := p(scope, row)) is not None), None)
        if isinstance(e, exp.Abs):
            inner = self.compile(e.this)
            return lambda scope, row: None if (v := inner(scope, row)) is None else abs(v)
        if isinstance(e, exp.Cast):
            to = normalize_type(e.to.sql(dialect="spark").lower())
            cast = _CASTS.get(to or "")
            if cast is None:
                raise self.refused(e, f"CAST to {e.to.sql()}", f"CAST to {', '.join(sorted(_CASTS))} runs")
            inner = self.compile(e.this)
            return lambda scope, row: None if (v := inner(scope, row)) is None else cast(v)
        if isinstance(e, (exp.First, exp.Last)):
            return self._navigation(e, first=isinstance(e, exp.First))
        if type(e) in _AGGREGATES:
            return self._aggregate(e)
        if isinstance(e, exp.Anonymous):
            name = e.name.upper()
            if name == "PREV":
                return self._prev(e)
            if name == "MATCH_ROWTIME" and not e.expressions:
                if self.define or self.time is None:
                    raise self.refused(e, "MATCH_ROWTIME() in DEFINE", "it is a measure")
                time = self.time
                return lambda scope, row: (rows[-1].get(time) if (rows := scope.rows(None)) else None)
            if name in _REFUSED_FUNCTIONS:
                raise self.refused(e, _REFUSED_FUNCTIONS[name])
        raise self.refused(
            e, f"the expression {e.sql()}",
            "DEFINE and MEASURES take columns, literals, arithmetic, comparisons, AND/OR/NOT, IS [NOT] NULL, BETWEEN, IN, CASE, "
            "COALESCE, ABS, CAST, FIRST/LAST/PREV and COUNT/SUM/AVG/MIN/MAX over one variable",
        )

    def _offset(self, e: exp.Expression, call: str) -> int:
        off = e.args.get("expression") if not isinstance(e, exp.Anonymous) else (e.expressions[1] if len(e.expressions) > 1 else None)
        if off is None:
            return 0 if call != "PREV" else 1
        if not (isinstance(off, exp.Literal) and not off.is_string and off.name.isdigit()):
            raise self.refused(e, f"{e.sql()} (the offset must be a non-negative integer literal)")
        return int(off.name)

    def _navigation(self, e: exp.Expression, *, first: bool) -> Compiled:
        arg, n = e.this, self._offset(e, "FIRST" if first else "LAST")
        variable, inner = self.variable_of(arg), self.compile(arg)

        def navigate(scope: Any, row: Any) -> Any:
            rows = scope.rows(variable)
            if n >= len(rows):
                return None
            return inner(scope, rows[n] if first else rows[-1 - n])

        return navigate

    def _prev(self, e: exp.Anonymous) -> Compiled:
        if not e.expressions or len(e.expressions) > 2:
            raise self.refused(e, f"{e.sql()} (PREV takes a column and an optional offset)")
        arg, n = e.expressions[0], self._offset(e, "PREV")
        variable, inner = self.variable_of(arg), self.compile(arg)

        def prev(scope: Any, row: Any) -> Any:
            rows, last = _prev_rows(scope, variable)
            if last < 0 or last - n < 0:
                return None
            return inner(scope, rows[last - n])

        return prev

    def _aggregate(self, e: exp.Expression) -> Compiled:
        kind = _AGGREGATES[type(e)]
        arg = e.this
        if isinstance(arg, exp.Distinct):
            raise self.refused(e, f"{kind}(DISTINCT ...)")
        if kind == "COUNT" and (isinstance(arg, exp.Star) or (isinstance(arg, exp.Column) and isinstance(arg.this, exp.Star))):
            variable = arg.table if isinstance(arg, exp.Column) and arg.table else None
            if variable is not None and variable not in self.names:
                raise PlanError(f"Flink SQL: {e.sql()} in MATCH_RECOGNIZE: {variable} is no pattern variable ({', '.join(self.names)})")
            return lambda scope, row: len(scope.rows(variable))
        variable, inner = self.variable_of(arg), self.compile(arg)
        dtype = self.type_of(arg)

        def aggregate(scope: Any, row: Any) -> Any:
            values = [v for r in scope.rows(variable) if (v := inner(scope, r)) is not None]
            if kind == "COUNT":
                return len(values)
            if not values:
                return None
            if kind == "SUM":
                return _sum(values)
            if kind == "AVG":
                return _avg(values, dtype)
            return min(values) if kind == "MIN" else max(values)

        return aggregate

    # -- typing (MEASURES: the output schema)
    def type_of(self, e: exp.Expression) -> str | None:
        """The type of ``e``'s values (Spark's names), None when funke cannot tell."""
        if isinstance(e, exp.Paren):
            return self.type_of(e.this)
        if isinstance(e, exp.Column):
            return self.schema.field(e.name, node="MATCH_RECOGNIZE").dtype if not isinstance(e.this, exp.Star) else None
        if isinstance(e, exp.Literal):
            if e.is_string:
                return "string"
            return ("int" if int(e.name) < 2**31 else "bigint") if e.name.isdigit() else "double"
        if isinstance(e, (exp.Predicate, exp.Connector, exp.Not, exp.Boolean)):
            return "boolean"
        if isinstance(e, (exp.First, exp.Last, exp.Abs, exp.Neg, exp.Min, exp.Max)):
            return self.type_of(e.this)
        if isinstance(e, exp.Anonymous) and e.name.upper() == "PREV" and e.expressions:
            return self.type_of(e.expressions[0])
        if isinstance(e, exp.Anonymous) and e.name.upper() == "MATCH_ROWTIME":
            return self.schema.field(self.time, node="MATCH_ROWTIME()").dtype if self.time else None
        if isinstance(e, exp.Count):
            return "bigint"
        if isinstance(e, (exp.Sum, exp.Avg)):
            t = self.type_of(e.this)
            scale = decimal_scale(t)
            if scale is not None:  # (Flink's SUM of a DECIMAL(p, s) is a DECIMAL(38, s); its AVG a DECIMAL(38, max(6, s)))
                return f"decimal(38,{scale if isinstance(e, exp.Sum) else max(6, scale)})"
            return t if t in INTEGRAL or t in ("double", "float") else None
        if isinstance(e, exp.Cast):
            return normalize_type(e.to.sql(dialect="spark").lower())
        if isinstance(e, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
            a, b = self.type_of(e.this), self.type_of(e.expression)
            if a in INTEGRAL and b in INTEGRAL:
                order = ("tinyint", "smallint", "int", "bigint")
                return max(a, b, key=order.index)
            if {a, b} <= {"double", "float", *INTEGRAL}:
                return "double"
            if a == "timestamp" and isinstance(e.expression, exp.Interval) and isinstance(e, (exp.Add, exp.Sub)):
                return "timestamp"
            return None
        if isinstance(e, (exp.Case, exp.Coalesce)):
            parts = [i.args["true"] for i in e.args["ifs"]] if isinstance(e, exp.Case) else [e.this, *e.expressions]
            if isinstance(e, exp.Case) and e.args.get("default") is not None:
                parts.append(e.args["default"])
            kinds = {self.type_of(p) for p in parts if not isinstance(p, exp.Null)}
            if len(kinds) == 1:
                return kinds.pop()
            if kinds and kinds <= {"double", "float", *INTEGRAL}:
                return "double"
            return None
        return None
