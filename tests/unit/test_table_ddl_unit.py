"""Flink SQL DDL planning (no Spark): CREATE TABLE to sources and sinks, INSERT INTO to sink nodes,
Flink's watermark, what is refused and why, and `funke sql` building a job from a script."""

from __future__ import annotations

import datetime as dt
import re

import pytest

import funke as fk
from funke.cli.locate import build
from funke.connectors.postgres import PostgresSink
from funke.connectors.sinks import FileSink
from funke.connectors.sources import FileSource, GeneratorSource
from funke.errors import PlanError, SchemaError, UnsupportedError
from funke.plan import nodes
from funke.table import StreamTableEnvironment
from funke.table.print_sink import RowsPrint

GEN = (
    "CREATE TABLE bids (auction BIGINT, price INT, bidder STRING, ts TIMESTAMP(3), cost AS price * 2, "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '100', "
    "'fields.auction.kind' = 'sequence', 'fields.auction.start' = '11', 'fields.auction.end' = '60', "
    "'fields.price.min' = '1', 'fields.price.max' = '10', 'fields.bidder.length' = '70')"
)


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="ddl-unit"))
    t_env.execute_sql(GEN)
    return t_env


def source_of(stream) -> nodes.Source:
    return next(x for x in nodes.walk([stream.node]) if isinstance(x, nodes.Source))


def test_datagen_is_a_replayable_generator_with_flink_sql_watermark(t_env):
    stream = t_env.sql_query("SELECT * FROM bids")._stream
    spec = source_of(stream).spec
    assert isinstance(spec, GeneratorSource)
    cols = dict((k, str(e)) for k, e in spec.columns)
    assert spec.events == 50  # the sequence 11..60 ends it before number-of-rows
    assert spec.rows_per_second == 10_000  # Flink's default
    assert cols["auction"] == "expr('CAST(11 + i AS bigint)')"
    assert cols["price"] == "expr('CAST(1 + pmod(xxhash64(i, 2), 10) AS int)')"
    assert "substr(repeat(sha2(" in cols["bidder"] and "2), 1, 70)" in cols["bidder"]  # 70 characters from 2 hashes
    wm = next(x for x in nodes.walk([stream.node]) if isinstance(x, nodes.Watermark))
    # Flink SQL's watermark is max(ts) - 5 s; funke's (Flink DataStream's) is max - bound - 1 ms
    assert (wm.strategy.max_out_of_orderness_ms, wm.strategy.timestamp_column) == (4_999, "ts")
    assert stream.columns == ("auction", "price", "bidder", "ts", "cost")
    assert t_env.list_tables() == ["bids"]


def test_insert_into_casts_by_position_to_the_table_and_a_statement_set_is_one_job(t_env):
    t_env.execute_sql(
        "CREATE TABLE out (auction BIGINT, total INT) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'csv')"
    )
    t_env.execute_sql("CREATE TABLE shown (a BIGINT) WITH ('connector' = 'print')")
    sink = t_env._insert(
        fk.dialect.syntax.parse("INSERT INTO out SELECT auction, SUM(price) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), "
                               "INTERVAL '1' SECOND)) GROUP BY window_start, window_end, auction"), "")  # fmt: skip
    assert isinstance(sink.spec, FileSink) and (sink.spec.path, sink.spec.format) == ("/tmp/x", "csv")
    assert sink.uid == "insert-out"
    assert [str(e) for e in sink.input.exprs] == [
        "expr('CAST(`auction` AS bigint) AS `auction`')",
        "expr('CAST(`EXPR$1` AS int) AS `total`')",
    ]
    # named target columns: the others are NULL
    named = t_env._insert(fk.dialect.syntax.parse("INSERT INTO out (total) SELECT price FROM bids"), "")
    assert [str(e) for e in named.input.exprs] == [
        "expr('CAST(NULL AS bigint) AS `auction`')",
        "expr('CAST(`price` AS int) AS `total`')",
    ]
    shown = t_env._insert(fk.dialect.syntax.parse("INSERT INTO shown SELECT auction FROM bids"), "")
    assert isinstance(shown.spec, RowsPrint) and shown.spec.columns == (("a", "bigint"),)


def test_jdbc_is_the_postgres_sink_upserting_by_the_primary_key(t_env):
    t_env.execute_sql(
        "CREATE TABLE pg (auction BIGINT, price INT, PRIMARY KEY (auction) NOT ENFORCED) WITH ('connector' = 'jdbc', "
        "'url' = 'jdbc:postgresql://db.example:5433/shop?sslmode=disable', 'table-name' = 'prices', 'username' = 'ann', "
        "'password' = 'p@ss')"
    )
    sink = t_env._insert(fk.dialect.syntax.parse("INSERT INTO pg SELECT auction, price FROM bids"), "").spec
    assert isinstance(sink, PostgresSink)
    assert (sink.table, sink.mode, sink.key) == ("prices", "upsert", ("auction",))
    assert sink.dsn == "postgresql://ann:p%40ss@db.example:5433/shop?sslmode=disable"


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("CREATE TABLE a (x INT) WITH ('connector' = 'datagen', 'rows-per-sec' = '5')", UnsupportedError,
         "the datagen option 'rows-per-sec' is not supported by funke; it takes: number-of-rows, rows-per-second"),
        ("CREATE TABLE a (x INT) WITH ('connector' = 'datagen', 'fields.y.min' = '5')", PlanError, "names no column"),
        ("CREATE TABLE a (x INT) WITH ('connector' = 'hive')", UnsupportedError, "connector 'hive'"),
        ("CREATE TABLE a (x INT)", PlanError, "needs WITH ('connector' = ...)"),
        ("CREATE TABLE a (x INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts + INTERVAL '1' SECOND) WITH ('connector' = 'datagen')", UnsupportedError,
         "the watermark ts + INTERVAL '1' SECOND (at line 1, column 55) is not supported by funke"),
        ("CREATE TABLE a (x INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - 5) WITH ('connector' = 'datagen')", UnsupportedError,
         "write WATERMARK FOR ts AS ts - INTERVAL 'n' SECOND"),
        ("CREATE TABLE a (x INT, WATERMARK FOR x AS x - INTERVAL '1' SECOND) WITH ('connector' = 'datagen')", PlanError,
         "must be a TIMESTAMP"),
        ("CREATE TABLE a (x INT, PRIMARY KEY (x)) WITH ('connector' = 'print')", PlanError, "must be NOT ENFORCED"),
        ("CREATE TABLE a (ts TIMESTAMP(3), t2 TIMESTAMP(3), WATERMARK FOR ts AS ts, WATERMARK FOR t2 AS t2) WITH ('connector' = 'datagen')",
         PlanError, "multiple WATERMARK declarations (at line 1, column 89) are not supported, as in Flink"),
        ("CREATE TABLE a (x ARRAY<INT>) WITH ('connector' = 'print')", UnsupportedError, "the type ARRAY<INT>"),
        ("CREATE TABLE a (x INT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://h/db', 'table-name' = 't')", None, None),
        ("CREATE TABLE bids (x INT) WITH ('connector' = 'print')", PlanError, "exists already"),
        ("DROP TABLE nope", PlanError, "DROP TABLE nope: table with identifier 'default_catalog.default_database.nope' does not exist"),
        ("CREATE VIEW v AS SELECT * FROM (VALUES (1), (2, 3)) AS t(x)", PlanError, "the row (2, 3) of VALUES at line 1, column 46 has 2 value(s), the first row 1"),
        ("CREATE VIEW bids AS SELECT price FROM bids", PlanError, "a table or view named 'bids' exists already"),
        ("CREATE VIEW v (a, b) AS SELECT price FROM bids", PlanError, "names 2 column(s) (a, b) for a query of 1 (price)"),
    ],
)  # fmt: skip
def test_what_funke_would_not_honour_is_refused(t_env, sql, error, message):
    if error is None:  # refused when the sink is made, at INSERT INTO
        t_env.execute_sql(sql)
        with pytest.raises(UnsupportedError, match="funke writes PostgreSQL only"):
            t_env.execute_sql("INSERT INTO a SELECT price FROM bids")
        return
    with pytest.raises(error, match="Flink SQL") as e:
        t_env.execute_sql(sql)
    assert message in str(e.value)
    t_env.execute_sql("CREATE TABLE IF NOT EXISTS bids (x INT) WITH ('connector' = 'print')")  # (kept: no error)


def test_a_multiset_column_is_refused_naming_multiset_and_what_to_write_instead(t_env):
    """Flink 2.3 takes ``MULTISET<INT>`` columns (DESCRIBE: ``MULTISET<INT>``); funke refuses one, named, where it gave
    a bare syntax error. A field or column named ``multiset`` is still a name."""
    for sql, column, at in [
        ("CREATE TABLE m (a MULTISET<INT>) WITH ('connector' = 'print')", "a", "line 1, column 19"),
        ("CREATE TABLE m (k STRING,\n  b MULTISET<STRING> NOT NULL) WITH ('connector' = 'print')", "b", "line 2, column 5"),
        ("CREATE TABLE m (c ARRAY<MULTISET<INT>>) WITH ('connector' = 'print')", "c", "line 1, column 25"),
        ("CREATE TABLE m (r ROW<x MULTISET<INT>>) WITH ('connector' = 'print')", "r", "line 1, column 25"),
    ]:
        with pytest.raises(UnsupportedError) as e:
            t_env.execute_sql(sql)
        assert str(e.value).startswith(f"Flink SQL: the MULTISET column {column} (at {at}) in CREATE TABLE is not supported by funke: ")
        assert "Compute one with COLLECT(...) in a query or a view" in str(e.value)
    t_env.execute_sql("CREATE TABLE named (multiset INT, r ROW<multiset STRING>) WITH ('connector' = 'print')")
    assert t_env._tables["named"].columns == (("multiset", "int"), ("r", "struct<multiset:string>"))


def test_insert_refuses_a_boolean_for_a_string_column_as_flink_does(t_env):
    """Flink 2.3: ``Column types of query result and sink ... do not match. Cause: Incompatible types for sink column
    's'`` for a BOOLEAN written to a STRING or VARCHAR(10) column, whether from a column or VALUES (PyFlink, run by hand)."""
    t_env.execute_sql("CREATE TABLE out (s STRING, vc VARCHAR(10), n INT) WITH ('connector' = 'print')")
    expected = (
        "Flink SQL: INSERT INTO out: the column types of the query result and the table do not match: the query gives the "
        "{kind} column {column} a BOOLEAN (the query's column {given}), which Flink does not cast implicitly: CAST it in the "
        "query, CAST(... AS {kind}) (TRUE or FALSE, as Flink writes a BOOLEAN)"
    )
    for sql, kind, column, given in [
        ("INSERT INTO out SELECT price > 5, bidder, price FROM bids", "STRING", "s", "EXPR$0"),
        ("INSERT INTO out SELECT bidder, price > 5 AS big, price FROM bids", "VARCHAR(10)", "vc", "big"),
        ("INSERT INTO out (n, s) VALUES (1, TRUE)", "STRING", "s", "EXPR$1"),
    ]:
        with pytest.raises(PlanError) as e:
            t_env.execute_sql(sql)
        assert str(e.value) == expected.format(kind=kind, column=column, given=given)
    sink = t_env._insert(fk.dialect.syntax.parse("INSERT INTO out SELECT CAST(price > 5 AS STRING), bidder, price FROM bids"), "")
    assert sink.uid == "insert-out"  # (a CAST, as the message says, is taken)


def test_insert_refuses_what_flink_does_not_cast_implicitly_into_a_number_date_or_time_column(t_env):
    """Flink 2.3's planner writes a query column into a table column only where it casts implicitly: an integer into an
    integer column as wide or wider, any number into DOUBLE or DECIMAL, any but a DOUBLE into FLOAT, a TIMESTAMP into
    DATE (each pair checked with PyFlink, ``funke.table.insert_checks``). ``COUNT(*)`` is a BIGINT, so an INT column
    refuses it, as Flink does; funke wrote it cast, and Spark wraps a BIGINT past INT's range silently."""
    t_env.execute_sql(
        "CREATE TABLE typed (n INT, t TINYINT, f FLOAT, d DOUBLE, m DECIMAL(5, 2), dt DATE, ts TIMESTAMP(3), b BOOLEAN) "
        "WITH ('connector' = 'blackhole')"
    )
    t_env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT CAST(price AS BIGINT) AS big, CAST(price AS DOUBLE) AS dbl, ts FROM bids")
    row = {"n": "1", "t": "CAST(1 AS TINYINT)", "f": "CAST(1 AS FLOAT)", "d": "1", "m": "1", "dt": "CAST(ts AS DATE)", "ts": "ts", "b": "TRUE"}

    def insert(**given: str) -> None:
        values = ", ".join(given.get(c, v) for c, v in row.items())
        t_env._insert(fk.dialect.syntax.parse(f"INSERT INTO typed SELECT {values} FROM v"), "")

    refused = [
        ("n", "big", "INT", "a BIGINT"),
        ("t", "1", "TINYINT", "an INT"),
        ("f", "dbl", "FLOAT", "a DOUBLE"),
        ("n", "dbl", "INT", "a DOUBLE"),
        ("n", "CAST(1.5 AS DECIMAL(10, 2))", "INT", "a DECIMAL(10, 2)"),
        ("b", "1", "BOOLEAN", "an INT"),
        ("dt", "1", "DATE", "an INT"),
        ("ts", "CAST(ts AS DATE)", "TIMESTAMP(3)", "a DATE"),
        ("d", "'1'", "DOUBLE", "a STRING"),
    ]
    for column, value, kind, given in refused:
        with pytest.raises(PlanError) as e:
            insert(**{column: value})
        assert f"the query gives the {kind} column {column} {given} (the query's column " in str(e.value), (column, value)
        assert str(e.value).endswith(f"which Flink does not cast implicitly: CAST it in the query, CAST(... AS {kind})")
    for column, value in [("n", "CAST(big AS INT)"), ("d", "big"), ("m", "dbl"), ("m", "big"), ("f", "big"), ("dt", "ts"), ("n", "NULL")]:
        insert(**{column: value})  # (widening, as Flink takes it, and a CAST as the message says)
    t_env.execute_sql("CREATE TABLE counts (k STRING, n INT) WITH ('connector' = 'blackhole')")
    with pytest.raises(PlanError, match=r"gives the INT column n a BIGINT \(the query's column EXPR\$1\)"):
        t_env.execute_sql("INSERT INTO counts SELECT bidder, COUNT(*) FROM bids GROUP BY bidder")
    t_env._insert(fk.dialect.syntax.parse("INSERT INTO counts SELECT bidder, CAST(COUNT(*) AS INT) FROM bids GROUP BY bidder"), "")
    # (where funke cannot tell a column's type before the run, the type Flink gives it: CHAR_LENGTH is an INT)
    for sql, fails in (
        ("INSERT INTO counts SELECT CHAR_LENGTH(CAST(bidder AS STRING)), 1 FROM bids", True),
        ("INSERT INTO counts SELECT UPPER(CAST(bidder AS STRING)), CHAR_LENGTH('ab') FROM bids", False),
    ):
        if fails:
            with pytest.raises(PlanError, match=r"gives the STRING column k an INT \(the query's column EXPR\$0\)"):
                t_env._insert(fk.dialect.syntax.parse(sql), sql)
        else:
            t_env._insert(fk.dialect.syntax.parse(sql), sql)


def test_create_view_names_a_query_for_the_statements_after_it(t_env):
    t_env.execute_sql("CREATE TEMPORARY VIEW cheap (a, p, ts) AS SELECT auction, price, ts FROM bids WHERE price < 5")
    t_env.execute_sql("CREATE VIEW IF NOT EXISTS cheap AS SELECT 1 AS x FROM bids")  # (kept)
    assert t_env.sql_query("SELECT * FROM cheap").columns == ("a", "p", "ts")
    assert "cheap" in t_env.list_temporary_views()
    per_window = t_env.sql_query(
        "SELECT COUNT(*) AS n FROM TABLE(TUMBLE(TABLE cheap, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end"
    )
    assert per_window.columns == ("n",)  # (the view's time attribute is its query's)


def test_insert_errors_name_the_table_and_the_columns(t_env):
    t_env.execute_sql("CREATE TABLE out (a BIGINT, b INT) WITH ('connector' = 'print')")
    with pytest.raises(PlanError, match=r"INSERT INTO nope \(at line 1, column 13\): no table of that name"):
        t_env.execute_sql("INSERT INTO nope SELECT 1 AS x FROM bids")
    with pytest.raises(PlanError, match=r"gives 1 column\(s\) \(auction\) for 2 \(a, b\)"):
        t_env.execute_sql("INSERT INTO out SELECT auction FROM bids")
    with pytest.raises(PlanError, match="can only be read, not written"):
        t_env.execute_sql("INSERT INTO bids SELECT * FROM bids")
    with pytest.raises(PlanError, match="can only be written"):
        t_env.sql_query("SELECT a FROM out")
    with pytest.raises(PlanError, match="has no column 'c'"):
        t_env.execute_sql("INSERT INTO out (c) SELECT auction FROM bids")


def test_a_sql_script_builds_one_job_named_after_its_file(tmp_path):
    script = tmp_path / "clicks per user.sql"
    script.write_text(
        "CREATE TABLE c (u STRING, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)\n"
        f"  WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json');\n"
        "CREATE TABLE o (u STRING) WITH ('connector' = 'print');\n"
        "CREATE TABLE p (u STRING) WITH ('connector' = 'print');\n"
        "INSERT INTO o SELECT u FROM c;\nINSERT INTO p SELECT u FROM c WHERE ms > 5;\n"
    )
    env = build(str(script), {})
    assert env.app == "clicks-per-user"
    assert [s.uid for s in env.sinks] == ["insert-o", "insert-p"]
    src = next(x for x in nodes.walk(list(env.sinks)) if isinstance(x, nodes.Source))
    assert isinstance(src.spec, FileSource) and src.spec.format == "json"
    assert "TIMESTAMP_MILLIS(ms)" in env.explain()  # Flink's TO_TIMESTAMP_LTZ(ms, 3)
    with pytest.raises(PlanError, match="takes no options"):
        build(str(script), {"events": 5})
    (tmp_path / "empty.sql").write_text("CREATE TABLE o (u STRING) WITH ('connector' = 'print');")
    with pytest.raises(PlanError, match="has no INSERT INTO statement"):
        build(str(tmp_path / "empty.sql"), {})
    bad = tmp_path / "bad.sql"
    bad.write_text("CREATE TABLE o (u STRING) WITH ('connector' = 'print');\n\nINSERT INTO o SELECT u FROM nowhere;")
    with pytest.raises(PlanError, match=r"no view named 'nowhere' \(at line 3, column 29\)"):
        build(str(bad), {})


def test_print_writes_flink_s_row_text_and_timestamp_ltz_columns_as_instants_in_a_script_too():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="print"))
    t_env.execute_script(
        "CREATE TABLE a (x TIMESTAMP_LTZ(3), y TIMESTAMP(3)) WITH ('connector' = 'print', 'print-identifier' = 'out');\n"
        "CREATE TABLE b (x TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');"
    )
    t_env.create_temporary_view("t", t_env.env.from_collection([(None,)], "ts timestamp"))
    a = t_env._insert(fk.dialect.syntax.parse("INSERT INTO a SELECT ts, ts FROM t"), "").spec
    assert isinstance(a, RowsPrint) and a.columns == (("x", "timestamp_ltz"), ("y", "timestamp")) and a.identifier == "out"
    with pytest.raises(PlanError, match="does not take the option 'sink.parallelism'|sink.parallelism"):
        t_env.execute_sql("CREATE TABLE c (x INT) WITH ('connector' = 'print', 'sink.parallelism' = '2')")


def test_a_time_column_is_read_written_and_printed_where_funke_gives_flink_s_meaning_and_refused_elsewhere(t_env):
    """PyFlink 2.3.0 (by hand): DESCRIBE of ``t TIME(3)`` says ``TIME(3)``; a csv or json file's ``23:59:59.123`` read
    into a TIME is 23:59:59 (into a TIME(3) 23:59:59.123); the print connector writes ``+I[1, 12:34:56, 12:34:56.789]``
    and ``+I[2, null, 00:00]`` (Java's LocalTime)."""
    t_env.execute_sql("CREATE TABLE c (n INT, t TIME, t3 TIME(3)) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'csv')")
    assert t_env._tables["c"].columns == (("n", "int"), ("t", "time(0)"), ("t3", "time(3)"))
    assert [r["type"] for r in t_env.execute_sql("DESCRIBE c").collect()] == ["INT", "TIME(0)", "TIME(3)"]
    read = t_env.sql_query("SELECT * FROM c")
    assert [f.dtype for f in read.get_schema().fields] == ["int", "time(0)", "time(3)"]
    assert "CAST(CAST(`t` AS TIME(6)) AS TIME(0)) AS `t`" in read.explain()  # (Spark's reader keeps 23:59:59.123)
    t_env.execute_sql("CREATE TABLE j (t TIME(3)) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'json')")
    t_env.execute_sql("CREATE TABLE p (n INT, t TIME, t3 TIME(3)) WITH ('connector' = 'print')")
    import datetime as dt

    from funke.table.print_sink import java_text

    assert java_text([1, dt.time(12, 34, 56), dt.time(12, 34, 56, 789000)], ("int", "time(0)", "time(3)")) == "1, 12:34:56, 12:34:56.789"
    assert java_text([2, None, dt.time(0, 0)], ("int", "time(0)", "time(3)")) == "2, null, 00:00"
    for sql, what in [
        ("CREATE TABLE d (t TIME) WITH ('connector' = 'datagen')", "a TIME column of the datagen connector"),
        ("CREATE TABLE k (t TIME(3)) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json')", "of the kafka connector with the format 'json'"),
        ("CREATE TABLE q (t TIME) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'parquet')", "with the format 'parquet'"),
        ("CREATE TABLE r (t ROW<x TIME>) WITH ('connector' = 'print')", "a TIME inside a ROW, an ARRAY or a MAP"),
    ]:
        with pytest.raises(UnsupportedError) as e:
            t_env.execute_sql(sql)
        assert str(e.value).startswith("Flink SQL: the TIME column ") and what in str(e.value), str(e.value)
        assert "declare t a STRING and CAST(t AS TIME)" in str(e.value)


def test_create_temporary_table_is_a_table_of_the_session_as_create_table_is():
    """``CREATE TEMPORARY TABLE`` (as many Flink SQL scripts write it) declares the same table as ``CREATE TABLE``:
    funke's tables live in the session, as Flink's temporary ones do (it was refused, "TEMPORARY in CREATE TABLE")."""
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="ddl-unit"))
    t_env.execute_sql(GEN.replace("CREATE TABLE bids", "CREATE TEMPORARY TABLE bids"))
    stream = t_env.sql_query("SELECT * FROM bids")._stream
    assert isinstance(source_of(stream).spec, GeneratorSource) and t_env.list_tables() == ["bids"]
    wm = next(x for x in nodes.walk([stream.node]) if isinstance(x, nodes.Watermark))
    assert (wm.strategy.max_out_of_orderness_ms, wm.strategy.timestamp_column) == (4_999, "ts")


KAFKA_WITH = "WITH ('connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json')"
METADATA_TABLE = (
    "CREATE TABLE clicks (`event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', `partition` BIGINT METADATA VIRTUAL, "
    "`offset` BIGINT METADATA VIRTUAL, user_id BIGINT, behavior STRING, ts2 AS user_id + 1, "
    "tp STRING METADATA FROM 'topic' VIRTUAL, WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND) " + KAFKA_WITH
)


def test_a_kafka_table_reads_the_record_s_metadata_columns_in_the_order_declared():
    """``METADATA FROM 'key' [VIRTUAL]`` columns (in most Kafka DDL: the record's timestamp as the event time) are read
    from the Kafka source's metadata, cast as declared, and the columns come in the order declared, as Flink's. It was a
    syntax error ("Expecting )"). DESCRIBE's rows are PyFlink 2.3.0's for the same statement, by hand."""
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="ddl-unit"))
    t_env.execute_sql(METADATA_TABLE)
    assert [list(r.values()) for r in t_env.execute_sql("DESCRIBE clicks").collect()] == [
        ["event_time", "TIMESTAMP_LTZ(3) *ROWTIME*", True, None, "METADATA FROM 'timestamp'", "`event_time` - INTERVAL '5' SECOND"],
        ["partition", "BIGINT", True, None, "METADATA VIRTUAL", None],
        ["offset", "BIGINT", True, None, "METADATA VIRTUAL", None],
        ["user_id", "BIGINT", True, None, None, None],
        ["behavior", "STRING", True, None, None, None],
        ["ts2", "BIGINT", True, None, "AS `user_id` + 1", None],
        ["tp", "STRING", True, None, "METADATA FROM 'topic' VIRTUAL", None],
    ]
    stream = t_env.sql_query("SELECT * FROM clicks")._stream
    spec = source_of(stream).spec
    assert (spec.metadata, spec.declared.names) == (("timestamp", "partition", "offset", "topic"), ("user_id", "behavior"))
    assert [(f.name, f.dtype) for f in stream.schema.fields] == [
        ("event_time", "timestamp"), ("partition", "bigint"), ("offset", "bigint"), ("user_id", "bigint"),
        ("behavior", "string"), ("ts2", "bigint"), ("tp", "string"),
    ]  # fmt: skip
    wm = next(x for x in nodes.walk([stream.node]) if isinstance(x, nodes.Watermark))
    assert (wm.strategy.max_out_of_orderness_ms, wm.strategy.timestamp_column) == (4_999, "event_time")


@pytest.mark.parametrize(
    ("columns", "error", "message"),
    [
        ("e INT METADATA FROM 'leader-epoch'", UnsupportedError, "the kafka metadata 'leader-epoch' (column e) is not supported by funke"),
        ("tt STRING METADATA FROM 'timestamp-type'", UnsupportedError, "the kafka metadata 'timestamp-type' (column tt) is not supported by funke"),
        ("k STRING METADATA FROM 'key'", UnsupportedError, "the kafka connector has no metadata key 'key' (column k); its metadata keys are offset, partition, timestamp, topic"),
        ("a TIMESTAMP(3) METADATA FROM 'timestamp', b TIMESTAMP(3) METADATA FROM 'timestamp'", PlanError,
         "the columns a and b both read the metadata key 'timestamp'"),
        ("`offset` BIGINT METADATA, PRIMARY KEY (`offset`) NOT ENFORCED", PlanError, "the primary key's column offset is a metadata column"),
        ("p INT METADATA FROM 'partition', WATERMARK FOR p AS p - INTERVAL '1' SECOND", PlanError, "must be a TIMESTAMP"),
    ],
)  # fmt: skip
def test_metadata_columns_funke_cannot_read_are_refused_naming_them(columns, error, message):
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="ddl-unit"))
    with pytest.raises(error, match="Flink SQL") as e:
        t_env.execute_sql(f"CREATE TABLE c (user_id BIGINT, {columns}) {KAFKA_WITH}")
    assert message in str(e.value)
    with pytest.raises(UnsupportedError, match="the datagen connector has no metadata key 'timestamp' .column ts.; funke reads no metadata of it"):
        t_env.execute_sql("CREATE TABLE g (x INT, ts TIMESTAMP(3) METADATA FROM 'timestamp') WITH ('connector' = 'datagen')")


def test_insert_into_a_kafka_table_writes_no_metadata_and_refuses_a_value_for_a_written_metadata_column():
    """Flink writes a persisted (not VIRTUAL) metadata column, the record's timestamp; funke's Kafka sink writes none, so
    an INSERT giving it a value is refused, naming it. Naming the columns written leaves it out, as in Flink (which then
    writes a NULL timestamp: the producer's time)."""
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="ddl-unit"))
    t_env.execute_sql(GEN)
    t_env.execute_sql(METADATA_TABLE)
    with pytest.raises(UnsupportedError, match=r"INSERT INTO clicks writes its metadata column event_time \(METADATA FROM 'timestamp'\)") as e:
        t_env.execute_sql("INSERT INTO clicks SELECT ts, auction, bidder FROM bids")
    assert "INSERT INTO clicks (user_id, behavior) ..." in str(e.value)
    sink = t_env._insert(fk.dialect.syntax.parse("INSERT INTO clicks (user_id, behavior) SELECT auction, bidder FROM bids"), "")
    assert sink.spec.topic == "clicks"
    assert [str(e) for e in sink.input.exprs] == [
        "expr('CAST(`auction` AS bigint) AS `user_id`')",
        "expr('CAST(`bidder` AS string) AS `behavior`')",
    ]


def test_create_table_as_select_plans_the_table_then_the_insert_and_refuses_what_flink_or_funke_does_not_take(t_env):
    """A CTAS's table has the query's columns (DESCRIBE: Flink's types), and IF NOT EXISTS over a table there writes that
    table, as Flink does (whose shapes must then match). TEMPORARY is refused, as Flink refuses it."""
    t_env.execute_sql("CREATE TABLE shown (a BIGINT, p INT) WITH ('connector' = 'print')")
    sink = t_env._insert(fk.dialect.syntax.parse("CREATE TABLE c WITH ('connector' = 'print') AS SELECT auction, price * 2 AS p FROM bids"), "")
    assert isinstance(sink.spec, RowsPrint) and sink.uid == "insert-c"
    assert [list(r.values())[:3] for r in t_env.execute_sql("DESCRIBE c").collect()] == [["auction", "BIGINT", True], ["p", "INT", True]]
    again = t_env._insert(fk.dialect.syntax.parse("CREATE TABLE IF NOT EXISTS shown WITH ('connector' = 'blackhole') AS SELECT auction, price FROM bids"), "")
    assert isinstance(again.spec, RowsPrint) and again.uid == "insert-shown"
    with pytest.raises(PlanError, match=r"INSERT INTO shown gives 1 column\(s\) \(auction\) for 2"):
        t_env.execute_sql("CREATE TABLE IF NOT EXISTS shown WITH ('connector' = 'print') AS SELECT auction FROM bids")
    with pytest.raises(PlanError, match="a table or view named 'shown' exists already"):
        t_env.execute_sql("CREATE TABLE shown WITH ('connector' = 'print') AS SELECT auction, price FROM bids")
    with pytest.raises(UnsupportedError, match="a CREATE TABLE AS SELECT creates no temporary table, as in Flink"):
        t_env.execute_sql("CREATE TEMPORARY TABLE t2 WITH ('connector' = 'print') AS SELECT auction FROM bids")
    assert sorted(t_env.list_tables()) == ["bids", "c", "shown"]


def test_a_create_table_as_select_s_own_schema_is_flink_2_s(t_env):
    """Columns the query has not come first, then the query's, a type given for one in its place; a list of names orders
    the query's columns; a PRIMARY KEY and a WATERMARK are the table's. DESCRIBE as PyFlink 2.3 gives it for the same
    statements (by hand), and its refusals: a key or a NOT NULL the query's column does not fit, a list that misses one."""
    def described(name):
        return [list(r.values())[:3] for r in t_env.execute_sql(f"DESCRIBE {name}").collect()]

    t_env.execute_sql("CREATE TABLE t1 (extra INT, p BIGINT) WITH ('connector' = 'print') AS SELECT auction, price AS p FROM bids")
    assert described("t1") == [["extra", "INT", True], ["auction", "BIGINT", True], ["p", "BIGINT", True]]
    t_env.execute_sql("CREATE TABLE t2 (p, auction) WITH ('connector' = 'print') AS SELECT auction, price AS p FROM bids")
    assert described("t2") == [["p", "INT", True], ["auction", "BIGINT", True]]
    t_env.execute_sql(
        "CREATE TABLE t3 (WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'print') AS SELECT auction, ts FROM bids"
    )
    assert [r[0] for r in described("t3")] == ["auction", "ts"] and t_env._tables["t3"].watermark is not None
    sink = t_env._insert(fk.dialect.syntax.parse("CREATE TABLE IF NOT EXISTS t1 (y INT) WITH ('connector' = 'print') AS SELECT auction FROM bids"), "")
    assert sink.uid == "insert-t1"  # (a table there already is written by column name, the others NULL, as in Flink)
    refused = {
        "CREATE TABLE r1 (auction, p) WITH ('connector' = 'print') AS SELECT auction FROM bids": "must name each of the query's columns",
        "CREATE TABLE r2 (auction, x INT) WITH ('connector' = 'print') AS SELECT auction FROM bids": "not both",
        "CREATE TABLE r3 (PRIMARY KEY (auction) NOT ENFORCED) WITH ('connector' = 'print') AS SELECT auction FROM bids": "PRIMARY KEY's column auction can be NULL",
        "CREATE TABLE r4 (auction BIGINT NOT NULL) WITH ('connector' = 'print') AS SELECT auction FROM bids": "declared NOT NULL, and the query's auction can be NULL",
        "CREATE TABLE r5 (auction STRING) WITH ('connector' = 'print') AS SELECT auction FROM bids": "a BIGINT .* which Flink does not cast implicitly",
    }
    for statement, message in refused.items():
        with pytest.raises(PlanError, match=message):
            t_env.execute_sql(statement)
    assert sorted(t_env.list_tables()) == ["bids", "t1", "t2", "t3"]  # (a refused CTAS creates no table, as in Flink)


def test_a_kafka_table_s_properties_are_its_client_s_settings_and_its_group_id_commits_nothing():
    """``'properties.group.id'`` is in most Flink Kafka DDL (it was refused as an unknown option): funke keeps offsets
    in its checkpoint and commits none to a group, so the source stays on Spark's connector. Other ``properties.*`` go
    to librdkafka, the source's (funke's Python data source, then) and the sink's."""
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="ddl-unit"))
    t_env.execute_sql(GEN)
    with_group = KAFKA_WITH.replace("'format'", "'properties.group.id' = 'clicks-reader', 'format'")
    t_env.execute_sql(f"CREATE TABLE grouped (user_id BIGINT) {with_group}")
    spec = source_of(t_env.sql_query("SELECT * FROM grouped")._stream).spec
    assert spec.options == () and spec.python_only(streaming=True) is None
    tuned = with_group.replace("'format'", "'properties.fetch.min.bytes' = '1', 'properties.transaction.timeout.ms' = '60000', 'format'")
    t_env.execute_sql(f"CREATE TABLE tuned (user_id BIGINT) {tuned}")
    spec = source_of(t_env.sql_query("SELECT * FROM tuned")._stream).spec
    assert dict(spec.options) == {"fetch.min.bytes": "1", "transaction.timeout.ms": "60000"}
    sink = t_env._insert(fk.dialect.syntax.parse("INSERT INTO tuned SELECT auction FROM bids"), "")
    assert sink.spec.config == {"fetch.min.bytes": "1", "transaction.timeout.ms": "60000"}
    with pytest.raises(UnsupportedError, match=r"the kafka option 'group.id' is not supported by funke; it takes: .*properties\.\*"):
        t_env.execute_sql("CREATE TABLE bare (user_id BIGINT) " + KAFKA_WITH.replace("'format'", "'group.id' = 'g', 'format'"))


@pytest.mark.parametrize("call", ["STRING_AGG(bidder, ',')", "GROUP_CONCAT(bidder)"])
def test_another_database_s_string_aggregate_is_refused_naming_it_and_flink_s(t_env, call):
    """STRING_AGG and GROUP_CONCAT are not Flink SQL (PyFlink 2.3 refuses them too); the message named sqlglot's node,
    GROUPCONCAT, and now names the call as written and Flink's LISTAGG."""
    with pytest.raises(PlanError, match=rf"unknown function {call.split('(')[0]} at line 1, column 8 \(Flink's is LISTAGG\(s, separator\)\)"):
        t_env.sql_query(f"SELECT {call} FROM bids")


def test_an_upsert_kafka_table_is_written_by_its_key_and_what_funke_does_not_take_is_refused(t_env):
    """upsert-kafka (Flink's sink of an updating result to Kafka): the records keyed by the primary key as JSON, the
    updating result's kinds beside the row (a tombstone for a row that is gone); an insert-only result is written as
    it is. Read, it is the source's upserts normalized into a changelog of whole rows (ChangelogNormalize). Refused,
    each naming it: no primary key (as in Flink), a key format other than json, an unknown value.fields-include, a
    kafka table's scan.startup.mode (Flink's upsert-kafka has none: it reads from the earliest offset), the value
    format's option unprefixed, metadata columns."""
    upsert = "WITH ('connector' = 'upsert-kafka', 'topic' = 'totals', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'key.format' = 'json', 'value.format' = 'json'"
    t_env.execute_sql(f"CREATE TABLE totals (auction BIGINT, n BIGINT, PRIMARY KEY (auction) NOT ENFORCED) {upsert})")
    sink = t_env._insert(fk.dialect.syntax.parse("INSERT INTO totals SELECT auction, COUNT(*) FROM bids GROUP BY auction"), "")
    assert (sink.spec.key, sink.spec.key_format, sink.spec.changes, sink.spec.value_except_key) == (("auction",), "json", "row_kind", False)
    assert str(sink.input.exprs[0]) == "expr('`_fk_row_kind` AS row_kind')"
    inserts = t_env._insert(fk.dialect.syntax.parse("INSERT INTO totals SELECT auction, CAST(price AS BIGINT) FROM bids"), "")
    assert (inserts.spec.key_format, inserts.spec.changes) == ("json", None)
    keyed = "(auction BIGINT, n BIGINT, PRIMARY KEY (auction) NOT ENFORCED)"
    csv_key = upsert.replace("'key.format' = 'json'", "'key.format' = 'csv'")
    for declared, options, error, message in [
        ("(auction BIGINT, n BIGINT)", upsert, PlanError, "an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED"),
        (keyed, upsert + ", 'value.fields-include' = 'SOME'", PlanError, "value.fields-include must be ALL or EXCEPT_KEY"),
        (keyed, csv_key, UnsupportedError, "upsert-kafka key.format 'csv' is not supported by funke"),
    ]:
        t_env.execute_sql(f"CREATE TABLE bad {declared} {options})")
        with pytest.raises(error, match=re.escape(message)):
            t_env.execute_sql("INSERT INTO bad SELECT auction, COUNT(*) FROM bids GROUP BY auction")
        t_env.execute_sql("DROP TABLE bad")
    plan = t_env.sql_query("SELECT * FROM totals").explain()  # (read: tests/spark/test_sql_upsert_kafka.py)
    assert "process ChangelogNormalize" in plan and "upserts by key (auction), from earliest" in plan
    assert plan.count("changes: [+I, -D] upsert key (auction)") == 2 and "changes: [+I, -U, +U, -D] upsert key (auction)" in plan
    for extra, message in [
        (", 'scan.startup.mode' = 'latest-offset'", "the upsert-kafka option 'scan.startup.mode' is not supported"),
        (", 'json.ignore-parse-errors' = 'true'", "the upsert-kafka option 'json.ignore-parse-errors' is not supported"),
    ]:
        with pytest.raises(UnsupportedError, match=re.escape(message)):
            t_env.execute_sql(f"CREATE TABLE bad {keyed} {upsert}{extra})")
    with pytest.raises(UnsupportedError, match=re.escape("the upsert-kafka metadata 'offset' (column o) is not supported by funke: funke reads no metadata")):
        t_env.execute_sql(f"CREATE TABLE bad (auction BIGINT, o BIGINT METADATA FROM 'offset', PRIMARY KEY (auction) NOT ENFORCED) {upsert})")


def test_json_ignore_parse_errors_reaches_the_file_and_kafka_sources_and_is_refused_for_csv(tmp_path):
    script = tmp_path / "lenient.sql"
    kafka = "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092'"
    script.write_text(
        f"CREATE TABLE f (u STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json', 'json.ignore-parse-errors' = 'TRUE');\n"
        f"CREATE TABLE k (u STRING) WITH ({kafka}, 'format' = 'json', 'json.ignore-parse-errors' = 'true');\n"
        f"CREATE TABLE s (u STRING) WITH ({kafka}, 'format' = 'json');\n"
        "CREATE TABLE o (u STRING) WITH ('connector' = 'print');\n"
        "INSERT INTO o SELECT u FROM f UNION ALL SELECT u FROM k UNION ALL SELECT u FROM s;\n"
    )
    sources = [x.spec for x in nodes.walk(list(build(str(script), {}).sinks)) if isinstance(x, nodes.Source)]
    assert sorted((type(s).__name__, s.ignore_parse_errors) for s in sources) == [("FileSource", True), ("KafkaSource", False), ("KafkaSource", True)]
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="ddl-unit"))
    t_env.execute_sql(f"CREATE TABLE c (u STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv', 'json.ignore-parse-errors' = 'true')")
    with pytest.raises(PlanError, match="'json.ignore-parse-errors' is an option of the json format, not of csv"):
        t_env.sql_query("SELECT u FROM c")
    t_env.execute_sql(f"CREATE TABLE y (u STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json', 'json.ignore-parse-errors' = 'yes')")
    with pytest.raises(PlanError, match="json.ignore-parse-errors must be true or false, got 'yes'"):
        t_env.sql_query("SELECT u FROM y")


def test_json_fail_on_missing_field_reaches_the_file_and_kafka_sources_and_is_checked_as_flink_checks_it(t_env, tmp_path):
    """'json.fail-on-missing-field' (tests/spark/test_json_format.py reads it) was refused as unknown, even 'false', its
    default, which much Flink DDL spells out. Refused: on csv, and with json.ignore-parse-errors (Flink's message)."""
    kafka = "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json'"
    files = f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json'"
    cases = {"kf": f"{kafka}, 'json.fail-on-missing-field' = 'false', 'json.ignore-parse-errors' = 'true'",
             "kt": f"{kafka}, 'json.fail-on-missing-field' = 'true'", "ft": f"{files}, 'json.fail-on-missing-field' = 'TRUE'"}  # fmt: skip
    for name, options in cases.items():
        t_env.execute_sql(f"CREATE TABLE {name} (u STRING) WITH ({options})")
    specs = {name: t_env.sql_query(f"SELECT u FROM {name}")._stream.node.inputs[0].spec for name in cases}
    assert {n: (s.fail_on_missing_field, s.ignore_parse_errors) for n, s in specs.items()} == {"kf": (False, True), "kt": (True, False), "ft": (True, False)}
    for i, (options, message) in enumerate([
        (f"{kafka}, 'json.fail-on-missing-field' = 'true', 'json.ignore-parse-errors' = 'true'", "fail-on-missing-field and ignore-parse-errors shouldn't both be true."),
        (f"{files.replace('json', 'csv')}, 'json.fail-on-missing-field' = 'false'", "'json.fail-on-missing-field' is an option of the json format, not of csv"),
    ]):  # fmt: skip
        t_env.execute_sql(f"CREATE TABLE fm{i} (u STRING) WITH ({options})")
        with pytest.raises(PlanError, match=re.escape(message)):
            t_env.sql_query(f"SELECT u FROM fm{i}")


def test_json_timestamp_format_standard_reaches_json_sources_and_is_checked(t_env, tmp_path):
    """'json.timestamp-format.standard' (SQL, Flink's default, or ISO-8601) reaches a json table's source with its
    TIMESTAMP_LTZ columns (tests/spark/test_json_format.py reads by both); another value is refused, as is the option
    on csv."""
    kafka = "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json'"
    files = f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json'"
    columns = "u STRING, t TIMESTAMP(3), l TIMESTAMP_LTZ(3), d DATE"
    for i, options in enumerate((kafka, files)):
        for standard in ("SQL", "ISO-8601"):
            name = f"{'sql' if standard == 'SQL' else 'iso'}{i}"
            t_env.execute_sql(f"CREATE TABLE {name} ({columns}) WITH ({options}, 'json.timestamp-format.standard' = '{standard}')")
            spec = source_of(t_env.sql_query(f"SELECT u FROM {name}")._stream).spec
            assert (spec.timestamp_format, spec.instants) == (standard, ("l",)), name
            t_env._insert(fk.dialect.syntax.parse(f"INSERT INTO {name} SELECT 'x', CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS TIMESTAMP_LTZ(3)), CAST(NULL AS DATE) FROM bids", []), "")
        t_env.execute_sql(f"CREATE TABLE plain{i} ({columns}) WITH ({options})")
        assert source_of(t_env.sql_query(f"SELECT u FROM plain{i}")._stream).spec.timestamp_format == "SQL"
        t_env.execute_sql(f"CREATE TABLE bad{i} (u STRING) WITH ({options}, 'json.timestamp-format.standard' = 'iso')")
        with pytest.raises(PlanError, match="json.timestamp-format.standard must be 'SQL' or 'ISO-8601', got 'iso'"):
            t_env.sql_query(f"SELECT u FROM bad{i}")
    t_env.execute_sql(f"CREATE TABLE c (u STRING) WITH ({files.replace('json', 'csv')}, 'json.timestamp-format.standard' = 'SQL')")
    with pytest.raises(PlanError, match="'json.timestamp-format.standard' is an option of the json format, not of csv"):
        t_env.sql_query("SELECT u FROM c")


def test_kafka_scan_startup_modes_are_read_and_their_options_checked(t_env):
    """scan.startup.mode timestamp and specific-offsets (tests/spark/test_sql_kafka.py reads them): funke's starting
    datetime and offsets; an option of another mode than the one given, a bad value, and group-offsets are refused."""
    kafka = "WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json'"
    cases = {"ts": ", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '1700000000500'",
             "so": ", 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:2,offset:7'"}  # fmt: skip
    for name, extra in cases.items():
        t_env.execute_sql(f"CREATE TABLE {name} (a BIGINT) {kafka}{extra})")
    starts = {name: t_env.sql_query(f"SELECT a FROM {name}")._stream.node.inputs[0].spec.starting for name in cases}
    assert starts == {"ts": dt.datetime(2023, 11, 14, 22, 13, 20, 500000, tzinfo=dt.UTC), "so": (("t/0", 42), ("t/2", 7))}
    for i, (extra, message) in enumerate([
        (", 'scan.startup.timestamp-millis' = '1'", "'scan.startup.timestamp-millis' is read in scan.startup.mode 'timestamp' only, and the mode is 'earliest-offset'"),
        (", 'scan.startup.mode' = 'timestamp'", "needs the option 'scan.startup.timestamp-millis'"),
        (", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = 'soon'", "must be milliseconds since the epoch, got 'soon'"),
        (", 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0;offset:1'", "should be like 'partition:0,offset:42"),
        (", 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:1;partition:0,offset:2'", "(each partition once)"),
        (", 'scan.startup.mode' = 'group-offsets'", "scan.startup.mode 'group-offsets' is not supported"),
    ]):  # fmt: skip
        t_env.execute_sql(f"CREATE TABLE bad{i} (a BIGINT) {kafka}{extra})")
        with pytest.raises((PlanError, UnsupportedError), match=re.escape(message)):
            t_env.sql_query(f"SELECT a FROM bad{i}")


def test_kafka_scan_bounded_modes_are_read_and_their_options_checked(t_env):
    """scan.bounded.mode latest-offset, timestamp and specific-offsets (tests/spark/test_sql_kafka.py reads them):
    funke's ending, which makes the source bounded; unbounded (the default) none; an upsert-kafka table takes them
    too, as Flink's does. An option of another mode, a bad value, group-offsets and earliest-offset are refused."""
    kafka = "WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json'"
    upsert = ("WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', "
              "'key.format' = 'json', 'value.format' = 'json'")  # fmt: skip
    cases = {"lo": ", 'scan.bounded.mode' = 'latest-offset'", "ts": ", 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '1700000000500'",
             "so": ", 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:1,offset:3'",
             "un": ", 'scan.bounded.mode' = 'unbounded'", "no": ""}  # fmt: skip
    for name, extra in cases.items():
        t_env.execute_sql(f"CREATE TABLE b_{name} (a BIGINT) {kafka}{extra})")
    t_env.execute_sql(f"CREATE TABLE b_up (a BIGINT, PRIMARY KEY (a) NOT ENFORCED) {upsert}, 'scan.bounded.mode' = 'latest-offset')")
    specs = {name: next(x.spec for x in nodes.walk([t_env.sql_query(f"SELECT a FROM b_{name}")._stream.node]) if isinstance(x, nodes.Source))
             for name in (*cases, "up")}  # fmt: skip
    assert {name: s.ending for name, s in specs.items()} == {
        "lo": "latest", "ts": dt.datetime(2023, 11, 14, 22, 13, 20, 500000, tzinfo=dt.UTC), "so": (("t/1", 3),), "un": None, "no": None, "up": "latest",
    }  # fmt: skip
    assert {name: s.bounded for name, s in specs.items()} == {"lo": True, "ts": True, "so": True, "un": False, "no": False, "up": True}
    assert specs["so"].describe() == "kafka(t at 127.0.0.1:9092, json, from earliest, to offsets t/1@3)"
    for i, (extra, message) in enumerate([
        (", 'scan.bounded.timestamp-millis' = '1'", "'scan.bounded.timestamp-millis' is read in scan.bounded.mode 'timestamp' only, and the mode is 'unbounded'"),
        (", 'scan.bounded.mode' = 'latest-offset', 'scan.bounded.specific-offsets' = 'partition:0,offset:1'",
         "'scan.bounded.specific-offsets' is read in scan.bounded.mode 'specific-offsets' only, and the mode is 'latest-offset'"),
        (", 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = 'soon'", "scan.bounded.timestamp-millis must be milliseconds since the epoch, got 'soon'"),
        (", 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:0'", "scan.bounded.specific-offsets should be like 'partition:0,offset:42"),
        (", 'scan.bounded.mode' = 'group-offsets'", "scan.bounded.mode 'group-offsets' is not supported"),
        (", 'scan.bounded.mode' = 'earliest-offset'", "scan.bounded.mode 'earliest-offset' is not supported"),
    ]):  # fmt: skip
        t_env.execute_sql(f"CREATE TABLE bb{i} (a BIGINT) {kafka}{extra})")
        with pytest.raises((PlanError, UnsupportedError), match=re.escape(message)):
            t_env.sql_query(f"SELECT a FROM bb{i}")


def test_cdc_kafka_tables_are_read_as_changelogs_and_not_written(t_env):
    """'format' = 'debezium-json', 'canal-json', 'maxwell-json' (tests/spark/test_sql_debezium.py and
    test_sql_canal_maxwell.py read them): the table's rows are changes of every kind, of the primary key as their
    upsert key (Flink's planner takes it so); canal-json's include regexes reach the source; writing a table in one of
    them, and an option of one on another format, are refused."""
    kafka = "WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092'"
    formats = {
        "debezium-json": (", 'debezium-json.schema-include' = 'true'", "debezium-schema", ("", "")),
        "canal-json": (", 'canal-json.database.include' = 'shop_.*', 'canal-json.table.include' = 'orders'", "canal", ("shop_.*", "orders")),
        "maxwell-json": (", 'maxwell-json.ignore-parse-errors' = 'true'", "maxwell", ("", "")),
    }  # fmt: skip
    for i, (fmt, (extra, envelope, include)) in enumerate(formats.items()):
        t_env.execute_sql(f"CREATE TABLE cdc{i} (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED) {kafka}, 'format' = '{fmt}'{extra})")
        spec = t_env.sql_query(f"SELECT * FROM cdc{i}")._stream.node.inputs[0].spec
        assert (spec.envelope, spec.include, spec.ignore_parse_errors) == (envelope, include, fmt == "maxwell-json")
        plan = t_env.sql_query(f"SELECT * FROM cdc{i}").explain()
        assert f"kafka(t at 127.0.0.1:9092, {fmt}, from earliest)" in plan and "changes: [+I, -U, +U, -D] upsert key (id)" in plan
        with pytest.raises(UnsupportedError, match=re.escape(f"kafka format '{fmt}' is not supported by funke ({fmt} is read, not written)")):
            t_env.execute_sql(f"INSERT INTO cdc{i} SELECT CAST(auction AS INT), 'x' FROM bids")
        other = "json" if fmt != "canal-json" else "maxwell-json"
        t_env.execute_sql(f"CREATE TABLE misplaced{i} (id INT) {kafka}, 'format' = '{other}'{extra})")
        option = extra.split("'")[1]
        with pytest.raises(PlanError, match=re.escape(f"{option!r} is an option of the {fmt} format, not of {other}")):
            t_env.sql_query(f"SELECT * FROM misplaced{i}")


def test_the_raw_format_takes_one_string_column_and_refuses_the_rest(t_env):
    """'format' = 'raw' (tests/spark/test_sql_kafka.py reads and writes it): the source reads each record's value as the
    table's one STRING column, the sink writes it; two columns, another type and a charset other than UTF-8 are refused."""
    kafka = "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'raw'"
    t_env.execute_sql(f"CREATE TABLE lines (line STRING) WITH ({kafka}, 'raw.charset' = 'utf-8')")
    spec = t_env.sql_query("SELECT line FROM lines")._stream.node.inputs[0].spec
    assert (spec.format, spec.schema.names, spec.value_schema.names) == ("raw", ("line",), ("line",))
    assert t_env._insert(fk.dialect.syntax.parse("INSERT INTO lines SELECT 'x' FROM bids", []), "").spec.format == "raw"
    for i, (columns, extra, message) in enumerate([
        ("(a STRING, b STRING)", "", "funke's raw format reads and writes one physical column of type STRING as each record's value"),
        ("(n INT)", "", "(Flink's BYTES and numbers' bytes are not supported), got n int"),
        ("(line STRING)", ", 'raw.charset' = 'ISO-8859-1'", "raw.charset 'ISO-8859-1' is not supported by funke (UTF-8)"),
    ]):  # fmt: skip
        t_env.execute_sql(f"CREATE TABLE raw{i} {columns} WITH ({kafka}{extra})")
        with pytest.raises(UnsupportedError, match=re.escape(message)):
            t_env.sql_query(f"SELECT * FROM raw{i}")
    with pytest.raises(SchemaError, match="with a schema of one string or binary column"):
        fk.sources.kafka("t", schema="a string, b string", format="raw")


def test_a_kafka_source_s_topic_is_flink_s_list_and_a_sink_s_one_topic(t_env):
    """'topic' = 'a; b' is two topics, as Flink's semicolon-separated list; a sink writing two is refused, naming them."""
    kafka = "WITH ('connector' = 'kafka', 'topic' = 'a; b', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json')"
    t_env.execute_sql(f"CREATE TABLE two (x BIGINT) {kafka}")
    assert t_env.sql_query("SELECT x FROM two")._stream.node.inputs[0].spec.topics == ("a", "b")
    with pytest.raises(UnsupportedError, match=re.escape("a kafka sink writes one topic, and 'topic' names 2: 'a; b'")):
        t_env.execute_sql("INSERT INTO two SELECT auction FROM bids")


def test_csv_format_options_reach_the_file_source_sink_and_lookup_and_are_checked(t_env, tmp_path):
    """A filesystem table's 'csv.field-delimiter' ('\\t' unescaped, as Flink's), 'csv.quote-character',
    'csv.null-literal' and 'csv.allow-comments' (tests/spark/test_csv_format.py reads and writes with them) were refused
    as unknown. Refused: on json, a delimiter of two characters, a delimiter equal to the quote, and on kafka."""
    files = f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv'"
    t_env.execute_sql(f"CREATE TABLE c (u STRING) WITH ({files}, 'csv.field-delimiter' = '\\t', 'csv.quote-character' = '''', "
                      "'csv.null-literal' = 'n/a', 'csv.allow-comments' = 'true')")  # fmt: skip
    source = t_env.sql_query("SELECT u FROM c")._stream.node.inputs[0].spec
    assert dict(source.options) == {"sep": "\t", "quote": "'", "nullValue": "n/a", "comment": "#"}
    sink = t_env._insert(fk.dialect.syntax.parse("INSERT INTO c SELECT 'x' FROM bids", []), "").spec
    assert (sink.delimiter, sink.quote, sink.null_literal) == ("\t", "'", "n/a")
    for i, (options, message) in enumerate([
        (f"{files.replace('csv', 'json')}, 'csv.null-literal' = 'x'", "'csv.null-literal' is an option of the csv format, not of json"),
        (f"{files}, 'csv.field-delimiter' = '||'", "csv.field-delimiter must be one character, not a line break, got '||'"),
        (f"{files}, 'csv.field-delimiter' = '\"'", "csv.field-delimiter and csv.quote-character must differ"),
        (f"{files}, 'csv.allow-comments' = 'yes'", "csv.allow-comments must be true or false, got 'yes'"),
    ]):  # fmt: skip
        t_env.execute_sql(f"CREATE TABLE bad{i} (u STRING) WITH ({options})")
        with pytest.raises(PlanError, match=re.escape(message)):
            t_env.sql_query(f"SELECT u FROM bad{i}")
    kafka = "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'csv'"
    with pytest.raises(UnsupportedError, match="the kafka option 'csv.field-delimiter' is not supported by funke"):
        t_env.execute_sql(f"CREATE TABLE k (u STRING) WITH ({kafka}, 'csv.field-delimiter' = '|')")
    # csv.ignore-parse-errors: a filesystem's and a kafka table's csv, not json
    t_env.execute_sql(f"CREATE TABLE fi (u STRING) WITH ({files}, 'csv.ignore-parse-errors' = 'true')")
    t_env.execute_sql(f"CREATE TABLE ki (u STRING) WITH ({kafka}, 'csv.ignore-parse-errors' = 'true')")
    assert [t_env.sql_query(f"SELECT u FROM {n}")._stream.node.inputs[0].spec.ignore_parse_errors for n in ("fi", "ki")] == [True, True]
    t_env.execute_sql(f"CREATE TABLE ji (u STRING) WITH ({kafka.replace('csv', 'json')}, 'csv.ignore-parse-errors' = 'true')")
    with pytest.raises(PlanError, match="'csv.ignore-parse-errors' is an option of the csv format, not of json"):
        t_env.sql_query("SELECT u FROM ji")
