"""Editing savepoint state without Spark: checking an edited table, working out the changes, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql import types as T

from funke.savepoints import Savepoint, SavepointError, StateColumn, state_columns, transform
from funke.savepoints.edit import _plan, _plan_all, check_table, diff

# The layout of a window count's state, as Spark's state reader gives it.
SCHEMA = T.StructType(
    [
        T.StructField("key", T.StructType([
            T.StructField("window", T.StructType([T.StructField("start", T.TimestampType()), T.StructField("end", T.TimestampType())])),
            T.StructField("key", T.StringType()),
        ])),
        T.StructField("value", T.StructType([T.StructField("count", T.LongType())])),
        T.StructField("partition_id", T.IntegerType()),
    ]
)  # fmt: skip
COLUMNS = state_columns(SCHEMA)


def table(*rows: tuple[int, str, int], partition: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "partition_id": [partition] * len(rows),
            "window_start": [pd.Timestamp(s, unit="s") for s, _, _ in rows],
            "window_end": [pd.Timestamp(s + 10, unit="s") for s, _, _ in rows],
            "key": [k for _, k, _ in rows],
            "count": [c for _, _, c in rows],
        }
    ).astype({"partition_id": "int32"})


def test_state_columns_name_the_fields_as_the_exported_table_does():
    assert [(c.name, c.part, c.path) for c in COLUMNS] == [
        ("window_start", "key", ("window", "start")),
        ("window_end", "key", ("window", "end")),
        ("key", "key", ("key",)),
        ("count", "value", ("count",)),
    ]
    clash = T.StructType([T.StructField("key", T.StructType([T.StructField("n", T.LongType())])), T.StructField("value", T.StructType([T.StructField("n", T.LongType())]))])
    assert [c.name for c in state_columns(clash)] == ["n", "value_n"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda df: df.assign(note="x"), "table 'w' has a column 'note' that its operator's state does not have (it has: window_start, window_end, key, count)"),
        (lambda df: df.drop(columns="key"), "table 'w' lacks the column 'key': every key column of the state must be there"),
        (lambda df: df.assign(count=df["count"] * 0.5), "table 'w': column 'count' holds float64 values, but the state keeps bigint there: convert it"),
        (lambda df: df.assign(count=[None, 1]), "table 'w': column 'count' is null in row(s) [0]; a state value cannot be null: drop the row"),
        (lambda df: df.assign(key=["k1", None]), "table 'w': column 'key' is null in row(s) [1]; a state key cannot be null"),
        (lambda df: df.assign(key=["k1", 7]), "table 'w': column 'key' holds int values (7), but the state keeps string there"),
        (lambda df: df.assign(window_start="soon"), "table 'w': column 'window_start' holds object values, but the state keeps timestamp there"),
        (lambda df: df.assign(key="k1"), "table 'w' has 2 rows for one key (window_start=Timestamp('1970-01-01 00:00:00'), window_end="),
    ],
)
def test_an_edit_that_does_not_fit_the_layout_is_refused_with_table_and_column(edit, message):
    with pytest.raises(SavepointError) as e:
        check_table("w", edit(table((0, "k1", 5), (0, "k2", 6))), COLUMNS)
    assert message in str(e.value)


def test_an_int_column_is_checked_against_its_range():
    small = [StateColumn("k", "key", ("k",), T.StringType()), StateColumn("n", "value", ("n",), T.IntegerType())]
    with pytest.raises(SavepointError, match=r"column 'n' has values outside int's range \[-2147483648, 2147483647\]"):
        check_table("w", pd.DataFrame({"k": ["a"], "n": [2**31]}), small)
    check_table("w", pd.DataFrame({"k": ["a"], "n": [2**31 - 1]}), small)
    with pytest.raises(SavepointError, match=r"table 'w' is the state of an aggregate without keys"):
        check_table("w", pd.DataFrame({"n": [1]}), small[1:])


def test_the_diff_finds_deleted_changed_and_new_keys_whatever_the_time_zone_of_the_timestamps():
    before = table((0, "k1", 5), (0, "k2", 6), (10, "k1", 1), partition=1)
    after = table((0, "k1", 5), (10, "k1", 0), (20, "k3", 9)).drop(columns="partition_id")
    after["window_start"] = after["window_start"].dt.tz_localize("UTC")  # as a user may build them
    check_table("w", after, COLUMNS)
    upserts, deletes, counts = diff(before, after, COLUMNS)
    assert counts == {"updated": 1, "inserted": 1, "deleted": 1}
    assert upserts[["key", "count"]].values.tolist() == [["k1", 0], ["k3", 9]]
    assert upserts["partition_id"].tolist() == [1, pd.NA]  # a known key stays where it is; a new one gets placed
    assert deletes[["key", "partition_id"]].values.tolist() == [["k2", 1]]
    assert diff(before, before, COLUMNS)[2] == {"updated": 0, "inserted": 0, "deleted": 0}


def fake_savepoint(root: Path, operators: list[dict]) -> Savepoint:
    manifest = {"format": 1, "job": "j", "queries": {"q": {"batch": 3, "operators": operators, "layout": []}}}
    root.mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps(manifest))
    return Savepoint(root, manifest)


def test_general_path_state_and_bad_targets_are_refused(tmp_path):
    general = {"operator_id": 0, "spark_operator": "transformWithStateInPandasExec", "state_variables": ["operator"], "table": "running-total", "rows": 4}
    sp = fake_savepoint(tmp_path / "sp", [general])
    with pytest.raises(
        SavepointError,
        match=r"cannot edit table 'running-total': its operator runs as Spark's transformWithStateInPandasExec \(the general path\), "
        r"and the savepoint was taken before funke wrote that state as tables \(funke-general-v1\): take a new savepoint",
    ):
        _plan_all(None, sp, {"running-total": lambda df: df})
    other = fake_savepoint(tmp_path / "sp-other", [{**general, "spark_operator": "streamingDeduplicate"}])
    with pytest.raises(SavepointError, match=r"runs as Spark's streamingDeduplicate; transform\(\) edits native-path window aggregations .* and funke's general-path operators only"):
        _plan_all(None, other, {"running-total": lambda df: df})
    mixed = fake_savepoint(tmp_path / "sp2", [{**general, "spark_operator": "stateStoreSave", "table": "w"}, {**general, "operator_id": 1}])
    with pytest.raises(SavepointError, match=r"its query 'q' also holds 'running-total', whose operator runs as"):
        _plan(None, mixed, "w", lambda df: df)
    (tmp_path / "taken" / "x").mkdir(parents=True)
    with pytest.raises(SavepointError, match=r"taken is not empty: choose a new directory"):
        transform(sp.path, tmp_path / "taken", {"running-total": lambda df: df})
    with pytest.raises(SavepointError, match=r"transform\(\) got no edits"):
        transform(sp.path, tmp_path / "new", {})
