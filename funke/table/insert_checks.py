"""What an INSERT writes into a table's columns, checked as Flink's planner and its sink's enforcer check it:
a column type Flink does not cast to implicitly is refused while planning, a NULL for a NOT NULL column fails the job.
"""

from __future__ import annotations

from collections.abc import Mapping

from funke.errors import PlanError
from funke.table.data_types import flink_name
from funke.table.ddl import TableDef


def check_sink_types(t: TableDef, given: Mapping[str, tuple[str, str | None]]) -> None:
    """Refuse an INSERT into ``t`` whose query gives a character string column (``STRING``, ``VARCHAR(n)``, ``CHAR(n)``)
    anything but a character string (a number, a BOOLEAN, a time, BYTES, ...), as Flink's planner does (``Column types
    of query result and sink ... do not match``: Flink casts to a string only when told to). A NULL literal is let
    through (Flink refuses it as an illegal use of NULL). ``given``: each written column's query column and its type.

    >>> t = TableDef("out", (("s", "string"),), (), None, (), "print", {}, "", declared=("VARCHAR(10)",))
    >>> check_sink_types(t, {"s": ("b", "boolean")})
    Traceback (most recent call last):
    funke.errors.PlanError: Flink SQL: INSERT INTO out: the column types of the query result and the table do not match: the query gives the VARCHAR(10) column s a BOOLEAN (the query's column b), which Flink does not cast implicitly: CAST it in the query, CAST(... AS VARCHAR(10)) (TRUE or FALSE, as Flink writes a BOOLEAN)
    >>> check_sink_types(t, {"s": ("n", "int")})
    Traceback (most recent call last):
    funke.errors.PlanError: Flink SQL: INSERT INTO out: the column types of the query result and the table do not match: the query gives the VARCHAR(10) column s an INT (the query's column n), which Flink does not cast implicitly: CAST it in the query, CAST(... AS VARCHAR(10))
    >>> [check_sink_types(t, {"s": ("x", x)}) for x in ("string", "varchar(3)", "char(2)", "void")]
    [None, None, None, None]
    """
    declared = dict(zip((c for c, _ in t.columns), t.declared, strict=False))
    for column, kind in t.columns:
        query_column, query_type = given.get(column, ("", None))
        if kind == "string" and query_type not in (None, "string", "void") and not query_type.startswith(("varchar(", "char(")):
            sink_type = declared.get(column, "STRING")
            hint = " (TRUE or FALSE, as Flink writes a BOOLEAN)" if query_type == "boolean" else ""
            name = flink_name(query_type)
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
