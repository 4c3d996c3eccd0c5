"""The Table API's group windows (PyFlink's ``Tumble``, ``Slide``, ``Session``), and Flink SQL's legacy
group windows (``GROUP BY k, TUMBLE(ts, size)``, ``group_window_query``), as Flink SQL's window TVFs.

``table.window(Tumble.over(fk.seconds(10)).on("ts").alias("w")).group_by("w", "k").select("k", "w.start",
"COUNT(*) AS n")`` is the query ``SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t,
DESCRIPTOR(ts), INTERVAL '10000' MILLISECOND)) GROUP BY window_start, window_end, k``: the window's
``w.start``, ``w.end`` and ``w.rowtime`` are its ``window_start``, ``window_end`` and ``window_time``.

>>> Slide.over(seconds(60)).every(seconds(10)).on("ts").alias("w").tvf("t", ())
"TABLE(HOP(TABLE t, DESCRIPTOR(`ts`), INTERVAL '10000' MILLISECOND, INTERVAL '60000' MILLISECOND))"
>>> Session.with_gap(seconds(5)).on("ts").alias("s").tvf("t", ("k",))
"TABLE(SESSION(TABLE t PARTITION BY (`k`), DESCRIPTOR(`ts`), INTERVAL '5000' MILLISECOND))"
>>> window_columns("w.start, MAX(w.rowtime) AS last, wide.end", "w")
'window_start, MAX(window_time) AS last, wide.end'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from funke.dialect.syntax import Descriptor, TableArg, WindowTvf
from funke.errors import PlanError
from funke.semantics.time import Duration, seconds, to_millis
from funke.semantics.windows import WindowAssigner
from funke.table.lowering import select_item

__all__ = ["Session", "Slide", "Tumble", "seconds", "windows_sql"]


@dataclass(frozen=True)
class GroupWindow:
    """A group window: its kind, sizes (ms), time attribute and alias (set by ``on`` and ``alias``)."""

    kind: str
    sizes: tuple[int, ...]
    time: str | None = None
    name: str | None = None

    def on(self, time: str) -> GroupWindow:
        """The time attribute the window reads (the table's event-time column)."""
        return replace(self, time=time)

    def alias(self, name: str) -> GroupWindow:
        """The window's name in ``group_by`` and ``select`` (``w.start``, ``w.end``, ``w.rowtime``)."""
        return replace(self, name=name)

    def tvf(self, table: str, keys: Sequence[str]) -> str:
        """The window TVF over ``table`` (SESSION partitioned by ``keys``)."""
        if self.time is None or self.name is None:
            raise PlanError(f"a {self.kind} group window needs .on(time column) and .alias(name)")
        sizes = ", ".join(f"INTERVAL '{ms}' MILLISECOND" for ms in self.sizes)
        partition = f" PARTITION BY ({', '.join(f'`{k}`' for k in keys)})" if self.kind == "SESSION" and keys else ""
        return f"TABLE({self.kind}(TABLE {table}{partition}, DESCRIPTOR(`{self.time}`), {sizes}))"


class Tumble:
    @staticmethod
    def over(size: Duration) -> GroupWindow:
        return GroupWindow("TUMBLE", (to_millis(size, what="Tumble size"),))


class _Slide:
    def __init__(self, size: Duration) -> None:
        self.size = to_millis(size, what="Slide size")

    def every(self, slide: Duration) -> GroupWindow:
        return GroupWindow("HOP", (to_millis(slide, what="Slide slide"), self.size))


class Slide:
    @staticmethod
    def over(size: Duration) -> _Slide:
        return _Slide(size)


class Session:
    @staticmethod
    def with_gap(gap: Duration) -> GroupWindow:
        return GroupWindow("SESSION", (to_millis(gap, what="Session gap"),))


_PROPERTIES = {"start": "window_start", "end": "window_end", "rowtime": "window_time"}


def window_columns(expression: str, alias: str) -> str:
    """``expression`` with the window's properties (``alias.start``, ``.end``, ``.rowtime``) as the TVF's columns."""
    return re.sub(rf"\b{re.escape(alias)}\.(start|end|rowtime)\b", lambda m: _PROPERTIES[m.group(1)], expression)


# -- Flink SQL's legacy group windows: GROUP BY k, TUMBLE(ts, size) ------------------------------
#: A legacy group window's arguments after the time attribute, as the window TVF takes them.
_LEGACY_ARGS = {"TUMBLE": 1, "HOP": 2, "SESSION": 1}
#: Its auxiliary functions (``TUMBLE_START(ts, size)``, ...) and the TVF's column each is.
_AUXILIARY = {"_START": "window_start", "_END": "window_end", "_ROWTIME": "window_time"}


def has_group_window(query: exp.Select) -> bool:
    """Whether ``query``'s ``GROUP BY`` has a legacy group window (``TUMBLE(ts, size)``, ...)."""
    group = query.args.get("group")
    return group is not None and any(isinstance(g, WindowTvf) for g in group.expressions)


def group_window_query(query: exp.Select, view: str, refuse: Callable[..., Exception]) -> exp.Select | None:
    """``query`` with a legacy group window in its ``GROUP BY`` (``TUMBLE(ts, size)``, ``HOP(ts, slide,
    size)``, ``SESSION(ts, gap)``) written as the window TVF over ``view`` (its ``FROM``, registered
    under that name): ``GROUP BY window_start, window_end, keys``, ``TUMBLE_START(...)`` and the other
    auxiliary functions the TVF's ``window_start``, ``window_end``, ``window_time``. Flink runs both
    forms alike in event time (one result per window when the watermark passes it, late rows dropped).
    None when ``GROUP BY`` has no group window."""
    if not has_group_window(query):
        return None
    q = query.copy()
    calls = [g for g in q.args["group"].expressions if isinstance(g, WindowTvf)]
    if len(calls) > 1:
        raise refuse(calls[1], "two group windows in one GROUP BY")
    call = calls[0]
    kind = call.name.upper()
    args = call.expressions
    if kind not in _LEGACY_ARGS or len(args) != 1 + _LEGACY_ARGS[kind] or not isinstance(args[0], exp.Column):
        raise refuse(call, f"{kind}(...) in GROUP BY with these arguments", "write TUMBLE(ts, size), HOP(ts, slide, size) or SESSION(ts, gap)")
    keys = [g for g in q.args["group"].expressions if g is not call]
    table = exp.Table(this=exp.to_identifier(view))
    tvf = WindowTvf(this=kind, expressions=[
        TableArg(this=table, partition=[exp.column(k.name) for k in keys] if kind == "SESSION" else None),
        Descriptor(expressions=[exp.column(args[0].name)]), *(a.copy() for a in args[1:]),
    ])  # fmt: skip
    source = q.args["from_"].this
    alias = source.alias if isinstance(source, (exp.Table, exp.Subquery)) and source.alias else None
    q.args["from_"].set("this", exp.Table(this=exp.Anonymous(this="TABLE", expressions=[tvf]), alias=exp.TableAlias(this=exp.to_identifier(alias)) if alias else None))
    q.args["group"].set("expressions", [exp.column("window_start"), exp.column("window_end"), *keys])

    def auxiliary(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Anonymous):
            name = n.name.upper()
            for suffix, column in _AUXILIARY.items():
                if name.endswith(suffix) and name.removesuffix(suffix) in _LEGACY_ARGS:
                    if name.removesuffix(suffix) != kind:
                        raise refuse(n, f"{name}(...) with a {kind} group window", f"write {kind}{suffix}(...)")
                    return exp.column(column)
            if name.endswith("_PROCTIME") and name.removesuffix("_PROCTIME") in _LEGACY_ARGS:
                if name.removesuffix("_PROCTIME") != kind:
                    raise refuse(n, f"{name}(...) with a {kind} group window", f"write {kind}_PROCTIME(...)")
                proctime = exp.Anonymous(this=_PROCTIME)  # (where the call was, for an error about it)
                proctime.meta.update(next((x.meta for x in n.walk() if "line" in x.meta), {}))
                return proctime
        return n

    q.set("expressions", [e.transform(auxiliary) for e in q.expressions])
    if q.args.get("having") is not None:
        q.set("having", q.args["having"].transform(auxiliary))
        if (inside := _proctime_in(q.args["having"])) is not None:
            raise refuse(inside, f"{kind}_PROCTIME(...) in HAVING", "filter on the window's other columns")
    return _with_proctime(q, kind, refuse)


#: What ``*_PROCTIME(...)`` is while its query is rewritten (no name a query can call), then ``PROCTIME()``.
_PROCTIME = "FK_GROUP_WINDOW_PROCTIME"


def _proctime_in(e: exp.Expression) -> exp.Expression | None:
    return next((x for x in e.find_all(exp.Anonymous) if x.name.upper() == _PROCTIME), None)


def _with_proctime(q: exp.Select, kind: str, refuse: Callable[..., Exception]) -> exp.Select:
    """``q`` whose SELECT list has ``TUMBLE_PROCTIME(...)`` (now ``_PROCTIME``) as a column: the window
    aggregation without it, and over that a SELECT giving each result row a processing-time attribute,
    in its place among the columns. Flink's ``*_PROCTIME`` is such an attribute (when the row is
    produced), for a later processing-time window, join or OVER aggregation; inside an expression it is
    refused (write it alone as a column)."""
    items = q.expressions
    alone = {i for i, e in enumerate(items) if isinstance(e.unalias(), exp.Anonymous) and e.unalias().name.upper() == _PROCTIME}
    for i, e in enumerate(items):
        if i not in alone and (inside := _proctime_in(e)) is not None:
            raise refuse(inside, f"{kind}_PROCTIME(...) inside an expression", f"select {kind}_PROCTIME(...) alone as a column")
    if not alone:
        return q
    names = [select_item(e, i, e.unalias()).alias_or_name for i, e in enumerate(items)]
    inner = q.copy()
    inner.set("expressions", [select_item(e, i, e.unalias()) for i, e in enumerate(items) if i not in alone])
    outer = [
        exp.alias_(exp.Anonymous(this="PROCTIME"), name, quoted=True) if i in alone else exp.column(name, quoted=True)
        for i, name in enumerate(names)
    ]  # fmt: skip
    return exp.select(*outer).from_(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("_fk_group_window"))))


def windows_sql(assigner: WindowAssigner, time: str) -> str:
    """The Spark SQL of the windows a row belongs to by its column ``time``, as ``assigner.assign_windows`` gives
    them (and Flink's window table function, ``SELECT * FROM TABLE(TUMBLE(...))``): an ARRAY of
    ``STRUCT<s, e>``, each window's start and end in ms; HOP's latest start first, CUMULATE's shortest first.

    >>> from funke.semantics.windows import TumblingEventTimeWindows
    >>> print(windows_sql(TumblingEventTimeWindows.of(10_000), "ts"))
    array(named_struct('s', unix_millis(`ts`) - pmod(unix_millis(`ts`) - 0, 10000), 'e', unix_millis(`ts`) - pmod(unix_millis(`ts`) - 0, 10000) + 10000))
    """
    ms = f"unix_millis(`{time}`)"
    if assigner.kind.startswith("tumbling"):
        start = f"{ms} - pmod({ms} - {assigner.offset_ms}, {assigner.size_ms})"
        return f"array(named_struct('s', {start}, 'e', {start} + {assigner.size_ms}))"
    if assigner.kind.startswith("sliding"):  # (Flink's: from the last start back by slides while the window holds the row)
        size, slide = assigner.size_ms, assigner.slide_ms
        last = f"{ms} - pmod({ms} - {assigner.offset_ms}, {slide})"
        starts = f"filter(transform(sequence(0, {-(-size // slide) - 1}), i -> {last} - CAST(i AS BIGINT) * {slide}), s -> s > {ms} - {size})"
        return f"transform({starts}, s -> named_struct('s', s, 'e', s + {size}))"
    if assigner.kind.startswith("cumulative"):  # (its period's start; each end from the row's step on, to the period's end)
        size, step = assigner.size_ms, assigner.step_ms
        start = f"({ms} - pmod({ms} - {assigner.offset_ms}, {size}))"
        first_end = f"{start} + (({ms} - {start}) div {step} + 1) * {step}"
        return f"transform(sequence({first_end}, {start} + {size}, {step}), e -> named_struct('s', {start}, 'e', e))"
    raise ValueError(f"no window table function of {assigner.describe()}")
