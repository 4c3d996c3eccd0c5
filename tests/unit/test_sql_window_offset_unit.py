"""The window TVFs' offset argument (``TUMBLE(TABLE t, DESCRIPTOR(ts), size, offset)``, also HOP and CUMULATE),
while planning: the assigner each makes, with Flink's examples of which window a row lands in."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import funke as fk
from funke.plan import nodes
from funke.table import StreamTableEnvironment
from funke.windows import (
    CumulativeEventTimeWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="sql-offset-unit")
    t_env = StreamTableEnvironment.create(env)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    t_env.create_temporary_view("ev", env.from_collection([], "k string, ts timestamp", watermarks=wm))
    return t_env


def assigner(t_env, tvf: str):
    t = t_env.sql_query(f"SELECT COUNT(*) AS n, window_start FROM TABLE({tvf}) GROUP BY window_start, window_end")
    node = t._stream.node
    while not isinstance(node, nodes.WindowAggregate):
        node = node.inputs[0]
    return node.assigner


@pytest.mark.parametrize(
    ("offset", "start", "end"),  # (Flink's documentation: a row at 00:00:04, 10-minute windows)
    [("-16", "2021-06-29 23:54", "2021-06-30 00:04"), ("-6", "2021-06-29 23:54", "2021-06-30 00:04"),
     ("-4", "2021-06-29 23:56", "2021-06-30 00:06"), ("0", "2021-06-30 00:00", "2021-06-30 00:10"),
     ("4", "2021-06-29 23:54", "2021-06-30 00:04"), ("16", "2021-06-29 23:56", "2021-06-30 00:06")],
)  # fmt: skip
def test_a_tumble_offset_of_any_length_shifts_the_windows_as_flinks(t_env, offset, start, end):
    a = assigner(t_env, f"TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' MINUTE, INTERVAL '{offset}' MINUTE)")
    ms = lambda text: int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)
    (w,) = a.assign_windows(ms("2021-06-30 00:00:04"))
    assert (w.start, w.end) == (ms(start), ms(end))


def test_hop_and_cumulate_take_an_offset_and_session_does_not(t_env):
    assert assigner(t_env, "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND, INTERVAL '7' SECOND)") == (
        SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5), fk.seconds(2))  # (7 s on a 5 s slide: 2 s)
    )
    assert assigner(t_env, "CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND, INTERVAL '3' SECOND)") == (
        CumulativeEventTimeWindows.of(fk.seconds(10), fk.seconds(5), fk.seconds(3))
    )
    assert assigner(t_env, "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)") == TumblingEventTimeWindows.of(fk.seconds(10))
    t_env.create_temporary_view("pv", t_env.sql_query("SELECT k, PROCTIME() AS pt FROM ev"))
    assert assigner(t_env, "TUMBLE(TABLE pv, DESCRIPTOR(pt), INTERVAL '10' SECOND, INTERVAL '1' SECOND)") == (
        TumblingProcessingTimeWindows.of(fk.seconds(10), fk.seconds(1))
    )
    with pytest.raises(fk.errors.UnsupportedError, match=r"SESSION with these arguments"):
        assigner(t_env, "SESSION(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' SECOND)")
    with pytest.raises(fk.errors.UnsupportedError, match=r"the window offset INTERVAL '1' WEEK"):
        assigner(t_env, "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '1' WEEK)")
