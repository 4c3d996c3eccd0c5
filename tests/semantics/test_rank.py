"""Flink SQL's Top-N rank ranges and ranking functions (``funke.table.rank``, ``funke.table.sort.RankAtEnd``)
without Spark: changelogs derived by hand for a range that starts after rank 1 (``rn > M AND rn <= N``,
``LIMIT n OFFSET m``), over insert-only and updating input, and ``RANK()``/``DENSE_RANK()`` in batch mode;
property tests against ranking every row so far."""

from __future__ import annotations

from functools import cmp_to_key

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.time import MAX_WATERMARK
from funke.table.changelog import ROW_KIND
from funke.table.rank import DENSE_RANK, RANK, ROW_NUMBER, Order, RetractableTopN, TopN, WindowResultTopN, compare, in_range
from funke.table.sort import RankAtEnd

DESC = [Order("v", descending=True, nulls_first=False)]


def changes(top, rows: list[dict]) -> list[tuple]:
    """``(kind, id, rank)`` of each change ``top`` makes over ``rows``, one key."""
    state: list = []
    out = []
    for row in rows:
        state, made = top.step(state, row)
        out += [(c[ROW_KIND], c["id"], c["rn"]) for c in made]
    return out


@pytest.mark.parametrize("shown", [True, False])
def test_a_rank_range_updates_each_rank_in_it_whose_row_changes_shown_or_not(shown):
    # ROW_NUMBER() OVER (ORDER BY v DESC) ... WHERE rn > 2 AND rn <= 5 (values by id: 1, 5, 3, 7, 5, 2, 9)
    rows = [{"v": v, "id": i} for i, v in enumerate([1, 5, 3, 7, 5, 2, 9], 1)]
    assert changes(TopN(DESC, 5, "rn", start=3, numbered=shown), rows) == [
        # 1 and 5 rank 1 and 2: nothing in range; 3 takes rank 2, pushing 1 to rank 3
        ("+I", 1, 3),
        # 7 first: 3 moves down to rank 3, 1 to rank 4
        ("-U", 1, 3), ("+U", 3, 3), ("+I", 1, 4),
        # the second 5 ties with the first and comes after it: rank 3; 3 and 1 move down
        ("-U", 3, 3), ("+U", 5, 3), ("-U", 1, 4), ("+U", 3, 4), ("+I", 1, 5),
        # 2 lands on rank 5; 1 leaves the range with the update
        ("-U", 1, 5), ("+U", 6, 5),
        # 9 first: the first 5 enters the range from above, each row in it moves down, 2 leaves
        ("-U", 5, 3), ("+U", 2, 3), ("-U", 3, 4), ("+U", 5, 4), ("-U", 6, 5), ("+U", 3, 5),
    ]  # fmt: skip


def test_a_rank_range_over_a_changelog_moves_rows_up_into_it_when_one_is_retracted():
    # ranks 2 to 4 of a changelog: ids a..f with values 10, 9, 8, 7, 6, 5, then b, d and a sink to the bottom
    rows = [("+I", "a", 10), ("+I", "b", 9), ("+I", "c", 8), ("+I", "d", 7), ("+I", "e", 6), ("+I", "f", 5)]
    rows += [("-U", "b", 9), ("+U", "b", 0), ("-U", "d", 7), ("+U", "d", 0), ("-U", "a", 10), ("+U", "a", -10)]
    top = RetractableTopN(DESC, 4, "rn", start=2, numbered=False)
    assert changes(top, [{ROW_KIND: kind, "id": i, "v": v} for kind, i, v in rows]) == [
        ("+I", "b", 2), ("+I", "c", 3), ("+I", "d", 4),  # (e and f rank 5 and 6: out of range)
        ("-U", "b", 2), ("+U", "c", 2), ("-U", "c", 3), ("+U", "d", 3), ("-U", "d", 4), ("+U", "e", 4),  # b out
        # (b's 0 ranks last: nothing changes)
        ("-U", "d", 3), ("+U", "e", 3), ("-U", "e", 4), ("+U", "f", 4),  # d out
        # (d's 0 ties with b's and comes after it)
        ("-U", "c", 2), ("+U", "e", 2), ("-U", "e", 3), ("+U", "f", 3), ("-U", "f", 4), ("+U", "b", 4),  # a out: all move up
    ]  # fmt: skip


def test_limit_with_offset_and_no_order_inserts_the_rows_that_arrive_m_plus_1_to_m_plus_n():
    top = TopN([], 5, "rn", start=3, numbered=False)  # (LIMIT 3 OFFSET 2)
    assert not top.changelog_mode(()).updating
    assert changes(top, [{"v": None, "id": i} for i in range(1, 8)]) == [("+I", 3, 3), ("+I", 4, 4), ("+I", 5, 5)]


def test_a_rank_range_needs_a_column_for_its_rank():
    with pytest.raises(ValueError, match="name the rownum column"):
        TopN(DESC, 5, None, start=2)


def test_the_uids_of_top_ns_from_rank_1_stay_what_they_were():
    assert repr(TopN(DESC, 2, "rn")) == f"TopN({tuple(DESC)!r}, 2, rownum='rn', numbered=True, ttl_ms=None)"
    assert repr(TopN(DESC, 2, "rn", start=2)).endswith(", start=2)")
    assert repr(WindowResultTopN(DESC, 2, "rn")) == f"WindowResultTopN({tuple(DESC)!r}, 2, rownum='rn', window_end='window_end')"
    assert repr(WindowResultTopN(DESC, 2, "rn", function=RANK)).endswith(", function='RANK')")


def ranked_by_hand(rows: list[dict], order: list[Order], function: str) -> list[tuple[int, dict]]:
    """Each row's rank: its place in a stable sort (ROW_NUMBER), one more than the rows before it
    (RANK), or than the distinct sort keys before it (DENSE_RANK)."""
    ordered = sorted(rows, key=cmp_to_key(lambda a, b: compare(order, a, b)))
    out = []
    for i, row in enumerate(ordered):
        before = [r for r in ordered[:i] if compare(order, r, row) < 0]
        distinct = {tuple(r.get(o.column) for o in order) for r in before}
        out.append((i + 1 if function == ROW_NUMBER else 1 + (len(before) if function == RANK else len(distinct)), row))
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(0, 4)), max_size=25),
    st.integers(2, 4),
    st.integers(0, 3),
    st.booleans(),
    st.booleans(),
)
def test_a_top_n_range_applied_by_rank_is_the_rows_ranked_m_to_n_so_far(values, start, width, descending, shown):
    """(From rank 1: ``tests/unit/test_table_unit.py``.)"""
    order = [Order("v", descending=descending, nulls_first=not descending)]
    end = start + width
    top = TopN(order, end, "rn", numbered=shown, start=start)
    state: list = []
    held: dict[int, dict] = {}  # rank -> row
    rows = []
    for i, v in enumerate(values):
        rows.append({"v": v, "i": i})
        state, out = top.step(state, rows[-1])
        for c in out:
            kind, rank = c.pop(ROW_KIND), c.pop("rn")
            assert start <= rank <= end and kind in ("+I", "-U", "+U")
            if kind == "-U":
                assert held.pop(rank) == c
            else:
                assert rank not in held
                held[rank] = c
        assert sorted(held.items()) == [
            (rank, row) for rank, row in ranked_by_hand(rows, order, ROW_NUMBER) if start <= rank <= end
        ]


@st.composite
def changelogs(draw):
    """A changelog of one key: inserts, and retractions of rows inserted before."""
    held: list[tuple[int | None, int]] = []
    out = []
    for i in range(draw(st.integers(0, 30))):
        if held and draw(st.booleans()):
            out.append((draw(st.sampled_from(("-U", "-D"))), *held.pop(draw(st.integers(0, len(held) - 1)))))
        else:
            held.append((draw(st.one_of(st.none(), st.integers(0, 3))), i))
            out.append((draw(st.sampled_from(("+I", "+U"))), *held[-1]))
    return out


@settings(max_examples=300, deadline=None)
@given(changelogs(), st.integers(2, 4), st.integers(0, 2), st.booleans())
def test_a_retractable_top_n_range_applied_by_rank_is_the_rows_ranked_m_to_n_of_what_it_holds(rows, start, width, descending):
    order = [Order("v", descending=descending, nulls_first=not descending)]
    end = start + width
    top = RetractableTopN(order, end, "rn", numbered=False, start=start)
    state: list = []
    held: list[dict] = []  # the input's rows now, in arrival order
    result: dict[int, dict] = {}  # rank -> row
    for kind, v, i in rows:
        row = {"v": v, "i": i}
        state, out = top.step(state, {ROW_KIND: kind, **row})
        held = [r for r in held if r != row] if kind in ("-U", "-D") else [*held, row]
        for c in out:
            kind_out, rank = c.pop(ROW_KIND), c.pop("rn")
            assert start <= rank <= end
            if kind_out in ("-U", "-D"):
                assert result.pop(rank) == c
            else:
                assert rank not in result
                result[rank] = c
        assert sorted(result.items()) == [
            (rank, r) for rank, r in ranked_by_hand(held, order, ROW_NUMBER) if start <= rank <= end
        ]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.integers(0, 1)), max_size=20),
    st.sampled_from((ROW_NUMBER, RANK, DENSE_RANK)),
    st.integers(1, 4),
    st.integers(0, 3),
    st.booleans(),
)
def test_in_range_ranks_as_row_number_rank_and_dense_rank_define_it(values, function, start, width, descending):
    order = [Order("v", descending=descending, nulls_first=not descending), Order("w")]
    rows = [{"v": v, "w": w, "i": i} for i, (v, w) in enumerate(values)]
    got = in_range(rows, order, start, start + width, function=function, stable=True)
    assert got == [(rank, r) for rank, r in ranked_by_hand(rows, order, function) if start <= rank <= start + width]


def test_rank_and_dense_rank_in_batch_mode_rank_each_key_s_final_rows_at_the_end_of_the_input():
    # DENSE_RANK() OVER (PARTITION BY k ORDER BY v DESC) ... WHERE rk BETWEEN 2 AND 3, over a changelog
    op = KeyedProcessOperator(RankAtEnd(DESC, DENSE_RANK, 2, 3, "rk"))
    rows = [("+I", "a", 9, 1), ("+I", "a", 7, 2), ("+I", "a", 7, 3), ("+I", "a", 5, 4), ("+I", "a", 4, 5), ("+I", "a", 3, 6)]
    rows += [("-U", "a", 5, 4), ("+U", "a", 8, 4), ("+I", "b", 1, 7)]
    for kind, k, v, i in rows:
        assert op.process_element(k, {ROW_KIND: kind, "k": k, "v": v, "id": i}) == []
    got = [(r.value["k"], r.value["id"], r.value["rk"]) for r in op.advance_watermark(MAX_WATERMARK)]
    # a: 9, then 8 (the 5 became 8), then the two 7s share rank 3; b has one row, rank 1
    assert got == [("a", 4, 2), ("a", 2, 3), ("a", 3, 3)]
    ranks = KeyedProcessOperator(RankAtEnd(DESC, RANK, 1, 2, "rk"))
    for i, v in enumerate([7, 9, 7, 5]):
        ranks.process_element("a", {"v": v, "id": i})
    assert [(r.value["id"], r.value["rk"]) for r in ranks.advance_watermark(MAX_WATERMARK)] == [(1, 1), (0, 2), (2, 2)]


def test_a_window_result_top_n_keeps_its_range_by_rank_when_the_window_closes():
    op = KeyedProcessOperator(WindowResultTopN(DESC, 3, "rn", start=2, function=RANK))
    for i, v in enumerate([4, 9, 4, 1, 2]):
        op.process_element("w", {"window_end": 10, "v": v, "id": i}, 5)
    # 9 ranks 1, the two 4s share rank 2, so the next rank is 4: out of range
    assert [(r.value["id"], r.value["rn"]) for r in op.advance_watermark(20)] == [(0, 2), (2, 2)]


def test_window_top_n_ties_keep_arrival_order_but_a_keep_last_deduplication_keeps_the_last():
    """Flink 2.3 (checked): a window Top-N ``ORDER BY v DESC`` ranks the first of equal values first; a window
    deduplication ``ORDER BY ts DESC`` with ``rn = 1`` keeps the last row of equal timestamps."""
    from funke.table.rank import _kept

    rows = [{"id": 1, "v": 5}, {"id": 2, "v": 5}, {"id": 3, "v": 7}, {"id": 4, "v": 5}]
    top = WindowResultTopN(DESC, 2, "rn")
    assert [(r["id"], r["rn"]) for r in _kept(top, rows, {})] == [(3, 1), (1, 2)]
    dedup = WindowResultTopN([Order("v", descending=True)], 1, "rn", keep_last=True)
    assert [r["id"] for r in _kept(dedup, [r for r in rows if r["v"] == 5], {})] == [4]
