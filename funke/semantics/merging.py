"""Flink's ``MergingWindowSet``: which session windows are in flight and where their state lives.

When sessions merge, their contents are folded into the state of *one* of the merged
windows (the "state window") rather than moved to a namespace named after the new,
larger window; the set maps each in-flight window to its state window. This keeps a
merge to a single state fold however often a session grows, and it is why a late
element that bridges two sessions makes both of their contents fire together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from funke.semantics.windows import TimeWindow

MergeFunction = Callable[[TimeWindow, list[TimeWindow], TimeWindow, list[TimeWindow]], None]
MergeWindows = Callable[[list[TimeWindow]], list[tuple[TimeWindow, list[TimeWindow]]]]


class MergingWindowSet:
    """In-flight windows of one key, each mapped to the window whose namespace holds its state.

    >>> from funke.semantics.windows import merge_time_windows
    >>> windows = MergingWindowSet(merge_time_windows)
    >>> windows.add_window(TimeWindow(0, 10), lambda *a: None)
    TimeWindow(start=0, end=10)
    >>> windows.add_window(TimeWindow(5, 15), lambda *a: None)
    TimeWindow(start=0, end=15)
    >>> windows.get_state_window(TimeWindow(0, 15))
    TimeWindow(start=0, end=10)
    """

    def __init__(self, merge_windows: MergeWindows, mapping: dict[TimeWindow, TimeWindow] | None = None) -> None:
        self._merge_windows = merge_windows
        self._mapping: dict[TimeWindow, TimeWindow] = dict(mapping or {})

    @property
    def mapping(self) -> dict[TimeWindow, TimeWindow]:
        return dict(self._mapping)

    def get_state_window(self, window: TimeWindow) -> TimeWindow | None:
        return self._mapping.get(window)

    def retire_window(self, window: TimeWindow) -> None:
        """Forget a window whose state is gone (cleanup, or a late window dropped on arrival)."""
        if self._mapping.pop(window, None) is None:
            raise ValueError(f"window {window} is not in flight, so it cannot be retired")

    def add_window(self, new_window: TimeWindow, merge_function: MergeFunction) -> TimeWindow:
        """Add ``new_window``, merging it with any in-flight window it intersects.

        Returns the window the element now belongs to (the merged one, or
        ``new_window``). ``merge_function(merge_result, merged_windows,
        state_window_result, merged_state_windows)`` is called before returning so
        the caller can merge trigger state, timers and window contents; it is not
        called when ``new_window`` merely falls inside an existing window.
        """
        groups = self._merge_windows([*self._mapping, new_window])
        result_window = new_window
        merged_new_window = False
        for merge_result, members in groups:
            merged_windows = list(members)
            if new_window in merged_windows:
                merged_windows.remove(new_window)
                merged_new_window = True
                result_window = merge_result
            if not merged_windows:
                continue
            # The first merged window's state window becomes the state window of the result.
            target_state_window = self._mapping[merged_windows[0]]
            merged_state_windows = [self._mapping.pop(w) for w in merged_windows if w in self._mapping]
            self._mapping[merge_result] = target_state_window
            merged_state_windows.remove(target_state_window)
            if not (len(merged_windows) == 1 and merged_windows[0] == merge_result):
                merge_function(merge_result, merged_windows, target_state_window, merged_state_windows)
        if not groups or (result_window == new_window and not merged_new_window):
            self._mapping[result_window] = result_window
        return result_window

    # -- persistence: plain rows [start, end, state_start, state_end] --------------

    def to_plain(self) -> list[list[int]]:
        return [[w.start, w.end, s.start, s.end] for w, s in sorted(self._mapping.items())]

    @classmethod
    def from_plain(cls, merge_windows: MergeWindows, rows: Iterable[Iterable[Any]] | None) -> MergingWindowSet:
        mapping = {}
        for start, end, state_start, state_end in rows or ():
            mapping[TimeWindow(start, end)] = TimeWindow(state_start, state_end)
        return cls(merge_windows, mapping)

    def __len__(self) -> int:
        return len(self._mapping)
