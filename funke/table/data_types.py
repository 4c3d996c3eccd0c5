"""Flink SQL's data types for Python functions: PyFlink's ``DataTypes`` and Flink type strings, as the
Spark type each one is in funke (``funke.plan.types``: ``bigint``, ``array<string>``, ``struct<a:int>``).

A function's ``result_type`` (and ``input_types``) may be either form, as in PyFlink. ``FLOAT`` is a
4-byte float (Spark's ``float``), ``DOUBLE`` an 8-byte one, as in Flink.

>>> DataTypes.ROW([DataTypes.FIELD("word", DataTypes.STRING()), DataTypes.FIELD("n", DataTypes.BIGINT())]).spark_type
'struct<word:string,n:bigint>'
>>> spark_type("MAP<STRING, ARRAY<FLOAT>>"), spark_type(DataTypes.DECIMAL(10, 2)), spark_type("TIMESTAMP_LTZ(3)")
('map<string,array<float>>', 'decimal(10,2)', 'timestamp')
>>> spark_type("ROW<a INT, b STRING>"), field_names("ROW<a INT, b STRING>")
('struct<a:int,b:string>', ('a', 'b'))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError

from funke.dialect.syntax import Flink
from funke.errors import PlanError, UnsupportedError
from funke.plan.types import split_top_level, struct_fields

_T = exp.DataType.Type
#: Flink's atomic types (as sqlglot reads them), as funke's (Spark's) types.
_ATOMIC = {
    _T.BIGINT: "bigint", _T.INT: "int", _T.SMALLINT: "smallint", _T.TINYINT: "tinyint", _T.BOOLEAN: "boolean",
    _T.DOUBLE: "double", _T.FLOAT: "float", _T.TEXT: "string", _T.VARCHAR: "string", _T.CHAR: "string",
    _T.TIMESTAMP: "timestamp", _T.TIMESTAMPLTZ: "timestamp", _T.DATE: "date", _T.VARBINARY: "binary", _T.BINARY: "binary",
}  # fmt: skip


@dataclass(frozen=True)
class DataType:
    """A Flink SQL data type (PyFlink's ``DataType``): ``flink`` is how Flink SQL writes it, ``spark_type``
    the column type it is in funke."""

    flink: str
    spark_type: str
    nullable: bool = True

    def not_null(self) -> DataType:
        return type(self)(**{**self.__dict__, "nullable": False})

    def as_summary_string(self) -> str:
        """How Flink SQL writes the type (``INT NOT NULL``, ``ARRAY<STRING>``): what schemas print."""
        return self.flink + ("" if self.nullable else " NOT NULL")

    def __repr__(self) -> str:
        """PyFlink's: its logical type's class and parameters (``IntType(false)``, ``VarCharType(2147483647, true)``)."""
        return _class_form(self.flink, self.nullable)

    def __str__(self) -> str:
        """PyFlink's: the type's name, without parameters (``INT``, ``VARCHAR`` for a STRING, ``ROW``)."""
        form = repr(self)
        return self.flink if form.startswith("DataType(") else form.split("(", 1)[0].removesuffix("Type").upper()


@dataclass(frozen=True)
class RowField:
    """``DataTypes.FIELD(name, type)``: one field of a ROW."""

    name: str
    data_type: DataType
    description: str | None = None

    def __repr__(self) -> str:
        return f"RowField({self.name}, {self.data_type!r}, {'...' if self.description is None else self.description})"

    def __str__(self) -> str:
        return f"RowField({self.name}, {self.data_type})"


@dataclass(frozen=True, repr=False)
class RowType(DataType):
    """``DataTypes.ROW([FIELD(...), ...])``."""

    fields: tuple[RowField, ...] = field(default=())

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def __repr__(self) -> str:
        return f"RowType({','.join(map(repr, self.fields))})" if self.fields else super().__repr__()

    def field_types(self) -> list[DataType]:
        return [f.data_type for f in self.fields]


@dataclass(frozen=True, repr=False)
class ArrayType(DataType):
    element_type: DataType | None = None


@dataclass(frozen=True, repr=False)
class MultisetType(DataType):
    element_type: DataType | None = None


@dataclass(frozen=True, repr=False)
class MapType(DataType):
    key_type: DataType | None = None
    value_type: DataType | None = None


class DataTypes:
    """PyFlink's ``DataTypes``: each method gives a ``DataType``. ``INTERVAL`` and ``RAW`` have no column type in
    funke, and no method here."""

    @staticmethod
    def NULL() -> DataType:
        return DataType("NULL", "void")

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> DataType:
        return DataType("BOOLEAN", "boolean", nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> DataType:
        return DataType("TINYINT", "tinyint", nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> DataType:
        return DataType("SMALLINT", "smallint", nullable)

    @staticmethod
    def INT(nullable: bool = True) -> DataType:
        return DataType("INT", "int", nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> DataType:
        return DataType("BIGINT", "bigint", nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> DataType:
        """A 4-byte float (Spark's ``float``), as in Flink."""
        return DataType("FLOAT", "float", nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DataType:
        return DataType("DOUBLE", "double", nullable)

    @staticmethod
    def DECIMAL(precision: int = 10, scale: int = 0, nullable: bool = True) -> DataType:
        return DataType(f"DECIMAL({precision}, {scale})", f"decimal({precision},{scale})", nullable)

    @staticmethod
    def STRING(nullable: bool = True) -> DataType:
        return DataType("STRING", "string", nullable)

    @staticmethod
    def VARCHAR(length: int = 2**31 - 1, nullable: bool = True) -> DataType:
        """A string (funke does not cut it to ``length``, Spark's strings have none)."""
        return DataType(f"VARCHAR({length})", "string", nullable)

    @staticmethod
    def CHAR(length: int = 1, nullable: bool = True) -> DataType:
        """A string (funke does not pad it to ``length``)."""
        return DataType(f"CHAR({length})", "string", nullable)

    @staticmethod
    def BYTES(nullable: bool = True) -> DataType:
        return DataType("BYTES", "binary", nullable)

    @staticmethod
    def BINARY(length: int = 1, nullable: bool = True) -> DataType:
        return DataType(f"BINARY({length})", "binary", nullable)

    @staticmethod
    def VARBINARY(length: int = 2**31 - 1, nullable: bool = True) -> DataType:
        return DataType(f"VARBINARY({length})", "binary", nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DataType:
        return DataType("DATE", "date", nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:
        """A timestamp (Spark's, microseconds; funke's columns of Flink's ``TIMESTAMP(p)`` are the same)."""
        return DataType(f"TIMESTAMP({precision})", "timestamp", nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> DataType:
        return DataType(f"TIMESTAMP_LTZ({precision})", "timestamp", nullable)

    TIMESTAMP_WITH_LOCAL_TIME_ZONE = TIMESTAMP_LTZ

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> ArrayType:
        t = _data_type(element_type)
        return ArrayType(f"ARRAY<{t.as_summary_string()}>", f"array<{t.spark_type}>", nullable, element_type=t)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> MapType:
        k, v = _data_type(key_type), _data_type(value_type)
        return MapType(f"MAP<{k.as_summary_string()}, {v.as_summary_string()}>", f"map<{k.spark_type},{v.spark_type}>", nullable, key_type=k, value_type=v)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None) -> RowField:
        return RowField(name, _data_type(data_type), description)

    @staticmethod
    def ROW(row_fields: Sequence[RowField] = (), nullable: bool = True) -> RowType:
        fields = tuple(row_fields)
        for f in fields:
            if not isinstance(f, RowField):
                raise PlanError(f"DataTypes.ROW takes DataTypes.FIELD(name, type)s, got {f!r}")
        flink = f"ROW<{', '.join(f'`{f.name}` {f.data_type.as_summary_string()}' for f in fields)}>"
        spark = f"struct<{','.join(f'{f.name}:{f.data_type.spark_type}' for f in fields)}>"
        return RowType(flink, spark, nullable, fields=fields)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> DataType:
        """A time of day: Spark's TIME, of milliseconds at most, as Flink's runtime keeps (``funke.table.time_of_day``)."""
        return DataType(f"TIME({precision})", f"time({min(precision, 3)})", nullable)

    @staticmethod
    def MULTISET(element_type: DataType, nullable: bool = True) -> MultisetType:
        """A bag of values with their counts (``COLLECT``'s type), in funke a MAP of each value to its count, as Flink
        keeps one: ``map<string,int>`` of STRINGs; a value is a dict (``{'a': 2}``)."""
        t = _data_type(element_type)
        return MultisetType(f"MULTISET<{t.as_summary_string()}>", f"map<{t.spark_type},int>", nullable, element_type=t)


#: Flink's logical type classes (PyFlink's ``repr``) by SQL name, with the defaults of their parameters.
_CLASSES = {
    "BOOLEAN": ("BooleanType", ()), "TINYINT": ("TinyIntType", ()), "SMALLINT": ("SmallIntType", ()),
    "INT": ("IntType", ()), "INTEGER": ("IntType", ()), "BIGINT": ("BigIntType", ()), "FLOAT": ("FloatType", ()),
    "DOUBLE": ("DoubleType", ()), "DECIMAL": ("DecimalType", ("10", "0")), "STRING": ("VarCharType", (str(2**31 - 1),)),
    "VARCHAR": ("VarCharType", ("1",)), "CHAR": ("CharType", ("1",)), "BYTES": ("VarBinaryType", (str(2**31 - 1),)),
    "VARBINARY": ("VarBinaryType", ("1",)), "BINARY": ("BinaryType", ("1",)), "DATE": ("DateType", ()),
    "TIME": ("TimeType", ("0",)), "TIMESTAMP": ("TimestampType", ("6",)),
    "TIMESTAMP_LTZ": ("LocalZonedTimestampType", ("6",)), "NULL": ("NullType", ()),
    "ARRAY": ("ArrayType", ()), "MAP": ("MapType", ()), "MULTISET": ("MultisetType", ()), "ROW": ("RowType", ()),
}  # fmt: skip
_TYPE_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),])")


def _class_form(text: str, nullable: bool) -> str:
    """PyFlink's ``repr`` of the type Flink SQL writes ``text``.

    >>> _class_form("ROW<`a` INT NOT NULL, `b` ARRAY<STRING>>", True)
    'RowType(RowField(a, IntType(false), ...),RowField(b, ArrayType(VarCharType(2147483647, true), true), ...))'
    >>> _class_form("DECIMAL(10, 2)", False), _class_form("TIMESTAMP_LTZ(3)", True)
    ('DecimalType(10, 2, false)', 'LocalZonedTimestampType(3, true)')
    """
    tokens = _TYPE_TOKEN.findall(text)
    try:
        form, rest = _read_class_form(tokens)
    except (IndexError, KeyError, ValueError):
        rest = ["?"]
    if rest or "".join(tokens) != re.sub(r"\s+", "", text):  # (a type text in a form not read here: Flink SQL's words)
        return f"DataType({text})"
    return form.replace("@", "true" if nullable else "false")


def _read_class_form(tokens: list[str]) -> tuple[str, list[str]]:
    """One type off the front of ``tokens``: its class form, its own nullability an ``@`` still to fill."""
    name, tokens = tokens[0].upper(), tokens[1:]
    cls, params = _CLASSES[name]
    if tokens[:1] == ["("]:
        end = tokens.index(")")
        params, tokens = tuple(t for t in tokens[1:end] if t != ","), tokens[end + 1 :]
    if name == "TIMESTAMP" and [t.upper() for t in tokens[:4]] == ["WITH", "LOCAL", "TIME", "ZONE"]:
        cls, tokens = _CLASSES["TIMESTAMP_LTZ"][0], tokens[4:]
    inner: list[str] = []
    if tokens[:1] == ["<"]:
        tokens = tokens[1:]
        while tokens[0] != ">":
            field = ""
            if name == "ROW":
                field, tokens = tokens[0].strip("`").replace("``", "`"), tokens[1:]
            form, tokens = _read_class_form(tokens)
            form, tokens = _nullability(form, tokens)
            inner.append(f"RowField({field}, {form}, ...)" if name == "ROW" else form)
            tokens = tokens[1:] if tokens[0] == "," else tokens
        tokens = tokens[1:]
    if name == "ROW":
        return f"RowType({','.join(inner)})", tokens
    if name == "NULL":
        return "NullType(true)", tokens
    return f"{cls}({', '.join([*inner, *params, '@'])})", tokens


def _nullability(form: str, tokens: list[str]) -> tuple[str, list[str]]:
    if [t.upper() for t in tokens[:2]] == ["NOT", "NULL"]:
        return form.replace("@)", "false)"), tokens[2:]
    return form.replace("@)", "true)"), tokens


def _data_type(t: Any) -> DataType:
    if isinstance(t, DataType):
        return t
    if isinstance(t, str):
        spark = spark_type(t)
        return DataType(t.strip().upper(), spark)
    raise PlanError(f"expected a DataType (DataTypes.BIGINT(), ...) or a Flink SQL type string ('BIGINT'), got {t!r}")


def spark_type(t: DataType | str) -> str:
    """The funke (Spark) column type of a ``DataType`` or a Flink SQL type string."""
    if isinstance(t, DataType):
        return t.spark_type
    if not isinstance(t, str) or not t.strip():
        raise PlanError(f"expected a DataType (DataTypes.BIGINT(), ...) or a Flink SQL type string ('BIGINT'), got {t!r}")
    text = re.sub(r"\bBYTES\b", "VARBINARY", t.strip(), flags=re.IGNORECASE)
    try:
        parsed = exp.DataType.build(text, dialect=Flink)
    except (ParseError, ValueError):
        raise PlanError(
            f"cannot read the type {t!r}: write a Flink SQL type such as 'BIGINT', 'ARRAY<STRING>' or 'ROW<a INT, b STRING>'"
        ) from None
    return _spark(parsed, t)


def _spark(kind: exp.DataType, text: str) -> str:
    if kind.this == _T.STRUCT:
        parts = [f"{f.name}:{_spark(f.args['kind'], text)}" for f in kind.expressions if isinstance(f, exp.ColumnDef)]
        if len(parts) != len(kind.expressions) or not parts:
            raise PlanError(f"cannot read the type {text!r}: a ROW needs named fields, ROW<name type, ...>")
        return f"struct<{','.join(parts)}>"
    if kind.this == _T.ARRAY and len(kind.expressions) == 1:
        return f"array<{_spark(kind.expressions[0], text)}>"
    if kind.this == _T.MAP and len(kind.expressions) == 2:
        return f"map<{_spark(kind.expressions[0], text)},{_spark(kind.expressions[1], text)}>"
    if kind.this == _T.DECIMAL:
        params = [p.name for p in kind.expressions]
        return f"decimal({','.join(params)})" if len(params) == 2 else f"decimal({params[0]},0)" if params else "decimal(10,0)"
    if kind.this == _T.TIME:  # (Flink's runtime keeps milliseconds at most)
        return f"time({min(int(kind.expressions[0].name), 3) if kind.expressions else 0})"
    if kind.this not in _ATOMIC:
        raise UnsupportedError(f"the type {kind.sql()} (in {text!r}) is not supported by funke's Python functions")
    return _ATOMIC[kind.this]


def field_names(t: DataType | str) -> tuple[str, ...]:
    """The field names of a ROW type (empty for any other type)."""
    return tuple(struct_fields(spark_type(t)))


def flink_name(spark: str, *, summary: bool = False) -> str:
    """How Flink SQL writes funke's column type ``spark`` (for messages); with ``summary``, as Flink's DESCRIBE and
    ``print_schema`` write it (``LogicalType.asSummaryString``): a ROW's field names quoted, one space after each comma.

    >>> flink_name("bigint"), flink_name("array<string>"), flink_name("struct<a:int>")
    ('BIGINT', 'ARRAY<STRING>', 'ROW<a INT>')
    >>> flink_name("map<string,int>", summary=True), flink_name("decimal(10,2)", summary=True)
    ('MAP<STRING, INT>', 'DECIMAL(10, 2)')
    >>> flink_name("array<map<string,struct<x:int,y:decimal(10,2)>>>", summary=True)
    'ARRAY<MAP<STRING, ROW<`x` INT, `y` DECIMAL(10, 2)>>>'
    """
    spark = spark.strip() if summary else spark
    if spark.startswith("array<"):
        return f"ARRAY<{flink_name(spark[6:-1], summary=summary)}>"
    if spark.startswith("struct<"):
        fields = struct_fields(spark).items()
        name = (lambda n: f"`{n.strip().replace('`', '``')}`") if summary else (lambda n: n)
        return f"ROW<{', '.join(f'{name(n)} {flink_name(t, summary=summary)}' for n, t in fields)}>"
    if spark.startswith("map<"):
        k, v = split_top_level(spark[4:-1])
        return f"MAP<{flink_name(k, summary=summary)}, {flink_name(v, summary=summary)}>"
    text = {"binary": "BYTES", "timestamp": "TIMESTAMP(6)"}.get(spark, spark.upper())
    return text.replace(",", ", ") if summary else text  # (DECIMAL(10, 2))
