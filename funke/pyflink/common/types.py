"""PyFlink's ``Row`` and ``RowKind``: a fixed-length, null-aware row of named or positional fields.

Behaves as PyFlink's (``pyflink.common.types``): built from positional or keyword values, read by
position, name or attribute, a change kind (``+I``, ``-U``, ``+U``, ``-D``), ``Row("a", "b")`` as a
row class, and PyFlink's text forms.

>>> r = Row(name="Alice", age=11)
>>> r
Row(name='Alice', age=11)
>>> (r.name, r["age"], r[0], "age" in r)
('Alice', 11, 'Alice', True)
>>> Row(1, "x")
<Row(1, 'x')>
>>> Person = Row("name", "age")
>>> Person("Bob", 3)
Row(name='Bob', age=3)
>>> str(Row.of_kind(RowKind.DELETE, 1).get_row_kind())
'-D'
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["Row", "RowKind"]


class RowKind(enum.Enum):
    """A row's kind of change in a changelog (Flink's ``RowKind``); ``str()`` is its short form."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def __str__(self) -> str:
        return _SHORT[self]

    @staticmethod
    def of_short(short: str | None) -> RowKind:
        """The kind a changelog's row kind column names (``+I``, ``-U``, ``+U``, ``-D``); none: an insert."""
        return _BY_SHORT.get(short, RowKind.INSERT)  # type: ignore[arg-type]


_SHORT = {RowKind.INSERT: "+I", RowKind.UPDATE_BEFORE: "-U", RowKind.UPDATE_AFTER: "+U", RowKind.DELETE: "-D"}
_BY_SHORT = {short: kind for kind, short in _SHORT.items()}
_SLOTS = frozenset({"_fields", "_values", "_row_kind", "_from_dict"})


def _make(fields: list[str] | None, values: tuple[Any, ...], kind: RowKind) -> Row:
    row = Row(*values)
    if fields is not None:
        row.set_field_names(list(fields))
    row.set_row_kind(kind)
    return row


class Row:
    """A row of fields: ``Row(1, "x")`` (positional) or ``Row(id=1, name="x")`` (named, in the order given)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            self._fields = list(kwargs)
            self._values = [kwargs[k] for k in self._fields]
            self._from_dict = True
        else:
            self._values = list(args)
            self._from_dict = False
        self._row_kind = RowKind.INSERT

    # -- PyFlink's methods ------------------------------------------------------------
    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        if "_fields" not in self.__dict__:
            raise TypeError("Cannot convert a Row class into dict")

        def plain(v: Any) -> Any:
            if isinstance(v, Row):
                return v.as_dict(True)
            if isinstance(v, list):
                return [plain(x) for x in v]
            if isinstance(v, dict):
                return {k: plain(x) for k, x in v.items()}
            return v

        return {k: (plain(v) if recursive else v) for k, v in zip(self._fields, self._values)}

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        self._row_kind = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        self._fields = list(field_names)

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        fields = self.__dict__.get("_fields")
        if fields is None or list(names) == fields:
            return list(self._values)
        missing = [n for n in names if n not in fields]
        if missing:
            raise Exception(f"Field names {missing} not exist in {fields}.")
        return [self._values[fields.index(n)] for n in names]

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    # -- access ---------------------------------------------------------------------
    def __call__(self, *args: Any) -> Row:
        """A row of this row class's field names (``Row("name", "age")("Bob", 3)``)."""
        if len(args) > len(self):
            raise ValueError(f"Can not create Row with fields {self}, expected {len(self)} values but got {args}")
        return _make(list(self._values), args, self._row_kind)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, slice)):
            return self._values[item]
        fields = self.__dict__.get("_fields") or []
        if item not in fields:
            raise ValueError(item)
        return self._values[fields.index(item)]

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, (int, slice)):
            self._values[key] = value
            return
        fields = self.__dict__.get("_fields")
        if fields is None:
            raise KeyError(key)
        if key not in fields:
            raise ValueError(value)
        self._values[fields.index(key)] = value

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        fields = self.__dict__.get("_fields") or []
        if item not in fields:
            raise AttributeError(item)
        return self._values[fields.index(item)]

    def __setattr__(self, key: str, value: Any) -> None:
        if key not in _SLOTS:
            raise AttributeError(key)
        self.__dict__[key] = value

    def __contains__(self, item: Any) -> bool:
        fields = self.__dict__.get("_fields")
        return item in (fields if fields is not None else self._values)

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __reduce__(self) -> Any:
        return _make, (self.__dict__.get("_fields"), tuple(self._values), self._row_kind)

    def __repr__(self) -> str:
        fields = self.__dict__.get("_fields")
        if fields is not None:
            return "Row({})".format(", ".join(f"{k}={v!r}" for k, v in zip(fields, self._values)))
        return "<Row({})>".format(", ".join(repr(v) for v in self._values))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row) or type(self) is not type(other) or self._row_kind != other._row_kind:
            return False
        mine, theirs = self.__dict__.get("_fields"), other.__dict__.get("_fields")
        if (mine is None) != (theirs is None):
            return False
        if mine is None:
            return self._values == other._values
        if sorted(mine) != sorted(theirs):
            return False
        return all(self[k] == other[k] for k in mine)

    def __hash__(self) -> int:
        return hash(tuple(self._values))
