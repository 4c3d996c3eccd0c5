"""The Nexmark suite planned without Spark: funke's formulation of each query either plans into one job or is
refused while planning with the phrase ``REFUSED`` records (so the table cannot lie); the runner's layout
(``Suite``), its settings, what it refuses; the nexmark table's DDL (ROW types) and options; the CLI's
argument errors. Results are checked against the references in ``tests/spark/test_nexmark.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import funke as fk
from funke.bench.nexmark import BUILTIN_DIR, QUERIES, REFUSED, RUNS, Settings, Suite, chosen
from funke.errors import PlanError, UnsupportedError
from funke.table import StreamTableEnvironment

SETTINGS = Settings(events=1000, tps=100)


def planned(suite: Suite, query: str) -> fk.StreamEnvironment:
    env = fk.StreamEnvironment(app=f"nexmark-{query}")
    StreamTableEnvironment.create(env).execute_script(suite.script(query, SETTINGS))
    return env


def tables() -> StreamTableEnvironment:
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="nexmark-unit"))
    t_env.execute_script(Suite().tables(SETTINGS))
    return t_env


def test_every_query_of_the_suite_either_runs_or_is_refused_by_name():
    assert QUERIES == tuple(f"q{n}" for n in range(24))  # Nexmark's Flink suite: q0 to q23
    assert set(RUNS) | set(REFUSED) == set(QUERIES) and not set(RUNS) & set(REFUSED)
    assert Suite().queries == QUERIES


def test_funke_carries_its_own_formulation_not_nexmarks_files():
    files = sorted(p.name for p in BUILTIN_DIR.iterdir())
    assert files == sorted(["ddl_gen.sql", "ddl_views.sql", *(f"{q}.sql" for q in QUERIES)])
    for p in BUILTIN_DIR.iterdir():
        text = p.read_text()
        assert "Apache Software Foundation" not in text and "Licensed under" not in text, p.name
        assert text.startswith("-- "), p.name  # each file says what it is
    assert not (BUILTIN_DIR.parent / "nexmark_sql").exists()


@pytest.mark.parametrize("query", RUNS)
def test_a_query_funke_runs_plans_into_its_table_blackhole_or_q10_s_partitioned_files(query):
    env = planned(Suite(), query)
    assert [s.explicit_uid for s in env.sinks] == [f"insert-nexmark_{query}"]
    spec = env.sinks[0].spec
    assert spec.kind == ("files" if query == "q10" else "blackhole")
    if query == "q10":  # (every bid logged under dt=.../hm=..., each minute committed once the watermark is a minute past it)
        assert (spec.format, spec.partition_by, spec.commit.trigger, spec.commit.delay_ms) == ("csv", ("dt", "hm"), "partition-time", 60_000)


@pytest.mark.parametrize("query", sorted(REFUSED, key=lambda q: int(q[1:])))
def test_a_query_funke_cannot_run_yet_is_refused_while_planning_naming_the_construct(query):
    env = fk.StreamEnvironment(app=f"nexmark-{query}")
    t_env = StreamTableEnvironment.create(env)
    with pytest.raises(UnsupportedError) as refused:
        t_env.execute_script(Suite().script(query, SETTINGS))
    assert REFUSED[query].phrase in str(refused.value)
    assert not env.sinks


def test_the_settings_fill_the_runners_names_and_refuse_others():
    s = Settings(events=5, tps=7, person=2, auction=3, bid=4, workdir="/w", submit_time="t")
    filled = s.fill("${EVENTS_NUM} ${TPS} ${PERSON_PROPORTION} ${AUCTION_PROPORTION} ${BID_PROPORTION} ${NEXMARK_TABLE} "
                    "${NEXMARK_DIR} ${FLINK_HOME} ${SUBMIT_TIME} [${BOOTSTRAP_SERVERS}]")  # fmt: skip
    assert filled == "5 7 2 3 4 datagen /w /w t []"
    with pytest.raises(PlanError, match=r"q9.sql uses the setting \$\{STOP_AT\}"):
        s.fill("'stop-at' = '${STOP_AT}'", "q9.sql")
    started = s.started_now("/run")
    assert started.workdir == "/run" and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d", started.submit_time
    )  # (no ':' in a path)


def _nexmark_layout(root: Path) -> Path:
    """A directory laid out as a Nexmark checkout's queries: the runner's files, a licence-style header on each,
    files the runner does not read (ddl_kafka.sql with options funke refuses, ddl_gen_v2.sql), and two queries."""
    header = "-- A header comment, as every file of a checkout starts with one.\n\n"
    root.mkdir()
    for name in ("ddl_gen.sql", "ddl_views.sql", "q0.sql", "q19.sql"):
        (root / name).write_text(header + (BUILTIN_DIR / name).read_text())
    (root / "ddl_kafka.sql").write_text(header + "CREATE TABLE kafka (event_type INT) WITH ('connector' = 'kafka', "
                                        "'properties.group.id' = 'nexmark', 'properties.bootstrap.servers' = '${BOOTSTRAP_SERVERS}');")  # fmt: skip
    (root / "ddl_gen_v2.sql").write_text("'keep-alive' = '${KEEP_ALIVE}'")
    (root / "insert_kafka.sql").write_text("INSERT INTO kafka SELECT * FROM datagen;")
    return root


def test_a_directory_in_nexmarks_layout_is_read_as_the_runner_reads_it(tmp_path):
    suite = Suite(_nexmark_layout(tmp_path / "queries"))
    assert suite.queries == ("q0", "q19") and not suite.builtin
    assert chosen(suite, "all") == ("q0", "q19")  # (a checkout's queries: all of them, refused ones too)
    script = suite.script("q19", Settings(events=321, tps=45))
    assert "'events.num' = '321'" in script and "'first-event.rate' = '45'" in script and "${" not in script
    assert "kafka" not in script  # ddl_kafka.sql is for events read from Kafka; funke's runner generates them
    env = planned(suite, "q19")
    assert [s.explicit_uid for s in env.sinks] == ["insert-nexmark_q19"]
    with pytest.raises(PlanError, match="has no q5.sql; it has q0, q19"):
        suite.script("q5", SETTINGS)
    with pytest.raises(PlanError, match=f"no query q5 in {re.escape(str(suite.directory))}; it has q0 to q19"):
        chosen(suite, "q0,q5")


def test_a_directory_without_the_runners_files_is_refused_saying_what_it_needs(tmp_path):
    (tmp_path / "q0.sql").write_text("SELECT 1")
    with pytest.raises(PlanError, match="needs ddl_gen.sql, ddl_views.sql and qN.sql files"):
        Suite(tmp_path)


def test_the_views_read_the_row_fields_with_their_names_and_types():
    t_env = tables()
    bid = t_env.sql_query("SELECT * FROM bid")
    assert bid.columns == ("auction", "bidder", "price", "channel", "url", "dateTime", "extra")
    assert [(f.name, f.dtype) for f in bid.get_schema()][:3] == [("auction", "bigint"), ("bidder", "bigint"), ("price", "bigint")]
    assert {f.name: f.dtype for f in bid.get_schema()}["dateTime"] == "timestamp"  # (COALESCE of the ROWs' fields: typed)
    joined = t_env.sql_query("SELECT * FROM bid AS b JOIN auction AS a ON b.auction = a.id")  # (a join needs its columns' types)
    assert joined.columns[5:7] == ("dateTime", "extra") and joined.columns[12] == "dateTime0" and joined.columns[16] == "extra0"


def test_the_nexmark_table_refuses_what_it_cannot_make():
    t_env = tables()
    with pytest.raises(UnsupportedError, match="next-event.rate"):
        t_env.execute_script(
            "CREATE TABLE n2 (event_type INT, bid ROW<price BIGINT>) WITH ('connector' = 'nexmark', 'first-event.rate' = '10', "
            "'next-event.rate' = '20')"
        )
        t_env.sql_query("SELECT * FROM n2")
    t_env.execute_script("CREATE TABLE n3 (event_type INT, bid ROW<price BIGINT, color VARCHAR>) WITH ('connector' = 'nexmark')")
    with pytest.raises(PlanError, match="no field 'color'"):
        t_env.sql_query("SELECT bid.price FROM n3")
    with pytest.raises(UnsupportedError, match="'bid.avg-size' is not supported"):
        t_env.execute_script("CREATE TABLE n4 (event_type INT) WITH ('connector' = 'nexmark', 'bid.avg-size' = '100b')")


def test_the_bench_commands_arguments_are_checked_before_any_work(tmp_path):
    from funke.cli.main import app

    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, ["bench", "nexmark", *args])
        return result.exit_code, " ".join(result.output.split())  # (rich wraps the message to the terminal)

    code, said = run("--queries", "q0,q1")
    assert code != 0 and "name the queries to run as the argument" in said
    code, said = run("--queries", str(tmp_path))
    assert code == 1 and "is not a directory of Nexmark query files" in said
    code, said = run("q99")
    assert code == 1 and "no query q99 in funke's formulation of Nexmark" in said
    code, said = run("q6")
    assert code == 1 and "funke does not run q6 yet (it needs an OVER aggregation" in said
