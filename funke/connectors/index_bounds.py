"""The values a generator's column can take, proven from its expression over the index ``i``.

A generator's event time is a Spark SQL expression of ``i`` (``funke.connectors.sources.generator``).
When every row's value is provably an integer in a range, a check of that range can never fail, and
the compiler leaves it out (``Compiler._valid_times``): no dead-letter rule, no per-row count of
bad event times. The proof is interval arithmetic over what it knows exactly, with Spark's types:

>>> from funke.plan.expr import expr
>>> bounds(expr("1704067200000 + (i * 1000) div 100000 - pmod(xxhash64(i, 6), 2001)"), 0, 19_999_999)
(1704067198000, 1704067399999)

Anything else, or anything that could be null or overflow its type, proves nothing (``None``):

>>> bounds(expr("i * 1000"), 0, None) is None, bounds(expr("case when i = 3 then null else i end"), 0, 9) is None
(True, True)
>>> bounds(expr("2000000000 * 2"), 0, 9) is None  # an INT times an INT is an INT: it overflows
True
"""

from __future__ import annotations

import sqlglot
from sqlglot import expressions as exp

from funke.connectors.sources import GENERATOR_INDEX
from funke.plan.expr import Col, Expr, Lit, Sql
from funke.plan.types import INTEGER_BITS, integer_range, truncated_division

#: An interval of integer values and its Spark type (``INTEGER_BITS``'s).
_Range = tuple[int, int, str]

#: Hash functions, never null (a hash of nulls is the seed's), and their types.
_HASHES = {"xxhash64": "bigint", "hash": "int"}


def bounds(e: Expr, lo: int, hi: int | None, index: str = GENERATOR_INDEX) -> tuple[int, int] | None:
    """The smallest and largest value of ``e`` over ``index`` in ``lo .. hi`` (None: unbounded), if proven."""
    if hi is None:
        return None
    try:
        tree = _tree(e)
        got = _range(tree, index, (lo, hi, "bigint")) if tree is not None else None
    except sqlglot.errors.ParseError:
        return None
    return None if got is None else (got[0], got[1])


def _tree(e: Expr) -> exp.Expression | None:
    if isinstance(e, Sql):
        return sqlglot.parse_one(e.text, read="spark")
    if isinstance(e, Col):
        return exp.column(e.name)
    if isinstance(e, Lit) and type(e.value) is int:
        return exp.Literal.number(e.value)
    return None


def _fits(lo: int, hi: int, dtype: str) -> _Range | None:
    low, high = integer_range(dtype)
    return (lo, hi, dtype) if low <= lo and hi <= high else None


def _wider(a: _Range, b: _Range) -> str:
    """The type of Spark's arithmetic on both: the wider (a TINYINT plus a TINYINT is a TINYINT)."""
    return max(a[2], b[2], key=INTEGER_BITS.__getitem__)


def _range(t: exp.Expression, index: str, i: _Range) -> _Range | None:
    if isinstance(t, exp.Paren):
        return _range(t.this, index, i)
    if isinstance(t, exp.Column):
        return i if t.name == index and not t.table else None
    if isinstance(t, exp.Literal):
        if t.is_string or not t.this.lstrip("-").isdigit():
            return None
        v = int(t.this)
        return _fits(v, v, "int") or _fits(v, v, "bigint")
    if isinstance(t, exp.Neg):
        a = _range(t.this, index, i)
        return None if a is None else _fits(-a[1], -a[0], a[2])
    if isinstance(t, (exp.Cast, exp.TryCast)):
        a, to = _range(t.this, index, i), t.to.sql(dialect="spark").lower()
        return None if a is None or to not in INTEGER_BITS else _fits(a[0], a[1], to)
    if isinstance(t, exp.Anonymous) and t.name.lower() == "pmod" and len(t.expressions) == 2:
        x, m = t.expressions
        n = _range(m, index, i)
        hashed = _HASHES.get(x.name.lower()) if isinstance(x, exp.Anonymous) else None
        a = (0, 0, hashed) if hashed else _range(x, index, i)
        if n is None or a is None or n[0] != n[1] or n[0] <= 0:
            return None
        return _fits(0, n[0] - 1, _wider(a, n))
    if isinstance(t, (exp.Add, exp.Sub, exp.Mul, exp.IntDiv, exp.Mod)):
        a, b = _range(t.this, index, i), _range(t.expression, index, i)
        if a is None or b is None:
            return None
        dtype = "bigint" if isinstance(t, exp.IntDiv) else _wider(a, b)
        if isinstance(t, exp.Add):
            return _fits(a[0] + b[0], a[1] + b[1], dtype)
        if isinstance(t, exp.Sub):
            return _fits(a[0] - b[1], a[1] - b[0], dtype)
        if isinstance(t, exp.Mul):
            products = [x * y for x in a[:2] for y in b[:2]]
            return _fits(min(products), max(products), dtype)
        if b[0] != b[1] or b[0] == 0:  # div and % by a literal only
            return None
        d = b[0]
        if isinstance(t, exp.IntDiv):  # truncates toward zero: monotonic in the dividend
            ends = [truncated_division(a[0], d), truncated_division(a[1], d)]
            return _fits(min(ends), max(ends), dtype)
        m = abs(d) - 1  # % takes the dividend's sign
        return _fits(0 if a[0] >= 0 else max(a[0], -m), 0 if a[1] <= 0 else min(a[1], m), dtype)
    return None

