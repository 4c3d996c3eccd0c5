"""Connected streams (PyFlink's names): ``a.connect(b)`` and the broadcast state pattern.

Two streams of possibly different types, one operator over both::

    alerts = (
        transactions.connect(limits)
        .key_by("card", "card")
        .process(CardLimits(), output_schema="card string, amount double")  # a KeyedCoProcessFunction
    )

    rules_state = fk.state.MapStateDescriptor("rules", key_type=str, value_type=dict)
    alerts = (
        transactions.key_by("card")
        .connect(rules.broadcast(rules_state))
        .process(Fraud(), output_schema=...)  # a KeyedBroadcastProcessFunction
    )

``map`` / ``flat_map`` with a ``CoMapFunction`` / ``CoFlatMapFunction`` keep no state, so
they run as each input's own map followed by a union (Spark's ``mapInArrow``, no state
store); ``process`` runs funke's two-input operator on the general path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from funke.errors import PlanError
from funke.plan.connect import BroadcastProcess, CoProcess
from funke.plan.types import Schema
from funke.semantics.broadcast import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from funke.semantics.co_process import CoFlatMapFunction, CoMapFunction, CoProcessFunction, KeyedCoProcessFunction
from funke.semantics.state import MapStateDescriptor

if TYPE_CHECKING:
    from funke.api.streams import DataStream


def _output(output_schema: str | Schema | None, what: str) -> Schema:
    out = Schema.of(output_schema) if output_schema is not None else None
    if out is None:
        raise PlanError(f"{what} needs output_schema=... naming the columns the function yields")
    return out


class ConnectedStreams:
    """``a.connect(b)``: ``map``, ``flat_map``, ``process``; ``key_by(key_a, key_b)`` for keyed state and timers."""

    def __init__(self, first: DataStream, second: DataStream) -> None:
        self._first, self._second = first, second

    @property
    def _keyed(self) -> bool:
        return self._first.node.keys is not None and self._second.node.keys is not None

    def key_by(self, key1: str | list[str], key2: str | list[str]) -> ConnectedStreams:
        """Both inputs keyed, their keys pairing up column by column (same types, or both integral)."""
        return ConnectedStreams(self._first.key_by(key1), self._second.key_by(key2))

    def map(self, function: CoMapFunction, *, output_schema: str | Schema | None = None, name: str | None = None) -> DataStream:
        """``function.map1(row)`` per first-input row, ``map2(row)`` per second-input row; one stream out."""
        if not isinstance(function, CoMapFunction):
            raise PlanError(f"map() on connected streams takes a CoMapFunction subclass, got {function!r}")
        return self._per_input(function.map1, function.map2, "map", output_schema, name)

    def flat_map(
        self, function: CoFlatMapFunction, *, output_schema: str | Schema | None = None, name: str | None = None
    ) -> DataStream:
        """``function.flat_map1(row)`` / ``flat_map2(row)`` yield zero or more rows each."""
        if not isinstance(function, CoFlatMapFunction):
            raise PlanError(f"flat_map() on connected streams takes a CoFlatMapFunction subclass, got {function!r}")
        return self._per_input(function.flat_map1, function.flat_map2, "flat_map", output_schema, name)

    def _per_input(self, fn1: Any, fn2: Any, mode: str, output_schema: str | Schema | None, name: str | None) -> DataStream:
        if output_schema is None:
            if self._first.schema != self._second.schema:
                raise PlanError(
                    f"{mode}() on connected streams of different columns needs output_schema=... (one schema for both)"
                )
            output_schema = self._first.schema
        where = name or f"co_{mode}"
        one = getattr(self._first, mode)(fn1, output_schema=output_schema, name=f"{where} (1)")
        two = getattr(self._second, mode)(fn2, output_schema=output_schema, name=f"{where} (2)")
        return one.union(two)

    def process(
        self,
        function: KeyedCoProcessFunction | CoProcessFunction,
        *,
        output_schema: str | Schema,
        name: str | None = None,
        uid: str | None = None,
    ) -> DataStream:
        """``process_element1`` / ``process_element2`` per row of each input, yielding rows of ``output_schema``.

        Keyed (after ``key_by``): a ``KeyedCoProcessFunction`` with keyed state shared by both
        inputs, event- and processing-time timers and ``on_timer``. Unkeyed: a ``CoProcessFunction``.
        Side outputs: ``ctx.output(tag, row)``, then ``stream.get_side_output(tag)``.
        """
        from funke.api.streams import DataStream  # (circular at module level: it imports this module)

        wanted = KeyedCoProcessFunction if self._keyed else CoProcessFunction
        if not isinstance(function, wanted):
            hint = (
                " (call key_by(key1, key2) first for a KeyedCoProcessFunction)"
                if isinstance(function, KeyedCoProcessFunction)
                else ""
            )
            raise PlanError(
                f"process() on {'keyed ' if self._keyed else ''}connected streams takes a {wanted.__name__} subclass, got {function!r}{hint}"
            )
        node = CoProcess(
            (self._first.node, self._second.node),
            function=function,
            output=_output(output_schema, "process()"),
            keyed=self._keyed,
            explicit_name=name,
            explicit_uid=uid,
        )
        return DataStream(self._first._env, node)


class BroadcastStream:
    """``rules.broadcast(MapStateDescriptor(...), ...)``: connect it to a stream to read its rows as broadcast state."""

    def __init__(self, stream: DataStream, descriptors: tuple[MapStateDescriptor, ...]) -> None:
        if not descriptors:
            raise PlanError(
                "broadcast() needs the broadcast state's MapStateDescriptor(s), e.g. broadcast(MapStateDescriptor('rules', str, dict))"
            )
        for d in descriptors:
            if not isinstance(d, MapStateDescriptor):
                raise PlanError(f"broadcast state is map state: broadcast() takes MapStateDescriptors, got {d!r}")
        names = [d.name for d in descriptors]
        if len(set(names)) != len(names):
            raise PlanError(f"broadcast(): two descriptors share a name ({', '.join(names)})")
        self._stream, self.descriptors = stream, descriptors

    @property
    def stream(self) -> DataStream:
        return self._stream


class BroadcastConnectedStream:
    """``stream.connect(broadcast_stream)``: ``process(KeyedBroadcastProcessFunction | BroadcastProcessFunction)``."""

    def __init__(self, first: DataStream, broadcast: BroadcastStream) -> None:
        if first._env is not broadcast.stream._env:
            raise PlanError("connect(): both streams must come from the same StreamEnvironment")
        self._first, self._broadcast = first, broadcast

    def process(
        self,
        function: KeyedBroadcastProcessFunction | BroadcastProcessFunction,
        *,
        output_schema: str | Schema | None = None,
        name: str | None = None,
        uid: str | None = None,
    ) -> DataStream:
        """``process_element(row, ctx)`` per row (broadcast state read-only) and
        ``process_broadcast_element(row, ctx)`` per broadcast row (broadcast state writable).

        Every broadcast row reaches every bucket (Flink: every parallel instance), before the
        micro-batch's other rows: a rule applies to every element after it. A library's function
        that knows its output (``fk.ml.serve``) gives ``output_schema`` itself:
        ``function.output_schema(stream's schema, broadcast stream's schema, descriptors)``.
        """
        from funke.api.streams import DataStream  # (circular at module level: it imports this module)

        keyed = self._first.node.keys is not None
        wanted = KeyedBroadcastProcessFunction if keyed else BroadcastProcessFunction
        if not isinstance(function, wanted):
            raise PlanError(
                f"process() on a {'keyed ' if keyed else ''}stream connected to a broadcast stream takes a "
                f"{wanted.__name__} subclass, got {function!r}"
            )
        if output_schema is None and callable(getattr(function, "output_schema", None)):
            output_schema = function.output_schema(self._first.schema, self._broadcast.stream.schema, self._broadcast.descriptors)
        node = BroadcastProcess(
            (self._first.node, self._broadcast.stream.node),
            function=function,
            descriptors=self._broadcast.descriptors,
            output=_output(output_schema, "process()"),
            explicit_name=name,
            explicit_uid=uid,
        )
        return DataStream(self._first._env, node)
