"""Keyed state as Flink defines it: descriptors, TTL, and an in-memory backend.

State lives in a :class:`KeyedStateBackend` addressed by ``(state name, key,
namespace)``. The namespace is ``VOID_NAMESPACE`` for a keyed process function's
state and the window for window contents and per-window trigger state, exactly as in
Flink's heap backend. The backend exports to and imports from plain rows (a list of
dicts), so a savepoint can show it as a table, or the same rows column by column
(``funke.semantics.snapshot_columns``), which an operator's snapshot keeps: the Spark
adapter persists every key's state in one bulk write after each micro-batch.

TTL is Flink's only kind: processing-time TTL read from the backend's clock. An entry
is expired once ``last_access + ttl <= now``; expired entries are never returned with
``NeverReturnExpired`` and are removed on the read that finds them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from funke.semantics.clock import Clock, ManualClock
from funke.semantics.snapshot_columns import NamespaceCodes, StateColumns
from funke.semantics.ttl import StateTtlConfig, TtlStateVisibility, TtlUpdateType

if TYPE_CHECKING:
    from funke.semantics.functions import AggregateFunction


class _VoidNamespace:
    """Flink's ``VoidNamespace``: the one namespace of state that is per key only."""

    _instance: ClassVar[_VoidNamespace | None] = None

    def __new__(cls) -> _VoidNamespace:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "VOID_NAMESPACE"


VOID_NAMESPACE = _VoidNamespace()


def encode_namespace(namespace: Any) -> str:
    """A namespace as a plain string, so exported rows hold no funke objects."""
    from funke.semantics.windows import GlobalWindow, TimeWindow  # windows -> triggers -> state

    if namespace is VOID_NAMESPACE:
        return "void"
    if isinstance(namespace, GlobalWindow):
        return "global"
    if isinstance(namespace, TimeWindow):
        return f"window:{namespace.start}:{namespace.end}"
    raise TypeError(f"cannot export state namespace {namespace!r}: only void, windows and the global window are known")


def decode_namespace(text: str) -> Any:
    """The inverse of :func:`encode_namespace`."""
    from funke.semantics.windows import GlobalWindow, TimeWindow

    if text == "void":
        return VOID_NAMESPACE
    if text == "global":
        return GlobalWindow()
    kind, _, bounds = text.partition(":")
    start, _, end = bounds.partition(":")
    if kind != "window" or not start or not end:
        raise ValueError(f"not an exported state namespace: {text!r} (expected 'void', 'global' or 'window:START:END')")
    return TimeWindow(int(start), int(end))


# --------------------------------------------------------------------------- descriptors


@dataclass(eq=False)
class StateDescriptor:
    """Names a piece of keyed state and says what kind it is.

    Not frozen on purpose: PyFlink code calls ``descriptor.enable_time_to_live(cfg)``
    and then passes the same descriptor on; a frozen copy would silently lose the TTL.
    """

    name: str
    ttl_config: StateTtlConfig | None = field(default=None, kw_only=True)
    kind: ClassVar[str] = "state"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"a state descriptor needs a non-empty name, got {self.name!r}")

    def get_name(self) -> str:
        return self.name

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> StateDescriptor:
        if not isinstance(ttl_config, StateTtlConfig):
            raise TypeError(f"enable_time_to_live() takes a StateTtlConfig, got {ttl_config!r}")
        self.ttl_config = ttl_config
        return self


@dataclass(eq=False)
class ValueStateDescriptor(StateDescriptor):
    value_type: Any = None
    kind: ClassVar[str] = "value"


@dataclass(eq=False)
class ListStateDescriptor(StateDescriptor):
    element_type: Any = None
    kind: ClassVar[str] = "list"


@dataclass(eq=False)
class MapStateDescriptor(StateDescriptor):
    key_type: Any = None
    value_type: Any = None
    kind: ClassVar[str] = "map"


@dataclass(eq=False)
class ReducingStateDescriptor(StateDescriptor):
    """``reduce_function``: a ``ReduceFunction`` or a plain ``(a, b) -> c`` callable."""

    reduce_function: Any = None
    type_info: Any = None
    kind: ClassVar[str] = "reducing"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (callable(self.reduce_function) or callable(getattr(self.reduce_function, "reduce", None))):
            raise TypeError(
                f"ReducingStateDescriptor({self.name!r}) needs a reduce function: a ReduceFunction or (a, b) -> c"
            )

    def reduce(self, a: Any, b: Any) -> Any:
        reduce_method = getattr(self.reduce_function, "reduce", None)
        return reduce_method(a, b) if callable(reduce_method) else self.reduce_function(a, b)


@dataclass(eq=False)
class AggregatingStateDescriptor(StateDescriptor):
    """``agg_function``: an ``AggregateFunction`` (create_accumulator / add / merge / get_result)."""

    agg_function: AggregateFunction | None = None
    state_type_info: Any = None
    kind: ClassVar[str] = "aggregating"

    def __post_init__(self) -> None:
        super().__post_init__()
        needed = ("create_accumulator", "add", "merge", "get_result")
        missing = [m for m in needed if not callable(getattr(self.agg_function, m, None))]
        if missing:
            raise TypeError(
                f"AggregatingStateDescriptor({self.name!r}) needs an AggregateFunction; "
                f"{self.agg_function!r} lacks {', '.join(missing)}"
            )


# --------------------------------------------------------------------------- storage and state handles


class _Stamped:
    """A stored value with the processing time it was last created/written (or read)."""

    __slots__ = ("value", "ts")

    def __init__(self, value: Any, ts: int) -> None:
        self.value = value
        self.ts = ts


@dataclass
class _Table:
    kind: str
    entries: dict[tuple[Any, Any], Any] = field(default_factory=dict)


_NO_KEY = object()


class _State:
    """Common machinery: the (current key, namespace) slot, TTL checks, clear."""

    def __init__(self, backend: KeyedStateBackend, table: _Table, descriptor: StateDescriptor, namespace: Any) -> None:
        self._backend = backend
        self._table = table
        self._descriptor = descriptor
        self._namespace = namespace
        ttl = descriptor.ttl_config
        self._ttl = ttl if ttl is not None and ttl.is_enabled else None

    @property
    def name(self) -> str:
        return self._descriptor.name

    def set_current_namespace(self, namespace: Any) -> None:
        self._namespace = namespace

    def _slot(self, namespace: Any = None) -> tuple[Any, Any]:
        key = self._backend._current_key  # (the attribute, not the checking property: this runs per state access)
        if key is _NO_KEY:
            key = self._backend.current_key  # (raises: no key is being processed)
        return (key, self._namespace if namespace is None else namespace)

    def _now(self) -> int:
        return self._backend.clock.now_ms()

    def _expired(self, stamped: _Stamped) -> bool:
        return self._ttl is not None and stamped.ts + self._ttl.ttl_ms <= self._now()

    @property
    def _return_expired(self) -> bool:
        return self._ttl is not None and self._ttl.state_visibility is TtlStateVisibility.ReturnExpiredIfNotCleanedUp

    @property
    def _refresh_on_read(self) -> bool:
        return self._ttl is not None and self._ttl.update_type is TtlUpdateType.OnReadAndWrite

    def _read(self, stamped: _Stamped | None, drop: Callable[[], None]) -> tuple[bool, Any]:
        """``(found, value)`` of one stamped entry, applying expiry and read-refresh."""
        if stamped is None:
            return False, None
        if self._expired(stamped):
            drop()
            return (True, stamped.value) if self._return_expired else (False, None)
        if self._refresh_on_read:
            stamped.ts = self._now()
        return True, stamped.value

    def clear(self) -> None:
        self._table.entries.pop(self._slot(), None)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ValueState(_State):
    """One value per key and namespace: ``value()``, ``update(v)``, ``clear()``."""

    def value(self) -> Any:
        slot = self._slot()
        if self._ttl is None:  # (the common case, without a closure per read)
            stamped = self._table.entries.get(slot)
            return None if stamped is None else stamped.value
        return self._read(self._table.entries.get(slot), lambda: self._table.entries.pop(slot, None))[1]

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()  # Flink: update(null) is clear()
            return
        self._table.entries[self._slot()] = _Stamped(value, self._now())


class _MergingState(_State):
    """States whose namespaces can be merged (window contents and trigger state of sessions)."""

    def _combine(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def _visible_raw(self, slot: tuple[Any, Any]) -> tuple[bool, Any]:
        return self._read(self._table.entries.get(slot), lambda: self._table.entries.pop(slot, None))

    def raw(self) -> tuple[bool, Any]:
        """``(present, stored)``: tells "no contents" apart from a stored ``None``.

        The stored value is the running reduction, the accumulator of aggregating
        state, or the element list of list state.
        """
        return self._visible_raw(self._slot())

    def merge_namespaces(self, target: Any, sources: Iterable[Any]) -> None:
        """Fold the sources' contents into ``target`` and remove them (Flink's ``mergeNamespaces``)."""
        merged_found, merged = False, None
        for source in sources:
            found, value = self._visible_raw(self._slot(source))
            self._table.entries.pop(self._slot(source), None)
            if found:
                merged = self._combine(merged, value) if merged_found else value
                merged_found = True
        if not merged_found:
            return
        found, current = self._visible_raw(self._slot(target))
        self._store(self._slot(target), self._combine(current, merged) if found else merged)

    def _store(self, slot: tuple[Any, Any], raw: Any) -> None:
        self._table.entries[slot] = _Stamped(raw, self._now())


class ListState(_MergingState):
    """An ordered list per key and namespace; each element has its own TTL timestamp, as in Flink."""

    def get(self) -> list[Any]:
        """The elements (a new list; empty when there are none)."""
        slot = self._slot()
        stored: list[_Stamped] | None = self._table.entries.get(slot)
        if not stored:
            return []
        now, kept, visible = self._now(), [], []
        for item in stored:
            if self._expired(item):
                if self._return_expired:
                    visible.append(item.value)
                continue
            if self._refresh_on_read:
                item.ts = now
            kept.append(item)
            visible.append(item.value)
        if kept:
            self._table.entries[slot] = kept
        else:
            self._table.entries.pop(slot, None)
        return visible

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError(f"cannot add None to list state {self.name!r} (Flink rejects null elements too)")
        self._table.entries.setdefault(self._slot(), []).append(_Stamped(value, self._now()))

    def add_all(self, values: Iterable[Any]) -> None:
        for value in values:
            self.add(value)

    def update(self, values: Iterable[Any]) -> None:
        self.clear()
        self.add_all(values)

    def _visible_raw(self, slot: tuple[Any, Any]) -> tuple[bool, Any]:
        stored = self._table.entries.get(slot)
        if not stored:
            return False, None
        return True, [item.value for item in stored if not self._expired(item) or self._return_expired]

    def _combine(self, a: Any, b: Any) -> Any:
        return [*a, *b]

    def _store(self, slot: tuple[Any, Any], raw: Any) -> None:
        now = self._now()
        self._table.entries[slot] = [_Stamped(v, now) for v in raw]


class MapState(_State):
    """A dict per key and namespace; each entry has its own TTL timestamp, as in Flink."""

    def _entries(self) -> dict[Any, _Stamped]:
        return self._table.entries.get(self._slot()) or {}

    def _stored(self, key: Any) -> _Stamped | None:
        """The stamped value of ``key`` in the current key's map, expired or not (``None``: there is none)."""
        entries = self._table.entries.get(self._slot())
        return None if entries is None else entries.get(key)

    def _visible_items(self) -> list[tuple[Any, Any]]:
        slot = self._slot()
        entries = self._entries()
        if self._ttl is None:  # nothing expires
            return [(k, stamped.value) for k, stamped in entries.items()]
        items = []
        for k in list(entries):
            found, value = self._read(entries[k], lambda k=k: entries.pop(k, None))
            if found:
                items.append((k, value))
        if slot in self._table.entries and not entries:
            del self._table.entries[slot]
        return items

    def get(self, key: Any) -> Any:
        if self._ttl is None:  # (the common case: one lookup, no closure)
            stamped = self._stored(key)
            return None if stamped is None else stamped.value
        entries = self._entries()
        found, value = self._read(entries.get(key), lambda: entries.pop(key, None))
        return value if found else None

    def put(self, key: Any, value: Any) -> None:
        self._table.entries.setdefault(self._slot(), {})[key] = _Stamped(value, self._now())

    def put_all(self, mapping: Mapping[Any, Any]) -> None:
        for k, v in mapping.items():
            self.put(k, v)

    def remove(self, key: Any) -> None:
        slot = self._slot()
        entries = self._table.entries.get(slot)
        if entries is None:
            return
        entries.pop(key, None)
        if not entries:
            del self._table.entries[slot]

    def contains(self, key: Any) -> bool:
        entries = self._entries()
        return self._read(entries.get(key), lambda: entries.pop(key, None))[0]

    def items(self) -> list[tuple[Any, Any]]:
        return self._visible_items()

    entries = items

    def keys(self) -> list[Any]:
        return [k for k, _ in self._visible_items()]

    def values(self) -> list[Any]:
        return [v for _, v in self._visible_items()]

    def is_empty(self) -> bool:
        return not self._visible_items()


class ReducingState(_MergingState):
    """A running reduction per key and namespace: ``add(v)`` folds, ``get()`` reads."""

    _descriptor: ReducingStateDescriptor

    def get(self) -> Any:
        return self._visible_raw(self._slot())[1]

    def add(self, value: Any) -> None:
        found, current = self._visible_raw(self._slot())
        self._store(self._slot(), self._descriptor.reduce(current, value) if found else value)

    def _combine(self, a: Any, b: Any) -> Any:
        return self._descriptor.reduce(a, b)


class AggregatingState(_MergingState):
    """An accumulator per key and namespace; ``get()`` is ``get_result(accumulator)``."""

    _descriptor: AggregatingStateDescriptor

    def get(self) -> Any:
        found, accumulator = self._visible_raw(self._slot())
        return self._descriptor.agg_function.get_result(accumulator) if found else None

    def add(self, value: Any) -> None:
        agg = self._descriptor.agg_function
        found, accumulator = self._visible_raw(self._slot())
        self._store(self._slot(), agg.add(value, accumulator if found else agg.create_accumulator()))

    def _combine(self, a: Any, b: Any) -> Any:
        return self._descriptor.agg_function.merge(a, b)


_STATE_CLASSES: dict[str, type[_State]] = {
    "value": ValueState,
    "list": ListState,
    "map": MapState,
    "reducing": ReducingState,
    "aggregating": AggregatingState,
}


# --------------------------------------------------------------------------- backend


class KeyedStateBackend:
    """All keyed state of one operator, in memory, with bulk export/import as rows.

    The operator sets :attr:`current_key` before calling user code; every state
    handle reads and writes the slot of the current key (Flink's keyed-state model).

    >>> from funke.semantics.clock import ManualClock
    >>> backend = KeyedStateBackend(ManualClock())
    >>> clicks = backend.get_state(ValueStateDescriptor("clicks"))
    >>> backend.current_key = "alice"; clicks.update(3)
    >>> backend.current_key = "bob"; clicks.value() is None
    True
    >>> [(r["key"], r["value"]) for r in backend.export_rows()]
    [('alice', 3)]
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock if clock is not None else ManualClock()
        self._tables: dict[str, _Table] = {}
        self._current_key: Any = _NO_KEY

    @property
    def current_key(self) -> Any:
        if self._current_key is _NO_KEY:
            raise ValueError(
                "keyed state is only accessible while a key is being processed: "
                "use state inside process_element/on_timer/process, not outside them"
            )
        return self._current_key

    @current_key.setter
    def current_key(self, key: Any) -> None:
        self._current_key = key

    def get_state(self, descriptor: StateDescriptor, namespace: Any = VOID_NAMESPACE, *, scope: str = "") -> Any:
        """A handle on ``descriptor``'s state for the current key in ``namespace``.

        ``scope`` keeps operator-internal state (window contents, trigger state) apart
        from user state of the same name.
        """
        if not isinstance(descriptor, StateDescriptor) or descriptor.kind not in _STATE_CLASSES:
            raise TypeError(
                f"get_state() takes a ValueStateDescriptor, ListStateDescriptor, MapStateDescriptor, "
                f"ReducingStateDescriptor or AggregatingStateDescriptor, got {descriptor!r}"
            )
        table_name = scope + descriptor.name
        table = self._tables.get(table_name)
        if table is None:
            table = self._tables[table_name] = _Table(descriptor.kind)
        elif table.kind != descriptor.kind:
            raise TypeError(
                f"state {descriptor.name!r} already exists as {table.kind} state and cannot be used as "
                f"{descriptor.kind} state; give the new state another name"
            )
        return _STATE_CLASSES[descriptor.kind](self, table, descriptor, namespace)

    def is_empty(self) -> bool:
        return not any(t.entries for t in self._tables.values())

    def keys(self, state_name: str) -> list[Any]:
        """Keys that hold any entry of ``state_name`` (for queryable state and tests)."""
        table = self._tables.get(state_name)
        return [] if table is None else sorted({k for k, _ in table.entries}, key=repr)

    # -- bulk export / import: one row per (state, key, namespace) ------------------

    def export_rows(self) -> list[dict[str, Any]]:
        """Every entry as a plain dict: state, kind, key, namespace, value, last_access.

        ``value``/``last_access`` are a value and an int for value, reducing and
        aggregating state (the accumulator for the latter), parallel lists for list
        state and parallel dicts for map state. Expired entries are exported as they
        are; they stay invisible after import.
        """
        return list(self.export_columns())

    def export_columns(self) -> StateColumns:
        """What :meth:`export_rows` gives, column by column (what an operator's snapshot keeps)."""
        code = NamespaceCodes(encode_namespace)
        tables = {}
        for name, table in self._tables.items():
            entries = table.entries
            stored = entries.values()
            if table.kind == "list":
                values, stamps = [[s.value for s in e] for e in stored], [[s.ts for s in e] for e in stored]
            elif table.kind == "map":
                values, stamps = [{k: s.value for k, s in e.items()} for e in stored], [{k: s.ts for k, s in e.items()} for e in stored]
            else:
                values, stamps = [s.value for s in stored], [s.ts for s in stored]
            tables[name] = (table.kind, [k for k, _ in entries], [code(n) for _, n in entries], values, stamps)
        return StateColumns(tables)

    def import_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Load rows written by :meth:`export_rows` or :meth:`export_columns` (replacing the same slots)."""
        if isinstance(rows, StateColumns):
            self._import_columns(rows)
            return
        for row in rows:
            missing = {"state", "kind", "key", "namespace", "value", "last_access"} - set(row)
            if missing:
                raise ValueError(f"state row {row!r} lacks {sorted(missing)}; rows come from export_rows()")
            kind = row["kind"]
            if kind not in _STATE_CLASSES:
                raise ValueError(f"state row for {row['state']!r} has unknown kind {kind!r}")
            table = self._tables.setdefault(row["state"], _Table(kind))
            if table.kind != kind:
                raise ValueError(f"state {row['state']!r} is {table.kind} state here but the row says {kind}")
            value, last_access = row["value"], row["last_access"]
            if kind == "list":
                stored: Any = [_Stamped(v, ts) for v, ts in zip(value, last_access, strict=True)]
            elif kind == "map":
                stored = {k: _Stamped(v, last_access[k]) for k, v in value.items()}
            else:
                stored = _Stamped(value, last_access)
            table.entries[(row["key"], decode_namespace(row["namespace"]))] = stored

    def _import_columns(self, columns: StateColumns) -> None:
        namespace = NamespaceCodes(decode_namespace)
        for name, (kind, keys, namespaces, values, stamps) in columns.tables.items():
            table = self._tables.setdefault(name, _Table(kind))
            if table.kind != kind:
                raise ValueError(f"state {name!r} is {table.kind} state here but the snapshot says {kind}")
            slots = zip(keys, map(namespace, namespaces), strict=True)
            if kind == "list":
                entries: Any = ([_Stamped(v, t) for v, t in zip(vs, ts, strict=True)] for vs, ts in zip(values, stamps, strict=True))
            elif kind == "map":
                entries = ({k: _Stamped(v, ts[k]) for k, v in vs.items()} for vs, ts in zip(values, stamps, strict=True))
            elif kind in _STATE_CLASSES:
                entries = map(_Stamped, values, stamps)
            else:
                raise ValueError(f"state {name!r} has unknown kind {kind!r}")
            table.entries.update(zip(slots, entries, strict=True))


class StateStore:
    """The state accessors functions see (PyFlink's ``RuntimeContext``), bound to one namespace.

    ``get_state`` accepts any descriptor and returns the matching state; the typed
    accessors (``get_list_state`` ...) also check the descriptor's kind.
    """

    def __init__(self, backend: KeyedStateBackend, namespace: Any = VOID_NAMESPACE, scope: str = "user:") -> None:
        self._backend = backend
        self._namespace = namespace
        self._scope = scope

    def get_state(self, descriptor: StateDescriptor) -> Any:
        return self._backend.get_state(descriptor, self._namespace, scope=self._scope)

    def _typed(self, descriptor: StateDescriptor, kind: str, accessor: str) -> Any:
        if getattr(descriptor, "kind", None) != kind:
            raise TypeError(f"{accessor}() takes a {kind} state descriptor, got {descriptor!r}")
        return self.get_state(descriptor)

    def get_list_state(self, descriptor: StateDescriptor) -> ListState:
        return self._typed(descriptor, "list", "get_list_state")

    def get_map_state(self, descriptor: StateDescriptor) -> MapState:
        return self._typed(descriptor, "map", "get_map_state")

    def get_reducing_state(self, descriptor: StateDescriptor) -> ReducingState:
        return self._typed(descriptor, "reducing", "get_reducing_state")

    def get_aggregating_state(self, descriptor: StateDescriptor) -> AggregatingState:
        return self._typed(descriptor, "aggregating", "get_aggregating_state")
