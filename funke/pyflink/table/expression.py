"""PyFlink's ``pyflink.table.expression``: the ``Expression`` class (funke's, from ``expressions``) and the
enums its functions take: ``TimePointUnit`` (``timestamp_diff``), ``TimeIntervalUnit``, ``JsonOnNull``
(``json_object``, ``json_array`` and their aggregates) and the JSON functions' other options, by PyFlink's
member names."""

from __future__ import annotations

from enum import Enum

from funke.pyflink.table.expressions import Expression


class TimeIntervalUnit(Enum):
    YEAR, YEAR_TO_MONTH, QUARTER, MONTH, WEEK, DAY, DAY_TO_HOUR, DAY_TO_MINUTE, DAY_TO_SECOND = range(9)
    HOUR, SECOND, HOUR_TO_MINUTE, HOUR_TO_SECOND, MINUTE, MINUTE_TO_SECOND = range(9, 15)


class TimePointUnit(Enum):
    YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, QUARTER, WEEK, MILLISECOND, MICROSECOND = range(10)


class JsonType(Enum):
    VALUE, SCALAR, ARRAY, OBJECT = range(4)


class JsonExistsOnError(Enum):
    TRUE, FALSE, UNKNOWN, ERROR = range(4)


class JsonValueOnEmptyOrError(Enum):
    NULL, ERROR, DEFAULT = range(3)


class JsonQueryWrapper(Enum):
    WITHOUT_ARRAY, CONDITIONAL_ARRAY, UNCONDITIONAL_ARRAY = range(3)


class JsonQueryOnEmptyOrError(Enum):
    NULL, EMPTY_ARRAY, EMPTY_OBJECT, ERROR = range(4)


class JsonOnNull(Enum):
    NULL, ABSENT = range(2)


__all__ = [  # noqa: RUF022 (PyFlink's order)
    "Expression", "TimeIntervalUnit", "TimePointUnit", "JsonType", "JsonExistsOnError", "JsonValueOnEmptyOrError",
    "JsonQueryWrapper", "JsonQueryOnEmptyOrError",
]  # fmt: skip
