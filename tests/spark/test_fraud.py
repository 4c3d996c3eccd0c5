"""examples/fraud.py: transactions against broadcast rules changed while the job runs; the alerts in
PostgreSQL are exactly the ones plain Python derives, streaming and bounded."""

from __future__ import annotations

import uuid

import pytest

from examples import fraud
from tests.servers import ensure_postgres

pytestmark = pytest.mark.spark
EVENTS = 400


def alerts(dsn: str, table: str) -> list[tuple[int, str, str]]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(f"SELECT tx, card, rule_id FROM {table}").fetchall()
        conn.execute(f"DROP TABLE {table}")
    return sorted(rows)


def test_fraud_alerts_in_postgres_are_exactly_the_rules_each_transaction_met(spark):
    dsn = ensure_postgres()
    streaming, bounded = (f"fraud_{uuid.uuid4().hex[:8]}_{kind}" for kind in ("s", "b"))
    expected = fraud.expected(EVENTS)
    assert {r for _, _, r in expected} == {"big", "geo"}  # both rules fired; geo only while it was on
    assert expected != fraud.expected(EVENTS, bounded=True)

    job = fraud.job(EVENTS, dsn=dsn, table=streaming).execute().wait(600)
    assert job.done, job.metrics()
    assert alerts(dsn, streaming) == expected

    fraud.job(EVENTS, dsn=dsn, table=bounded).execute(bounded=True).wait(600)
    assert alerts(dsn, bounded) == fraud.expected(EVENTS, bounded=True)
