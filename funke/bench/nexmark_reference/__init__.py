"""Nexmark's 24 queries computed in plain Python, from what each query means: the independent results
funke's runs are checked against (``funke bench nexmark --check``, ``tests/spark/test_nexmark.py``).

Nothing here goes through funke's SQL, its planner or its operators. The events are the ``nexmark``
connector's, read as a plain Spark DataFrame of the same expressions (``events_frame``) and collected
into Python rows (:func:`load_events`); the hand-made event sets of the unit tests are rows too.

Each query's reference gives its result as a multiset of rows (tuples in the order of the query's
output columns: what its ``INSERT INTO`` writes, by position). An updating query's is its final
materialized result, what a changelog of it leaves applied (``+I``/``+U`` add a row, ``-U``/``-D``
take one away); an insert-only query's is all its rows. Ties that a query's ordering leaves open are
settled as funke's formulation settles them (the earlier bid first), and where a query depends on
the machine's clock (q12, processing time) the reference gives what the events fix and
:func:`problems` checks only that.

>>> from datetime import datetime
>>> e = Events([], [], [bid(1107, 1000, 500, "2026-01-01 00:00:01"), bid(1108, 1001, 70, "2026-01-01 00:00:02")])
>>> REFERENCES["q2"].compute(e)
Counter({(1107, 500): 1})
>>> problems("q2", [{"auction": 1107, "price": 500}], e)
[]
>>> problems("q2", [{"auction": 1107, "price": 501}], e)
['q2: 1 row(s) missing, e.g. [(1107, 500)]; 1 not in the reference, e.g. [(1107, 501)]']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from funke.bench.nexmark_reference.events import Events, auction, bid, load_events, person, utc
from funke.bench.nexmark_reference.simple import SIMPLE
from funke.bench.nexmark_reference.updating import UPDATING
from funke.bench.nexmark_reference.windows import WINDOWS, q12_problems

Rows = Counter  # a multiset of result rows


@dataclass(frozen=True)
class Reference:
    """A query's output columns (funke's formulation names them) and its reference result."""

    columns: tuple[str, ...]
    compute: Callable[[Events], Rows]
    #: What is wrong with a run's materialized rows (empty: nothing), where equality is not the test.
    check: Callable[[Rows, Rows], list[str]] | None = field(default=None)


def _references() -> dict[str, Reference]:
    table: dict[str, Reference] = {}
    for group in (SIMPLE, WINDOWS, UPDATING):
        for query, (columns, compute) in group.items():
            table[query] = Reference(columns, compute, q12_problems if query == "q12" else None)
    return dict(sorted(table.items(), key=lambda kv: int(kv[0][1:])))


#: Every query of the suite, q0 to q23.
REFERENCES: dict[str, Reference] = _references()

ROW_KIND = "row_kind"


def materialize(rows: Iterable[Mapping[str, Any]]) -> tuple[Rows, list[str]]:
    """The rows a run gave, as a multiset of tuples (datetimes in UTC), and what was wrong with its changelog.

    An insert-only result's rows are all kept. An updating one's (each row with its ``row_kind``) is
    applied in order: ``+I``/``+U`` add the row, ``-U``/``-D`` take away one equal row, which must be held.

    >>> materialize([{"row_kind": "+I", "n": 1}, {"row_kind": "-U", "n": 1}, {"row_kind": "+U", "n": 2}])
    (Counter({(2,): 1}), [])
    >>> materialize([{"row_kind": "-D", "n": 5}])[1]
    ['-D of a row not in the result: (5,)']
    """
    held: Rows = Counter()
    wrong: list[str] = []
    for r in rows:
        kind = r.get(ROW_KIND, "+I")
        row = tuple(utc(v) if isinstance(v, datetime) else v for k, v in r.items() if k != ROW_KIND)
        if kind in ("+I", "+U"):
            held[row] += 1
        elif kind in ("-U", "-D"):
            if held[row] <= 0:
                wrong.append(f"{kind} of a row not in the result: {row}")
            else:
                held[row] -= 1
        else:
            wrong.append(f"a row of kind {kind!r}: {row}")
    return +held, wrong


def problems(query: str, rows: Iterable[Mapping[str, Any]], events: Events) -> list[str]:
    """What is wrong with the rows a run of ``query`` gave over ``events`` (empty: they are the reference's)."""
    reference = REFERENCES[query]
    got, wrong = materialize(rows)
    want = reference.compute(events)
    found = [f"{query}: {w}" for w in wrong[:3]]
    if reference.check is not None:
        return found + [f"{query}: {p}" for p in reference.check(got, want)]
    if got != want:
        missing, extra = sorted((want - got).elements(), key=repr), sorted((got - want).elements(), key=repr)
        found.append(
            f"{query}: {len(missing):,} row(s) missing, e.g. {missing[:2]}; {len(extra):,} not in the reference, e.g. {extra[:2]}"
        )
    return found


__all__ = ["REFERENCES", "Events", "Reference", "auction", "bid", "load_events", "materialize", "person", "problems"]
