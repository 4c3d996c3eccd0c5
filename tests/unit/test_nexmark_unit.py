"""The Nexmark suite's query files, planned without Spark: the ones funke runs plan into jobs (the
unchanged file: its blackhole table and its INSERT), each refused one is refused while planning,
with a message naming what it cannot run; the nexmark table's DDL (ROW types) and options."""

from __future__ import annotations

import pytest

import funke as fk
from funke.bench.nexmark import QUERIES, REFUSED, RUNS, SQL_DIR, Settings, query_text, script, select_text
from funke.errors import PlanError, UnsupportedError
from funke.table import StreamTableEnvironment

SETTINGS = Settings(events=1000, tps=100)


def tables() -> StreamTableEnvironment:
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="nexmark-unit"))
    t_env.execute_script(SETTINGS.fill((SQL_DIR / "ddl_gen.sql").read_text() + (SQL_DIR / "ddl_views.sql").read_text()))
    return t_env


def test_every_query_of_the_suite_either_runs_or_is_refused_by_name():
    assert set(RUNS) | set(REFUSED) == set(QUERIES) and not set(RUNS) & set(REFUSED)
    assert QUERIES == tuple(f"q{n}" for n in range(24))  # (the files as Nexmark publishes them for Flink)


@pytest.mark.parametrize("query", RUNS)
def test_a_query_funke_runs_plans_from_its_unchanged_file(query):
    env = fk.StreamEnvironment(app=f"nexmark-{query}")
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_script(script(query, SETTINGS))
    assert [s.explicit_uid for s in env._sinks] == [f"insert-nexmark_{query}"]
    assert isinstance(env._sinks[0].spec, fk.sinks.blackhole().__class__)


@pytest.mark.parametrize("query", sorted(REFUSED, key=lambda q: int(q[1:])))
def test_a_query_funke_cannot_run_is_refused_while_planning_naming_the_construct(query):
    env = fk.StreamEnvironment(app=f"nexmark-{query}")
    t_env = StreamTableEnvironment.create(env)
    with pytest.raises(UnsupportedError) as refused:
        t_env.execute_script(script(query, SETTINGS))
    assert REFUSED[query][1] in str(refused.value)
    assert not env._sinks


def test_the_views_read_the_row_fields_with_their_names_and_types():
    t_env = tables()
    bid = t_env.sql_query("SELECT * FROM bid")
    assert bid.columns == ("auction", "bidder", "price", "channel", "url", "dateTime", "extra")
    assert [(f.name, f.dtype) for f in bid.get_schema()][:3] == [("auction", "bigint"), ("bidder", "bigint"), ("price", "bigint")]
    assert {f.name: f.dtype for f in bid.get_schema()}["dateTime"] == "timestamp"  # (the computed CASE of ROW fields)
    joined = t_env.sql_query(select_text("q20"))
    assert joined.columns[5:7] == ("dateTime", "extra") and joined.columns[11] == "dateTime0" and joined.columns[15] == "extra0"


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
    assert "blackhole" in query_text("q0")
