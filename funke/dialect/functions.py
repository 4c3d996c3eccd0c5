"""Flink SQL's built-in functions on Spark: what each means in Flink, and how funke gives that meaning.

Every function a query calls is looked up here while it is planned (``check_calls``), by the name the
query spells it with. A built-in function is one of five kinds (``Builtin.status``):

- ``flink``: Spark's function of that name (or the one sqlglot writes for it) gives Flink's result;
- ``rewritten``: Spark's differs, so the call is rewritten (``Builtin.rewrite``) into Spark SQL that gives
  Flink's result, for the argument counts in ``Builtin.arities``;
- ``planner``: funke's planner gives it its meaning itself (aggregates, window functions, time attributes);
- ``differs``: Spark's function (or a rewrite) runs, and differs from Flink's where ``note`` says (edge cases,
  errors where Flink gives a value);
- ``refused``: Spark cannot give Flink's result; the call is refused while planning, with ``note`` as the reason.

A name that is no Flink built-in function and no Python function of the table environment is an unknown
function, refused with did-you-mean: Spark's own functions are not Flink SQL, and a call of one would have
Spark's meaning under a Flink name. ``markdown()`` is the table in docs/sql.md ("Built-in functions").
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from sqlglot import exp

from funke.dialect.convert_tz import convert_tz
from funke.dialect.date_arithmetic import timestampadd
from funke.dialect.json_functions import (
    is_json,
    json_array,
    json_exists,
    json_object,
    json_query,
    json_quote,
    json_raw,
    json_string,
    json_unquote,
    json_value,
)
from funke.dialect.rewrites import (
    LOG_OF,
    NOW,
    Rewrite,
    abs_of,
    array_slice,
    call,
    concat_ws,
    elt,
    extreme,
    fill,
    hash_code,
    instr,
    locate,
    log,
    overlay,
    parse_url,
    proctime,
    rand,
    regexp_extract,
    sign,
    str_to_map,
    substring,
    timestampdiff,
    to_date,
    to_timestamp,
    to_timestamp_ltz,
    truncate,
)
from funke.errors import PlanError, UnsupportedError

#: What funke does with a built-in function (see the module's text).
FLINK, REWRITTEN, PLANNER, DIFFERS, REFUSED = "flink", "rewritten", "planner", "differs", "refused"


@dataclass(frozen=True)
class Builtin:
    """One of Flink SQL's built-in functions, under all its SQL spellings (``names``, the first the docs show)."""

    names: tuple[str, ...]
    category: str
    status: str
    #: ``rewritten``: how Spark's function differs from Flink's; ``refused``: why funke refuses it;
    #: ``planner``: where funke gives it its meaning; ``flink``: anything a user should know (or "").
    note: str = ""
    #: Spark SQL over the arguments ``{0}``, ``{1}``, ... (or a ``Rewrite``) that gives Flink's result.
    rewrite: str | Rewrite | None = None
    #: The argument counts ``rewrite`` takes; any other count is refused. None: any.
    arities: tuple[int, ...] | None = None

    @property
    def name(self) -> str:
        return self.names[0]

    def lower(self, args: list[exp.Expression], types: list[str | None], refuse: Callable[[str], Exception]) -> exp.Expression:
        """The call with arguments ``args`` (of ``types``) as Spark SQL with Flink's meaning."""
        if self.arities is not None and len(args) not in self.arities:
            counts = " or ".join(str(n) for n in self.arities)
            raise refuse(f"{self.name} with {len(args)} arguments (funke gives Flink's {self.name} for {counts})")
        if callable(self.rewrite):
            return self.rewrite(args, types)
        assert self.rewrite is not None
        return fill(self.rewrite, args)


#: sqlglot's nodes for Flink's special call syntax, which carry no spelled name: their Flink name.
_SYNTAX: dict[type[exp.Expression], str] = {
    exp.Cast: "CAST", exp.TryCast: "TRY_CAST", exp.Case: "CASE", exp.If: "IF", exp.Substring: "SUBSTRING",
    exp.Overlay: "OVERLAY", exp.Trim: "TRIM", exp.StrPosition: "POSITION", exp.Extract: "EXTRACT",
    exp.Floor: "FLOOR", exp.Ceil: "CEIL", exp.CurrentTimestamp: "CURRENT_TIMESTAMP", exp.CurrentDate: "CURRENT_DATE",
    exp.CurrentTime: "CURRENT_TIME", exp.Array: "ARRAY", exp.JSONObject: "JSON_OBJECT", exp.Initcap: "INITCAP",
    exp.Chr: "CHR", exp.Decode: "DECODE", exp.JSONObjectAgg: "JSON_OBJECTAGG",
}  # fmt: skip


def call_name(node: exp.Expression, sql: str) -> str | None:
    """The name ``node`` (a function call) is spelled with in ``sql``, in upper case; None for no call.

    sqlglot turns many calls into nodes of its own (``CHAR_LENGTH(s)`` into ``Length``), but keeps the
    position of the name it read; a node of Flink's special syntax (``CAST(x AS t)``, ``TRIM(BOTH ...)``)
    has none and is named by its kind. Operators (``AND``, ``EXISTS``, ``LIKE``) are no calls."""
    if isinstance(node, exp.Anonymous):
        return node.name.upper()
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.JSON):  # (``s IS JSON [OBJECT]``: a predicate)
        return "IS JSON"
    if not isinstance(node, exp.Func) or isinstance(node, exp.Window):
        return None
    start, end = node.meta.get("start"), node.meta.get("end")
    if start is not None and end is not None and sql:
        spelled = sql[start : end + 1]
        if spelled.replace("_", "").isalnum():
            return spelled.upper()
    if isinstance(node, (exp.Connector, exp.Predicate)):
        return None
    if isinstance(node, exp.If) and isinstance(node.parent, exp.Case):  # (a WHEN branch of a CASE)
        return "CASE"
    return _SYNTAX.get(type(node), type(node).key.upper())


def calls(tree: exp.Expression, sql: str) -> Iterator[tuple[exp.Expression, str]]:
    """Every function call in ``tree`` with its name; not those of a MATCH_RECOGNIZE clause (funke's
    pattern compiler reads its own, ``funke.dialect.evaluate``), nor ``TABLE(...)`` around a table function."""
    for node in tree.walk(prune=lambda n: isinstance(n, exp.MatchRecognize)):
        name = call_name(node, sql)
        if name is not None and name != "TABLE":
            yield node, name


#: Other databases' functions a Flink SQL user reaches for first, and Flink's for them.
INSTEAD = {"STRING_AGG": "LISTAGG(s, separator)", "GROUP_CONCAT": "LISTAGG(s, separator)"}


def check_calls(tree: exp.Expression, sql: str, user_functions: Collection[str], at: Callable[[exp.Expression], str]) -> None:
    """Refuse, while planning, a call in ``tree`` of a built-in function funke cannot give Flink's meaning,
    and a call of a function that is neither a built-in nor one of ``user_functions`` (with did-you-mean).
    Aggregates and window functions funke does not run are left to the planner, which refuses them naming
    the construct; argument counts a rewrite does not take are refused when the call is lowered."""
    users = {n.upper(): n for n in user_functions}
    for node, name in calls(tree, sql):
        if name in users:
            continue
        builtin = BUILTINS.get(name)
        if builtin is None and isinstance(node.parent, exp.Anonymous) and node.parent.name.upper() == "TABLE":
            continue  # (LATERAL TABLE(f(...)): the planner names an unknown table function)
        if builtin is None:
            spelled = node.name if isinstance(node, exp.Anonymous) else name
            close = difflib.get_close_matches(name, sorted({*BUILTINS, *users}), n=1, cutoff=0.75)
            hint = f" (did you mean '{users.get(close[0], close[0])}'?)" if close else ""
            hint = f" (Flink's is {INSTEAD[name]})" if name in INSTEAD else hint
            raise PlanError(
                f"Flink SQL: unknown function {spelled} at {at(node)}{hint}: it is no Flink SQL built-in function and no "
                "function of this table environment (Spark's own functions are not Flink SQL)"
            )
        if builtin.status in (PLANNER, DIFFERS) and builtin.category == "aggregate" and isinstance(node, exp.Anonymous):
            # (sqlglot reads a call of it with the wrong count of arguments as a plain call, which Spark would run)
            raise PlanError(f"Flink SQL: {name} at {at(node)} with {len(node.expressions)} argument(s) is no call of Flink's {name}: {builtin.note}")
        if name == "JSON" and not (isinstance(node.parent, exp.Anonymous) and node.parent.name.upper() in ("JSON_OBJECT", "JSON_ARRAY")):
            raise PlanError(f"Flink SQL: JSON(...) at {at(node)} is a value of JSON_OBJECT or JSON_ARRAY only, as in Flink")
        if builtin.status == REFUSED and (builtin.category not in _PLANNER_REFUSES or not isinstance(node, exp.AggFunc)):
            # (an aggregate or window function sqlglot does not read as one: the planner would not see it)
            raise UnsupportedError(f"Flink SQL: {name} (at {at(node)}) is not supported by funke yet: {builtin.note}")


#: Categories whose refused functions the planner refuses itself, naming the construct (an OVER window, an aggregation).
_PLANNER_REFUSES = ("aggregate", "window function")


def lowered(
    node: exp.Expression, sql: str, args: list[exp.Expression], types: list[str | None], refuse: Callable[[str], Exception]
) -> exp.Expression | None:
    """``node``, a call whose arguments (given Flink's meaning) are ``args`` of ``types``, as Spark SQL with
    Flink's meaning when funke rewrites it; None when Spark's function gives that meaning already."""
    name = call_name(node, sql)
    builtin = BUILTINS.get(name) if name is not None else None
    if builtin is None or builtin.rewrite is None:
        return None
    return builtin.lower(args, types, refuse)


def rewritten_names() -> frozenset[str]:
    """The names funke rewrites: the Flink dialect reads their calls as written (``exp.Anonymous``), their
    arguments in Flink's order, not as sqlglot's nodes of Spark's functions."""
    return frozenset(n for b in _TABLE if b.rewrite is not None for n in b.names)


def markdown() -> str:
    """The table of built-in functions in docs/sql.md, by category."""
    label = {
        FLINK: "Flink's result",
        REWRITTEN: "Flink's result (rewritten)",
        PLANNER: "Flink's result (funke's planner)",
        DIFFERS: "runs, differs",
        REFUSED: "refused",
    }
    lines = ["| category | function | funke | note |", "|---|---|---|---|"]
    for b in _TABLE:
        names = ", ".join(f"`{n}`" for n in b.names).replace("|", "\\|")
        note = b.note.replace("|", "\\|")
        lines.append(f"| {b.category} | {names} | {label[b.status]} | {note} |")
    return "\n".join(lines)


def _b(
    names: str,
    category: str,
    status: str,
    note: str = "",
    rewrite: str | Rewrite | None = None,
    arities: tuple[int, ...] | None = None,
) -> Builtin:
    return Builtin(tuple(names.split()), category, status, note, rewrite, arities)


#: Flink SQL's built-in functions, by category as Flink's documentation orders them.
# fmt: off
_TABLE: tuple[Builtin, ...] = (
    # -- operators and literals (no calls: how funke writes them) ------------------------------------------------
    Builtin(("=, <>, <, >, <=, >=", "IS [NOT] NULL", "IS [NOT] DISTINCT FROM", "[NOT] BETWEEN [SYMMETRIC]", "[NOT] IN (...)", "AND, OR, NOT", "IS [NOT] TRUE/FALSE/UNKNOWN", "||",), "operators", FLINK),
    _b("CASE", "operators", FLINK, "a simple CASE with several values in one WHEN (`CASE v WHEN 1, 2 THEN ...`) does not parse: write `CASE WHEN v IN (1, 2) THEN ...`"),
    Builtin(("[NOT] LIKE",), "operators", DIFFERS, "a pattern that is a literal: Flink's result, rewritten (`funke/dialect/like.py`: Spark's RLIKE of the Java regex Flink matches with, `_` no line terminator, `\\` as written; `ESCAPE 'c'`; an invalid escape sequence refused, as Flink refuses it); any other pattern runs Spark's LIKE, which reads `\\` as an escape character where Flink has none, and whose `_` matches a line break"),
    Builtin(("[NOT] SIMILAR TO",), "operators", REWRITTEN, "no Spark syntax: a regex match of the whole string (`%` any text, `_` any character)"),
    Builtin(("(start, end) OVERLAPS (start, end)",), "operators", REWRITTEN, "no Spark syntax: each period's bounds in either order, an end may be an INTERVAL (its length); ends included, NULL where a bound is"),
    Builtin(("+, -, *",), "operators", DIFFERS, "an integer overflow fails the job (Spark's ANSI mode; Flink wraps around), and so does a DECIMAL one (Flink: NULL); an integer operand of a DECIMAL operation is cast to Flink's DECIMAL for its type (INT `DECIMAL(10, 0)`), which gives Flink's result scale"),
    Builtin(("/",), "operators", DIFFERS, "of two integers an integer, truncated (Spark: a DOUBLE); an integer operand of a DECIMAL is Flink's DECIMAL for its type (`CAST(1 AS DECIMAL(10, 2)) / 3` is 0.3333333333333); a DOUBLE divided by 0 and the smallest integer divided by -1 fail the job (Flink: Infinity, the same integer); where funke cannot tell whether both operands are integers it refuses: CAST one"),
    Builtin(("array[i]",), "operators", REWRITTEN, "Flink counts from 1 (Spark from 0): past the end NULL, below 1 the job fails; refused where funke cannot tell an array from a map"),
    Builtin(("MAP[k, v, ...]", "map[key]"), "operators", DIFFERS, "`MAP[k, v, ...]` is Spark's `map_from_arrays(array(k, ...), array(v, ...))`: of a key given twice the last value, in the first one's place, as Flink's (funke's sessions set `spark.sql.mapKeyDedupPolicy` to `LAST_WIN`; Spark's `map(k, v, ...)` is not used, as its optimizer takes keys for distinct: `CARDINALITY` would count both, `[k]` read the first); no pairs or an odd number of arguments refused, as Flink refuses them. Differs: of NOT NULL values Flink 2.3 gives -1 or `' '` for a missing key (a bug): funke NULL"),
    Builtin(("DATE 'yyyy-MM-dd'", "TIMESTAMP '...'"), "operators", DIFFERS, "a TIMESTAMP literal keeps microseconds, not nanoseconds"),
    Builtin(("TIME '...'", "CAST(... AS TIME)", "time +/- INTERVAL"), "operators", REWRITTEN, "Spark's TIME type (funke sets `spark.sql.timeType.enabled`): Flink's TIME(p) is Spark's TIME(min(p, 3)), as Flink keeps milliseconds at most (TIME is TIME(0); a literal's precision is its fraction's digits, the rest cut off); a STRING CAST to a TIME is rounded to milliseconds, then truncated to the precision, as Flink's; `time +/- INTERVAL` wraps around midnight (Spark's fails the job), `INTERVAL 'n' MONTH` adds nothing; a TIME CAST to a TIMESTAMP is on 1970-01-01 (Spark's on today), to a STRING `12:34:56.5` (`12:34:56.0` of a TIME(p) of p > 0, `12:34:56` of a TIME(0)); comparisons, GROUP BY, ORDER BY, MIN and MAX as Flink's. Refused, as Flink refuses them: `TIME - TIME`, a TIME CAST to or from anything but a STRING, TIME or TIMESTAMP, a TIME given to a string, arithmetic or temporal function other than HOUR, MINUTE, SECOND, EXTRACT, TIMESTAMPDIFF, FLOOR/CEIL (`DATE_FORMAT`, `YEAR`, `CONCAT`, `LIKE`...), an invalid `TIME '...'` literal. A TIME column in CREATE TABLE: a filesystem table's csv or json reads and writes it as text (`12:34:56.789`), a value read cut to the column's precision (an empty csv field fails the record, a dead letter, as Flink's reader fails the job), `print` writes it as Java's LocalTime (`00:00`, `12:34:56.500`). Refused by funke: FLOOR/CEIL of a TIME, a TIME column of any other connector or format, or inside a ROW or ARRAY (declare a STRING and CAST it), a Python function's TIME result (Spark's Arrow takes TIME(6) only). `from_elements` values are cut to the column's precision (Flink's TIME(0) keeps their milliseconds, which `.collect()` shows and `.print()` does not). Where funke cannot tell an expression is a TIME (a column, literal, CAST, `+ INTERVAL`, COALESCE, CASE, IF, NULLIF, MIN or MAX of TIMEs), Spark's meaning runs: its CAST to a TIMESTAMP is on today, its `+ INTERVAL` fails the job past midnight"),
    Builtin(("date/timestamp +/- INTERVAL",), "operators", DIFFERS, "rewritten (`funke/dialect/date_arithmetic.py`): a DATE moved by a day-time interval of one unit (`INTERVAL '25' HOUR`) is a DATE moved by its whole days, truncated toward zero, as Flink's (Spark's is a TIMESTAMP); `INTERVAL 'n' QUARTER` is 3n months (Spark has none). Differs: a DATE moved by a `DAY TO SECOND` (or other two-unit) interval is a TIMESTAMP in Spark, a DATE in Flink"),
    _b("FROM_CHANGELOG TO_CHANGELOG ML_PREDICT", "table function", REFUSED, "Flink's process table functions: funke has none yet"),
    # -- arithmetic -----------------------------------------------------------------------------------------
    _b("POWER SQRT SIN SINH COS COSH TAN TANH COT ASIN ACOS ATAN ATAN2 DEGREES RADIANS PI E BIN HEX", "arithmetic", FLINK),
    _b("ABS", "arithmetic", DIFFERS, "Flink's (Java's `Math.abs`) of the smallest TINYINT, SMALLINT, INT or BIGINT is that value, where Spark's ANSI overflow fails the job: funke gives it where it knows the type (a column, a CAST, a literal), Spark's otherwise", abs_of, (1,)),
    _b("EXP", "arithmetic", DIFFERS, "the last bit of some results (Spark computes with `StrictMath`, Flink with `Math`): `EXP(1)` is 2.7182818284590455, Flink 2.718281828459045"),
    _b("LN", "arithmetic", DIFFERS, "of 0 Flink gives -Infinity, of a negative NaN; Spark NULL. The last bit of some results differs (`StrictMath`)", LOG_OF.format("LN({0})"), (1,)),
    _b("LOG10", "arithmetic", REWRITTEN, "sqlglot writes Spark's `LOG(10, x)` (`LOG10(1000)` 2.9999999999999996); of 0 -Infinity, of a negative NaN, as LN", LOG_OF.format("LOG10({0})"), (1,)),
    _b("LOG2", "arithmetic", DIFFERS, "as LOG10; the last bit of some results differs (`LOG2(3)`)", LOG_OF.format("LOG2({0})"), (1,)),
    _b("LOG", "arithmetic", DIFFERS, "`LOG(x)` is LN; `LOG(b, x)`: Flink's `ln(x) / ln(b)` in IEEE arithmetic (NaN, -Infinity) where Spark gives NULL for a base or value up to 0", log, (1, 2)),
    _b("CEIL CEILING", "arithmetic", DIFFERS, "of a DOUBLE or an integer Spark gives a BIGINT (NaN is 0, a value past BIGINT fails the job), where Flink keeps the argument's type: funke too where it knows the type (a column, a CAST, a literal), Spark's otherwise; `CEIL(t TO unit)`: see temporal"),
    _b("FLOOR", "arithmetic", DIFFERS, "as CEIL"),
    _b("SIGN", "arithmetic", DIFFERS, "Spark's is a DOUBLE; Flink's the argument's type (an integer here; a DECIMAL argument still gives a DOUBLE)", sign, (1,)),
    _b("ROUND", "arithmetic", DIFFERS, "where rounding an integer overflows (`ROUND(2147483647, -1)`) the job fails; Flink wraps around"),
    _b("TRUNCATE", "arithmetic", REWRITTEN, "sqlglot writes `CAST(x AS BIGINT)`, dropping the places (`TRUNCATE(42.324, 2)` 42); funke: `FLOOR`/`CEIL` to the places, of the argument's type", truncate, (1, 2)),
    _b("RAND", "arithmetic", DIFFERS, "`RAND()`; a seeded `RAND(n)` is refused: Spark cannot give Flink's sequence. Two `RAND()` calls of one row differ (Flink evaluates them once)", rand, (0,)),
    _b("RAND_INTEGER", "arithmetic", REWRITTEN, "no Spark function: `FLOOR(RAND() * n)`; the seeded form is refused, as RAND's", "CASE WHEN {0} > 0 THEN CAST(FLOOR(RAND() * {0}) AS INT) WHEN {0} <= 0 THEN RAISE_ERROR('bound must be positive') END", (1,)),
    _b("UNHEX", "arithmetic", REWRITTEN, "of an odd number of digits Flink drops the first (`'414'` is 0x0014; Spark 0x0414)", "UNHEX(REGEXP_REPLACE({0}, '^[0-9a-fA-F]((?:..)*)$', '00$1'))", (1,)),
    _b("MOD", "arithmetic", DIFFERS, "`MOD(a, b)` and `a % b` of integers: Flink's result has `b`'s type, Spark's the wider one (equal values): funke casts to `b`'s type where it knows both"),
    # -- conversion -----------------------------------------------------------------------------------------
    _b("CAST", "conversion", DIFFERS, "rewritten where the source type is known: a BOOLEAN as a string is `'TRUE'`/`'FALSE'` (Spark lower case), a TIMESTAMP column is written with its milliseconds (`.000`). To `VARCHAR(n)` the text is cut to n characters, to `CHAR(n)` cut or padded with spaces to n (`CHAR` is `CHAR(1)`), as Flink's (Spark's keeps the whole text; funke counts code points, Flink UTF-16 units). Where Flink's CAST truncates or wraps (`'1.5'` to INT is 1, 3000000000 to INT wraps, 1e20 to INT saturates) Spark's fails the job"),
    _b("TRY_CAST", "conversion", DIFFERS, "as CAST; where Flink's CAST truncates or wraps (`'1.5'` to INT), Spark's TRY_CAST gives NULL"),
    # -- temporal ------------------------------------------------------------------------------------------
    _b("TO_TIMESTAMP_LTZ", "temporal", REWRITTEN, "Spark's `timestamp_millis`/`timestamp_seconds`; one argument is milliseconds; the precision must be the literal 3 or 0 (Flink also takes others, and strings)", to_timestamp_ltz, (1, 2)),
    _b("CURRENT_DATE", "temporal", FLINK, "the micro-batch's date (a bounded run's one date), where Flink's streaming mode reads the clock per row"),
    _b("CURRENT_TIMESTAMP NOW", "temporal", DIFFERS, "Spark's has microseconds, Flink's TIMESTAMP_LTZ(3) milliseconds; the micro-batch's time (a bounded run's one instant), where Flink's streaming mode reads the clock per row", NOW, (0,)),
    _b("CURRENT_ROW_TIMESTAMP", "temporal", DIFFERS, "no Spark function: as CURRENT_TIMESTAMP, the micro-batch's time, where Flink reads the clock per row", NOW, (0,)),
    _b("LOCALTIMESTAMP", "temporal", DIFFERS, "as CURRENT_TIMESTAMP (the session time zone is UTC): the micro-batch's time"),
    _b("LOCALTIME CURRENT_TIME", "temporal", DIFFERS, "a TIME(0) (the session time zone is UTC): the micro-batch's time, where Flink's streaming mode reads the clock per row; Flink's value keeps milliseconds its TIME(0) does not show (`.collect()` 12:43:12.373, `.print()` 12:43:12), funke's whole seconds"),
    _b("EXTRACT", "temporal", DIFFERS, "of a TIMESTAMP or DATE, a BIGINT as Flink's: Spark's SECOND has the fraction (26.535897; Flink 26), MILLISECOND and MICROSECOND are the fraction's (Flink 535), and Spark lacks EPOCH, DECADE, CENTURY, MILLENNIUM, ISODOW, ISOYEAR; NANOSECOND is microseconds' (Spark keeps no more); of a TIME, HOUR, MINUTE, SECOND and MILLISECOND, as Flink's (the other units refused, as Flink refuses them)"),
    *(_b(n, "temporal", DIFFERS, "Spark's, as a BIGINT (Flink's type); Flink 2.3 gives wrong fields of a TIMESTAMP before 1970 that is not at midnight (`HOUR(TIMESTAMP '1960-05-05 10:20:30')` is -13), funke the right ones", f"CAST({n}({{0}}) AS BIGINT)", (1,))
      for n in ("YEAR", "QUARTER", "MONTH", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK", "HOUR", "MINUTE", "SECOND")),
    _b("WEEK", "temporal", REWRITTEN, "no Spark function: `weekofyear` (the ISO week), a BIGINT", "CAST(WEEKOFYEAR({0}) AS BIGINT)", (1,)),
    Builtin(("FLOOR(t TO unit)", "CEIL(t TO unit)"), "temporal", REWRITTEN, "no Spark syntax: `date_trunc` and Flink's rules (a WEEK starts on Sunday; CEIL to a MONTH, QUARTER or YEAR looks at the date only; DECADE, CENTURY, MILLENNIUM); of a TIME refused"),
    _b("TIMESTAMPADD", "temporal", REWRITTEN, "Spark's, with Flink's units (`SQL_TSI_` names too; MILLISECOND, MICROSECOND, DAYOFYEAR refused, as Flink refuses them); of a DATE by DAY, WEEK, MONTH, QUARTER or YEAR a DATE, as Flink's (Spark's is a TIMESTAMP)", timestampadd, (3,)),
    _b("TIMESTAMPDIFF", "temporal", REWRITTEN, "sqlglot misreads its arguments; Flink's is an INT that wraps around, and a MONTH, QUARTER or YEAR counts with month-end clamping (2020-01-31 to 2020-02-29 is one month; Spark's `timestampdiff` 0)", timestampdiff, (3,)),
    _b("DATE_FORMAT", "temporal", DIFFERS, "Spark's pattern letters are java.time's: `u w W Y e c n A B` and five-letter text styles fail the job; of a STRING argument that does not parse Spark fails the job, Flink gives NULL"),
    _b("FROM_UNIXTIME", "temporal", DIFFERS, "the pattern letters Spark rejects fail the job (as DATE_FORMAT); instants before 1582 are proleptic Gregorian (Flink Julian)"),
    _b("UNIX_TIMESTAMP", "temporal", DIFFERS, "a string that does not parse fails the job (Flink: -9223372036854775808); Flink also reads a matching prefix leniently"),
    _b("TO_DATE", "temporal", DIFFERS, "a string that does not parse is NULL (Spark fails the job); one argument reads `y-M-d` and what Flink's reads before a blank. Flink 2.3's two-argument form gives 5471-09-27 for a string that does not parse (a bug): funke NULL", to_date, (1, 2)),
    _b("TO_TIMESTAMP", "temporal", DIFFERS, "a string that does not parse is NULL (Spark fails the job); milliseconds, Flink's TIMESTAMP(3); Flink's fallbacks of the two-argument form are not reproduced", to_timestamp, (1, 2)),
    _b("CONVERT_TZ", "temporal", DIFFERS, "no Spark function: Java's lenient reading (fields roll over: `2020-02-30` is March 1st), Java's zone names (an unknown one, `utc` or `+05:30`, is GMT; `EST` is -05:00, `PST` America/Los_Angeles) and Java's choice in a DST overlap (the later offset) are reproduced. The zones must be string literals (`SystemV/` ids refused); a zone name is known when the tz database knows it (one Spark's JDK lacks fails the job; Flink's JDK reads it as GMT); a text with digits other than 0-9 (Flink reads them), or whose instant falls before 1900-01-02 (UTC) or result after the year 9999, fails the job (Flink gives Java's legacy answers: before 1900 a zone's present standard offset, before 1582 Julian dates), as does an instant after 2037 in a zone with transitions of its own after 2037 (Africa/Casablanca, Africa/El_Aaiun, Asia/Gaza, Asia/Hebron: Flink's Java zones follow the recurring rule there)", convert_tz, (3,)),
    _b("PROCTIME", "time attribute", PLANNER, "the view's processing-time attribute (alone as a column); inside an expression the micro-batch's time", proctime),
    _b("CURRENT_WATERMARK", "time attribute", PLANNER, "each row given the watermark when it is read (a SELECT or WHERE over a view)"),
    _b("SOURCE_WATERMARK", "time attribute", REFUSED, "no funke connector makes its own watermarks: declare `WATERMARK FOR ts AS ts - INTERVAL ...`"),
    # -- string -------------------------------------------------------------------------------------------
    _b("REGEXP_EXTRACT", "string", DIFFERS, "Spark gives `''` where the regex does not match (Flink NULL) and takes group 1 when none is given (Flink group 0); a negative group is NULL. A group that takes no part in the match is `''` (Flink NULL); an invalid regex or a group past the last fails the job (Flink NULL)", regexp_extract, (2, 3)),
    _b("CHAR_LENGTH CHARACTER_LENGTH", "string", FLINK, ""),
    _b("UPPER", "string", FLINK, "of a string literal Flink's CHAR(n) type may cut the result (`UPPER('straße')` is `'STRASS'`); of a STRING column equal"),
    _b("LOWER", "string", FLINK, "as UPPER"),
    _b("POSITION", "string", FLINK, ""),
    _b("TRIM", "string", FLINK, ""),
    _b("LTRIM", "string", FLINK, ""),
    _b("RTRIM", "string", FLINK, ""),
    _b("BTRIM", "string", FLINK, ""),
    _b("REPEAT", "string", FLINK, ""),
    _b("CONCAT", "string", FLINK, ""),
    _b("TO_BASE64", "string", FLINK, ""),
    _b("CHR", "string", FLINK, ""),
    _b("LEFT", "string", FLINK, ""),
    _b("RIGHT", "string", FLINK, ""),
    _b("REVERSE", "string", FLINK, ""),
    _b("STARTSWITH", "string", FLINK, ""),
    _b("ENDSWITH", "string", FLINK, ""),
    _b("URL_ENCODE", "string", FLINK, ""),
    _b("MD5", "string", FLINK, ""),
    _b("SHA1", "string", FLINK, ""),
    _b("SHA2", "string", FLINK, ""),
    _b("NULLIF", "string", FLINK, ""),
    _b("COALESCE", "string", FLINK, ""),
    _b("IF", "string", FLINK, ""),
    _b("IFNULL", "string", FLINK, ""),
    _b("REGEXP_REPLACE", "string", DIFFERS, "Spark reads `$1` and `\\\\` in the replacement; Flink takes it as written. An invalid regex fails the job (Flink: NULL)", "REGEXP_REPLACE({0}, {1}, REPLACE(REPLACE({2}, '\\\\', '\\\\\\\\'), '$', '\\\\$'))", (3,)),
    _b("OVERLAY", "string", REWRITTEN, "a position before 1 or past the end leaves the string as it is in Flink (Spark pads); `FOR n` with n <= 0 replaces to the end", overlay, (3, 4)),
    _b("SUBSTRING SUBSTR", "string", REWRITTEN, "a negative length is NULL in Flink, `''` in Spark", substring, (2, 3)),
    _b("REPLACE", "string", REWRITTEN, "an empty search string puts the replacement between every character in Flink (Java's `String.replace`); Spark gives the string", "REGEXP_REPLACE({0}, CONCAT('\\\\Q', REPLACE({1}, '\\\\E', '\\\\E\\\\\\\\E\\\\Q'), '\\\\E'), REPLACE(REPLACE({2}, '\\\\', '\\\\\\\\'), '$', '\\\\$'))", (3,)),
    _b("REGEXP_EXTRACT_ALL REGEXP_COUNT REGEXP_INSTR", "string", DIFFERS, "an invalid regex or group index fails the job (Flink: NULL); a group that takes no part in a match is `''` (Flink NULL)"),
    _b("REGEXP_SUBSTR", "string", DIFFERS, "an empty match is `''` in Flink, NULL in Spark; an invalid regex fails the job (Flink: NULL)", "CASE WHEN {0} RLIKE {1} THEN REGEXP_EXTRACT({0}, {1}, 0) END", (2,)),
    _b("REGEXP", "string", DIFFERS, "an empty regex is FALSE in Flink, TRUE in Spark; an invalid regex fails the job (Flink: FALSE)", "IF({1} = '', CASE WHEN {0} IS NOT NULL THEN FALSE END, {0} RLIKE {1})", (2,)),
    _b("INITCAP", "string", REWRITTEN, "Flink starts a word after any character but `[A-Za-z0-9]` and leaves other characters as they are; Spark splits words at spaces", "AGGREGATE(SPLIT({0}, ''), NAMED_STRUCT('s', '', 'w', FALSE), (acc, c) -> NAMED_STRUCT('s', CONCAT(acc.s, CASE WHEN c RLIKE '^[A-Za-z0-9]$' THEN IF(acc.w, LOWER(c), UPPER(c)) ELSE c END), 'w', c RLIKE '^[A-Za-z0-9]$'), acc -> acc.s)", (1,)),
    _b("CONCAT_WS", "string", REWRITTEN, "sqlglot writes a form that is NULL when an argument is NULL; Flink (and Spark's own `concat_ws`) skip NULL arguments", concat_ws),
    _b("LPAD", "string", REWRITTEN, "a negative length or an empty pad is NULL in Flink; Spark gives `''` or the string", "CASE WHEN {1} >= 0 AND {2} <> '' THEN LPAD({0}, {1}, {2}) END", (3,)),
    _b("RPAD", "string", REWRITTEN, "as LPAD", "CASE WHEN {1} >= 0 AND {2} <> '' THEN RPAD({0}, {1}, {2}) END", (3,)),
    _b("FROM_BASE64", "string", REWRITTEN, "sqlglot writes Spark's `unbase64`, a BINARY; Flink's is the UTF-8 STRING", "CAST(TO_BINARY({0}, 'base64') AS STRING)", (1,)),
    _b("ASCII", "string", REWRITTEN, "of a non-ASCII first character Flink gives its first UTF-8 byte, signed (-61 for `é`); Spark the code point (233)", "(CAST(CONV(HEX(SUBSTRING(ENCODE(CONCAT({0}, CHR(0)), 'UTF-8'), 1, 1)), 16, 10) AS INT) + 128) % 256 - 128", (1,)),
    _b("DECODE", "string", FLINK, "malformed bytes are U+FFFD, as in Flink: funke's sessions set `spark.sql.legacy.codingErrorAction` (Spark 4 fails the job otherwise)"),
    _b("ENCODE", "string", REWRITTEN, "a character the charset lacks (US-ASCII, ISO-8859-1) is `?` in Flink; Spark fails the job", "ENCODE(CASE UPPER({1}) WHEN 'US-ASCII' THEN REGEXP_REPLACE({0}, '[^\\\\x00-\\\\x7F]', '?') WHEN 'ISO-8859-1' THEN REGEXP_REPLACE({0}, '[^\\\\x00-\\\\xFF]', '?') ELSE {0} END, {1})", (2,)),
    _b("INSTR", "string", REWRITTEN, "sqlglot writes LOCATE and drops a third and fourth argument; funke takes Flink's two-argument form (the others are refused)", instr, (2,)),
    _b("LOCATE", "string", REWRITTEN, "a start up to 0 searches from 1 in Flink (Spark: 0); a NULL start is NULL", locate, (2, 3)),
    _b("PARSE_URL", "string", DIFFERS, "an invalid URL, an unknown protocol or none is NULL in Flink; Spark fails the job or parses it. Java's URL reads some URLs Spark's rejects (`http://a b.com/x`): NULL", parse_url, (2, 3)),
    _b("SPLIT_INDEX", "string", REWRITTEN, "no Spark function: `split` at the separator taken as written (an empty one splits at whitespace, as Flink's), NULL past the last part, for a negative index or an empty string", "CASE WHEN {2} >= 0 THEN TRY_ELEMENT_AT(FILTER(SPLIT({0}, IF({1} = '', '\\\\p{javaWhitespace}', CONCAT('\\\\Q', REPLACE({1}, '\\\\E', '\\\\E\\\\\\\\E\\\\Q'), '\\\\E')), -1), fk_x -> {0} <> ''), {2} + 1) END", (3,)),
    _b("STR_TO_MAP", "string", REWRITTEN, "Spark's `str_to_map` with Flink's delimiters by default (`,` and `=`; Spark's one-argument form splits keys at `:`); of `''` an empty map (Spark `{'': NULL}`); of a key given twice the last value, as Flink's (funke's sessions set `spark.sql.mapKeyDedupPolicy` to `LAST_WIN`)", str_to_map, (1, 3)),
    _b("ELT", "string", REWRITTEN, "an index out of range is NULL in Flink; Spark fails the job", elt),
    _b("PRINTF", "string", DIFFERS, "a format that does not fit its arguments fails the job (Flink: NULL)"),
    _b("TRANSLATE", "string", REWRITTEN, "a NULL from or to string is `''` in Flink; NULL in Spark", "TRANSLATE({0}, COALESCE({1}, ''), COALESCE({2}, ''))", (3,)),
    _b("URL_DECODE", "string", REWRITTEN, "a malformed escape is NULL in Flink; Spark fails the job", "TRY_URL_DECODE({0})", (1,)),
    _b("INET_ATON", "string", REWRITTEN, "no Spark function", "ELEMENT_AT(TRANSFORM(ARRAY(SPLIT({0}, '\\\\.', -1)), p -> CASE WHEN SIZE(p) BETWEEN 1 AND 4 AND FORALL(p, x -> x RLIKE '^[0-9]+$' AND TRY_CAST(x AS INT) <= 255) THEN AGGREGATE(SEQUENCE(1, SIZE(p)), CAST(0 AS BIGINT), (acc, j) -> acc + SHIFTLEFT(CAST(p[j - 1] AS BIGINT), IF(j = SIZE(p), 0, 32 - 8 * j))) END), 1)", (1,)),
    _b("INET_NTOA", "string", REWRITTEN, "no Spark function", "ELEMENT_AT(TRANSFORM(ARRAY(CAST({0} AS BIGINT)), n -> CASE WHEN n BETWEEN 0 AND 4294967295 THEN CONCAT_WS('.', CAST(SHIFTRIGHT(n, 24) AS STRING), CAST(SHIFTRIGHT(n, 16) & 255 AS STRING), CAST(SHIFTRIGHT(n, 8) & 255 AS STRING), CAST(n & 255 AS STRING)) END), 1)", (1,)),
    _b("SHA224", "string", REWRITTEN, "no Spark function: `sha2`", "SHA2({0}, 224)", (1,)),
    _b("SHA256", "string", REWRITTEN, "no Spark function: `sha2`", "SHA2({0}, 256)", (1,)),
    _b("SHA384", "string", REWRITTEN, "no Spark function: `sha2`", "SHA2({0}, 384)", (1,)),
    _b("SHA512", "string", REWRITTEN, "no Spark function: `sha2`", "SHA2({0}, 512)", (1,)),
    _b("IS_ALPHA", "string", REWRITTEN, "no Spark function: every character a letter (NULL and `''` FALSE)", "COALESCE({0} RLIKE '^\\\\p{L}+$', FALSE)", (1,)),
    _b("IS_DIGIT", "string", REWRITTEN, "no Spark function: every character a digit", "COALESCE({0} RLIKE '^\\\\p{Nd}+$', FALSE)", (1,)),
    _b("IS_DECIMAL", "string", REWRITTEN, "no Spark function: a string Java reads as a number", "COALESCE({0} RLIKE '^(\\\\p{Nd}+|[\\\\x00-\\\\x20]*[+-]?(NaN|Infinity|((\\\\d+\\\\.?\\\\d*|\\\\.\\\\d+)([eE][+-]?\\\\d+)?|0[xX]([0-9a-fA-F]+\\\\.?|[0-9a-fA-F]*\\\\.[0-9a-fA-F]+)[pP][+-]?\\\\d+)[fFdD]?)[\\\\x00-\\\\x20]*)$', FALSE)", (1,)),
    _b("GREATEST", "string", REWRITTEN, "a NULL argument makes Flink's NULL; Spark skips NULLs", extreme("ARRAY_MAX")),
    _b("LEAST", "string", REWRITTEN, "as GREATEST", extreme("ARRAY_MIN")),
    # -- collection ---------------------------------------------------------------------------------------
    _b("ARRAY", "collection", FLINK, "`ARRAY[a, b, ...]`"),
    _b("ROW", "collection", REWRITTEN, "Spark has no ROW(...): `named_struct` with Flink's field names `EXPR$0`, `EXPR$1`, ...", lambda args, _: call("NAMED_STRUCT", *[x for i, a in enumerate(args) for x in (exp.Literal.string(f"EXPR${i}"), a)])),
    _b("CARDINALITY", "collection", FLINK),
    _b("ELEMENT", "collection", REWRITTEN, "no Spark function: the sole element, NULL for an empty array, and the job fails for more than one (as Flink's)", "element_at(transform(array({0}), a -> CASE WHEN size(a) > 1 THEN raise_error('Array has more than one element.') ELSE try_element_at(a, 1) END), 1)", (1,)),
    _b("ARRAY_APPEND", "collection", DIFFERS, "sqlglot's `array_append` of a NULL array gives `[x]`; Flink NULL. Flink cuts a string to the array's CHAR(n) type (`ARRAY['a']` and `'bcd'` give `['a', 'b']`), funke does not", "concat({0}, array({1}))", (2,)),
    _b("ARRAY_PREPEND", "collection", REWRITTEN, "as ARRAY_APPEND", "concat(array({1}), {0})", (2,)),
    _b("ARRAY_CONCAT", "collection", FLINK),
    _b("ARRAY_CONTAINS", "collection", REWRITTEN, "Spark's is NULL for a NULL needle, or a NULL element and no match; Flink compares NULLs as values", "exists({0}, fk_x -> fk_x <=> {1})", (2,)),
    _b("ARRAY_DISTINCT", "collection", FLINK),
    _b("ARRAY_EXCEPT", "collection", FLINK),
    _b("ARRAY_INTERSECT", "collection", FLINK),
    _b("ARRAY_UNION", "collection", FLINK),
    _b("ARRAY_JOIN", "collection", FLINK, "Spark also joins a non-string array, which Flink refuses"),
    _b("ARRAY_MAX", "collection", DIFFERS, "only with NaN: Spark takes NaN as the largest value, Flink's result depends on the elements' order"),
    _b("ARRAY_MIN", "collection", DIFFERS, "only with NaN: as ARRAY_MAX"),
    _b("ARRAY_POSITION", "collection", REWRITTEN, "Spark's is a BIGINT; Flink's an INT", "CAST(array_position({0}, {1}) AS INT)", (2,)),
    _b("ARRAY_REMOVE", "collection", REWRITTEN, "Spark's gives NULL for a NULL needle; Flink removes the NULL elements", "filter({0}, fk_x -> NOT (fk_x <=> {1}))", (2,)),
    _b("ARRAY_REVERSE", "collection", REWRITTEN, "Spark's is `reverse`", "reverse({0})", (1,)),
    _b("ARRAY_SLICE", "collection", REWRITTEN, "Spark's `slice` takes a length, not an end, and fails for a start of 0: the offsets are made Flink's (1-based, 0 the first, negative from the end, the end inclusive, clamped to the array; [] when the start is after the end; NULL for a NULL argument)", array_slice, (2, 3)),
    _b("ARRAY_SORT", "collection", DIFFERS, "Spark's `array_sort` puts NULLs last and its second argument is a comparator; funke: `sort_array` (ascending, NULLs first, Flink's default); the ascending and NULL-order arguments are refused. NaN sorts last (Flink: by its order of comparison)", "sort_array({0})", (1,)),
    _b("SPLIT", "collection", REWRITTEN, "Spark's `split` takes a regex and gives `['']` for `''` (Flink `[]`) and a trailing `''` for an empty delimiter (Flink one element per character)", r"CASE WHEN {1} = '' THEN regexp_extract_all({0}, '(?s).', 0) WHEN {0} = '' THEN array() ELSE split({0}, concat('\\Q', replace({1}, '\\E', '\\E\\\\E\\Q'), '\\E'), -1) END", (2,)),
    _b("MAP_ENTRIES", "collection", FLINK),
    _b("MAP_FROM_ARRAYS", "collection", DIFFERS, "of a key given twice funke's map keeps the last value (as Flink's `MAP[...]` and `STR_TO_MAP` do; funke's sessions set `spark.sql.mapKeyDedupPolicy` to `LAST_WIN`, where Spark would fail the job); Flink 2.3's keeps both entries: `CARDINALITY` 2, `MAP_KEYS` `['a', 'a']`, `CAST` to STRING `{a=1, a=2}`, a lookup fails the job, collected in Python the last wins"),
    _b("MAP_KEYS", "collection", FLINK),
    _b("MAP_VALUES", "collection", FLINK),
    _b("MAP_UNION", "collection", REWRITTEN, "no Spark function: `map_concat` with the later map's keys winning", "map_concat(map_filter({0}, (fk_k, fk_v) -> NOT array_contains(map_keys({1}), fk_k)), {1})", (2,)),
    _b("BITMAP_AND BITMAP_ANDNOT BITMAP_BUILD BITMAP_CARDINALITY BITMAP_FROM_BYTES BITMAP_OR BITMAP_TO_ARRAY BITMAP_TO_BYTES BITMAP_TO_STRING BITMAP_XOR BITMAP_AND_AGG BITMAP_AND_CARDINALITY_AGG BITMAP_BUILD_AGG BITMAP_BUILD_CARDINALITY_AGG BITMAP_OR_AGG BITMAP_OR_CARDINALITY_AGG BITMAP_XOR_AGG BITMAP_XOR_CARDINALITY_AGG", "collection", REFUSED, "Spark has no BITMAP type (Flink's RoaringBitmap of INT)"),
    _b("OBJECT_OF OBJECT_UPDATE", "collection", REFUSED, "Spark has no structured (class-named) types"),
    _b("HASH_CODE", "collection", REWRITTEN, "no Spark function (Spark's `hash` is Murmur3): Java's hash code, an INT, as Flink's: of a STRING `String.hashCode` (over UTF-16 units), of an integer the value (of a BIGINT `Long.hashCode`), of a BOOLEAN 1231 or 1237, of a DATE its days since 1970-01-01; of another type refused (a DOUBLE's hash code is of its bits, which Spark cannot read; CAST it)", hash_code, (1,)),
    _b("UUID", "collection", FLINK, "a new UUID per call (Flink gives two calls in one row the same)"),
    _b("TYPEOF", "collection", REFUSED, "Flink's type names (`INT NOT NULL`, `CHAR(3)`) cannot be told from Spark's types"),
    # -- json ---------------------------------------------------------------------------------------------
    _b("PARSE_JSON", "json", REWRITTEN, "sqlglot drops the call (the string stays a string); Spark's `parse_json`", "parse_json({0})", (1,)),
    _b("TRY_PARSE_JSON", "json", FLINK),
    _b("JSON_QUERY", "json", DIFFERS, "rewritten (no Spark function): `try_variant_get(try_parse_json(s), path)` and `to_json` of it, with each number's text kept (Spark's variant keeps none: funke reads every number as a string first) and written as Flink writes it (Java's BigDecimal: `1.50`, `1e3` as `1E+3`, `-0.0` as `0.0`); the keys sorted (by UTF-16 units), the last of a duplicate key, no whitespace, Jackson's escapes (non-ASCII as it is), as Flink's; a STRING to JSON_OBJECT, JSON_ARRAY and JSON_STRING, as in Flink. Strict mode (the default) and lax mode; `RETURNING STRING` (or a VARCHAR of no length) and `ARRAY<STRING>`; `WITHOUT`, `WITH CONDITIONAL`, `WITH UNCONDITIONAL` `[ARRAY] WRAPPER`; `{NULL, EMPTY ARRAY, EMPTY OBJECT, ERROR} ON EMPTY` and `ON ERROR` (ERROR fails the job, as in Flink). The path must be a literal of `$`, `.key`, `['key']`, `[n]` (no wildcards, `..`, filters, negative indexes: refused), as must another RETURNING type (Flink cuts a VARCHAR(n) short). A text with the character DEL (U+007F, or escaped `\\u007f`), U+0001 or U+0002 fails the job (funke's marks). Differs for a text with an escaped lone surrogate (`\\ud800`): Spark's parser refuses it (ON ERROR in strict mode, ON EMPTY in lax mode; Flink reads it)", json_query, (2, 3, 4, 5, 6)),
    _b("JSON_OBJECT", "json", REWRITTEN, "no Spark function: the members in the order of their keys, as Flink writes them (the last of a duplicate key wins), `NULL ON NULL` (the default) and `ABSENT ON NULL`; the values' text is `to_json`'s, a nested JSON_OBJECT or JSON_ARRAY inserted as JSON. Refused: a key that is no string literal, a value that is no STRING, integer, BOOLEAN, DECIMAL or BINARY, as Flink writes a DOUBLE as a BigDecimal (`1.0E+20`), a TIMESTAMP in ISO form; where funke cannot tell a value's type while planning, the job fails for such a value (CAST it)", json_object),
    _b("JSON_ARRAY", "json", REWRITTEN, "no Spark function: as JSON_OBJECT's values, in order; `ABSENT ON NULL` (the default) and `NULL ON NULL`", json_array),
    _b("JSON", "json", REWRITTEN, "no Spark function: a value of JSON_OBJECT or JSON_ARRAY (anywhere else refused, as Flink refuses it), inserted as JSON, written again as Flink writes it: as JSON_QUERY's text (the keys sorted, the last of a duplicate key, each number as Java's BigDecimal writes it, `1.50`, `2e3` as `2E+3`, `1.0e1` as `10`; what follows the first value not read); NULL as the object's `null` or left out, as another NULL value; a text that is no JSON fails the job, as in Flink", json_raw, (1,)),
    _b("JSON_STRING", "json", REWRITTEN, "no Spark function: `to_json`'s text of a STRING, integer, BOOLEAN, DECIMAL (its scale kept: `1.50`) or BINARY (base64) value, NULL for NULL; of JSON_OBJECT or JSON_ARRAY that JSON; of another type refused (where funke cannot tell the type while planning, the job fails for one; CAST it): Flink writes a DOUBLE as a BigDecimal (`1.0E+20`, `0.00010`), a TIMESTAMP in ISO form, a MAP's keys in order", json_string, (1,)),
    _b("JSON_EXISTS", "json", DIFFERS, "rewritten (no Spark function): `try_variant_get(try_parse_json(s), path)` found and not JSON null; strict mode (the default) and lax mode, `{TRUE, FALSE, UNKNOWN, ERROR} ON ERROR` as Flink's. The path must be a literal of `$`, `.key`, `['key']`, `[n]` (no wildcards, `..`, filters, negative indexes: refused). A duplicate key: the last value, as Flink's (funke's sessions set `spark.sql.variant.allowDuplicateKeys`). Differs for a text with an escaped lone surrogate (`\\ud800`): Spark's parser refuses it (FALSE, or ON ERROR in strict mode; Flink reads it)", json_exists, (2, 3)),
    Builtin(("IS JSON",), "json", DIFFERS, "rewritten: `try_parse_json(s)` (Jackson as Flink's: what follows the first value is not read, `'[1] x'` is JSON) and the value's kind (`VALUE`, `SCALAR`, `ARRAY`, `OBJECT`); NULL is no JSON. A duplicate key is JSON, as in Flink (funke's sessions set `spark.sql.variant.allowDuplicateKeys`). Differs for a text with an escaped lone surrogate (`\\ud800`): Spark's parser refuses it (Flink: JSON)", is_json, (2,)),
    _b("JSON_QUOTE", "json", REWRITTEN, "no Spark function: Flink's escaping (`\\\"`, `\\\\`, `\\/`, `\\n` ..., every character past ASCII `\\uxxxx`, other control characters as they are)", json_quote, (1,)),
    _b("JSON_UNQUOTE", "json", DIFFERS, "rewritten (no Spark function): a text that is JSON and starts and ends with `\"` is what lies between, unescaped (`'\"a\"b\"'` is `a\"b`); any other text is itself. Differs for a text with an escaped lone surrogate (`\\ud800`): no JSON to Spark's parser, funke gives it as it is", json_unquote, (1,)),
    _b("JSON_VALUE", "json", DIFFERS, "rewritten (Spark's `get_json_object` gives an object's JSON text): `try_variant_get(try_parse_json(s), path)` with each number's text kept, as JSON_QUERY: the scalar at the path, a number written as Flink writes it (`2.0`, `1.50`, `1E+3`), a boolean `true`/`false`. Strict mode (the default) and lax mode: a text that is no JSON, a path that leads nowhere, to JSON null, an object or an array gives the ON ERROR choice in strict mode, the ON EMPTY one in lax mode, as Flink's; `{NULL, ERROR, DEFAULT x} ON EMPTY` and `ON ERROR` (ERROR fails the job, as does a DEFAULT of another type than RETURNING's where it is used, as in Flink; Flink casts a number DEFAULT to a STRING). `RETURNING STRING` (or a VARCHAR of no length), `INT`, `DOUBLE`, `BOOLEAN`, as Flink 2.3 runs them: an INT from a JSON integer in its range, a DOUBLE from a number with a fraction or an exponent, a BOOLEAN from a JSON boolean; a value of another kind fails the job, as in Flink (its ClassCastException, whatever ON ERROR says). Other RETURNING types are refused, as Flink's planner refuses them. The path must be a literal of `$`, `.key`, `['key']`, `[n]`. Of a duplicate key the last value, as Flink's (funke's sessions set `spark.sql.variant.allowDuplicateKeys`)", json_value, (2, 3, 4, 5, 6, 7)),
    # -- grouping -----------------------------------------------------------------------------------------
    _b("GROUP_ID", "grouping", PLANNER, "in an aggregation's SELECT list or HAVING: the count of the same grouping set's earlier copies (`GROUPING SETS ((a), (a))`: 0, then 1), a BIGINT"),
    _b("GROUPING GROUPING_ID", "grouping", PLANNER, "in an aggregation's SELECT list or HAVING: `GROUPING(a, b)` the bits of the arguments the row's grouping set lacks (`a` the high one), a BIGINT"),
    # -- catalog ------------------------------------------------------------------------------------------
    _b("CURRENT_DATABASE", "catalog", REWRITTEN, "funke's one database, `default_database` (Flink's default)", "'default_database'", (0,)),
    # -- legacy group windows -----------------------------------------------------------------------------
    _b("TUMBLE_START HOP_START SESSION_START", "group window", PLANNER, "the window TVF's `window_start`"),
    _b("TUMBLE_END HOP_END SESSION_END", "group window", PLANNER, "the window TVF's `window_end`"),
    _b("TUMBLE_ROWTIME HOP_ROWTIME SESSION_ROWTIME", "group window", PLANNER, "the window TVF's `window_time`"),
    _b("TUMBLE_PROCTIME HOP_PROCTIME SESSION_PROCTIME", "group window", PLANNER, "a processing-time attribute on each result row (`PROCTIME()` when the window's row is produced), for a later processing-time window, join or OVER; alone as a column"),
    # -- aggregate ----------------------------------------------------------------------------------------
    _b("COUNT", "aggregate", PLANNER, "`COUNT(*)`, `COUNT(x)` (non-NULL values), `COUNT(DISTINCT x, ...)`, `FILTER (WHERE ...)`"),
    _b("SUM", "aggregate", DIFFERS, "of an integer type, that type (Spark: BIGINT); of a DECIMAL(p, s), a DECIMAL(38, s) (Spark: DECIMAL(p + 10, s)). Of a FLOAT, Flink adds 4-byte floats in arrival order (a window's slices one after another), funke adds 8-byte ones and rounds to FLOAT once: the last digit can differ (PyFlink's sliding_window example: 86.399994, funke 86.4)"),
    _b("AVG", "aggregate", DIFFERS, "of an integer type, that type, truncated (Spark: DOUBLE); of a FLOAT, a FLOAT (the average of 8-byte floats, rounded once, as Flink's); of a DECIMAL(p, s), Flink's DECIMAL(38, max(6, s)) rounded half up, the sum's DECIMAL(38, s) over the count (Spark: a DECIMAL(p + 4, s + 4)); in GROUP BY, window and OVER aggregations a scale above 6 is refused (Spark's division cannot give it; MATCH_RECOGNIZE's DEFINE and MEASURES, computed in Python, give it)"),
    _b("MIN", "aggregate", PLANNER, "retracts over an updating input (Flink's `MinWithRetractAggFunction`)"),
    _b("MAX", "aggregate", PLANNER, "retracts over an updating input"),
    _b("VAR_POP VAR_SAMP VARIANCE STDDEV_POP STDDEV_SAMP STDDEV", "aggregate", PLANNER, "Flink's Welford algorithm in 8-byte floats (Spark's `var_pop` rounds differently and is a DOUBLE): of an integer type, that type, truncated; of a FLOAT, a FLOAT; of a DECIMAL refused (CAST it to DOUBLE); `VARIANCE` is `VAR_SAMP`, `STDDEV` is `STDDEV_SAMP`; NULL for one value (`_SAMP`); retract over an updating input; in GROUP BY, window and OVER aggregations"),
    _b("FIRST_VALUE LAST_VALUE", "aggregate", PLANNER, "the first (last) non-NULL value in arrival order; over an updating input a retraction takes that value's first occurrence away (Flink's `...WithRetract` functions); in GROUP BY, window and OVER aggregations"),
    _b("LISTAGG", "aggregate", PLANNER, "the non-NULL strings in arrival order, joined by the separator (a string literal; `,` without one); NULL over none; a retraction takes the value's first occurrence away; `DISTINCT`; of a non-string refused, as in Flink"),
    _b("ARRAY_AGG", "aggregate", PLANNER, "the values in arrival order, NULLs kept (`IGNORE NULLS`: not; `RESPECT NULLS`, the default); NULL over no row; a retraction takes the value's first occurrence away; `DISTINCT`"),
    _b("PERCENTILE", "aggregate", PLANNER, "`PERCENTILE(x, p [, frequency])`, `p` a literal in [0, 1] or an ARRAY of them (Flink takes an expression too, and then reads any row's); Flink's exact percentile (a DOUBLE; ARRAY<DOUBLE> for an ARRAY), computed as Flink 2.x does, in group, window and OVER aggregations"),
    _b("JSON_ARRAYAGG", "aggregate", PLANNER, "`JSON_ARRAYAGG(v [NULL | ABSENT] ON NULL)` (ABSENT by default): the values' JSON text in arrival order, `[]` over none; a retraction takes the value's first occurrence away; values of the types `JSON_ARRAY` takes (a DOUBLE, TIMESTAMP, DATE, ARRAY... refused while planning); in group and window aggregations (Flink's parser takes no DISTINCT, FILTER or OVER with it). Flink in batch mode sorts a group's rows first (another order); funke keeps arrival order in both modes"),
    _b("JSON_OBJECTAGG", "aggregate", PLANNER, "`JSON_OBJECTAGG([KEY] k VALUE v [NULL | ABSENT] ON NULL)` (NULL by default): the members in key order (UTF-16 order, as Flink's), `{}` over none; a key met twice or a NULL key fails the job, as in Flink; a retraction takes the key away; a STRING key, values of the types `JSON_OBJECT` takes; in group and window aggregations (Flink's parser takes no DISTINCT, FILTER or OVER with it). A key written with `||` does not parse: write `CONCAT(...)`"),
    _b("COLLECT", "aggregate", DIFFERS, "`COLLECT(x)`: the MULTISET of the non-NULL values (`MULTISET<STRING> NOT NULL` of a STRING; `{}` over none, never NULL), kept as a MAP of each value to its count, as Flink keeps one; printed `{a=2, b=1}`, collected as a dict `{'a': 2, 'b': 1}`; a retraction takes one count away; `DISTINCT`, `FILTER (WHERE ...)`; in group, window and OVER aggregations. Differs: the values are in ascending order (Flink: its hash table's, `{16=1, 1=2, -7=1}`); where funke cannot tell a value is never NULL it types `MULTISET<INT>` (Flink `MULTISET<INT NOT NULL>`). Refused: COLLECT inside an expression or HAVING (`CARDINALITY(COLLECT(x))`, on which Flink's planner fails; `CAST(... AS STRING)`), and so any function, condition, GROUP BY or join key over a COLLECT column read through a subquery, a WITH query or a view (`CARDINALITY(c)`, on which Flink's planner fails; `c['a']`, which Flink's refuses; selected as it is, it runs), of an ARRAY, MAP or ROW, of a value whose type funke cannot tell while planning (CAST it); in batch mode `COLLECT(x)` beside a DISTINCT aggregate, on which Flink's batch planner fails (it takes the MIN of the MULTISET)"),
    # -- window (OVER) functions --------------------------------------------------------------------------
    _b("UNNEST", "table function", PLANNER, "`CROSS JOIN UNNEST(array)`: a lateral join with Spark's `explode`"),
    _b("ROW_NUMBER", "window function", PLANNER, "in a Top-N (`WHERE rn <= n`, a rank range `rn > m AND rn <= n`) or a deduplication (`rn = 1`), as Flink plans them"),
    _b("RANK DENSE_RANK", "window function", PLANNER, "in a Top-N in batch mode (regular or window, `WHERE rk <= n` or a rank range); refused in a stream, as Flink refuses them"),
    _b("LAG", "window function", PLANNER, "`LAG(x [, offset [, default]]) OVER w` over the default frame; in streaming mode Flink's (the rows of one time share the value the last of them sees), in batch mode the rows before each row"),
    _b("LEAD", "window function", PLANNER, "`LEAD(x [, offset [, default]]) OVER w` in batch mode: the value `offset` rows after (a negative offset: before), the default past the partition's end; refused in streaming mode, as Flink refuses it"),
    _b("CUME_DIST PERCENT_RANK NTILE", "window function", PLANNER, "in batch mode, over a whole partition at the end of the input, peers (ties in ORDER BY) as Flink's: a DOUBLE (CUME_DIST, PERCENT_RANK), a BIGINT (`NTILE(n)`, n a positive integer literal; the first buckets one row larger); ROW_NUMBER, RANK and DENSE_RANK also outside a Top-N there; refused in streaming mode, as Flink refuses them"),
)
# fmt: on

#: The built-in functions by each of their names.
BUILTINS: dict[str, Builtin] = {n: b for b in _TABLE for n in b.names}


def write_docs(path: str) -> None:
    """Put ``markdown()`` between the ``functions:begin``/``functions:end`` marks of the file at ``path``."""
    import re
    from pathlib import Path

    doc = Path(path)
    table = f"<!-- functions:begin -->\n{markdown()}\n<!-- functions:end -->"
    doc.write_text(
        re.sub(r"<!-- functions:begin -->\n.*?<!-- functions:end -->", lambda _: table, doc.read_text(), flags=re.DOTALL)
    )


if __name__ == "__main__":  # pragma: no cover - python -m funke.dialect.functions [--write docs/sql.md]
    import sys

    if sys.argv[1:2] == ["--write"]:
        write_docs(sys.argv[2])
    else:
        print(markdown())
