"""PyFlink's ``Types``: what a stream's values are, and what that changes where PyFlink serializes them.

In PyFlink, Python values pass between chained Python functions as they are; where they cross
into Java (a source, a shuffle after ``key_by``, a union, a Java sink such as ``print()`` of a
non-row type, ``execute_and_collect``) they are serialized with their declared type and come back
converted: a ``FLOAT`` through float32, a ``ROW`` as a :class:`Row` with field names, a
``TUPLE`` as a tuple. funke's translation applies :meth:`TypeInformation.from_python` at exactly
those places, and prints a Java-printed type with :meth:`TypeInformation.java_string` (Java's
``toString``). Each type also names the Spark type of a column holding it (``sql_type``), for
connectors.

>>> Types.FLOAT().from_python(1.1)
1.100000023841858
>>> Types.TUPLE([Types.STRING(), Types.FLOAT()]).java_string(("a", 1.1))
'(a,1.1)'
>>> Types.ROW_NAMED(["id", "v"], [Types.INT(), Types.DOUBLE()]).from_python((1, 2.5))
Row(id=1, v=2.5)
>>> Types.DOUBLE().java_string(1e8), Types.DOUBLE().java_string(0.001), Types.DOUBLE().java_string(1e-4)
('1.0E8', '0.001', '1.0E-4')
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import struct
from typing import Any

from funke.pyflink.common.time import Instant
from funke.pyflink.common.types import Row
from funke.semantics.java_text import java_float

__all__ = [
    "BasicArrayTypeInfo",
    "BasicTypeInfo",
    "ListTypeInfo",
    "MapTypeInfo",
    "PickledBytesTypeInfo",
    "RowTypeInfo",
    "SqlTimeTypeInfo",
    "TupleTypeInfo",
    "TypeInformation",
    "Types",
]


class TypeInformation:
    """A value type. ``from_python`` gives a value as PyFlink's serializer gives it back."""

    #: The Spark SQL type of a column holding such values (None: only Python holds them).
    sql_type: str | None = None

    def from_python(self, value: Any) -> Any:
        return value

    def converter(self) -> Any:
        """``from_python`` as a function that is quick for a value already of the type (the common case)."""
        return self.from_python

    def java_string(self, value: Any) -> str:
        """The value as Java's ``toString`` prints it (``print()`` of a type Java prints)."""
        return "null" if value is None else str(value)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def _wrong(t: TypeInformation, value: Any) -> TypeError:
    return TypeError(f"a value declared {t!r} cannot be {type(value).__name__} {value!r}")


class BasicTypeInfo(TypeInformation):
    """``Types.STRING()``, ``INT()``, ``FLOAT()`` ... (Java's boxed basic types)."""

    _RANGES = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}
    _SQL = {
        "STRING": "string", "BYTE": "tinyint", "BOOLEAN": "boolean", "SHORT": "smallint", "INT": "int", "LONG": "bigint",
        "FLOAT": "float", "DOUBLE": "double", "CHAR": "string", "BIG_INT": "decimal(38,0)", "BIG_DEC": "decimal(38,18)",
        "INSTANT": "timestamp",
    }  # fmt: skip

    def __init__(self, name: str) -> None:
        self.name = name
        self.sql_type = self._SQL[name]

    def __repr__(self) -> str:
        return f"Types.{self.name}()"

    def from_python(self, value: Any) -> Any:
        if value is None:
            return None
        n = self.name
        if n in ("STRING", "CHAR"):
            if not isinstance(value, str):
                raise _wrong(self, value)
            return value
        if n in self._RANGES:
            if not isinstance(value, int):
                raise _wrong(self, value)
            bits = self._RANGES[n]
            if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
                raise OverflowError(f"{value} does not fit {self!r} ({bits}-bit)")
            return int(value)
        if n == "BOOLEAN":
            if not isinstance(value, (bool, int)):
                raise _wrong(self, value)
            return bool(value)
        if n == "FLOAT":
            return float32(value)
        if n == "DOUBLE":
            if not isinstance(value, (int, float)):
                raise _wrong(self, value)
            return float(value)
        if n == "BIG_INT":
            return int(value)
        if n == "BIG_DEC":
            return value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        if n == "INSTANT" and not isinstance(value, Instant):
            raise _wrong(self, value)
        return value

    def converter(self) -> Any:
        slow, n = self.from_python, self.name
        if n in ("STRING", "CHAR"):
            return lambda v: v if type(v) is str else slow(v)
        if n in self._RANGES:
            lo, hi = -(1 << (self._RANGES[n] - 1)), 1 << (self._RANGES[n] - 1)
            return lambda v: v if type(v) is int and lo <= v < hi else slow(v)
        if n == "DOUBLE":
            return lambda v: v if type(v) is float else slow(v)
        if n == "BOOLEAN":
            return lambda v: v if type(v) is bool else slow(v)
        return slow

    def java_string(self, value: Any) -> str:
        if value is None:
            return "null"
        if self.name == "BOOLEAN":
            return "true" if value else "false"
        if self.name == "FLOAT":
            return java_float(value, single=True)
        if self.name == "DOUBLE":
            return java_float(value, single=False)
        if self.name == "INSTANT":
            return _java_instant(value)
        return str(value)


class SqlTimeTypeInfo(TypeInformation):
    """``Types.SQL_DATE()``, ``SQL_TIME()``, ``SQL_TIMESTAMP()`` (``date``, ``time``, ``datetime``)."""

    _PY = {"DATE": dt.date, "TIME": dt.time, "TIMESTAMP": dt.datetime}

    def __init__(self, name: str) -> None:
        self.name = name
        self.sql_type = {"DATE": "date", "TIME": None, "TIMESTAMP": "timestamp"}[name]

    def __repr__(self) -> str:
        return f"Types.SQL_{self.name}()"

    def from_python(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, self._PY[self.name]) or (self.name == "DATE" and isinstance(value, dt.datetime)):
            raise _wrong(self, value)
        return value

    def java_string(self, value: Any) -> str:
        if value is None:
            return "null"
        if self.name == "TIMESTAMP":  # java.sql.Timestamp: nanoseconds without trailing zeros, at least ".0"
            fraction = f"{value.microsecond:06d}000".rstrip("0") or "0"
            return f"{value:%Y-%m-%d %H:%M:%S}.{fraction}"
        if self.name == "TIME":
            return f"{value:%H:%M:%S}"
        return value.isoformat()


class PickledBytesTypeInfo(TypeInformation):
    """``Types.PICKLED_BYTE_ARRAY()``: any picklable Python object (the type of values with no declared type)."""

    sql_type = "binary"

    def __repr__(self) -> str:
        return "Types.PICKLED_BYTE_ARRAY()"


class RowTypeInfo(TypeInformation):
    """``Types.ROW([...])`` / ``Types.ROW_NAMED(names, [...])``: a :class:`Row` (positional rows get names f0, f1, ...)."""

    def __init__(self, field_types: list[TypeInformation], field_names: list[str] | None = None) -> None:
        self.field_types = list(field_types)
        self._names = list(field_names) if field_names is not None else None
        if self._names is not None and len(self._names) != len(self.field_types):
            raise ValueError(f"ROW_NAMED: {len(self._names)} names for {len(self.field_types)} types")

    @property
    def named(self) -> bool:
        return self._names is not None

    def get_field_names(self) -> list[str]:
        return self._names if self._names is not None else [f"f{i}" for i in range(len(self.field_types))]

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    def get_field_index(self, field_name: str) -> int:
        return self.get_field_names().index(field_name)

    @property
    def sql_type(self) -> str | None:  # type: ignore[override]
        inner = [t.sql_type for t in self.field_types]
        if any(t is None for t in inner):
            return None
        return "struct<" + ",".join(f"{n}:{t}" for n, t in zip(self.get_field_names(), inner)) + ">"

    def __repr__(self) -> str:
        if self._names is None:
            return f"Types.ROW([{', '.join(map(repr, self.field_types))}])"
        return f"Types.ROW_NAMED({self._names!r}, [{', '.join(map(repr, self.field_types))}])"

    def from_python(self, value: Any) -> Any:
        if value is None:
            return None
        names = self.get_field_names()
        if isinstance(value, Row):
            values = value.get_fields_by_names(names) if "_fields" in value.__dict__ and self._names is not None else list(value)
            kind = value.get_row_kind()
        elif isinstance(value, (tuple, list)):
            values, kind = list(value), None
        else:
            raise _wrong(self, value)
        if len(values) != len(self.field_types):
            raise TypeError(f"{self!r} has {len(self.field_types)} fields; got {len(values)}: {value!r}")
        row = Row(*(t.from_python(v) for t, v in zip(self.field_types, values)))
        row.set_field_names(names)
        if kind is not None:
            row.set_row_kind(kind)
        return row

    def java_string(self, value: Any) -> str:  # org.apache.flink.types.Row#toString, nested in a Java-printed value
        if value is None:
            return "null"
        fields = ", ".join(t.java_string(v) for t, v in zip(self.field_types, value))
        return f"{value.get_row_kind() if isinstance(value, Row) else '+I'}[{fields}]"


class TupleTypeInfo(TypeInformation):
    """``Types.TUPLE([...])``: a Python tuple (Flink's ``Tuple1`` ... ``Tuple25``, printed ``(a,1)``)."""

    def __init__(self, field_types: list[TypeInformation]) -> None:
        self.field_types = list(field_types)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    @property
    def sql_type(self) -> str | None:  # type: ignore[override]
        inner = [t.sql_type for t in self.field_types]
        return None if any(t is None for t in inner) else "struct<" + ",".join(f"f{i}:{t}" for i, t in enumerate(inner)) + ">"

    def __repr__(self) -> str:
        return f"Types.TUPLE([{', '.join(map(repr, self.field_types))}])"

    def from_python(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, (tuple, list, Row)):
            raise _wrong(self, value)
        values = list(value)
        if len(values) != len(self.field_types):
            raise TypeError(f"{self!r} has {len(self.field_types)} fields; got {len(values)}: {value!r}")
        return tuple(t.from_python(v) for t, v in zip(self.field_types, values))

    def converter(self) -> Any:
        """A tuple of the right length converted field by field, in one generated expression."""
        n, slow = len(self.field_types), self.from_python
        scope: dict[str, Any] = {f"c{i}": t.converter() for i, t in enumerate(self.field_types)}
        scope["slow"] = slow
        fields = ", ".join(f"c{i}(v[{i}])" for i in range(n)) + ("," if n == 1 else "")
        exec(f"def convert(v):\n    if type(v) is tuple and len(v) == {n}:\n        return ({fields})\n    return slow(v)", scope)  # noqa: S102
        return scope["convert"]

    def java_string(self, value: Any) -> str:
        return "(" + ",".join(t.java_string(v) for t, v in zip(self.field_types, value)) + ")"


class ListTypeInfo(TypeInformation):
    """``Types.LIST(element_type)``: a list (Java's ``List``, printed ``[1, 2]``)."""

    def __init__(self, element_type: TypeInformation) -> None:
        self.element_type = element_type

    @property
    def sql_type(self) -> str | None:  # type: ignore[override]
        return None if self.element_type.sql_type is None else f"array<{self.element_type.sql_type}>"

    def __repr__(self) -> str:
        return f"Types.LIST({self.element_type!r})"

    def from_python(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
            raise _wrong(self, value)
        return [self.element_type.from_python(v) for v in value]

    def java_string(self, value: Any) -> str:
        return "null" if value is None else "[" + ", ".join(self.element_type.java_string(v) for v in value) + "]"


class BasicArrayTypeInfo(ListTypeInfo):
    """``Types.BASIC_ARRAY`` / ``PRIMITIVE_ARRAY`` / ``OBJECT_ARRAY``: a list (``bytes`` for a byte array).

    Java prints an array by identity (``[I@1b6d3586``), so such a line is never the same twice, in
    PyFlink either; funke prints the same form with a hash of the contents."""

    _PREFIX = {"tinyint": "[B", "smallint": "[S", "int": "[I", "bigint": "[J", "float": "[F", "double": "[D", "boolean": "[Z"}

    def __init__(self, element_type: TypeInformation, kind: str) -> None:
        super().__init__(element_type)
        self.kind = kind

    def __repr__(self) -> str:
        return f"Types.{self.kind}({self.element_type!r})"

    def from_python(self, value: Any) -> Any:
        if self.kind == "PRIMITIVE_ARRAY" and getattr(self.element_type, "name", None) == "BYTE":
            if value is None or isinstance(value, bytes):
                return value
            return bytes(value)
        return super().from_python(value)

    def java_string(self, value: Any) -> str:
        if value is None:
            return "null"
        sql = self.element_type.sql_type or ""
        prefix = self._PREFIX.get(sql, "[Ljava.lang.Object;") if self.kind == "PRIMITIVE_ARRAY" else "[Ljava.lang.Object;"
        return f"{prefix}@{abs(hash(repr(value))) & 0xFFFFFFF:x}"


class MapTypeInfo(TypeInformation):
    """``Types.MAP(key_type, value_type)``: a dict (Java's ``HashMap``, printed ``{a=1, b=2}`` in its order)."""

    def __init__(self, key_type: TypeInformation, value_type: TypeInformation) -> None:
        self.key_type, self.value_type = key_type, value_type

    @property
    def sql_type(self) -> str | None:  # type: ignore[override]
        k, v = self.key_type.sql_type, self.value_type.sql_type
        return None if k is None or v is None else f"map<{k},{v}>"

    def __repr__(self) -> str:
        return f"Types.MAP({self.key_type!r}, {self.value_type!r})"

    def from_python(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise _wrong(self, value)
        return {self.key_type.from_python(k): self.value_type.from_python(v) for k, v in value.items()}

    def java_string(self, value: Any) -> str:
        if value is None:
            return "null"
        items = [(self.key_type.java_string(k), self.value_type.java_string(v), k) for k, v in value.items()]
        ordered = java_hash_map_order([k for _, _, k in items])
        return "{" + ", ".join(f"{items[i][0]}={items[i][1]}" for i in ordered) + "}"


class Types:
    """PyFlink's ``Types``: the type informations of values."""

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo("STRING")

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo("BYTE")

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo("BOOLEAN")

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo("SHORT")

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo("INT")

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo("LONG")

    @staticmethod
    def FLOAT() -> TypeInformation:
        return BasicTypeInfo("FLOAT")

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo("DOUBLE")

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo("CHAR")

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo("BIG_INT")

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo("BIG_DEC")

    @staticmethod
    def INSTANT() -> TypeInformation:
        return BasicTypeInfo("INSTANT")

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return SqlTimeTypeInfo("DATE")

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return SqlTimeTypeInfo("TIME")

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return SqlTimeTypeInfo("TIMESTAMP")

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: list[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: list[str], field_types: list[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: list[TypeInformation]) -> TupleTypeInfo:
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return BasicArrayTypeInfo(element_type, "PRIMITIVE_ARRAY")

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return BasicArrayTypeInfo(element_type, "BASIC_ARRAY")

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return BasicArrayTypeInfo(element_type, "OBJECT_ARRAY")

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type_info)


# -- what Java would make of Python values -------------------------------------------------------

_F32 = struct.Struct("f")


def float32(value: Any) -> float | None:
    """``value`` through a Java ``float`` (PyFlink's FLOAT coder): the nearest float32, as a Python float."""
    if value is None:
        return None
    if not isinstance(value, (int, float)):
        raise TypeError(f"a value declared Types.FLOAT() cannot be {type(value).__name__} {value!r}")
    try:
        return _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _java_instant(value: Instant) -> str:
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=value.seconds)
    nanos = value.nanos
    fraction = "" if nanos == 0 else "." + (f"{nanos:09d}".rstrip("0").ljust(3 * -(-len(f'{nanos:09d}'.rstrip('0')) // 3), "0"))
    return f"{moment:%Y-%m-%dT%H:%M:%S}{fraction}Z"


def _java_hash(key: Any) -> int | None:
    """Java's ``hashCode`` of a String, Integer, Long or Boolean key (None for others)."""
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if -(1 << 31) <= key < 1 << 31:
            return key
        return (key ^ (key >> 32)) & 0xFFFFFFFF
    if isinstance(key, str):
        h = 0
        for unit in key.encode("utf-16-be"), :
            for i in range(0, len(unit), 2):
                h = (31 * h + int.from_bytes(unit[i : i + 2], "big")) & 0xFFFFFFFF
        return h
    return None


def java_hash_map_order(keys: list[Any]) -> list[int]:
    """Positions of ``keys`` (inserted in this order) in a ``java.util.HashMap``'s iteration order:
    by bucket (the spread hash modulo the table size, 16 doubling at 3/4 full), then insertion.
    Keys Java's hash is not known for keep their order."""
    hashes = [_java_hash(k) for k in keys]
    if any(h is None for h in hashes):
        return list(range(len(keys)))
    size = 16
    while len(keys) > size * 3 // 4:
        size *= 2
    spread = [(h ^ (h >> 16)) & (size - 1) for h in hashes]  # type: ignore[operator]
    return sorted(range(len(keys)), key=lambda i: (spread[i], i))
