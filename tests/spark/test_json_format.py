"""JSON records are read by the rules of Flink's JSON format (funke.spark.parse): a number for an INT is truncated,
a number's text in a string is a number, a BOOLEAN is true for ``true`` or the text "true" (any case) and false for
anything else. Where Flink's reader fails a record, funke sends it to the dead letters; with Flink's
``json.ignore-parse-errors`` the value is NULL and the row kept, as in Flink.

The expected values are what PyFlink 2.3 read for the same records (its filesystem connector, format json): a
``FAILS`` is a record Flink's reader fails on (and reads as NULL with ``json.ignore-parse-errors``).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
from decimal import Decimal

import pytest

import funke as fk
from funke.errors import PlanError, UnsupportedError

pytestmark = pytest.mark.spark
FAILS = object()
X = FAILS
COLUMNS = ("i", "b", "s", "t", "d", "f", "m", "o")
SCHEMA = "n int, i int, b bigint, s smallint, t tinyint, d double, f float, m decimal(10,2), o boolean"
D = Decimal
#: The JSON value -> what Flink reads of it for each column of SCHEMA.
FLINK_READS = {
    "3": (3, 3, 3, 3, 3.0, 3.0, D("3.00"), False),
    "1.5": (1, 1, X, X, 1.5, 1.5, D("1.50"), False),
    "2.9": (2, 2, X, X, 2.9, 2.9, D("2.90"), False),
    "-2.9": (-2, -2, X, X, -2.9, -2.9, D("-2.90"), False),
    '"3"': (3, 3, 3, 3, 3.0, 3.0, D("3.00"), False),
    '" 4 "': (4, 4, 4, 4, 4.0, 4.0, D("4.00"), False),
    '"1.5"': (X, X, X, X, 1.5, 1.5, D("1.50"), False),
    '"x"': (X, X, X, X, X, X, X, False),
    "true": (X, X, X, X, X, X, X, True),
    '"true"': (X, X, X, X, X, X, X, True),
    '" TRUE "': (X, X, X, X, X, X, X, True),
    '"yes"': (X, X, X, X, X, X, X, False),
    '""': (X, X, X, X, X, X, X, False),
    "1e2": (100, 100, X, X, 100.0, 100.0, D("100.00"), False),
    "1E+1": (10, 10, X, X, 10.0, 10.0, D("10.00"), False),
    "3000000000": (X, 3000000000, X, X, 3e9, 3e9, None, False),  # a DECIMAL too wide is NULL in Flink, no failure
    "1.239": (1, 1, X, X, 1.239, 1.239, D("1.24"), False),
    '"1.239"': (X, X, X, X, 1.239, 1.239, D("1.24"), False),
    '"NaN"': (X, X, X, X, math.nan, math.nan, X, False),
    "0": (0, 0, 0, 0, 0.0, 0.0, D("0.00"), False),
    "[1]": (X, X, X, X, X, X, X, False),
    "null": (None,) * 8,
}


def same(column: str, got, want) -> bool:
    if column in "df" and isinstance(want, float):
        if column == "f":  # a FLOAT is 32 bits in both
            want = struct.unpack("f", struct.pack("f", want))[0]
        return got is not None and (math.isnan(want) and math.isnan(got) or got == want)
    return got == want and type(got) is type(want)


def run(spark, tmp_path, lines, bounded, **options):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-0.json").write_text("\n".join(lines) + "\n")
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="json", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    out = env.from_source(fk.sources.files(str(tmp_path / "in"), schema=SCHEMA, format="json", **options)).collect()
    env.execute(bounded=bounded).wait(180)
    return out.rows, sorted(r["raw"] for r in dead.rows)


@pytest.mark.parametrize("bounded", [False, True])
def test_each_value_is_read_as_flink_reads_it_and_what_flink_fails_on_is_a_dead_letter(spark, tmp_path, bounded):
    # one value a record, so that each value Flink fails on fails a record of its own
    cells = [(n, c, token, want) for n, (token, wants) in enumerate(FLINK_READS.items()) for c, want in zip(COLUMNS, wants)]
    lines = [json.dumps({"n": n}).rstrip("}") + f', "{c}": {token}}}' for n, c, token, _ in cells]
    rows, dead = run(spark, tmp_path, lines, bounded)
    read = {(r["n"], c): r[c] for r in rows for c in COLUMNS if r[c] is not None}
    wrong = [(token, c, read.get((n, c)), want) for n, c, token, want in cells if want is not FAILS and not same(c, read.get((n, c)), want)]
    assert not wrong, wrong
    assert len(rows) == sum(want is not FAILS for *_, want in cells)
    assert dead == sorted(line for line, (*_, want) in zip(lines, cells) if want is FAILS)


@pytest.mark.parametrize("bounded", [False, True])
def test_with_ignore_parse_errors_a_value_flink_cannot_read_is_null_and_a_record_that_is_no_object_a_dead_letter(spark, tmp_path, bounded):
    lines = [json.dumps({"n": n, **{c: json.loads(token) for c in COLUMNS}}) for n, token in enumerate(FLINK_READS)]
    lines += ["no json", "[1, 2]", '{"n": 99, "i": "1.5", "b": "7", "o": "TRUE", "m": 1e99}']
    rows, dead = run(spark, tmp_path, lines, bounded, ignore_parse_errors=True)
    by_n = {r["n"]: r for r in rows}
    assert sorted(by_n) == [*range(len(FLINK_READS)), 99]
    wrong = [
        (token, c, by_n[n][c], want)
        for n, wants in enumerate(FLINK_READS.values())
        for c, want, token in zip(COLUMNS, wants, [list(FLINK_READS)[n]] * len(COLUMNS))
        if not (by_n[n][c] is None if want in (FAILS, None) else same(c, by_n[n][c], want))
    ]
    assert not wrong, wrong
    assert {c: by_n[99][c] for c in ("i", "b", "o", "m", "d")} == {"i": None, "b": 7, "o": True, "m": None, "d": None}
    assert dead == ["[1, 2]", "no json"]


def test_ignore_parse_errors_is_an_option_of_the_json_and_csv_formats(tmp_path):
    """(csv's: tests/spark/test_csv_format.py)"""
    with pytest.raises(PlanError, match="ignore_parse_errors=True.* is for format='json' or 'csv'"):
        fk.sources.files(str(tmp_path), schema="a int", format="parquet", ignore_parse_errors=True)
    with pytest.raises(PlanError, match="ignore_parse_errors=True.* is for format='json' or 'csv'"):
        fk.sources.kafka("t", schema="a string", format="raw", ignore_parse_errors=True)


NESTED = ['{"a": 1, "b": "x", "r": {"p": 1, "q": 2}}', '{"a": 2, "r": {"p": 1, "q": 2}}', '{"a": 3, "b": null, "r": {"p": 1, "q": 2}}',
          '{"a": 4, "b": "y", "r": {"p": 1}}', '{"a": 5, "b": "z", "r": null}', '{"a": 6, "b": "w", "r": {"p": 1, "q": null}}']  # fmt: skip


@pytest.mark.parametrize("bounded", [False, True])
def test_with_fail_on_missing_field_a_record_without_a_field_is_a_dead_letter(spark, tmp_path, bounded):
    """Flink's json.fail-on-missing-field (refused before, even 'false'): a record without a field of the schema, or
    whose ROW column's object lacks one of its fields, fails a Flink job (PyFlink 2.3: 'Some field is missing in the
    JSON data', 'Fail to deserialize at field: r'); a field whose value is null is there. In funke such a record is a
    dead letter, its reason naming the option; without the option the fields are NULL (PyFlink's rows)."""
    rows = {}
    for on in (False, True):
        (tmp_path / f"in{on}").mkdir()
        (tmp_path / f"in{on}" / "part-0.json").write_text("\n".join(NESTED) + "\n")
        dead = fk.sinks.collect()
        env = fk.StreamEnvironment(app="json-missing", spark=spark, checkpoint_dir=str(tmp_path / f"ck{on}"), dead_letters=dead)
        source = fk.sources.files(str(tmp_path / f"in{on}"), schema="a int, b string, r struct<p: int, q: int>", format="json", fail_on_missing_field=on)
        out = env.from_source(source).collect()
        env.execute(bounded=bounded).wait(180)
        rows[on] = sorted((r["a"], r["b"], r["r"] and (r["r"]["p"], r["r"]["q"])) for r in out.rows)
        if on:
            assert sorted(r["raw"] for r in dead.rows) == [NESTED[1], NESTED[3]]
            assert all(r["reason"].endswith("or a field missing (json.fail-on-missing-field)") for r in dead.rows)
        else:
            assert dead.rows == []
    assert rows[False] == [(1, "x", (1, 2)), (2, None, (1, 2)), (3, None, (1, 2)), (4, "y", (1, None)), (5, "z", None), (6, "w", (1, None))]
    assert rows[True] == [(1, "x", (1, 2)), (3, None, (1, 2)), (5, "z", None), (6, "w", (1, None))]


def test_fail_on_missing_field_is_an_option_of_the_json_format_and_not_with_ignore_parse_errors(tmp_path):
    with pytest.raises(PlanError, match="fail_on_missing_field=True.* is for format='json'"):
        fk.sources.kafka("t", schema="a int", format="csv", fail_on_missing_field=True)
    with pytest.raises(PlanError, match="fail_on_missing_field and ignore_parse_errors shouldn't both be true"):
        fk.sources.files(str(tmp_path), schema="a int", format="json", fail_on_missing_field=True, ignore_parse_errors=True)
    with pytest.raises(UnsupportedError, match=r"over a ROW inside an ARRAY or MAP \(column l\)"):
        fk.sources.files(str(tmp_path), schema="a int, l array<struct<x: int>>", format="json", fail_on_missing_field=True)


#: Flink's json.timestamp-format.standard -> column (t TIMESTAMP(3), l TIMESTAMP_LTZ(3), d DATE) -> a value -> what
#: PyFlink 2.3 read of it (CAST AS STRING), or FAILS. (Flink holds nanoseconds and its TIMESTAMP(3) prints milliseconds;
#: funke's timestamp holds microseconds, so a value's digits past them are cut.)
FLINK_READS_TIMES = {
    "SQL": {
        "t": {
            "2020-12-30 12:13:14.123": "2020-12-30 12:13:14.123", "2020-12-30 12:13:14": "2020-12-30 12:13:14",
            "2020-12-30 12:13:14.": "2020-12-30 12:13:14", "2020-12-30 12:13:14.1234567": "2020-12-30 12:13:14.123456",
            "2020-12-30 24:00:00": "2020-12-31 00:00:00", "2020-12-30 24:00:00.000": "2020-12-31 00:00:00",
            "2020-02-30 12:13:14": "2020-02-29 12:13:14",  # (Java's SMART resolver: the month's last day)
            "2020-12-30 12:13": X, "2020-12-30 12:13:14Z": X, "+2020-12-30 12:13:14": X, "2020-12-30T12:13:14": X,
            "2020-12-30 23:59:60": X, "2020-12-32 12:13:14": X, "2020-13-01 12:13:14": X, "2020-12-30 24:00:01": X,
            "2020-12-30": X, " 2020-12-30 12:13:14 ": X, "2020-12-30 1:2:3": X, 1609330394000: X,
        },
        "l": {
            "2020-12-30 12:13:14.123Z": "2020-12-30 12:13:14.123", "2020-02-30 24:00:00Z": "2020-03-01 00:00:00",
            "2020-12-30 12:13Z": X, "2020-12-30T12:13:14Z": X, "2020-12-30 12:13:14": X, "2020-12-30 12:13:14.5+01:00": X,
            "x": X, 1609330394000: X,
        },
        "d": {
            "2020-12-30": "2020-12-30", "2020-02-29": "2020-02-29", "2021-02-29": X, "2020-02-30": X, "2020-1-3": X,
            "2020-12-30 ": X, " 2020-12-30": X, "2020-12-30T00:00:00": X, "20201230": X, 18000: X,
        },
    },
    "ISO-8601": {
        "t": {
            "2020-12-30T12:13:14.5": "2020-12-30 12:13:14.5", "2020-12-30T12:13": "2020-12-30 12:13:00",
            "2020-12-30T12:13:14.": "2020-12-30 12:13:14",
            "2020-12-30 12:13:14": X, "2020-12-30T12:13:14Z": X, "2020-12-30T12:13.5": X,
            "2020-02-30T12:13:14": X, "2020-12-30T24:00": X,  # (ISO_LOCAL_DATE_TIME's STRICT resolver)
        },
        "l": {
            "2020-12-30T12:13:14.5Z": "2020-12-30 12:13:14.5", "2020-12-30T12:13Z": "2020-12-30 12:13:00",
            "2020-02-30T12:13:14Z": "2020-02-29 12:13:14", "2020-12-30T24:00Z": "2020-12-31 00:00:00",
            "2020-12-30 12:13:14Z": X, "2020-12-30T12:13:14": X,
        },
        "d": {"2020-12-30": "2020-12-30", "2020-02-30": X},
    },
}  # fmt: skip


@pytest.mark.parametrize("standard", ["SQL", "ISO-8601"])
def test_dates_and_timestamps_are_read_as_flink_s_timestamp_format_reads_them(spark, tmp_path, standard):
    """With ``timestamp_format`` (Flink SQL's ``json.timestamp-format.standard``, SQL by default for a json table):
    Spark's reader took a ``T`` or a space, a date alone, spaces around, a number (of seconds) and an offset, each
    where Flink's reader fails. A value Flink reads is read the same; what it fails on is a dead letter."""
    cells = [(c, value, want) for c, values in FLINK_READS_TIMES[standard].items() for value, want in values.items()]
    lines = [json.dumps({"n": n, c: value}) for n, (c, value, _) in enumerate(cells)]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-0.json").write_text("\n".join(lines) + "\n")
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="json-times", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    source = fk.sources.files(str(tmp_path / "in"), schema="n int, t timestamp, l timestamp, d date", format="json", timestamp_format=standard, instants=["l"])
    out = env.from_source(source).collect()
    env.execute(bounded=True).wait(180)
    read = {r["n"]: r[cells[r["n"]][0]] for r in out.rows}
    read = {n: str(v.replace(tzinfo=None)) if isinstance(v, dt.datetime) else str(v) for n, v in read.items()}
    assert read == {n: want if c == "d" else str(dt.datetime.fromisoformat(want)) for n, (c, _, want) in enumerate(cells) if want is not X}
    assert sorted(r["raw"] for r in dead.rows) == sorted(line for line, (_, _, want) in zip(lines, cells) if want is X)


def test_timestamp_format_is_an_option_of_the_json_format_with_flink_s_values(tmp_path):
    with pytest.raises(PlanError, match="timestamp_format=...\\) is for format='json', got format='csv'"):
        fk.sources.files(str(tmp_path), schema="t timestamp", format="csv", timestamp_format="SQL")
    with pytest.raises(PlanError, match="must be 'SQL' or 'ISO-8601'"):
        fk.sources.files(str(tmp_path), schema="t timestamp", format="json", timestamp_format="iso")
    with pytest.raises(PlanError, match="'u' is not a TIMESTAMP column"):
        fk.sources.files(str(tmp_path), schema="t timestamp, u string", format="json", timestamp_format="SQL", instants=["u"])
    with pytest.raises(PlanError, match="give timestamp_format too"):
        fk.sources.files(str(tmp_path), schema="t timestamp", format="json", instants=["t"])


def test_a_json_table_writes_and_reads_iso_8601_timestamps_as_flink_does(spark, tmp_path):
    """'json.timestamp-format.standard' = 'ISO-8601' (funke refused it): the lines PyFlink 2.3 wrote for these rows,
    read back by the same table."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(
        f"CREATE TABLE o (t TIMESTAMP(3), l TIMESTAMP_LTZ(3), z TIMESTAMP(3)) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'o'}', 'format' = 'json', 'json.timestamp-format.standard' = 'ISO-8601')"
    )
    t_env.execute_sql(
        "INSERT INTO o VALUES (TIMESTAMP '2020-12-30 12:13:14.5', TO_TIMESTAMP_LTZ(1500, 3), TIMESTAMP '2020-12-30 12:13:00'), "
        "(TIMESTAMP '2020-12-30 12:13:14.123', TO_TIMESTAMP_LTZ(0, 3), TIMESTAMP '2020-12-30 00:00:00.010')"
    ).wait()
    lines = sorted(line for f in (tmp_path / "o").glob("part-*") for line in f.read_text().splitlines())
    assert lines == [
        '{"t":"2020-12-30T12:13:14.123","l":"1970-01-01T00:00:00Z","z":"2020-12-30T00:00:00.01"}',
        '{"t":"2020-12-30T12:13:14.5","l":"1970-01-01T00:00:01.5Z","z":"2020-12-30T12:13:00"}',
    ]
    read = sorted(tuple(r) for r in t_env.execute_sql("SELECT CAST(t AS STRING), CAST(z AS STRING) FROM o").collect())
    assert read == [("2020-12-30 12:13:14.123", "2020-12-30 00:00:00.010"), ("2020-12-30 12:13:14.500", "2020-12-30 12:13:00.000")]
