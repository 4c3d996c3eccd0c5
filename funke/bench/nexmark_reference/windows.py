"""The references of the windowed queries: sliding (q5) and tumbling (q7, q8) event-time windows,
sessions (q11) and processing-time windows (q12).

Windows are Flink's: ``[start, end)``, aligned to the Unix epoch; a sliding window of size 10 s
starting every 2 s holds each time in five windows; two bids of one bidder are in one session when
the second comes at most a gap after the first (their windows ``[t, t + gap)`` touch or overlap).
Each holds the events whose windows have any: an empty window gives nothing.

>>> from funke.bench.nexmark_reference.events import Events, bid
>>> e = Events([], [], [bid(1, 7, 10, "2026-01-01 00:00:01"), bid(1, 7, 10, "2026-01-01 00:00:11"),
...                     bid(1, 7, 10, "2026-01-01 00:00:21.001")])
>>> sorted((n, f"{s:%S}", f"{t:%S.%f}") for _, n, s, t in q11(e))
[(1, '21', '31.001000'), (2, '01', '21.000000')]
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from funke.bench.nexmark_reference.events import Events, at_ms, ms

Rows = Counter

SECOND = 1_000


def tumbling_start(t_ms: int, size_ms: int) -> int:
    return t_ms - t_ms % size_ms


def sliding_starts(t_ms: int, size_ms: int, slide_ms: int) -> list[int]:
    """The starts of the sliding windows that hold ``t_ms``: every multiple of the slide in ``(t - size, t]``.

    >>> sliding_starts(10_500, 10_000, 2_000)
    [2000, 4000, 6000, 8000, 10000]
    """
    last = tumbling_start(t_ms, slide_ms)
    return list(range(last - ((size_ms - 1) // slide_ms) * slide_ms, last + 1, slide_ms))


def q5(e: Events) -> Rows:
    """Per 10-second window sliding by 2 seconds, the auctions with the most bids in it: (auction, count)."""
    counts: dict[int, Counter[int]] = defaultdict(Counter)  # window start -> bids per auction
    for b in e.bids:
        for start in sliding_starts(ms(b["dateTime"]), 10 * SECOND, 2 * SECOND):
            counts[start][b["auction"]] += 1
    out: Rows = Counter()
    for per_auction in counts.values():
        most = max(per_auction.values())
        out.update((a, n) for a, n in per_auction.items() if n == most)
    return out


def q7(e: Events) -> Rows:
    """Per 10-second tumbling window, the bids at its highest price placed from its start to its end,
    both included: (auction, price, bidder, dateTime, extra)."""
    size = 10 * SECOND
    highest: dict[int, int] = {}  # window end -> highest price in the window
    for b in e.bids:
        end = tumbling_start(ms(b["dateTime"]), size) + size
        highest[end] = max(highest.get(end, b["price"]), b["price"])
    by_price: dict[int, list[int]] = defaultdict(list)
    for end, price in highest.items():
        by_price[price].append(end)
    out: Rows = Counter()
    for b in e.bids:
        t = ms(b["dateTime"])
        for end in by_price.get(b["price"], ()):
            if end - size <= t <= end:
                out[(b["auction"], b["price"], b["bidder"], b["dateTime"], b["extra"])] += 1
    return out


def q8(e: Events) -> Rows:
    """Per 10-second tumbling window, the people who registered in it and opened an auction in it:
    (id, name, window start), once each."""
    size = 10 * SECOND
    registered = {(p["id"], p["name"], tumbling_start(ms(p["dateTime"]), size)) for p in e.people}
    sold = {(a["seller"], tumbling_start(ms(a["dateTime"]), size)) for a in e.auctions}
    return Counter((i, name, at_ms(start)) for i, name, start in registered if (i, start) in sold)


def q11(e: Events) -> Rows:
    """Per bidder, sessions with a 10-second gap: (bidder, bids, first bid, last bid + the gap)."""
    gap = 10 * SECOND
    times: dict[int, list[int]] = defaultdict(list)
    for b in e.bids:
        times[b["bidder"]].append(ms(b["dateTime"]))
    out: Rows = Counter()
    for bidder, ts in times.items():
        ts.sort()
        first = 0
        for i in range(1, len(ts) + 1):
            if i == len(ts) or ts[i] - ts[i - 1] > gap:
                out[(bidder, i - first, at_ms(ts[first]), at_ms(ts[i - 1] + gap))] += 1
                first = i
    return out


def q12(e: Events) -> Rows:
    """What the events fix of q12's result (processing-time windows): each bidder's number of bids, as
    rows (bidder, bids). Which 10-second window of the clock each bid falls in is the machine's."""
    return Counter(Counter(b["bidder"] for b in e.bids).items())


def q12_problems(got: Rows, want: Rows) -> list[str]:
    """q12's rows (bidder, bid_count, starttime, endtime) against the per-bidder totals: the counts of each
    bidder's windows add up to its bids, each window is 10 s long on a multiple of 10 s, once per bidder.

    >>> from datetime import datetime
    >>> w = lambda s: (datetime(2026, 1, 1, 0, 0, s), datetime(2026, 1, 1, 0, 0, s + 10))
    >>> q12_problems(Counter({(7, 2, *w(0)): 1, (7, 1, *w(10)): 1}), Counter({(7, 3): 1}))
    []
    >>> q12_problems(Counter({(7, 2, *w(0)): 1}), Counter({(7, 3): 1}))
    ['bids per bidder differ: e.g. bidder 7: 2, not 3']
    """
    found = []
    totals: Counter[int] = Counter()
    for (bidder, count, start, end), times in got.items():
        if times != 1 or ms(end) - ms(start) != 10 * SECOND or ms(start) % (10 * SECOND):
            found.append(f"not one 10-second window of the clock: {(bidder, count, start, end)} x{times}")
        totals[bidder] += count * times
    expected = dict(want.elements())
    if dict(totals) != expected:
        wrong = sorted(b for b in set(totals) | set(expected) if totals.get(b) != expected.get(b))
        found.append(
            f"bids per bidder differ: e.g. bidder {wrong[0]}: {totals.get(wrong[0], 0)}, not {expected.get(wrong[0], 0)}"
        )
    return found[:3]


#: Per query: its output columns (funke's formulation's names, in order) and its reference.
WINDOWS: dict[str, tuple[tuple[str, ...], Callable[[Events], Rows]]] = {
    "q5": (("auction", "num"), q5),
    "q7": (("auction", "price", "bidder", "dateTime", "extra"), q7),
    "q8": (("id", "name", "starttime"), q8),
    "q11": (("bidder", "bid_count", "starttime", "endtime"), q11),
    "q12": (("bidder", "bid_count", "starttime", "endtime"), q12),
}
