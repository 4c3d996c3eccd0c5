"""Flink SQL DDL and INSERT INTO on Spark: datagen, filesystem and jdbc (PostgreSQL) tables, a
statement set as one job, Table.execute().collect(), and `funke sql FILE.sql` (streaming and
bounded). Each result is checked exactly: against the rows the same job wrote raw (an independent
aggregation in Python), or against rows derived by hand."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import Counter
from decimal import Decimal

import pytest
from typer.testing import CliRunner

import funke as fk
from funke.cli.main import app
from funke.table import StreamTableEnvironment
from tests.servers import ensure_postgres

pytestmark = pytest.mark.spark
T0 = dt.datetime(2024, 1, 1)

BIDS = """CREATE TABLE bids (
  auction BIGINT, price INT, bidder STRING,
  bucket AS auction % 4,
  ts AS TO_TIMESTAMP_LTZ(1700000000000 + auction * 10, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '400', 'number-of-rows' = '800',
        'fields.auction.kind' = 'sequence', 'fields.auction.start' = '1', 'fields.auction.end' = '1000',
        'fields.price.min' = '1', 'fields.price.max' = '10', 'fields.bidder.length' = '5')"""


def test_a_statement_set_writes_raw_rows_to_files_and_window_counts_to_postgres_as_one_job(env, spark, tmp_path):
    import psycopg

    dsn = ensure_postgres()
    table = f"sql_counts_{uuid.uuid4().hex[:8]}"
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(BIDS)
    t_env.execute_sql(f"CREATE TABLE raw (auction BIGINT, price INT, bidder STRING, bucket BIGINT, ts TIMESTAMP(3)) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'raw'}', 'format' = 'parquet')")  # fmt: skip
    t_env.execute_sql(
        "CREATE TABLE counts (bucket BIGINT, window_start TIMESTAMP(3), bids BIGINT, spent INT, "
        "PRIMARY KEY (bucket, window_start) "
        f"NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:5432/test', 'table-name' = '{table}', "
        "'username' = 'postgres')"
    )
    result = (
        t_env.create_statement_set()
        .add_insert_sql("INSERT INTO raw SELECT * FROM bids")
        .add_insert_sql(
            "INSERT INTO counts SELECT bucket, window_start, COUNT(*), SUM(price) "
            "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, bucket"
        )
        .execute()
    )
    result.wait(300)
    assert sorted(s.sink.uid for s in result.get_job_client().states) == ["dead-letters", "insert-counts", "insert-raw"]
    raw = spark.read.parquet(str(tmp_path / "raw")).collect()
    # datagen: the sequence once each (it ends with number-of-rows), values in their declared ranges
    assert sorted(r["auction"] for r in raw) == list(range(1, 801))
    assert all(1 <= r["price"] <= 10 and len(r["bidder"]) == 5 and r["bucket"] == r["auction"] % 4 for r in raw)
    expected: Counter = Counter()
    spent: Counter = Counter()
    for r in raw:  # (the event time grows with the sequence: no row is late)
        assert r["ts"].timestamp() * 1000 == 1_700_000_000_000 + r["auction"] * 10
        key = (r["bucket"], int(r["ts"].timestamp()))  # its 1 s window's start
        expected[key] += 1
        spent[key] += r["price"]
    with psycopg.connect(dsn) as conn:
        got = conn.execute(f"SELECT bucket, window_start, bids, spent FROM {table}").fetchall()
        conn.execute(f"DROP TABLE {table}")
    seconds = [(b, w if w.tzinfo else w.replace(tzinfo=dt.UTC), n, s) for b, w, n, s in got]
    assert sorted((b, int(w.timestamp()), n, s) for b, w, n, s in seconds) == sorted(
        (b, w, n, spent[(b, w)]) for (b, w), n in expected.items()
    )


def test_table_execute_collects_a_query_and_insert_refuses_a_wrong_shape(env):
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "a", "v": 3}]
    t_env.create_temporary_view("t", env.from_collection(rows, "k string, v int", rows_per_batch=1))
    got = list(t_env.sql_query("SELECT k, v * 10 AS w FROM t WHERE v > 1").execute().collect())
    assert sorted((r["k"], r["w"]) for r in got) == [("a", 30), ("b", 20)]
    t_env.execute_sql("CREATE TABLE out (k STRING) WITH ('connector' = 'print')")
    with pytest.raises(fk.errors.PlanError, match=r"INSERT INTO out gives 2 column\(s\) \(k, v\) for 1 \(k\)"):
        t_env.execute_sql("INSERT INTO out SELECT k, v FROM t")


SCRIPT = """
-- clicks per user per 10 s, from Parquet files; the watermark 2 s behind
CREATE TABLE clicks (user_id STRING, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3),
                     WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'parquet');
CREATE TABLE per_user (user_id STRING, window_start TIMESTAMP(3), clicks BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'parquet');
INSERT INTO per_user
  SELECT user_id, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, user_id;
"""


@pytest.mark.parametrize("bounded", [False, True])
def test_funke_sql_runs_a_script_as_a_job(spark, tmp_path, monkeypatch, bounded):
    monkeypatch.setenv("FUNKE_HOME", str(tmp_path / "home"))
    clicks = [("u1", 1_000), ("u1", 9_999), ("u2", 5_000), ("u1", 10_000), ("u2", 25_000)]
    spark.createDataFrame(clicks, "user_id string, ms bigint").coalesce(1).write.parquet(str(tmp_path / "src"))
    script = tmp_path / "per-user.sql"
    script.write_text(SCRIPT.format(src=tmp_path / "src", out=tmp_path / "out"))
    args = ["sql", str(script), "--no-live", "--json", *(["--bounded"] if bounded else [])]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    got = spark.read.parquet(str(tmp_path / "out")).collect()
    # files are bounded: the end of input closes every window, in both modes
    seconds = sorted((x["user_id"], int(x["window_start"].timestamp()), x["clicks"]) for x in got)
    assert seconds == [("u1", 0, 2), ("u1", 10, 1), ("u2", 0, 1), ("u2", 20, 1)]


def test_writing_a_null_into_a_not_null_column_fails_the_job_naming_it(env, tmp_path):
    """Flink's default table.exec.sink.not-null-enforcer (ERROR): the row is not written, the job fails."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": "a", "v": 1}, {"k": None, "v": 2}]
    t_env.create_temporary_view("t", env.from_collection(rows, "k string, v int"))
    out = tmp_path / "out"
    t_env.execute_sql(f"CREATE TABLE out (k STRING NOT NULL, v INT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json')")
    with pytest.raises(fk.errors.PlanError, match="gives no value for its NOT NULL column 'k'"):
        t_env.execute_sql("INSERT INTO out (v) SELECT v FROM t")
    with pytest.raises(Exception, match="column k of table out is NOT NULL, however, a null value is being written into it"):
        t_env.execute_sql("INSERT INTO out SELECT k, v FROM t").wait(300)


def test_statement_sets_and_explain_in_a_script_and_in_execute_sql(env, spark, tmp_path, capsys):
    """The SQL client's ``BEGIN STATEMENT SET; ...; END;`` and ``EXPLAIN`` in a script (the plan printed, as Flink's
    client prints it), then ``EXECUTE STATEMENT SET BEGIN ...; END`` through execute_sql, a job of its own: two
    inserts into one table both write it (one sink of their union: two Spark queries cannot share a file sink)."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "c", "v": 3}]
    t_env.create_temporary_view("t", env.from_collection(rows, "k string, v int"))
    out, again = tmp_path / "out", tmp_path / "again"
    t_env.execute_script(f"""
        CREATE TABLE out (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
        EXPLAIN CHANGELOG_MODE INSERT INTO out SELECT k, v FROM t;
        BEGIN STATEMENT SET;
        -- two inserts into one table
        INSERT INTO out SELECT k, v FROM t WHERE v > 1;
        INSERT INTO out SELECT UPPER(k), v * 10 FROM t;
        END;
    """)
    assert capsys.readouterr().out.startswith("funke plan (streaming), 1 sink(s)")
    assert [s.explicit_uid for s in env.sinks] == ["insert-out"]
    env.execute().wait(300)
    assert sorted((r.k, r.v) for r in spark.read.json(str(out)).collect()) == [("A", 10), ("B", 20), ("C", 30), ("b", 2), ("c", 3)]
    t_env.execute_sql(f"CREATE TABLE again (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{again}', 'format' = 'json')")
    t_env.execute_sql("EXECUTE STATEMENT SET BEGIN INSERT INTO again SELECT k, v FROM t; INSERT INTO again SELECT k, -v FROM t; END").wait(300)
    assert sorted((r.k, r.v) for r in spark.read.json(str(again)).collect()) == [("a", -1), ("a", 1), ("b", -2), ("b", 2), ("c", -3), ("c", 3)]


def test_a_boolean_cast_to_a_string_column_is_written_true_and_false_as_flink_writes_it(env, spark, tmp_path):
    """Flink refuses a BOOLEAN for a STRING column (tests/unit/test_table_ddl_unit.py); with the CAST it asks for, PyFlink
    2.3's print sink wrote ``+I[TRUE, TRUE, 1]``, ``+I[FALSE, FALSE, 2]``, ``+I[null, null, 3]`` (run by hand)."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"b": True, "n": 1}, {"b": False, "n": 2}, {"b": None, "n": 3}]
    t_env.create_temporary_view("t", env.from_collection(rows, "b boolean, n int"))
    out = tmp_path / "out"
    t_env.execute_sql(f"CREATE TABLE out (s STRING, vc VARCHAR(10), n INT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')")
    with pytest.raises(fk.errors.PlanError, match="the query gives the STRING column s a BOOLEAN"):
        t_env.execute_sql("INSERT INTO out SELECT b, CAST(b AS VARCHAR(10)), n FROM t")
    t_env.execute_sql("INSERT INTO out SELECT CAST(b AS STRING), CAST(b AS VARCHAR(10)), n FROM t").wait(300)
    got = spark.read.csv(str(out), schema="s string, vc string, n int").collect()
    assert sorted((r.n, r.s, r.vc) for r in got) == [(1, "TRUE", "TRUE"), (2, "FALSE", "FALSE"), (3, None, None)]


def test_a_json_file_sink_writes_null_fields_as_flink_does_and_leaves_them_out_when_told(env, tmp_path):
    """PyFlink 2.3's filesystem json sink (run by hand) wrote ``{"a":1,"b":null,"c":2.5}`` and
    ``{"a":null,"b":"x","c":null}``; with ``'json.encode.ignore-null-fields' = 'true'``, ``{"a":1,"c":2.5}`` and ``{"b":"x"}``."""
    t_env = StreamTableEnvironment.create(env)
    rows = [{"a": 1, "b": None, "c": 2.5}, {"a": None, "b": "x", "c": None}]
    t_env.create_temporary_view("t", env.from_collection(rows, "a int, b string, c double"))
    kept, left_out = tmp_path / "kept", tmp_path / "left_out"
    for name, path, extra in (("kept", kept, ""), ("left_out", left_out, ", 'json.encode.ignore-null-fields' = 'true'")):
        t_env.execute_sql(f"CREATE TABLE {name} (a INT, b STRING, c DOUBLE) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json'{extra})")
    statements = t_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO kept SELECT a, b, c FROM t")
    statements.add_insert_sql("INSERT INTO left_out SELECT a, b, c FROM t")
    statements.execute().wait(300)

    def lines(path):
        return sorted(line for f in path.glob("part-*") for line in f.read_text().splitlines())

    assert lines(kept) == ['{"a":1,"b":null,"c":2.5}', '{"a":null,"b":"x","c":null}']
    assert lines(left_out) == ['{"a":1,"c":2.5}', '{"b":"x"}']
    t_env.execute_sql(f"CREATE TABLE bad (a INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/bad', 'format' = 'csv', 'json.encode.ignore-null-fields' = 'true')")
    with pytest.raises(fk.errors.PlanError, match="an option of the json format"):
        t_env.execute_sql("INSERT INTO bad SELECT a FROM t")


def test_timestamps_are_written_to_json_and_csv_files_as_flink_writes_them(env, tmp_path):
    """PyFlink 2.3.0's filesystem json and csv sinks (run by hand) write a TIMESTAMP as SQL's text, the fraction's
    trailing zeros cut (``2024-05-01 12:00:10.25``, ``2024-05-01 12:00:10``, six digits kept), a TIMESTAMP_LTZ with a
    ``Z`` after it; funke wrote ``2024-05-01T12:00:10.250Z`` for each, microseconds cut to milliseconds. Flink's csv
    quotes these values (its writer quotes any text with a space), and so does funke's."""
    t_env = StreamTableEnvironment.create(env)
    stamps = "TIMESTAMP '2024-05-01 12:00:10.250', TO_TIMESTAMP_LTZ(1714564810000, 3), TIMESTAMP '2024-05-01 12:00:10', TIMESTAMP '2024-05-01 12:00:10.123456'"
    statements = t_env.create_statement_set()
    for fmt in ("json", "csv"):
        t_env.execute_sql(f"CREATE TABLE t_{fmt} (ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3), t0 TIMESTAMP(0), t6 TIMESTAMP(6)) "
                          f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / fmt}', 'format' = '{fmt}')")  # fmt: skip
        statements.add_insert_sql(f"INSERT INTO t_{fmt} SELECT {stamps}")
    statements.execute().wait(300)
    lines = {fmt: [line for f in (tmp_path / fmt).glob("part-*") for line in f.read_text().splitlines()] for fmt in ("json", "csv")}
    assert lines == {
        "json": ['{"ts":"2024-05-01 12:00:10.25","lt":"2024-05-01 12:00:10Z","t0":"2024-05-01 12:00:10","t6":"2024-05-01 12:00:10.123456"}'],
        "csv": ['"2024-05-01 12:00:10.25","2024-05-01 12:00:10Z","2024-05-01 12:00:10","2024-05-01 12:00:10.123456"'],
    }


def test_time_columns_are_read_from_json_printed_and_written_to_csv_as_flink_does(env, tmp_path, capsys):
    """PyFlink 2.3.0 (run by hand): a json file's ``23:59:59.123`` read into a TIME is 23:59:59; its print sink writes
    ``+I[1, 23:59:59, 12:34:56.789]`` and a TIME(3) midnight ``00:00`` (Java's LocalTime); its csv writes
    ``1,12:34:56,12:34:56.789`` and ``2,,00:00:00.5``."""
    t_env = StreamTableEnvironment.create(env)
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "a.json").write_text('{"n":1,"t":"23:59:59.123","t3":"12:34:56.789"}\n{"n":2,"t":null,"t3":"00:00:00"}\n')
    t_env.execute_sql(f"CREATE TABLE j (n INT, t TIME, t3 TIME(3)) WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'json')")
    t_env.execute_sql("CREATE TABLE p (n INT, t TIME, t3 TIME(3)) WITH ('connector' = 'print')")
    t_env.execute_sql(f"CREATE TABLE o (n INT, t TIME, t3 TIME(3)) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')")
    t_env.execute_sql("INSERT INTO p SELECT * FROM j").wait(300)
    assert sorted(capsys.readouterr().out.splitlines()) == ["+I[1, 23:59:59, 12:34:56.789]", "+I[2, null, 00:00]"]
    t_env.execute_sql("INSERT INTO o VALUES (1, TIME '12:34:56', TIME '12:34:56.789'), (2, CAST(NULL AS TIME), TIME '00:00:00.5')").wait(300)
    lines = [line for f in sorted(out.glob("part-*")) for line in f.read_text().splitlines()]
    assert sorted(lines) == ["1,12:34:56,12:34:56.789", "2,,00:00:00.5"]


def test_a_view_of_values_with_decimals_and_an_array_literal_is_typed_for_funkes_operators(spark):
    """A VALUES column of DECIMAL literals, their arithmetic and an ARRAY[...] constructor have the type Flink and Spark
    both give them, so aggregations, joins, IN, OVER and UNNEST over them plan (they were refused: "CAST it").
    Every expected row is what PyFlink 2.3 gave for the same query (batch mode)."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, 'a', 1.5), (2, 'b', 2.25), (3, 'a', 3.0), (4, 'b', NULL)) AS x(id, k, amt)")
    cases = {
        "SELECT k, COUNT(*) AS c, SUM(amt) AS s FROM v GROUP BY k HAVING COUNT(*) > 1": [("a", 2, Decimal("4.50")), ("b", 2, Decimal("2.25"))],
        "SELECT k, MAX(amt) - MIN(amt) AS spread FROM v GROUP BY k": [("a", Decimal("1.50")), ("b", Decimal("0.00"))],
        "SELECT a.id, b.id, a.amt * b.amt FROM v a JOIN v b ON a.k = b.k AND a.id < b.id": [(1, 3, Decimal("4.5000")), (2, 4, None)],
        "SELECT id FROM v WHERE k IN (SELECT k FROM v WHERE amt > 2.5)": [(1,), (3,)],
        "SELECT id, SUM(amt) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM v": [
            (1, Decimal("1.50")), (2, Decimal("2.25")), (3, Decimal("4.50")), (4, Decimal("2.25")),
        ],
        "SELECT id, w, CHAR_LENGTH(w) FROM v CROSS JOIN UNNEST(ARRAY['x', 'yy']) AS t(w) WHERE id = 1": [(1, "x", 1), (1, "yy", 2)],
    }  # fmt: skip
    for query, expected in cases.items():
        got = sorted((tuple(r) for r in t_env.execute_sql(query).collect()), key=repr)
        assert got == sorted(expected, key=repr), query


def test_create_table_as_select_creates_the_table_of_the_query_s_columns_and_writes_it(spark, tmp_path):
    """``CREATE TABLE t WITH (...) AS SELECT ...`` (CTAS) creates ``t`` with the query's columns, of their Flink types and
    NOT NULL, and runs the INSERT (it was refused: 'CREATE TABLE without columns'). DESCRIBE, the csv lines and the rows
    read back are PyFlink 2.3.0's for the same statements (batch mode, by hand). The directory exists, empty, as
    Flink writes into one (funke's bounded file sink refused it: Spark's PATH_ALREADY_EXISTS)."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, 'a', 1.25), (2, 'b', 2.25), (3, 'a', 3.5)) AS x(id, k, amt)")
    out = tmp_path / "totals"
    out.mkdir()
    t_env.execute_sql(
        f"CREATE TABLE totals WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv') "
        "AS SELECT k, COUNT(*) AS n, SUM(amt) AS s, MAX(id) AS top, UPPER(k) || 'x' AS shout FROM v GROUP BY k"
    ).wait()
    assert [list(r) for r in t_env.execute_sql("DESCRIBE totals").collect()] == [
        ["k", "CHAR(1)", False, None, None, None], ["n", "BIGINT", False, None, None, None],
        ["s", "DECIMAL(38, 2)", False, None, None, None], ["top", "INT", False, None, None, None],
        ["shout", "CHAR(2)", False, None, None, None],
    ]  # fmt: skip
    assert sorted(line for f in out.glob("part-*") for line in f.read_text().splitlines()) == ["a,2,4.75,3,Ax", "b,1,2.25,2,Bx"]
    assert sorted(tuple(r) for r in t_env.execute_sql("SELECT * FROM totals").collect()) == [
        ("a", 2, Decimal("4.75"), 3, "Ax"), ("b", 1, Decimal("2.25"), 2, "Bx"),
    ]  # fmt: skip


def test_a_create_table_as_select_with_a_schema_of_its_own_writes_its_columns_by_name(spark, tmp_path):
    """Flink 2's CTAS schema: a column the query has not (``note``, NULL: an empty csv field) comes first, a type given
    for a query's column (``s DOUBLE`` for a DECIMAL sum) is the table's and the insert casts to it, the key is the
    table's. DESCRIBE and the csv lines are PyFlink 2.3.0's for the same statements (batch mode, by hand)."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, 'a', 1.25), (2, 'b', 2.25), (3, 'a', 3.5)) AS x(id, k, amt)")
    out = tmp_path / "totals"
    out.mkdir()
    t_env.execute_sql(
        f"CREATE TABLE totals (note STRING, n BIGINT, s DOUBLE, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'filesystem', "
        f"'path' = '{out}', 'format' = 'csv') AS SELECT k, COUNT(*) AS n, SUM(amt) AS s FROM v GROUP BY k"
    ).wait()
    assert [list(r) for r in t_env.execute_sql("DESCRIBE totals").collect()] == [
        ["note", "STRING", True, None, None, None], ["k", "CHAR(1)", False, "PRI(k)", None, None],
        ["n", "BIGINT", True, None, None, None], ["s", "DOUBLE", True, None, None, None],
    ]  # fmt: skip
    assert sorted(line for f in out.glob("part-*") for line in f.read_text().splitlines()) == [",a,2,4.75", ",b,1,2.25"]
