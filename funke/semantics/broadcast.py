"""Flink's broadcast state pattern: a stream of rules kept as map state by every operator instance.

``stream.connect(rules.broadcast(descriptor))``: every rules row reaches every instance, whose
``process_broadcast_element`` writes the broadcast state; ``process_element`` reads it only
(Flink's ``ReadOnlyContext``: an instance must not let its copy drift from the others')::

    RULES = MapStateDescriptor("rules", str, float)
    op = KeyedBroadcastProcessOperator(OverLimit(), (RULES,))
    op.process_broadcast_element({"limit": 10.0}, 0)       # writes the broadcast state
    op.process_element("card-1", {"amount": 15.0}, 1_000)  # reads it: alert

In the keyed form (:class:`KeyedBroadcastProcessFunction`) ``process_element`` also has keyed
state and timers, and ``process_broadcast_element`` may visit every key's state with
``ctx.apply_to_keyed_state(descriptor, fn)`` (Flink's ``KeyedStateFunction``).

Each operator has ``process_element1`` (the non-broadcast input) and ``process_element2``
(the broadcast one), so every two-input operator is driven alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import Any

from funke.semantics.clock import Clock
from funke.semantics.co_process import UnkeyedContext, UnkeyedOperator
from funke.semantics.functions import KeyedStateStore, OutputRecord, emitted
from funke.semantics.keyed_process import KeyedElementContext, KeyedProcessOperator, KeyedTimerContext
from funke.semantics.rich import Function
from funke.semantics.state import MapStateDescriptor, StateDescriptor
from funke.semantics.timers import Timer

__all__ = [
    "BroadcastProcessFunction",
    "BroadcastProcessOperator",
    "BroadcastState",
    "KeyedBroadcastProcessFunction",
    "KeyedBroadcastProcessOperator",
]


class BroadcastProcessFunction(Function):
    """Flink's ``BroadcastProcessFunction`` (unkeyed input): ``process_element(value, ctx)`` reads the
    broadcast state, ``process_broadcast_element(value, ctx)`` writes it; both yield rows."""

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_broadcast_element(value, ctx) is not implemented")

    def close(self) -> None:
        return None


class KeyedBroadcastProcessFunction(Function):
    """Flink's ``KeyedBroadcastProcessFunction``: a keyed input with keyed state and timers, and a broadcast input.

    ``open(ctx)`` gives keyed state handles; ``process_element(value, ctx)`` reads the broadcast
    state (``ctx.get_broadcast_state(descriptor)``), keyed state, ``ctx.timer_service()``;
    ``process_broadcast_element(value, ctx)`` writes the broadcast state and may call
    ``ctx.apply_to_keyed_state(descriptor, fn)``; ``on_timer(timestamp, ctx)`` fires timers.
    """

    def open(self, ctx: KeyedStateStore) -> None:
        return None

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_broadcast_element(value, ctx) is not implemented")

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        return None

    def close(self) -> None:
        return None


class BroadcastState:
    """One broadcast map state: ``get``, ``contains``, ``keys``, ``values``, ``items``, iteration, ``len``;
    ``put``, ``put_all``, ``remove``, ``clear`` where it is writable (``process_broadcast_element``)."""

    def __init__(self, name: str, entries: dict[Any, Any], *, writable: bool) -> None:
        self._name, self._entries, self._writable = name, entries, writable

    def get(self, key: Any) -> Any:
        return self._entries.get(key)

    def contains(self, key: Any) -> bool:
        return key in self._entries

    def keys(self) -> list[Any]:
        return list(self._entries)

    def values(self) -> list[Any]:
        return list(self._entries.values())

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._entries.items())

    def is_empty(self) -> bool:
        return not self._entries

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def _check_writable(self) -> None:
        if not self._writable:
            raise TypeError(
                f"broadcast state {self._name!r} is read-only in process_element and on_timer; change it in "
                "process_broadcast_element (every instance must keep the same copy)"
            )

    def put(self, key: Any, value: Any) -> None:
        self._check_writable()
        self._entries[key] = value

    def put_all(self, mapping: Mapping[Any, Any]) -> None:
        self._check_writable()
        self._entries.update(mapping)

    def remove(self, key: Any) -> None:
        self._check_writable()
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._check_writable()
        self._entries.clear()


class _BroadcastStates:
    """The operator's broadcast states, one per declared descriptor."""

    def __init__(self, descriptors: Iterable[MapStateDescriptor]) -> None:
        self.descriptors = tuple(descriptors)
        for d in self.descriptors:
            if not isinstance(d, MapStateDescriptor):
                raise TypeError(f"broadcast state is map state: give MapStateDescriptors, got {d!r}")
        self.entries: dict[str, dict[Any, Any]] = {d.name: {} for d in self.descriptors}

    def get(self, descriptor: StateDescriptor, *, writable: bool) -> BroadcastState:
        name = getattr(descriptor, "name", None)
        if not isinstance(descriptor, MapStateDescriptor) or name not in self.entries:
            declared = ", ".join(repr(d.name) for d in self.descriptors)
            raise ValueError(
                f"no broadcast state {name!r}: the broadcast stream declares {declared} "
                "(rules.broadcast(MapStateDescriptor(...)) names each)"
            )
        return BroadcastState(name, self.entries[name], writable=writable)

    def snapshot(self) -> dict[str, dict[Any, Any]]:
        return {name: dict(entries) for name, entries in self.entries.items()}

    def restore(self, snapshot: Mapping[str, Mapping[Any, Any]]) -> None:
        for name, entries in snapshot.items():
            self.entries[name] = dict(entries)


class _Context(UnkeyedContext):
    """``ctx`` of a broadcast function: time, side outputs and the broadcast state (writable or not)."""

    def __init__(self, op: Any, timestamp: int | None, *, writable: bool) -> None:
        super().__init__(op, timestamp)
        self._writable = writable

    def get_broadcast_state(self, descriptor: MapStateDescriptor) -> BroadcastState:
        return self._op._broadcast.get(descriptor, writable=self._writable)


class _KeyedBroadcastContext(_Context):
    """``ctx`` of ``process_broadcast_element`` in the keyed form: also ``apply_to_keyed_state``."""

    def timer_service(self) -> Any:
        raise TypeError(
            "a broadcast row has no key: set timers in process_element or on_timer (Flink's broadcast side has no timer service)"
        )

    def apply_to_keyed_state(self, descriptor: StateDescriptor, function: Callable[[Any, Any], None]) -> None:
        """``function(key, state)`` for every key holding ``descriptor``'s state in this instance."""
        backend = self._op.state_backend
        for key in backend.keys("user:" + descriptor.name):
            backend.current_key = key
            function(key, backend.get_state(descriptor, scope="user:"))


class _ReadOnlyBroadcast:
    """Read access to the broadcast state, mixed into the keyed contexts of elements and timers."""

    _op: Any

    def get_broadcast_state(self, descriptor: MapStateDescriptor) -> BroadcastState:
        return self._op._broadcast.get(descriptor, writable=False)

    def current_watermark(self) -> int:
        return self._op.current_watermark

    def current_processing_time(self) -> int:
        return self._op._clock.now_ms()


class _ElementContext(_ReadOnlyBroadcast, KeyedElementContext):
    pass


class _TimerContext(_ReadOnlyBroadcast, KeyedTimerContext):
    pass


class _BroadcastInputs:
    """What both broadcast operators share: two inputs (the second is the broadcast stream) and
    the broadcast state in their snapshot. Comes before the operator base class (``super()``)."""

    _broadcast: _BroadcastStates

    def process_element1(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        return self.process_element(key, value, timestamp)  # type: ignore[attr-defined]

    def process_element2(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        return self.process_broadcast_element(value, timestamp)  # type: ignore[attr-defined]

    def snapshot(self) -> dict[str, Any]:
        return {**super().snapshot(), "broadcast": self._broadcast.snapshot()}  # type: ignore[misc]

    def restore(self, snapshot: dict[str, Any]) -> None:
        super().restore(snapshot)  # type: ignore[misc]
        self._broadcast.restore(snapshot.get("broadcast", {}))


class KeyedBroadcastProcessOperator(_BroadcastInputs, KeyedProcessOperator):
    """Drives a :class:`KeyedBroadcastProcessFunction`: the keyed process operator plus broadcast state."""

    function_type = KeyedBroadcastProcessFunction

    def __init__(
        self, function: KeyedBroadcastProcessFunction, descriptors: Iterable[MapStateDescriptor], *, clock: Clock | None = None
    ) -> None:
        super().__init__(function, clock=clock)
        self._broadcast = _BroadcastStates(descriptors)

    def process_broadcast_element(self, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        """Feed one broadcast row; returns what it emitted (this instance's outputs, as in Flink)."""
        return self._emitting(partial(self._process_broadcast, value, timestamp))

    def _element_context(self, key: Any, timestamp: int | None) -> KeyedElementContext:
        return _ElementContext(self, key, timestamp, timestamp)

    def _timer_context(self, timer: Timer) -> KeyedTimerContext:
        return _TimerContext(self, timer)

    def _process_broadcast(self, value: Any, timestamp: int | None) -> None:
        self.open()
        rows = self.function.process_broadcast_element(value, _KeyedBroadcastContext(self, timestamp, writable=True))
        self._out.extend(emitted(rows, f"{type(self.function).__name__}.process_broadcast_element", timestamp, timestamp))


class BroadcastProcessOperator(_BroadcastInputs, UnkeyedOperator):
    """Drives a :class:`BroadcastProcessFunction` (unkeyed): broadcast state and the watermark, no keyed state."""

    def __init__(
        self, function: BroadcastProcessFunction, descriptors: Iterable[MapStateDescriptor], *, clock: Clock | None = None
    ) -> None:
        if not isinstance(function, BroadcastProcessFunction):
            raise TypeError(f"BroadcastProcessOperator runs a BroadcastProcessFunction subclass, got {function!r}")
        super().__init__(function, clock=clock)
        self._broadcast = _BroadcastStates(descriptors)

    def process_element(self, key: Any, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        """Feed one element (``key`` is ignored: the input is not keyed)."""
        return self._emitting(partial(self._process, "process_element", value, timestamp, False))

    def process_elements(self, elements: list[tuple[Any, Any, int | None]]) -> list[OutputRecord]:
        """Feed ``(key, value, timestamp)`` elements in order, with no broadcast row between them.

        A function with ``process_elements(values, ctx)`` gets them in one call (a library's
        vectorized function, ``fk.ml.serve``): it returns, for each value in order, that value's
        rows, each stamped with its element's timestamp. ``process_element`` only reads the
        broadcast state, so one call over the elements is the same as one call each. Otherwise
        each element goes to ``process_element``.
        """
        batch = getattr(self.function, "process_elements", None)
        if batch is None or not elements:
            return [r for key, value, ts in elements for r in self.process_element(key, value, ts)]

        def run() -> None:
            self.open()
            name = f"{type(self.function).__name__}.process_elements"
            per_element = list(batch([value for _, value, _ in elements], _Context(self, None, writable=False)))
            if len(per_element) != len(elements):
                raise TypeError(f"{name} gave rows for {len(per_element)} elements, not the {len(elements)} it was given")
            for (_, _, ts), rows in zip(elements, per_element, strict=True):
                self._emit(rows, "process_elements", ts)

        return self._emitting(run)

    def process_broadcast_element(self, value: Any, timestamp: int | None = None) -> list[OutputRecord]:
        return self._emitting(partial(self._process, "process_broadcast_element", value, timestamp, True))

    def _process(self, method: str, value: Any, timestamp: int | None, writable: bool) -> None:
        self.open()
        self._emit(getattr(self.function, method)(value, _Context(self, timestamp, writable=writable)), method, timestamp)
