"""Flink SQL's ``s [NOT] LIKE 'pattern' [ESCAPE 'c']`` with Flink's meaning, for a pattern that is a literal.

Spark's LIKE differs in two ways: it reads ``\\`` as an escape character where Flink has none unless ``ESCAPE``
names one, and its ``_`` matches a line break, where Flink's (Java's ``.``) matches no line terminator (``\\n``,
``\\r``, U+0085, U+2028, U+2029). funke writes the pattern as the Java regex Flink matches it with (``%`` any
characters, ``_`` one that is no line terminator, the rest as written) and runs Spark's ``RLIKE`` over the whole
string. An escape character before anything but ``%``, ``_`` or itself, at the end of the pattern, or an ESCAPE of
other than one character is refused, as Flink's planner refuses it. A pattern that is no literal runs Spark's LIKE
(docs/sql.md says how it differs).

>>> flink_regex("C:\\\\%", None), flink_regex("a!_b.%", "!")
('^C:\\\\\\\\(?s:.*)\\\\z', '^a_b\\\\.(?s:.*)\\\\z')
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from funke.errors import PlanError

#: Characters Java's regex reads as its own: written after a backslash.
_SPECIAL = frozenset("\\^$.|?*+()[]{}")
#: LIKE's wildcards as Java regex: ``%`` any characters, ``_`` one that is no line terminator.
_WILDCARDS = {"%": "(?s:.*)", "_": "."}


def flink_regex(pattern: str, escape: str | None) -> str:
    """The Java regex Flink matches a LIKE pattern with, anchored at both ends of the string."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape:
            if i + 1 == len(pattern) or pattern[i + 1] not in ("%", "_", escape):
                raise PlanError(f"Flink SQL: the LIKE pattern {pattern!r} has an invalid escape sequence at {i + 1} (ESCAPE {escape!r}), as Flink says")
            i += 1
            c = pattern[i]  # (escaped: the character as written)
        elif c in _WILDCARDS:
            out.append(_WILDCARDS[c])
            i += 1
            continue
        out.append("\\" + c if c in _SPECIAL else c)
        i += 1
    return "^" + "".join(out) + "\\z"


def like(n: exp.Expression, lowered: Callable[[exp.Expression], exp.Expression]) -> exp.Expression | None:
    """``n`` (a LIKE, or an ESCAPE around one) as Spark's RLIKE of Flink's regex, its string ``lowered``; None for
    a pattern that is no string literal (Spark's LIKE runs)."""
    escape = None
    if isinstance(n, exp.Escape):
        if not isinstance(n.this, exp.Like):
            return None
        if not (isinstance(n.expression, exp.Literal) and n.expression.is_string):
            return None
        escape = n.expression.name
        if len(escape) != 1:
            raise PlanError(f"Flink SQL: the ESCAPE of LIKE must be one character, as in Flink, not {escape!r}")
        n = n.this
    if not isinstance(n, exp.Like) or not (isinstance(n.expression, exp.Literal) and n.expression.is_string):
        return None
    matched = exp.RegexpLike(this=lowered(n.this), expression=exp.Literal.string(flink_regex(n.expression.name, escape)))
    return exp.Not(this=exp.Paren(this=matched)) if n.args.get("negate") else matched
