"""PyFlink's expression DSL (``pyflink.table.expressions``): ``col``, ``lit``, ``call`` and the methods and
operators of an ``Expression``, each written as the Flink SQL it stands for, so a Table API call plans as
its SQL does (``funke.table``): ``col('a') + 1`` is ``(`a` + 1)``, ``col('v').sum`` is ``SUM(`v`)``,
``col('d').json_value('$.x', DataTypes.BIGINT())`` is ``CAST(JSON_VALUE(`d`, '$.x') AS BIGINT)``.

A method PyFlink has and funke does not translate is refused when it is called, naming it.

>>> from funke.pyflink.table.expressions import col, lit
>>> name_of = lambda f: f.name
>>> (col("a") + 1).to_sql(name_of), col("v").sum.alias("total").to_sql(name_of)
('(`a` + 1)', 'SUM(`v`) AS `total`')
>>> (col("a") == lit("x")).to_sql(name_of), col("k").count.distinct.to_sql(name_of)
("(`a` = 'x')", 'COUNT(DISTINCT `k`)')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.table.data_types import DataType
from funke.table.udf import sql_literal, sql_of

NameOf = Callable[[Any], str]

#: Aggregate properties (``col('v').sum``) and the SQL function each is.
_AGGREGATES = {
    "count": "COUNT", "sum": "SUM", "sum0": "SUM", "min": "MIN", "max": "MAX", "avg": "AVG",
    "stddev_pop": "STDDEV_POP", "stddev_samp": "STDDEV_SAMP", "var_pop": "VAR_POP", "var_samp": "VAR_SAMP",
    "collect": "COLLECT",
}  # fmt: skip
#: Scalar properties and methods of one argument, as SQL functions of it.
_UNARY = {
    "upper_case": "UPPER", "lower_case": "LOWER", "char_length": "CHAR_LENGTH", "trim": "TRIM", "abs": "ABS",
    "floor": "FLOOR", "ceil": "CEIL", "sqrt": "SQRT", "ln": "LN", "log10": "LOG10", "exp": "EXP", "sign": "SIGN",
    "init_cap": "INITCAP", "md5": "MD5",
}  # fmt: skip
#: Interval units of ``lit(n).seconds`` and the like, in milliseconds.
_INTERVALS = {
    "milli": 1, "millis": 1, "second": 1000, "seconds": 1000, "minute": 60_000, "minutes": 60_000,
    "hour": 3_600_000, "hours": 3_600_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip
#: Window properties (``col('w').start``), as the group window's names them (funke.table.windows).
_WINDOW_PROPERTIES = ("start", "end", "rowtime", "proctime")


def _sql(value: Any, name_of: NameOf) -> str:
    if isinstance(value, Expression):
        return value.to_sql(name_of)
    if isinstance(value, str):  # (a Python string in an expression is a string literal, as in PyFlink)
        return sql_literal(value)
    return sql_of(value, name_of)


class Expression:
    """One Table API expression: a SQL template (``{0}``, ``{1}``, ... its operands) and its operands."""

    def __init__(self, template: str, *operands: Any, alias: str | None = None, aggregate: str | None = None) -> None:
        self._template, self._operands, self._alias, self._aggregate = template, operands, alias, aggregate

    def to_sql(self, name_of: NameOf) -> str:
        text = self._template.format(*(_sql(o, name_of) for o in self._operands))
        return f"{text} AS `{self._alias}`" if self._alias else text

    def _bare(self) -> Expression:
        return Expression(self._template, *self._operands, aggregate=self._aggregate) if self._alias else self

    # -- naming and types ------------------------------------------------------------------------
    def alias(self, name: str, *extra_names: str) -> Expression:
        if extra_names:
            raise UnsupportedError(
                f"alias({name!r}, {', '.join(map(repr, extra_names))}) of an expression: funke names one column per "
                "expression; several names are for a table function's call (split.alias('a', 'b'))"
            )
        return Expression(self._template, *self._operands, alias=name, aggregate=self._aggregate)

    def cast(self, data_type: DataType) -> Expression:
        return Expression(f"CAST({{0}} AS {_flink_type(data_type)})", self._bare())

    try_cast = cast

    def json_value(self, path: str, returning_type: DataType | None = None, *args: Any) -> Expression:
        if args:
            raise UnsupportedError("json_value(...)'s ON EMPTY / ON ERROR behaviours: funke's JSON_VALUE gives NULL for both, Flink's default")
        call = Expression("JSON_VALUE({0}, {1})", self._bare(), path)
        if returning_type is None or _flink_type(returning_type) in ("STRING", "VARCHAR"):
            return call
        return call.cast(returning_type)

    # -- aggregates and properties ---------------------------------------------------------------
    @property
    def distinct(self) -> Expression:
        if self._aggregate is None:
            raise UnsupportedError("distinct of a non-aggregate expression: funke takes col('v').count.distinct and the like")
        inner = self._operands[0]
        return Expression(f"{self._aggregate}(DISTINCT {{0}})", inner, aggregate=self._aggregate)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _AGGREGATES:
            function = _AGGREGATES[name]
            if name == "sum0":
                return Expression("COALESCE(SUM({0}), 0)", self._bare())
            return Expression(f"{function}({{0}})", self._bare(), aggregate=function)
        if name in _UNARY:
            return Expression(f"{_UNARY[name]}({{0}})", self._bare())
        raise UnsupportedError(
            f"the expression method {name!r} of PyFlink's Table API is not translated by funke; write it as SQL in "
            "t_env.sql_query(...), or use call('FUNCTION', ...)"
        )

    def over(self, window: Any) -> Expression:
        """This aggregate over an Over window (``col('v').max.over(col('w'))``)."""
        name = window if isinstance(window, str) else getattr(window, "name", None)
        if self._aggregate is None or not isinstance(name, str):
            raise PlanError(f"over() takes an aggregate (col('v').max) and the Over window's alias (col('w')), got {self.to_sql(str)} over {window!r}")
        return OverCall(self._bare(), name)

    # -- ordering (order_by) -----------------------------------------------------------------------
    @property
    def asc(self) -> Expression:
        return Expression("{0} ASC", self._bare())

    @property
    def desc(self) -> Expression:
        return Expression("{0} DESC", self._bare())

    # -- predicates --------------------------------------------------------------------------------
    def is_null(self) -> Expression:
        return Expression("({0} IS NULL)", self._bare())

    def is_not_null(self) -> Expression:
        return Expression("({0} IS NOT NULL)", self._bare())

    def in_(self, *values: Any) -> Expression:
        return Expression("({0} IN (" + ", ".join(f"{{{i + 1}}}" for i in range(len(values))) + "))", self._bare(), *values)

    def between(self, lower: Any, upper: Any) -> Expression:
        return Expression("({0} BETWEEN {1} AND {2})", self._bare(), lower, upper)

    def like(self, pattern: Any) -> Expression:
        return Expression("({0} LIKE {1})", self._bare(), pattern)

    def substring(self, begin: Any, length: Any = None) -> Expression:
        if length is None:
            return Expression("SUBSTRING({0} FROM {1})", self._bare(), begin)
        return Expression("SUBSTRING({0} FROM {1} FOR {2})", self._bare(), begin, length)

    def round(self, places: Any) -> Expression:
        return Expression("ROUND({0}, {1})", self._bare(), places)

    def if_null(self, null_replacement: Any) -> Expression:
        return Expression("COALESCE({0}, {1})", self._bare(), null_replacement)

    def then(self, if_true: Any, if_false: Any) -> Expression:
        return Expression("(CASE WHEN {0} THEN {1} ELSE {2} END)", self._bare(), if_true, if_false)

    # -- operators -----------------------------------------------------------------------------
    def _op(self, op: str, other: Any, reflected: bool = False) -> Expression:
        return Expression(f"({{0}} {op} {{1}})", *((other, self._bare()) if reflected else (self._bare(), other)))

    def __add__(self, o: Any) -> Expression: return self._op("+", o)
    def __radd__(self, o: Any) -> Expression: return self._op("+", o, True)
    def __sub__(self, o: Any) -> Expression: return self._op("-", o)
    def __rsub__(self, o: Any) -> Expression: return self._op("-", o, True)
    def __mul__(self, o: Any) -> Expression: return self._op("*", o)
    def __rmul__(self, o: Any) -> Expression: return self._op("*", o, True)
    def __truediv__(self, o: Any) -> Expression: return self._op("/", o)
    def __rtruediv__(self, o: Any) -> Expression: return self._op("/", o, True)
    def __mod__(self, o: Any) -> Expression: return Expression("MOD({0}, {1})", self._bare(), o)
    def __eq__(self, o: object) -> Expression: return self._op("=", o)  # type: ignore[override]
    def __ne__(self, o: object) -> Expression: return self._op("<>", o)  # type: ignore[override]
    def __lt__(self, o: Any) -> Expression: return self._op("<", o)
    def __le__(self, o: Any) -> Expression: return self._op("<=", o)
    def __gt__(self, o: Any) -> Expression: return self._op(">", o)
    def __ge__(self, o: Any) -> Expression: return self._op(">=", o)
    def __and__(self, o: Any) -> Expression: return self._op("AND", o)
    def __or__(self, o: Any) -> Expression: return self._op("OR", o)
    def __invert__(self) -> Expression: return Expression("(NOT {0})", self._bare())
    def __neg__(self) -> Expression: return Expression("(- {0})", self._bare())
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise PlanError("a Table API expression has no truth value: combine conditions with & and |, not and / or")

    def __repr__(self) -> str:
        return self.to_sql(lambda f: getattr(f, "name", repr(f)))


class Column(Expression):
    """``col(name)``; ``col('w').start`` is a group window's property."""

    def __init__(self, name: str) -> None:
        super().__init__(_escaped("`" + name.replace("`", "``") + "`"))
        self.name = name

    def __getattr__(self, name: str) -> Any:
        if name in _WINDOW_PROPERTIES:
            if name == "proctime":
                raise UnsupportedError(f"{self.name}.proctime: funke's group windows run on event time (w.rowtime)")
            return Expression(_escaped(f"{self.name}.{name}"))
        return super().__getattr__(name)


class Literal(Expression):
    """``lit(value)``; ``lit(5).seconds`` is an interval (a window's size)."""

    def __init__(self, value: Any, data_type: DataType | None = None) -> None:
        text = _escaped(sql_literal(value))
        super().__init__(f"CAST({text} AS {_flink_type(data_type)})" if data_type is not None else text)
        self.value = value

    def __getattr__(self, name: str) -> Any:
        if name in _INTERVALS:
            if not isinstance(self.value, int) or isinstance(self.value, bool):
                raise PlanError(f"lit({self.value!r}).{name}: an interval takes a whole number")
            return Interval(self.value * _INTERVALS[name])
        return super().__getattr__(name)


class Interval(Expression):
    """An interval literal (``lit(5).seconds``): ``ms`` milliseconds."""

    def __init__(self, ms: int) -> None:
        super().__init__(f"INTERVAL '{ms}' MILLISECOND")
        self.ms = ms


def _escaped(text: str) -> str:
    """``text`` as a template that formats to itself (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def _flink_type(t: Any) -> str:
    if isinstance(t, DataType):
        return t.flink
    if isinstance(t, str):
        return t
    raise PlanError(f"expected a DataType (DataTypes.BIGINT(), ...), got {t!r}")


def aggregate_calls(e: Any) -> int:
    """How many aggregate calls ``e`` holds (PyFlink numbers its unnamed aggregates by them)."""
    if not isinstance(e, Expression):
        return 0
    return (e._aggregate is not None) + sum(aggregate_calls(o) for o in e._operands)


def col(name: str) -> Column:
    return Column(name)


def lit(value: Any, data_type: DataType | None = None) -> Literal:
    return Literal(value, data_type)


def call(f: Any, *args: Any) -> Any:
    """A function by name (a built-in or a registered one: ``call('UPPER', col('a'))``) or a Python function
    object (``call(my_udf, col('a'))``)."""
    if isinstance(f, str):
        return Expression(f"{f}(" + ", ".join(f"{{{i}}}" for i in range(len(args))) + ")", *args)
    return f(*args)


def call_sql(sql: str) -> Expression:
    """PyFlink's ``call_sql``: a SQL expression as it is."""
    return Expression(_escaped(sql))


def concat(first: Any, *others: Any) -> Expression:
    values = (first, *others)
    return Expression("CONCAT(" + ", ".join(f"{{{i}}}" for i in range(len(values))) + ")", *values)


def and_(first: Any, *others: Any) -> Expression:
    values = (first, *others)
    return Expression("(" + " AND ".join(f"{{{i}}}" for i in range(len(values))) + ")", *values)


def or_(first: Any, *others: Any) -> Expression:
    values = (first, *others)
    return Expression("(" + " OR ".join(f"{{{i}}}" for i in range(len(values))) + ")", *values)


def not_(expression: Any) -> Expression:
    return Expression("(NOT {0})", expression)


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    return Expression("(CASE WHEN {0} THEN {1} ELSE {2} END)", condition, if_true, if_false)


def coalesce(*args: Any) -> Expression:
    return Expression("COALESCE(" + ", ".join(f"{{{i}}}" for i in range(len(args))) + ")", *args)


def current_timestamp() -> Expression:
    return Expression("CURRENT_TIMESTAMP")


class Bound(Expression):
    """An Over window's bound (pyflink.table.window.Over): its frame's kind, ``ROWS`` or ``RANGE``, and how far
    before the current row it starts (rows, or milliseconds for ``RANGE``; None: unbounded; 0: the current row)."""

    def __init__(self, kind: str, preceding: int | None) -> None:
        """Its SQL is where the frame starts: ``UNBOUNDED``, ``n`` (rows) or ``INTERVAL 'n' MILLISECOND`` (``RANGE``)."""
        start = "UNBOUNDED" if preceding is None else f"INTERVAL '{preceding}' MILLISECOND" if kind == "RANGE" else f"{preceding}"
        super().__init__(start)
        self.kind, self.preceding = kind, preceding


UNBOUNDED_ROW, UNBOUNDED_RANGE = Bound("ROWS", None), Bound("RANGE", None)
CURRENT_ROW, CURRENT_RANGE = Bound("ROWS", 0), Bound("RANGE", 0)


def row_interval(rows: int) -> Bound:
    return Bound("ROWS", int(rows))


def range_interval(ms: int) -> Bound:
    return Bound("RANGE", int(ms))


class OverCall(Expression):
    """``agg.over(col('w'))``: an aggregate over the Over window named ``w`` (its SQL is written where the
    table's Over windows are known: ``Table.over_window(...).select``)."""

    def __init__(self, call: Expression, window: str, alias: str | None = None) -> None:
        super().__init__("{0}", call, alias=alias)
        self.call, self.window = call, window

    def alias(self, name: str, *extra_names: str) -> Expression:
        super().alias(name, *extra_names)
        return OverCall(self.call, self.window, name)

    def _bare(self) -> Expression:
        return OverCall(self.call, self.window) if self._alias else self


__all__ = [
    "CURRENT_RANGE",
    "CURRENT_ROW",
    "UNBOUNDED_RANGE",
    "UNBOUNDED_ROW",
    "Expression",
    "and_",
    "call",
    "call_sql",
    "coalesce",
    "col",
    "concat",
    "current_timestamp",
    "if_then_else",
    "lit",
    "not_",
    "or_",
    "range_interval",
    "row_interval",
]  # fmt: skip
