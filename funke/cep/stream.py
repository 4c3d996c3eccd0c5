"""``CEP.pattern(keyed, pattern)``: a pattern run over a keyed stream (Flink's ``CEP`` and ``PatternStream``).

A :class:`PatternStream` says how to run the pattern (event or processing time, where late
elements go); ``process``, ``select`` and ``flat_select`` turn it into a stream of rows. Under
them is one keyed process function, :class:`~funke.semantics.cep_operator.CepOperator`, on the
general path: nothing else runs a pattern.

>>> import funke as fk
>>> from funke.cep import CEP, Pattern
>>> env = fk.StreamEnvironment(app="doc")
>>> wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts", unit="ms")
>>> txs = env.from_collection([("c1", 0.5, 1_000), ("c1", 900.0, 2_000)], "card string, amount double, ts bigint", watermarks=wm)
>>> small_then_large = (
...     Pattern.begin("small").where(lambda tx: tx["amount"] < 1)
...     .next("large").where(lambda tx: tx["amount"] > 500)
...     .within(fk.minutes(1))
... )
>>> alerts = CEP.pattern(txs.key_by("card"), small_then_large).select(
...     lambda m: {"card": m["large"][0]["card"], "amount": m["large"][0]["amount"]},
...     output_schema="card string, amount double",
... )
>>> alerts.node.label()
"process CepOperator Pattern.begin('small').where(<lambda>).next('large').where(<lambda>).within(60000 ms) -> select(<lambda>) [event time]"
"""

from __future__ import annotations

from typing import Any

from funke.api.streams import DataStream, KeyedStream
from funke.cep.sql import bind, prefilter
from funke.errors import PlanError
from funke.plan.types import Schema
from funke.semantics.cep_operator import (
    CepOperator,
    PatternFlatSelect,
    PatternProcessFunction,
    PatternSelect,
    TimedOutPartialMatchHandler,
    as_comparator,
    user_function_name,
)
from funke.semantics.functions import OutputTag

__all__ = ["CEP", "PatternStream"]


class CEP:
    """Flink's ``CEP``: the entry point that applies a pattern to a stream."""

    @staticmethod
    def pattern(input: KeyedStream, pattern: Any, comparator: Any = None) -> PatternStream:
        """Match ``pattern`` per key of ``input``; in event time unless ``.in_processing_time()``.

        ``comparator`` (Flink's ``EventComparator``): ``compare(a, b) -> int`` (or an object with
        that ``compare`` method) orders the events of one key that have the same timestamp before
        the pattern sees them: negative puts ``a`` first, positive ``b``, 0 keeps arrival order.
        Without it, events of one timestamp go in arrival order. In processing time, the events
        of one key that arrive in the same millisecond are ordered by it (as in Flink), which
        makes them wait for a processing-time timer instead of being matched on arrival.

        >>> import funke as fk
        >>> from funke.cep import Pattern
        >>> env = fk.StreamEnvironment(app="doc")
        >>> keyed = env.from_collection([("k", 1)], "k string, v bigint").key_by("k")
        >>> CEP.pattern(keyed, Pattern.begin("a"), comparator=lambda a, b: a["v"] - b["v"])
        PatternStream(Pattern.begin('a'), event time, ties ordered by <lambda>)
        >>> CEP.pattern(keyed, Pattern.begin("a"), comparator="v")
        Traceback (most recent call last):
        ...
        funke.errors.PlanError: CEP.pattern(stream, pattern, comparator): a comparator must be a function compare(a, b) -> int (negative: a first, 0: arrival order, positive: b first), or an object with a compare(a, b) method; got 'v'
        """
        from funke.cep.pattern import Pattern

        if not isinstance(input, KeyedStream):
            raise PlanError(
                "CEP.pattern() needs a keyed stream: call key_by(...) first (a pattern over the whole stream: "
                "key it by a constant column, which runs it on one key)"
            )
        if not isinstance(pattern, Pattern):
            raise PlanError(f"CEP.pattern(stream, pattern) takes a funke.cep.Pattern, got {pattern!r}")
        if comparator is not None:
            try:
                comparator = as_comparator(comparator)
            except TypeError as e:
                raise PlanError(f"CEP.pattern(stream, pattern, comparator): {e}") from None
        pattern = pattern.validate()
        if input.schema is not None:  # SQL conditions: compiled for the stream's columns, checked here
            pattern = bind(pattern, input.schema)
        return PatternStream(input, pattern, comparator=comparator)


class PatternStream:
    """A pattern applied to a keyed stream; ``process``/``select``/``flat_select`` give its matches as rows."""

    def __init__(
        self,
        keyed: KeyedStream,
        pattern: Any,
        *,
        processing_time: bool = False,
        late_tag: OutputTag | None = None,
        comparator: Any = None,
    ):
        self._keyed = keyed
        self._pattern = pattern
        self._processing_time = processing_time
        self._late_tag = late_tag
        self._comparator = comparator

    def __repr__(self) -> str:
        order = "" if self._comparator is None else f", ties ordered by {user_function_name(self._comparator)}"
        return f"PatternStream({self._pattern!r}, {'processing' if self._processing_time else 'event'} time{order})"

    def _with(self, **changes: Any) -> PatternStream:
        fields = {"processing_time": self._processing_time, "late_tag": self._late_tag, "comparator": self._comparator, **changes}
        return PatternStream(self._keyed, self._pattern, **fields)

    def in_processing_time(self) -> PatternStream:
        """Match elements in arrival order, stamped with processing time (no buffering, nothing is late)."""
        return self._with(processing_time=True)

    def in_event_time(self) -> PatternStream:
        """Match elements in event-time order once the watermark passes them (the default)."""
        return self._with(processing_time=False)

    def side_output_late_data(self, tag: OutputTag) -> PatternStream:
        """Send elements late on arrival (at or below the watermark) to ``tag``, instead of dropping them.

        The tag's rows are the input's; it needs no schema (``OutputTag("late")``).
        """
        if not isinstance(tag, OutputTag):
            raise PlanError(f"side_output_late_data() takes an OutputTag, got {tag!r}")
        return self._with(late_tag=tag)

    # -- the matches as rows

    def process(
        self, function: PatternProcessFunction, *, output_schema: str | Schema, name: str | None = None, uid: str | None = None
    ) -> DataStream:
        """``function.process_match(match, ctx)`` yields rows of ``output_schema`` per match; a function
        that is also a ``TimedOutPartialMatchHandler`` gets the timed-out partial matches."""
        if not isinstance(function, PatternProcessFunction):
            raise PlanError(f"process() takes a PatternProcessFunction subclass, got {function!r}")
        return self._run(function, output_schema, name, uid)

    def select(self, *functions: Any, output_schema: str | Schema, name: str | None = None, uid: str | None = None) -> DataStream:
        """``select(fn)``: ``fn(match)`` returns one row per match. ``select(timeout_tag, timeout_fn, fn)``:
        also ``timeout_fn(match, timeout_timestamp)`` returns one row per timed-out partial match, sent to
        ``timeout_tag`` (an ``OutputTag`` with the row's schema)."""
        return self._run(_selecting(PatternSelect, "select", functions), output_schema, name, uid)

    def flat_select(
        self, *functions: Any, output_schema: str | Schema, name: str | None = None, uid: str | None = None
    ) -> DataStream:
        """Like :meth:`select`, but the functions yield rows (none or several), or return a list of them."""
        return self._run(_selecting(PatternFlatSelect, "flat_select", functions), output_schema, name, uid)

    def _run(
        self, function: PatternProcessFunction, output_schema: str | Schema, name: str | None, uid: str | None
    ) -> DataStream:
        if not self._processing_time and self._keyed.node.event_time is None:
            raise PlanError(
                "CEP.pattern() in event time needs event time: pass watermarks= to from_source(...) or call "
                "assign_timestamps_and_watermarks(...) before key_by(); or match in processing time "
                "(CEP.pattern(...).in_processing_time())"
            )
        pattern = self._pattern
        operator = CepOperator(
            pattern, function, processing_time=self._processing_time, late_tag=self._late_tag, comparator=self._comparator
        )
        keyed = self._keyed
        timeouts = isinstance(function, TimedOutPartialMatchHandler) and getattr(function, "timeout_fn", True) is not None
        kept = None if self._processing_time or self._late_tag is not None else prefilter(pattern, timeouts=timeouts)
        if kept is not None:  # events no condition accepts cannot change a match: Spark drops them (funke.cep.sql)
            source = DataStream(keyed._env, keyed.node.inputs[0])
            keyed = source.filter(kept, name=f"events the pattern may accept: {kept}").key_by(list(keyed.key_columns))
        out = keyed.process(operator, output_schema=output_schema, name=name, uid=uid)
        return PatternResult(out._env, out.node)


def _selecting(kind: type[PatternSelect], call: str, functions: tuple[Any, ...]) -> PatternSelect:
    if len(functions) == 1:
        return kind(functions[0])
    if len(functions) == 3:
        tag, timeout_fn, fn = functions
        if not isinstance(tag, OutputTag):
            raise PlanError(f"{call}(timeout_tag, timeout_fn, fn): the first argument must be an OutputTag, got {tag!r}")
        if tag.schema is None:
            raise PlanError(
                f"{call}(timeout_tag, ...): declare the columns timeout_fn returns in the tag, OutputTag({tag.name!r}, schema)"
            )
        return kind(fn, tag, timeout_fn)
    raise PlanError(f"{call}() takes fn, or timeout_tag, timeout_fn, fn; got {len(functions)} arguments")


class PatternResult(DataStream):
    """The stream of a pattern's matches; its late-data side output has the input's columns."""

    def get_side_output(self, tag: OutputTag) -> DataStream:
        late = getattr(self._node, "function", None)
        late_tag = getattr(late, "late_tag", None)
        if isinstance(tag, OutputTag) and tag.schema is None and late_tag is not None and late_tag.name == tag.name:
            tag = OutputTag(tag.name, self._node.input.schema)
        return super().get_side_output(tag)
