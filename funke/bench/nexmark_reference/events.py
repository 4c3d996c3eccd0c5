"""The events the references read: people, auctions and bids as Python rows (dicts with the views'
column names), from a run's generated events (:func:`load_events`) or made by hand (:func:`person`,
:func:`auction`, :func:`bid`).

Times are naive datetimes in UTC, the wall-clock values Flink's ``TIMESTAMP(3)`` shows and funke's
Spark session (time zone UTC) formats.

>>> b = bid(1001, 1000, 250, "2026-01-01 00:00:09.500")
>>> b["dateTime"], ms(b["dateTime"]) % 10_000
(datetime.datetime(2026, 1, 1, 0, 0, 9, 500000), 9500)
>>> at_ms(ms(b["dateTime"])) == b["dateTime"]
True
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

Row = dict[str, Any]

UNIX_EPOCH = datetime(1970, 1, 1)
PERSON = ("id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra")
AUCTION = ("id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra")
BID = ("auction", "bidder", "price", "channel", "url", "dateTime", "extra")


@dataclass(frozen=True)
class Events:
    """Each kind of event in the order they happened (the ``person``, ``auction`` and ``bid`` views)."""

    people: list[Row]
    auctions: list[Row]
    bids: list[Row]


def utc(t: datetime) -> datetime:
    """A datetime as a naive one in UTC (a naive one is read in the process's zone, as PySpark made it)."""
    return t.astimezone(UTC).replace(tzinfo=None)


def ms(t: datetime) -> int:
    """Milliseconds since the Unix epoch of a naive UTC datetime."""
    return (t - UNIX_EPOCH) // timedelta(milliseconds=1)


def at_ms(m: int) -> datetime:
    return UNIX_EPOCH + timedelta(milliseconds=m)


def _time(t: str | datetime) -> datetime:
    return datetime.fromisoformat(t) if isinstance(t, str) else t


def person(id: int, state: str, t: str | datetime, *, name: str | None = None, city: str = "Bend", extra: str = "") -> Row:
    """A person for a hand-made event set (the fields no query compares get plain values)."""
    return {"id": id, "name": name or f"person-{id}", "emailAddress": f"p{id}@example.com", "creditCard": "1111 2222 3333 4444",
            "city": city, "state": state, "dateTime": _time(t), "extra": extra}  # fmt: skip


def auction(
    id: int, seller: int, t: str | datetime, *, expires: str | datetime | None = None, category: int = 10, extra: str = ""
) -> Row:
    opened = _time(t)
    return {"id": id, "itemName": f"item-{id}", "description": f"auction {id}", "initialBid": 100, "reserve": 200,
            "dateTime": opened, "expires": _time(expires) if expires is not None else opened + timedelta(seconds=10),
            "seller": seller, "category": category, "extra": extra}  # fmt: skip


def bid(
    auction: int, bidder: int, price: int, t: str | datetime, *, channel: str = "Google", url: str | None = None, extra: str = ""
) -> Row:
    return {"auction": auction, "bidder": bidder, "price": price, "channel": channel,
            "url": url if url is not None else "https://www.nexmark.com/a/b/c/item.htm?query=1",
            "dateTime": _time(t), "extra": extra}  # fmt: skip


def load_events(spark: Any, settings: Any) -> Events:
    """The events a run with ``settings`` (``funke.bench.nexmark.Settings``) reads, as Python rows: the
    connector's expressions evaluated by plain Spark (``events_frame``) and collected."""
    from funke.bench.nexmark import events_frame

    kinds: dict[int, list[Row]] = {0: [], 1: [], 2: []}
    for r in events_frame(spark, settings).collect():
        kind = r["event_type"]
        event = r[("person", "auction", "bid")[kind]].asDict()
        kinds[kind].append({k: utc(v) if isinstance(v, datetime) else v for k, v in event.items()})
    return Events(kinds[0], kinds[1], kinds[2])
