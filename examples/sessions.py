"""Session windows over many keys: the general path's large-state benchmark job.

Clicks of ``keys`` users (100 000 by default); event time advances 1000 / ``events_per_second``
ms per event and a user's clicks land where a hash of the event index puts them; a
session closes after ``gap_ms`` without a click. The job counts clicks per session.

    funke run examples.sessions:job --events 5000000 --output /tmp/sessions
"""

from __future__ import annotations

import funke as fk
from funke.windows import EventTimeSessionWindows

START_MS = 1_704_067_200_000


def clicks(n: int | None, *, keys: int = 100_000, events_per_second: int = 100_000, rate: float | None = None) -> fk.sources.GeneratorSource:  # type: ignore[name-defined]
    ms_per_event = 1000 / events_per_second
    return fk.sources.generator(
        {
            "user_id": f"pmod(xxhash64(i, 11), {keys})",
            "event_time": f"{START_MS} + cast(floor(i * {ms_per_event}) as bigint) - pmod(xxhash64(i, 12), 1000)",
        },
        schema="user_id bigint, event_time bigint",
        events=n,
        rows_per_second=rate,
    )


def job(events: int | None = 1_000_000, output: str | None = None, rate: float | None = None, keys: int = 100_000, gap_ms: int = 2_000) -> fk.StreamEnvironment:
    """Clicks per user session (gap ``gap_ms``), on funke's general path (the session operator)."""
    env = fk.StreamEnvironment(app="sessions")
    watermarks = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("event_time", unit="ms")
    sessions = (
        env.from_source(clicks(events, keys=keys, rate=rate), watermarks, name="clicks", uid="clicks")
        .key_by("user_id")
        .window(EventTimeSessionWindows.with_gap(fk.milliseconds(gap_ms)))
        .on_path("general")
        .count()
    )
    sink = fk.sinks.files(output, overwrite=True) if output else fk.sinks.collect()
    sessions.sink_to(sink, uid="sessions")
    return env
