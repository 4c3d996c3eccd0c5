"""AVG in Flink SQL gives Flink's type and digits on Spark: of a DECIMAL(p, s), the DECIMAL(38, max(6, s)) of the sum
over the count rounded half up (Spark's AVG is a DECIMAL(p + 4, s + 4), funke's operators averaged in 8-byte floats:
1.6666666666666665 where Flink prints 1.666667); of a FLOAT, a FLOAT. In a group aggregation (an updating result), a
window TVF aggregation and an OVER aggregation, streaming and bounded; the expected values are Flink's rule computed
here with ``decimal`` (PyFlink 2.3, run by hand over the same rows, printed the same)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from tests.spark.helpers import materialize

pytestmark = pytest.mark.spark

D = Decimal
# (k, m DECIMAL(10, 2), z DECIMAL(10, 0), q DECIMAL(12, 4), f FLOAT, second)
ROWS = [
    ("a", D("1.00"), D("1"), D("0.0001"), 0.1, 1),
    ("a", D("2.00"), D("2"), D("0.0002"), 0.2, 2),
    ("a", D("2.00"), D("2"), D("0.0002"), 0.7, 3),
    ("b", D("0.05"), D("7"), D("1.2345"), 1.1, 4),
    ("b", None, None, None, None, 5),
]


def flink_avg(values: list[Decimal | None], scale: int) -> Decimal | None:
    """Flink's AVG of a DECIMAL of scale ``scale``: DECIMAL(38, max(6, scale)), half up; NULL over no value."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    return (sum(present) / Decimal(len(present))).quantize(Decimal(1).scaleb(-max(6, scale)), rounding=ROUND_HALF_UP)


def float_avg(values: list[float | None]) -> float:
    """Flink's AVG of a FLOAT: the 4-byte values summed as 8-byte floats, divided, rounded to a FLOAT once."""
    present = [float(np.float32(v)) for v in values if v is not None]
    return float(np.float32(sum(present) / len(present)))


def expected() -> Counter:
    out = Counter()
    for key in ("a", "b"):
        rows = [r for r in ROWS if r[0] == key]
        out[(key, flink_avg([r[1] for r in rows], 2), flink_avg([r[2] for r in rows], 0), flink_avg([r[3] for r in rows], 4), float_avg([r[4] for r in rows]))] += 1
    return out


@pytest.mark.parametrize("bounded", [False, True])
def test_avg_of_a_decimal_and_of_a_float_is_flinks_in_group_window_and_over_aggregations(env, bounded):
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    rows = [{"k": k, "m": m, "z": z, "q": q, "f": f, "ts": dt.datetime(2024, 1, 1, 0, 0, s)} for k, m, z, q, f, s in ROWS]
    t_env = StreamTableEnvironment.create(env)
    schema = "k string, m decimal(10,2), z decimal(10,0), q decimal(12,4), f float, ts timestamp"
    t_env.create_temporary_view("o", env.from_collection(rows, schema, rows_per_batch=2, watermarks=wm))
    averages = "AVG(m) AS am, AVG(z) AS az, AVG(q) AS aq, AVG(f) AS af"
    group = t_env.sql_query(f"SELECT k, {averages} FROM o GROUP BY k")
    window = t_env.sql_query(
        f"SELECT k, {averages} FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end"
    )
    for table in (group, window):
        assert [table.get_schema().field(c, node="test").dtype for c in ("am", "az", "aq", "af")] == ["decimal(38,6)"] * 3 + ["float"]
    over = t_env.sql_query("SELECT k, ts, AVG(m) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS a FROM o")
    assert over.get_schema().field("a", node="test").dtype == "decimal(38,6)"
    group_rows = t_env.to_changelog_stream(group).collect()
    window_rows = t_env.to_data_stream(window).collect()
    over_rows = t_env.to_data_stream(over).collect()
    env.execute(bounded=bounded).wait(300)
    frames = Counter()
    for i, (k, _m, _z, _q, _f, second) in enumerate(ROWS):
        same = [r[1] for r in ROWS[: i + 1] if r[0] == k][-3:]
        frames[(k, dt.datetime(2024, 1, 1, 0, 0, second), flink_avg(same, 2))] += 1
    assert Counter((r["k"], r["ts"], r["a"]) for r in over_rows.rows) == frames
    columns = ("k", "am", "az", "aq", "af")
    assert materialize(group_rows.rows, columns, ("k",)) == expected()
    assert Counter(tuple(r[c] for c in columns) for r in window_rows.rows) == expected()
    assert {r["am"] for r in window_rows.rows} == {D("1.666667"), D("0.050000")}  # (as PyFlink prints them)


@pytest.mark.parametrize("bounded", [False, True])
def test_sum_of_a_decimal_is_a_decimal_38_and_holds_more_digits_than_its_argument(env, bounded):
    """Flink's SUM of a DECIMAL(p, s) is a DECIMAL(38, s): two DECIMAL(10, 2) values of 99999999.99 sum to
    199999999.98 (PyFlink 2.3 printed it, batch and streaming); funke typed it DECIMAL(10, 2), and its group
    aggregation then failed the job converting the sum to Arrow."""
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    big = D("99999999.99")
    rows = [{"k": "a", "m": big, "ts": dt.datetime(2024, 1, 1, 0, 0, 1)}, {"k": "a", "m": big, "ts": dt.datetime(2024, 1, 1, 0, 0, 2)}]
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("o", env.from_collection(rows, "k string, m decimal(10,2), ts timestamp", rows_per_batch=1, watermarks=wm))
    group = t_env.sql_query("SELECT k, SUM(m) AS s, SUM(DISTINCT m) AS d FROM o GROUP BY k")
    window = t_env.sql_query(
        "SELECT k, SUM(m) AS s, SUM(DISTINCT m) AS d FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
        "GROUP BY k, window_start, window_end"
    )
    for table in (group, window):
        assert [table.get_schema().field(c, node="test").dtype for c in ("s", "d")] == ["decimal(38,2)"] * 2
    group_rows = t_env.to_changelog_stream(group).collect()
    window_rows = t_env.to_data_stream(window).collect()
    env.execute(bounded=bounded).wait(300)
    assert materialize(group_rows.rows, ("k", "s", "d"), ("k",)) == Counter({("a", 2 * big, big): 1})
    assert [(r["k"], r["s"], r["d"]) for r in window_rows.rows] == [("a", 2 * big, big)]
