"""Flink SQL's statements that wrap others, read off a script's text before it is parsed:

- ``EXPLAIN [PLAN FOR | detail[, detail ...]] statement``: the plan of a query, an ``INSERT`` or a statement set
  (the details ``ESTIMATED_COST``, ``CHANGELOG_MODE``, ``JSON_EXECUTION_PLAN``, ``PLAN_ADVICE`` are read and
  checked as Flink's parser checks them; funke's plan is one and the same for each: ``funke.plan.explain``);
- ``EXECUTE STATEMENT SET BEGIN insert; ... END`` and ``EXECUTE insert``: inserts run as one job;
- the SQL client's ``BEGIN STATEMENT SET; insert; ... END;``, in a script.

Each wrapper is blanked out of the text, its characters spaces and its line breaks kept, so the statements left
are parsed where they stand and a message's line and column are the script's.

>>> script = read_script("EXPLAIN PLAN FOR SELECT 1; EXECUTE STATEMENT SET BEGIN INSERT INTO k SELECT 'a;b'; END")
>>> script.text
"                 SELECT 1;                             INSERT INTO k SELECT 'a;b';    "
>>> script.explained, script.statement_set
([(), None], True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from funke.dialect.syntax import Flink
from funke.errors import PlanError

DETAILS = ("ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE")
_EXPLAIN = re.compile(
    rf"(?P<head>\s*EXPLAIN\s+(?:PLAN\s+FOR\s+|(?P<details>(?:{'|'.join(DETAILS)})(?:\s*,\s*(?:{'|'.join(DETAILS)}))*)\s+)?)",
    re.IGNORECASE,
)
_SET_OPEN = re.compile(r"\s*(?:EXECUTE\s+)?STATEMENT\s+SET\s+BEGIN\s", re.IGNORECASE)
_CLIENT_OPEN = re.compile(r"\s*BEGIN\s+STATEMENT\s+SET\s*$", re.IGNORECASE)
_END = re.compile(r"\s*END\s*$", re.IGNORECASE)
_EXECUTE = re.compile(r"\s*EXECUTE\s+(?=INSERT\s)", re.IGNORECASE)


@dataclass
class Script:
    """A script with its wrappers blanked (``text``), and for each statement left in it, in order, the details of
    the ``EXPLAIN`` it stood in (a tuple) or None; ``statement_set`` if a statement set's wrapper was read."""

    text: str
    explained: list[tuple[str, ...] | None]
    statement_set: bool = False


def read_script(script: str) -> Script:
    """``script``'s statements with their wrappers read off (see the module docstring)."""
    text = list(script)
    explained: list[tuple[str, ...] | None] = []
    in_set = opened = False
    set_explain: tuple[str, ...] | None = None  # (EXPLAIN STATEMENT SET BEGIN ...: each insert in it explained)
    tokens = Flink().tokenize(script)
    semicolons = [t.start for t in tokens if t.token_type.name == "SEMICOLON"]
    starts = [t.start for t in tokens if t.token_type.name != "SEMICOLON"]
    start = 0
    for end in [*semicolons, len(script)]:
        chunk = script[start:end]
        lead = min((i - start for i in starts if start <= i < end), default=0)  # (past any comment before the statement)
        at, explain = lead, None
        m = _EXPLAIN.match(chunk, lead)
        if m is not None:
            explain, at = _details(m.group("details"), chunk), m.end()
        opener = _SET_OPEN.match(chunk, at)
        if opener is not None:
            if in_set:
                raise PlanError(f"Flink SQL: a statement set inside a statement set: {' '.join(chunk.split())}")
            in_set = opened = True
            set_explain, at = explain, opener.end()
            if _SET_OPEN.match(chunk, at):
                raise PlanError(f"Flink SQL: a statement set inside a statement set: {' '.join(chunk.split())}")
        elif explain is None and _CLIENT_OPEN.match(chunk, lead):
            in_set = opened = True
            set_explain, at = None, len(chunk)
        elif explain is None and in_set and _END.match(chunk, lead):
            in_set, at = False, len(chunk)
        elif (executed := _EXECUTE.match(chunk, at)) is not None:
            at = executed.end()
        elif explain is None and in_set:
            explain = set_explain
        if at > lead:
            _blank(text, start, start + at)
        if any(start + at <= i < end for i in starts):  # (a statement is left: not only blanks and comments)
            explained.append(explain)
        elif explain is not None:
            raise PlanError(f"Flink SQL: {' '.join(chunk.split())}: EXPLAIN takes a query, an INSERT or a statement set")
        start = end + 1
    if in_set:
        raise PlanError("Flink SQL: a statement set has no END: write ... BEGIN INSERT ...; INSERT ...; END")
    return Script("".join(text), explained, opened)


def _details(text: str | None, chunk: str) -> tuple[str, ...]:
    details = tuple(d.strip().upper() for d in text.split(",")) if text else ()
    if len(set(details)) != len(details):
        raise PlanError(f"Flink SQL: {' '.join(chunk.split())}: Duplicate EXPLAIN DETAIL is not allowed")
    return details


def _blank(text: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if text[i] not in "\r\n":
            text[i] = " "


def is_wrapped(sql: str) -> bool:
    """Whether ``sql`` begins with a wrapper statement's keyword (``EXPLAIN``, ``EXECUTE``, ``BEGIN``, ``STATEMENT``),
    after any comment: what ``read_script`` reads off."""
    return re.match(r"(?:\s|--[^\n]*\n|/\*.*?\*/)*(?:EXPLAIN|EXECUTE|BEGIN|STATEMENT)\b", sql, re.IGNORECASE | re.DOTALL) is not None


def sink_names(tables: list[str]) -> list[str]:
    """The names of the columns of an INSERT's or a statement set's result, as PyFlink 2.3 names them: a column
    per table written, in the order first written; a table written twice or more is one column, ``name_1``.

    >>> sink_names(["k", "k2", "k", "k"])
    ['k_1', 'k2']
    """
    counts: dict[str, int] = {}
    for t in tables:
        counts[t] = counts.get(t, 0) + 1
    return [t if n == 1 else f"{t}_1" for t, n in counts.items()]
