"""funke's view of a schema: ordered (name, type) pairs, no pyspark needed.

Types are Spark's simple type strings (``string``, ``bigint``, ``timestamp``, ...), so a
schema prints the way Spark users read it and converts to Spark losslessly. ``None``
means "not known until Spark resolves it" (a SQL-string expression): checks that need
the type run again at compile time against Spark's resolved schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from funke.errors import SchemaError, did_you_mean

_ALIASES = {
    "long": "bigint",
    "integer": "int",
    "short": "smallint",
    "byte": "tinyint",
    "bool": "boolean",
    "str": "string",
    "text": "string",
    "real": "float",
    "float64": "double",
    "int64": "bigint",
    "datetime": "timestamp",
    "timestamp_ltz": "timestamp",
}
INTEGRAL = frozenset({"tinyint", "smallint", "int", "bigint"})
#: Each integer type's width in bits: its values are -2**(bits - 1) to 2**(bits - 1) - 1.
INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
NUMERIC = INTEGRAL | {"float", "double"}


def integer_range(dtype: str) -> tuple[int, int]:
    """The smallest and largest value of an integer type (``INTEGER_BITS``'s).

    >>> integer_range("tinyint"), integer_range("bigint")[0]
    ((-128, 127), -9223372036854775808)
    """
    half = 1 << (INTEGER_BITS[dtype] - 1)
    return -half, half - 1


def truncated_division(a: int, b: int) -> int:
    """``a / b`` of two integers as Java, Flink and Spark divide them: toward zero (Python's ``//`` floors).

    >>> truncated_division(-7, 2), truncated_division(7, -2), -7 // 2
    (-3, -3, -4)
    """
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def normalize_type(t: str | None) -> str | None:
    if t is None:
        return None
    t = t.strip()
    if "<" in t:  # complex types, spelled as Spark's simpleString(); a struct's field names keep their case
        return re.sub(r"\s+", "", re.sub(r"(?<![A-Za-z0-9_`])[A-Za-z_][A-Za-z0-9_]*(?=\s*[<>,(]|\s*$)", lambda m: m.group(0).lower(), t))
    t = t.lower()
    if "(" in t:  # decimal types
        return re.sub(r"\s+", "", t)
    return _ALIASES.get(t, t)


def is_numeric(t: str | None) -> bool:
    return t is not None and (t in NUMERIC or t.startswith("decimal"))


def decimal_digits(dtype: str | None) -> tuple[int, int] | None:
    """The precision and scale ``(p, s)`` of a ``decimal(p,s)`` type; None for another type.

    >>> decimal_digits("decimal(10,2)"), decimal_digits("decimal(38, 0)"), decimal_digits("bigint")
    ((10, 2), (38, 0), None)
    """
    if dtype is None or not dtype.startswith("decimal("):
        return None
    p, s = dtype[len("decimal(") : -1].split(",")
    return int(p), int(s)


def widest_decimal(digits: list[tuple[int, int]]) -> tuple[int, int]:
    """The DECIMAL that holds each of ``digits`` (precision, scale): the most digits on each side of the point,
    as Flink and Spark widen them (a VALUES column, CASE, COALESCE).

    >>> widest_decimal([(2, 1), (4, 2), (3, 0)])
    (5, 2)
    """
    scale = max(s for _, s in digits)
    return max(p - s for p, s in digits) + scale, scale


def decimal_arithmetic(op: str, left: tuple[int, int], right: tuple[int, int]) -> tuple[int, int]:
    """The precision and scale of DECIMALs' ``left <op> right`` (op one of ``+ - * / %``): Flink's rules, which are
    Spark's (the SQL Server/Hive ones), 38 digits at most, the integer digits kept and the scale cut, to 6 at least.

    >>> decimal_arithmetic("+", (2, 1), (4, 2)), decimal_arithmetic("/", (10, 0), (3, 1))
    ((5, 2), (17, 6))
    """
    (p1, s1), (p2, s2) = left, right
    if op in "+-":
        scale = max(s1, s2)
        precision = max(p1 - s1, p2 - s2) + scale + 1
    elif op == "*":
        scale, precision = s1 + s2, p1 + p2 + 1
    elif op == "/":
        scale = max(6, s1 + p2 + 1)
        precision = p1 - s1 + s2 + scale
    else:
        scale = max(s1, s2)
        precision = min(p1 - s1, p2 - s2) + scale
    if precision > 38:
        scale = max(38 - (precision - scale), min(scale, 6))
        precision = 38
    return precision, scale


def decimal_scale(dtype: str | None) -> int | None:
    """The scale ``s`` of a ``decimal(p,s)`` type; None for another type.

    >>> decimal_scale("decimal(10,2)"), decimal_scale("decimal(38, 0)"), decimal_scale("bigint")
    (2, 0, None)
    """
    digits = decimal_digits(dtype)
    return digits[1] if digits is not None else None


@dataclass(frozen=True)
class Field:
    name: str
    dtype: str | None
    nullable: bool = True

    def __str__(self) -> str:
        return f"{self.name} {self.dtype or '?'}"


@dataclass(frozen=True)
class Schema:
    fields: tuple[Field, ...]

    @classmethod
    def of(cls, spec: Schema | str | type | Iterable[tuple[str, str | None]] | None) -> Schema | None:
        """A schema from a DDL string, (name, type) pairs, or a dataclass / pydantic model / TypedDict class."""
        if spec is None or isinstance(spec, Schema):
            return spec
        if isinstance(spec, str):
            return parse_ddl(spec)
        from funke.plan.pytypes import is_typed_class, schema_of_class

        if is_typed_class(spec):
            return schema_of_class(spec)  # type: ignore[arg-type]
        return cls(tuple(Field(n, normalize_type(t)) for n, t in spec))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def get(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def field(self, name: str, *, node: str) -> Field:
        """The named field, or a SchemaError that names the node and lists what exists."""
        f = self.get(name)
        if f is None:
            raise SchemaError(f"{node}: unknown column '{name}'{did_you_mean(name, self.names)}")
        return f

    def ddl(self) -> str:
        return ", ".join(f"{f.name} {f.dtype or 'string'}" for f in self.fields)

    def __str__(self) -> str:
        return ", ".join(map(str, self.fields))

    def select(self, names: Iterable[str]) -> Schema:
        return Schema(tuple(self.field(n, node="select") for n in names))

    def without(self, names: Iterable[str]) -> Schema:
        drop = set(names)
        return Schema(tuple(f for f in self.fields if f.name not in drop))

    def with_field(self, field: Field) -> Schema:
        """Replace a field of the same name in place, or append it (Spark's withColumn)."""
        if field.name in self:
            return Schema(tuple(field if f.name == field.name else f for f in self.fields))
        return Schema((*self.fields, field))


def split_top_level(s: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def struct_fields(dtype: str | None) -> dict[str, str]:
    """A ``struct<a:t,b:u>`` type's fields and their types, in order ({} for any other type).

    >>> struct_fields("struct<id:bigint,price:decimal(23,3),at:struct<t:timestamp>>")
    {'id': 'bigint', 'price': 'decimal(23,3)', 'at': 'struct<t:timestamp>'}
    >>> struct_fields("bigint")
    {}
    """
    if dtype is None or not dtype.startswith("struct<") or not dtype.endswith(">"):
        return {}
    return dict(f.split(":", 1) for f in split_top_level(dtype[len("struct<") : -1]) if ":" in f)


_FIELD = re.compile(r"^\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s*:?\s+(.+?)\s*(not\s+null)?\s*$", re.IGNORECASE)


def parse_ddl(ddl: str) -> Schema:
    """``"key string, value long"`` → Schema.

    >>> parse_ddl("key string, value long").names
    ('key', 'value')
    """
    fields = []
    for part in split_top_level(ddl):
        m = _FIELD.match(part)
        if not m:
            raise SchemaError(f"cannot read schema field {part.strip()!r} in {ddl!r}: write 'name type', e.g. 'value bigint'")
        fields.append(Field(m.group(1), normalize_type(m.group(2)), nullable=not m.group(3)))
    if not fields:
        raise SchemaError(f"empty schema {ddl!r}: write e.g. 'key string, value bigint'")
    names = [f.name for f in fields]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SchemaError(f"schema {ddl!r} names {', '.join(dupes)} more than once")
    return Schema(tuple(fields))


def python_type_name(value: object) -> str | None:
    """The Spark type a Python value would get (for probing functions' outputs)."""
    import datetime as dt

    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, (bytes, bytearray)):
        return "binary"
    return type(value).__name__


def compatible(value_type: str | None, declared: str | None) -> bool:
    """Can a Python value of ``value_type`` be stored in a ``declared`` column without loss of meaning?"""
    if value_type is None or declared is None:
        return True
    if value_type == declared:
        return True
    if value_type == "bigint" and (declared in NUMERIC or declared.startswith("decimal")):
        return True
    if value_type == "double" and declared in ("float", "double"):
        return True
    if value_type == "timestamp" and declared in ("timestamp", "timestamp_ntz"):
        return True
    return False


def held(value: object, declared: str | None) -> bool:
    """Can a column of ``declared`` hold ``value``, a row's value given in Python (``from_collection``, PyFlink's
    ``from_elements``): ``compatible``, or a Decimal for a DECIMAL, a tuple, list or ``Row`` for a ROW, a list or
    tuple for an ARRAY, a dict for a MAP, a ``datetime.time`` for a TIME, as PyFlink takes them (their fields and elements checked by Spark as it
    stores them)."""
    kind = python_type_name(value)
    return compatible(kind, declared) or (declared or "").startswith(_CONTAINERS.get(kind or "", ()))


#: The containers ``held`` takes for a declared type's prefix.
_CONTAINERS: dict[str, tuple[str, ...]] = {
    "Decimal": ("decimal",), "list": ("array<", "struct<"), "tuple": ("array<", "struct<"), "Row": ("struct<",),
    "dict": ("map<", "struct<"), "time": ("time(",),
}  # fmt: skip
