"""Card fraud with CEP: a small transaction, then straight away a large one on the same card, within a minute.

Flink's classic fraud rule as a pattern (``funke.cep``): per card, a transaction under
``SMALL`` whose next transaction is over ``LARGE``, at most ``WITHIN`` after it (a thief
tests a stolen card with a tiny payment, then spends). The pattern runs in event time, so a
small transaction that arrives after the large one it precedes is still caught::

    python -m examples.fraud_cep                      # prints the alerts (as `funke run examples.fraud_cep:job`)
    funke run examples.fraud_cep:job --output /tmp/fraud-cep [--bounded]

The transactions are :data:`TRANSACTIONS`, a few per micro-batch (``rows_per_batch``), out
of order by less than ``OUT_OF_ORDERNESS``; the comments say which ones alert and why. The
streaming and bounded runs give the same alerts (tests/spark/test_cep_examples.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import funke as fk
from funke.cep import CEP, Pattern

SMALL, LARGE = 1.0, 500.0
WITHIN = fk.minutes(1)
OUT_OF_ORDERNESS = fk.seconds(5)
#: 2024-01-01T00:00:00Z
START = dt.datetime(2024, 1, 1)

TX_SCHEMA = "tx bigint, card string, amount double, ts timestamp"
ALERT_SCHEMA = "card string, small_tx bigint, large_tx bigint, small double, large double, seconds double"

#: (card, amount, seconds after START), in arrival order; ``tx`` is the position.
TRANSACTIONS: list[tuple[str, float, int]] = [
    ("c1", 0.50, 0),  # 0
    ("c2", 0.99, 10),  # 1
    ("c2", 45.00, 15),  # 2: c2's next after the small one is not large: no alert for 1, 4
    ("c1", 900.00, 20),  # 3: alert (0, 3), 20 s
    ("c2", 700.00, 30),  # 4
    ("c3", 0.10, 40),  # 5
    ("c4", 800.00, 52),  # 6
    ("c8", 10.00, 53),  # 7
    ("c4", 0.25, 50),  # 8: arrives after 6, happened before it: alert (8, 6), 2 s
    ("c3", 2000.00, 101),  # 9: 61 s after 5: no alert
    ("c5", 0.40, 110),  # 10
    ("c6", 0.40, 112),  # 11
    ("c1", 0.50, 120),  # 12
    ("c1", 0.30, 125),  # 13: 12's next is not large; 13 starts again
    ("c1", 600.00, 130),  # 14: alert (13, 14), 5 s
    ("c7", 1.00, 140),  # 15: not under SMALL
    ("c7", 999.00, 141),  # 16
    ("c5", 600.00, 170),  # 17: exactly 60 s after 10: out of the window (Flink's within is exclusive)
    ("c6", 650.00, 171),  # 18: 59 s after 11: alert (11, 18)
]


def transactions() -> list[dict[str, Any]]:
    return [
        {"tx": i, "card": card, "amount": amount, "ts": START + dt.timedelta(seconds=s)}
        for i, (card, amount, s) in enumerate(TRANSACTIONS)
    ]


def is_small(tx: dict[str, Any]) -> bool:
    return tx["amount"] < SMALL


def is_large(tx: dict[str, Any]) -> bool:
    return tx["amount"] > LARGE


def small_then_large() -> Pattern:
    """A small transaction whose very next one (``next``: strict contiguity) is large, within ``WITHIN``."""
    return Pattern.begin("small").where(is_small).next("large").where(is_large).within(WITHIN)


def alert(match: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    small, large = match["small"][0], match["large"][0]
    return {
        "card": small["card"],
        "small_tx": small["tx"],
        "large_tx": large["tx"],
        "small": small["amount"],
        "large": large["amount"],
        "seconds": (large["ts"] - small["ts"]).total_seconds(),
    }


def build(env: fk.StreamEnvironment, *, rows_per_batch: int = 4) -> fk.DataStream:
    """The alerts: :data:`TRANSACTIONS` keyed by card, through :func:`small_then_large`."""
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(OUT_OF_ORDERNESS).with_timestamp_assigner("ts")
    txs = env.from_collection(transactions(), TX_SCHEMA, rows_per_batch=rows_per_batch, watermarks=wm)
    return CEP.pattern(txs.key_by("card"), small_then_large()).select(alert, output_schema=ALERT_SCHEMA, uid="small-then-large")


def job(events: int | None = None, output: str | None = None, rate: float | None = None) -> fk.StreamEnvironment:
    """``funke run examples.fraud_cep:job [--output DIR] [--bounded]``: the alerts as Parquet in ``DIR``, else printed."""
    if events is not None or rate is not None:
        raise fk.PlanError("examples.fraud_cep:job runs its fixed TRANSACTIONS: it takes no --events or --rate")
    env = fk.StreamEnvironment(app="fraud-cep")
    build(env).sink_to(fk.sinks.files(output, overwrite=True) if output else fk.sinks.print(), uid="alerts")
    return env


if __name__ == "__main__":
    job().execute().wait()
