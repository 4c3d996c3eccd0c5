"""``funke ysb produce``: the YSB generator's events written into a Redis Stream at a given rate.

Event ``i`` is the one ``examples.ysb.events`` generates in Spark (the benchmark's settings:
``funke.bench.reference.EVENTS_PER_SECOND`` and ``MAX_DISORDER_MS``), computed here with
numpy and the reference's re-implementation of Spark's ``xxhash64``. Each entry's fields are
the YSB columns as text, ``event_time`` as integer milliseconds.

No end marker is written: the stream holds events only, and a reader declares where it
ends (``fk.sources.redis_stream(..., events=N)``), so one stream serves bounded runs over
any prefix and unbounded runs alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import typer

from funke.errors import FunkeError, SourceError

ysb = typer.Typer(help="The Yahoo! Streaming Benchmark's input in Redis.", no_args_is_help=True)

#: Fields of an entry, in the order ``examples.ysb.events`` declares the columns.
FIELDS = ("user_id", "page_id", "ad_id", "ad_type", "event_type", "event_time", "ip_address")


def ysb_events(lo: int, hi: int) -> dict[str, list[bytes]]:
    """Events ``lo .. hi-1`` as each field's values (UTF-8 text), equal to ``ysb.events`` in Spark."""
    from fractions import Fraction

    import numpy as np

    import examples.ysb as y
    from funke.bench.reference import EVENTS_PER_SECOND, MAX_DISORDER_MS, xxhash64

    i = np.arange(lo, hi, dtype=np.int64)

    def h(salt: int, modulo: int) -> list[int]:
        return np.mod(xxhash64(i, salt), modulo).tolist()

    step = Fraction(1000, EVENTS_PER_SECOND)  # the generator's (i * 1000) div events_per_second
    event_time = y.START_MS + (i * step.numerator) // step.denominator - np.mod(xxhash64(i, 6), MAX_DISORDER_MS + 1)
    ad_types = [t.encode() for t in y.AD_TYPES]
    event_types = [t.encode() for t in y.EVENT_TYPES]
    return {
        "user_id": [b"user-%d" % v for v in h(1, 1_000_000)],
        "page_id": [b"page-%d" % v for v in h(2, 100_000)],
        "ad_id": [b"ad-%04d" % v for v in h(3, y.CAMPAIGNS * y.ADS_PER_CAMPAIGN)],
        "ad_type": [ad_types[v] for v in h(4, len(y.AD_TYPES))],
        "event_type": [event_types[v] for v in h(5, len(y.EVENT_TYPES))],
        "event_time": [b"%d" % v for v in event_time.tolist()],
        "ip_address": [b"%d.%d.%d.%d" % q for q in zip(h(7, 256), h(8, 256), h(9, 256), h(10, 256))],
    }


def xadd_commands(stream: str, lo: int, hi: int) -> bytes:
    """``XADD stream * field value ...`` for events ``lo .. hi-1``, packed by hiredis as one payload."""
    from itertools import repeat

    import hiredis

    columns = ysb_events(lo, hi)
    commands = zip(repeat("XADD"), repeat(stream), repeat("*"), *(c for f in FIELDS for c in (repeat(f), columns[f])))
    return b"".join(map(hiredis.pack_command, commands))


@dataclass(frozen=True)
class Produced:
    stream: str
    events: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else float("inf")


def produce(
    url: str,
    stream: str,
    *,
    events: int,
    rate: float | None,
    reset: bool = False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Produced:
    """Write events ``0 .. events-1`` to ``stream``, paced so event ``i`` is sent at ``i / rate`` seconds.

    Events go out in pipelined chunks of about 1/20 s of the rate (at most 5 000); each
    chunk waits until its first event is due, so the rate holds over any stretch longer
    than a chunk. ``rate=None`` writes as fast as Redis takes them. ``reset`` deletes the
    stream first; otherwise the events are appended to what it holds.
    """
    import redis

    from funke.connectors.redis_streams import RedisAddress, connect

    if events < 0:
        raise FunkeError(f"ysb produce: --events must be >= 0, got {events}")
    if rate is not None and rate <= 0:
        raise FunkeError(f"ysb produce: --rate must be positive (or 0 for unpaced), got {rate}")
    chunk = 5_000 if rate is None else max(1, min(5_000, int(rate / 20)))
    address = RedisAddress.parse(url)
    with connect(address) as client:
        if reset:
            client.delete(stream)
        # A redis-py pipeline spends ~15 µs an XADD in Python; the connection's own send and
        # read calls keep up with the default 100 k events/s.
        connection = client.connection
        start = clock()
        for lo in range(0, events, chunk):
            if rate is not None:
                wait = start + lo / rate - clock()
                if wait > 0:
                    sleep(wait)
            hi = min(events, lo + chunk)
            connection.send_packed_command([xadd_commands(stream, lo, hi)])
            try:
                for _ in range(hi - lo):
                    connection.read_response()
            except redis.ResponseError as e:
                raise SourceError(f"Redis at {address} refused XADD to '{stream}' at event {lo}: {e}") from None
        return Produced(stream, events, clock() - start)


@ysb.command("produce")
def produce_command(
    rate: Annotated[float, typer.Option(help="events per second; 0 writes as fast as Redis takes them")] = 100_000,
    events: Annotated[int, typer.Option(help="events to write: YSB events 0 .. N-1")] = 1_000_000,
    stream: Annotated[str, typer.Option(help="the stream's key")] = "ysb:events",
    redis: Annotated[str, typer.Option("--redis", help="Redis URL")] = "redis://127.0.0.1:6379/0",
    reset: Annotated[bool, typer.Option("--reset", help="delete the stream before writing")] = False,
) -> None:
    """Write the YSB campaigns and the generator's events into Redis (read by examples.ysb:redis_job)."""
    from examples.ysb import CAMPAIGNS_KEY, store_campaigns

    try:
        store_campaigns(redis)
        typer.echo(f"stored the ad -> campaign map under '{CAMPAIGNS_KEY}'")
        done = produce(redis, stream, events=events, rate=rate or None, reset=reset)
    except FunkeError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {done.events:,} events to '{done.stream}' in {done.seconds:.2f} s ({done.rate:,.0f} events/s)")
