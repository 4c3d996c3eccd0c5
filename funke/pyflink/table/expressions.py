"""PyFlink's expression DSL (``pyflink.table.expressions``): ``col``, ``lit``, ``call`` and the methods and
operators of an ``Expression``, each written as the Flink SQL it stands for, so a Table API call plans as
its SQL does (``funke.table``): ``col('a') + 1`` is ``(`a` + 1)``, ``col('v').sum`` is ``SUM(`v`)``,
``col('d').json_value('$.x', DataTypes.BIGINT())`` is ``CAST(JSON_VALUE(`d`, '$.x') AS BIGINT)``.

A method PyFlink has and funke does not translate is refused when it is called, naming it.

>>> from funke.pyflink.table.expressions import col, lit
>>> name_of = lambda f: f.name
>>> (col("a") + 1).to_sql(name_of), col("v").sum.alias("total").to_sql(name_of)
('(`a` + 1)', 'SUM(`v`) AS `total`')
>>> (col("a") == lit("x")).to_sql(name_of), col("k").count.distinct.to_sql(name_of)
("(`a` = 'x')", 'COUNT(DISTINCT `k`)')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funke.errors import PlanError, UnsupportedError
from funke.table.data_types import DataType
from funke.table.udf import sql_literal, sql_of

NameOf = Callable[[Any], str]

#: Aggregate properties (``col('v').sum``) and the SQL function each is.
_AGGREGATES = {
    "count": "COUNT", "sum": "SUM", "sum0": "SUM", "min": "MIN", "max": "MAX", "avg": "AVG",
    "stddev_pop": "STDDEV_POP", "stddev_samp": "STDDEV_SAMP", "var_pop": "VAR_POP", "var_samp": "VAR_SAMP",
    "collect": "COLLECT", "first_value": "FIRST_VALUE", "last_value": "LAST_VALUE", "array_agg": "ARRAY_AGG",
}  # fmt: skip
#: PyFlink's properties that are a SQL function of the expression (``col('s').upper_case`` is ``UPPER(s)``).
_UNARY = {
    **{name: name.upper() for name in (
        "exp", "log10", "log2", "ln", "cosh", "sinh", "sin", "cos", "tan", "cot", "asin", "acos", "atan", "tanh",
        "degrees", "radians", "sqrt", "abs", "sign", "bin", "hex", "unhex", "char_length", "from_base64", "to_base64",
        "ascii", "chr", "reverse", "cardinality", "element", "map_keys", "map_values", "map_entries", "md5", "sha1",
        "sha224", "sha256", "sha384", "sha512",
    )},
    "upper_case": "UPPER", "lower_case": "LOWER", "init_cap": "INITCAP",
}  # fmt: skip
#: PyFlink's other properties, as SQL templates of the expression ``{0}``.
_PROPERTIES = {
    "is_null": "({0} IS NULL)", "is_not_null": "({0} IS NOT NULL)", "is_true": "({0} IS TRUE)",
    "is_false": "({0} IS FALSE)", "is_not_true": "({0} IS NOT TRUE)", "is_not_false": "({0} IS NOT FALSE)",
    "to_date": "CAST({0} AS DATE)", "to_time": "CAST({0} AS TIME)", "to_timestamp": "CAST({0} AS TIMESTAMP(3))",
    "asc": "{0} ASC", "desc": "{0} DESC",
}  # fmt: skip
#: PyFlink's methods that are a SQL function of the expression and the method's arguments, each with the most
#: arguments it takes (None: any); an optional argument not given is left out, as PyFlink leaves it out.
_CALLS: dict[str, tuple[str, int | None]] = {
    **{name: (name.upper(), most) for name, most in (
        ("concat", 1), ("truncate", 1), ("substr", 2), ("replace", 2), ("translate", 2), ("lpad", 2), ("rpad", 2),
        ("regexp", 1), ("regexp_count", 1), ("regexp_replace", 2), ("regexp_extract", 2), ("regexp_extract_all", 2),
        ("regexp_instr", 1), ("regexp_substr", 1), ("decode", 1), ("encode", 1), ("left", 1), ("right", 1),
        ("instr", 1), ("locate", 2), ("url_decode", 0), ("url_encode", 0), ("inet_aton", 0), ("inet_ntoa", 0),
        ("parse_url", 2), ("printf", None), ("ltrim", 1), ("rtrim", 1), ("btrim", 1), ("repeat", 1),
        ("split_index", 2), ("str_to_map", 2), ("elt", None), ("array_append", 1), ("array_contains", 1),
        ("array_distinct", 0), ("array_position", 1), ("array_prepend", 1), ("array_remove", 1),
        ("array_reverse", 0), ("array_slice", 2), ("array_sort", 2), ("array_union", 1), ("array_concat", None),
        ("array_max", 0), ("array_join", 2), ("array_min", 0), ("array_except", 1), ("array_intersect", 1),
        ("split", 1), ("map_union", None), ("sha2", 1), ("json_quote", 0), ("json_unquote", 0),
    )},
    "starts_with": ("STARTSWITH", 1), "ends_with": ("ENDSWITH", 1),
}  # fmt: skip
#: TimeIntervalUnit's names as Flink SQL spells the unit (``EXTRACT(DAY FROM ts)``, ``FLOOR(ts TO HOUR)``).
_INTERVAL_UNITS = {
    "YEAR_TO_MONTH": "YEAR TO MONTH", "DAY_TO_HOUR": "DAY TO HOUR", "DAY_TO_MINUTE": "DAY TO MINUTE",
    "DAY_TO_SECOND": "DAY TO SECOND", "HOUR_TO_MINUTE": "HOUR TO MINUTE", "HOUR_TO_SECOND": "HOUR TO SECOND",
    "MINUTE_TO_SECOND": "MINUTE TO SECOND",
}  # fmt: skip
#: Interval units of ``lit(n).seconds`` and the like, in milliseconds.
_INTERVALS = {
    "milli": 1, "millis": 1, "second": 1000, "seconds": 1000, "minute": 60_000, "minutes": 60_000,
    "hour": 3_600_000, "hours": 3_600_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip
#: Window properties (``col('w').start``), as the group window's names them (funke.table.windows).
_WINDOW_PROPERTIES = ("start", "end", "rowtime", "proctime")


def _sql(value: Any, name_of: NameOf) -> str:
    if isinstance(value, Expression):
        return value.to_sql(name_of)
    if isinstance(value, str):  # (a Python string in an expression is a string literal, as in PyFlink)
        return sql_literal(value)
    return sql_of(value, name_of)


class Expression:
    """One Table API expression: a SQL template (``{0}``, ``{1}``, ... its operands) and its operands."""

    def __init__(self, template: str, *operands: Any, alias: str | None = None, aggregate: str | None = None) -> None:
        self._template, self._operands, self._alias, self._aggregate = template, operands, alias, aggregate

    def to_sql(self, name_of: NameOf) -> str:
        text = self._template.format(*(_sql(o, name_of) for o in self._operands))
        return f"{text} AS `{self._alias}`" if self._alias else text

    def _bare(self) -> Expression:
        return Expression(self._template, *self._operands, aggregate=self._aggregate) if self._alias else self

    # -- naming and types ------------------------------------------------------------------------
    def alias(self, name: str, *extra_names: str) -> Expression:
        if extra_names:
            raise UnsupportedError(
                f"alias({name!r}, {', '.join(map(repr, extra_names))}) of an expression: funke names one column per "
                "expression; several names are for a table function's call (split.alias('a', 'b'))"
            )
        return Expression(self._template, *self._operands, alias=name, aggregate=self._aggregate)

    def cast(self, data_type: DataType) -> Expression:
        return Expression(f"CAST({{0}} AS {_flink_type(data_type)})", self._bare())

    def try_cast(self, data_type: DataType) -> Expression:
        return Expression(f"TRY_CAST({{0}} AS {_flink_type(data_type)})", self._bare())

    def json_value(
        self,
        path: str,
        returning_type: DataType | None = None,
        on_empty: Any = None,
        default_on_empty: Any = None,
        on_error: Any = None,
        default_on_error: Any = None,
    ) -> Expression:
        """SQL's ``JSON_VALUE(x, path [RETURNING type] [... ON EMPTY] [... ON ERROR])``; ``on_empty`` / ``on_error`` are
        ``JsonValueOnEmptyOrError`` (NULL, the default; ERROR; DEFAULT, with ``default_on_empty`` / ``default_on_error``)."""
        template, operands = "JSON_VALUE({0}, {1}", [self._bare(), path]
        kind = "STRING" if returning_type is None else _flink_type(returning_type)
        if kind not in ("STRING", "VARCHAR"):
            template += f" RETURNING {kind}"
        for which, behaviour, default in (("EMPTY", on_empty, default_on_empty), ("ERROR", on_error, default_on_error)):
            name = getattr(behaviour, "name", behaviour) or "NULL"
            if name not in ("NULL", "ERROR", "DEFAULT"):
                raise PlanError(f"json_value(on_{which.lower()}=...) takes a JsonValueOnEmptyOrError (NULL, ERROR, DEFAULT), got {behaviour!r}")
            if name == "DEFAULT":
                template += f" DEFAULT {{{len(operands)}}} ON {which}"
                operands.append(default)
            elif name == "ERROR":
                template += f" ERROR ON {which}"
        return Expression(template + ")", *operands)

    # -- aggregates and properties ---------------------------------------------------------------
    @property
    def distinct(self) -> Expression:
        if self._aggregate is None:
            raise UnsupportedError("distinct of a non-aggregate expression: funke takes col('v').count.distinct and the like")
        inner = self._operands[0]
        return Expression(f"{self._aggregate}(DISTINCT {{0}})", inner, aggregate=self._aggregate)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _AGGREGATES:
            function = _AGGREGATES[name]
            if name == "sum0":
                return Expression("COALESCE(SUM({0}), 0)", self._bare())
            return Expression(f"{function}({{0}})", self._bare(), aggregate=function)
        if name in _UNARY:
            return Expression(f"{_UNARY[name]}({{0}})", self._bare())
        if name in _PROPERTIES:
            return Expression(_PROPERTIES[name], self._bare())
        if name in _CALLS:
            return self._call(name, *_CALLS[name])
        raise UnsupportedError(
            f"the expression method {name!r} of PyFlink's Table API is not translated by funke; write it as SQL in "
            "t_env.sql_query(...), or use call('FUNCTION', ...)"
        )

    def _call(self, method: str, function: str, most: int | None) -> Callable[..., Expression]:
        def call(*args: Any) -> Expression:
            given = _given(*args)
            if most is not None and len(given) > most:
                raise PlanError(f"{method}() of an expression takes at most {most} argument(s), got {len(given)}")
            return _function(function, self._bare(), *given)

        call.__name__ = method
        return call

    def over(self, window: Any) -> Expression:
        """This aggregate over an Over window (``col('v').max.over(col('w'))``)."""
        name = window if isinstance(window, str) else getattr(window, "name", None)
        if self._aggregate is None or not isinstance(name, str):
            raise PlanError(f"over() takes an aggregate (col('v').max) and the Over window's alias (col('w')), got {self.to_sql(str)} over {window!r}")
        return OverCall(self._bare(), name)

    # -- predicates --------------------------------------------------------------------------------
    def in_(self, *values: Any) -> Expression:
        return Expression(f"({{0}} IN ({_slots(len(values), start=1)}))", self._bare(), *values)

    def between(self, lower: Any, upper: Any) -> Expression:
        return Expression("({0} BETWEEN {1} AND {2})", self._bare(), lower, upper)

    def not_between(self, lower: Any, upper: Any) -> Expression:
        return Expression("({0} NOT BETWEEN {1} AND {2})", self._bare(), lower, upper)

    def like(self, pattern: Any, escape: Any = None) -> Expression:
        if escape is None:
            return Expression("({0} LIKE {1})", self._bare(), pattern)
        return Expression("({0} LIKE {1} ESCAPE {2})", self._bare(), pattern, escape)

    def similar(self, pattern: Any) -> Expression:
        return Expression("({0} SIMILAR TO {1})", self._bare(), pattern)

    # -- strings -----------------------------------------------------------------------------------
    def position(self, haystack: Any) -> Expression:
        return Expression("POSITION({0} IN {1})", self._bare(), haystack)

    def trim(self, character: Any = None) -> Expression:
        return self._trim("BOTH", character)

    def trim_leading(self, character: Any = None) -> Expression:
        return self._trim("LEADING", character)

    def trim_trailing(self, character: Any = None) -> Expression:
        return self._trim("TRAILING", character)

    def _trim(self, side: str, character: Any) -> Expression:
        if character is None:
            return Expression(f"TRIM({side} FROM {{0}})", self._bare())
        return Expression(f"TRIM({side} {{1}} FROM {{0}})", self._bare(), character)

    def overlay(self, new_string: Any, starting: Any, length: Any = None) -> Expression:
        if length is None:
            return Expression("OVERLAY({0} PLACING {1} FROM {2})", self._bare(), new_string, starting)
        return Expression("OVERLAY({0} PLACING {1} FROM {2} FOR {3})", self._bare(), new_string, starting, length)

    # -- numbers and time ------------------------------------------------------------------------
    def log(self, base: Any = None) -> Expression:
        return log(self._bare(), base)  # (the module's log: LOG(base, v))

    def floor(self, time_interval_unit: Any = None) -> Expression:
        return self._rounded("FLOOR", time_interval_unit)

    def ceil(self, time_interval_unit: Any = None) -> Expression:
        return self._rounded("CEIL", time_interval_unit)

    def _rounded(self, function: str, unit: Any) -> Expression:
        if unit is None:
            return _function(function, self._bare())
        return Expression(f"{function}({{0}} TO {_interval_unit(unit)})", self._bare())

    def extract(self, time_interval_unit: Any) -> Expression:
        return Expression(f"EXTRACT({_interval_unit(time_interval_unit)} FROM {{0}})", self._bare())

    # -- collections and rows --------------------------------------------------------------------
    def at(self, index: Any) -> Expression:
        return Expression("{0}[{1}]", self._bare(), index)

    def get(self, name_or_index: Any) -> Expression:
        if not isinstance(name_or_index, str):
            raise UnsupportedError(f"get({name_or_index!r}): funke reads a ROW's field by its name (get('name'))")
        return Expression(escaped("{0}.`" + name_or_index.replace("`", "``") + "`"), self._bare())

    # -- aggregates with arguments -------------------------------------------------------------
    def list_agg(self, separator: Any = None) -> Expression:
        return _function("LISTAGG", self._bare(), *_given(separator), aggregate="LISTAGG")

    def percentile(self, percentage: Any, frequency: Any = None) -> Expression:
        return _function("PERCENTILE", self._bare(), percentage, *_given(frequency), aggregate="PERCENTILE")

    # -- JSON ------------------------------------------------------------------------------------
    def is_json(self, json_type: Any = None) -> Expression:
        kind = "" if json_type is None else f" {getattr(json_type, 'name', json_type)}"
        return Expression(f"({{0}} IS JSON{kind})", self._bare())

    def json_exists(self, path: str, on_error: Any = None) -> Expression:
        if on_error is None:
            return Expression("JSON_EXISTS({0}, {1})", self._bare(), path)
        return Expression(f"JSON_EXISTS({{0}}, {{1}} {getattr(on_error, 'name', on_error)} ON ERROR)", self._bare(), path)

    def json_query(self, path: str, wrapping_behavior: Any = None, on_empty: Any = None, on_error: Any = None) -> Expression:
        options = [getattr(o, "name", o) for o in (wrapping_behavior, on_empty, on_error)]
        if options[0] not in (None, "WITHOUT_ARRAY") or any(o not in (None, "NULL") for o in options[1:]):
            raise UnsupportedError("json_query(...)'s wrapping and ON EMPTY / ON ERROR behaviours: funke's JSON_QUERY takes Flink's defaults")
        return Expression("JSON_QUERY({0}, {1})", self._bare(), path)

    def as_argument(self, name: str) -> Expression:
        raise UnsupportedError(f"as_argument({name!r}): funke passes a function's arguments by position, not by name")

    def substring(self, begin: Any, length: Any = None) -> Expression:
        if length is None:
            return Expression("SUBSTRING({0} FROM {1})", self._bare(), begin)
        return Expression("SUBSTRING({0} FROM {1} FOR {2})", self._bare(), begin, length)

    def round(self, places: Any) -> Expression:
        return Expression("ROUND({0}, {1})", self._bare(), places)

    def if_null(self, null_replacement: Any) -> Expression:
        return Expression("COALESCE({0}, {1})", self._bare(), null_replacement)

    def then(self, if_true: Any, if_false: Any) -> Expression:
        return Expression("(CASE WHEN {0} THEN {1} ELSE {2} END)", self._bare(), if_true, if_false)

    # -- operators -----------------------------------------------------------------------------
    def _op(self, op: str, other: Any, reflected: bool = False) -> Expression:
        return Expression(f"({{0}} {op} {{1}})", *((other, self._bare()) if reflected else (self._bare(), other)))

    def __add__(self, o: Any) -> Expression: return self._op("+", o)
    def __radd__(self, o: Any) -> Expression: return self._op("+", o, True)
    def __sub__(self, o: Any) -> Expression: return self._op("-", o)
    def __rsub__(self, o: Any) -> Expression: return self._op("-", o, True)
    def __mul__(self, o: Any) -> Expression: return self._op("*", o)
    def __rmul__(self, o: Any) -> Expression: return self._op("*", o, True)
    def __truediv__(self, o: Any) -> Expression: return self._op("/", o)
    def __rtruediv__(self, o: Any) -> Expression: return self._op("/", o, True)
    def __mod__(self, o: Any) -> Expression: return Expression("MOD({0}, {1})", self._bare(), o)
    def __eq__(self, o: object) -> Expression: return self._op("=", o)  # type: ignore[override]
    def __ne__(self, o: object) -> Expression: return self._op("<>", o)  # type: ignore[override]
    def __lt__(self, o: Any) -> Expression: return self._op("<", o)
    def __le__(self, o: Any) -> Expression: return self._op("<=", o)
    def __gt__(self, o: Any) -> Expression: return self._op(">", o)
    def __ge__(self, o: Any) -> Expression: return self._op(">=", o)
    def __and__(self, o: Any) -> Expression: return self._op("AND", o)
    def __or__(self, o: Any) -> Expression: return self._op("OR", o)
    def __invert__(self) -> Expression: return Expression("(NOT {0})", self._bare())
    def __neg__(self) -> Expression: return Expression("(- {0})", self._bare())
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise PlanError("a Table API expression has no truth value: combine conditions with & and |, not and / or")

    def __repr__(self) -> str:
        return self.to_sql(lambda f: getattr(f, "name", repr(f)))


class Column(Expression):
    """``col(name)``; ``col('w').start`` is a group window's property."""

    def __init__(self, name: str) -> None:
        super().__init__(escaped("`" + name.replace("`", "``") + "`"))
        self.name = name

    def __getattr__(self, name: str) -> Any:
        if name in _WINDOW_PROPERTIES:
            if name == "proctime":
                raise UnsupportedError(f"{self.name}.proctime: funke's group windows run on event time (w.rowtime)")
            return Expression(escaped(f"{self.name}.{name}"))
        return super().__getattr__(name)


class Literal(Expression):
    """``lit(value)``; ``lit(5).seconds`` is an interval (a window's size)."""

    def __init__(self, value: Any, data_type: DataType | None = None) -> None:
        text = escaped(sql_literal(value))
        super().__init__(f"CAST({text} AS {_flink_type(data_type)})" if data_type is not None else text)
        self.value = value

    def __getattr__(self, name: str) -> Any:
        if name in _INTERVALS:
            if not isinstance(self.value, int) or isinstance(self.value, bool):
                raise PlanError(f"lit({self.value!r}).{name}: an interval takes a whole number")
            return Interval(self.value * _INTERVALS[name])
        return super().__getattr__(name)


class Interval(Expression):
    """An interval literal (``lit(5).seconds``): ``ms`` milliseconds."""

    def __init__(self, ms: int) -> None:
        super().__init__(f"INTERVAL '{ms}' MILLISECOND")
        self.ms = ms


def escaped(text: str) -> str:
    """``text`` as a template that formats to itself (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def _flink_type(t: Any) -> str:
    if isinstance(t, DataType):
        return t.flink
    if isinstance(t, str):
        return t
    raise PlanError(f"expected a DataType (DataTypes.BIGINT(), ...), got {t!r}")


def _interval_unit(unit: Any) -> str:
    name = getattr(unit, "name", unit)
    if not isinstance(name, str):
        raise PlanError(f"expected a TimeIntervalUnit (pyflink.table.expression.TimeIntervalUnit.DAY, ...), got {unit!r}")
    return _INTERVAL_UNITS.get(name, name)


def aggregate_calls(e: Any) -> int:
    """How many aggregate calls ``e`` holds (PyFlink numbers its unnamed aggregates by them)."""
    if not isinstance(e, Expression):
        return 0
    return (e._aggregate is not None) + sum(aggregate_calls(o) for o in e._operands)


def col(name: str) -> Column:
    return Column(name)


def lit(value: Any, data_type: DataType | None = None) -> Literal:
    return Literal(value, data_type)


def call(f: Any, *args: Any) -> Any:
    """A function by name (a built-in or a registered one: ``call('UPPER', col('a'))``) or a Python function
    object (``call(my_udf, col('a'))``)."""
    if isinstance(f, str):
        return _function(f, *args)
    return f(*args)


def call_sql(sql: str) -> Expression:
    """PyFlink's ``call_sql``: a SQL expression as it is."""
    return Expression(escaped(sql))


def concat(first: Any, *others: Any) -> Expression:
    return _function("CONCAT", first, *others)


def and_(first: Any, *others: Any) -> Expression:
    values = (first, *others)
    return Expression(f"({_slots(len(values), sep=' AND ')})", *values)


def or_(first: Any, *others: Any) -> Expression:
    values = (first, *others)
    return Expression(f"({_slots(len(values), sep=' OR ')})", *values)


def not_(expression: Any) -> Expression:
    return Expression("(NOT {0})", expression)


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    return Expression("(CASE WHEN {0} THEN {1} ELSE {2} END)", condition, if_true, if_false)


def coalesce(*args: Any) -> Expression:
    return _function("COALESCE", *args)


def _function(name: str, *args: Any, aggregate: str | None = None) -> Expression:
    """``NAME(arg, ...)``: a call of the function ``name`` (``aggregate``: an aggregate function's name)."""
    return Expression(f"{name}({_slots(len(args))})", *args, aggregate=aggregate)


def _slots(count: int, *, start: int = 0, sep: str = ", ") -> str:
    """The template placeholders of ``count`` operands from ``start``: ``{0}, {1}, ...``."""
    return sep.join(f"{{{i}}}" for i in range(start, start + count))


def _leaf(name: str) -> Callable[[], Expression]:
    """A function of no arguments that is the SQL ``name`` (``CURRENT_DATE``, ``PI()``)."""

    def leaf() -> Expression:
        return Expression(name)

    return leaf


current_database, current_date, current_time = _leaf("CURRENT_DATABASE()"), _leaf("CURRENT_DATE"), _leaf("CURRENT_TIME")
current_timestamp, local_time, local_timestamp = _leaf("CURRENT_TIMESTAMP"), _leaf("LOCALTIME"), _leaf("LOCALTIMESTAMP")
pi, e, uuid, source_watermark = _leaf("PI()"), _leaf("E()"), _leaf("UUID()"), _leaf("SOURCE_WATERMARK()")


def _given(*args: Any) -> tuple[Any, ...]:
    """The arguments PyFlink's optional parameters were given (the trailing Nones left out)."""
    out = list(args)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def current_watermark(rowtime_attribute: Any) -> Expression:
    return _function("CURRENT_WATERMARK", rowtime_attribute)


def to_date(date_str: Any, format: Any = None) -> Expression:
    return _function("TO_DATE", *_given(date_str, format))


def to_timestamp(timestamp_str: Any, format: Any = None) -> Expression:
    return _function("TO_TIMESTAMP", *_given(timestamp_str, format))


def to_timestamp_ltz(*args: Any) -> Expression:
    if not 1 <= len(args) <= 2:
        raise PlanError(f"to_timestamp_ltz takes a value and, optionally, its precision or format: got {len(args)} arguments")
    return _function("TO_TIMESTAMP_LTZ", *args)


def temporal_overlaps(left_time_point: Any, left_temporal: Any, right_time_point: Any, right_temporal: Any) -> Expression:
    return Expression("(({0}, {1}) OVERLAPS ({2}, {3}))", left_time_point, left_temporal, right_time_point, right_temporal)


def date_format(timestamp: Any, format: Any) -> Expression:
    return _function("DATE_FORMAT", timestamp, format)


def timestamp_diff(time_point_unit: Any, time_point1: Any, time_point2: Any) -> Expression:
    unit = getattr(time_point_unit, "name", time_point_unit)
    if unit not in _TIME_POINT_UNITS:
        raise PlanError(f"timestamp_diff: {time_point_unit!r} is no TimePointUnit (pyflink.table.expression.TimePointUnit.DAY, ...)")
    return Expression(f"TIMESTAMPDIFF({unit}, {{0}}, {{1}})", time_point1, time_point2)


def convert_tz(date_str: Any, tz_from: Any, tz_to: Any) -> Expression:
    return _function("CONVERT_TZ", date_str, tz_from, tz_to)


def from_unixtime(unixtime: Any, format: Any = None) -> Expression:
    return _function("FROM_UNIXTIME", *_given(unixtime, format))


def unix_timestamp(date_str: Any = None, format: Any = None) -> Expression:
    if date_str is None and format is not None:
        raise PlanError("unix_timestamp: a format without a date string")
    return _function("UNIX_TIMESTAMP", *_given(date_str, format))


def array(head: Any, *tail: Any) -> Expression:
    values = (head, *tail)
    return Expression(f"ARRAY[{_slots(len(values))}]", *values)


def row(head: Any, *tail: Any) -> Expression:
    return _function("ROW", head, *tail)


def map_(key: Any, value: Any, *tail: Any) -> Expression:
    values = (key, value, *tail)
    if len(values) % 2:
        raise PlanError(f"map_ takes keys and values in pairs: got {len(values)} arguments")
    return Expression(f"MAP[{_slots(len(values))}]", *values)


def map_from_arrays(key: Any, value: Any) -> Expression:
    return _function("MAP_FROM_ARRAYS", key, value)


def descriptor(*column_names: str) -> Expression:
    return Expression(escaped("DESCRIPTOR(" + ", ".join("`" + c.replace("`", "``") + "`" for c in column_names) + ")"))


def rand(seed: Any = None) -> Expression:
    return _function("RAND", *_given(seed))


def rand_integer(bound: Any, seed: Any = None) -> Expression:
    return _function("RAND_INTEGER", bound) if seed is None else _function("RAND_INTEGER", seed, bound)


def atan2(y: Any, x: Any) -> Expression:
    return _function("ATAN2", y, x)


def negative(v: Any) -> Expression:
    return Expression("(- {0})", v)


def concat_ws(separator: Any, first: Any, *others: Any) -> Expression:
    return _function("CONCAT_WS", separator, first, *others)


def null_of(data_type: DataType) -> Expression:
    return Expression(f"CAST(NULL AS {_flink_type(data_type)})")


def log(v: Any, base: Any = None) -> Expression:
    return _function("LOG", v) if base is None else _function("LOG", base, v)


def json(value: Any) -> Expression:
    return _function("JSON", value)


def json_string(value: Any) -> Expression:
    return _function("JSON_STRING", value)


def _on_null(on_null: Any, default: str) -> str:
    kind = getattr(on_null, "name", on_null) if on_null is not None else default
    if kind not in ("NULL", "ABSENT"):
        raise PlanError(f"expected a JsonOnNull (JsonOnNull.NULL or JsonOnNull.ABSENT), got {on_null!r}")
    return kind


def json_object(on_null: Any = None, *args: Any) -> Expression:
    if len(args) % 2:
        raise PlanError(f"json_object takes keys and values in pairs: got {len(args)} arguments after on_null")
    pairs = ", ".join(f"KEY {{{i}}} VALUE {{{i + 1}}}" for i in range(0, len(args), 2))
    return Expression(f"JSON_OBJECT({pairs}{' ' if pairs else ''}{_on_null(on_null, 'NULL')} ON NULL)", *args)


def json_object_agg(on_null: Any, key_expr: Any, value_expr: Any) -> Expression:
    return Expression(f"JSON_OBJECTAGG(KEY {{0}} VALUE {{1}} {_on_null(on_null, 'NULL')} ON NULL)", key_expr, value_expr, aggregate="JSON_OBJECTAGG")


def json_array(on_null: Any = None, *args: Any) -> Expression:
    items = _slots(len(args))
    return Expression(f"JSON_ARRAY({items}{' ' if items else ''}{_on_null(on_null, 'ABSENT')} ON NULL)", *args)


def json_array_agg(on_null: Any, item_expr: Any) -> Expression:
    return Expression(f"JSON_ARRAYAGG({{0}} {_on_null(on_null, 'ABSENT')} ON NULL)", item_expr, aggregate="JSON_ARRAYAGG")


def _column_range(name: str) -> Callable[..., Expression]:
    """PyFlink's column-range selections (``with_columns(range_(1, 3))``): not translated, refused naming them."""

    def refused(*args: Any, **kwargs: Any) -> Expression:
        raise UnsupportedError(
            f"pyflink.table.expressions.{name}: column ranges are not translated by funke; name the columns "
            "(col('a'), col('b'), ...) or select '*'"
        )

    refused.__name__ = name
    return refused


range_, with_columns, without_columns = _column_range("range_"), _column_range("with_columns"), _column_range("without_columns")
#: TimePointUnit's names (pyflink.table.expression), TIMESTAMPDIFF's units.
_TIME_POINT_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "QUARTER", "WEEK", "MILLISECOND", "MICROSECOND")


class Bound(Expression):
    """An Over window's bound (pyflink.table.window.Over): its frame's kind, ``ROWS`` or ``RANGE``, and how far
    before the current row it starts (rows, or milliseconds for ``RANGE``; None: unbounded; 0: the current row)."""

    def __init__(self, kind: str, preceding: int | None) -> None:
        """Its SQL is where the frame starts: ``UNBOUNDED``, ``n`` (rows) or ``INTERVAL 'n' MILLISECOND`` (``RANGE``)."""
        start = "UNBOUNDED" if preceding is None else f"INTERVAL '{preceding}' MILLISECOND" if kind == "RANGE" else f"{preceding}"
        super().__init__(start)
        self.kind, self.preceding = kind, preceding


UNBOUNDED_ROW, UNBOUNDED_RANGE = Bound("ROWS", None), Bound("RANGE", None)
CURRENT_ROW, CURRENT_RANGE = Bound("ROWS", 0), Bound("RANGE", 0)


def row_interval(rows: int) -> Bound:
    return Bound("ROWS", int(rows))


def range_interval(ms: int) -> Bound:
    return Bound("RANGE", int(ms))


class OverCall(Expression):
    """``agg.over(col('w'))``: an aggregate over the Over window named ``w`` (its SQL is written where the
    table's Over windows are known: ``Table.over_window(...).select``)."""

    def __init__(self, call: Expression, window: str, alias: str | None = None) -> None:
        super().__init__("{0}", call, alias=alias)
        self.call, self.window = call, window

    def alias(self, name: str, *extra_names: str) -> Expression:
        super().alias(name, *extra_names)
        return OverCall(self.call, self.window, name)

    def _bare(self) -> Expression:
        return OverCall(self.call, self.window) if self._alias else self


#: PyFlink 2.3's ``__all__``, name for name: ``from pyflink.table.expressions import *`` binds what it binds
#: there (``json`` among them, shadowing the standard module as it does there). ``coalesce`` and
#: ``range_interval`` are importable by name.
__all__ = [  # noqa: RUF022 (PyFlink's order)
    "if_then_else", "lit", "col", "range_", "and_", "or_", "not_", "UNBOUNDED_ROW", "UNBOUNDED_RANGE", "CURRENT_ROW",
    "CURRENT_RANGE", "current_database", "current_date", "current_time", "current_timestamp", "current_watermark",
    "local_time", "local_timestamp", "temporal_overlaps", "date_format", "timestamp_diff", "array", "row", "map_",
    "row_interval", "pi", "e", "rand", "rand_integer", "atan2", "negative", "concat", "concat_ws", "uuid", "null_of",
    "log", "with_columns", "without_columns", "json", "json_string", "json_object", "json_object_agg", "json_array",
    "json_array_agg", "call", "call_sql", "source_watermark", "to_timestamp_ltz", "from_unixtime", "to_date",
    "to_timestamp", "convert_tz", "unix_timestamp", "descriptor",
]  # fmt: skip
