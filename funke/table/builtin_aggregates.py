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

import contextlib
import math
from collections.abc import Iterable
from typing import Any

from funke.semantics.java_text import java_order


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


class Variance:
    """``VAR_POP``, ``VAR_SAMP`` (``VARIANCE``), ``STDDEV_POP``, ``STDDEV_SAMP`` (``STDDEV``) of ``x``, as
    Flink's planner computes them: Welford's running mean and sum of squared differences (``M2``) in
    8-byte floats, ``[how many values, mean, M2]``, taken back in reverse on ``retract`` and combined
    by Chan's formula on ``merge``; the value is ``M2 / n`` (``_pop``) or ``M2 / (n - 1)`` (``_samp``:
    NULL for one value), its square root for a standard deviation, NULL over no value. A float, which
    the planner casts to the argument's type (Flink's result type: of an INT, an INT, truncated).

    >>> v = Variance("var_samp")
    >>> acc = v.create_accumulator()
    >>> for x in (1, 2, 4):
    ...     v.accumulate(acc, x)
    >>> v.get_value(acc)
    2.333333333333333
    >>> v.retract(acc, 4); v.get_value(acc)
    0.5
    """

    KINDS = ("var_pop", "var_samp", "stddev_pop", "stddev_samp")

    def __init__(self, kind: str) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown variance {kind!r}: use {', '.join(self.KINDS)}")
        self.kind = kind

    def __repr__(self) -> str:
        return f"Variance({self.kind!r})"

    def create_accumulator(self) -> list[Any]:
        return [0, 0.0, 0.0]

    def accumulate(self, acc: list[Any], x: Any) -> None:
        if x is None:
            return
        acc[0] += 1
        if acc[0] <= 0:  # (more taken back than given: counted, as COUNT counts, until values are held again)
            return
        value = float(x)
        delta = value - acc[1]
        acc[1] += delta / acc[0]
        acc[2] += delta * (value - acc[1])

    def retract(self, acc: list[Any], x: Any) -> None:
        if x is None:
            return
        acc[0] -= 1
        if acc[0] <= 0:
            if acc[0] == 0:
                acc[1] = acc[2] = 0.0
            return
        value = float(x)
        after = value - acc[1]
        acc[1] -= after / acc[0]
        acc[2] -= (value - acc[1]) * after

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        short = min(acc[0], 0)  # (accumulators holding more retractions than values: their count goes in last)
        if short:
            acc[:] = [0, 0.0, 0.0]
        for n, mean, m2 in others:
            if n <= 0:
                short += n
            elif acc[0] == 0:
                acc[:] = [n, mean, m2]
            else:
                total = acc[0] + n
                gap = mean - acc[1]
                acc[2] += m2 + acc[0] * n / total * gap * gap
                acc[1] += n / total * gap
                acc[0] = total
        acc[0] += short
        if acc[0] <= 0:
            acc[1] = acc[2] = 0.0

    def get_value(self, acc: list[Any]) -> float | None:
        n, m2 = acc[0], acc[2]
        if n <= 0 or m2 < 0:
            return None
        if self.kind.endswith("_samp"):
            if n == 1:
                return None
            n -= 1
        value = m2 / n
        return math.sqrt(value) if self.kind.startswith("stddev") else value


class Values:
    """``FIRST_VALUE``, ``LAST_VALUE``, ``LISTAGG`` and ``ARRAY_AGG`` of ``x``: ``[the values held, in arrival
    order]`` (``LISTAGG``: ``[values, separator]``, the separator a second argument, ``','`` without one). A
    retraction takes the value's first occurrence away, as Flink's ``...WithRetract`` functions do; a merge
    puts the other's values after these. ``ARRAY_AGG`` keeps NULLs (Flink's ``RESPECT NULLS``), the others
    skip them; each is NULL over no value. Over an insert-only input ``FIRST_VALUE`` and ``LAST_VALUE`` keep
    one value only (``retracting=False``).

    >>> agg = Values("listagg")
    >>> acc = agg.create_accumulator()
    >>> for v in ("x", None, "y", "x"):
    ...     agg.accumulate(acc, v)
    >>> agg.retract(acc, "x"); agg.get_value(acc)
    'y,x'
    """

    KINDS = ("first_value", "last_value", "listagg", "array_agg")

    def __init__(self, kind: str, *, retracting: bool = True) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown aggregate {kind!r}: use {', '.join(self.KINDS)}")
        self.kind = kind
        self.retracting = retracting or kind in ("listagg", "array_agg")

    def __repr__(self) -> str:
        return f"Values({self.kind!r}, retracting={self.retracting})"

    def create_accumulator(self) -> list[Any]:
        return [[], ","] if self.kind == "listagg" else [[]]

    def accumulate(self, acc: list[Any], x: Any, separator: Any = ",") -> None:
        if x is None and self.kind != "array_agg":
            return
        if self.kind == "listagg":
            acc[1] = separator
        held = acc[0]
        if self.retracting:
            held.append(x)
        elif not held or self.kind == "last_value":  # (insert-only: FIRST_VALUE keeps its first, LAST_VALUE its last)
            held[:] = [x]

    def retract(self, acc: list[Any], x: Any, separator: Any = ",") -> None:
        if x is None and self.kind != "array_agg":
            return
        if not self.retracting:
            raise TypeError(f"{self!r} keeps no values to retract: plan it with retracting=True")
        with contextlib.suppress(ValueError):  # (a value never held: nothing to take back)
            acc[0].remove(x)

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        for o in others:
            for v in o[0]:
                self.accumulate(acc, v, *o[1:])

    def get_value(self, acc: list[Any]) -> Any:
        held = acc[0]
        if not held:
            return None
        if self.kind == "first_value":
            return held[0]
        if self.kind == "last_value":
            return held[-1]
        if self.kind == "listagg":
            return acc[1].join(held)
        return list(held)


def jackson_quoted(text: str) -> str:
    r"""``text`` as a JSON string, as Flink's Jackson writes it: ``"`` and ``\`` escaped, the control characters
    below U+0020 as ``\b``, ``\t``, ``\n``, ``\f``, ``\r`` or ``\u00XX`` (upper-case hex digits), all else (``/``,
    U+007F, any other character) as it is. (Python's ``json.dumps`` writes ``\u001f`` and non-ASCII escaped.)

    >>> print(jackson_quoted('q"x/\\é\t' + chr(1) + chr(31) + chr(127)))
    "q\"x/\\é\t\u0001\u001F"
    """
    out = []
    for c in text:
        if c in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[c])
        elif c < " ":
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


class JsonAgg:
    """``JSON_ARRAYAGG(v)`` and ``JSON_OBJECTAGG(KEY k VALUE v)`` as Flink's ``JsonArrayAggFunction`` and
    ``JsonObjectAggFunction`` compute them, over each value's JSON text (computed before, in Spark, as Flink's
    planner wraps the value in ``JSON_STRING``: ``null`` for a NULL under NULL ON NULL, NULL under ABSENT ON NULL,
    which is skipped). JSON_ARRAYAGG: ``[the texts, in arrival order]``, a retraction taking the text's first
    occurrence away, ``[]`` over none. JSON_OBJECTAGG: ``[{key: text}]``, written in the keys' order (Java's order
    of strings: UTF-16 units); a NULL key or a key held already fails the job, as in Flink; a retraction takes the
    key away; ``{}`` over none. Flink's parser takes no DISTINCT, FILTER or OVER with either.

    >>> agg = JsonAgg("json_arrayagg")
    >>> acc = agg.create_accumulator()
    >>> for v in ("1", None, '"a"', "null", "1"):
    ...     agg.accumulate(acc, v)
    >>> agg.retract(acc, "1"); agg.get_value(acc)
    '["a",null,1]'
    >>> agg = JsonAgg("json_objectagg")
    >>> acc = agg.create_accumulator()
    >>> agg.accumulate(acc, "b", "1"); agg.accumulate(acc, "a", None); agg.accumulate(acc, "B", "[2]"); agg.get_value(acc)
    '{"B":[2],"b":1}'
    >>> agg.accumulate(acc, "b", "3")
    Traceback (most recent call last):
    ...
    ValueError: Flink SQL: JSON_OBJECTAGG met the key 'b' twice (Flink fails the job too: duplicate key)
    """

    KINDS = ("json_arrayagg", "json_objectagg")

    def __init__(self, kind: str) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown aggregate {kind!r}: use {', '.join(self.KINDS)}")
        self.kind = kind

    def __repr__(self) -> str:
        return f"JsonAgg({self.kind!r})"

    def create_accumulator(self) -> list[Any]:
        return [[]] if self.kind == "json_arrayagg" else [{}]

    def accumulate(self, acc: list[Any], *args: Any) -> None:
        if self.kind == "json_arrayagg":
            if args[0] is not None:
                acc[0].append(args[0])
            return
        key, text = args
        if key is None:
            raise ValueError("Flink SQL: JSON_OBJECTAGG met a NULL key (Flink fails the job too)")
        if key in acc[0]:  # (before ABSENT ON NULL skips a NULL value, as Flink checks)
            raise ValueError(f"Flink SQL: JSON_OBJECTAGG met the key {key!r} twice (Flink fails the job too: duplicate key)")
        if text is not None:  # (ABSENT ON NULL: no member)
            acc[0][key] = text

    def retract(self, acc: list[Any], *args: Any) -> None:
        if self.kind == "json_arrayagg":
            if args[0] is not None:
                with contextlib.suppress(ValueError):  # (a value never held: nothing to take back)
                    acc[0].remove(args[0])
            return
        acc[0].pop(args[0], None)

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        for o in others:
            for held in o[0] if self.kind == "json_arrayagg" else o[0].items():
                self.accumulate(acc, *((held,) if self.kind == "json_arrayagg" else held))

    def get_value(self, acc: list[Any]) -> str:
        if self.kind == "json_arrayagg":
            return "[" + ",".join(acc[0]) + "]"
        held = acc[0]
        members = (jackson_quoted(k) + ":" + held[k] for k in sorted(held, key=java_order))
        return "{" + ",".join(members) + "}"


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


class Percentile:
    """``PERCENTILE(x, percentage [, frequency])``: ``[{value: how often held}, the percentages]``, as Flink 2.x
    computes it: each value (a float) counted ``frequency`` times (a row whose frequency is NULL or not positive,
    or whose x is NULL, counts not at all); the percentile at ``p`` of the n values held is at position
    ``p * (n - 1) + 1`` of them in order, between two values weighted by how near it is to each; an ARRAY of
    percentages gives an ARRAY of percentiles; NULL while nothing is held.

    PyFlink 2.3's answers, to the last digit:

    >>> fn = Percentile()
    >>> acc = fn.create_accumulator()
    >>> for v, f in ((1, 1), (2, 2), (4, 1), (None, 1), (9, 0)):
    ...     fn.accumulate(acc, v, 0.5, f)
    >>> fn.get_value(acc)
    2.0
    >>> fn.retract(acc, 2, 0.5, 1); fn.accumulate(acc, 2, [0.1, 0.9]); fn.retract(acc, 2, [0.1, 0.9])
    >>> fn.get_value(acc)
    [1.2, 3.5999999999999996]
    """

    def create_accumulator(self) -> list[Any]:
        return [{}, None]

    def accumulate(self, acc: list[Any], value: Any, percentage: Any, frequency: Any = 1) -> None:
        self._count(acc, value, percentage, frequency, 1)

    def retract(self, acc: list[Any], value: Any, percentage: Any, frequency: Any = 1) -> None:
        self._count(acc, value, percentage, frequency, -1)

    def _count(self, acc: list[Any], value: Any, percentage: Any, frequency: Any, sign: int) -> None:
        acc[1] = percentage
        if value is None or frequency is None or frequency <= 0:
            return
        held, key = acc[0], float(value)
        count = held.get(key, 0) + sign * int(frequency)
        if count:
            held[key] = count
        else:
            held.pop(key, None)

    def merge(self, acc: list[Any], others: Any) -> None:
        for other in others:
            for value, count in other[0].items():
                self._count(acc, value, other[1], count, 1)

    def get_value(self, acc: list[Any]) -> Any:
        held, percentages = acc
        n = sum(held.values())
        if n <= 0 or percentages is None:
            return None
        values = sorted(held.items())
        single = not isinstance(percentages, (list, tuple))
        out = []
        for p in [percentages] if single else percentages:
            at = float(p) * (n - 1) + 1  # (a position among the n values, from 1)
            lower, higher = math.floor(at), math.ceil(at)
            i, seen = 0, values[0][1]
            while seen < lower:
                i += 1
                seen += values[i][1]
            value = values[i][0] if seen >= higher else (higher - at) * values[i][0] + (at - lower) * values[i + 1][0]
            out.append(value)
        return out[0] if single else out


class Lag:
    """``LAG(x [, offset [, default]]) OVER w``: ``[the last offset + 1 values, offset, default]``; its value is
    the one ``offset`` rows before the last row accumulated, the default (of the last row) while fewer rows
    have come. Flink's streaming LAG: an OVER aggregation accumulates the rows of one time before it gives
    any of them its values, so those rows share the value their last one sees. (A frame's rows never leave
    it: Flink takes LAG over the default frame only.)

    >>> lag, acc, seen = Lag(), Lag().create_accumulator(), []
    >>> for v in (1, 2, 3):
    ...     lag.accumulate(acc, v, 2, -1)
    ...     seen.append(lag.get_value(acc))
    >>> seen
    [-1, -1, 1]
    """

    def create_accumulator(self) -> list[Any]:
        return [[], 1, None]

    def accumulate(self, acc: list[Any], value: Any, offset: int = 1, default: Any = None) -> None:
        acc[0].append(value)
        del acc[0][: -offset - 1]
        acc[1], acc[2] = offset, default

    def retract(self, acc: list[Any], *args: Any) -> None:
        raise TypeError("LAG takes no retraction: it runs over the default frame of an insert-only input")

    def get_value(self, acc: list[Any]) -> Any:
        values, offset, default = acc
        return values[0] if len(values) == offset + 1 else default


class Multiset:
    """``COLLECT(x)`` as Flink's ``CollectAggFunction``: ``[{value: count}]`` of the non-NULL values, its value
    that MULTISET as funke keeps one, a MAP of each value to its count (``{}`` over none, never NULL), the values
    in ascending order. A retraction takes one count away (the value goes at 0; one never held counts -1, as in
    Flink's); a merge adds the counts.

    >>> agg = Multiset()
    >>> acc = agg.create_accumulator()
    >>> for v in ("b", None, "a", "b", "c"):
    ...     agg.accumulate(acc, v)
    >>> agg.retract(acc, "c"); agg.get_value(acc)
    {'a': 1, 'b': 2}
    """

    def __repr__(self) -> str:
        return "Multiset()"

    def create_accumulator(self) -> list[Any]:
        return [{}]

    def accumulate(self, acc: list[Any], x: Any) -> None:
        if x is not None:
            acc[0][x] = acc[0].get(x, 0) + 1

    def retract(self, acc: list[Any], x: Any) -> None:
        if x is None:
            return
        count = acc[0].get(x)
        if count == 1:
            del acc[0][x]
        else:
            acc[0][x] = -1 if count is None else count - 1

    def merge(self, acc: list[Any], others: Iterable[list[Any]]) -> None:
        for o in others:
            for x, count in o[0].items():
                acc[0][x] = acc[0].get(x, 0) + count

    def get_value(self, acc: list[Any]) -> dict[Any, int]:
        return {x: acc[0][x] for x in sorted(acc[0])}


#: The built-in aggregates by SQL name.
BUILTINS = ("count", "sum", "avg", "min", "max")


def builtin(name: str, *, retracting: bool = False, distinct: bool = False) -> Any:
    """The built-in aggregate ``name`` (count, sum, avg, min, max, a ``Variance`` or a ``Values`` kind); ``retracting``: its input has
    retractions; ``distinct``: over distinct arguments."""
    made: Any
    if name == "count":
        made = Count()
    elif name in ("sum", "avg"):
        made = Sum() if name == "sum" else Avg()
    elif name in ("min", "max"):
        made = (Min if name == "min" else Max)(retracting=retracting)
    elif name in Variance.KINDS:
        made = Variance(name)
    elif name in Values.KINDS:
        made = Values(name, retracting=retracting)
    elif name == "lag":
        made = Lag()
    elif name == "percentile":
        made = Percentile()
    elif name in JsonAgg.KINDS:
        made = JsonAgg(name)
    elif name == "collect":
        made = Multiset()
    else:
        raise ValueError(f"unknown aggregate {name!r}: use {', '.join((*BUILTINS, *Variance.KINDS, *Values.KINDS, *JsonAgg.KINDS, 'collect'))}")
    return Distinct(made) if distinct else made
