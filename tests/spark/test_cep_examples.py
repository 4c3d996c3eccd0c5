"""examples/fraud_cep.py and examples/monitoring.py on Spark: exactly the alerts derived by hand from their
events (the comments in each example walk through them), streaming (a few rows per micro-batch, some out of
order) and bounded. Both examples run in one job per mode, to keep the Spark runs few."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from examples import fraud_cep, monitoring
from funke.testing import assert_rows, run

pytestmark = pytest.mark.spark

#: small then large on one card within a minute: (card, small tx, large tx, small, large, seconds)
FRAUD = [
    ("c1", 0, 3, 0.50, 900.0, 20.0),  # 1 -> 2 (c2) is broken by a medium one; 5 -> 9 (c3) is 61 s apart
    ("c4", 8, 6, 0.25, 800.0, 2.0),  # the small one arrived after the large one
    ("c6", 11, 18, 0.40, 650.0, 59.0),  # c5's pair (10, 17) is exactly 60 s apart: out of the window
    ("c1", 13, 14, 0.30, 600.0, 5.0),  # 12's next is 13, not large
]
#: three unresolved warnings within 10 s: (rack, first warning s, last warning s, hottest)
MONITORING = [
    ("r1", 0, 6, 88.0),  # r2 resolved in time, r3's third warning came too late, r6's resolved is later in time than its warnings
    ("r4", 20, 23, 92.0),  # resolved only 15 s after the first warning
    ("r5", 40, 42, 82.0),  # four warnings, one alert: 41-43 overlaps 40-42 (skip_past_last_event)
]


def seconds(t: dt.datetime) -> int:
    return int((t - fraud_cep.START).total_seconds())


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_fraud_and_monitoring_examples_alert_exactly_as_derived_by_hand(spark, tmp_path, bounded):
    env = fk.StreamEnvironment(app="cep-examples", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"))
    fraud, racks = fraud_cep.build(env), monitoring.build(env)
    result = run(env, fraud, racks, bounded=bounded)
    keys = ("card", "small_tx", "large_tx", "small", "large", "seconds")
    assert_rows(result[fraud], [dict(zip(keys, row, strict=True)) for row in FRAUD])
    alerts = [(r["rack"], seconds(r["first_warning"]), seconds(r["last_warning"]), r["hottest"]) for r in result[racks]]
    assert sorted(alerts) == MONITORING
    assert result.metrics["late_rows_dropped"] == 0
