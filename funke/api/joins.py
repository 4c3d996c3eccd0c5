"""Builders of two-input joins (PyFlink's names): ``interval_join`` and window ``join`` / ``co_group``.

Interval join, Flink's ``IntervalJoin``: pairs of one key whose right time lies within
``[left time + lower, left time + upper]``::

    bids_in_auction = (
        auctions.key_by("auction").interval_join(bids.key_by("auction"))
                .between(fk.seconds(0), fk.minutes(10))
                .select("left.auction", "left.seller", "right.bidder", price="right.amount")
    )

Both ``.select`` (columns of the pair) and ``.process(ProcessJoinFunction, output_schema=...)``
run Flink's interval join operator on funke's two-input general path, which gives Flink's pairs
exactly. ``.on_path("native").select(...)`` runs Spark's own stream-stream join instead (JVM
only, faster), whose pairs are Flink's but for one edge: an element arriving exactly at the
watermark still meets a partner at the far edge of its interval, which Flink's cleanup timer has
just removed (Flink loses that pair, Spark emits it).

Window join and co-group, Flink's ``JoinedStreams`` / ``CoGroupedStreams``::

    a.join(b).where("k").equal_to("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).apply(MyJoin(), output_schema=...)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from funke.errors import PlanError
from funke.plan import joins
from funke.plan.types import Schema
from funke.semantics.joins import CoGroupFunction, JoinFunction, ProcessJoinFunction
from funke.semantics.time import Duration, to_millis
from funke.semantics.windows import WindowAssigner

if TYPE_CHECKING:
    from funke.api.streams import DataStream, KeyedStream


def _same_env(a: DataStream, b: Any, what: str) -> None:
    from funke.api.streams import DataStream  # (circular at module level: it imports this module)

    if not isinstance(b, DataStream):
        raise PlanError(f"{what} takes another stream, got {type(b).__name__}")
    if a._env is not b._env:
        raise PlanError(f"{what}: both streams must come from the same StreamEnvironment")


class IntervalJoin:
    """``keyed.interval_join(other_keyed)``: say the interval with ``between(lower, upper)``."""

    def __init__(self, left: KeyedStream, right: KeyedStream) -> None:
        from funke.api.streams import KeyedStream  # (circular at module level: it imports this module)

        _same_env(left, right, "interval_join()")
        if not isinstance(right, KeyedStream):
            raise PlanError("interval_join() joins two keyed streams: call key_by(...) on the other stream too")
        self._left, self._right = left, right

    def between(self, lower: Duration, upper: Duration) -> IntervalJoined:
        """Right elements with time in ``[left time + lower, left time + upper]`` (both inclusive)."""
        lo, hi = to_millis(lower, what="lower bound"), to_millis(upper, what="upper bound")
        if lo > hi:
            raise PlanError(f"between(lower, upper) needs lower <= upper, got {lo} ms and {hi} ms")
        return IntervalJoined(self._left, self._right, lo, hi)


class IntervalJoined:
    """An interval join with its bounds: finish it with ``select(...)`` or ``process(...)``."""

    def __init__(self, left: KeyedStream, right: KeyedStream, lower_ms: int, upper_ms: int) -> None:
        self._left, self._right = left, right
        self._lower, self._upper = lower_ms, upper_ms
        self._lower_inclusive = self._upper_inclusive = True
        self._path: str | None = None

    def on_path(self, path: str) -> IntervalJoined:
        """``"native"``: Spark's own stream-stream join, where it can run (``.select``, watermarks on
        both sides, no test script, no idle inputs): faster, and Flink's pairs but for one edge
        (``explain()`` and the README's "Joins" say which). ``"auto"`` (the default): Flink's pairs
        exactly, on funke's two-input operator.

        >>> import funke as fk
        >>> env = fk.StreamEnvironment(app="doc")
        >>> wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("t")
        >>> a = env.from_collection([], "k string, t timestamp", watermarks=wm)
        >>> b = env.from_collection([], "k string, t timestamp", watermarks=wm)
        >>> pairs = (a.key_by("k").interval_join(b.key_by("k")).between(fk.seconds(-1), fk.seconds(1))
        ...           .on_path("native").select("left.k", lt="left.t", rt="right.t"))
        >>> from funke.plan.capabilities import place
        >>> place(pairs.node).path
        'native'
        """
        if path not in ("auto", "native"):
            raise PlanError(f"interval_join().on_path() takes 'auto' or 'native', got {path!r}")
        self._path = None if path == "auto" else path
        return self

    def lower_bound_exclusive(self) -> IntervalJoined:
        self._lower_inclusive = False
        return self

    def upper_bound_exclusive(self) -> IntervalJoined:
        self._upper_inclusive = False
        return self

    def _node(self, **kw: Any) -> joins.IntervalJoin:
        return joins.IntervalJoin(
            (self._left.node, self._right.node),
            lower_ms=self._lower,
            upper_ms=self._upper,
            lower_inclusive=self._lower_inclusive,
            upper_inclusive=self._upper_inclusive,
            path_hint=self._path,
            **kw,
        )

    def select(self, *columns: str, name: str | None = None, uid: str | None = None, **renamed: str) -> DataStream:
        """The pair's columns: ``"left.x"``, ``"right.y"``, a name only one side has, or ``alias="right.y"``.

        Flink's pairs exactly, on funke's two-input operator; after ``on_path("native")`` on Spark's
        own stream-stream join (``explain()`` says what that means).
        """
        from funke.api.streams import DataStream  # (circular at module level: it imports this module)

        if not columns and not renamed:
            raise PlanError("select() on an interval join needs at least one column, e.g. select('left.id', 'right.price')")
        ls, rs = self._left.schema, self._right.schema
        where = "interval_join().select()"
        cols = [joins.resolve_join_column(c, None, ls, rs, where) for c in columns]
        cols += [joins.resolve_join_column(spec, alias, ls, rs, where) for alias, spec in renamed.items()]
        return DataStream(self._left._env, self._node(columns=tuple(cols), explicit_name=name, explicit_uid=uid))

    def process(
        self, function: ProcessJoinFunction, *, output_schema: str | Schema, name: str | None = None, uid: str | None = None
    ) -> DataStream:
        """``function.process_element(left, right, ctx)`` yields rows of ``output_schema`` per joined pair."""
        from funke.api.streams import DataStream  # (circular at module level: it imports this module)

        if not isinstance(function, ProcessJoinFunction):
            raise PlanError(f"process() takes a ProcessJoinFunction subclass, got {function!r}")
        out = Schema.of(output_schema)
        if out is None:
            raise PlanError("process() needs output_schema=... naming the columns the function yields")
        return DataStream(self._left._env, self._node(function=function, output=out, explicit_name=name, explicit_uid=uid))


class JoinedStreams:
    """``a.join(b)`` (or ``a.co_group(b)``): ``.where(key).equal_to(key).window(assigner).apply(fn, output_schema=...)``."""

    def __init__(self, left: DataStream, right: DataStream, *, co_group: bool) -> None:
        _same_env(left, right, "co_group()" if co_group else "join()")
        self._left, self._right, self._co_group = left, right, co_group
        self._where: Any = None
        self._equal_to: Any = None
        self._assigner: WindowAssigner | None = None

    @property
    def _what(self) -> str:
        return "co_group()" if self._co_group else "join()"

    def where(self, key: str | list[str]) -> JoinedStreams:
        """The left stream's key column(s)."""
        self._where = key
        return self

    def equal_to(self, key: str | list[str]) -> JoinedStreams:
        """The right stream's key column(s), pairing up with ``where``'s."""
        if self._where is None:
            raise PlanError(f"{self._what}: call where(left key) before equal_to(right key)")
        self._equal_to = key
        return self

    def window(self, assigner: WindowAssigner) -> JoinedStreams:
        if self._equal_to is None:
            raise PlanError(f"{self._what}: call where(left key).equal_to(right key) before window(...)")
        if not isinstance(assigner, WindowAssigner):
            raise PlanError(
                f"window() takes a window assigner (e.g. TumblingEventTimeWindows.of(fk.seconds(10))), got {assigner!r}"
            )
        self._assigner = assigner
        return self

    def apply(
        self,
        function: JoinFunction | CoGroupFunction,
        *,
        output_schema: str | Schema,
        name: str | None = None,
        uid: str | None = None,
    ) -> DataStream:
        """Per key and window: ``function.join(left, right)`` per pair, or ``co_group(lefts, rights)``."""
        from funke.api.streams import DataStream  # (circular at module level: it imports this module)

        if self._assigner is None:
            raise PlanError(f"{self._what}: call .where(...).equal_to(...).window(assigner) before apply(...)")
        wanted = CoGroupFunction if self._co_group else JoinFunction
        if not isinstance(function, wanted):
            raise PlanError(f"{self._what}.apply() takes a {wanted.__name__} subclass, got {function!r}")
        out = Schema.of(output_schema)
        if out is None:
            raise PlanError("apply() needs output_schema=... naming the columns the function returns")
        left, right = self._left.key_by(self._where), self._right.key_by(self._equal_to)
        node = joins.WindowJoin(
            (left.node, right.node),
            assigner=self._assigner,
            function=function,
            output=out,
            co_group=self._co_group,
            explicit_name=name,
            explicit_uid=uid,
        )
        return DataStream(self._left._env, node)
