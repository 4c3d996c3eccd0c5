"""Card fraud: transactions keyed by card, checked against rules that change while the job runs.

The rules are a second stream, broadcast (Flink's broadcast state pattern): every instance
of the detector keeps all rules, and a rule applies to every transaction after it. Two kinds:

* ``threshold``: a transaction over ``amount``;
* ``two_countries``: a card used in two countries within ``minutes`` (keyed state: the
  last time the card was seen per country, cleaned by an event-time timer).

Alerts go to PostgreSQL exactly once (each micro-batch in one transaction with its marker)::

    funke services up postgres
    funke run examples.fraud:job --events 400

The rule stream here is scripted: one change per micro-batch (``big`` over 900, then
``geo`` within 10 minutes, then ``big`` lowered to 700, then ``geo`` switched off), and the
transactions arrive ``TX_PER_BATCH`` per micro-batch, so :func:`expected` can say exactly
which rules each transaction met: the rules of its own micro-batch and every earlier one
(funke applies a micro-batch's broadcast rows before its other rows). A bounded run reads
the whole rule stream first (Flink's batch mode does too), so every transaction meets the
final rules: :func:`expected` with ``bounded=True``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import funke as fk
from funke.functions import KeyedBroadcastProcessFunction
from funke.state import MapStateDescriptor

#: 2024-01-01T00:00:00Z
START_MS = 1_704_067_200_000
TX_EVERY_MS = 10_000
TX_PER_BATCH = 50
CARDS = 20
COUNTRIES = ("DE", "FR", "US")
OUT_OF_ORDERNESS = fk.seconds(5)
#: How long a card's last use per country is kept (longer than any rule's window plus the bound).
KEEP_MS = 60 * 60_000

RULE_SCHEMA = "rule_id string, kind string, amount double, minutes int, active boolean"
TX_SCHEMA = "tx bigint, card string, amount double, country string, ts timestamp"
ALERT_SCHEMA = "tx bigint, card string, rule_id string, amount double, country string, detail string"

#: One rule change per micro-batch, in order.
RULES: list[dict[str, Any]] = [
    {"rule_id": "big", "kind": "threshold", "amount": 900.0, "minutes": None, "active": True},
    {"rule_id": "geo", "kind": "two_countries", "amount": None, "minutes": 10, "active": True},
    {"rule_id": "big", "kind": "threshold", "amount": 700.0, "minutes": None, "active": True},
    {"rule_id": "geo", "kind": "two_countries", "amount": None, "minutes": 10, "active": False},
]

#: The broadcast state: rule id -> rule.
RULE_STATE = MapStateDescriptor("rules", str, dict)


def transaction(j: int) -> dict[str, Any]:
    """Transaction ``j``: a card used mostly in its home country, now and then abroad, a little out of order."""
    card = j % CARDS
    home = card % len(COUNTRIES)
    abroad = (j * 31) % 17 == 0
    country = COUNTRIES[(home + 1 + j % 2) % len(COUNTRIES)] if abroad else COUNTRIES[home]
    ms = START_MS + j * TX_EVERY_MS - (j * 104_729) % 4_000
    return {"tx": j, "card": f"card-{card}", "amount": float((j * 7_919) % 1_000), "country": country, "ts": ms}


class FraudDetector(KeyedBroadcastProcessFunction):
    """Checks each card's transactions against every rule in the broadcast state."""

    def open(self, ctx: Any) -> None:
        self.seen = ctx.get_map_state(MapStateDescriptor("last_seen", str, int))  # country -> last time (ms)

    def process_broadcast_element(self, rule: dict[str, Any], ctx: Any) -> None:
        rules = ctx.get_broadcast_state(RULE_STATE)
        if rule["active"]:
            rules.put(rule["rule_id"], rule)
        else:
            rules.remove(rule["rule_id"])

    def process_element(self, tx: dict[str, Any], ctx: Any) -> Iterator[dict[str, Any]]:
        t = ctx.timestamp()
        for rule_id, rule in sorted(ctx.get_broadcast_state(RULE_STATE).items()):
            if rule["kind"] == "threshold" and tx["amount"] > rule["amount"]:
                yield _alert(tx, rule_id, f"amount {tx['amount']:.0f} over {rule['amount']:.0f}")
            elif rule["kind"] == "two_countries":
                other = _other_country(self.seen.items(), tx["country"], t, rule["minutes"] * 60_000)
                if other is not None:
                    yield _alert(tx, rule_id, f"{other} and {tx['country']} within {rule['minutes']} min")
        last = self.seen.get(tx["country"])
        self.seen.put(tx["country"], t if last is None else max(last, t))
        ctx.timer_service().register_event_time_timer(t + KEEP_MS)

    def on_timer(self, timestamp: int, ctx: Any) -> None:
        for country, last in list(self.seen.items()):
            if last + KEEP_MS <= timestamp:
                self.seen.remove(country)


def _other_country(seen: Any, country: str, t: int, window_ms: int) -> str | None:
    near = sorted(c for c, last in seen if c != country and abs(t - last) <= window_ms)
    return near[0] if near else None


def _alert(tx: dict[str, Any], rule_id: str, detail: str) -> dict[str, Any]:
    return {
        "tx": tx["tx"],
        "card": tx["card"],
        "rule_id": rule_id,
        "amount": tx["amount"],
        "country": tx["country"],
        "detail": detail,
    }


def pipeline(transactions: fk.DataStream, rules: fk.DataStream) -> fk.DataStream:
    return (
        transactions.key_by("card")
        .connect(rules.broadcast(RULE_STATE))
        .process(FraudDetector(), output_schema=ALERT_SCHEMA, uid="fraud-detector")
    )


def job(
    events: int | None = 400,
    output: str | None = None,
    rate: float | None = None,
    dsn: str | None = None,
    table: str = "fraud_alerts",
) -> fk.StreamEnvironment:
    """``funke run examples.fraud:job --events N``: alerts into PostgreSQL ``table`` (``dsn``: funke's local server)."""
    if events is None or rate is not None:
        raise fk.PlanError("examples.fraud:job needs --events N (it is finite) and takes no --rate")
    from funke.services import POSTGRES_DSN

    env = fk.StreamEnvironment(app="fraud")
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(OUT_OF_ORDERNESS).with_timestamp_assigner("ts")
    txs = [{**tx, "ts": _timestamp(tx["ts"])} for tx in map(transaction, range(events))]
    transactions = env.from_collection(txs, TX_SCHEMA, rows_per_batch=TX_PER_BATCH, watermarks=wm)
    rules = env.from_collection(RULES, RULE_SCHEMA, rows_per_batch=1)
    alerts = pipeline(transactions, rules)
    alerts.sink_to(
        fk.sinks.files(output, overwrite=True) if output else fk.sinks.postgres(table, dsn=dsn or POSTGRES_DSN), uid="alerts"
    )
    return env


def _timestamp(ms: int) -> Any:
    import datetime as dt

    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)


def expected(events: int, *, bounded: bool = False) -> list[tuple[int, str, str]]:
    """The alerts as (tx, card, rule id), in plain Python: transaction ``j`` meets the rules of micro-batches
    ``0 .. j // TX_PER_BATCH`` (all of them when ``bounded``), and each card's earlier transactions in order.

    >>> len(expected(400)), len(expected(400, bounded=True))
    (119, 121)
    """
    out = []
    seen: dict[str, dict[str, int]] = {}
    for j in range(events):
        tx = transaction(j)
        upto = len(RULES) if bounded else min(len(RULES), j // TX_PER_BATCH + 1)
        rules: dict[str, dict[str, Any]] = {}
        for rule in RULES[:upto]:
            if rule["active"]:
                rules[rule["rule_id"]] = rule
            else:
                rules.pop(rule["rule_id"], None)
        last = seen.setdefault(tx["card"], {})
        for rule_id, rule in sorted(rules.items()):
            if rule["kind"] == "threshold" and tx["amount"] > rule["amount"]:
                out.append((j, tx["card"], rule_id))
            elif rule["kind"] == "two_countries" and any(
                c != tx["country"] and abs(tx["ts"] - t) <= rule["minutes"] * 60_000 for c, t in last.items()
            ):
                out.append((j, tx["card"], rule_id))
        last[tx["country"]] = max(last.get(tx["country"], tx["ts"]), tx["ts"])
    return sorted(out)
