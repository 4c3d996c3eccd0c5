"""An operator snapshot's keyed state and timers, column by column.

A general-path bucket pickles its operator's whole snapshot after every micro-batch and
unpickles it before the next (``funke.spark.general.run``). As rows (one dict per state
entry and per timer, ``KeyedStateBackend.export_rows``) that cost about 18 µs a key a batch;
as a few lists per state and per timer domain it costs about 7 (``funke bench general
--process-events``). These classes hold the lists and still read as the rows wherever rows
are wanted (a savepoint's tables, queryable state, tests): iterating gives exactly
``export_rows``' rows, in the same order, and they compare equal to those rows' list.

Older snapshots hold the rows themselves; ``import_rows`` takes either form.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any


class _Rows(Sequence[dict[str, Any]]):
    """Rows computed from columns when read; equal to any sequence of the same rows."""

    def _rows(self) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._rows()

    def __getitem__(self, index: Any) -> Any:
        return list(self._rows())[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, tuple, _Rows)):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class StateColumns(_Rows):
    """Keyed state entries: per state (the backend's table name), ``(kind, keys, namespaces,
    values, last_access)``, one list item per (key, namespace) entry. Namespaces are encoded
    (``encode_namespace``); values and access times are as in ``export_rows``: a value, a
    list for list state, a dict for map state.

    >>> cols = StateColumns({"n": ("value", ["a", "b"], ["void", "void"], [1, 2], [0, 0])})
    >>> len(cols), [(r["key"], r["value"]) for r in cols]
    (2, [('a', 1), ('b', 2)])
    >>> cols == [dict(state="n", kind="value", key=k, namespace="void", value=v, last_access=0) for k, v in (("a", 1), ("b", 2))]
    True
    """

    __slots__ = ("tables",)

    def __init__(self, tables: dict[str, tuple[str, list[Any], list[str], list[Any], list[Any]]]) -> None:
        self.tables = tables

    def __len__(self) -> int:
        return sum(len(columns[1]) for columns in self.tables.values())

    def _rows(self) -> Iterator[dict[str, Any]]:
        for name, (kind, keys, namespaces, values, stamps) in self.tables.items():
            for key, namespace, value, last_access in zip(keys, namespaces, values, stamps, strict=True):
                yield {"state": name, "kind": kind, "key": key, "namespace": namespace, "value": value, "last_access": last_access}

    def __reduce__(self) -> tuple[Any, ...]:
        return (StateColumns, (self.tables,))


class TimerColumns(_Rows):
    """Pending timers: per domain (``"event_time"``, ``"processing_time"``), ``(timestamps,
    sequence numbers, keys, namespaces)``, in no particular order; the sequence numbers order
    timers of one timestamp as they were registered. Read as rows, they come in firing order,
    event-time ones first, as ``InternalTimerService.export_rows`` gives them.

    >>> cols = TimerColumns({"event_time": ([20, 10], [1, 2], ["a", "b"], ["void", "void"]), "processing_time": ([], [], [], [])})
    >>> [(r["key"], r["timestamp"]) for r in cols]
    [('b', 10), ('a', 20)]
    """

    __slots__ = ("queues",)

    def __init__(self, queues: dict[str, tuple[list[int], list[int], list[Any], list[str]]]) -> None:
        self.queues = queues

    def __len__(self) -> int:
        return sum(len(columns[0]) for columns in self.queues.values())

    def _rows(self) -> Iterator[dict[str, Any]]:
        for domain, (stamps, sequence, keys, namespaces) in self.queues.items():
            for timestamp, _, key, namespace in sorted(zip(stamps, sequence, keys, namespaces, strict=True), key=itemgetter(0, 1)):
                yield {"domain": domain, "key": key, "namespace": namespace, "timestamp": timestamp}

    def __reduce__(self) -> tuple[Any, ...]:
        return (TimerColumns, (self.queues,))


class NamespaceCodes:
    """``encode_namespace`` or ``decode_namespace`` once per distinct namespace (an export or
    import meets the same few many times: the void namespace, a handful of windows)."""

    __slots__ = ("_convert", "_known")

    def __init__(self, convert: Any) -> None:
        self._convert = convert
        self._known: dict[Any, Any] = {}

    def __call__(self, namespace: Any) -> Any:
        known = self._known.get(namespace, self)
        if known is self:
            known = self._known[namespace] = self._convert(namespace)
        return known
