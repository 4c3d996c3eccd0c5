"""Flink's catalog namespace as funke has it: one in-memory catalog, ``default_catalog``, with one database,
``default_database`` (Flink's defaults), where a session's tables, views and functions live.

A table's name may be plain (``orders``) or qualified as Flink resolves it against the current catalog and
database: ``default_database.orders``, ``default_catalog.default_database.orders``. ``USE CATALOG
default_catalog`` and ``USE default_database`` are accepted (they are current already). Another catalog or
database is refused, naming it: funke keeps nothing beyond the session, so it has no ``CREATE CATALOG`` or
``CREATE DATABASE``.

The SHOW statements answer as Flink's do, a one-column table each: ``SHOW CATALOGS``, ``SHOW DATABASES``,
``SHOW CURRENT CATALOG``, ``SHOW CURRENT DATABASE``, ``SHOW TABLES`` (tables and views, as Flink's
``listTables``), ``SHOW VIEWS``, ``SHOW FUNCTIONS`` and ``SHOW USER FUNCTIONS``, the last four with ``FROM`` /
``IN`` a database and ``[NOT] LIKE`` a pattern. ``DESCRIBE t``, ``DESC t`` and ``SHOW COLUMNS FROM t [[NOT]
LIKE ...]`` answer with Flink's six columns (``funke.table.describe``).

>>> show_statement("SHOW TABLES LIKE 'o%'")
Show(what='TABLES', like='o%', negated=False, table=None)
>>> show_statement("SHOW CURRENT  database;")
Show(what='CURRENT DATABASE', like=None, negated=False, table=None)
>>> show_statement("DESC default_database.orders"), show_statement("show columns in `orders` not like 'p%'")
(Show(what='COLUMNS', like=None, negated=False, table='orders'), Show(what='COLUMNS', like='p%', negated=True, table='orders'))
>>> use_statement("USE CATALOG default_catalog"), use_statement("use `default_catalog`.default_database")
(('default_catalog', None), ('default_catalog', 'default_database'))
>>> like("o%", ["orders", "bids", "o"]), like("%s", ["orders", "bids"], negated=True)
(['orders', 'o'], [])
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from funke.errors import UnsupportedError

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"

_NAME = r"(?:`[^`]+`|[\w$]+)"
_USE = re.compile(rf"^\s*USE\s+(?:(?P<catalog>CATALOG)\s+)?(?P<path>{_NAME}(?:\s*\.\s*{_NAME})?)\s*;?\s*$", re.IGNORECASE)
_LIKE = r"(?:\s+(?P<negated>NOT\s+)?LIKE\s+'(?P<like>(?:[^']|'')*)')?\s*;?\s*$"
_SHOW = re.compile(
    r"^\s*SHOW\s+(?P<what>CATALOGS|DATABASES|TABLES|VIEWS|FUNCTIONS|USER\s+FUNCTIONS|CURRENT\s+CATALOG|CURRENT\s+DATABASE)"
    rf"(?:\s+(?:FROM|IN)\s+(?P<database>{_NAME}(?:\s*\.\s*{_NAME})?))?{_LIKE}",
    re.IGNORECASE,
)
_COLUMNS = re.compile(
    rf"^\s*(?:(?:DESCRIBE|DESC)\s+(?P<described>{_NAME}(?:\s*\.\s*{_NAME}){{0,2}})\s*;?\s*$"
    rf"|SHOW\s+COLUMNS\s+(?:FROM|IN)\s+(?P<table>{_NAME}(?:\s*\.\s*{_NAME}){{0,2}}){_LIKE})",
    re.IGNORECASE,
)
_STATEMENT = re.compile(r"^\s*(SHOW|USE|CREATE\s+CATALOG|DROP\s+CATALOG|DESCRIBE|DESC)\b", re.IGNORECASE)
_CATALOG = re.compile(rf"^\s*(?P<verb>CREATE|DROP)\s+CATALOG\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(?P<name>{_NAME})", re.IGNORECASE)

#: Each SHOW statement's one column, as Flink names it.
COLUMNS = {
    "CATALOGS": "catalog name",
    "DATABASES": "database name",
    "CURRENT CATALOG": "current catalog name",
    "CURRENT DATABASE": "current database name",
    "TABLES": "table name",
    "VIEWS": "view name",
    "FUNCTIONS": "function name",
    "USER FUNCTIONS": "function name",
}


@dataclass(frozen=True)
class Show:
    what: str
    like: str | None = None
    negated: bool = False
    #: ``COLUMNS`` (DESCRIBE, SHOW COLUMNS): the table's or view's name.
    table: str | None = None


def is_namespace_statement(text: str) -> bool:
    """``text`` is a SHOW, USE, CREATE CATALOG or DROP CATALOG statement (which sqlglot does not parse as Flink means them)."""
    return bool(_STATEMENT.match(text))


def catalog_statement(text: str) -> tuple[str, str] | None:
    """``(CREATE or DROP, the catalog)`` of a ``CREATE CATALOG`` or ``DROP CATALOG`` statement (its caller refuses
    it), or None for another statement."""
    m = _CATALOG.match(text)
    return (m.group("verb").upper(), _unquote(m.group("name"))) if m else None


def _unquote(part: str) -> str:
    part = part.strip()
    return part[1:-1] if part.startswith("`") else part


def _path(text: str) -> list[str]:
    return [_unquote(p) for p in re.findall(_NAME, text)]


def check(catalog: str | None, database: str | None, where: str) -> None:
    """Refuse a catalog or database other than Flink's defaults, naming it."""
    if catalog is not None and catalog != DEFAULT_CATALOG:
        raise UnsupportedError(
            f"Flink SQL: {where} names the catalog {catalog!r}: funke has Flink's default in-memory catalog only, "
            f"{DEFAULT_CATALOG} (no CREATE CATALOG); leave the catalog out or write {DEFAULT_CATALOG}"
        )
    if database is not None and database != DEFAULT_DATABASE:
        raise UnsupportedError(
            f"Flink SQL: {where} names the database {database!r}: funke has Flink's default database only, "
            f"{DEFAULT_DATABASE} (no CREATE DATABASE); leave the database out or write {DEFAULT_DATABASE}"
        )


def object_name(table: exp.Table, where: str) -> str:
    """A table's or view's name in the one database: ``t``, ``default_database.t`` or
    ``default_catalog.default_database.t``; any other qualifier refused."""
    catalog, database = table.args.get("catalog"), table.args.get("db")
    check(catalog.name if catalog else None, database.name if database else None, where)
    return table.name


def use_statement(text: str) -> tuple[str, str | None] | None:
    """``USE CATALOG c`` -> ``(c, None)``; ``USE [c.]d`` -> ``(c or the default catalog, d)``; None for another statement."""
    m = _USE.match(text)
    if m is None:
        return None
    path = _path(m.group("path"))
    if m.group("catalog"):
        if len(path) != 1:
            raise UnsupportedError(f"Flink SQL: {text.strip()}: USE CATALOG takes one catalog name")
        return path[0], None
    return (path[0], path[1]) if len(path) == 2 else (DEFAULT_CATALOG, path[0])


def show_statement(text: str) -> Show | None:
    """A SHOW (or DESCRIBE) statement funke answers, or None when ``text`` is not one (another SHOW is refused by
    its caller)."""
    m = _COLUMNS.match(text)
    if m is not None:
        path = _path(m.group("described") or m.group("table"))
        check(*([None] * (3 - len(path)) + path)[:2], text.strip())
        like_pattern = m.group("like")
        return Show("COLUMNS", _unquoted_like(like_pattern), bool(m.group("negated")), path[-1])
    m = _SHOW.match(text)
    if m is None:
        return None
    what = " ".join(m.group("what").upper().split())
    if m.group("database"):
        path = _path(m.group("database"))
        check(path[0] if len(path) == 2 else None, path[-1], f"{text.strip()}")
    return Show(what, _unquoted_like(m.group("like")), bool(m.group("negated")))


def _unquoted_like(pattern: str | None) -> str | None:
    return pattern.replace("''", "'") if pattern is not None else None


def like(pattern: str | None, names: list[str], *, negated: bool = False) -> list[str]:
    """``names`` that match SQL's LIKE ``pattern`` (``%`` any run, ``_`` one character; case-sensitive, as Flink's)."""
    if pattern is None:
        return names
    regex = re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern) + r"\Z", re.DOTALL)
    return [n for n in names if bool(regex.match(n)) != negated]


def refuse_statement(text: str) -> UnsupportedError:
    """A SHOW, DESCRIBE or USE statement funke does not answer."""
    shown = ", ".join(f"SHOW {w}" for w in COLUMNS)
    return UnsupportedError(
        f"Flink SQL: {' '.join(text.split())[:80]} is not supported by funke; it answers {shown} "
        f"(TABLES, VIEWS and FUNCTIONS with FROM/IN and [NOT] LIKE), DESCRIBE t, SHOW COLUMNS FROM t [[NOT] LIKE] "
        f"and USE [CATALOG] of Flink's defaults, {DEFAULT_CATALOG}.{DEFAULT_DATABASE}"
    )

