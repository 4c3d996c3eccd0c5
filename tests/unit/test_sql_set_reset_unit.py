"""Flink SQL's SET and RESET of the options funke takes (TableConfig): SET 'execution.runtime-mode' (a Flink SQL
client script's first line, often) sets the environment's runtime mode before the first INSERT, and RESET gives an
option back its value from before any SET (no Spark here: tests/spark/test_sql_changelog.py runs a script that sets it)."""

from __future__ import annotations

import pytest

import funke as fk
from funke.cli.locate import sql_job
from funke.errors import PlanError, UnsupportedError
from funke.table import StreamTableEnvironment


def t_env(**kwargs) -> StreamTableEnvironment:
    return StreamTableEnvironment.create(fk.StreamEnvironment(app="set-reset", **kwargs))


def test_set_execution_runtime_mode_sets_the_environment_s_mode_before_the_first_insert():
    t = t_env()
    t.execute_sql("SET 'execution.runtime-mode' = 'BATCH'")  # (Flink's values in any case)
    assert (t.env.runtime_mode, t.get_config().get("execution.runtime-mode")) == ("batch", "BATCH")
    t.execute_sql("RESET 'execution.runtime-mode'")
    assert (t.env.runtime_mode, t.get_config().get("execution.runtime-mode")) == ("streaming", None)
    with pytest.raises(PlanError, match="the runtime mode is 'streaming' or 'batch'.*got 'automatic'"):
        t.execute_sql("SET 'execution.runtime-mode' = 'automatic'")
    t.execute_script(
        "CREATE TABLE v (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');\n"
        "CREATE TABLE out (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO out SELECT a FROM v;\n"
    )
    with pytest.raises(PlanError, match=r"the runtime mode 'batch' after 1 sink\(s\) of the job were planned for 'streaming': set it before"):
        t.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    t.execute_sql("SET 'execution.runtime-mode' = 'streaming'")  # (the mode it has: nothing changes)


def test_a_sql_script_s_set_runtime_mode_makes_its_job_a_batch_job(tmp_path):
    script = tmp_path / "counts.sql"
    script.write_text(
        "SET 'execution.runtime-mode' = 'batch';\n"
        "CREATE TABLE v (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');\n"
        f"CREATE TABLE out (n BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'csv');\n"
        "INSERT INTO out SELECT COUNT(*) FROM v;\n"  # (an updating result: a file sink takes it in batch mode only)
    )
    assert sql_job(str(script), {}).runtime_mode == "batch"
    script.write_text(script.read_text().replace("SET 'execution.runtime-mode' = 'batch';", ""))
    with pytest.raises(PlanError, match="updating"):
        sql_job(str(script), {})


def test_reset_gives_options_back_their_values_from_before_any_set():
    t = t_env(runtime_mode="batch")
    t.env.set_latency_mode("latency-first")
    for statement in ("SET 'table.exec.state.ttl' = '1 h'", "SET 'execution.latency-mode' = 'micro-batch'", "SET 'execution.runtime-mode' = 'streaming'"):
        t.execute_sql(statement)
    assert (t.get_config().state_ttl_ms, t.env.latency_mode, t.env.runtime_mode) == (3_600_000, "micro-batch", "streaming")
    t.execute_sql("RESET 'table.exec.state.ttl'")
    assert (t.get_config().get("table.exec.state.ttl"), t.env.latency_mode) == (None, "micro-batch")
    t.execute_script("RESET;")
    assert (t.get_config().get("execution.latency-mode"), t.env.latency_mode, t.env.runtime_mode) == (None, "latency-first", "batch")
    with pytest.raises(UnsupportedError, match="the option 'parallelism.default' is not supported by funke"):
        t.execute_sql("RESET 'parallelism.default'")
    with pytest.raises(PlanError, match="RESET takes nothing or one 'key'"):
        t.execute_sql("RESET table.exec.state.ttl")
