"""The references of the queries whose results update as events come: closing prices of auctions
(q4, q6, q9), aggregations grouped without a window (q15-q17), a deduplication (q18) and a Top-N
(q19). Each gives its final materialized result.

An auction's winning bid is its highest bid placed while it was open, from its own time to its
expiry, both included; of bids equal in price the earlier one wins (the formulation's order: Flink
ranks equal rows in the order they came, and the events come in time order). ``AVG`` of a
``BIGINT`` is a ``BIGINT``: the sum divided by the count, truncated, as in Flink.

>>> from funke.bench.nexmark_reference.events import Events, auction, bid
>>> e = Events([], [auction(1, 5, "2026-01-01 00:00:00", expires="2026-01-01 00:00:10", category=11)],
...            [bid(1, 7, 300, "2026-01-01 00:00:04"), bid(1, 8, 300, "2026-01-01 00:00:05"),
...             bid(1, 9, 900, "2026-01-01 00:00:10.001")])
>>> q4(e)
Counter({(11, 300): 1})
>>> [row[10:13] for row in q9(e)]
[(1, 7, 300)]
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime

from funke.bench.nexmark_reference.events import AUCTION, BID, Events, Row

Rows = Counter


def avg(values: Iterable[int]) -> int:
    """Flink's ``AVG`` of a ``BIGINT``: the sum over the count, truncated toward zero.

    >>> avg([1, 2]), avg([-1, -2]), avg([7])
    (1, -1, 7)
    """
    values = list(values)
    quotient = abs(sum(values)) // len(values)
    return quotient if sum(values) >= 0 else -quotient


def winners(e: Events) -> list[tuple[Row, Row]]:
    """Each auction that got a bid while open, with its winning bid: (auction, bid)."""
    bids: dict[int, list[Row]] = defaultdict(list)
    for b in e.bids:
        bids[b["auction"]].append(b)
    out = []
    for a in e.auctions:
        open_bids = [b for b in bids.get(a["id"], ()) if a["dateTime"] <= b["dateTime"] <= a["expires"]]
        if open_bids:
            out.append((a, min(open_bids, key=lambda b: (-b["price"], b["dateTime"]))))
    return out


def q4(e: Events) -> Rows:
    """Per category, the average closing price of its auctions: (category, average)."""
    closing: dict[int, list[int]] = defaultdict(list)
    for a, b in winners(e):
        closing[a["category"]].append(b["price"])
    return Counter((category, avg(prices)) for category, prices in closing.items())


def q6(e: Events) -> Rows:
    """Per seller, in the order of the winning bids' times (then the auction ids), each sale with the
    average price of itself and the 10 before it: (seller, average)."""
    sales: dict[int, list[tuple[datetime, int, int]]] = defaultdict(list)
    for a, b in winners(e):
        sales[a["seller"]].append((b["dateTime"], a["id"], b["price"]))
    out: Rows = Counter()
    for seller, sold in sales.items():
        prices = [price for _, _, price in sorted(sold)]
        out.update((seller, avg(prices[max(0, i - 10) : i + 1])) for i in range(len(prices)))
    return out


def q9(e: Events) -> Rows:
    """Each auction with its winning bid: the auction's columns, then the bid's auction, bidder, price, time, extra."""
    return Counter(
        (*(a[c] for c in AUCTION), b["auction"], b["bidder"], b["price"], b["dateTime"], b["extra"]) for a, b in winners(e)
    )


def price_band(price: int) -> int:
    """q15-q17's bands: 1 under 10,000; 2 from 10,000 to under 1,000,000; 3 from 1,000,000.

    >>> [price_band(p) for p in (9_999, 10_000, 999_999, 1_000_000)]
    [1, 2, 2, 3]
    """
    return 1 if price < 10_000 else 2 if price < 1_000_000 else 3


def day(t: datetime) -> str:
    return f"{t:%Y-%m-%d}"


def _statistics(bids: list[Row]) -> tuple[int, ...]:
    """Bids, distinct bidders and distinct auctions: in all, then per price band (q15, q16)."""
    bands = [[b for b in bids if price_band(b["price"]) == band] for band in (1, 2, 3)]
    groups = [bids, *bands]
    return (
        *(len(g) for g in groups),
        *(len({b["bidder"] for b in g}) for g in groups),
        *(len({b["auction"] for b in g}) for g in groups),
    )


def _grouped(bids: Iterable[Row], key: Callable[[Row], tuple]) -> dict[tuple, list[Row]]:
    groups: dict[tuple, list[Row]] = defaultdict(list)
    for b in bids:
        groups[key(b)].append(b)
    return groups


def q15(e: Events) -> Rows:
    """Per day: (day, then the 12 counts of :func:`_statistics`)."""
    return Counter((d, *_statistics(bids)) for (d,), bids in _grouped(e.bids, lambda b: (day(b["dateTime"]),)).items())


def q16(e: Events) -> Rows:
    """Per channel and day: (channel, day, the latest minute HH:mm, then the 12 counts)."""
    groups = _grouped(e.bids, lambda b: (b["channel"], day(b["dateTime"])))
    return Counter(
        (channel, d, max(f"{b['dateTime']:%H:%M}" for b in bids), *_statistics(bids)) for (channel, d), bids in groups.items()
    )


def q17(e: Events) -> Rows:
    """Per auction and day: bids in all and per band, then the lowest, highest, average and total price."""
    out: Rows = Counter()
    for (a, d), bids in _grouped(e.bids, lambda b: (b["auction"], day(b["dateTime"]))).items():
        prices = [b["price"] for b in bids]
        bands = Counter(price_band(p) for p in prices)
        out[(a, d, len(prices), bands[1], bands[2], bands[3], min(prices), max(prices), avg(prices), sum(prices))] += 1
    return out


def q18(e: Events) -> Rows:
    """Each bidder's latest bid on each auction (the bid's columns)."""
    latest: dict[tuple[int, int], Row] = {}
    for b in e.bids:
        key = (b["bidder"], b["auction"])
        if key not in latest or b["dateTime"] >= latest[key]["dateTime"]:  # (of equal times the later event, as Flink)
            latest[key] = b
    return Counter(tuple(b[c] for c in BID) for b in latest.values())


def q19(e: Events) -> Rows:
    """Each auction's 10 highest bids (the earlier of equal prices first), numbered from 1: the bid's columns and the number."""
    out: Rows = Counter()
    for bids in _grouped(e.bids, lambda b: (b["auction"],)).values():
        ranked = sorted(bids, key=lambda b: (-b["price"], b["dateTime"]))[:10]
        out.update((*(b[c] for c in BID), rank) for rank, b in enumerate(ranked, 1))
    return out


_COUNTS = tuple(f"{kind}_{what}" for what in ("bids", "bidders", "auctions") for kind in ("total", "rank1", "rank2", "rank3"))

#: Per query: its output columns (funke's formulation's names, in order) and its reference.
UPDATING: dict[str, tuple[tuple[str, ...], Callable[[Events], Rows]]] = {
    "q4": (("category", "avg_closing_price"), q4),
    "q6": (("seller", "avg_price"), q6),
    "q9": ((*AUCTION, "auction", "bidder", "price", "bid_dateTime", "bid_extra"), q9),
    "q15": (("day", *_COUNTS), q15),
    "q16": (("channel", "day", "minute", *_COUNTS), q16),
    "q17": (("auction", "day", *_COUNTS[:4], "min_price", "max_price", "avg_price", "sum_price"), q17),
    "q18": (BID, q18),
    "q19": ((*BID, "rank_number"), q19),
}
