"""Independent results of the Nexmark queries whose results are updating or that join more than two
relations (q4, q5, q9, q15, q16, q17, q23), computed in plain Python from the generated events:
no SQL, no funke planner or operator, no Spark.

Each function takes the events as Python rows (``people``, ``auctions``, ``bids``: dicts with the
Nexmark fields, ``dateTime`` a ``datetime``) and returns the query's final result as a multiset of
rows (a ``Counter`` of tuples in the query's column order), Flink SQL's meaning: a join pairs rows of
equal keys, ``AVG`` of a BIGINT is a BIGINT (truncated), ``DATE_FORMAT`` formats in UTC. q9 ranks bids
tied in price and time in an order Flink leaves open: ``q9_candidates`` gives, per auction, every
row that may be its first.

>>> import datetime as dt
>>> t = dt.datetime(2024, 1, 1)
>>> auctions = [{"id": 1, "category": 10, "dateTime": t, "expires": t + dt.timedelta(seconds=5)}]
>>> bids = [{"auction": 1, "price": p, "dateTime": t + dt.timedelta(seconds=s)} for p, s in ((3, 1), (9, 2), (7, 6))]
>>> q4(auctions, bids)
Counter({(10, 9): 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

Row = dict[str, Any]
Rows = Counter

_EPOCH = datetime(1970, 1, 1)
#: q5's HOP windows: every 2 s, 10 s long.
Q5_SLIDE, Q5_SIZE = timedelta(seconds=2), timedelta(seconds=10)
#: A bid's columns in the order the queries give them.
BID = ("auction", "bidder", "price", "channel", "url", "dateTime", "extra")
AUCTION = ("id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra")
PERSON = ("id", "name", "emailAddress", "creditCard", "city", "state", "extra")


def _avg(values: list[int]) -> int:
    """Flink's ``AVG`` of a BIGINT: the sum divided by the count in integers, truncated toward zero."""
    total = sum(values)
    q = abs(total) // len(values)
    return q if total >= 0 else -q


def _bids_in_time(auctions: Iterable[Row], bids: Iterable[Row]) -> list[tuple[Row, Row]]:
    """Each (auction, bid) pair of q4 and q9: the bid on the auction, between its start and expiry (inclusive)."""
    by_id: dict[int, list[Row]] = {}
    for a in auctions:
        by_id.setdefault(a["id"], []).append(a)
    return [(a, b) for b in bids for a in by_id.get(b["auction"], ()) if a["dateTime"] <= b["dateTime"] <= a["expires"]]


def q4(auctions: Iterable[Row], bids: Iterable[Row]) -> Rows:
    """Per category, the average of its auctions' final (highest in-time) bid prices: (category, avg)."""
    final: dict[tuple[int, int], int] = {}
    for a, b in _bids_in_time(auctions, bids):
        key = (a["id"], a["category"])
        final[key] = max(final.get(key, b["price"]), b["price"])
    per_category: dict[int, list[int]] = {}
    for (_, category), price in final.items():
        per_category.setdefault(category, []).append(price)
    return Counter((category, _avg(prices)) for category, prices in per_category.items())


def _hop_windows(t: datetime) -> list[datetime]:
    """The starts of q5's HOP windows holding ``t`` (aligned to the epoch, as Flink's)."""
    slide_ms, size_ms = Q5_SLIDE // timedelta(milliseconds=1), Q5_SIZE // timedelta(milliseconds=1)
    ms = (t - _EPOCH) // timedelta(milliseconds=1)
    last = ms - ms % slide_ms
    return [_EPOCH + timedelta(milliseconds=s) for s in range(last, ms - size_ms, -slide_ms)]


def q5(bids: Iterable[Row]) -> Rows:
    """Per HOP window, the auctions with the most bids in it: (auction, num), one row per window each has the most in."""
    counts: Counter = Counter()
    for b in bids:
        for start in _hop_windows(b["dateTime"]):
            counts[(start, b["auction"])] += 1
    most: dict[datetime, int] = {}
    for (start, _), n in counts.items():
        most[start] = max(most.get(start, n), n)
    return Counter((auction, n) for (start, auction), n in counts.items() if n >= most[start])


def q9_candidates(auctions: Iterable[Row], bids: Iterable[Row]) -> dict[int, set[tuple]]:
    """Per auction with an in-time bid, the rows that may be its winning bid's: the auction's columns,
    then the bid's auction, bidder, price, dateTime and extra, of every bid first by price (highest)
    then time (earliest): bids tied in both may take the first rank in either order."""
    best: dict[int, list[tuple[Row, Row]]] = {}
    for a, b in _bids_in_time(auctions, bids):
        kept = best.setdefault(a["id"], [])
        if kept and (b["price"], -_ms(b["dateTime"])) < (kept[0][1]["price"], -_ms(kept[0][1]["dateTime"])):
            continue
        if kept and (b["price"], -_ms(b["dateTime"])) > (kept[0][1]["price"], -_ms(kept[0][1]["dateTime"])):
            kept.clear()
        kept.append((a, b))
    return {
        auction: {
            (*(a[c] for c in AUCTION), *(b[c] for c in ("auction", "bidder", "price", "dateTime", "extra"))) for a, b in rows
        }
        for auction, rows in best.items()
    }


def _ms(t: datetime) -> int:
    return (t - _EPOCH) // timedelta(milliseconds=1)


def q23(people: Iterable[Row], auctions: Iterable[Row], bids: Iterable[Row]) -> Rows:
    """Each bid with its bidder (a person) and each auction that person sells: the bid's bidder, price,
    channel, url and extra, the person's columns, the auction's columns but its id."""
    by_id: dict[int, list[Row]] = {}
    for p in people:
        by_id.setdefault(p["id"], []).append(p)
    by_seller: dict[int, list[Row]] = {}
    for a in auctions:
        by_seller.setdefault(a["seller"], []).append(a)
    out: Rows = Counter()
    for b in bids:
        for p in by_id.get(b["bidder"], ()):
            for a in by_seller.get(b["bidder"], ()):
                bid = (b["bidder"], b["price"], b["channel"], b["url"], b["extra"])
                out[(*bid, *(p[c] for c in PERSON), *(a[c] for c in AUCTION[1:]))] += 1
    return out


def _ranks(prices: list[int]) -> tuple[int, int, int]:
    """How many of ``prices`` are below 10,000, from 10,000 below 1,000,000, and from 1,000,000."""
    return (sum(p < 10_000 for p in prices), sum(10_000 <= p < 1_000_000 for p in prices), sum(p >= 1_000_000 for p in prices))


def _distinct_ranks(bids: list[Row], column: str) -> tuple[int, int, int, int]:
    """How many distinct ``column`` values the bids have, and among the bids of each price rank."""
    ranges = (lambda p: p < 10_000, lambda p: 10_000 <= p < 1_000_000, lambda p: p >= 1_000_000)
    return (len({b[column] for b in bids}), *(len({b[column] for b in bids if r(b["price"])}) for r in ranges))  # type: ignore[return-value]


def _day(t: datetime) -> str:
    return t.strftime("%Y-%m-%d")


def _bid_statistics(bids: list[Row]) -> tuple:
    """q15's and q16's figures of some bids: the bid count and per price rank, the distinct bidders and
    auctions, overall and per rank."""
    return (len(bids), *_ranks([b["price"] for b in bids]), *_distinct_ranks(bids, "bidder"), *_distinct_ranks(bids, "auction"))


def q15(bids: Iterable[Row]) -> Rows:
    """Per day: (day, bids, bids per price rank, distinct bidders overall and per rank, distinct auctions likewise)."""
    days: dict[str, list[Row]] = {}
    for b in bids:
        days.setdefault(_day(b["dateTime"]), []).append(b)
    return Counter((day, *_bid_statistics(bs)) for day, bs in days.items())


def q16(bids: Iterable[Row]) -> Rows:
    """Per channel and day: q15's figures, after the day the latest minute (``HH:mm``) a bid came in."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for b in bids:
        groups.setdefault((b["channel"], _day(b["dateTime"])), []).append(b)
    return Counter(
        (channel, day, max(b["dateTime"].strftime("%H:%M") for b in bs), *_bid_statistics(bs))
        for (channel, day), bs in groups.items()
    )


def q17(bids: Iterable[Row]) -> Rows:
    """Per auction and day: (auction, day, bids, bids per price rank, min, max, average and sum of the prices)."""
    groups: dict[tuple[int, str], list[int]] = {}
    for b in bids:
        groups.setdefault((b["auction"], _day(b["dateTime"])), []).append(b["price"])
    return Counter(
        (auction, day, len(ps), *_ranks(ps), min(ps), max(ps), _avg(ps), sum(ps)) for (auction, day), ps in groups.items()
    )
