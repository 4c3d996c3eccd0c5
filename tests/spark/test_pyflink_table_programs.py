"""PyFlink 2.3's own Table API examples (as published in the ``apache-flink`` wheel, downloaded at run
time, never copied into funke) run unchanged on funke's ``pyflink.table`` translation, each program's
printed lines compared as a multiset with the lines computed here from its data (``N>`` prefixes aside).
Real PyFlink printed the same lines for each (``funke bench pyflink --examples`` runs them there too)."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from funke.bench.pyflink import examples_dir
from funke.errors import UnsupportedError
from funke.pyflink._hook import install
from tests.spark.test_pyflink_programs import module_data, run_program

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("spark")]

PEOPLE = [
    (1, {"name": "Flink", "tel": 123, "addr": {"country": "Germany", "city": "Berlin"}}),
    (2, {"name": "hello", "tel": 135, "addr": {"country": "China", "city": "Shanghai"}}),
    (3, {"name": "world", "tel": 124, "addr": {"country": "USA", "city": "NewYork"}}),
    (4, {"name": "PyFlink", "tel": 32, "addr": {"country": "China", "city": "Hangzhou"}}),
]


@pytest.fixture(scope="module")
def examples() -> Path:
    return examples_dir(kind="table")


def test_word_count_prints_every_change_of_each_word_s_count(examples, capsys):
    path = examples / "word_count.py"
    install()
    expected: Counter[str] = Counter(
        ["Executing word_count example with default input data set.", "Use --input to specify file input.",
         "Printing result to stdout. Use --output to specify output path."]
    )  # fmt: skip
    seen: Counter[str] = Counter()
    for line in module_data(path)["word_count_data"]:
        for word in line.split():  # (a group aggregation's changelog: +I the first count, then -U old, +U new)
            seen[word] += 1
            n = seen[word]
            expected.update([f"+I[{word}, 1]"] if n == 1 else [f"-U[{word}, {n - 1}]", f"+U[{word}, {n}]"])
    assert run_program(path, capsys) == expected


def test_process_json_data_takes_a_json_value_of_each_row(examples, capsys):
    expected = Counter(f"+I[{i}, {d['addr']['country']}]" for i, d in PEOPLE)
    assert run_program(examples / "process_json_data.py", capsys) == expected


def test_process_json_data_with_a_python_udf(examples, capsys):
    expected = Counter(f"+I[{i}, {json.dumps({**d, 'tel': d['tel'] + 1})}]" for i, d in PEOPLE)
    assert run_program(examples / "process_json_data_with_udf.py", capsys) == expected


def test_multi_sink_runs_two_inserts_as_one_statement_set(examples, capsys):
    rows = [(1, "Hello"), (2, "World"), (3, "Flink"), (4, "PyFlink")]
    expected = Counter([f"+I[{i}, {d}]" for i, d in rows if i <= 3] + [f"+I[{i}, {d}]" for i, d in rows if "Flink" in d])
    assert run_program(examples / "multi_sink.py", capsys) == expected


def test_mixing_datastream_and_table_converts_both_ways(examples, capsys):
    got = run_program(examples / "mixing_use_of_datastream_and_table.py", capsys)
    assert sum(got.values()) == 10  # (datagen's 10 random rows: id + length of data, each printed once)
    assert all(re.fullmatch(r"\+I\[-?\d+\]", line) for line in got), got


def test_async_scalar_functions_give_each_row_its_own_value(examples, capsys):
    """async/async_scalar_function.py: an AsyncScalarFunction class and an ``async def`` udf over 10 random rows,
    each query drawn as PyFlink draws it. (Real PyFlink 2.3 printed values of other rows beside some user ids
    here, e.g. ``5 | db_value_for_a``; funke gives each row its function's value.)"""
    got = run_program(examples / "async" / "async_scalar_function.py", capsys)
    rows = [line for line in got.elements() if line.startswith("| +I |")]
    assert len(rows) == 20, got
    cells = [[c.strip() for c in line.strip("|").split("|")[1:]] for line in rows]
    lookups = [c for c in cells if c[1].startswith("db_value_for_")]
    assert len(lookups) == 10 and all(c[1] == f"db_value_for_{c[0]}" for c in lookups), lookups
    calls = [c for c in cells if c not in lookups]
    assert all(re.fullmatch(rf"Product {re.escape(c[0])}: \$(\d+)", c[1]) and 10 <= int(c[1].split("$")[1]) <= 1000 for c in calls), calls
    assert got["| op |                        user_id |                      user_info |"] == 1  # (PyFlink's header, widths by type)
    assert got["10 rows in set"] == 2 and got["Created source table with datagen connector"] == 1


def test_streaming_word_count_streams_each_word_s_count_until_stopped(examples):
    """streaming_word_count.py reads an endless datagen table (5 random word ids a second), as PyFlink's does:
    run as ``python -m funke.pyflink``, its first 12 changes are read (a condition, not a time), then it is
    stopped. Each word's changes follow one another: ``+I[w, 1]``, then ``-U[w, n]`` and ``+U[w, n + 1]``."""
    path = examples / "streaming_word_count.py"
    install()
    words = module_data(path)["words"]
    proc = subprocess.Popen([sys.executable, "-m", "funke.pyflink", str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    changes: list[str] = []
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "Printing result to stdout. Use --output to specify output path."
        while len(changes) < 12:
            line = proc.stdout.readline()
            assert line, f"the job ended after {changes}"
            changes.append(line.strip())
    finally:
        proc.kill()
        proc.wait(60)
    counts: dict[str, int] = {}
    pending: str | None = None  # (a -U awaiting its +U)
    for line in changes:
        kind, word, n = re.fullmatch(r"([+-][IUD])\[(\w+), (\d+)\]", line).groups()  # type: ignore[union-attr]
        assert word in words, line
        if kind == "+I":
            assert pending is None and word not in counts and n == "1", changes
        elif kind == "-U":
            assert pending is None and counts[word] == int(n), changes
            pending = word
        else:
            assert kind == "+U" and pending == word and int(n) == counts[word] + 1, changes
            pending = None
        counts[word] = int(n)


# The windowing examples' rows (ms, name, price), as their programs declare them.
PRICES = [(1000, "Alice", 110.1), (4000, "Bob", 30.2), (3000, "Alice", 20.0), (2000, "Bob", 53.1), (5000, "Alice", 13.1),
          (3000, "Bob", 3.1), (7000, "Bob", 16.1), (10000, "Alice", 20.1)]  # fmt: skip
SESSION_PRICES = [(1000, "Alice", 110.1), (4000, "Bob", 30.2), (3000, "Alice", 20.0), (2000, "Bob", 53.1), (8000, "Bob", 16.1),
                  (10000, "Alice", 20.1)]  # fmt: skip


def instant(ms: int) -> str:
    return (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%SZ")


def parsed(lines: Counter[str]) -> list[tuple[str, str, float, str, str]]:
    """``+I[name, value, start, end]`` lines as tuples, sorted (the value a float: FLOAT sums are compared to 1e-6)."""
    out = []
    for line, n in lines.items():
        kind, rest = line[:2], line[3:-1].split(", ")
        out += [(kind, rest[0], float(rest[1]), rest[2], rest[3])] * n
    return sorted(out, key=lambda r: (r[1], r[3], r[4]))


def assert_windows(got: Counter[str], expected: dict[tuple[str, int, int], list[float]], aggregate) -> None:
    want = sorted((("+I", k, aggregate(v), instant(s), instant(e)) for (k, s, e), v in expected.items()), key=lambda r: (r[1], r[3], r[4]))
    rows = parsed(got)
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [(r[0], r[1], r[3], r[4]) for r in want]
    assert [r[2] for r in rows] == pytest.approx([r[2] for r in want], rel=1e-6)


def sliced(rows, size: int, slide: int) -> dict[tuple[str, int, int], list[float]]:
    out: dict[tuple[str, int, int], list[float]] = {}
    for ms, name, price in rows:
        start = ms - ms % slide
        while start > ms - size:
            out.setdefault((name, start, start + size), []).append(price)
            start -= slide
    return out


@pytest.mark.parametrize(("program", "size", "slide", "aggregate"), [
    ("tumble_window.py", 5000, 5000, sum), ("sliding_window.py", 5000, 2000, sum),
    ("pandas_udaf.py", 5000, 5000, lambda v: sum(v) / len(v)),
])  # fmt: skip
def test_group_windows_over_a_datastream_with_a_watermark(examples, capsys, program, size, slide, aggregate):
    folder = examples / ("pandas" if program.startswith("pandas") else "windowing")
    assert_windows(run_program(folder / program, capsys), sliced(PRICES, size, slide), aggregate)


def test_an_over_window_gives_each_row_the_max_of_it_and_the_two_rows_before(examples, capsys):
    """over_window.py: MAX(price) OVER (PARTITION BY name ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW),
    each name's rows in time order (none is late: the watermark trails by 3 s, the rows by at most 2 s)."""
    expected = Counter()
    for name in ("Alice", "Bob"):
        prices = [p for _, _, p in sorted((ms, n, p) for ms, n, p in PRICES if n == name)]
        expected.update(f"+I[{name}, {max(prices[max(0, i - 2) : i + 1])}]" for i in range(len(prices)))
    assert run_program(examples / "windowing" / "over_window.py", capsys) == expected


def test_session_windows_over_a_datastream_with_a_watermark(examples, capsys):
    sessions: dict[tuple[str, int, int], list[float]] = {}
    for name in {n for _, n, _ in SESSION_PRICES}:
        times = sorted((ms, p) for ms, n, p in SESSION_PRICES if n == name)
        start, end, prices = times[0][0], times[0][0] + 5000, []
        for ms, price in times:
            if ms >= end:
                sessions[(name, start, end)] = prices
                start, prices = ms, []
            end, prices = ms + 5000, [*prices, price]
        sessions[(name, start, end)] = prices
    assert_windows(run_program(examples / "windowing" / "session_window.py", capsys), sessions, sum)


def test_a_pandas_dataframe_goes_through_a_table_and_back(examples, capsys):
    got = run_program(examples / "pandas" / "conversion_from_dataframe.py", capsys)
    assert got["[1000 rows x 2 columns]"] == 1  # (random values: pandas' summary of the frame that came back)
    assert any(re.fullmatch(r"\s+a\s+b", line) for line in got) and any(re.fullmatch(r"999\s+[0-9.]+\s+[0-9.]+", line) for line in got)


def test_the_tables_of_basic_operations_are_pyflink_s_drawn_tables(tmp_path, capsys):
    """``TableResult.print()`` of basic_operations' queries: the drawn table, byte for byte as PyFlink printed
    it (rows as a multiset where Flink's order is its parallelism's); then its limit, aggregation (PyFlink's
    EXPR$ names, each change of China's row), join on an expression and in-place column replacement."""
    from funke.pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
    from funke.pyflink.table.expressions import col, concat

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    table = t_env.from_elements([(i, json.dumps(d)) for i, d in PEOPLE], schema=["id", "data"])
    table = table.add_columns(
        col("data").json_value("$.name", DataTypes.STRING()).alias("name"),
        col("data").json_value("$.tel", DataTypes.STRING()).alias("tel"),
        col("data").json_value("$.addr.country", DataTypes.STRING()).alias("country"),
    ).drop_columns(col("data"))
    capsys.readouterr()
    table.execute().print()
    lines = capsys.readouterr().out.splitlines()
    border = "+----+" + "-" * 22 + "+" + ("-" * 32 + "+") * 3
    assert lines[:3] == [border, f"| op | {'id':>20} | {'name':>30} | {'tel':>30} | {'country':>30} |", border]
    assert sorted(lines[3:7]) == sorted(
        f"| +I | {i:>20} | {d['name']:>30} | {d['tel']:>30} | {d['addr']['country']:>30} |" for i, d in PEOPLE
    )
    assert lines[7:] == [border, "4 rows in set"]

    def printed(t) -> list[str]:
        t.execute().print()
        return capsys.readouterr().out.splitlines()

    def row(*cells) -> str:
        return "| " + " | ".join(f"{c:>{w}}" for c, w in zip(cells, (2, 20, 30, 30, 30, 20, 20), strict=False)) + " |"

    # LIMIT 3 of an insert-only table: its first three rows, each an insert
    assert printed(table.limit(3))[3:7] == [row("+I", i, d["name"], d["tel"], d["addr"]["country"]) for i, d in PEOPLE[:3]] + [border]
    # a grouped select's unnamed aggregates are EXPR$0, EXPR$1; China's count changes when its second row comes
    lines = printed(table.group_by(col("country")).select(col("country"), col("id").count, col("tel").cast(DataTypes.BIGINT()).max))
    assert lines[1] == f"| op | {'country':>30} | {'EXPR$0':>20} | {'EXPR$1':>20} |"
    china = [x for x in lines if "China" in x]
    assert china == [f"| {k} | {'China':>30} | {n:>20} | {135:>20} |" for k, n in (("+I", 1), ("-U", 1), ("+U", 2))]
    # a join whose predicate is a Table API expression (parenthesized SQL), then columns replaced where they are
    right = t_env.from_elements([(1, 18), (2, 30), (3, 25), (4, 10)], schema=["id", "age"])
    joined = printed(table.join(right.rename_columns(col("id").alias("r_id")), col("id") == col("r_id")))
    assert joined[-1] == "4 rows in set" and all(f"| {i:>20} |" in " ".join(joined) for i, _ in PEOPLE)
    replaced = printed(table.add_or_replace_columns(concat(col("id").cast(DataTypes.STRING()), "_", col("name")).alias("id")))
    assert [c.strip() for c in replaced[1].split("|")[1:-1]] == ["op", "id", "name", "tel", "country"]
    assert f"| +I | {'1_Flink':>30} | {'Flink':>30} |" in "\n".join(replaced)


def test_basic_operations_fails_where_pyflink_fails(examples, capsys):
    """basic_operations.py imports the json module, then ``from pyflink.table.expressions import *``, which
    binds PyFlink's expression function ``json`` over it: its table function parse_data's ``json.loads`` fails,
    on PyFlink 2.3 as on funke, after the same tables (the drawn tables are checked above)."""
    from funke.errors import JobFailedError

    with pytest.raises(JobFailedError, match=r"parse_data raised AttributeError: 'function' object has no attribute 'loads'"):
        run_program(examples / "basic_operations.py", capsys)
    printed = capsys.readouterr().out.splitlines()
    assert printed.count("4 rows in set") == 3 and not any("259" in line for line in printed)  # (the aggregations after it never ran)


@pytest.mark.parametrize("batch", [False, True], ids=["streaming", "batch"])
def test_values_and_a_select_without_from_print_as_pyflink_prints_them(capsys, batch):
    """``SELECT`` without ``FROM`` is one row, ``(VALUES ...) AS t(a, b)`` its rows, each column of its values'
    common type (an INT and a DECIMAL(2, 1): DECIMAL(11, 1)); both modes print columns as wide as their types
    (INT 11, STRING 30, at least ``<NULL>``'s 6), the op column in streaming mode only, as PyFlink 2.3 does."""
    from decimal import Decimal

    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode())
    capsys.readouterr()
    t_env.execute_sql("SELECT 1 AS a, UPPER('x') AS b, TRUE AS c").print()
    lines = capsys.readouterr().out.splitlines()
    op = [] if batch else ["op"]
    widths = ([] if batch else [2]) + [11, 30, 6]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    row = lambda *cells: "| " + " | ".join(str(c).rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"
    assert lines == [border, row(*op, "a", "b", "c"), border, row(*([] if batch else ["+I"]), 1, "X", "TRUE"), border, "1 row in set"]
    got = t_env.sql_query("SELECT n, s FROM (VALUES (1, 'a'), (2.5, CAST(NULL AS STRING))) AS t(n, s) WHERE n > 0").execute().collect()
    assert sorted((tuple(r) for r in got), key=repr) == [(Decimal("1.0"), "a"), (Decimal("2.5"), None)]


def test_collect_is_a_closeable_iterator_and_leaving_its_with_block_stops_an_endless_query():
    """PyFlink's idiom ``with table_result.collect() as results: for result in results: ...``: over an endless
    datagen table, the first rows come as the job runs, and leaving the block stops the job."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(
        "CREATE TABLE endless (id INT) WITH ('connector' = 'datagen', 'rows-per-second' = '20', 'fields.id.kind' = 'sequence', "
        "'fields.id.start' = '1', 'fields.id.end' = '1000000')"
    )
    result = t_env.execute_sql("SELECT id * 2 AS twice FROM endless")
    got = []
    with result.collect() as rows:
        for row in rows:
            got.append(row[0])
            if len(got) == 3:
                break
    handle = result.get_job_client()
    handle.wait(120)  # (stopped by the with block: it ends; an endless job would not)
    assert handle.done and len(set(got)) == 3 and all(v % 2 == 0 for v in got)
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    with batch.execute_sql("SELECT * FROM (VALUES (1), (2)) AS t(x)").collect() as rows:
        assert sorted(repr(r) for r in rows) == ['<Row(1)>', '<Row(2)>']  # (no field names, as PyFlink's)
    # (rows Spark's optimizer proves none, its observed row counts taken away with them: none, no failure)
    with batch.execute_sql("SELECT x FROM (VALUES (1), (2)) AS t(x) WHERE x > 5").collect() as rows:
        assert list(rows) == []


def test_a_batch_global_aggregation_over_no_row_gives_one_row():
    """In batch mode Flink's global aggregation gives one row over no row (COUNT 0, the others NULL, ``[]`` for
    JSON_ARRAYAGG), also with ``GROUP BY ()`` and over an updating input; a grouping set ``()`` among others gives
    none. Each answer here is PyFlink 2.3's (checked in a side venv), also each result's kind and an INSERT's schema."""
    from funke.pyflink.table import EnvironmentSettings, ResultKind, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("CREATE TABLE nothing (a INT, b STRING, n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '0')")
    answers = {
        "SELECT COUNT(*), SUM(n), MAX(b), COUNT(DISTINCT a), JSON_ARRAYAGG(b) FROM nothing WHERE a > 3": ["<Row(0, None, None, 0, '[]')>"],
        "SELECT COUNT(*), SUM(c) FROM (SELECT a, COUNT(*) AS c FROM nothing GROUP BY a) GROUP BY ()": ["<Row(0, None)>"],
        "SELECT a, COUNT(*) FROM nothing GROUP BY GROUPING SETS ((a), ())": [],
        # (rows there: the marker row funke adds is read by no aggregate, FILTER or not)
        "SELECT COUNT(*) FILTER (WHERE x > 1), SUM(x) FILTER (WHERE x < 2), COUNT(DISTINCT x) FROM (VALUES (1), (2), (1)) AS t(x)": ["<Row(1, 2, 2)>"],
    }
    for query, rows in answers.items():
        result = t_env.execute_sql(query)
        assert result.get_result_kind() == ResultKind.SUCCESS_WITH_CONTENT, query
        with result.collect() as got:
            assert [repr(r) for r in got] == rows, query
    # an INSERT's result: a BIGINT column per table written, named by its path (a statement set's too), as PyFlink 2.3's
    t_env.execute_sql("CREATE TABLE gone (a INT) WITH ('connector' = 'blackhole')")
    inserted = t_env.execute_sql("INSERT INTO gone SELECT a FROM nothing").wait()
    assert inserted.get_result_kind() == ResultKind.SUCCESS_WITH_CONTENT
    assert str(inserted.get_table_schema()) == "root\n |-- default_catalog.default_database.gone: BIGINT\n"
    both = t_env.create_statement_set().add_insert_sql("INSERT INTO gone SELECT a FROM nothing").execute().wait()
    assert both.get_table_schema().get_field_names() == ["default_catalog.default_database.gone"]


def test_collect_prints_collects_and_describes_a_multiset_as_pyflink(capsys):
    """COLLECT's MULTISET as PyFlink 2.3 gives it (each answer checked in a side venv): printed ``{a=2, b=1}``,
    collected as a dict of each value to its count (``{}`` over only NULLs), typed ``MULTISET<STRING> NOT NULL``;
    in streaming mode each change of a key's bag; DataTypes.MULTISET's forms."""
    from funke.pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("t", t_env.from_elements([(1, "b"), (1, "a"), (1, None), (1, "a"), (2, None)], ["k", "v"]))
    t_env.create_temporary_view("bags", t_env.sql_query("SELECT k, COLLECT(v) AS c, COLLECT(k) FILTER (WHERE v IS NULL) AS n FROM t GROUP BY k"))
    capsys.readouterr()
    t_env.execute_sql("SELECT * FROM bags WHERE k = 1").print()
    print(t_env.from_path("bags").get_schema())
    t_env.execute_sql("DESCRIBE bags").print()
    assert capsys.readouterr().out.splitlines() == [
        "+----------------------+--------------------------------+--------------------------------+",
        "|                    k |                              c |                              n |",
        "+----------------------+--------------------------------+--------------------------------+",
        "|                    1 |                     {a=2, b=1} |                          {1=1} |",
        "+----------------------+--------------------------------+--------------------------------+",
        "1 row in set",
        "root",
        " |-- k: BIGINT",
        " |-- c: MULTISET<STRING> NOT NULL",
        " |-- n: MULTISET<BIGINT> NOT NULL",
        "",
        "+------+------------------+-------+-----+--------+-----------+",
        "| name |             type |  null | key | extras | watermark |",
        "+------+------------------+-------+-----+--------+-----------+",
        "|    k |           BIGINT |  TRUE |     |        |           |",
        "|    c | MULTISET<STRING> | FALSE |     |        |           |",
        "|    n | MULTISET<BIGINT> | FALSE |     |        |           |",
        "+------+------------------+-------+-----+--------+-----------+",
        "3 rows in set",
    ]
    for query, rows in {
        "SELECT c, n FROM bags WHERE k = 2": ["<Row({}, {2: 1})>"],
        "SELECT c, n FROM bags WHERE k = 1": ["<Row({'a': 2, 'b': 1}, {1: 1})>"],
        "SELECT k, COLLECT(DISTINCT v) AS d FROM t WHERE k = 1 GROUP BY k": ["<Row(1, {'a': 1, 'b': 1})>"],
    }.items():
        with t_env.execute_sql(query).collect() as got:
            assert [repr(r) for r in got] == rows, query
    # (Flink's batch planner fails on COLLECT(x) beside a DISTINCT aggregate: refused while planning)
    with pytest.raises(UnsupportedError, match=r"COLLECT\(x\) beside a DISTINCT aggregate in batch mode.*Flink's batch planner fails on it"):
        t_env.execute_sql("SELECT k, COLLECT(v) AS c, COUNT(DISTINCT v) AS d FROM t GROUP BY k")
    assert repr(DataTypes.MULTISET(DataTypes.STRING())) == "MultisetType(VarCharType(2147483647, true), true)"
    assert repr(DataTypes.MULTISET(DataTypes.INT(False), False)) == "MultisetType(IntType(false), false)"
    assert DataTypes.MULTISET(DataTypes.STRING()).spark_type == "map<string,int>"
    # (a value surely not NULL, a subquery's COUNT or a literal: MULTISET<... NOT NULL>, as Flink types it)
    counts = t_env.sql_query("SELECT COLLECT(n) AS c, COLLECT(1) AS o FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k)")
    assert str(counts.get_schema()) == "root\n |-- c: MULTISET<BIGINT NOT NULL> NOT NULL\n |-- o: MULTISET<INT NOT NULL> NOT NULL\n"

    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    stream.create_temporary_view("t", stream.from_elements([(1, "a"), (1, "a"), (1, None), (1, "b")], ["k", "v"]))
    capsys.readouterr()
    stream.execute_sql("SELECT k, COLLECT(v) AS c FROM t GROUP BY k").print()
    assert capsys.readouterr().out.splitlines() == [
        "+----+----------------------+--------------------------------+",
        "| op |                    k |                              c |",
        "+----+----------------------+--------------------------------+",
        "| +I |                    1 |                          {a=1} |",
        "| -U |                    1 |                          {a=1} |",
        "| +U |                    1 |                          {a=2} |",
        "| -U |                    1 |                          {a=2} |",
        "| +U |                    1 |                     {a=2, b=1} |",
        "+----+----------------------+--------------------------------+",
        "5 rows in set",
    ]


def test_a_values_statement_and_an_insert_s_result_print_as_pyflink_s(capsys):
    """``execute_sql("VALUES ...")`` is a query (its columns EXPR$0, ...), drawn as PyFlink 2.3 drew it; an INSERT's
    and a statement set's results print ``-1`` per table written (a table written twice one column, ``t_1``)."""
    from funke.pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    capsys.readouterr()
    t_env.execute_sql("VALUES (1, 'a'), (3, 'bb')").print()
    border = "+-------------+--------------------------------+"
    assert capsys.readouterr().out.splitlines() == [
        border, f"| {'EXPR$0':>11} | {'EXPR$1':>30} |", border, f"| {1:>11} | {'a':>30} |", f"| {3:>11} | {'bb':>30} |", border, "2 rows in set",
    ]  # fmt: skip
    t_env.execute_sql("CREATE TABLE k (name STRING) WITH ('connector'='blackhole')")
    t_env.execute_sql("CREATE TABLE k2 (name STRING) WITH ('connector'='blackhole')")
    both = t_env.execute_sql("EXECUTE STATEMENT SET BEGIN INSERT INTO k VALUES ('x'); INSERT INTO k2 VALUES ('y'); INSERT INTO k VALUES ('z'); END")
    both.wait()
    assert both.get_table_schema().get_field_names() == ["default_catalog.default_database.k_1", "default_catalog.default_database.k2"]
    both.print()
    assert capsys.readouterr().out == "-1, -1\n"


def test_from_changelog_stream_reads_rows_of_each_kind_and_normalizes_an_upsert_stream(capsys):
    """``from_changelog_stream``: a DataStream of Rows, each with its RowKind, as an updating table, printed and
    aggregated as PyFlink 2.3 gives them (checked in a side venv); with ``ChangelogMode.upsert()`` and a Schema's
    primary key a key's row now or gone, normalized as Flink's planner does (an equal row nothing, a delete of a key
    not held nothing, a delete of the whole row held); its schema shows the key. It was missing (AttributeError)."""
    from funke.pyflink.common import Row, RowKind, Types
    from funke.pyflink.datastream import StreamExecutionEnvironment
    from funke.pyflink.table import DataTypes, Schema, StreamTableEnvironment
    from funke.pyflink.table.changelog_mode import ChangelogMode

    env = StreamExecutionEnvironment.get_execution_environment()
    t_env = StreamTableEnvironment.create(env)
    named = Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.INT()])
    I, UB, UA, D = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE
    changes = [Row.of_kind(I, "Alice", 12), Row.of_kind(I, "Bob", 5), Row.of_kind(UB, "Alice", 12), Row.of_kind(UA, "Alice", 100), Row.of_kind(D, "Bob", 5)]
    t_env.create_temporary_view("t", t_env.from_changelog_stream(env.from_collection(changes, type_info=named)))
    upserts = [Row.of_kind(I, "Alice", 12), Row.of_kind(I, "Bob", 5), Row.of_kind(UA, "Alice", 100), Row.of_kind(UA, "Alice", 100),
               Row.of_kind(D, "Bob", None), Row.of_kind(D, "Carol", None)]  # fmt: skip
    schema = Schema.new_builder().primary_key("name").column("name", DataTypes.STRING().not_null()).column("score", DataTypes.INT()).build()
    keyed = t_env.from_changelog_stream(env.from_collection(upserts, type_info=named), schema, ChangelogMode.upsert())
    capsys.readouterr()
    t_env.execute_sql("SELECT SUM(score) AS s FROM t").print()
    assert [line.split("|")[1:3] for line in capsys.readouterr().out.splitlines()[3:-2]] == [
        [" +I ", "          12 "], [" -U ", "          12 "], [" +U ", "          17 "], [" -U ", "          17 "], [" +U ", "           5 "],
        [" -U ", "           5 "], [" +U ", "         105 "], [" -U ", "         105 "], [" +U ", "         100 "],
    ]  # fmt: skip
    keyed.execute().print()
    keyed.print_schema()
    out = capsys.readouterr().out.splitlines()
    rows = ["| +I |                          Alice |          12 |", "| +I |                            Bob |           5 |",
            "| -U |                          Alice |          12 |", "| +U |                          Alice |         100 |",
            "| -D |                            Bob |           5 |"]  # fmt: skip
    assert Counter(out[3:8]) == Counter(rows) and out[8:10] == [out[0], "5 rows in set"]
    assert out[10:] == ["(", "  `name` STRING NOT NULL,", "  `score` INT,", "  CONSTRAINT `PK_name` PRIMARY KEY (`name`) NOT ENFORCED", ")"]
    with pytest.raises(Exception, match=r"needs the key that identifies a row"):
        t_env.from_changelog_stream(env.from_collection(upserts, type_info=named), None, ChangelogMode.upsert())
