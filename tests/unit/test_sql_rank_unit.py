"""Flink SQL's Top-N and deduplication over an updating input (Flink's retractable Top-N), without Spark:
changelogs derived by hand, a property test against ranking the materialized input, and the plan."""

from __future__ import annotations

from collections import Counter
from functools import cmp_to_key

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funke as fk
from funke.plan import nodes
from funke.plan.changelog import changelog_mode
from funke.table import StreamTableEnvironment
from funke.table.changelog import ROW_KIND
from funke.table.rank import Order, RetractableTopN, compare


def run(top: RetractableTopN, rows: list[tuple[str, int, str]]) -> list[tuple]:
    held: list = []
    out = []
    for kind, v, name in rows:
        held, changes = top.step(held, {ROW_KIND: kind, "v": v, "name": name})
        out += [(c[ROW_KIND], c["name"], c["rn"]) for c in changes]
    return out


def test_a_numbered_top_2_over_a_changelog_moves_ranks_up_when_a_row_is_retracted():
    top = RetractableTopN([Order("v", descending=True, nulls_first=False)], 2, "rn", numbered=True)
    assert run(top, [("+I", 5, "a"), ("+I", 7, "b"), ("+I", 6, "c"), ("-U", 7, "b"), ("+U", 1, "b"), ("-D", 5, "a"), ("-D", 6, "c")]) == [
        ("+I", "a", 1),
        ("-U", "a", 1), ("+U", "b", 1), ("+I", "a", 2),
        ("-U", "a", 2), ("+U", "c", 2),  # (a falls out of the top 2)
        ("-U", "b", 1), ("+U", "c", 1), ("-U", "c", 2), ("+U", "a", 2),  # b retracted: c and a move up
        # (b comes back at 1: below the top 2, nothing changes)
        ("-U", "a", 2), ("+U", "b", 2),
        ("-U", "c", 1), ("+U", "b", 1), ("-D", "b", 2),
    ]  # fmt: skip


def test_an_unnumbered_top_1_deletes_the_row_that_leaves_then_inserts_the_one_that_enters():
    top = RetractableTopN([Order("v")], 1, "rn", numbered=False)
    assert run(top, [("+I", 5, "a"), ("+I", 3, "b"), ("+I", 3, "c"), ("-D", 3, "b"), ("-D", 3, "c"), ("-D", 9, "x")]) == [
        ("+I", "a", None),
        ("-D", "a", None), ("+I", "b", None),
        # (c ties with b and came later: it stays behind b)
        ("-D", "b", None), ("+I", "c", None),
        ("-D", "c", None), ("+I", "a", None),
        # (a retraction of a row never held changes nothing)
    ]  # fmt: skip


@st.composite
def changelogs(draw):
    held: list[tuple[str, int | None, int]] = []
    out = []
    for i in range(draw(st.integers(0, 30))):
        if held and draw(st.booleans()):
            gone = held.pop(draw(st.integers(0, len(held) - 1)))
            out.append((draw(st.sampled_from(("-U", "-D"))), *gone))
        else:
            row = (draw(st.sampled_from("ab")), draw(st.one_of(st.none(), st.integers(0, 3))), draw(st.integers(0, 2)))
            held.append(row)
            out.append((draw(st.sampled_from(("+I", "+U"))), *row))
    return out


@settings(max_examples=300, deadline=None)
@given(changelogs(), st.integers(1, 3), st.booleans(), st.booleans())
def test_a_top_n_of_a_changelog_materializes_to_the_first_n_of_what_it_holds(rows, limit, descending, numbered):
    order = [Order("v", descending=descending, nulls_first=not descending)]
    top = RetractableTopN(order, limit, "rn", numbered=numbered)
    states: dict = {}
    held: dict[str, list[dict]] = {}  # per key, the rows held in arrival order
    numbered_result: dict = {}  # (k, rank) -> row
    result: Counter = Counter()
    for kind, k, v, i in rows:
        row = {"k": k, "v": v, "i": i}
        states[k], out = top.step(states.get(k, []), {ROW_KIND: kind, **row})
        if kind in ("-U", "-D"):
            held[k].remove(row)
        else:
            held.setdefault(k, []).append(row)
        for c in out:
            kind_out, rank = c.pop(ROW_KIND), c.pop("rn")
            if numbered:
                if kind_out in ("-U", "-D"):
                    assert numbered_result.pop((k, rank)) == c
                else:
                    assert (k, rank) not in numbered_result
                    numbered_result[(k, rank)] = c
            else:
                result[tuple(c.items())] += -1 if kind_out == "-D" else 1
                assert rank is None and result[tuple(c.items())] >= 0
        # (sorted is stable: ties keep their arrival order, as Flink's retractable Top-N ranks them)
        first = {k: sorted(rs, key=cmp_to_key(lambda a, b: compare(order, a, b)))[:limit] for k, rs in held.items()}
        if numbered:
            assert numbered_result == {(k, r): row for k, rs in first.items() for r, row in enumerate(rs, 1)}
        else:
            assert +result == Counter(tuple(r.items()) for rs in first.values() for r in rs)


def test_a_top_n_or_a_deduplication_over_an_updating_result_is_a_retractable_top_n():
    env = fk.StreamEnvironment(app="sql-rank-unit")
    t_env = StreamTableEnvironment.create(env)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    t_env.create_temporary_view("ev", env.from_collection([], "k string, ts timestamp, v int", watermarks=wm))
    t_env.create_temporary_view("totals", t_env.sql_query("SELECT k, SUM(v) AS s, MAX(ts) AS ts FROM ev GROUP BY k"))
    ranked = "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {p}ORDER BY {o}) AS r FROM totals) WHERE r <= {n}"
    top = t_env.sql_query(ranked.format(p="", o="s DESC", n=3))
    (fn,) = [
        x.function
        for x in nodes.walk([top._stream.node])
        if isinstance(x, nodes.KeyedProcess) and isinstance(x.function, RetractableTopN)
    ]
    assert (fn.limit, fn.numbered) == (3, True) and top.columns == ("k", "s", "ts", "r")
    assert changelog_mode(top._stream.node).describe() == "[+I, -U, +U, -D] upsert key (r)"
    dedup = t_env.sql_query(
        "SELECT k, s FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS r FROM totals) WHERE r = 1"
    )
    (fn,) = [
        x.function
        for x in nodes.walk([dedup._stream.node])
        if isinstance(x, nodes.KeyedProcess) and isinstance(x.function, RetractableTopN)
    ]
    assert (fn.limit, fn.numbered) == (1, False)
    assert changelog_mode(dedup._stream.node).describe() == "[+I, -D] upsert key (k)"
    with pytest.raises(fk.errors.UnsupportedError, match="a window Top-N over an updating result"):
        t_env.sql_query(
            ranked.format(p="window_start, window_end ", o="s", n=1).replace(
                "FROM totals", "FROM (SELECT k, s, ts, ts AS window_start, ts AS window_end FROM totals)"
            )
        )
