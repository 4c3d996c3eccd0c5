"""A user's function that raises fails the job with a headline naming the function, its operator's uid
and the exception, the function's frames right after it: on the row map path and the general path,
streaming and bounded."""

from __future__ import annotations

import pytest

import funke as fk
from funke.functions import KeyedProcessFunction

pytestmark = pytest.mark.spark
ROWS = [{"k": "a", "v": i} for i in range(4)]


def check_row(row):
    if row["v"] == 2:
        raise ValueError(f"row {row['v']} is bad")
    return row


class Alarm(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield {"k": value["k"], "v": self.checked(value["v"])}

    def checked(self, v):
        if v == 3:
            raise KeyError(f"no limit for {v}")
        return v


def failure(env, bounded):
    with pytest.raises(fk.JobFailedError) as e:
        env.execute(bounded=bounded, fresh=True).wait(300)
    return str(e.value).splitlines()


@pytest.mark.parametrize("bounded", [False, True])
def test_a_row_function_that_raises_is_named_with_its_uid_and_frames(spark, tmp_path, bounded):
    env = fk.StreamEnvironment(app="user-map", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    mapped = env.from_collection(ROWS, "k string, v bigint", rows_per_batch=2).map(check_row, output_schema="k string, v bigint")
    mapped.collect()
    lines = failure(env, bounded)
    # (8c1efe1: "job 'user-map' failed in sink: An exception was raised by the Python Proxy...", the ValueError far below)
    assert lines[0] == f"job 'user-map' failed: check_row in map(check_row) (uid {mapped.node.uid}) raised ValueError: row 2 is bad"
    assert lines[1] == "the function's frames (most recent call last):"
    assert lines[2].startswith(f'  File "{__file__}", line ') and lines[2].endswith(", in check_row")
    assert lines[3] == "    raise ValueError(f\"row {row['v']} is bad\")"


@pytest.mark.parametrize("bounded", [False, True])
def test_a_keyed_process_function_that_raises_is_named_with_its_uid_and_frames(spark, tmp_path, bounded):
    env = fk.StreamEnvironment(app="user-process", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    rows = env.from_collection(ROWS, "k string, v bigint", rows_per_batch=2)
    alarms = rows.key_by("k").process(Alarm(), output_schema="k string, v bigint")
    alarms.collect()
    lines = failure(env, bounded)
    assert lines[0] == f"job 'user-process' failed: Alarm.process_element in operator {alarms.node.uid} raised KeyError: 'no limit for 3'"
    assert lines[1] == "the function's frames (most recent call last):"
    assert [line.rsplit(", in ", 1)[1] for line in lines[2:6:2]] == ["process_element", "checked"]
    assert all(line.startswith(f'  File "{__file__}", line ') for line in lines[2:6:2])
