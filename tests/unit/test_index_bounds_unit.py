"""funke.connectors.index_bounds: a proven range holds every value the expression takes, with Spark's
integer semantics (``div`` and ``%`` truncate toward zero, ``pmod`` is never negative); anything it does not
know exactly proves nothing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funke.connectors.index_bounds import bounds
from funke.plan.expr import col, expr, lit

#: An expression as (Spark SQL text, a Python function of the index and a random source giving its value).
LEAVES = st.one_of(
    st.just(("i", lambda i, r: i)),
    st.integers(-50, 50).map(lambda v: (f"{v}" if v >= 0 else f"({v})", lambda i, r, v=v: v)),
    st.integers(2, 40).map(lambda m: (f"pmod(xxhash64(i, 7), {m})", lambda i, r, m=m: r.randrange(m))),
)


def _trunc(a: int, d: int) -> int:
    q = abs(a) // abs(d)
    return q if (a >= 0) == (d > 0) else -q


def _rem(a: int, d: int) -> int:
    return a - _trunc(a, d) * d


def _extend(children):
    pair = st.tuples(children, children)
    divisor = st.integers(-9, 9).filter(bool)
    return st.one_of(
        pair.map(lambda p: (f"({p[0][0]} + {p[1][0]})", lambda i, r, p=p: p[0][1](i, r) + p[1][1](i, r))),
        pair.map(lambda p: (f"({p[0][0]} - {p[1][0]})", lambda i, r, p=p: p[0][1](i, r) - p[1][1](i, r))),
        pair.map(lambda p: (f"({p[0][0]} * {p[1][0]})", lambda i, r, p=p: p[0][1](i, r) * p[1][1](i, r))),
        st.tuples(children, divisor).map(lambda p: (f"({p[0][0]} div ({p[1]}))", lambda i, r, p=p: _trunc(p[0][1](i, r), p[1]))),
        st.tuples(children, divisor).map(
            lambda p: (f"({p[0][0]} % ({p[1]}))", lambda i, r, p=p: _rem(p[0][1](i, r), p[1]))
        ),
        st.tuples(children, st.integers(1, 30)).map(lambda p: (f"pmod({p[0][0]}, {p[1]})", lambda i, r, p=p: p[0][1](i, r) % p[1])),
        children.map(lambda c: (f"(-{c[0]})", lambda i, r, c=c: -c[1](i, r))),
        children.map(lambda c: (f"cast({c[0]} as bigint)", c[1])),
    )


EXPRESSIONS = st.recursive(LEAVES, _extend, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS, st.integers(0, 10**6), st.integers(0, 10**4), st.randoms(use_true_random=False))
def test_every_value_lies_in_the_proven_range(e, lo, span, rnd):
    text, value = e
    found = bounds(expr(text), lo, lo + span)
    if found is None:
        return
    for i in {lo, lo + span, *(rnd.randint(lo, lo + span) for _ in range(20))}:
        assert found[0] <= value(i, rnd) <= found[1], (text, i, found)


@pytest.mark.parametrize(
    ("text", "lo", "hi", "expected"),
    [
        ("1704067200000 + (i * 1000) div 100000 - pmod(xxhash64(i, 6, 42), 2001)", 0, 20_000_000, (1704067198000, 1704067400000)),
        ("i", 3, 7, (3, 7)),
        ("-i % 7", 0, 100, (-6, 0)),
        ("pmod(i - 50, 7)", 0, 100, (0, 6)),
        ("pmod(hash(i), 10)", 0, 5, (0, 9)),
        ("cast(i * 2 as int)", 0, 10, (0, 20)),
        ("i div -3", 0, 10, (-3, 0)),
        ("100Y + 27Y + i", 0, 10, (127, 137)),  # (the TINYINT sum fits; with the BIGINT index, a BIGINT)
    ],
)
def test_ranges(text, lo, hi, expected):
    assert bounds(expr(text), lo, hi) == expected


@pytest.mark.parametrize(
    "text",
    [
        "case when i = 3 then null else i end",  # may be null
        "i / 2",  # a DOUBLE
        "i div 0",
        "i div (i + 1)",  # by a column: not monotonic in general
        "pmod(i, 0)",
        "pmod(i, i)",
        "abs(i)",  # not known
        "j + 1",  # not the index
        "'1'",
        "2000000000 * 2",  # INT times INT overflows an INT
        "100Y + 100Y",  # a TINYINT plus a TINYINT is a TINYINT: it overflows
        "cast(i div 100 as smallint) * 1000S",  # and a SMALLINT times a SMALLINT
        "i * 4611686018427387904",  # overflows a BIGINT
        "cast(i * 100000 as int)",  # does not fit an INT
        "1.5 * i",
        "i +",  # not SQL
    ],
)
def test_what_proves_nothing(text):
    assert bounds(expr(text), 0, 1_000_000) is None


def test_an_unbounded_index_and_plain_expressions():
    assert bounds(expr("i"), 0, None) is None
    assert bounds(col("i"), 2, 5) == (2, 5)
    assert bounds(lit(7), 0, 5) == (7, 7)
    assert bounds(lit("7"), 0, 5) is None
    assert bounds(col("i") + 1, 0, 5) is None  # (funke's own expression trees: only a column or a literal)
