"""Conditions written as SQL (``where("amount < 10")``), and dropping events no condition accepts before Python.

A condition given as a string is a SQL expression over the event's columns (Flink SQL's syntax,
as ``MATCH_RECOGNIZE``'s ``DEFINE`` reads it, with SQL's NULLs: the condition holds only when the
expression is TRUE). It is a simple condition: it reads the event alone, so it names columns
without a pattern variable. The automaton evaluates it in Python (compiled once per stream, by
``funke.dialect.evaluate``); ``CEP.pattern`` checks its columns against the stream's schema
while planning.

What SQL conditions buy: when every condition of a pattern is SQL and no stage needs strict
contiguity, an event that no condition accepts cannot change a match. Under relaxed contiguity
(``followed_by``, ``followed_by_any``, loops that are neither ``consecutive()`` nor ``greedy()``)
the automaton ignores such an event (the exact rule, with the cases that look safe and are
not: :func:`drops_nothing_a_match_needs`); time-outs come from the watermark, which Spark
computes before any filter. So ``CEP.pattern`` drops those events natively, in Spark, before they reach
the Python operator (:func:`prefilter`): the same matches and time-outs, with the Python work
of only the events that can matter (:func:`drops_nothing_a_match_needs` says when it applies;
``explain()`` shows the filter). It does not apply in processing time, with a late-data side
output (that output is every late element), or when a stage has no condition (every event is
accepted).

>>> from funke.cep import Pattern
>>> from funke.plan.types import Schema
>>> p = Pattern.begin("a").where("amount < 10").followed_by("b").where("amount >= 90")
>>> p
Pattern.begin('a').where(amount < 10).followed_by('b').where(amount >= 90)
>>> prefilter(p)
'(amount < 10) OR (amount >= 90)'
>>> bound = bind(p, Schema.of("k string, amount int"))
>>> [s.condition.filter({"k": "x", "amount": v}) for s in bound.stages() for v in (5, None)]
[True, False, False, False]
>>> prefilter(Pattern.begin("a").where("amount < 10").next("b").where("amount >= 90")) is None  # strict: every event counts
True
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any, ClassVar

from funke.errors import PlanError
from funke.plan.types import INTEGRAL, normalize_type
from funke.semantics.cep_conditions import AndCondition, Condition, NotCondition, OrCondition, SimpleCondition
from funke.semantics.cep_pattern import Consuming

__all__ = ["SqlCondition", "bind", "drops_nothing_a_match_needs", "prefilter"]


class SqlCondition(SimpleCondition):
    """A simple condition written as a SQL expression over the event's columns.

    It is compiled for a stream's schema by :func:`bind` (``CEP.pattern`` does it); an unbound
    one refuses to run, since its columns' types are not known.
    """

    def __init__(self, sql: str, schema: Any = None) -> None:
        if not isinstance(sql, str) or not sql.strip():
            raise TypeError(f"a SQL condition must be a non-empty string, got {sql!r}")
        self.sql, self.schema = sql.strip(), schema
        self._fn: Any = None
        if schema is not None:
            self._fn = _compile(self.sql, schema)

    def bound(self, schema: Any) -> SqlCondition:
        """This condition compiled for ``schema`` (its columns checked); refused while planning if it does not fit."""
        return SqlCondition(self.sql, schema)

    def filter(self, event: Any) -> bool:
        if self._fn is None:
            if self.schema is None:
                raise PlanError(
                    f"the SQL condition {self.sql!r} is not bound to a schema: run the pattern with CEP.pattern(...), "
                    "or bind it with funke.cep.sql.bind(pattern, schema)"
                )
            self._fn = _compile(self.sql, self.schema)
        return self._fn(event)

    def describe(self) -> str:
        return self.sql

    def __getstate__(self) -> dict[str, Any]:  # compiled again where it runs (closures of funke.dialect.evaluate)
        return {"sql": self.sql, "schema": self.schema, "_fn": None}


class _Event:
    """The scope a simple condition reads: the event, as the only row."""

    __slots__ = ("rows_",)

    def __init__(self, event: Any) -> None:
        self.rows_ = [event]

    def rows(self, name: str | None) -> list:
        return self.rows_


def _compile(sql: str, schema: Any, *, fast: bool = True) -> Any:
    """``sql`` as a predicate ``f(event) -> bool`` (TRUE only), its columns checked against ``schema``."""
    # (lazy: sqlglot and the dialect load only for a pattern with a SQL condition, not with every import of funke.cep)
    from sqlglot import exp

    from funke.dialect.evaluate import ExprCompiler
    from funke.dialect.syntax import parse

    try:
        tree = parse(f"SELECT {sql}").expressions
    except PlanError as e:
        raise PlanError(f"the SQL condition {sql!r} does not parse: {e}") from None
    if len(tree) != 1:
        raise PlanError(f"a SQL condition is one expression, got {len(tree)} in {sql!r}")
    node = tree[0]
    for n in node.walk():
        if isinstance(n, exp.Column) and n.table:
            raise PlanError(
                f"the SQL condition {sql!r} names {n.sql()}: a where() condition reads the event alone, by its columns; "
                "conditions on earlier events are iterative conditions (funke.cep.iterative) or MATCH_RECOGNIZE"
            )
        if isinstance(n, exp.AggFunc) or (isinstance(n, exp.Anonymous) and n.name.upper() == "PREV"):
            raise PlanError(
                f"the SQL condition {sql!r} uses {n.sql()}, which reads earlier events; a where() condition reads the event alone"
            )

    def refuse(node: Any, what: str, hint: str = "") -> PlanError:
        return PlanError(f"the SQL condition {sql!r}: {what} is not supported in a condition{hint}")

    compiled = ExprCompiler(schema, (), refuse, define=True).compile(node)  # checks columns and types
    quick = _Fast(schema).predicate(node) if fast else None
    if quick is not None:
        return quick
    return lambda event: compiled(_Event(event), None) is True


class _Fast:
    """The common conditions (comparisons of numbers or strings, AND/OR/NOT, BETWEEN, IN, IS NULL,
    + - *) as one Python expression with SQL's NULLs, compiled once: several times faster per event
    than ``funke.dialect.evaluate``'s closures. Anything else: None (the closures run it)."""

    _CMP: ClassVar[dict[str, str]] = {"EQ": "==", "NEQ": "!=", "LT": "<", "LTE": "<=", "GT": ">", "GTE": ">="}
    _ARITH: ClassVar[dict[str, str]] = {"Add": "+", "Sub": "-", "Mul": "*"}

    def __init__(self, schema: Any) -> None:
        self.schema, self.n = schema, 0

    def predicate(self, node: Any) -> Any:
        try:
            code, kind = self.expr(node)
        except _NotFast:
            return None
        if kind != "bool":
            return None
        # the source is built from the parsed tree only: names and literals by repr()
        return eval(compile(f"lambda e: ({code}) is True", "<sql condition>", "eval"), {"__builtins__": {}})

    def var(self) -> str:
        self.n += 1
        return f"_v{self.n}"

    def expr(self, e: Any) -> tuple[str, str]:
        """Python source of ``e`` (its value, None for NULL) and its kind: num, str or bool."""
        from sqlglot import exp  # (lazy, as in _compile; loaded by then)

        name = type(e).__name__
        if isinstance(e, exp.Paren):
            return self.expr(e.this)
        if isinstance(e, exp.Column):
            dtype = normalize_type(self.schema.field(e.name, node="a SQL condition").dtype or "string")
            kind = "num" if dtype in INTEGRAL or dtype in ("float", "double") else {"string": "str", "boolean": "bool"}.get(dtype)
            if kind is None:
                raise _NotFast
            return f"e.get({e.name!r})", kind
        if isinstance(e, exp.Literal):
            value = e.name if e.is_string else e.to_py()
            if isinstance(value, Decimal):
                value = float(value)
            if not isinstance(value, (int, float, str)) or isinstance(value, bool):
                raise _NotFast
            return repr(value), "str" if e.is_string else "num"
        if isinstance(e, exp.Boolean):
            return repr(bool(e.this)), "bool"
        if name in self._CMP:
            (a, ka), (b, kb) = self.expr(e.this), self.expr(e.expression)
            if ka != kb or ka == "bool":
                raise _NotFast
            x, y = self.var(), self.var()
            return f"(None if ({x} := {a}) is None or ({y} := {b}) is None else {x} {self._CMP[name]} {y})", "bool"
        if name in self._ARITH or isinstance(e, exp.Neg):
            if isinstance(e, exp.Neg):
                a, ka = self.expr(e.this)
                x = self.var()
                if ka != "num":
                    raise _NotFast
                return f"(None if ({x} := {a}) is None else -{x})", "num"
            (a, ka), (b, kb) = self.expr(e.this), self.expr(e.expression)
            if ka != "num" or kb != "num":
                raise _NotFast
            x, y = self.var(), self.var()
            return f"(None if ({x} := {a}) is None or ({y} := {b}) is None else {x} {self._ARITH[name]} {y})", "num"
        if isinstance(e, (exp.And, exp.Or)):
            (a, ka), (b, kb) = self.expr(e.this), self.expr(e.expression)
            if ka != "bool" or kb != "bool":
                raise _NotFast
            x, y = self.var(), self.var()
            stop, other = ("False", "True") if isinstance(e, exp.And) else ("True", "False")
            return (
                f"({stop} if ({x} := {a}) is {stop} else ({stop} if ({y} := {b}) is {stop} else "
                f"(None if {x} is None or {y} is None else {other})))"
            ), "bool"
        if isinstance(e, exp.Not):
            a, ka = self.expr(e.this)
            if ka != "bool":
                raise _NotFast
            x = self.var()
            return f"(None if ({x} := {a}) is None else not {x})", "bool"
        if isinstance(e, exp.Is) and isinstance(e.expression, exp.Null):
            a, _ = self.expr(e.this)
            return f"({a} is None)", "bool"
        if isinstance(e, exp.Between):
            (a, ka), (lo, kl), (hi, kh) = self.expr(e.this), self.expr(e.args["low"]), self.expr(e.args["high"])
            if not ka == kl == kh != "bool":
                raise _NotFast
            x, y, z = self.var(), self.var(), self.var()
            return (
                f"(None if ({x} := {a}) is None or ({y} := {lo}) is None or ({z} := {hi}) is None else {y} <= {x} <= {z})"
            ), "bool"
        if isinstance(e, exp.In) and e.expressions and not e.args.get("query"):
            a, ka = self.expr(e.this)
            values = [self.expr(v) for v in e.expressions]
            if ka == "bool" or any(
                k != ka or not isinstance(v, (exp.Literal)) for (_, k), v in zip(values, e.expressions, strict=True)
            ):
                raise _NotFast
            x = self.var()
            return f"(None if ({x} := {a}) is None else {x} in ({', '.join(c for c, _ in values)},))", "bool"
        raise _NotFast


class _NotFast(Exception):
    """An expression :class:`_Fast` leaves to ``funke.dialect.evaluate``."""


def sql_text(condition: Any) -> SqlCondition | None:
    """``condition`` as a :class:`SqlCondition` if the user gave a SQL string (or ``fk.expr``), else None."""
    from funke.plan.expr import Sql

    if isinstance(condition, str):
        return SqlCondition(condition)
    if isinstance(condition, Sql):
        return SqlCondition(condition.sql)
    return None


def _map_conditions(cond: Condition | None, fn: Any) -> Condition | None:
    if cond is None:
        return None
    if isinstance(cond, (AndCondition, OrCondition)):
        return type(cond)(_map_conditions(cond.left, fn), _map_conditions(cond.right, fn))
    if isinstance(cond, NotCondition):
        return NotCondition(_map_conditions(cond.inner, fn))
    return fn(cond)


def bind(pattern: Any, schema: Any) -> Any:
    """``pattern`` with each SQL condition compiled for ``schema`` (an unknown column is refused here)."""

    def one(cond: Condition) -> Condition:
        return cond.bound(schema) if isinstance(cond, SqlCondition) else cond

    def stage(p: Any) -> Any:
        if p is None:
            return None
        return dataclasses.replace(
            p,
            previous=stage(p.previous),
            group=stage(p.group),
            condition=_map_conditions(p.condition, one),
            until_condition=_map_conditions(p.until_condition, one),
        )

    return stage(pattern)


def _sql_of(cond: Condition) -> str | None:
    """The SQL of a condition tree made of SQL conditions only; None if any part is Python."""
    if isinstance(cond, SqlCondition):
        return f"({cond.sql})"
    if isinstance(cond, (AndCondition, OrCondition)):
        left, right = _sql_of(cond.left), _sql_of(cond.right)
        if left is None or right is None:
            return None
        return f"({left} {'AND' if isinstance(cond, AndCondition) else 'OR'} {right})"
    if isinstance(cond, NotCondition):
        inner = _sql_of(cond.inner)
        return None if inner is None else f"(NOT {inner} OR {inner} IS NULL)"  # not TRUE, as the automaton reads it
    return None


def drops_nothing_a_match_needs(pattern: Any) -> str | None:
    """Why events no condition accepts may NOT be dropped before the automaton (None: they may).

    They may when every stage after the first is joined by ``followed_by`` or ``followed_by_any``,
    no looping stage is ``consecutive()`` or ``greedy()``, there are no group patterns, and every
    condition (``where``, ``or_``, ``until``) is SQL. The exclusions are not only the obvious
    ones (strict contiguity, where any event breaks a match): the automaton, as Flink's, lets an
    event no condition accepts branch a run past a loop (Flink's "ignore after proceed"), and a
    ``not_followed_by`` stage or a greedy loop then decides differently; the property test in
    ``tests/semantics/test_cep_sql.py`` found both. Such branches also report one time-out per
    branch, so the filter is also left out when the pattern has ``within`` and the function
    handles time-outs (:func:`prefilter`'s ``timeouts``).
    """
    for i, s in enumerate(pattern.stages()):
        if s.group is not None:
            return "a group pattern"
        q = s.quantifier
        if i > 0 and q.consuming in (Consuming.STRICT, Consuming.NOT_NEXT):
            return f"{s.name!r} needs strict contiguity (next / not_next)"
        if q.consuming is Consuming.NOT_FOLLOW:
            return f"{s.name!r} is not_followed_by()"
        if q.kind != "single" and q.inner is Consuming.STRICT:
            return f"{s.name!r} is consecutive()"
        if q.greedy:  # a greedy loop's choices depend on the runs ignored events branch off (tests/semantics/test_cep_sql.py)
            return f"{s.name!r} is greedy()"
        if s.condition is None:
            return f"{s.name!r} has no condition (it accepts every event)"
        for cond in (s.condition, s.until_condition):
            if cond is not None and _sql_of(cond) is None:
                return f"a condition of {s.name!r} ({cond.describe()}) is Python, not SQL"
    return None


def prefilter(pattern: Any, *, timeouts: bool = False) -> str | None:
    """The SQL filter keeping the events some condition may accept, or None when every event must reach the automaton.

    ``timeouts``: the function handles timed-out partial matches (then a pattern with ``within``
    gets no filter: how many times a partial match is reported timed out depends on every event).
    """
    if drops_nothing_a_match_needs(pattern) is not None:
        return None
    if timeouts and any(s.window_ms is not None for s in pattern.stages()):
        return None
    parts: list[str] = []
    for s in pattern.stages():
        for cond in (s.condition, s.until_condition):
            if cond is not None:
                text = _strip(_sql_of(cond))
                if text not in parts:
                    parts.append(text)
    return " OR ".join(f"({p})" for p in parts)


def _strip(text: str | None) -> str:
    assert text is not None
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0
