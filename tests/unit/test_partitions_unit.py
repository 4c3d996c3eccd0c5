"""Partitioned file sinks without Spark: Flink's partition commit (success-file policy) over a directory
tree laid out as Spark and Flink write it, and PARTITIONED BY in Flink SQL's CREATE TABLE: the sink it
makes, the NULL partition's directory, and what is refused, naming it."""

from __future__ import annotations

import os

import pytest

import funke as fk
from funke.connectors.partitions import PartitionCommit, commit, partitions
from funke.connectors.sinks import FileSink
from funke.errors import PlanError, UnsupportedError
from funke.table import StreamTableEnvironment

HOUR = 3_600_000
T10 = 1704103200000  # 2024-01-01 10:00 UTC


def tree(root, parts: dict[str, int]) -> None:
    """Partition directories (``dt=.../hm=...``, a ``:`` escaped as Spark and Flink write it), each with a
    data file written at ``mtime`` (s) and Spark's hidden files."""
    for rel, mtime in parts.items():
        d = root / rel
        d.mkdir(parents=True)
        (d / "part-00000.csv").write_text("1,2\n")
        (d / ".part-00000.csv.crc").write_text("")
        os.utime(d / "part-00000.csv", (mtime, mtime))
    (root / "_spark_metadata").mkdir()


def test_partition_time_reads_the_values_by_the_pattern_or_the_first_value():
    c = PartitionCommit("partition-time", pattern="$dt $hm:00")
    assert c.partition_time({"dt": "2024-01-01", "hm": "10:00"}) == T10
    assert PartitionCommit("partition-time").partition_time({"day": "2024-01-01", "x": "a"}) == T10 - 10 * HOUR
    assert PartitionCommit("partition-time", pattern="$d$h", formatter="yyyyMMddHH").partition_time({"d": "20240101", "h": "10"}) == T10
    with pytest.raises(ValueError, match="does not read as yyyy-MM-dd HH:mm:ss"):
        c.partition_time({"dt": "2024-01-01", "hm": "later"})
    with pytest.raises(PlanError, match="formatter 'dd/MM/yyyy' is not one funke reads"):
        PartitionCommit(formatter="dd/MM/yyyy")
    with pytest.raises(PlanError, match="trigger must be one of process-time, partition-time"):
        PartitionCommit("checkpoint")


def test_partition_time_commits_each_partition_once_the_watermark_passes_its_time_plus_the_delay(tmp_path):
    tree(tmp_path, {"dt=2024-01-01/hm=10%3A00": 0, "dt=2024-01-01/hm=10%3A01": 0, "dt=2024-01-01/hm=10%3A02": 0})
    (tmp_path / "dt=2024-01-01" / "hm=10%3A03").mkdir()  # (no data file yet: nothing to commit)
    policy = PartitionCommit("partition-time", delay_ms=60_000, pattern="$dt $hm:00")
    assert [p[1]["hm"] for p in partitions(tmp_path, ("dt", "hm"))] == ["10:00", "10:01", "10:02", "10:03"]
    done = commit(tmp_path, ("dt", "hm"), policy, watermark_ms=T10 + 120_000, now_ms=0)
    assert [d.name for d in done] == ["hm=10%3A00", "hm=10%3A01"]  # (10:02 + 1 min is after the watermark)
    assert (tmp_path / "dt=2024-01-01" / "hm=10%3A00" / "_SUCCESS").read_text() == ""
    assert commit(tmp_path, ("dt", "hm"), policy, watermark_ms=T10 + 120_000, now_ms=0) == []  # (once)
    assert commit(tmp_path, ("dt", "hm"), policy, watermark_ms=None, now_ms=0) == []  # (no watermark yet)
    final = commit(tmp_path, ("dt", "hm"), policy, watermark_ms=None, now_ms=0, final=True)
    assert [d.name for d in final] == ["hm=10%3A02"]
    assert not (tmp_path / "dt=2024-01-01" / "hm=10%3A03" / "_SUCCESS").exists()


def test_process_time_commits_once_the_clock_passes_the_first_file_s_time_plus_the_delay(tmp_path):
    tree(tmp_path, {"k=a": 100, "k=b": 200})
    policy = PartitionCommit("process-time", delay_ms=50_000, success_file="_DONE")
    assert [d.name for d in commit(tmp_path, ("k",), policy, watermark_ms=None, now_ms=160_000)] == ["k=a"]
    assert [d.name for d in commit(tmp_path, ("k",), policy, watermark_ms=None, now_ms=250_000)] == ["k=b"]
    assert (tmp_path / "k=b" / "_DONE").exists() and not (tmp_path / "k=b" / "_SUCCESS").exists()


def test_a_files_sink_checks_its_partition_columns_and_commits_only_where_funke_writes():
    env = fk.StreamEnvironment(app="partitions-unit")
    stream = env.from_collection([], "a int, dt string")
    with pytest.raises(PlanError, match="unknown column 'day'"):
        stream.sink_to(fk.sinks.files("/tmp/p", format="csv", partition_by=["day"]))
    with pytest.raises(PlanError, match="a partition commit needs partition_by columns"):
        fk.sinks.files("/tmp/p", commit=PartitionCommit())
    with pytest.raises(PlanError, match="on this machine's file system only"):
        fk.sinks.files("s3a://bucket/p", partition_by=["dt"], commit=PartitionCommit())
    assert fk.sinks.files("/tmp/p", format="csv", partition_by=["dt"]).describe() == "files(csv: /tmp/p, partitioned by dt)"


Q10 = """CREATE TABLE q10 (auction BIGINT, price BIGINT, dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH (
    'connector' = 'filesystem', 'path' = '/tmp/q10', 'format' = 'csv', {options})"""
DEFAULTS = "'sink.rolling-policy.rollover-interval' = '1min', 'sink.rolling-policy.check-interval' = '1min'"


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="partitions-unit"))
    t_env.create_temporary_view("bid", t_env.env.from_collection([], "auction bigint, price bigint, ts timestamp"))
    return t_env


def test_partitioned_by_writes_partition_directories_with_flink_s_commit_and_null_partition(t_env):
    t_env.execute_sql(Q10.format(options=DEFAULTS + ", 'sink.partition-commit.trigger' = 'partition-time', "
                                 "'sink.partition-commit.delay' = '1 min', 'sink.partition-commit.policy.kind' = 'success-file', "
                                 "'partition.time-extractor.timestamp-pattern' = '$dt $hm:00'"))  # fmt: skip
    sink = t_env._insert(fk.dialect.syntax.parse(
        "INSERT INTO q10 SELECT auction, price, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm') FROM bid"), "")  # fmt: skip
    assert isinstance(sink.spec, FileSink) and sink.spec.partition_by == ("dt", "hm")
    assert sink.spec.commit == PartitionCommit("partition-time", 60_000, "$dt $hm:00")
    exprs = [str(e) for e in sink.input.exprs]
    assert exprs[2] == "expr(\"COALESCE(CAST(CAST(`EXPR$2` AS string) AS STRING), '__DEFAULT_PARTITION__') AS `dt`\")", exprs
    t_env.execute_sql(Q10.replace("q10", "q10b").format(options="'partition.default-name' = 'none'"))
    plain = t_env._insert(fk.dialect.syntax.parse("INSERT INTO q10b SELECT auction, price, 'x', NULL FROM bid"), "")
    assert plain.spec.commit is None and "'none') AS `hm`" in str(plain.input.exprs[3])


@pytest.mark.parametrize(
    ("ddl", "error", "message"),
    [
        (Q10.format(options="'sink.partition-commit.policy.kind' = 'metastore'"), UnsupportedError, "policy 'metastore' is not supported"),
        (Q10.format(options="'sink.partition-commit.delay' = '1 min'"), PlanError, "without 'sink.partition-commit.policy.kind' commits nothing"),
        (Q10.format(options="'sink.rolling-policy.file-size' = '1MB'"), UnsupportedError, "option 'sink.rolling-policy.file-size' is not supported"),
        (Q10.format(options="'sink.partition-commit.policy.kind' = 'success-file', 'sink.partition-commit.watermark-time-zone' = 'Asia/Shanghai'"),
         UnsupportedError, "reads partition times in 'UTC'"),
        ("CREATE TABLE t (a INT, dt STRING) PARTITIONED BY (day) WITH ('connector' = 'filesystem', 'path' = '/tmp/t', 'format' = 'csv')",
         PlanError, "PARTITIONED BY names no physical column 'day' of table t"),
        ("CREATE TABLE t (a INT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'print')", UnsupportedError,
         "the print connector writes no partitions"),
        ("CREATE TABLE t (dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '/tmp/t', 'format' = 'csv')",
         PlanError, "names a column twice, or every column"),
    ],
)  # fmt: skip
def test_partition_options_funke_would_not_honour_are_refused_naming_them(t_env, ddl, error, message):
    with pytest.raises(error, match=message):
        t_env.execute_sql(ddl)
        t_env._insert(fk.dialect.syntax.parse("INSERT INTO q10 SELECT auction, price, 'a', 'b' FROM bid"), "")


def test_reading_a_partitioned_table_is_refused_naming_it(t_env):
    t_env.execute_sql(Q10.format(options=DEFAULTS))
    with pytest.raises(UnsupportedError, match="reading the partitioned filesystem table q10 is not supported by funke yet"):
        t_env.sql_query("SELECT * FROM q10")


def test_a_query_s_progress_commits_the_partitions_its_watermark_passed(tmp_path):
    """The job's bookkeeping (``QueryState.update``, fed Spark's progress reports) commits a partitioned sink's
    partitions as the reported watermark passes them, and every partition with the batch that ends the query."""
    from types import SimpleNamespace

    from pyspark.sql.streaming.listener import StreamingQueryProgress

    from funke.runtime.query_state import QueryState
    from tests.unit.recorded import QUERY

    tree(tmp_path, {"dt=2024-01-01/hm=00%3A00": 0, "dt=2024-01-01/hm=00%3A01": 0})
    spec = fk.sinks.files(str(tmp_path), format="csv", partition_by=["dt", "hm"], commit=PartitionCommit("partition-time", 0, "$dt $hm:00"))
    sink = SimpleNamespace(uid="campaign-counts", where=lambda: "sink", inputs=(), spec=spec)
    metrics = [SimpleNamespace(**{"counts": {}, **m}) for m in QUERY["metrics"]]
    st = QueryState(plan=SimpleNamespace(compiled=SimpleNamespace(clocks=[], beats=[], metrics=metrics, stateful=True), sinks=[sink], lazy=False))
    first = QUERY["progress"][3]  # (its watermark: 00:00:02.496)
    st.update(StreamingQueryProgress.fromJson(first))
    assert (tmp_path / "dt=2024-01-01" / "hm=00%3A00" / "_SUCCESS").exists()
    assert not (tmp_path / "dt=2024-01-01" / "hm=00%3A01" / "_SUCCESS").exists() and not st.finished
    for p in QUERY["progress"][4:-1]:  # (watermarks up to 00:00:09.766)
        st.update(StreamingQueryProgress.fromJson(p))
    assert not (tmp_path / "dt=2024-01-01" / "hm=00%3A01" / "_SUCCESS").exists() and not st.finished
    st.update(StreamingQueryProgress.fromJson(QUERY["progress"][-1]))  # (the end of the input)
    assert st.finished and (tmp_path / "dt=2024-01-01" / "hm=00%3A01" / "_SUCCESS").exists()


def test_a_partition_whose_time_does_not_read_fails_the_query_naming_it(tmp_path):
    from types import SimpleNamespace

    from pyspark.sql.streaming.listener import StreamingQueryProgress

    from funke.runtime.query_state import QueryState
    from tests.unit.recorded import QUERY

    tree(tmp_path, {"dt=2024-01-01/hm=later": 0})
    spec = fk.sinks.files(str(tmp_path), format="csv", partition_by=["dt", "hm"], commit=PartitionCommit("partition-time", 0, "$dt $hm:00"))
    sink = SimpleNamespace(uid="campaign-counts", where=lambda: "sink 'q10'", inputs=(), spec=spec)
    metrics = [SimpleNamespace(**{"counts": {}, **m}) for m in QUERY["metrics"]]
    st = QueryState(plan=SimpleNamespace(compiled=SimpleNamespace(clocks=[], beats=[], metrics=metrics, stateful=True), sinks=[sink], lazy=False))
    st.update(StreamingQueryProgress.fromJson(QUERY["progress"][3]))  # (a watermark: the partition's time is read)
    assert isinstance(st.failure, ValueError)
    assert "sink 'q10': a partition cannot be committed: partition time '2024-01-01 later:00'" in str(st.failure)
