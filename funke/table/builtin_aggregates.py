"""Flink SQL's built-in aggregate functions, in the shape of a Python aggregate function (PyFlink's
``AggregateFunction``): ``create_accumulator()``, ``accumulate(acc, *args)``, ``retract(acc, *args)``,
``merge(acc, others)`` and ``get_value(acc)``, the accumulator a mutable list changed in place. A
group aggregation (``funke.table.aggregate``) runs these and a user's aggregate function alike.

Each skips rows where an argument is NULL and is NULL over no value (``COUNT`` is 0), as SQL's.
``retract`` takes a row away again (an updating input's ``-U``/``-D``): ``MIN`` and ``MAX`` then
keep how often each value is held (Flink's ``MinWithRetractAggFunction``); over an insert-only
input they keep the extreme alone. ``Distinct`` wraps any of them for ``f(DISTINCT x)``: a value is
given to the function when it first comes and taken away when its last row is retracted.

>>> m = Max(retracting=True)
>>> acc = m.create_accumulator()
>>> for v in (3, 7, 7):
...     m.accumulate(acc, v)
>>> m.retract(acc, 7); m.get_value(acc)
7
>>> m.retract(acc, 7); m.get_value(acc)
3
>>> d = Distinct(Count())
>>> acc = d.create_accumulator()
>>> for v in ("a", "b", "a", None):
...     d.accumulate(acc, v)
>>> d.get_value(acc)
2
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class Count:
    """``COUNT(*)`` (no arguments) or ``COUNT(x, ...)``: the rows whose arguments are all non-NULL."""

    def __repr__(self) -> str:
        return "Count()"

    def create_accumulator(self) -> list[Any]:
        return [0]

    def accumulate(self, acc: list[Any], *args: Any) -> None:
        if all(a is not None for a in args):
            acc[0] += 1

    def retract(self, acc: list[Any], *args: Any) -> None:
        if all(a is not None for a in args):
            acc[0] -= 1

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        acc[0] += sum(o[0] for o in others)

    def get_value(self, acc: list[Any]) -> int:
        return acc[0]


class Sum:
    """``SUM(x)``: ``[sum, how many values]``; NULL while no value is held."""

    def __repr__(self) -> str:
        return "Sum()"

    def create_accumulator(self) -> list[Any]:
        return [None, 0]

    def accumulate(self, acc: list[Any], x: Any) -> None:
        if x is not None:
            acc[0] = x if acc[1] == 0 or acc[0] is None else acc[0] + x
            acc[1] += 1

    def retract(self, acc: list[Any], x: Any) -> None:
        if x is not None:
            acc[1] -= 1
            acc[0] = None if acc[1] == 0 else (-x if acc[0] is None else acc[0] - x)

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        for o in others:
            if o[1]:
                acc[0] = o[0] if acc[1] == 0 or acc[0] is None else acc[0] + o[0]
                acc[1] += o[1]

    def get_value(self, acc: list[Any]) -> Any:
        return acc[0] if acc[1] else None


class Avg(Sum):
    """``AVG(x)``: the sum over how many values (a float; the planner casts an integer AVG back)."""

    def __repr__(self) -> str:
        return "Avg()"

    def get_value(self, acc: list[Any]) -> Any:
        return acc[0] / acc[1] if acc[1] else None


class _Extreme:
    """``MIN``/``MAX``: ``[extreme]``, and when ``retracting`` ``[extreme, {value: how often held}]``."""

    name = ""

    def __init__(self, *, retracting: bool = False) -> None:
        self.retracting = retracting

    def __repr__(self) -> str:
        return f"{type(self).__name__}(retracting={self.retracting})"

    def better(self, a: Any, b: Any) -> bool:
        raise NotImplementedError

    def create_accumulator(self) -> list[Any]:
        return [None, {}] if self.retracting else [None]

    def accumulate(self, acc: list[Any], x: Any) -> None:
        if x is None:
            return
        if acc[0] is None or self.better(x, acc[0]):
            acc[0] = x
        if self.retracting:
            held = acc[1]
            held[x] = held.get(x, 0) + 1

    def retract(self, acc: list[Any], x: Any) -> None:
        if x is None:
            return
        if not self.retracting:
            raise TypeError(f"{self!r} keeps no values to retract: plan it with retracting=True")
        held = acc[1]
        left = held.get(x, 0) - 1
        if left > 0:
            held[x] = left
            return
        held.pop(x, None)
        if x == acc[0]:  # (the extreme went: the next one among the values held)
            acc[0] = None
            for v in held:
                if acc[0] is None or self.better(v, acc[0]):
                    acc[0] = v

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        for o in others:
            if self.retracting:
                for v, times in o[1].items():
                    for _ in range(times):
                        self.accumulate(acc, v)
            elif o[0] is not None:
                self.accumulate(acc, o[0])

    def get_value(self, acc: list[Any]) -> Any:
        return acc[0]


class Min(_Extreme):
    def better(self, a: Any, b: Any) -> bool:
        return a < b


class Max(_Extreme):
    def better(self, a: Any, b: Any) -> bool:
        return a > b


def hashable(value: Any) -> Any:
    """``value`` as a dict key: an ARRAY's list as a tuple, a MAP's or ROW's dict as its sorted items."""
    if isinstance(value, list):
        return tuple(hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, hashable(v)) for k, v in value.items()))
    return value


class Distinct:
    """``f(DISTINCT x, ...)``: ``[{(arguments): how many rows hold them}, f's accumulator]``; ``f`` sees each
    distinct set of arguments once."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __repr__(self) -> str:
        return f"Distinct({self.inner!r})"

    def create_accumulator(self) -> list[Any]:
        return [{}, self.inner.create_accumulator()]

    def accumulate(self, acc: list[Any], *args: Any) -> None:
        key = hashable(args)
        held = acc[0].get(key, 0)
        acc[0][key] = held + 1
        if held == 0:
            self.inner.accumulate(acc[1], *args)

    def retract(self, acc: list[Any], *args: Any) -> None:
        key = hashable(args)
        left = acc[0].get(key, 0) - 1
        if left > 0:
            acc[0][key] = left
            return
        if acc[0].pop(key, None) is not None:
            self.inner.retract(acc[1], *args)

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        for o in others:
            for key, times in o[0].items():
                for _ in range(times):
                    self.accumulate(acc, *key)

    def get_value(self, acc: list[Any]) -> Any:
        return self.inner.get_value(acc[1])


#: The built-in aggregates by SQL name.
BUILTINS = ("count", "sum", "avg", "min", "max")


def builtin(name: str, *, retracting: bool = False, distinct: bool = False) -> Any:
    """The built-in aggregate ``name`` (count, sum, avg, min, max); ``retracting``: its input has
    retractions; ``distinct``: over distinct arguments."""
    made: Any
    if name == "count":
        made = Count()
    elif name in ("sum", "avg"):
        made = Sum() if name == "sum" else Avg()
    elif name in ("min", "max"):
        made = (Min if name == "min" else Max)(retracting=retracting)
    else:
        raise ValueError(f"unknown aggregate {name!r}: use {', '.join(BUILTINS)}")
    return Distinct(made) if distinct else made
