"""Conditions of CEP patterns: which events may take an edge of the automaton.

A user's condition is a plain function ``f(event) -> bool`` (simple), a
:class:`SimpleCondition` or an :class:`IterativeCondition` (``filter(event, ctx)``,
which may look at the partial match through ``ctx``); :func:`iterative` wraps a
two-argument function. Nothing is guessed from a function's signature. The compiler
combines them with :class:`AndCondition`, :class:`OrCondition` and :class:`NotCondition`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from funke.semantics.cep import PatternContext


class Condition:
    """Decides whether an event may take an edge: ``evaluate(event, ctx) -> bool``.

    Users write a plain ``f(event) -> bool`` (a simple condition), subclass
    :class:`SimpleCondition` or :class:`IterativeCondition`, or wrap a two-argument
    function with :func:`iterative`. Nothing is guessed from a function's signature.
    """

    def evaluate(self, event: Any, ctx: PatternContext) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return self.describe()


class SimpleCondition(Condition):
    """A condition on the event alone: override ``filter(event) -> bool``."""

    def filter(self, event: Any) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must define filter(event)")

    def evaluate(self, event: Any, ctx: PatternContext) -> bool:
        return bool(self.filter(event))


class IterativeCondition(Condition):
    """A condition that may look at the partial match: override ``filter(event, ctx) -> bool``.

    ``ctx.get_events_for_pattern(name)`` lists the events already accepted for ``name``
    in *this* partial match; ``ctx.timestamp()`` is the event's timestamp.
    """

    def filter(self, event: Any, ctx: PatternContext) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must define filter(event, ctx)")

    def evaluate(self, event: Any, ctx: PatternContext) -> bool:
        return bool(self.filter(event, ctx))


def _callable_name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


class _FunctionCondition(SimpleCondition):
    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def filter(self, event: Any) -> bool:
        return self.fn(event)

    def describe(self) -> str:
        return _callable_name(self.fn)


class _IterativeFunction(IterativeCondition):
    def __init__(self, fn: Callable[[Any, PatternContext], Any]) -> None:
        self.fn = fn

    def filter(self, event: Any, ctx: PatternContext) -> bool:
        return self.fn(event, ctx)

    def describe(self) -> str:
        return _callable_name(self.fn)


def iterative(fn: Callable[[Any, PatternContext], Any]) -> IterativeCondition:
    """Mark ``fn(event, ctx) -> bool`` as an iterative condition (usable as a decorator).

    >>> @iterative
    ... def cheaper_than_first(event, ctx):
    ...     return all(event < e for e in ctx.get_events_for_pattern("a"))
    >>> cheaper_than_first
    cheaper_than_first
    """
    if not callable(fn):
        raise TypeError(f"iterative() takes a function fn(event, ctx) -> bool, got {fn!r}")
    return _IterativeFunction(fn)


def as_condition(cond: Any, *, what: str = "condition") -> Condition:
    """A user's condition as a :class:`Condition`: a Condition stays, any other callable is simple."""
    if isinstance(cond, Condition):
        return cond
    if cond is None or not callable(cond):
        raise TypeError(
            f"{what} must be a function event -> bool, a SQL expression (str), a SimpleCondition or an IterativeCondition "
            f"(wrap fn(event, ctx) with funke.cep.iterative), got {cond!r}"
        )
    return _FunctionCondition(cond)


class _TrueCondition(SimpleCondition):
    def filter(self, event: Any) -> bool:
        return True

    def describe(self) -> str:
        return "true"


TRUE = _TrueCondition()


class SubtypeCondition(SimpleCondition):
    """Flink's ``subtype(cls)``: the event is an instance of ``cls``."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def filter(self, event: Any) -> bool:
        return isinstance(event, self.cls)

    def describe(self) -> str:
        return f"isinstance({self.cls.__name__})"


class AndCondition(Condition):
    def __init__(self, left: Condition, right: Condition) -> None:
        self.left, self.right = left, right

    def evaluate(self, event: Any, ctx: PatternContext) -> bool:
        return self.left.evaluate(event, ctx) and self.right.evaluate(event, ctx)

    def describe(self) -> str:
        return f"{self.left.describe()} and {self.right.describe()}"


class OrCondition(Condition):
    def __init__(self, left: Condition, right: Condition) -> None:
        self.left, self.right = left, right

    def evaluate(self, event: Any, ctx: PatternContext) -> bool:
        return self.left.evaluate(event, ctx) or self.right.evaluate(event, ctx)

    def describe(self) -> str:
        return f"({self.left.describe()} or {self.right.describe()})"


class NotCondition(Condition):
    def __init__(self, inner: Condition) -> None:
        self.inner = inner

    def evaluate(self, event: Any, ctx: PatternContext) -> bool:
        return not self.inner.evaluate(event, ctx)

    def describe(self) -> str:
        return f"not {self.inner.describe()}"
