"""Small readers for operator output, so expectations in tests stay one line each."""

from __future__ import annotations

from typing import Any

from funke.semantics.functions import OutputRecord
from funke.semantics.window_operator import WindowResult


def results(outputs: list[OutputRecord]) -> list[tuple[Any, int | None, int | None, Any]]:
    """Main-output window results as ``(key, window_start, window_end, value)``."""
    found = []
    for record in outputs:
        if record.tag is None:
            assert isinstance(record.value, WindowResult), record
            found.append((record.value.key, record.value.window_start, record.value.window_end, record.value.value))
    return found


def values(outputs: list[OutputRecord]) -> list[Any]:
    """Just the values of the main-output window results."""
    return [value for *_, value in results(outputs)]


def side(outputs: list[OutputRecord]) -> list[tuple[str, Any, int | None]]:
    """Side outputs as ``(tag name, value, timestamp)``."""
    return [(r.tag.name, r.value, r.timestamp) for r in outputs if r.tag is not None]


def interval_join_reference(script: list[tuple], lower: int, upper: int, *, cleanup: bool = True) -> list[tuple[Any, Any, int]]:
    """Flink's interval join over a whole script, computed pair by pair (no operator, no buffers).

    ``script`` holds ``("L" | "R", key, value, timestamp)`` elements and ``("W", watermark)``
    steps in arrival order; bounds are inclusive (apply exclusiveness before calling). A pair
    of one key with ``lower <= t_right - t_left <= upper`` is emitted iff neither element was
    late (below the watermark it arrived at) and the first to arrive was still buffered when
    the second came: its cleanup timer (at ``t + upper`` for a left element, ``t - lower`` for
    a right one, never before ``t``) fires at the first watermark *advance* after its arrival
    that reaches it, so it was buffered if the second's arrival watermark lay below that time
    or had not moved since the first arrived.
    With ``cleanup=False`` the buffering condition is left out: every pair of on-time elements.
    Returns ``(left value, right value, max timestamp)`` sorted.
    """
    wm = None
    arrived = []  # (order, side, key, value, t, watermark at arrival)
    for i, step in enumerate(script):
        if step[0] == "W":
            wm = step[1] if wm is None else max(wm, step[1])
            continue
        side, key, value, t = step
        arrived.append((i, side, key, value, t, wm))
    on_time = [a for a in arrived if a[5] is None or a[4] >= a[5]]

    def cleanup_time(side: str, t: int) -> int:
        reach = upper if side == "L" else -lower
        return t + reach if reach > 0 else t

    out = []
    for li, ls, lk, lv, lt, lw in on_time:
        if ls != "L":
            continue
        for ri, rs, rk, rv, rt, rw in on_time:
            if rs != "R" or rk != lk or not lower <= rt - lt <= upper:
                continue
            (fs, ft, first_wm), second_wm = ((ls, lt, lw), rw) if li < ri else ((rs, rt, rw), lw)
            if not cleanup or second_wm is None or second_wm < cleanup_time(fs, ft) or second_wm == first_wm:
                out.append((lv, rv, max(lt, rt)))
    return sorted(out)
