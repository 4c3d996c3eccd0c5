"""What an INSERT writes into a table's columns, checked as Flink's planner and its sink's enforcer check it:
a column type Flink does not cast to implicitly is refused while planning, a NULL for a NOT NULL column fails the job.
"""

from __future__ import annotations

from collections.abc import Mapping

from funke.errors import PlanError
from funke.table.data_types import flink_name
from funke.table.ddl import TableDef

#: Flink's integer types, narrowest first: one is written into a column of its own or a wider one.
_INTEGERS = ("tinyint", "smallint", "int", "bigint")
_NUMBERS = frozenset({*_INTEGERS, "float", "double", "decimal"})
#: Per column type (its family), the query types Flink's planner writes into it without a CAST (its implicit
#: casts, ``LogicalTypeCasts.supportsImplicitCast``): checked with PyFlink 2.3, each pair of TINYINT, SMALLINT, INT,
#: BIGINT, FLOAT, DOUBLE, DECIMALs of several precisions and scales, BOOLEAN, DATE, TIMESTAMP(p), TIMESTAMP_LTZ(p),
#: BYTES and STRING. An integer column takes a narrower integer only; FLOAT any number but a DOUBLE; DOUBLE and DECIMAL
#: any number (a DECIMAL of any precision, as Flink's planner lets it through); DATE a TIMESTAMP too.
_TAKES = {
    **{t: frozenset(_INTEGERS[: n + 1]) for n, t in enumerate(_INTEGERS)},
    "float": frozenset({*_INTEGERS, "float", "decimal"}),
    "double": _NUMBERS,
    "decimal": _NUMBERS,
    "boolean": frozenset({"boolean"}),
    "date": frozenset({"date", "timestamp"}),
    "timestamp": frozenset({"timestamp"}),
    "binary": frozenset({"binary"}),
    "string": frozenset({"string"}),
}


def _family(dtype: str) -> str:
    """``dtype`` (funke's type: Spark's names) without its precision: ``decimal(10,2)`` is a ``decimal``, a
    ``varchar(n)`` or ``char(n)`` a ``string``."""
    base = dtype.split("(", 1)[0]
    return "string" if base in ("varchar", "char") else base


def casts_implicitly(given: str | None, column: str) -> bool:
    """Whether Flink's planner writes a query column of type ``given`` into a table column of type ``column`` without
    a CAST (``_TAKES``). A NULL literal (``void``), a type funke cannot tell (None) and a column type outside
    ``_TAKES`` (ARRAY, MAP, ROW, TIME: not checked) pass.

    >>> [casts_implicitly(g, "int") for g in ("tinyint", "int", "bigint", "double", "decimal(10,0)", "void", None)]
    [True, True, False, False, False, True, True]
    >>> [casts_implicitly(g, "float") for g in ("bigint", "decimal(38,18)", "double")]
    [True, True, False]
    >>> [casts_implicitly(g, "decimal(5,2)") for g in ("bigint", "double", "decimal(20,4)", "boolean")]
    [True, True, True, False]
    >>> [casts_implicitly(g, "date") for g in ("timestamp", "string")], casts_implicitly("date", "timestamp")
    ([True, False], False)
    >>> casts_implicitly("varchar(3)", "string"), casts_implicitly("int", "array<int>")
    (True, True)
    """
    takes = _TAKES.get(_family(column))
    return given is None or given == "void" or takes is None or _family(given) in takes


def flink_kind(flink: str) -> str | None:
    """A Flink type (``funke.table.flink_schema``'s text) as funke's type where ``_TAKES`` reads it (a number,
    BOOLEAN, a string, a DATE, a TIMESTAMP); None for any other (not checked).

    >>> [flink_kind(k) for k in ("INT", "CHAR(3)", "DECIMAL(13, 1)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "ARRAY<INT>", "")]
    ['int', 'char(3)', 'decimal(13,1)', 'timestamp(3)', None, None, None]
    """
    kind = flink.lower().replace(" ", "")
    family = kind.split("(", 1)[0]
    return kind if family in {*_TAKES, "varchar", "char"} else None


def check_sink_types(t: TableDef, given: Mapping[str, tuple[str, str | None]], flink: Mapping[str, tuple[str, bool]] | None = None) -> None:
    """Refuse an INSERT into ``t`` whose query gives a column a type Flink's planner does not cast to implicitly
    (``casts_implicitly``: a BIGINT such as ``COUNT(*)`` for an INT column, a DOUBLE for a FLOAT, a number for a
    STRING, a BOOLEAN for a number, ...), as Flink refuses it (``Column types of query result and sink ... do not
    match``: it casts so only when told to). ``given``: each written column's query column and its type; ``flink``:
    the query columns' Flink types (``funke.table.describe.view_columns``), for one whose type funke cannot tell yet.

    >>> t = TableDef("out", (("s", "string"),), (), None, (), "print", {}, "", declared=("VARCHAR(10)",))
    >>> check_sink_types(t, {"s": ("b", "boolean")})
    Traceback (most recent call last):
    funke.errors.PlanError: Flink SQL: INSERT INTO out: the column types of the query result and the table do not match: the query gives the VARCHAR(10) column s a BOOLEAN (the query's column b), which Flink does not cast implicitly: CAST it in the query, CAST(... AS VARCHAR(10)) (TRUE or FALSE, as Flink writes a BOOLEAN)
    >>> check_sink_types(t, {"s": ("n", "int")})
    Traceback (most recent call last):
    funke.errors.PlanError: Flink SQL: INSERT INTO out: the column types of the query result and the table do not match: the query gives the VARCHAR(10) column s an INT (the query's column n), which Flink does not cast implicitly: CAST it in the query, CAST(... AS VARCHAR(10))
    >>> [check_sink_types(t, {"s": ("x", x)}) for x in ("string", "varchar(3)", "char(2)", "void")]
    [None, None, None, None]
    >>> counts = TableDef("counts", (("n", "int"),), (), None, (), "print", {}, "", declared=("INT",))
    >>> check_sink_types(counts, {"n": ("cnt", "bigint")})
    Traceback (most recent call last):
    funke.errors.PlanError: Flink SQL: INSERT INTO counts: the column types of the query result and the table do not match: the query gives the INT column n a BIGINT (the query's column cnt), which Flink does not cast implicitly: CAST it in the query, CAST(... AS INT)
    """
    declared = dict(zip((c for c, _ in t.columns), t.declared, strict=False))
    for column, kind in t.columns:
        query_column, query_type = given.get(column, ("", None))
        query_type = query_type or flink_kind((flink or {}).get(query_column, ("",))[0])
        if not casts_implicitly(query_type, kind):
            assert query_type is not None
            sink_type = declared.get(column, flink_name(kind, summary=True))
            hint = " (TRUE or FALSE, as Flink writes a BOOLEAN)" if query_type == "boolean" and _family(kind) == "string" else ""
            name = flink_name(query_type, summary=True)
            article = "an" if name[0] in "AEIOU" else "a"
            raise PlanError(
                f"Flink SQL: INSERT INTO {t.name}: the column types of the query result and the table do not match: the query "
                f"gives the {sink_type} column {column} {article} {name} (the query's column {query_column}), which Flink "
                f"does not cast implicitly: CAST it in the query, CAST(... AS {sink_type}){hint}"
            )


def not_null_check(table: str, column: str, value: str) -> str:
    """Spark SQL of ``value`` (SQL) written to a NOT NULL column: a NULL fails the job naming the column (Flink's
    ``table.exec.sink.not-null-enforcer``, ERROR, its default)."""
    message = f"Flink SQL: column {column} of table {table} is NOT NULL, however, a null value is being written into it (Flink: table.exec.sink.not-null-enforcer = ERROR)"
    quoted = message.replace("'", "''")
    return f"IF({value} IS NULL, RAISE_ERROR('{quoted}'), {value})"
