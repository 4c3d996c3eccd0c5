"""How PyFlink values travel through funke, and the chains of Python functions that run on them.

A PyFlink stream is, in funke, a stream of rows with one binary column ``value`` holding the
pickled Python value (PyFlink's own wire format for Python objects), plus ``pf_ts`` (event time)
once timestamps are assigned and ``pf_key`` (the pickled key) after ``key_by``. Declared ``Types``
are applied where PyFlink serializes values (``TypeInformation.from_python``), not by the column.

Consecutive ``map`` / ``flat_map`` / ``filter`` calls (and a key selector or timestamp assigner
after them) run as one :class:`Chain`, in one Spark ``mapInArrow`` task, values passed from one
function to the next as they are: PyFlink's operator chaining, which also decides where values are
converted to their declared type (at the chain's start, if a boundary precedes it; never inside).
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from funke.pyflink.common.time import Instant
from funke.pyflink.common.typeinfo import PickledBytesTypeInfo, RowTypeInfo, TypeInformation
from funke.pyflink.common.types import Row, RowKind
from funke.semantics.rich import RuntimeContext, call_open, current_task
from funke.table.changelog import ROW_KIND

VALUE, KEY, TS, LINE = "value", "pf_key", "pf_ts", "line"
#: PyFlink's ``record_timestamp`` of a value without one (Java's Long.MIN_VALUE).
NO_TIMESTAMP = -(1 << 63)
_EPOCH = datetime(1970, 1, 1)


def dumps(value: Any) -> bytes:
    """A value as bytes: pickle, or cloudpickle where the value holds something defined in the
    script itself (``__main__``, which a Spark worker cannot import by name)."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if b"__main__" in data:
        import cloudpickle

        data = cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return data


loads = pickle.loads


_ATOMS = frozenset({str, int, float, bool, bytes, type(None)})


def key_bytes(key: Any) -> bytes:
    """A key as bytes that are equal exactly when the keys' contents are (no pickle memo: a tuple of
    the same string object twice pickles as a tuple of two equal strings)."""
    if type(key) in _ATOMS:  # (one object: nothing for the memo to share)
        return pickle.dumps(key, protocol=pickle.HIGHEST_PROTOCOL)
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # (no memo; keys are never recursive)
    try:
        pickler.dump(key)
    except (pickle.PicklingError, AttributeError, TypeError):
        return dumps(key)
    data = buf.getvalue()
    return dumps(key) if b"__main__" in data else data


def millis(ts: Any) -> int | None:
    """An event-time column's value (a naive UTC datetime from Arrow, or epoch ms) as epoch ms."""
    if ts is None or isinstance(ts, int):
        return ts
    return (ts - _EPOCH) // timedelta(milliseconds=1) if ts.tzinfo is None else (ts - _EPOCH.replace(tzinfo=UTC)) // timedelta(milliseconds=1)


def needs_conversion(t: TypeInformation | None) -> bool:
    return t is not None and not isinstance(t, PickledBytesTypeInfo)


# -- readers: the Python value of a row -----------------------------------------------------------


class Reader:
    """The Python value of a source's row (default: the pickled ``value`` column)."""

    def __call__(self, row: dict[str, Any]) -> Any:
        return loads(row[VALUE])


@dataclass(frozen=True)
class TextReader(Reader):
    """A text line or a string column (``FileSource`` text lines, ``SimpleStringSchema``)."""

    column: str = VALUE
    charset: str | None = None  # bytes to decode, or None: already a string

    def __call__(self, row: dict[str, Any]) -> Any:
        v = row[self.column]
        return v.decode(self.charset) if self.charset is not None and v is not None else v


@dataclass(frozen=True)
class RowReader(Reader):
    """A row of typed columns as a PyFlink ``Row`` of a ROW type (JSON/CSV row schemas); with ``kinds``, the
    column holding each row's kind in a changelog (``to_changelog_stream``)."""

    type_info: RowTypeInfo = field(default_factory=lambda: RowTypeInfo([]))
    kinds: str | None = None

    def __call__(self, row: dict[str, Any]) -> Any:
        names = self.type_info.get_field_names()
        out = self.type_info.from_python(Row(*(row.get(n) for n in names)))
        if self.kinds is not None:
            out.set_row_kind(RowKind.of_short(row.get(self.kinds)))
        return out


# -- chains ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One Python function of a chain: ``map``, ``flat_map`` or ``filter`` (``call`` is the plain
    callable; ``function`` the user's object whose ``open``/``close`` the chain runs)."""

    kind: str
    call: Callable[[Any], Any]
    function: Any = None
    name: str = ""


@dataclass(frozen=True)
class Tail:
    """What a chain's last part makes of each value: ``rows`` (the value on), ``key`` (and its key),
    ``print`` (PyFlink's text line), ``collect`` (converted to its type), ``columns`` (a ROW type's
    fields as typed columns) or ``changes`` (those and each Row's kind in ``ROW_KIND``)."""

    kind: str = "rows"
    selector: Callable[[Any], Any] | None = None
    key_type: TypeInformation | None = None
    out_type: TypeInformation | None = None
    prefix: Callable[[], str] | None = None


class Chain:
    """Python functions fused into one, run on each row of a ``mapInArrow`` batch (a flat map).

    ``convert``: the upstream's declared type, applied to each value first where PyFlink would
    have serialized it before this chain (after a shuffle, a union, a Java source).
    """

    def __init__(
        self, reader: Reader, convert: TypeInformation | None, steps: tuple[Step, ...], tail: Tail, *, keep_ts: bool,
        job_parameters: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        self.reader, self.convert, self.steps, self.tail, self.keep_ts = reader, convert, steps, tail, keep_ts
        self.job_parameters = dict(job_parameters or {})
        #: A TimestampAssigner in the chain: each value then travels with its timestamp.
        self.stamped = any(s.kind == "stamp" for s in steps)
        self.functions = [s.function for s in steps if s.function is not None]
        owner = getattr(tail.selector, "__self__", None)  # (a KeySelector's bound get_key: the selector opens)
        if owner is not None and callable(getattr(owner, "open", None)):
            self.functions.append(owner)
        self._converters: dict[int, Callable[[Any], Any]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_converters": {}}  # (generated functions do not pickle: built where they run)

    def _converter(self, t: TypeInformation) -> Callable[[Any], Any]:
        """``t.from_python`` as its quick converter, built once per chain where it runs."""
        convert = self._converters.get(id(t))
        if convert is None:
            convert = self._converters[id(t)] = t.converter()
        return convert

    # (the chain's own lifecycle: every function with open/close in it)
    def open(self, runtime_context: RuntimeContext) -> None:
        for f in self.functions:
            ctx = RuntimeContext(type(f).__name__, parallelism=runtime_context.get_number_of_parallel_subtasks(), job_parameters=self.job_parameters)
            call_open(f, ctx)

    def close(self) -> None:
        for f in self.functions:
            close = getattr(f, "close", None)
            if callable(close):
                close()

    def values(self, row: dict[str, Any]) -> list[Any]:
        value = self.reader(row)
        if self.convert is not None:
            value = self._converter(self.convert)(value)
        values = [value]
        for step in self.steps:
            if step.kind == "map":
                values = [step.call(v) for v in values]
            elif step.kind == "filter":
                values = [v for v in values if step.call(v)]
            else:  # flat_map: an iterable (a generator) of values per value
                out: list[Any] = []
                for v in values:
                    produced = step.call(v)
                    if produced is not None:
                        if isinstance(produced, (str, bytes, dict)):
                            raise TypeError(f"flat_map({step.name}) must yield or return an iterable of values, got {type(produced).__name__} {produced!r}")
                        out.extend(produced)
                values = out
            if not values:
                return values
        return values

    def timed_values(self, row: dict[str, Any]) -> list[tuple[Any, int | None]]:
        """``values`` for a chain with a TimestampAssigner: (value, timestamp ms) pairs; a value made from
        another keeps its timestamp (Flink's), the assigner sets it from ``extract_timestamp``."""
        value = self.reader(row)
        if self.convert is not None:
            value = self._converter(self.convert)(value)
        ts = millis(row.get(TS)) if self.keep_ts else None
        pairs = [(value, ts)]
        for step in self.steps:
            if step.kind == "stamp":
                pairs = [(v, int(step.call(v, t if t is not None else NO_TIMESTAMP))) for v, t in pairs]
            elif step.kind == "map":
                pairs = [(step.call(v), t) for v, t in pairs]
            elif step.kind == "filter":
                pairs = [(v, t) for v, t in pairs if step.call(v)]
            else:
                out = []
                for v, t in pairs:
                    produced = step.call(v)
                    if produced is not None:
                        if isinstance(produced, (str, bytes, dict)):
                            raise TypeError(f"flat_map({step.name}) must yield or return an iterable of values, got {type(produced).__name__} {produced!r}")
                        out.extend((p, t) for p in produced)
                pairs = out
            if not pairs:
                break
        return pairs

    def __call__(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        if self.stamped:
            return self._stamped(row)
        values = self.values(row)
        if not values:
            return []
        tail = self.tail
        ts = row.get(TS) if self.keep_ts else None
        if tail.kind == "rows":
            return [{VALUE: dumps(v), TS: ts} if self.keep_ts else {VALUE: dumps(v)} for v in values]
        if tail.kind == "key":
            assert tail.selector is not None
            out = []
            key = self._converter(tail.key_type) if tail.key_type is not None else None
            for v in values:
                k = tail.selector(v)
                if key is not None:
                    k = key(k)
                out.append({KEY: key_bytes(k), VALUE: dumps(v), TS: ts} if self.keep_ts else {KEY: key_bytes(k), VALUE: dumps(v)})
            return out
        if tail.kind == "print":
            assert tail.prefix is not None
            prefix = tail.prefix()
            return [{LINE: prefix + print_line(v, tail.out_type)} for v in values]
        if tail.kind == "columns":  # a ROW type's fields as typed columns (a connector writes them)
            t = tail.out_type
            names = t.get_field_names()  # type: ignore[union-attr]
            return [dict(zip(names, map(_column_value, t.from_python(v)))) for v in values]  # type: ignore[union-attr]
        if tail.kind == "changes":  # those, and each Row's RowKind (from_changelog_stream)
            names, rows = tail.out_type.get_field_names(), map(tail.out_type.from_python, values)  # type: ignore[union-attr]
            return [{ROW_KIND: str(r.get_row_kind()), **dict(zip(names, map(_column_value, r)))} for r in rows]
        # collect: the value as Java hands it back (converted to its declared type)
        t = tail.out_type
        convert = self._converter(t) if needs_conversion(t) else None  # type: ignore[arg-type]
        return [{VALUE: dumps(convert(v) if convert is not None else v)} for v in values]


    def _stamped(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        pairs = self.timed_values(row)
        tail = self.tail
        if tail.kind == "rows":
            return [{VALUE: dumps(v), TS: t} for v, t in pairs]
        if tail.kind == "key":
            assert tail.selector is not None
            key = self._converter(tail.key_type) if tail.key_type is not None else None
            return [{KEY: key_bytes(key(k) if key is not None else k), VALUE: dumps(v), TS: t} for v, t in pairs for k in (tail.selector(v),)]
        plain = Chain(Reader(), None, (), tail, keep_ts=False)  # (print, collect, columns: the values alone)
        return [r for v, _ in pairs for r in plain({VALUE: dumps(v)})]


def _column_value(value: Any) -> Any:
    """A field as a column holds it: an ``Instant`` as a UTC datetime (a TIMESTAMP_LTZ column)."""
    if isinstance(value, Instant):
        return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=value.seconds, microseconds=value.nanos // 1000)
    return value


def call_chain(chain: Chain, row: dict[str, Any]) -> list[dict[str, Any]]:
    return chain(row)


def print_line(value: Any, t: TypeInformation | None) -> str:
    """A value as PyFlink's ``print()`` writes it: a Python object (no declared type) by ``str``, a
    ``Row`` type as ``+I[a,b]`` of its fields' ``str``, any other type by Java's ``toString``."""
    if t is None or isinstance(t, PickledBytesTypeInfo):
        return value if isinstance(value, str) else str(value)
    if isinstance(t, RowTypeInfo):
        if not isinstance(value, Row):
            raise TypeError(f"print(): a value declared {t!r} must be a Row, got {type(value).__name__} {value!r}")
        return f"{value.get_row_kind()}[{','.join(str(v) for v in value)}]"
    return t.java_string(t.from_python(value))


def print_prefix(identifier: str | None, parallelism: int) -> Callable[[], str]:
    """PyFlink's print prefix: ``id> `` / ``id:N> `` / ``N> `` (N the parallel instance, from 1) / none."""

    def prefix() -> str:
        if parallelism <= 1:
            return f"{identifier}> " if identifier is not None else ""
        n = current_task().index % parallelism + 1
        return f"{identifier}:{n}> " if identifier is not None else f"{n}> "

    return prefix
