"""The references of the queries that keep no state of their own beyond a join: projections and
filters (q0-q2, q10, q14, q21, q22), a lookup in a side input (q13) and regular inner joins (q3, q20,
q23). Every one is insert-only: its result is all its rows.

>>> from funke.bench.nexmark_reference.events import Events, bid
>>> e = Events([], [], [bid(1, 2, 1_200_000, "2026-01-01 19:30:00", extra="cc-c")])
>>> q14(e)
Counter({(1, 2, Decimal('1089600.000'), 'otherTime', datetime.datetime(2026, 1, 1, 19, 30), 'cc-c', 3): 1})
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

from funke.bench.nexmark_reference.events import AUCTION, BID, Events, Row

Rows = Counter

#: q1, q14: dollars to euros (a DECIMAL(3, 3) literal: exact).
EURO = Decimal("0.908")
#: q13: the side input's rows, key and value (``side_input_rows``).
SIDE_INPUT_KEYS = 10_000


def side_input_rows() -> list[tuple[int, str]]:
    """The CSV rows of q13's side input, which the runner writes to ``data/side_input.txt``: each key
    from 0 to 9,999 with its decimal digits as the value (the file Nexmark's own generator makes)."""
    return [(k, str(k)) for k in range(SIDE_INPUT_KEYS)]


def q0(e: Events) -> Rows:
    return Counter((b["auction"], b["bidder"], b["price"], b["dateTime"], b["extra"]) for b in e.bids)


def q1(e: Events) -> Rows:
    return Counter((b["auction"], b["bidder"], EURO * b["price"], b["dateTime"], b["extra"]) for b in e.bids)


def q2(e: Events) -> Rows:
    return Counter((b["auction"], b["price"]) for b in e.bids if b["auction"] % 123 == 0)


def q3(e: Events) -> Rows:
    """Category-10 auctions with their sellers from OR, ID or CA: (name, city, state, auction id)."""
    sellers: dict[int, list[Row]] = {}
    for p in e.people:
        if p["state"] in ("OR", "ID", "CA"):
            sellers.setdefault(p["id"], []).append(p)
    return Counter(
        (p["name"], p["city"], p["state"], a["id"])
        for a in e.auctions
        if a["category"] == 10
        for p in sellers.get(a["seller"], ())
    )


def q10(e: Events) -> Rows:
    """Every bid, with its day (yyyy-MM-dd) and its minute (HH:mm), the file partitions it goes to; its time as the csv
    file holds it, Flink's text of a TIMESTAMP (``2026-01-01 00:00:08.07``: the fraction's trailing zeros cut)."""
    return Counter(
        (b["auction"], b["bidder"], b["price"], _timestamp_text(b["dateTime"]), b["extra"], f"{b['dateTime']:%Y-%m-%d}", f"{b['dateTime']:%H:%M}")
        for b in e.bids
    )


def _timestamp_text(at: datetime) -> str:
    """Flink's json and csv text of a TIMESTAMP (a UTC datetime's wall time).

    >>> import datetime as dt
    >>> _timestamp_text(dt.datetime(2026, 1, 1, 0, 0, 8, 70000)), _timestamp_text(dt.datetime(2026, 1, 1, 0, 0, 5))
    ('2026-01-01 00:00:08.07', '2026-01-01 00:00:05')
    """
    return f"{at:%Y-%m-%d %H:%M:%S.%f}".rstrip("0").rstrip(".")


def q13(e: Events) -> Rows:
    """Each bid whose auction id modulo 10,000 is a key of the side input, with the key's value."""
    side = dict(side_input_rows())
    return Counter(
        (b["auction"], b["bidder"], b["price"], b["dateTime"], side[b["auction"] % 10_000])
        for b in e.bids
        if b["auction"] % 10_000 in side
    )


def time_of_day(hour: int) -> str:
    """q14's bidTimeType: day from 8 to 18 o'clock (whole hours, both included), night to 6 and from 20.

    >>> [time_of_day(h) for h in (6, 7, 8, 18, 19, 20)]
    ['nightTime', 'otherTime', 'dayTime', 'dayTime', 'otherTime', 'nightTime']
    """
    if 8 <= hour <= 18:
        return "dayTime"
    return "nightTime" if hour <= 6 or hour >= 20 else "otherTime"


def q14(e: Events) -> Rows:
    """Bids between 1 and 50 million euros (both excluded), with the euro price, the time of day and
    how many 'c's their extra holds."""
    out: Rows = Counter()
    for b in e.bids:
        euros = EURO * b["price"]
        if 1_000_000 < euros < 50_000_000:
            t = b["dateTime"]
            out[(b["auction"], b["bidder"], euros, time_of_day(t.hour), t, b["extra"], (b["extra"] or "").count("c"))] += 1
    return out


def q20(e: Events) -> Rows:
    """Each bid on a category-10 auction with the auction's columns (but its id, the bid's auction)."""
    auctions: dict[int, list[Row]] = {}
    for a in e.auctions:
        if a["category"] == 10:
            auctions.setdefault(a["id"], []).append(a)
    return Counter(
        (*(b[c] for c in BID), *(a[c] for c in AUCTION if c != "id")) for b in e.bids for a in auctions.get(b["auction"], ())
    )


CHANNEL_IDS = {"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
_CHANNEL_PARAMETER = re.compile("(^|&)channel_id=([^&]*)")


def channel_id(channel: str, url: str) -> str | None:
    """q21: a named channel's id, else the URL's ``channel_id`` parameter (after ``&`` or at the start), else None.

    >>> channel_id("Baidu", "x"), channel_id("channel-7", "https://h/p?query=1&channel_id=7"), channel_id("x", "https://h/p")
    ('3', '7', None)
    """
    named = CHANNEL_IDS.get(channel.lower())
    if named is not None:
        return named
    found = _CHANNEL_PARAMETER.search(url)
    return found.group(2) if found else None


def q21(e: Events) -> Rows:
    return Counter(
        (b["auction"], b["bidder"], b["price"], b["channel"], channel_id(b["channel"], b["url"]))
        for b in e.bids
        if channel_id(b["channel"], b["url"]) is not None
    )


def url_part(url: str, i: int) -> str | None:
    """Part ``i`` (from 0) of the URL split at every '/', empty parts kept; None past the last.

    >>> [url_part("https://h/a/b", i) for i in (0, 1, 2, 3, 4, 5)]
    ['https:', '', 'h', 'a', 'b', None]
    """
    parts = url.split("/")
    return parts[i] if i < len(parts) else None


def q22(e: Events) -> Rows:
    return Counter(
        (b["auction"], b["bidder"], b["price"], b["channel"], *(url_part(b["url"], i) for i in (3, 4, 5))) for b in e.bids
    )


def q23(e: Events) -> Rows:
    """Each bid with its bidder (a person) and each auction that bidder sells."""
    people: dict[int, list[Row]] = {}
    for p in e.people:
        people.setdefault(p["id"], []).append(p)
    sold: dict[int, list[Row]] = {}
    for a in e.auctions:
        sold.setdefault(a["seller"], []).append(a)
    out: Rows = Counter()
    for b in e.bids:
        for p in people.get(b["bidder"], ()):
            bidder = (b["bidder"], b["price"], b["channel"], b["url"], b["extra"], p["id"], p["name"], p["emailAddress"],
                      p["creditCard"], p["city"], p["state"], p["extra"])  # fmt: skip
            for a in sold.get(b["bidder"], ()):
                out[(*bidder, a["itemName"], a["description"], a["initialBid"], a["reserve"], a["dateTime"], a["expires"],
                     a["seller"], a["category"], a["extra"])] += 1  # fmt: skip
    return out


_BID_OUT = ("auction", "bidder", "price", "dateTime", "extra")
#: q20's and q23's auction columns, after the bid's (and q23's person's).
_AUCTION_OUT = ("itemName", "description", "initialBid", "reserve", "auction_dateTime", "expires", "seller", "category",
                "auction_extra")  # fmt: skip
_BIDDER_OUT = ("bidder", "price", "channel", "url", "bid_extra", "person_id", "name", "emailAddress", "creditCard", "city",
               "state", "person_extra")  # fmt: skip

#: Per query: its output columns (funke's formulation's names, in order) and its reference.
SIMPLE: dict[str, tuple[tuple[str, ...], Callable[[Events], Rows]]] = {
    "q0": (_BID_OUT, q0),
    "q1": (_BID_OUT, q1),
    "q2": (("auction", "price"), q2),
    "q3": (("name", "city", "state", "id"), q3),
    "q10": ((*_BID_OUT, "dt", "hm"), q10),
    "q13": (("auction", "bidder", "price", "dateTime", "value"), q13),
    "q14": (("auction", "bidder", "price", "bidTimeType", "dateTime", "extra", "c_counts"), q14),
    "q20": (("auction", "bidder", "price", "channel", "url", "bid_dateTime", "bid_extra", *_AUCTION_OUT), q20),
    "q21": (("auction", "bidder", "price", "channel", "channel_id"), q21),
    "q22": (("auction", "bidder", "price", "channel", "dir1", "dir2", "dir3"), q22),
    "q23": ((*_BIDDER_OUT, *_AUCTION_OUT), q23),
}
