"""The YSB window counts computed without Spark: numpy over the same event function.

``examples/ysb.py`` defines event ``i`` with Spark SQL's ``xxhash64``; this module
re-implements that hash (Spark's XXH64 over a long, then an int, seed 42) so the
reference shares no code with Spark: not its hash, its join or its window operator.
A mistake here shows up as a mismatch against both systems, never as a silent pass, and
the total is checked against ``ysb.expected_view_count`` (the same hash in Spark SQL).

>>> int(xxhash64(np.arange(3, dtype=np.int64), 3)[0])
3685650509796455440
>>> counts = reference_counts(1_000)
>>> sum(counts.values()) > 0 and all(end - start == WINDOW_MS for _, start, end in counts)
True
"""

from __future__ import annotations

import functools
from collections import Counter
from fractions import Fraction

import numpy as np

from examples import ysb

#: The tumbling window of ``ysb.pipeline`` (10 s, no offset).
WINDOW_MS = 10_000
#: The generator settings the benchmark runs with, passed to ``ysb.events`` as well.
EVENTS_PER_SECOND = 100_000
MAX_DISORDER_MS = 2_000

WindowKey = tuple[str, int, int]  # campaign_id, window start ms, window end ms

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_SPARK_HASH_SEED = 42
_CHUNK = 2_000_000


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * _P2
    h = h ^ (h >> np.uint64(29))
    h = h * _P3
    return h ^ (h >> np.uint64(32))


def xxhash64(i: np.ndarray, salt: int) -> np.ndarray:
    """Spark SQL's ``xxhash64(i, salt)`` for a bigint column ``i`` and an int literal ``salt``."""
    with np.errstate(over="ignore"):
        h = np.uint64(_SPARK_HASH_SEED) + _P5 + np.uint64(8)  # hashLong(i, 42)
        h = h ^ (_rotl(i.astype(np.uint64) * _P2, 31) * _P1)
        h = _fmix(_rotl(h, 27) * _P1 + _P4)
        h = h + _P5 + np.uint64(4)  # hashInt(salt, previous hash)
        h = h ^ (np.uint64(salt & 0xFFFFFFFF) * _P1)
        h = _fmix(_rotl(h, 23) * _P2 + _P3)
    return h.view(np.int64)


def _h(i: np.ndarray, salt: int, modulo: int) -> np.ndarray:
    """``pmod(xxhash64(i, salt), modulo)``: numpy's ``mod`` is already non-negative for a positive modulo."""
    return np.mod(xxhash64(i, salt), modulo)


def reference_counts(n: int, campaigns: int = ysb.CAMPAIGNS) -> Counter[WindowKey]:
    """View events per campaign and 10-second event-time window among events ``0 .. n-1``.

    Mirrors ``ysb.events(n, events_per_second=EVENTS_PER_SECOND, max_disorder_ms=MAX_DISORDER_MS,
    campaigns=campaigns)`` and ``ysb.campaigns(campaigns)`` (ad ``a`` in campaign ``a // 10``):
    The generator's event time is ``(i * 1000) div events_per_second`` ms past the start: the
    same exact fraction here.
    """
    step = Fraction(1000, EVENTS_PER_SECOND)
    if step.numerator * max(n, 1) >= 2**62:
        raise ValueError(f"reference_counts: {n:,} events at {EVENTS_PER_SECOND:,}/s overflow int64 arithmetic")
    view = ysb.EVENT_TYPES.index("view")
    ads = campaigns * ysb.ADS_PER_CAMPAIGN
    name = functools.lru_cache(maxsize=None)(functools.partial(ysb.campaign_id, campaigns=campaigns))
    counts: Counter[WindowKey] = Counter()
    for lo in range(0, n, _CHUNK):
        i = np.arange(lo, min(n, lo + _CHUNK), dtype=np.int64)
        i = i[_h(i, 5, len(ysb.EVENT_TYPES)) == view]
        campaign = _h(i, 3, ads) // ysb.ADS_PER_CAMPAIGN
        t = ysb.START_MS + (i * step.numerator) // step.denominator - _h(i, 6, MAX_DISORDER_MS + 1)
        keys, found = np.unique((t // WINDOW_MS) * campaigns + campaign, return_counts=True)
        for key, k in zip(keys.tolist(), found.tolist(), strict=True):
            window, c = divmod(key, campaigns)
            counts[(name(c), window * WINDOW_MS, (window + 1) * WINDOW_MS)] += k
    return counts


def reference_sessions(n: int, *, keys: int, events_per_second: int, gap_ms: int) -> np.ndarray:
    """``examples.sessions``' clicks ``0 .. n-1`` per user session, in numpy: rows ``(user, start ms, end ms, count)``
    sorted by user and start.

    Flink's session rule: a click opens the window ``[t, t + gap)``, and windows that overlap or
    touch merge, so among one user's clicks in time order a session ends where the next click
    comes more than ``gap`` after the last. ``clicks()`` writes the time step per event as a SQL
    decimal literal (``floor(i * 0.01)``): the same exact fraction here.

    >>> r = reference_sessions(1_000, keys=10, events_per_second=1_000, gap_ms=2_000)
    >>> int(r[:, 3].sum()), bool((r[:, 2] > r[:, 1]).all())
    (1000, True)
    """
    from examples import sessions

    step = Fraction(str(1000 / events_per_second))
    i = np.arange(n, dtype=np.int64)
    user = _h(i, 11, keys)
    t = sessions.START_MS + (i * step.numerator) // step.denominator - _h(i, 12, 1000)
    order = np.lexsort((t, user))
    user, t = user[order], t[order]
    first = np.ones(n, dtype=bool)
    first[1:] = (user[1:] != user[:-1]) | (t[1:] - t[:-1] > gap_ms)
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], n) - 1
    return np.column_stack((user[starts], t[starts], t[ends] + gap_ms, ends - starts + 1))
