"""Flink's ``CONVERT_TZ(text, from_zone, to_zone)`` as Spark SQL.

Flink reads ``text`` with Java's lenient ``SimpleDateFormat('yyyy-MM-dd HH:mm:ss')`` in the zone
``java.util.TimeZone.getTimeZone(from_zone)`` gives and writes the instant in ``to_zone`` the same way. So:

- the six numbers are read from the start of the text (blanks and tabs before each, a ``-`` sign allowed,
  anything after the seconds ignored, a text that does not match is NULL); each is Java's ``int`` of it;
- they are added to a calendar, so a field past its range rolls over (``2020-02-30`` is March 1st,
  ``25:00:00`` the next day's 01:00);
- a zone name Java does not know is GMT, as is a malformed ``GMT+hh:mm`` (see ``java_zone``);
- a wall time in a daylight-saving gap is read with the offset before the gap, one that occurs twice
  with the later offset (Java's lenient calendar).

Java's time zones differ from the tz database's before 1900 (Java uses a zone's standard offset) and its
calendar is Julian before 1582, so a text whose instant falls before 1900-01-02 (UTC), or whose result
is past the year 9999, fails the job rather than giving another answer; so does an instant after 2037
in a zone the tz database gives transitions of its own after 2037 (``transitions_after_2037``). The zone
arguments must be
string literals: their meaning is fixed while planning.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
import re
import struct
import zoneinfo

from sqlglot import exp

from funke.dialect.rewrites import fill
from funke.errors import PlanError, UnsupportedError

#: Java's three-letter zone ids that are no tz database zone (``java.time.ZoneId.SHORT_IDS``, as
#: ``java.util.TimeZone`` reads them): the zone each stands for.
JAVA_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
}  # fmt: skip
#: Java's fixed-offset legacy ids (the tz database makes them links to regions now): seconds east of UTC.
JAVA_FIXED_IDS = {"EST": -5 * 3600, "MST": -7 * 3600, "HST": -10 * 3600}

#: Java's custom id: ``GMT``, a sign, then ``h``, ``hh``, ``hmm`` or ``hhmm``, or ``[h[h]]:mm``.
_CUSTOM = re.compile(r"GMT([+-])(?:([0-9]{0,2}):([0-9]{2})|([0-9]{1,4}))")


@functools.cache
def _tz_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) - {"localtime", "posixrules", "Factory"}


#: 2038-01-01 00:00 UTC, as an epoch second: Java's legacy zones list transitions to 2037 and follow the
#: zone's recurring rule after it, so a zone the tz database gives later transitions of its own
#: (Africa/Casablanca, Asia/Gaza) differs in Flink from then on.
_JAVA_LAST = 2145916800


@functools.cache
def transitions_after_2037(zone: str) -> bool:
    """Whether the tz database lists transitions of ``zone`` from 2038 on (beyond its recurring rule).

    >>> transitions_after_2037("Africa/Casablanca"), transitions_after_2037("America/New_York")
    (True, False)
    """
    data = _tzif(zone)
    if data is None or data[4] < ord("2"):
        return True  # (not known: funke does not give its instants past 2037)
    counts = struct.unpack(">6l", data[20:44])
    isut, isstd, leap, times, types, chars = counts
    start = 44 + times * 5 + types * 6 + chars + leap * 8 + isstd + isut + 44
    times = struct.unpack(">6l", data[start - 24 : start])[3]
    last = struct.unpack(f">{times}q", data[start : start + times * 8]) if times else ()
    return any(t > 2**31 - 1 for t in last)  # (zic marks 2038-01-19 03:14:07 with a transition that changes nothing)


def _tzif(zone: str) -> bytes | None:
    for root in zoneinfo.TZPATH:
        path = os.path.join(root, zone)
        if os.path.isfile(path):
            with open(path, "rb") as file:
                return file.read()
    try:
        return importlib.resources.files("tzdata.zoneinfo").joinpath(zone).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return None


def java_zone(name: str) -> str | int:
    """The zone Java's ``TimeZone.getTimeZone(name)`` gives: a tz database id, or a fixed offset in
    seconds east of UTC (0, GMT, for a name Java does not know).

    >>> java_zone("Asia/Kolkata"), java_zone("PST"), java_zone("EST")
    ('Asia/Kolkata', 'America/Los_Angeles', -18000)
    >>> java_zone("GMT+05:30"), java_zone("GMT-5"), java_zone("GMT+123"), java_zone("GMT+:30")
    (19800, -18000, 4980, 1800)
    >>> java_zone("utc"), java_zone("+05:30"), java_zone("GMT+24"), java_zone("GMT+5:3"), java_zone("UTC")
    (0, 0, 0, 0, 0)
    """
    if name in JAVA_FIXED_IDS:
        return JAVA_FIXED_IDS[name]
    if name in JAVA_SHORT_IDS:
        return JAVA_SHORT_IDS[name]
    if name in ("UTC", "GMT", "UT", "Z"):
        return 0
    if name.startswith("SystemV/"):
        raise UnsupportedError(f"Flink SQL: CONVERT_TZ with the zone '{name}' is not supported by funke yet: a JDK-only zone id")
    if name in _tz_names():
        return name
    custom = _CUSTOM.fullmatch(name)
    if custom is None:
        return 0
    sign, hours, minutes, packed = custom.groups()
    if packed is not None:
        hours, minutes = (packed, "0") if len(packed) <= 2 else (packed[:-2], packed[-2:])
    h, m = int(hours or "0"), int(minutes)
    if h > 23 or m > 59:
        return 0
    return (h * 3600 + m * 60) * (-1 if sign == "-" else 1)


#: The six numbers at the start of a text, as Java's lenient 'yyyy-MM-dd HH:mm:ss' reads them.
_FIELDS = r"^[ \t]*(-?[0-9]+)-[ \t]*(-?[0-9]+)-[ \t]*(-?[0-9]+) [ \t]*(-?[0-9]+):[ \t]*(-?[0-9]+):[ \t]*(-?[0-9]+)"
#: The same with any Unicode digits (Java reads them too): funke fails the job on a text that has them.
_UNICODE_FIELDS = _FIELDS.replace("[0-9]", r"\p{Nd}")
_NON_ASCII = r"[^\x00-\x7F]"
_LONG_MAX = "9223372036854775807"


def _sql(regex: str) -> str:
    """``regex`` as a Spark SQL string literal."""
    return "'" + regex.replace("\\", "\\\\") + "'"


def _field(i: int) -> str:
    """Field ``i`` of the text ``{0}`` as Java's calendar takes it: the ``int`` of the number read (a ``long``
    wraps around; a number past a ``long`` is read as a double, whose ``int`` is clamped)."""
    text = f"REGEXP_EXTRACT({{0}}, {_sql(_FIELDS)}, {i})"
    digits = f"REGEXP_REPLACE({text}, '^-?0*', '')"
    huge = f"(LENGTH({digits}) > 19 OR (LENGTH({digits}) = 19 AND {digits} > '{_LONG_MAX}'))"
    return (
        f"CASE WHEN {huge} AND NOT ({text} LIKE '-%' AND {digits} = '9223372036854775808') "
        f"THEN IF({text} LIKE '-%', -2147483648, 2147483647) "
        f"ELSE CAST(PMOD(CAST({text} AS DECIMAL(20, 0)) + 2147483648, 4294967296) - 2147483648 AS BIGINT) END"
    )


def _offset(at: str, zone: str | int) -> str:
    """Seconds east of UTC of ``zone`` at the epoch second ``at``."""
    if isinstance(zone, int):
        return str(zone)
    return f"(UNIX_SECONDS(FROM_UTC_TIMESTAMP(TIMESTAMP_SECONDS({at}), '{zone}')) - ({at}))"


def _to_utc(wall: str, zone: str | int) -> str:
    """The epoch second of the wall time ``wall`` (seconds from 1970-01-01 00:00 on the wall) in ``zone``:
    Spark's ``to_utc_timestamp`` (in a gap the offset before it), the later offset where the wall time
    occurs twice."""
    if isinstance(zone, int):
        return f"(({wall}) - {zone})"
    first = f"UNIX_SECONDS(TO_UTC_TIMESTAMP(TIMESTAMP_SECONDS({wall}), '{zone}'))"
    return (
        f"ELEMENT_AT(TRANSFORM(ARRAY({first}), u -> ELEMENT_AT(TRANSFORM(ARRAY(({wall}) - {_offset('u + 21600', zone)}), "
        f"v -> IF(v > u AND v + {_offset('v', zone)} = ({wall}), v, u)), 1)), 1)"
    )


#: 1900-01-02 00:00 UTC and 10000-01-01 00:00, as epoch seconds.
_FIRST, _END = -2208902400, 253402300800


def convert_tz(args: list[exp.Expression], types: list[str | None]) -> exp.Expression:
    """Flink's ``CONVERT_TZ(text, from_zone, to_zone)``, the zones string literals."""
    zones = []
    for arg in args[1:]:
        if isinstance(arg, exp.Null) or (isinstance(arg, exp.Cast) and isinstance(arg.this, exp.Null)):
            return exp.Cast(this=exp.Null(), to=exp.DataType.build("string"))
        if not (isinstance(arg, exp.Literal) and arg.is_string):
            raise PlanError(
                f"Flink SQL: CONVERT_TZ(..., {arg.sql()}, ...): funke takes the time zones as string literals "
                "(it resolves them as Java does while planning)"
            )
        zones.append(java_zone(arg.name))
    source, target = zones
    late = [z for z in zones if isinstance(z, str) and transitions_after_2037(z)]
    end = _JAVA_LAST - 86400 if late else _END
    y, mo, d, h, mi, s = (_field(i) for i in range(1, 7))
    wall = "(UNIX_DATE(MAKE_DATE(CAST(FLOOR(f.m / 12) AS INT), CAST(PMOD(f.m, 12) + 1 AS INT), 1)) + f.d - 1) * 86400 + f.t"
    utc = _to_utc("w", source)
    out = f"(u + {_offset('u', target)})"
    last = f" or after 2037 in {', '.join(late)}" if late else ""
    fail = f"RAISE_ERROR(CONCAT('CONVERT_TZ: funke gives no instant before 1900-01-02{last} or after the year 9999: ', {{0}}))"
    template = (
        f"CASE WHEN REGEXP_EXTRACT({{0}}, {_sql(_UNICODE_FIELDS)}, 0) RLIKE {_sql(_NON_ASCII)} THEN "
        "RAISE_ERROR(CONCAT('CONVERT_TZ: funke reads no digits other than 0-9: ', {0})) "
        f"WHEN {{0}} IS NULL OR NOT ({{0}} RLIKE {_sql(_FIELDS)}) THEN NULL "
        f"ELSE ELEMENT_AT(TRANSFORM(ARRAY(NAMED_STRUCT('m', {y} * 12 + {mo} - 1, 'd', {d}, 't', {h} * 3600 + {mi} * 60 + {s})), "
        f"f -> CASE WHEN f.m < 1800 * 12 OR f.m >= 10001 * 12 THEN {fail} "
        f"ELSE ELEMENT_AT(TRANSFORM(ARRAY({wall}), w -> CASE WHEN w < {_FIRST - 2 * 86400} OR w >= {_END + 2 * 86400} THEN {fail} "
        f"ELSE ELEMENT_AT(TRANSFORM(ARRAY({utc}), u -> CASE WHEN u < {_FIRST} OR u >= {end} OR {out} >= {_END} THEN {fail} "
        f"ELSE DATE_FORMAT(TIMESTAMP_NTZ '1970-01-01 00:00:00' + MAKE_DT_INTERVAL(CAST(FLOOR({out} / 86400) AS INT), 0, 0, "
        f"PMOD({out}, 86400)), 'yyyy-MM-dd HH:mm:ss') END), 1) END), 1) END), 1) END"
    )
    return fill(template, args[:1])
