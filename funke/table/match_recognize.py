"""Flink SQL's ``MATCH_RECOGNIZE``, compiled to a CEP :class:`~funke.cep.Pattern` run by ``CEP.pattern``
(the same automaton and ``CepOperator`` as the Pattern API: there is no second matcher).

The translation is Flink's own (``StreamExecMatch.PatternVisitor``): each pattern variable is a stage,
the first ``Pattern.begin(name, skip strategy)``, the others ``.next(name)`` (variables are strictly
contiguous), each ``.where(DEFINE condition)`` (none: always true); the quantifiers:

======================  ===================================================
``A*``                  ``one_or_more().optional().consecutive()``
``A+``                  ``one_or_more().consecutive()``
``A?``                  ``optional()``
``A{n}``, ``A{n,m}``    ``times(n, m).consecutive()``
``A{n,}``               ``times_or_more(n).consecutive()``
======================  ===================================================

then ``greedy()`` unless the quantifier is reluctant (a trailing ``?``), optional or exact (``{n}``).
``WITHIN INTERVAL ...`` is ``within``, ``AFTER MATCH SKIP ...`` the skip strategy.

DEFINE and MEASURES are SQL expressions evaluated in Python with SQL's NULL semantics
(``funke.dialect.evaluate``): DEFINE conditions are iterative conditions reading the partial match
with ``ctx.get_events_for_pattern``; MEASURES are computed from the whole match.

>>> from funke.table.match_recognize import parse_pattern
>>> [(v.name, v.low, v.high, v.greedy) for v in parse_pattern("A B+? C{2,} D{3}")]
[('A', 1, 1, True), ('B', 1, None, False), ('C', 2, None, True), ('D', 3, 3, True)]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from funke.cep.pattern import Pattern
from funke.dialect.date_arithmetic import interval_ms
from funke.dialect.evaluate import Compiled, ExprCompiler, MatchScope, RowsScope
from funke.errors import PlanError
from funke.plan.expr import Sql
from funke.plan.types import Field, Schema
from funke.semantics.cep import AfterMatchSkipStrategy, IterativeCondition, MalformedPatternError
from funke.semantics.cep_operator import PatternProcessFunction
from funke.table.lowering import is_updating


@dataclass(frozen=True)
class Variable:
    """A pattern variable and its quantifier: ``low`` to ``high`` rows (None: no upper bound)."""

    name: str
    low: int = 1
    high: int | None = 1
    greedy: bool = True


_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*|`[^`]+`)|(?P<exclude>\{-)|(?P<brace>\{\s*(?P<lo>\d*)\s*(?P<comma>,)?\s*(?P<hi>\d*)\s*\})"
    r"|(?P<op>[*+?])|(?P<other>\S))"
)


def parse_pattern(text: str) -> list[Variable]:
    """``PATTERN (...)``'s text as a sequence of variables; what the automaton cannot express is refused."""
    out: list[Variable] = []
    pos, text = 0, text.strip()
    if not text:
        raise PlanError("Flink SQL: MATCH_RECOGNIZE needs a PATTERN (...) with at least one variable")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            break
        pos = m.end()
        if m.group("name"):
            name = m.group("name").strip("`")
            if name.upper() == "PERMUTE" and text[pos:].lstrip().startswith("("):
                raise _refused_pattern("PERMUTE", "write the orders one by one in separate queries and UNION ALL them")
            out.append(Variable(name))
            continue
        if m.group("exclude"):
            raise _refused_pattern("an exclusion {- ... -}", "")
        other = m.group("other")
        if other in ("|",):
            raise _refused_pattern("an alternation (|)", "write one query per branch and UNION ALL them")
        if other in ("(", ")"):
            raise _refused_pattern("a group ( ... )", "quantify single variables")
        if other in ("^", "$"):
            raise _refused_pattern(f"the anchor {other}", "")
        if not out or (m.group("brace") is None and m.group("op") is None):
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's PATTERN ({text}): unexpected {m.group(0).strip()!r} at character {m.start() + 1}")
        last = out[-1]
        if (last.low, last.high) != (1, 1) or not last.greedy:
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's PATTERN ({text}): a second quantifier on {last.name}")
        if m.group("brace") is not None:
            lo, hi = m.group("lo"), m.group("hi")
            low = int(lo) if lo else 0
            high = (int(hi) if hi else None) if m.group("comma") else low
            if high is not None and (high < low or high == 0):
                raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's PATTERN ({text}): {m.group('brace')} on {last.name} needs 0 <= n <= m and m >= 1")
        else:
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[m.group("op")]
        greedy = True
        if text[pos:pos + 1] == "?":  # a reluctant quantifier
            greedy, pos = False, pos + 1
        out[-1] = Variable(last.name, low, high, greedy)
    names = [v.name for v in out]
    for name in names:
        if names.count(name) > 1:
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's PATTERN ({text}) names {name} twice: pattern variables must be unique (as in Flink)")
    return out


def _refused_pattern(what: str, hint: str) -> PlanError:
    return PlanError(
        f"Flink SQL: {what} in MATCH_RECOGNIZE's PATTERN is not supported (Flink's CEP automaton, which funke shares, "
        f"has no such stage){'; ' + hint if hint else ''}"
    )


def _quantified(p: Pattern, v: Variable) -> Pattern:
    """Flink's ``applyQuantifier``: the variable's quantifier on its stage."""
    optional = (v.low, v.high) == (0, 1)
    if v.low == 0 and v.high is None:
        p = p.one_or_more().optional().consecutive()
    elif v.low == 1 and v.high is None:
        p = p.one_or_more().consecutive()
    elif optional:
        p = p.optional()
    elif v.high is not None:
        if (v.low, v.high) == (1, 1):
            return p
        p = p.times(v.low, v.high).consecutive()
    else:
        p = p.times_or_more(v.low).consecutive()
    if v.greedy and (optional or v.low == v.high):
        return p
    if v.greedy:
        return p.greedy()
    if optional:
        raise PlanError(f"Flink SQL: the reluctant optional variable {v.name}?? in MATCH_RECOGNIZE is not supported (nor in Flink)")
    return p


def is_greedy(v: Variable) -> bool:
    return v.greedy and (v.low, v.high) != (0, 1) and v.low != v.high


class DefineCondition(IterativeCondition):
    """A DEFINE condition: true when the SQL expression is TRUE for the row (NULL and FALSE are false)."""

    def __init__(self, variable: str, names: tuple[str, ...], sql: str, fn: Compiled) -> None:
        self.variable, self.names, self.sql, self.fn = variable, names, sql, fn

    def filter(self, event: Any, ctx: Any) -> bool:
        return self.fn(RowsScope(self.names, ctx, self.variable, event), None) is True

    def describe(self) -> str:
        return self.sql


class MatchRows(PatternProcessFunction):
    """ONE ROW PER MATCH: the partition columns, then the MEASURES, of each match."""

    def __init__(self, partition: tuple[str, ...], names: tuple[str, ...], measures: tuple[tuple[str, Compiled], ...]) -> None:
        self.partition, self.names, self.measures = partition, names, measures

    def process_match(self, match: dict, ctx: Any) -> Any:
        scope = MatchScope(self.names, match)
        first = next(rows[0] for rows in match.values() if rows)
        row = {p: first[p] for p in self.partition}
        for name, fn in self.measures:
            row[name] = fn(scope, None)
        yield row

    def __repr__(self) -> str:
        return f"MatchRows({', '.join((*self.partition, *(n for n, _ in self.measures)))})"


def _skip(after: exp.Expression | None, names: list[str]) -> AfterMatchSkipStrategy:
    text = after.name if after is not None else "PAST LAST ROW"  # (Flink's default)
    if text == "PAST LAST ROW":
        return AfterMatchSkipStrategy.skip_past_last_event()
    if text == "TO NEXT ROW":
        return AfterMatchSkipStrategy.skip_to_next()
    _, direction, target = text.split(" ", 2)
    target = target.strip("`")
    if target not in names:
        raise PlanError(f"Flink SQL: AFTER MATCH SKIP {text} names no pattern variable; the variables: {', '.join(names)}")
    skip = AfterMatchSkipStrategy.skip_to_first(target) if direction == "FIRST" else AfterMatchSkipStrategy.skip_to_last(target)
    return skip.throw_exception_on_miss()  # (as Flink's translation does)


@dataclass
class MatchRecognize:
    """One ``MATCH_RECOGNIZE`` clause over ``stream`` (a view with event time), lowered by :meth:`lower`."""

    node: exp.MatchRecognize
    stream: Any
    at: Callable[[exp.Expression], str]
    hide: Callable[[], str]

    def refuse(self, node: exp.Expression, what: str, hint: str = "") -> PlanError:
        return PlanError(f"Flink SQL: {what} in MATCH_RECOGNIZE (at {self.at(node)}) is not supported{'; ' + hint if hint else ''}")

    def pattern(self) -> tuple[Pattern, list[str]]:
        """The CEP pattern of PATTERN, DEFINE, AFTER MATCH SKIP and WITHIN; and the variables in order."""
        node = self.node
        pattern = node.args.get("pattern")
        variables = parse_pattern(pattern.name if pattern is not None else "")
        names = [v.name for v in variables]
        compiler = ExprCompiler(self.stream.schema, tuple(names), self.refuse, define=True)
        conditions: dict[str, DefineCondition] = {}
        for d in node.args.get("define") or []:
            name = d.alias
            if name not in names:
                raise PlanError(f"Flink SQL: DEFINE {name} at {self.at(d)} defines no variable of the PATTERN ({', '.join(names)})")
            if name in conditions:
                raise PlanError(f"Flink SQL: DEFINE {name} twice in MATCH_RECOGNIZE (at {self.at(d)})")
            compiler.defining = name
            conditions[name] = DefineCondition(name, tuple(names), d.this.sql(), compiler.compile(d.this))
        if all(v.low == 0 for v in variables):
            raise PlanError(
                f"Flink SQL: the PATTERN ({pattern.name}) in MATCH_RECOGNIZE can match no rows at all: "
                "at least one variable must not be optional (as in Flink)"
            )
        if is_greedy(variables[-1]):
            v = variables[-1]
            raise PlanError(
                f"Flink SQL: the greedy quantifier on {v.name}, the last variable of MATCH_RECOGNIZE's PATTERN, is not supported "
                f"(nor in Flink: such a match could never end): end the pattern with a single variable or a reluctant quantifier ({v.name}+?)"
            )
        skip = _skip(node.args.get("after"), names)
        try:
            p: Pattern | None = None
            for v in variables:
                p = Pattern.begin(v.name, skip) if p is None else p.next(v.name)
                if v.name in conditions:
                    p = p.where(conditions[v.name])
                p = _quantified(p, v)
            assert p is not None
            within = node.meta.get("within")
            if within is not None:
                ms = interval_ms(within)
                if ms is None:
                    raise self.refuse(within, f"WITHIN {within.sql()}", "write WITHIN INTERVAL 'n' SECOND (or MILLISECOND, MINUTE, HOUR, DAY)")
                p = p.within(ms)
            return p.validate(), names
        except MalformedPatternError as e:
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's PATTERN ({pattern.name}) (at {self.at(node)}): {e}") from None

    def lower(self) -> Any:
        from funke.cep.stream import CEP  # (the DataStream API; imported when a query needs it)

        node, stream = self.node, self.stream
        if is_updating(stream):
            raise self.refuse(node, "an updating input (a GROUP BY without a window, a Top-N, ...)", "MATCH_RECOGNIZE reads insert-only rows, as in Flink")
        rows = node.args.get("rows")
        if rows is not None and rows.name.startswith("ALL"):
            raise self.refuse(rows, "ALL ROWS PER MATCH", "ONE ROW PER MATCH runs (Flink supports no other either)")
        time = stream.node.event_time
        order = node.args.get("order")
        keys = order.expressions if order is not None else []
        if not keys:
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE (at {self.at(node)}) needs ORDER BY the view's time attribute ({time or 'none'})")
        first = keys[0]
        if isinstance(first.this, exp.Anonymous) and first.this.name.upper() == "PROCTIME" or (
            isinstance(first.this, exp.Column) and first.this.name.lower() == "proctime" and first.this.name != time
        ):
            raise self.refuse(first, "ORDER BY a processing-time attribute", "order by the view's event-time attribute (WATERMARK FOR ...)")
        if time is None:
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE (at {self.at(node)}) needs a view with event time: create it from a stream with watermarks")
        if not isinstance(first.this, exp.Column) or first.this.name != time:
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's ORDER BY {first.this.sql()} (at {self.at(first)}) must be the view's time attribute, {time}")
        if first.args.get("desc"):
            raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's ORDER BY {time} (at {self.at(first)}) must be ascending (as in Flink)")
        if len(keys) > 1:
            raise self.refuse(keys[1], "ORDER BY more columns than the time attribute", "rows of one time go in arrival order")
        partition: list[str] = []
        for c in node.args.get("partition_by") or []:
            if not isinstance(c, exp.Column) or c.table:
                raise self.refuse(c, f"PARTITION BY {c.sql()} (only columns)")
            stream.schema.field(c.name, node=f"PARTITION BY at {self.at(c)}")
            partition.append(c.name)
        pattern, names = self.pattern()
        compiler = ExprCompiler(stream.schema, tuple(names), self.refuse, define=False, time=time)
        measures: list[tuple[str, Compiled]] = []
        fields = [stream.schema.field(p, node="PARTITION BY") for p in partition]
        for m in node.args.get("measures") or []:
            e = m.this
            if not isinstance(e, exp.Alias):
                raise PlanError(f"Flink SQL: the measure {e.sql()} at {self.at(e)} needs a name: {e.sql()} AS name")
            if m.args.get("window_frame"):
                raise self.refuse(e, "RUNNING/FINAL in MEASURES", "measures are final (ONE ROW PER MATCH)")
            name = e.alias
            if name in (f.name for f in fields):
                raise PlanError(f"Flink SQL: MATCH_RECOGNIZE's output has two columns named {name} (at {self.at(e)})")
            fn = compiler.compile(e.this)
            dtype = compiler.type_of(e.this)
            if dtype is None:
                raise PlanError(
                    f"Flink SQL: funke cannot tell the type of the measure {e.this.sql()} (at {self.at(e)}): CAST it (CAST(... AS DOUBLE) AS {name})"
                )
            fields.append(Field(name, dtype))
            measures.append((name, fn))
        if partition:
            keyed = stream.key_by(partition)
        else:  # (Flink runs it on one task; funke: one constant key)
            key = self.hide()
            keyed = stream.with_column(key, Sql("0", declared="int")).key_by(key)
        function = MatchRows(tuple(partition), tuple(names), tuple(measures))
        return CEP.pattern(keyed, pattern).process(function, output_schema=Schema(tuple(fields)), name="MatchRecognize")
