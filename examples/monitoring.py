"""Rack monitoring with CEP: three warnings from a rack within 10 s raise an alert, unless the rack reports "resolved".

The pattern (``funke.cep``), per rack: three ``warning`` events (other events may come
between them), then no ``resolved`` event, all within ``WITHIN`` of the first warning. The
alert is raised once that time has passed without a ``resolved`` (the absence of an event is
known only when time moves on: in event time, when the watermark passes). After an alert
the rack's overlapping partial matches are dropped (``skip_past_last_event``), so a burst of
warnings alerts once::

    python -m examples.monitoring                     # prints the alerts (as `funke run examples.monitoring:job`)
    funke run examples.monitoring:job --output /tmp/monitoring [--bounded]

The events are :data:`EVENTS`, a few per micro-batch, out of order by less than
``OUT_OF_ORDERNESS``; the comments say which racks alert and why. The streaming and bounded
runs give the same alerts (tests/spark/test_cep_examples.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import funke as fk
from funke.cep import CEP, AfterMatchSkipStrategy, Pattern

WITHIN = fk.seconds(10)
OUT_OF_ORDERNESS = fk.seconds(5)
#: 2024-01-01T00:00:00Z
START = dt.datetime(2024, 1, 1)

EVENT_SCHEMA = "rack string, kind string, temperature double, ts timestamp"
ALERT_SCHEMA = "rack string, first_warning timestamp, last_warning timestamp, hottest double"

#: (rack, kind, temperature, seconds after START), in arrival order.
EVENTS: list[tuple[str, str, float, int]] = [
    ("r1", "warning", 81.0, 0),
    ("r2", "warning", 80.0, 1),
    ("r2", "warning", 82.0, 2),
    ("r1", "warning", 84.0, 3),
    ("r2", "warning", 83.0, 4),
    ("r3", "warning", 80.0, 5),
    ("r1", "warning", 88.0, 6),  # r1: three warnings, nothing resolved by 10 s: alert (0 s, 6 s)
    ("r2", "resolved", 60.0, 7),  # r2: three warnings (1, 2, 4 s), resolved at 7 s: no alert
    ("r3", "warning", 81.0, 9),
    ("r3", "warning", 85.0, 16),  # r3: the third warning is 11 s after the first: no alert
    ("r4", "warning", 90.0, 20),
    ("r4", "ok", 70.0, 21),  # (other events may come between the warnings)
    ("r4", "warning", 91.0, 22),
    ("r4", "warning", 92.0, 23),
    ("r4", "resolved", 65.0, 35),  # r4: resolved, but 15 s after the first warning: alert (20 s, 23 s)
    ("r5", "warning", 80.0, 40),
    ("r5", "warning", 81.0, 41),
    ("r5", "warning", 82.0, 42),
    ("r5", "warning", 83.0, 43),  # r5: four warnings: one alert (40 s, 42 s); 41-43 overlaps it and is skipped
    ("r6", "warning", 80.0, 60),
    ("r6", "warning", 81.0, 61),
    ("r6", "resolved", 60.0, 65),  # arrives before the third warning, happened after it:
    ("r6", "warning", 82.0, 62),  # in event-time order r6's warnings are resolved: no alert
]


def events() -> list[dict[str, Any]]:
    return [
        {"rack": rack, "kind": kind, "temperature": temperature, "ts": START + dt.timedelta(seconds=s)}
        for rack, kind, temperature, s in EVENTS
    ]


def is_warning(event: dict[str, Any]) -> bool:
    return event["kind"] == "warning"


def is_resolved(event: dict[str, Any]) -> bool:
    return event["kind"] == "resolved"


def unresolved_warnings() -> Pattern:
    """Three warnings, then no "resolved", within ``WITHIN`` of the first; one alert per burst."""
    return (
        Pattern.begin("warnings", AfterMatchSkipStrategy.skip_past_last_event())
        .where(is_warning)
        .times(3)
        .not_followed_by("resolved")
        .where(is_resolved)
        .within(WITHIN)
    )


def alert(match: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    warnings = match["warnings"]
    return {
        "rack": warnings[0]["rack"],
        "first_warning": warnings[0]["ts"],
        "last_warning": warnings[-1]["ts"],
        "hottest": max(w["temperature"] for w in warnings),
    }


def build(env: fk.StreamEnvironment, *, rows_per_batch: int = 4) -> fk.DataStream:
    """The alerts: :data:`EVENTS` keyed by rack, through :func:`unresolved_warnings`."""
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(OUT_OF_ORDERNESS).with_timestamp_assigner("ts")
    racks = env.from_collection(events(), EVENT_SCHEMA, rows_per_batch=rows_per_batch, watermarks=wm).key_by("rack")
    return CEP.pattern(racks, unresolved_warnings()).select(alert, output_schema=ALERT_SCHEMA, uid="unresolved-warnings")


def job(events: int | None = None, output: str | None = None, rate: float | None = None) -> fk.StreamEnvironment:
    """``funke run examples.monitoring:job [--output DIR] [--bounded]``: the alerts as Parquet in ``DIR``, else printed."""
    if events is not None or rate is not None:
        raise fk.PlanError("examples.monitoring:job runs its fixed EVENTS: it takes no --events or --rate")
    env = fk.StreamEnvironment(app="monitoring")
    build(env).sink_to(fk.sinks.files(output, overwrite=True) if output else fk.sinks.print(), uid="alerts")
    return env


if __name__ == "__main__":
    job().execute().wait()
