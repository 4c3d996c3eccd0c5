"""The Nexmark references (``funke.bench.nexmark_reference``) on small hand-made event sets, every result
derived by hand from what the query means (in the comments), for all 24 queries; and the changelog
materialization and comparison the Spark tests and ``--check`` use.

Times are seconds past 2026-01-01 00:00:00 UTC (a multiple of every window size here)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from funke.bench.nexmark_reference import REFERENCES, Events, auction, bid, materialize, person, problems
from funke.bench.nexmark_reference.events import AUCTION, BID

T0 = datetime(2026, 1, 1)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def result(query: str, e: Events) -> Counter:
    return REFERENCES[query].compute(e)


def bid_row(b: dict) -> tuple:
    return tuple(b[c] for c in BID)


def test_every_query_has_a_reference_with_its_columns():
    assert list(REFERENCES) == [f"q{n}" for n in range(24)]
    assert REFERENCES["q19"].columns[-1] == "rank_number" and len(REFERENCES["q23"].columns) == 21


# -- projections and filters -------------------------------------------------------------------


def test_q0_q1_q2_pass_convert_and_select_bids():
    b1, b2 = bid(246, 1000, 1000, at(1), extra="x"), bid(247, 1001, 3, at(2))
    e = Events([], [], [b1, b2])
    assert result("q0", e) == Counter({(246, 1000, 1000, at(1), "x"): 1, (247, 1001, 3, at(2), ""): 1})
    # 1000 dollars are 908.000 euros, 3 are 2.724: exact decimals
    assert result("q1", e) == Counter(
        {(246, 1000, Decimal("908.000"), at(1), "x"): 1, (247, 1001, Decimal("2.724"), at(2), ""): 1}
    )
    assert result("q2", e) == Counter({(246, 1000): 1})  # 246 = 2 * 123; 247 is not a multiple


def test_q10_gives_each_bid_its_day_and_minute():
    """Its time as q10's csv file holds it: Flink's text of a TIMESTAMP, the fraction's trailing zeros cut."""
    e = Events([], [], [bid(1, 2, 3, "2026-01-01 13:45:30.250", extra="e")])
    assert result("q10", e) == Counter({(1, 2, 3, "2026-01-01 13:45:30.25", "e", "2026-01-01", "13:45"): 1})


def test_q13_looks_each_bid_up_by_its_auction_modulo_10000():
    e = Events([], [], [bid(10_005, 7, 40, at(1)), bid(3, 8, 50, at(2))])
    # the side input holds every key 0..9999, each with its digits as the value: both bids find theirs
    assert result("q13", e) == Counter({(10_005, 7, 40, at(1), "5"): 1, (3, 8, 50, at(2), "3"): 1})


def test_q14_keeps_bids_between_1_and_50_million_euros_with_time_of_day_and_c_count():
    # 0.908 * 1,101,322 = 1,000,000.376 (in); 0.908 * 1,101,321 = 999,999.468 (out)
    # 0.908 * 55,066,079 = 49,999,999.732 (in); 0.908 * 55,066,080 = 50,000,000.640 (out)
    e = Events([], [], [
        bid(1, 1, 1_101_322, "2026-01-01 07:59:59", extra="cacc"), bid(2, 1, 1_101_321, at(1)),
        bid(3, 1, 55_066_079, "2026-01-01 20:00:00", extra="abc"), bid(4, 1, 55_066_080, at(2)),
        bid(5, 1, 2_000_000, "2026-01-01 18:59:59", extra=None),
    ])  # fmt: skip
    assert result("q14", e) == Counter({
        (1, 1, Decimal("1000000.376"), "otherTime", datetime(2026, 1, 1, 7, 59, 59), "cacc", 3): 1,
        (3, 1, Decimal("49999999.732"), "nightTime", datetime(2026, 1, 1, 20), "abc", 1): 1,
        (5, 1, Decimal("1816000.000"), "dayTime", datetime(2026, 1, 1, 18, 59, 59), None, 0): 1,
    })  # fmt: skip


def test_q21_names_the_channel_id_and_leaves_out_bids_without_one():
    e = Events([], [], [
        bid(1, 1, 10, at(1), channel="Apple"), bid(2, 1, 20, at(1), channel="BAIDU"),
        bid(3, 1, 30, at(1), channel="channel-42", url="https://h/a/b/c/item.htm?query=1&channel_id=42"),
        bid(4, 1, 40, at(1), channel="channel-9", url="https://h/a/b/c/item.htm?query=1"),
        bid(5, 1, 50, at(1), channel="other", url="channel_id=7&x=1"),  # at the start of the string: found
        bid(6, 1, 60, at(1), channel="other", url="https://h/p?channel_id=8"),  # after '?', not '&': not found
    ])  # fmt: skip
    assert result("q21", e) == Counter({
        (1, 1, 10, "Apple", "0"): 1, (2, 1, 20, "BAIDU", "3"): 1, (3, 1, 30, "channel-42", "42"): 1, (5, 1, 50, "other", "7"): 1,
    })  # fmt: skip


def test_q22_splits_the_url_and_gives_null_past_its_end():
    e = Events([], [], [bid(1, 2, 3, at(1), channel="c", url="https://www.nexmark.com/abc/de/f/item.htm"),
                        bid(4, 5, 6, at(1), channel="c", url="https://short/x")])  # fmt: skip
    assert result("q22", e) == Counter({(1, 2, 3, "c", "abc", "de", "f"): 1, (4, 5, 6, "c", "x", None, None): 1})


# -- regular joins -------------------------------------------------------------------------------


PEOPLE = [person(1000, "OR", at(1), name="Ann", city="Bend"), person(1001, "WA", at(2), name="Bob"),
          person(1002, "CA", at(12), name="Cy", city="Kent")]  # fmt: skip


def test_q3_lists_category_10_auctions_of_sellers_in_or_id_ca():
    auctions = [auction(2000, 1000, at(3)), auction(2001, 1001, at(4)), auction(2002, 1002, at(13), category=11),
                auction(2003, 1002, at(14)), auction(2004, 9999, at(15))]  # fmt: skip
    # 2000: Ann in OR, category 10; 2001: Bob is in WA; 2002: category 11; 2003: Cy in CA; 2004: no such seller
    assert result("q3", Events(PEOPLE, auctions, [])) == Counter({("Ann", "Bend", "OR", 2000): 1, ("Cy", "Kent", "CA", 2003): 1})


def test_q20_joins_bids_with_their_category_10_auction():
    a10, a11 = auction(2000, 1000, at(3), extra="a"), auction(2001, 1000, at(3), category=11)
    b1, b2, b3 = bid(2000, 1001, 5, at(4), extra="b"), bid(2001, 1001, 6, at(5)), bid(2999, 1001, 7, at(6))
    got = result("q20", Events([], [a10, a11], [b1, b2, b3]))
    # only b1: b2's auction is category 11, b3's does not exist; the auction's columns follow the bid's, its id left out
    assert got == Counter({(*bid_row(b1), *(a10[c] for c in AUCTION if c != "id")): 1})


def test_q23_gives_each_bid_with_its_bidder_and_each_auction_the_bidder_sells():
    a1, a2, a3 = auction(2000, 1000, at(3)), auction(2001, 1000, at(4)), auction(2002, 1001, at(5))
    b1, b2, b3 = bid(2002, 1000, 9, at(6)), bid(2000, 1002, 8, at(7)), bid(2000, 1005, 7, at(8))
    got = result("q23", Events(PEOPLE, [a1, a2, a3], [b1, b2, b3]))
    # b1: Ann (1000) sells 2000 and 2001, two rows; b2: Cy sells nothing; b3: 1005 is nobody
    assert sorted(row[12] for row in got.elements()) == ["item-2000", "item-2001"]
    assert {row[:12] for row in got} == {(1000, 9, "Google", b1["url"], "", 1000, "Ann", "p1000@example.com",
                                          "1111 2222 3333 4444", "Bend", "OR", "")}  # fmt: skip


# -- windows -------------------------------------------------------------------------------------


def test_q5_counts_the_busiest_auctions_of_each_sliding_window():
    e = Events(
        [], [], [bid(1, 9, 1, at(1)), bid(1, 9, 1, at(1.5)), bid(2, 9, 1, at(3)), bid(2, 9, 1, at(11)), bid(3, 9, 1, at(11.5))]
    )
    # windows of 10 s starting every 2 s: [-8, 2), [-6, 4), [-4, 6), [-2, 8), [0, 10) each have auction 1 twice,
    # auction 2 at most once: (1, 2) five times; [2, 12) has auction 2 twice (3 s, 11 s): (2, 2);
    # [4, 14), [6, 16), [8, 18), [10, 20) have 2 and 3 once each: a tie, both go out, four times each
    assert result("q5", e) == Counter({(1, 2): 5, (2, 2): 1, (2, 1): 4, (3, 1): 4})


def test_q7_takes_the_windows_highest_bids_up_to_its_end_inclusive():
    b = [bid(1, 9, 50, at(2)), bid(2, 9, 80, at(5)), bid(3, 9, 80, at(7)), bid(4, 9, 80, at(10)), bid(5, 9, 60, at(15))]
    # [0, 10): highest 80, and bids of 80 placed in [0 s, 10 s] are 2, 3 and 4 (at the end, in the next window);
    # [10, 20): highest 80 (bid 4 itself), placed in [10 s, 20 s]: bid 4 again
    assert result("q7", Events([], [], b)) == Counter(
        {(2, 80, 9, at(5), ""): 1, (3, 80, 9, at(7), ""): 1, (4, 80, 9, at(10), ""): 2}
    )


def test_q8_finds_people_who_sell_in_the_window_they_registered_in():
    auctions = [auction(2000, 1000, at(3)), auction(2001, 1000, at(5)), auction(2002, 1001, at(11)), auction(2003, 1002, at(19))]
    # Ann registered at 1 s and sold at 3 s and 5 s ([0, 10), once); Bob registered at 2 s but sold at 11 s; Cy: 12 s and 19 s
    assert result("q8", Events(PEOPLE, auctions, [])) == Counter({(1000, "Ann", at(0)): 1, (1002, "Cy", at(10)): 1})


def test_q11_closes_a_session_after_a_gap_of_more_than_10_seconds():
    b = [bid(1, 7, 1, at(1)), bid(1, 7, 1, at(11)), bid(1, 7, 1, at(21.001)), bid(1, 8, 1, at(5))]
    # bidder 7: 1 s and 11 s are 10 s apart (one session, to 21 s); 21.001 s is more than 10 s after 11 s: a new one
    assert result("q11", Events([], [], b)) == Counter(
        {(7, 2, at(1), at(21)): 1, (7, 1, at(21.001), at(31.001)): 1, (8, 1, at(5), at(15)): 1}
    )


def test_q12_fixes_only_each_bidders_total_and_checks_the_windows():
    e = Events([], [], [bid(1, 7, 1, at(1)), bid(1, 7, 1, at(2)), bid(1, 8, 1, at(3))])
    assert result("q12", e) == Counter({(7, 2): 1, (8, 1): 1})
    split = [{"bidder": 7, "bid_count": 1, "starttime": at(0), "endtime": at(10)},
             {"bidder": 7, "bid_count": 1, "starttime": at(10), "endtime": at(20)},
             {"bidder": 8, "bid_count": 1, "starttime": at(10), "endtime": at(20)}]  # fmt: skip
    assert problems("q12", split, e) == []
    assert problems("q12", split[:2], e) == ["q12: bids per bidder differ: e.g. bidder 8: 0, not 1"]
    unaligned = [{**split[0], "starttime": at(5), "endtime": at(15)}, *split[1:]]
    assert problems("q12", unaligned, e)[0].startswith("q12: not one 10-second window of the clock")


# -- closing prices: q4, q6, q9 --------------------------------------------------------------------

CLOSING = Events(PEOPLE, [
    auction(2000, 1000, at(3), expires=at(8)), auction(2001, 1001, at(4), expires=at(20)),
    auction(2002, 1000, at(13), expires=at(15), category=11), auction(2003, 1001, at(14), expires=at(16)),
], [
    bid(2000, 1001, 500, at(5)), bid(2000, 1002, 700, at(6)), bid(2000, 1001, 900, at(9)),  # 900 after 2000 expired
    bid(2001, 1000, 301, at(10)),
    bid(2002, 1001, 300, at(14)), bid(2002, 1000, 300, at(15)),  # equal prices: the earlier wins; 15 s is the expiry: in
    bid(2003, 1000, 50, at(13.5)),  # before 2003 opened: it gets no winner
])  # fmt: skip


def test_q4_averages_the_closing_prices_per_category():
    # closing prices: 2000 -> 700 (900 came after expiry), 2001 -> 301, 2002 -> 300; 2003 none
    # category 10: (700 + 301) / 2 = 500.5, truncated to 500; category 11: 300
    assert result("q4", CLOSING) == Counter({(10, 500): 1, (11, 300): 1})


def test_q9_gives_each_auction_its_winning_bid():
    got = {row[0]: row[10:] for row in result("q9", CLOSING)}
    assert got == {2000: (2000, 1002, 700, at(6), ""), 2001: (2001, 1000, 301, at(10), ""), 2002: (2002, 1001, 300, at(14), "")}
    assert all(
        row[:10] == tuple(a[c] for c in AUCTION) for row in result("q9", CLOSING) for a in CLOSING.auctions if a["id"] == row[0]
    )


def test_q6_averages_each_sale_with_the_sellers_10_before_it():
    auctions = [auction(100 + k, 7, at(10 * k), expires=at(10 * k + 5)) for k in range(1, 13)]
    bids = [bid(100 + k, 9, k, at(10 * k + 1)) for k in range(1, 13)]
    bids += [bid(113, 9, 5, at(131)), bid(113, 9, 6, at(132))]  # seller 8's one auction: 6 wins
    auctions.append(auction(113, 8, at(130), expires=at(140)))
    # seller 7 sold at 1, 2, ..., 12 in that order: the mean of sales 1..i for i <= 11 ((i + 1) / 2, truncated),
    # then of sales 2..12 (7)
    expected = Counter([(7, a) for a in (1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7)]) + Counter({(8, 6): 1})
    assert result("q6", Events([], auctions, bids)) == expected


# -- aggregations grouped without a window -----------------------------------------------------------

DAYS = Events([], [], [
    bid(1, 10, 9_999, "2026-01-01 10:00:00", channel="Apple"), bid(1, 11, 10_000, "2026-01-01 10:05:00", channel="Apple"),
    bid(2, 10, 999_999, "2026-01-01 23:59:00", channel="Baidu"), bid(2, 12, 1_000_000, "2026-01-01 11:00:00", channel="Apple"),
    bid(1, 10, 20, "2026-01-02 00:01:00", channel="Apple"),
])  # fmt: skip


def test_q15_counts_bids_bidders_and_auctions_per_day_and_price_band():
    # 2026-01-01: bids 4 (band 1: 9,999; band 2: 10,000 and 999,999; band 3: 1,000,000);
    # bidders {10, 11, 12} (band 1 {10}, band 2 {11, 10}, band 3 {12}); auctions {1, 2} ({1}, {1, 2}, {2})
    # 2026-01-02: one bid of 20 by 10 on 1
    assert result("q15", DAYS) == Counter({
        ("2026-01-01", 4, 1, 2, 1, 3, 1, 2, 1, 2, 1, 2, 1): 1,
        ("2026-01-02", 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0): 1,
    })  # fmt: skip


def test_q16_counts_per_channel_and_day_with_the_latest_minute():
    # Apple on the 1st: 10:00 (band 1, 10, auction 1), 10:05 (band 2, 11, 1), 11:00 (band 3, 12, 2): latest 11:00
    assert result("q16", DAYS) == Counter({
        ("Apple", "2026-01-01", "11:00", 3, 1, 1, 1, 3, 1, 1, 1, 2, 1, 1, 1): 1,
        ("Baidu", "2026-01-01", "23:59", 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0): 1,
        ("Apple", "2026-01-02", "00:01", 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0): 1,
    })  # fmt: skip


def test_q17_gives_per_auction_and_day_counts_and_price_statistics():
    # auction 1 on the 1st: 9,999 and 10,000: bands 1 and 2, min 9,999, max 10,000, avg 9,999.5 -> 9,999, sum 19,999
    assert result("q17", DAYS) == Counter({
        (1, "2026-01-01", 2, 1, 1, 0, 9_999, 10_000, 9_999, 19_999): 1,
        (2, "2026-01-01", 2, 0, 1, 1, 999_999, 1_000_000, 999_999, 1_999_999): 1,
        (1, "2026-01-02", 1, 1, 0, 0, 20, 20, 20, 20): 1,
    })  # fmt: skip


# -- deduplication and Top-N ---------------------------------------------------------------------------


def test_q18_keeps_each_bidders_latest_bid_per_auction():
    first, later, other = bid(1, 10, 5, at(1)), bid(1, 10, 3, at(2)), bid(2, 10, 4, at(1.5))
    assert result("q18", Events([], [], [later, first, other])) == Counter({bid_row(later): 1, bid_row(other): 1})


def test_q19_numbers_each_auctions_ten_highest_bids_earlier_first_among_equals():
    prices = [5, 9, 9, 1, 7, 3, 8, 2, 6, 4, 10, 0]
    bids = [bid(1, 100 + i, p, at(i)) for i, p in enumerate(prices)] + [bid(2, 1, 1, at(20))]
    got = result("q19", Events([], [], bids))
    ranked = sorted((row[-1], row[2], row[1]) for row in got)  # (rank, price, bidder)
    # 10, then 9 by bidder 101 (1 s) before 9 by 102 (2 s), 8, 7, 6, 5, 4, 3, 2; 1 and 0 are out; auction 2 has one
    assert ranked == [(1, 1, 1), (1, 10, 110), (2, 9, 101), (3, 9, 102), (4, 8, 106), (5, 7, 104), (6, 6, 108), (7, 5, 100),
                      (8, 4, 109), (9, 3, 105), (10, 2, 107)]  # fmt: skip


# -- reading a run's rows ----------------------------------------------------------------------------


def test_a_changelog_is_applied_in_order_and_a_retraction_of_nothing_is_reported():
    rows = [{"row_kind": "+I", "k": 1, "v": 1}, {"row_kind": "-U", "k": 1, "v": 1}, {"row_kind": "+U", "k": 1, "v": 2},
            {"row_kind": "+I", "k": 2, "v": 5}, {"row_kind": "-D", "k": 2, "v": 5}]  # fmt: skip
    assert materialize(rows) == (Counter({(1, 2): 1}), [])
    assert materialize([{"row_kind": "-U", "k": 1}])[1] == ["-U of a row not in the result: (1,)"]
    assert materialize([{"row_kind": "?", "k": 1}])[1] == ["a row of kind '?': (1,)"]


def test_problems_names_missing_and_extra_rows():
    e = Events([], [], [bid(1, 2, 3, at(1))])
    assert problems("q0", [{"auction": 1, "bidder": 2, "price": 3, "dateTime": at(1), "extra": ""}], e) == []
    twice = [{"auction": 1, "bidder": 2, "price": 3, "dateTime": at(1), "extra": ""}] * 2
    assert problems("q0", twice, e) == [
        "q0: 0 row(s) missing, e.g. []; 1 not in the reference, e.g. [(1, 2, 3, datetime.datetime(2026, 1, 1, 0, 0, 1), '')]"
    ]


@pytest.mark.parametrize("query", list(REFERENCES))
def test_every_reference_runs_on_an_empty_event_set(query):
    got = REFERENCES[query].compute(Events([], [], []))
    assert got == Counter()
