"""``funke ysb produce``: the YSB generator's events written into a Redis Stream or a Kafka topic at a given rate
(``funke.bench.ysb_produce`` writes them)."""

from __future__ import annotations

from typing import Annotated

import typer

from funke.bench.ysb_produce import COMPRESSIONS, produce, produce_kafka
from funke.errors import FunkeError

ysb = typer.Typer(help="The Yahoo! Streaming Benchmark's input in Redis.", no_args_is_help=True)


@ysb.command("produce")
def produce_command(
    rate: Annotated[float, typer.Option(help="events per second; 0 writes as fast as Redis or Kafka takes them")] = 100_000,
    events: Annotated[int, typer.Option(help="events to write: YSB events 0 .. N-1")] = 1_000_000,
    to: Annotated[str, typer.Option("--to", help="where the events go: redis (a Stream) or kafka (a topic)")] = "redis",
    stream: Annotated[str, typer.Option(help="the Redis Stream's key (--to redis)")] = "ysb:events",
    topic: Annotated[str, typer.Option(help="the Kafka topic (--to kafka), created when missing")] = "ysb-events",
    partitions: Annotated[int, typer.Option(help="partitions of a topic it creates (--to kafka); event i goes to i % P")] = 2,
    bootstrap: Annotated[str, typer.Option(help="Kafka bootstrap servers (--to kafka)")] = "127.0.0.1:9092",
    compression: Annotated[str, typer.Option(help=f"Kafka record batch compression: {', '.join(COMPRESSIONS)}")] = "lz4",
    redis: Annotated[
        str, typer.Option("--redis", help="Redis URL (the campaigns go there in either case)")
    ] = "redis://127.0.0.1:6379/0",
    reset: Annotated[bool, typer.Option("--reset", help="delete the stream or topic before writing")] = False,
) -> None:
    """Write the YSB campaigns to Redis and the generator's events to a Redis Stream or a Kafka topic
    (read by examples.ysb:redis_job and examples.ysb:kafka_job)."""
    # (lazy: examples/ is the checkout's, and the connectors load only for the command that writes)
    from examples.ysb import CAMPAIGNS_KEY, store_campaigns
    from funke.connectors.kafka import require_kafka
    from funke.connectors.redis_streams import require_redis

    if to not in ("redis", "kafka"):
        raise typer.BadParameter(f"{to!r}: choose redis or kafka", param_hint="--to")
    try:
        require_redis()  # (both before anything is written: the campaigns go to Redis either way)
        if to == "kafka":
            require_kafka()
        store_campaigns(redis)
        typer.echo(f"stored the ad -> campaign map under '{CAMPAIGNS_KEY}'")
        if to == "kafka":
            done = produce_kafka(
                bootstrap, topic, events=events, rate=rate or None, partitions=partitions, reset=reset, compression=compression
            )
        else:
            done = produce(redis, stream, events=events, rate=rate or None, reset=reset)
    except FunkeError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    where = f"topic '{done.stream}' ({done.partitions} partitions) at {bootstrap}" if to == "kafka" else f"'{done.stream}'"
    typer.echo(f"wrote {done.events:,} events to {where} in {done.seconds:.2f} s ({done.rate:,.0f} events/s)")
