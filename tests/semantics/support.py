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
