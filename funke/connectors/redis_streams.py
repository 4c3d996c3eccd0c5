"""Redis Streams as a replayable source: the description, its offsets, and reading entries as Arrow.

An offset holds, per stream, an entry ID and the stream's *position* there (how many
entries the stream had been given up to and including that ID, Redis's ``entries-added``
count), plus whether the end-of-input row has been released. A micro-batch is the
entries in ``(start, end]`` of each stream, read by ID range, so a batch replayed after a
restart reads exactly the same entries as long as nobody deletes them in between (funke
trims only what Spark has committed). Positions count entries the way ``XADD`` numbers
them; ``events=N`` ends a stream at its ``N``-th entry.

Entries are read with redis-py and its hiredis parser; a reply whose entries all carry the
same fields in the same order (what one producer writes) becomes Arrow columns without a
Python loop over the entries.

>>> src = redis_stream("clicks", schema="user string, n bigint", events=10)
>>> (src.bounded, src.schema.names, src.describe())
(True, ('user', 'n'), 'redis_stream(clicks at 127.0.0.1:6379/0, 10 events per stream)')
>>> split_range("0-0", "100-5", 2)
[('0-0', '50-18446744073709551615'), ('50-18446744073709551615', '100-5')]
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, pairwise
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import unquote, urlsplit

from funke.connectors.base import SourceSpec
from funke.errors import EnvironmentSetupError, PlanError, SchemaError, SourceError
from funke.plan.types import Schema

if TYPE_CHECKING:
    import pyarrow as pa
    import redis

MAX_SEQ = 2**64 - 1
#: Entries per ``XRANGE`` call (and per Arrow record batch): a reply of a few MB.
CHUNK = 10_000
#: Redis 7.0 added ``entries-added`` to ``XINFO STREAM``; positions need it.
MIN_REDIS = (7, 0)
_SCALARS = {"string", "binary", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double"}
_SCALARS |= {"date", "timestamp", "timestamp_ntz"}


# -- the description ------------------------------------------------------------------------


@dataclass(frozen=True)
class RedisAddress:
    """Where the server is: ``redis://[user[:password]@]host[:port][/db]``."""

    host: str
    port: int
    db: int
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> RedisAddress:
        parts = urlsplit(url)
        if parts.scheme != "redis":
            raise PlanError(f"Redis URL {url!r}: funke's Redis source speaks plain TCP, write redis://host:port/db")
        path = parts.path.strip("/") or "0"
        if not path.isdigit():
            raise PlanError(f"Redis URL {url!r}: the database after the '/' must be a number, got {path!r}")
        try:
            port = parts.port or 6379
        except ValueError:
            raise PlanError(f"Redis URL {url!r}: the port must be a number") from None
        user = unquote(parts.username) if parts.username else None
        password = unquote(parts.password) if parts.password else None
        return cls(parts.hostname or "127.0.0.1", port, int(path), user, password)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.db}"


@dataclass(frozen=True, eq=False)
class RedisStreamSource(SourceSpec):
    """Entries of one or more Redis Streams as rows of the declared schema (replayable by entry ID).

    Field values are strings in Redis; each row converts them to the declared types (a
    missing field is null). An entry with a value that does not convert goes to the job's
    dead letters, with the field, the value, the stream and the entry ID. With ``events``
    each stream ends at its ``events``-th entry and the source is bounded.
    """

    streams: tuple[str, ...]
    declared: Schema
    address: RedisAddress
    max_rows_per_batch: int
    events: int | None
    trim: bool
    kind: ClassVar[str] = "redis-stream"

    @property
    def schema(self) -> Schema:
        return self.declared

    @property
    def bounded(self) -> bool:
        return self.events is not None

    def describe(self) -> str:
        end = f", {self.events:,} events per stream" if self.events is not None else ""
        trim = ", trims committed entries" if self.trim else ""
        return f"redis_stream({', '.join(self.streams)} at {self.address}{end}{trim})"

    def fingerprint(self) -> str:
        return f"redis_stream({', '.join(self.streams)}: {self.declared})"

    def check(self) -> None:
        """Connect once; raise ``SourceError`` naming the address when Redis is down or too old."""
        with connect(self.address, timeout=5.0) as client:
            version = str(client.info("server").get("redis_version", "0"))
        major_minor = tuple(int(x) for x in version.split(".")[:2])
        if major_minor < MIN_REDIS:
            raise SourceError(
                f"Redis at {self.address.host}:{self.address.port} is version {version}; the Redis Streams source "
                f"needs {MIN_REDIS[0]}.{MIN_REDIS[1]} or newer (XINFO STREAM entries-added)"
            )


def redis_stream(
    streams: str | Sequence[str],
    *,
    schema: str | Schema,
    url: str = "redis://127.0.0.1:6379/0",
    max_rows_per_batch: int = 100_000,
    events: int | None = None,
    trim: bool = False,
) -> RedisStreamSource:
    """Rows from Redis Streams, replayable after a restart from Spark's offset log.

    ``max_rows_per_batch`` caps a micro-batch over all streams (each of ``m`` streams gets
    ``max_rows_per_batch // m``, the first ones one more). ``events=N`` ends each stream at
    its ``N``-th entry: the job finishes, and ``execute(bounded=True)`` reads the same
    first ``N`` entries as one batch. ``trim=True`` removes entries once Spark has committed
    the batch that read them (``XTRIM MINID``); only for a stream that one query reads.
    """
    names = (streams,) if isinstance(streams, str) else tuple(streams)
    if not names or not all(isinstance(s, str) and s for s in names):
        raise PlanError(f"redis_stream() needs one or more stream keys, got {streams!r}")
    if len(set(names)) != len(names):
        raise PlanError(f"redis_stream(): stream keys repeat in {list(names)}")
    declared = Schema.of(schema)
    assert declared is not None
    for f in declared:
        if f.dtype not in _SCALARS and not (f.dtype or "").startswith("decimal("):
            raise SchemaError(
                f"redis_stream(): field '{f.name}' is declared {f.dtype}; Redis field values are strings, "
                f"so declare one of {', '.join(sorted(_SCALARS))} or decimal(p,s)"
            )
    if max_rows_per_batch < len(names):
        raise PlanError(
            f"redis_stream(max_rows_per_batch={max_rows_per_batch}) must be at least the number of streams ({len(names)})"
        )
    if events is not None and events < 0:
        raise PlanError(f"redis_stream(events=...) must be >= 0, got {events}")
    address = RedisAddress.parse(url)
    require_redis()  # fails when the job is built, not when it starts
    return RedisStreamSource(names, declared, address, max_rows_per_batch, events, trim)


# -- entry IDs and offsets --------------------------------------------------------------------


def parse_id(entry_id: str) -> tuple[int, int]:
    """``"1700000000000-3"`` → ``(1700000000000, 3)``."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def format_id(ms: int, seq: int) -> str:
    return f"{ms}-{seq}"


def next_id(entry_id: str) -> str:
    """The smallest ID after ``entry_id`` (``XTRIM MINID`` keeps IDs at or above it)."""
    ms, seq = parse_id(entry_id)
    return format_id(ms + 1, 0) if seq == MAX_SEQ else format_id(ms, seq + 1)


def split_range(after: str, upto: str, parts: int) -> list[tuple[str, str]]:
    """``(after, upto]`` cut into up to ``parts`` ranges by ID time; together exactly the same IDs."""
    lo, hi = parse_id(after), parse_id(upto)
    if hi <= lo:
        return []
    cuts = sorted({lo[0] + (hi[0] - lo[0]) * i // parts for i in range(1, parts)})
    bounds = [after] + [format_id(c, MAX_SEQ) for c in cuts if lo < (c, MAX_SEQ) < hi] + [upto]
    return list(pairwise(bounds))


def shares(limit: int, streams: int) -> list[int]:
    """A per-batch row limit split over streams: ``limit // streams`` each, the first ones one more."""
    base, extra = divmod(limit, streams)
    return [base + (1 if i < extra else 0) for i in range(streams)]


@dataclass(frozen=True)
class StreamInfo:
    """What ``XINFO STREAM`` says: entries held, entries ever added, and the last ID given."""

    length: int
    added: int
    last_id: str


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReaderConfig:
    """Everything a Spark task needs to read (picklable, also carried as data source options)."""

    streams: tuple[str, ...]
    schema: Schema
    address: RedisAddress
    max_rows_per_batch: int
    events: int | None
    trim: bool
    parallelism: int
    eos_column: str | None
    #: Names of the raw-entry, reason and position columns an entry that does not convert fills
    #: (the dead letters); without them such an entry raises ``SourceError``.
    dead_columns: tuple[str, str, str] | None = None

    @classmethod
    def of(
        cls, spec: RedisStreamSource, *, parallelism: int, eos_column: str | None, dead_columns: tuple[str, str, str] | None = None
    ) -> ReaderConfig:
        s = spec
        return cls(s.streams, s.declared, s.address, s.max_rows_per_batch, s.events, s.trim, parallelism, eos_column, dead_columns)


def initial_offset(config: ReaderConfig) -> dict[str, Any]:
    """Before every entry each stream holds now; a stream that does not exist yet starts at position 0."""
    with connect(config.address) as client:
        streams = {}
        for key in config.streams:
            info = stream_info(client, key)
            # Trimmed entries happened before this query: its first entry's position follows them.
            streams[key] = {"id": "0-0", "pos": 0 if info is None else info.added - info.length}
    return {"streams": streams, "ended": False}


def latest_offset(config: ReaderConfig, start: dict[str, Any], max_rows: int | None) -> dict[str, Any]:
    """The end of the next batch: at most ``max_rows`` entries over all streams, none past ``events``.

    A stream with no more than its share waiting ends the batch at its last ID (no scan);
    one with more is scanned for the ID of its share-th entry. Once every stream has reached
    ``events``, the offset says ``ended`` and the batch that reaches it carries the end row.
    """
    if start["ended"]:
        return start
    caps = shares(max_rows, len(config.streams)) if max_rows is not None else [None] * len(config.streams)
    out: dict[str, dict[str, Any]] = {}
    with connect(config.address) as client:
        for key, cap in zip(config.streams, caps):
            at = start["streams"][key]
            pos = at["pos"]
            if config.events is not None:
                cap = max(0, config.events - pos) if cap is None else max(0, min(cap, config.events - pos))
            info = stream_info(client, key) if cap != 0 else None
            if info is None or info.added == pos:
                out[key] = at
                continue
            if info.added < pos:
                raise SourceError(
                    f"Redis stream '{key}' at {config.address} has had {info.added} entries, fewer than the {pos} this "
                    "query already read: it was deleted or recreated; start the job from a fresh checkpoint"
                )
            waiting = info.added - pos
            if cap is None or waiting <= cap:
                out[key] = {"id": info.last_id, "pos": info.added}
            else:
                out[key] = {"id": nth_id(client, config.address, key, at["id"], cap), "pos": pos + cap}
    ended = config.events is not None and all(v["pos"] >= config.events for v in out.values())
    return {"streams": out, "ended": ended}


def plan_partitions(config: ReaderConfig, start: dict[str, Any], end: dict[str, Any]) -> list[tuple[str, ...]]:
    """The batch ``(start, end]`` as ID ranges per stream, plus the end row when this batch reaches it."""
    parts: list[tuple[str, ...]] = []
    for key in config.streams:
        after, upto = start["streams"][key]["id"], end["streams"][key]["id"]
        parts.extend(("range", key, lo, hi) for lo, hi in split_range(after, upto, config.parallelism))
    if end["ended"] and not start["ended"]:
        parts.append(("end",))
    return parts


def bounded_ends(config: ReaderConfig) -> dict[str, str]:
    """For a bounded run: the ID of each stream's ``events``-th entry (``SourceError`` if it is not there)."""
    assert config.events is not None
    ends = {}
    with connect(config.address) as client:
        for key in config.streams:
            info = stream_info(client, key) or StreamInfo(0, 0, "0-0")
            first = info.added - info.length  # entries trimmed before the first one held
            if info.added < config.events:
                raise SourceError(
                    f"Redis stream '{key}' at {config.address} has had {info.added} entries, but a bounded run with "
                    f"events={config.events} reads exactly the first {config.events}: wait for the producer or lower events"
                )
            if first > 0:
                raise SourceError(
                    f"Redis stream '{key}' at {config.address}: its first {first} entries were trimmed, so a bounded run "
                    f"cannot read the first {config.events}"
                )
            if config.events == 0:
                ends[key] = "0-0"
            elif info.added == config.events:  # the producer wrote exactly these: no scan
                ends[key] = info.last_id
            else:
                ends[key] = nth_id(client, config.address, key, "0-0", config.events)
    return ends


def trim(config: ReaderConfig, end: dict[str, Any]) -> None:
    """Remove every entry at or before the committed end of each stream."""
    with connect(config.address) as client:
        for key in config.streams:
            upto = end["streams"][key]["id"]
            if upto != "0-0":
                client.xtrim(key, minid=next_id(upto), approximate=False)


def read_partition(config: ReaderConfig, part: tuple[str, ...]) -> Iterator[pa.RecordBatch]:
    """One partition's rows as Arrow record batches of the declared schema (plus the end flag)."""
    import pyarrow as pa

    schema = arrow_schema(config.schema, config.eos_column, config.dead_columns)
    if part[0] == "end":
        yield pa.RecordBatch.from_arrays([pa.nulls(1, f.type) for f in schema][:-1] + [pa.array([True])], schema=schema)
        return
    _, key, after, upto = part
    with connect(config.address) as client:
        while True:
            with _gc_paused():
                entries = Entries.of(client.xrange(key, "(" + after, upto, CHUNK))
            if entries.count == 0:
                return
            yield entries.to_batch(key, config.schema, schema, config.eos_column, config.dead_columns)
            if entries.count < CHUNK:
                return
            after = entries.last_id


def arrow_schema(schema: Schema, eos_column: str | None, dead_columns: tuple[str, ...] | None = None) -> pa.Schema:
    """The Arrow schema Spark expects for the declared types (``to_arrow_schema`` with UTC),
    then the dead-letter columns (strings) and the end flag when asked for."""
    import pyarrow as pa

    fields = [pa.field(f.name, _arrow_type(f.dtype or "string")) for f in schema]
    fields.extend(pa.field(name, pa.string()) for name in dead_columns or ())
    if eos_column:
        fields.append(pa.field(eos_column, pa.bool_()))
    return pa.schema(fields)


def _arrow_type(dtype: str) -> pa.DataType:
    import pyarrow as pa

    if dtype.startswith("decimal("):
        p, s = (int(x) for x in dtype[len("decimal(") : -1].split(","))
        return pa.decimal128(p, s)
    return {
        "string": pa.string(),
        "binary": pa.binary(),
        "boolean": pa.bool_(),
        "tinyint": pa.int8(),
        "smallint": pa.int16(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "date": pa.date32(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "timestamp_ntz": pa.timestamp("us"),
    }[dtype]


# -- entries as Arrow -------------------------------------------------------------------------


@dataclass
class Entries:
    """Entries of one ``XRANGE`` reply: IDs and each field's raw values (Arrow binary, null when absent)."""

    ids: Sequence[bytes]
    fields: dict[bytes, pa.Array]

    @classmethod
    def of(cls, reply: Sequence[tuple[bytes, Sequence[bytes]]]) -> Entries:
        """Entries from an ``XRANGE`` reply, ``(id, [field, value, ...])`` each; a field given twice keeps the last."""
        import pyarrow as pa

        if not reply:
            return cls((), {})
        ids, pairs = zip(*reply)
        width, names = len(pairs[0]), pairs[0][::2]
        # The usual reply, every entry with the same fields in the same order, is sliced into
        # columns at C speed: equal lengths plus the names at every entry's name positions
        # prove the slices are the fields.
        if len(set(map(len, pairs))) == 1 and len(set(names)) == len(names):
            flat = list(chain.from_iterable(pairs))
            if all(flat[j::width].count(name) == len(ids) for j, name in zip(range(0, width, 2), names)):
                return cls(ids, {name: pa.array(flat[j + 1 :: width], pa.binary()) for j, name in zip(range(0, width, 2), names)})
        rows = [dict(zip(p[::2], p[1::2])) for p in pairs]
        fields = dict.fromkeys(k for r in rows for k in r)
        return cls(ids, {k: pa.array([r.get(k) for r in rows], pa.binary()) for k in fields})

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def last_id(self) -> str:
        return self.ids[-1].decode()

    def to_batch(
        self, stream: str, schema: Schema, target: pa.Schema, eos_column: str | None, dead_columns: tuple[str, ...] | None = None
    ) -> pa.RecordBatch:
        """Convert each declared field. With ``dead_columns``, those columns say of an entry whose
        value does not convert (that value null) what it was, why and where (the dead letters);
        without them such an entry raises SourceError naming the entry, the field and the value."""
        import pyarrow as pa

        arrays, bad = [], {}
        for f, t in zip(schema, target):
            raw = self.fields.get(f.name.encode())
            if raw is None:
                arrays.append(pa.nulls(self.count, t.type))
            else:
                arrays.append(self._convert(raw, t.type, stream, f.name, f.dtype or "string", bad if dead_columns else None))
        if dead_columns:  # (a bad entry's fields stay as converted: the whole entry leaves the job at the source)
            arrays.extend(self._dead_letters(stream, bad))
        if eos_column:
            arrays.append(pa.array([False] * self.count, pa.bool_()))
        return pa.RecordBatch.from_arrays(arrays, schema=target)

    def _convert(self, raw: pa.Array, to: pa.DataType, stream: str, name: str, dtype: str, bad: dict[int, list[str]] | None) -> pa.Array:
        import pyarrow as pa

        try:
            return _cast(raw, to)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        # One value at a time: finds the bad ones, or converts a column whose values only
        # convert one by one (timestamps with and without a zone offset).
        parts = []
        for i, value in enumerate(raw.to_pylist()):
            try:
                parts.append(pa.nulls(1, to) if value is None else _cast(pa.array([value], pa.binary()), to))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                shown = value.decode("utf-8", "backslashreplace")
                if bad is None:
                    raise SourceError(
                        f"Redis stream '{stream}' entry {self.ids[i].decode()}: field '{name}' = {shown!r} is not a valid {dtype}; "
                        f"fix the entry or declare '{name}' as string in the source schema"
                    ) from None
                bad.setdefault(i, []).append(f"field '{name}' = {shown!r} is not a valid {dtype}")
                parts.append(pa.nulls(1, to))
        return pa.concat_arrays(parts)

    def _dead_letters(self, stream: str, bad: dict[int, list[str]]) -> list[pa.Array]:
        """The raw entry (its fields as a JSON object), the reason and the position of each bad entry; null elsewhere."""
        import json

        import pyarrow as pa

        raw, reason, position = ([None] * self.count for _ in range(3))
        for i, why in bad.items():
            entry = {k.decode("utf-8", "backslashreplace"): v[i].as_py() for k, v in self.fields.items() if v[i].is_valid}
            raw[i] = json.dumps({k: v.decode("utf-8", "backslashreplace") for k, v in entry.items()})
            reason[i] = f"redis_stream '{stream}': {'; '.join(why)}"
            position[i] = f"{stream}@{self.ids[i].decode()}"
        return [pa.array(raw, pa.string()), pa.array(reason, pa.string()), pa.array(position, pa.string())]


def _cast(raw: pa.Array, to: pa.DataType) -> pa.Array:
    """Binary values → ``to``; timestamps with a zone offset or without one (then UTC)."""
    import pyarrow as pa

    if pa.types.is_binary(to):
        return raw
    text = raw.cast(pa.string())
    if pa.types.is_timestamp(to) and to.tz is not None:
        try:
            return text.cast(to)
        except pa.ArrowInvalid:
            return text.cast(pa.timestamp(to.unit)).cast(to)
    return text.cast(to)


# -- talking to Redis ------------------------------------------------------------------------------


def require_redis() -> None:
    """``EnvironmentSetupError`` with the install command when redis-py or its hiredis parser is missing."""
    import importlib.util

    for module in ("redis", "hiredis"):  # without hiredis, redis-py parses replies ~10x slower
        if importlib.util.find_spec(module) is None:
            raise EnvironmentSetupError(f"funke's Redis Streams support needs the '{module}' package: pip install 'funke[redis]'")


@contextmanager
def connect(address: RedisAddress, *, timeout: float = 60.0) -> Iterator[redis.Redis]:
    """A redis-py client on one connection (bytes replies, ``xrange`` as the raw reply).

    Connects at once and fails fast (no retries), so the error names the server: ``SourceError``
    when it cannot be reached, the connection breaks, or a command is refused.
    """
    require_redis()
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    where = f"{address.host}:{address.port}"
    try:
        client = redis.Redis(
            host=address.host,
            port=address.port,
            db=address.db,
            username=address.username if address.password is not None else None,
            password=address.password,
            decode_responses=False,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            socket_read_size=1 << 20,  # an XRANGE reply of CHUNK entries is a few MB
            retry=Retry(NoBackoff(), 0),
            single_connection_client=True,
        )
    except redis.RedisError as e:
        raise SourceError(f"cannot reach Redis at {where} ({getattr(e.__context__, 'strerror', None) or e})") from None
    # Entries.of reads the reply as sent; redis-py would build a dict per entry.
    client.set_response_callback("XRANGE", lambda reply, **_: reply)
    try:
        yield client
    except (redis.ConnectionError, redis.TimeoutError) as e:
        raise SourceError(f"lost the connection to Redis at {where} ({e})") from None
    except redis.ResponseError as e:
        raise SourceError(f"Redis at {where} refused a command: {e}") from None
    finally:
        client.close()


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic GC while an ``XRANGE`` reply is built: its two lists per entry (which form no
    cycles) would otherwise set off collections that take half the reading time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def stream_info(client: redis.Redis, key: str) -> StreamInfo | None:
    """Length, entries ever added and last ID of a stream; None when the key does not exist."""
    import redis

    try:
        info = client.xinfo_stream(key)
    except redis.ResponseError as e:
        if "no such key" in str(e):
            return None
        raise
    return StreamInfo(info["length"], info["entries-added"], info["last-generated-id"].decode())


def nth_id(client: redis.Redis, address: RedisAddress, key: str, after: str, n: int) -> str:
    """The ID of the ``n``-th entry after ``after`` (the stream must hold that many)."""
    while True:
        with _gc_paused():
            reply = client.xrange(key, "(" + after, "+", min(n, CHUNK))
        if not reply:
            raise SourceError(
                f"Redis stream '{key}' at {address}: fewer entries after {after} than expected; were entries deleted?"
            )
        n -= len(reply)
        after = reply[-1][0].decode()
        if n == 0:
            return after


def entries_behind(source: RedisStreamSource, end_offset: Any) -> int | None:
    """Entries added to ``source``'s streams after ``end_offset`` (a micro-batch's end, as Spark
    reports it): how far a query reading them is behind. None when the offset is not this
    source's or Redis does not answer (the dashboard asks; it must not fail for it)."""
    streams = end_offset.get("streams") if isinstance(end_offset, dict) else None
    if not isinstance(streams, dict) or not streams or not set(streams) <= set(source.streams):
        return None
    try:
        with connect(source.address, timeout=2.0) as client:
            behind = 0
            for key, at in streams.items():
                info = stream_info(client, key)
                behind += max(0, (info.added if info is not None else 0) - int(at["pos"]))
            return behind
    except (SourceError, EnvironmentSetupError, KeyError, TypeError, ValueError):
        return None
