"""User functions (Flink's, in PyFlink's spelling) and what operators emit.

* :class:`AggregateFunction` and :class:`ReduceFunction` (or any ``(a, b) -> c``
  callable) pre-aggregate window contents and back aggregating/reducing state.
* :class:`ProcessWindowFunction` sees all of a window's elements at once.
* :class:`KeyedProcessFunction` sees one element at a time with keyed state and timers.

``process``, ``process_element`` and ``on_timer`` produce rows by ``yield`` (or by
returning a list); side outputs go through ``ctx.output(tag, value)``. Every
operator answers with :class:`OutputRecord` s in emission order, main and side
outputs interleaved exactly as the function produced them.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Protocol

from funke.semantics.rich import Function
from funke.semantics.state import StateDescriptor
from funke.semantics.timers import KeyedTimerService, TimeDomain

__all__ = [
    "AggregateFunction",
    "AvgAggregate",
    "CountAggregate",
    "KeyedProcessFunction",
    "KeyedStateStore",
    "MaxAggregate",
    "MinAggregate",
    "OutputRecord",
    "OutputTag",
    "ProcessWindowFunction",
    "ReduceFunction",
    "SumAggregate",
    "TimeDomain",
    "as_reduce_callable",
    "collect_rows",
    "emitted",
    "side_output_of",
]


@dataclass(frozen=True)
class OutputTag:
    """Names a side output. Two tags are the same output when their names are equal."""

    name: str
    schema: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"OutputTag needs a non-empty name, got {self.name!r}")


class OutputRecord(NamedTuple):
    """One emitted record: the value, its timestamp (``None`` = none) and its side-output tag.

    ``tag is None`` means the main output. (A tuple: one is made per record, and a frozen dataclass
    costs twice as much to make.)
    """

    value: Any
    timestamp: int | None
    tag: OutputTag | None = None


# --------------------------------------------------------------------------- aggregation


class AggregateFunction(Function):
    """Incremental aggregation: ``add`` folds an element into an accumulator.

    ``merge`` is needed for session windows (their accumulators merge when sessions do).
    """

    def create_accumulator(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.create_accumulator() is not implemented")

    def add(self, value: Any, accumulator: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.add(value, accumulator) is not implemented")

    def get_result(self, accumulator: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.get_result(accumulator) is not implemented")

    def merge(self, a: Any, b: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__}.merge(a, b) is not implemented; session windows need it to merge accumulators"
        )


class ReduceFunction(Function):
    """``reduce(a, b)`` combines two values of the same type; a plain callable works as well."""

    def reduce(self, value1: Any, value2: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.reduce(value1, value2) is not implemented")


def as_reduce_callable(fn: ReduceFunction | Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    reduce_method = getattr(fn, "reduce", None)
    if callable(reduce_method):
        return reduce_method
    if callable(fn):
        return fn
    raise TypeError(f"expected a ReduceFunction or a function (a, b) -> c, got {fn!r}")


def _field_getter(field_ref: str | int | None) -> Callable[[Any], Any]:
    """Read a field by name (mapping key or attribute) or position; ``None`` = the element itself."""
    if field_ref is None:
        return lambda element: element
    if isinstance(field_ref, int):
        return lambda element: element[field_ref]

    def get(element: Any) -> Any:
        if isinstance(element, Mapping):
            if field_ref not in element:
                raise KeyError(f"element {element!r} has no field {field_ref!r}")
            return element[field_ref]
        try:
            return getattr(element, field_ref)
        except AttributeError:
            raise KeyError(f"element {element!r} has no field {field_ref!r}") from None

    return get


@dataclass(frozen=True)
class CountAggregate(AggregateFunction):
    """Number of elements."""

    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


@dataclass(frozen=True)
class _NullSkippingAggregate(AggregateFunction):
    """``field`` of every element (the element itself when ``field`` is None) folded with ``_combine``,
    nulls skipped; ``None`` (NULL) until a value that is not null comes. Sum, min and max are one each."""

    field: str | int | None = None
    _combine: ClassVar[Callable[[Any, Any], Any]]

    def create_accumulator(self) -> Any:
        return None

    def add(self, value: Any, accumulator: Any) -> Any:
        return self.merge(accumulator, _field_getter(self.field)(value))

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, a: Any, b: Any) -> Any:
        return b if a is None else a if b is None else self._combine(a, b)


@dataclass(frozen=True)
class SumAggregate(_NullSkippingAggregate):
    """Sum of ``field`` (the element itself when ``field`` is None), skipping nulls; ``None`` (NULL) until
    a value that is not null comes, as SQL's ``SUM`` and Spark's native window sum give.

    >>> agg = SumAggregate("v")
    >>> agg.get_result(agg.add({"v": None}, agg.create_accumulator())) is None
    True
    >>> agg.get_result(agg.merge(agg.add({"v": 2}, agg.create_accumulator()), agg.add({"v": None}, agg.create_accumulator())))
    2
    """

    _combine = staticmethod(operator.add)


@dataclass(frozen=True)
class MinAggregate(_NullSkippingAggregate):
    """Smallest ``field`` value; ``None`` for no elements."""

    _combine = staticmethod(min)


@dataclass(frozen=True)
class MaxAggregate(_NullSkippingAggregate):
    """Largest ``field`` value; ``None`` for no elements."""

    _combine = staticmethod(max)


@dataclass(frozen=True)
class AvgAggregate(AggregateFunction):
    """Arithmetic mean of ``field`` as a float; ``None`` for no elements."""

    field: str | int | None = None

    def create_accumulator(self) -> tuple[Any, int]:
        return (0, 0)

    def add(self, value: Any, accumulator: tuple[Any, int]) -> tuple[Any, int]:
        x = _field_getter(self.field)(value)
        return accumulator if x is None else (accumulator[0] + x, accumulator[1] + 1)

    def get_result(self, accumulator: tuple[Any, int]) -> float | None:
        total, count = accumulator
        return total / count if count else None

    def merge(self, a: tuple[Any, int], b: tuple[Any, int]) -> tuple[Any, int]:
        return (a[0] + b[0], a[1] + b[1])


# --------------------------------------------------------------------------- contexts


class KeyedStateStore(Protocol):
    """Where functions get their state (PyFlink's ``RuntimeContext`` state accessors)."""

    def get_state(self, descriptor: StateDescriptor) -> Any: ...

    def get_list_state(self, descriptor: StateDescriptor) -> Any: ...

    def get_map_state(self, descriptor: StateDescriptor) -> Any: ...

    def get_reducing_state(self, descriptor: StateDescriptor) -> Any: ...

    def get_aggregating_state(self, descriptor: StateDescriptor) -> Any: ...


class ProcessWindowContext(Protocol):
    def window(self) -> Any: ...

    def current_watermark(self) -> int: ...

    def current_processing_time(self) -> int: ...

    def window_state(self) -> KeyedStateStore: ...

    def global_state(self) -> KeyedStateStore: ...

    def output(self, tag: OutputTag, value: Any) -> None: ...


class KeyedProcessContext(KeyedStateStore, Protocol):
    def timestamp(self) -> int | None: ...

    def get_current_key(self) -> Any: ...

    def timer_service(self) -> KeyedTimerService: ...

    def output(self, tag: OutputTag, value: Any) -> None: ...


class OnTimerContext(KeyedProcessContext, Protocol):
    def time_domain(self) -> TimeDomain: ...


# --------------------------------------------------------------------------- process functions


class ProcessWindowFunction(Function):
    """Sees a whole window: ``process(key, ctx, elements)`` yields the window's result rows.

    ``clear(ctx)`` runs when the window is dropped for good (after allowed lateness),
    the place to delete anything kept in ``ctx.window_state()``. A row yielded as
    ``(output_tag, value)`` goes to that side output (PyFlink's spelling of ``ctx.output``).
    """

    def open(self, ctx: KeyedStateStore) -> None:
        return None

    def process(self, key: Any, ctx: ProcessWindowContext, elements: list[Any]) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process(key, ctx, elements) is not implemented")

    def clear(self, ctx: ProcessWindowContext) -> None:
        return None

    def close(self) -> None:
        return None


class KeyGroup(NamedTuple):
    """One key's elements of a micro-batch, in arrival order, for ``KeyedProcessFunction.process_batch``."""

    key: Any
    values: list[Any]
    timestamps: list[int | None]


class KeyedProcessFunction(Function):
    """One element at a time with keyed state and timers (Flink's ``KeyedProcessFunction``).

    ``open(ctx)`` runs once before the first element; ``ctx`` (a ``RuntimeContext``) gives state
    handles (``ctx.get_state(ValueStateDescriptor("seen"))``) which then always refer to the
    key being processed. Side outputs: ``ctx.output(tag, row)``, or ``yield tag, row``.

    A function may define ``process_batch(key_groups, ctx)`` instead of (or besides) ``process_element``:
    then it is called once per micro-batch and bucket (on Spark, funke runs a micro-batch's keys in a few
    buckets, each call gets one bucket's keys; once per element in a TestStream or the reference operator)
    with those elements as one :class:`KeyGroup` per key, keys in the order of their first element, each
    key's elements in arrival order. funke's addition, not Flink's: a function that handles a key's
    elements together pays the per-call cost once per key, and may vectorize. The watermark does not move
    inside a batch (as between a micro-batch's elements), so no timer fires between two groups. State
    handles, ``ctx.timer_service()``, ``ctx.get_current_key()`` and ``ctx.timestamp()`` are those of the group
    ``key_groups`` gave last; a row produced then carries that group's latest timestamp. When it is defined,
    ``process_batch`` takes every element (``process_element`` is not called).
    """

    def open(self, ctx: KeyedStateStore) -> None:
        return None

    def process_element(self, value: Any, ctx: KeyedProcessContext) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_element(value, ctx) is not implemented")

    def process_batch(self, key_groups: Iterator[KeyGroup], ctx: KeyedProcessContext) -> Iterable[Any] | None:
        raise NotImplementedError(f"{type(self).__name__}.process_batch(key_groups, ctx) is not implemented")

    @classmethod
    def takes_batches(cls) -> bool:
        """Whether the function defines ``process_batch``."""
        return cls.process_batch is not KeyedProcessFunction.process_batch

    def on_timer(self, timestamp: int, ctx: OnTimerContext) -> Iterable[Any] | None:
        return None

    def close(self) -> None:
        return None


def side_output_of(row: Any) -> OutputTag | None:
    """The tag of a row yielded as ``(output_tag, value)`` (PyFlink's side outputs), else None."""
    if type(row) is tuple and len(row) == 2 and isinstance(row[0], OutputTag):
        return row[0]
    return None


def emitted(result: Any, where: str, timestamp: int | None, side_timestamp: int | None) -> Iterator[OutputRecord]:
    """What a process function produced as records: its rows on the main output with ``timestamp``,
    a ``(output_tag, value)`` pair to that side output with ``side_timestamp``.

    >>> late = OutputTag("late")
    >>> [(r.value, r.tag and r.tag.name) for r in emitted(iter([{"a": 1}, (late, {"a": 2})]), "f", 5, 5)]
    [({'a': 1}, None), ({'a': 2}, 'late')]
    """
    for row in collect_rows(result, where):  # (lazily: a ``ctx.output`` between two yields comes between their records)
        tag = side_output_of(row) if type(row) is tuple else None
        yield OutputRecord(row, timestamp) if tag is None else OutputRecord(row[1], side_timestamp, tag)


#: What user functions return most: a generator (``yield``) or a list.
_ROW_CONTAINERS = frozenset({types.GeneratorType, list})


def collect_rows(result: Any, where: str) -> Iterator[Any]:
    """Iterate what a user function produced: a generator, a list, or ``None``.

    Anything else is refused: a returned dict or tuple would otherwise be iterated
    field by field, a silent and confusing bug.
    """
    if result is None:
        return iter(())
    if type(result) in _ROW_CONTAINERS or isinstance(result, (Iterator, list)):  # (the exact types first: an ABC check costs more)
        return iter(result)
    raise TypeError(
        f"{where} must yield its output rows (use `yield row`) or return a list of rows or None, "
        f"got {type(result).__name__}: {result!r}"
    )


@dataclass(frozen=True)
class NamedAggregates(AggregateFunction):
    """Several aggregates over the same elements, one result field each: ``{"n": CountAggregate(), ...}``.

    The accumulator is a tuple with one accumulator per name; the result a dict.

    >>> agg = NamedAggregates((("n", CountAggregate()), ("total", SumAggregate("v"))))
    >>> acc = agg.add({"v": 2}, agg.add({"v": 3}, agg.create_accumulator()))
    >>> agg.get_result(acc)
    {'n': 2, 'total': 5}
    """

    parts: tuple[tuple[str, AggregateFunction], ...]

    def create_accumulator(self) -> tuple[Any, ...]:
        return tuple(f.create_accumulator() for _, f in self.parts)

    def add(self, value: Any, accumulator: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(f.add(value, a) for (_, f), a in zip(self.parts, accumulator, strict=True))

    def get_result(self, accumulator: tuple[Any, ...]) -> dict[str, Any]:
        return {name: f.get_result(a) for (name, f), a in zip(self.parts, accumulator, strict=True)}

    def merge(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(f.merge(x, y) for (_, f), x, y in zip(self.parts, a, b, strict=True))


def builtin_aggregate(fn: str, field: str | None) -> AggregateFunction:
    """The built-in aggregate named ``fn`` (count, sum, min, max, avg) over ``field``."""
    if fn == "count":
        return CountAggregate()
    table: dict[str, Callable[[Any], AggregateFunction]] = {
        "sum": SumAggregate,
        "min": MinAggregate,
        "max": MaxAggregate,
        "avg": AvgAggregate,
    }
    if fn not in table:
        raise ValueError(f"unknown aggregate {fn!r}: use count, sum, min, max or avg")
    return table[fn](field)


@dataclass(frozen=True)
class Partial:
    """An accumulator standing for ``count`` elements, aggregated before they reached the operator.

    ``window`` (start, end), when set, is the window those elements form together (a
    session pre-merged from elements that lie within the gap of one another).
    """

    accumulator: Any
    count: int
    window: tuple[int, int] | None = None


@dataclass(frozen=True)
class AcceptsPartials(AggregateFunction):
    """``inner``, also taking :class:`Partial` values (merged in instead of added).

    >>> agg = AcceptsPartials(CountAggregate())
    >>> agg.get_result(agg.add(Partial(5, 5), agg.add("x", agg.create_accumulator())))
    6
    """

    inner: AggregateFunction

    def create_accumulator(self) -> Any:
        return self.inner.create_accumulator()

    def add(self, value: Any, accumulator: Any) -> Any:
        if isinstance(value, Partial):
            return self.inner.merge(accumulator, value.accumulator)
        return self.inner.add(value, accumulator)

    def get_result(self, accumulator: Any) -> Any:
        return self.inner.get_result(accumulator)

    def merge(self, a: Any, b: Any) -> Any:
        return self.inner.merge(a, b)


class Emitter:
    """An operator's outputs during one driving call (``process_element``, ``advance_watermark``, ...),
    and its watermark.

    Subclasses set ``self._out = []`` and ``self._busy = False`` and drive every call through
    ``_emitting``, which hands back what the call emitted, in order, and refuses a user
    function that calls back into its own operator.
    """

    _out: list[OutputRecord]
    _busy: bool
    _timers: Any  # the operator's InternalTimerService

    @property
    def current_watermark(self) -> int:
        return int(self._timers.current_watermark)

    def _emitting(self, action: Callable[[], None]) -> list[OutputRecord]:
        if self._busy:
            raise RuntimeError(f"{type(self).__name__} calls cannot be nested (a function called back into its operator)")
        self._busy = True
        try:
            action()
            return self._out
        finally:
            self._out = []
            self._busy = False
