"""CSV is read and written by the rules of Flink's csv format (funke.spark.parse.with_flink_csv, funke.spark.record_text):
Flink's csv has no NULL, so an empty field is '' for a STRING, FALSE for a BOOLEAN and fails a number; a number's text
is trimmed but a DECIMAL's; a line with more or fewer fields than the columns fails; a quote in a quoted field is
doubled. Where Flink's reader fails a record, funke sends it to the dead letters. Written, a text is quoted where
Jackson's writer quotes it (a character below ``-``, or a backslash), a NULL is an empty field.

The expected values are what PyFlink 2.3 read and wrote for the same lines and rows (its filesystem connector, format
csv, parallelism 1); a line in ``FLINK_FAILS`` is one Flink's reader fails the job on.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

import funke as fk
from funke.connectors.kafka_sink import encode_values
from funke.pyflink.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.spark
SCHEMA = "s string, i int, d double, m decimal(5,2), b boolean, t string"
D = Decimal
#: A line -> the row Flink reads of it.
FLINK_READS = {
    "a,1,1.5,2.50,true,x": ("a", 1, 1.5, D("2.50"), True, "x"),
    '"p,q",4,1,1,TRUE,"s""t"': ("p,q", 4, 1.0, D("1.00"), True, 's"t'),
    "e,+5,-Infinity,-0.5,True,NaN": ("e", 5, float("-inf"), D("-0.50"), True, "NaN"),
    "g,1,2.5f,1,1,q": ("g", 1, 2.5, D("1.00"), False, "q"),
    "h,1,1,1,,": ("h", 1, 1.0, D("1.00"), False, ""),
    " 7 , 7 , 7 ,7, TRUE , 7 ": (" 7 ", 7, 7.0, D("7.00"), True, " 7 "),
    "i,1,1,123456,1,": ("i", 1, 1.0, None, False, ""),  # a DECIMAL too wide is NULL in Flink, no failure
    '"",1,1,1,"",""': ("", 1, 1.0, D("1.00"), False, ""),
    'j,-0,1E+1,.5,false,"x ""y"" z"': ("j", 0, 10.0, D("0.50"), False, 'x "y" z'),
}
FLINK_FAILS = [
    ",,,,,",  # an empty INT, DOUBLE, DECIMAL
    '"","","","","",""',
    " 3 , 3 , 3 , 3 , true , 3 ",  # a DECIMAL's text is not trimmed
    "b,2",  # too few fields
    "c,3,1,1,false,y,extra",  # too many
    "",  # a blank line: one field
    "d,0x10,1e2,1e2,yes,z",
    "f,2147483648,1,1,1,q",  # out of an INT's range
]
#: Where funke differs: a quoted field with a line break, which Flink reads as one record ("open\nclose"); funke reads
#: a line at a time, so each half is a dead letter (a quoted field left open) rather than a record cut short.
SPLIT = ['k,1,1,1,true,"open', 'close"']


def test_each_line_is_read_as_flink_reads_it_and_what_flink_fails_on_is_a_dead_letter(spark, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-0.csv").write_text("".join(f"{line}\n" for line in [*FLINK_READS, *FLINK_FAILS, *SPLIT]))
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="csv", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    out = env.from_source(fk.sources.files(str(tmp_path / "in"), schema=SCHEMA, format="csv")).collect()
    env.execute(bounded=True).wait(180)
    assert sorted(tuple(r.values()) for r in out.rows) == sorted(FLINK_READS.values())
    assert sorted(r["raw"] for r in dead.rows) == sorted(FLINK_FAILS + SPLIT)


#: With csv.ignore-parse-errors: a line -> the row Flink reads of it (a value that fails is NULL, and a field a short
#: line lacks); the line with too many fields Flink skips, funke sends to the dead letters.
FLINK_READS_IGNORING_ERRORS = {
    "a,1,1.5,2.50,true,x": ("a", 1, 1.5, D("2.50"), True, "x"),
    ",,,,,": ("", None, None, None, False, ""),
    '"","","","","",""': ("", None, None, None, False, ""),
    " 3 , 3 , 3 , 3 , true , 3 ": (" 3 ", 3, 3.0, None, True, " 3 "),
    "b,2": ("b", 2, None, None, None, None),
    "": ("", None, None, None, None, None),
    '"p,q",4,1,1,TRUE,"s""t"': ("p,q", 4, 1.0, D("1.00"), True, 's"t'),
    "d,0x10,1e2,1e2,yes,z": ("d", None, 100.0, D("100.00"), False, "z"),
    "e,+5,-Infinity,-0.5,True,NaN": ("e", 5, float("-inf"), D("-0.50"), True, "NaN"),
}
SKIPPED = ["c,3,1,1,false,y,extra"]


def test_with_ignore_parse_errors_a_value_that_fails_is_null_and_a_line_flink_skips_a_dead_letter(spark, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-0.csv").write_text("".join(f"{line}\n" for line in [*FLINK_READS_IGNORING_ERRORS, *SKIPPED]))
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="csv-lenient", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    out = env.from_source(fk.sources.files(str(tmp_path / "in"), schema=SCHEMA, format="csv", ignore_parse_errors=True)).collect()
    env.execute(bounded=True).wait(180)
    assert sorted((tuple(r.values()) for r in out.rows), key=repr) == sorted(FLINK_READS_IGNORING_ERRORS.values(), key=repr)
    assert [r["raw"] for r in dead.rows] == SKIPPED


#: Rows written by Flink SQL's INSERT, and the lines PyFlink 2.3 wrote of them.
WRITTEN = (
    """('s"t', CAST(NULL AS STRING), CAST(NULL AS INT), '', TIMESTAMP '2024-05-01 12:00:10.250'),"""
    """('a b', 'x,y', 3, 'back\\slash', CAST(NULL AS TIMESTAMP(3))),"""
    """(' lead', 'a+b', -1, 'a-b.c', TIMESTAMP '2024-05-01 12:00:10')"""
)
FLINK_WROTE = ['"s""t",,,,"2024-05-01 12:00:10.25"', '"a b","x,y",3,"back\\slash",', '" lead","a+b",-1,a-b.c,"2024-05-01 12:00:10"']


def test_a_csv_file_sink_writes_the_lines_flink_writes_and_reads_them_back_as_flink_does(spark, tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    ddl = "(a STRING, b STRING, c INT, d STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'format' = 'csv', 'path' = '{}')"
    t_env.execute_sql(f"CREATE TABLE o {ddl.format(tmp_path / 'out')}")
    t_env.execute_sql(f"INSERT INTO o VALUES {WRITTEN}").wait()
    lines = [line for f in sorted((tmp_path / "out").glob("part-*")) for line in f.read_text().splitlines()]
    assert sorted(lines) == sorted(FLINK_WROTE)
    # read back: a NULL written as an empty field is read as '' (a STRING's; an INT's would fail), as Flink reads it
    t_env.execute_sql(f"CREATE TABLE i (a STRING, b STRING, c STRING, d STRING, ts STRING) WITH ('connector' = 'filesystem', 'format' = 'csv', 'path' = '{tmp_path / 'out'}')")
    read = sorted(tuple(r) for r in t_env.execute_sql("SELECT * FROM i").collect())
    assert read == sorted([('s"t', "", "", "", "2024-05-01 12:00:10.25"), ("a b", "x,y", "3", "back\\slash", ""), (" lead", "a+b", "-1", "a-b.c", "2024-05-01 12:00:10")])


def test_the_kafka_sink_on_the_jvm_writes_the_csv_lines_its_python_writer_writes(spark):
    import pyarrow as pa

    from funke.spark.record_text import csv_line

    texts = ["plain", 'say "hi", me', "a-b.c", "a+b", " ", "", None, "tab\there", "back\\slash", "line\nbreak", "ümlaut"]
    rows = [(t, i) for i, t in enumerate(texts)]
    got = [r[0] for r in spark.createDataFrame(rows, "s string, n int").select(csv_line(spark.createDataFrame(rows, "s string, n int"))).collect()]
    assert got == encode_values(pa.table({"s": texts, "n": list(range(len(texts)))}), "csv")
    assert got[:6] == ["plain,0", '"say ""hi"", me",1', "a-b.c,2", '"a+b",3', '" ",4', ",5"]


def test_a_csv_lookup_table_is_read_by_the_same_rules_and_a_record_that_breaks_them_fails_the_job(spark, tmp_path):
    """A filesystem table in a lookup join: an empty STRING field is '' and joins as '' (Spark's CSV reader read it
    as NULL, so ``name = ''`` matched nothing); a record Flink's reader fails on fails the job, naming the file and
    the record (Spark's reader made the bad value NULL)."""
    (tmp_path / "orders").mkdir()
    (tmp_path / "orders" / "o.csv").write_text("1,a\n2,b\n3,c\n")
    (tmp_path / "dim").mkdir()
    (tmp_path / "dim" / "d.csv").write_text("a,A,1\nb,,2\n")
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(f"CREATE TABLE orders (id INT, k STRING, pt AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'orders'}', 'format' = 'csv')")
    t_env.execute_sql(f"CREATE TABLE dim (k STRING, name STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'dim'}', 'format' = 'csv')")
    query = "SELECT o.id, d.name, d.name = '' AS blank FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.k"
    assert sorted(tuple(r) for r in t_env.execute_sql(query).collect()) == [(1, "A", False), (2, "", True), (3, None, None)]
    (tmp_path / "dim" / "d.csv").write_text("a,A,1\nb,B,x\n")
    with pytest.raises(Exception, match=r"(?s)malformed record or a value of the wrong type in a lookup table, in .*d\.csv: b,B,x"):
        list(t_env.execute_sql(query).collect())


#: csv options -> (a file's text, the rows PyFlink 2.3 read of it) and (the lines PyFlink wrote of OPTION_ROWS).
OPTION_ROWS = "('abc', CAST(NULL AS STRING), CAST(NULL AS INT), ''), ('a b', 'x,y', 3, 'p|q'), ('{z}', '~', 12, 'a''b'), ('tab\tx', 'AZ', -1, 'q\"r')"
OPTION_CASES = {
    "'csv.field-delimiter' = '|', 'csv.null-literal' = 'n/a'": ['"abc"|n/a|n/a|', '"a b"|"x,y"|3|"p|q"', "\"{z}\"|~|12|\"a'b\"", '"tab\tx"|"AZ"|-1|"q""r"'],
    "'csv.field-delimiter' = '\\t', 'csv.quote-character' = ''''": ["abc\t\t\t", "'a b'\tx,y\t3\tp|q", "{z}\t~\t12\t'a''b'", "'tab\tx'\tAZ\t-1\t'q\"r'"],
}
OPTION_READ = ("'csv.field-delimiter' = '|', 'csv.quote-character' = '''', 'csv.null-literal' = 'n/a', 'csv.allow-comments' = 'true'",
               "# a comment\na|1|n/a|'x|y'\nb|2|''|n/a\n'c''d'|3|  |'n/a'\n", [("a", 1, None, "x|y"), ("b", 2, "", None), ("c'd", 3, "  ", None)])  # fmt: skip


def test_the_csv_options_delimiter_quote_null_literal_and_comments_read_and_write_as_flink_does(spark, tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    for i, (options, wrote) in enumerate(OPTION_CASES.items()):
        out = tmp_path / f"out{i}"
        t_env.execute_sql(f"CREATE TABLE o{i} (a STRING, b STRING, c INT, d STRING) WITH ('connector' = 'filesystem', 'format' = 'csv', 'path' = '{out}', {options})")
        t_env.execute_sql(f"INSERT INTO o{i} VALUES {OPTION_ROWS}").wait()
        assert sorted(line for f in out.glob("part-*") for line in f.read_text().splitlines()) == sorted(wrote), options
    options, text, read = OPTION_READ
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f.csv").write_text(text)
    t_env.execute_sql(f"CREATE TABLE i (s STRING, i INT, u STRING, v STRING) WITH ('connector' = 'filesystem', 'format' = 'csv', 'path' = '{tmp_path / 'in'}', {options})")
    assert sorted(tuple(r) for r in t_env.execute_sql("SELECT * FROM i").collect()) == read
