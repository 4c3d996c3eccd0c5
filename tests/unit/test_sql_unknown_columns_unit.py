"""An unknown column in a windowed Flink SQL query is reported as unknown, where it is, with a close match."""

from __future__ import annotations

import pytest

import funke as fk
from funke.errors import SchemaError
from funke.table import StreamTableEnvironment

WINDOWS = {
    "TUMBLE": "TABLE(TUMBLE(TABLE views, DESCRIPTOR(ts), INTERVAL '10' SECOND))",
    "HOP": "TABLE(HOP(TABLE views, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))",
    "CUMULATE": "TABLE(CUMULATE(TABLE views, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))",
    "SESSION": "TABLE(SESSION(TABLE views PARTITION BY campaign_id, DESCRIPTOR(ts), INTERVAL '10' SECOND))",
}
GROUP = "GROUP BY window_start, window_end, campaign_id"
#: The typo in one place of each query: (clause named in the message, query with {src}).
PLACES = {
    "SELECT": "SELECT campaign_id, usr_id, window_start, COUNT(*) AS n FROM {src} " + GROUP,
    "SELECT ": "SELECT campaign_id, windw_start, COUNT(*) AS n FROM {src} " + GROUP,  # a window column misspelt
    "SELECT  ": "SELECT campaign_id, window_start, COUNT(usr_id) AS n FROM {src} " + GROUP,
    "WHERE": "SELECT campaign_id, window_start, COUNT(*) AS n FROM {src} WHERE usr_id <> 'bot' " + GROUP,
    "HAVING": "SELECT campaign_id, window_start, COUNT(*) AS n FROM {src} " + GROUP + " HAVING MAX(usr_id) > 'a'",
    "GROUP BY": "SELECT window_start, COUNT(*) AS n FROM {src} GROUP BY window_start, window_end, usr_id",
}


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="sql-columns")
    t_env = StreamTableEnvironment.create(env)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    t_env.create_temporary_view("views", env.from_collection([], "campaign_id string, user_id string, ts timestamp", watermarks=wm))
    return t_env


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("window", WINDOWS)
def test_an_unknown_column_in_a_window_query_is_named_with_a_close_match(t_env, window, place):
    query = PLACES[place].format(src=WINDOWS[window])
    if window == "SESSION" and place == "GROUP BY":  # (a session's keys are its PARTITION BY)
        query = query.replace("PARTITION BY campaign_id", "PARTITION BY user_id").replace("usr_id", "usr_id, user_id")
    with pytest.raises(SchemaError) as e:
        t_env.sql_query(query)
    typo = "windw_start" if "windw_start" in query else "usr_id"
    close = "window_start" if typo == "windw_start" else "user_id"
    text = str(e.value)
    assert f"{place.strip()} at line 1, column " in text, text
    assert f"unknown column '{typo}' (did you mean '{close}'?)" in text, text
    assert "not supported" not in text


def test_legacy_group_windows_too(t_env):
    with pytest.raises(SchemaError, match=r"SELECT at line 1, column 8: unknown column 'usr_id' \(did you mean 'user_id'\?\)"):
        t_env.sql_query("SELECT usr_id, COUNT(*) FROM views GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), user_id")
