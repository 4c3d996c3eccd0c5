"""Redis hash sink (redis-py): each micro-batch written by one Lua script together with a batch marker.

Layouts, with ``<col>`` standing for a column's value in a row:

* **hash per key** (``field=`` given): per row ``HSET {prefix}<key> <field> <value>``. The
  Yahoo streaming benchmark's layout: ``key="campaign_id", field="window_start",
  value="count"`` keeps one hash per campaign whose fields are the windows' start times
  (epoch ms) and whose values are the counts. (The original benchmark indirects through a
  per-window uuid hash holding ``seen_count``; funke stores the value in place.)
* **hash per row key** (no ``field``): per row ``HSET {prefix}<key> <column> <value> ...``
  for each column of ``value`` (default: every column not in ``key``). With
  ``key=["campaign_id", "window_start"]`` that is one hash per (campaign, window) holding
  ``window_end`` and ``count``.

Several key or field columns are joined with ``:``. Values are written as text:
timestamps as epoch milliseconds, dates as ``YYYY-MM-DD``, booleans as ``true``/``false``,
numbers in decimal, strings as they are; other types (binary, arrays, maps, structs) are
refused: convert them to strings first. A null value removes the field (``HDEL``), so the
hash shows the latest row; a null in a key or field column is the empty string. Within a
batch, later rows overwrite earlier ones.

Exactly-once: the marker is the hash ``{marker_prefix}:{job}:{sink}:{query_id}`` whose
fields are committed batch ids (values: commit time, UTC ISO). One Lua script checks the
marker, writes the batch and then sets the marker; Redis runs a script atomically, so no
other client sees half a batch and a replayed batch (same job, sink, query and batch id:
Spark replays the last batch after a crash) is skipped. ``query_id`` is Spark's streaming
query id, kept in the checkpoint: a fresh checkpoint starts a new series. Redis does not
undo a script's earlier commands when a later one fails (say a key holds a string, not a
hash): then the marker is not set, the batch fails, and the replay after a restart writes
the same values again (``HSET``/``HDEL`` are idempotent), so the end state is still each
batch once. A bounded run is not replayed by anything: it is written without a marker.
Under Spark Connect a streaming job's batches are refused (the server does not tell
``foreachBatch`` the query id). The script touches keys it computes, so it needs a single
Redis server, not Redis Cluster.

>>> import funke as fk
>>> ysb = fk.sinks.redis("redis://127.0.0.1:6379/0", key="campaign_id", field="window_start", value="count")
>>> ysb.describe()
'redis(HSET <campaign_id> <window_start> <count>, at 127.0.0.1:6379/0)'
>>> fk.sinks.redis(key=["campaign_id", "window_start"], prefix="ysb:").describe()
'redis(HSET ysb:<campaign_id>:<window_start> <column> <value> for each other column, at localhost:6379/0)'
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from funke.connectors.base import BatchSink
from funke.connectors.postgres import arrow_batch, require
from funke.errors import PlanError, SinkError
from funke.plan.types import Schema

if TYPE_CHECKING:
    import pyarrow as pa
    import redis as redis_py

log = logging.getLogger("funke.sinks")

# KEYS[1]: the marker hash (absent: no marker); ARGV[1]: batch id; ARGV[2]: commit time;
# ARGV[3]: the batch as JSON, [[hash, [field, value, ...], [field to delete, ...]], ...].
# One JSON argument instead of one argument per value: redis-py packs each argument in
# Python, which made a 10k-row batch 2-3x slower.
WRITE_BATCH = """
local marker = KEYS[1]
if marker and redis.call('HEXISTS', marker, ARGV[1]) == 1 then return 0 end
for _, h in ipairs(cjson.decode(ARGV[3])) do
  if #h[2] > 0 then redis.call('HSET', h[1], unpack(h[2])) end
  if #h[3] > 0 then redis.call('HDEL', h[1], unpack(h[3])) end
end
if marker then redis.call('HSET', marker, ARGV[1], ARGV[2]) end
return 1
"""

MARKER_PREFIX = "funke:commits"


def encode(column: pa.ChunkedArray | pa.Array, name: str) -> list[str | None]:
    """A column's values as Redis writes them (see the module docstring); None stays None.

    >>> import pyarrow as pa, datetime as dt
    >>> encode(pa.array([dt.datetime(1970, 1, 1, 0, 0, 10)], pa.timestamp("us", "UTC")), "t")
    ['10000']
    >>> encode(pa.array([1.5, None]), "x"), encode(pa.array([True]), "b")
    (['1.5', None], ['true'])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    t = column.type
    if pa.types.is_timestamp(t):
        column = pc.cast(pc.cast(column, pa.timestamp("ms", t.tz), safe=False), pa.int64())
    elif not (
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_decimal(t)
        or pa.types.is_boolean(t)
        or pa.types.is_date(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
    ):
        raise SinkError(
            f"the Redis sink writes text, numbers, booleans, dates and timestamps, not column '{name}' of type {t}: "
            "turn it into a string column first (e.g. with to_json, or base64 for binary)"
        )
    return pc.cast(column, pa.string()).to_pylist()


def _joined(columns: list[list[str | None]], rows: int) -> list[str]:
    """Per row, the columns' encoded values joined with ':' (a null as the empty string)."""
    if len(columns) == 1:
        return ["" if v is None else v for v in columns[0]]
    return [":".join("" if c[r] is None else c[r] for c in columns) for r in range(rows)]


@dataclass(eq=False)
class RedisSink(BatchSink):
    """Writes each micro-batch to Redis hashes in one atomic Lua script with a batch marker (exactly-once)."""

    url: str = "redis://localhost:6379/0"
    key: tuple[str, ...] = ()
    field: tuple[str, ...] = ()
    value: tuple[str, ...] = ()
    prefix: str = ""
    name: str = ""
    marker_prefix: str = MARKER_PREFIX
    connect_timeout: float = 5.0
    kind: ClassVar[str] = "redis"
    guarantee: ClassVar[str] = "exactly-once"
    _client: Any = dataclass_field(default=None, init=False, repr=False)
    _script: Any = dataclass_field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.key:
            raise PlanError("redis sink needs key=...: the column(s) that name the hash, e.g. key='campaign_id'")
        if self.field and len(self.value) != 1:
            raise PlanError(
                f"redis sink with field=... writes one value per hash field: pass value='column' (got value={list(self.value)})"
            )
        overlap = (set(self.key) | set(self.field)) & set(self.value)
        if overlap:
            raise PlanError(f"redis sink: column(s) {sorted(overlap)} are both in the key/field and in value")
        parts = urlsplit(self.url)
        if parts.scheme not in ("redis", "rediss", "unix"):
            raise PlanError(f"redis sink url must start with redis://, rediss:// or unix://, got {self.url!r}")
        self.name = self.name or self._default_name()

    # -- where -----------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``host:port/db`` (or the socket path), without credentials."""
        parts = urlsplit(self.url)
        if parts.scheme == "unix":
            return parts.path
        db = parts.path.strip("/") or "0"
        return f"{parts.hostname or 'localhost'}:{parts.port or 6379}/{db}"

    def describe(self) -> str:
        key = self.prefix + ":".join(f"<{k}>" for k in self.key)
        if self.field:
            what = f"{key} {':'.join(f'<{f}>' for f in self.field)} <{self.value[0]}>"
        elif self.value:
            what = f"{key} " + " ".join(f"{v} <{v}>" for v in self.value)
        else:
            what = f"{key} <column> <value> for each other column"
        named = "" if self.name == self._default_name() else f", name {self.name}"
        return f"redis(HSET {what}{named}, at {self.address})"

    def _default_name(self) -> str:
        return f"{self.prefix}{{{','.join(self.key)}}}" + (f"[{','.join(self.field)}]" if self.field else "")

    def _where(self) -> str:
        return f"redis sink '{self.name}' (Redis at {self.address})"

    def client(self) -> redis_py.Redis:
        """The sink's client (one connection pool, reused across batches)."""
        import redis

        if self._client is None:
            self._client = redis.Redis.from_url(self.url, socket_connect_timeout=self.connect_timeout)
            self._script = self._client.register_script(WRITE_BATCH)
        return self._client

    def __getstate__(self) -> dict[str, Any]:
        """Without the client: its pool holds sockets and locks (Spark may pickle a sink into a worker)."""
        return {**self.__dict__, "_client": None, "_script": None}

    # -- the BatchSink hook ----------------------------------------------------------
    def check(self, job: str) -> None:
        """Ping the server before the job starts; SinkError naming it when it does not answer."""
        import redis

        try:
            self.client().ping()
        except redis.RedisError as e:
            raise SinkError(
                f"{self._where()}: cannot connect: {str(e).rstrip('.')}; is the server running and the URL right?"
            ) from e

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        data, schema, query_id = arrow_batch(df, self._where())
        self.write_table(data, schema, job=job, batch_id=batch_id, query_id=query_id)

    def write_table(self, data: pa.Table, schema: Schema, *, job: str, batch_id: int, query_id: str | None) -> bool:
        """Write one batch atomically with its marker; False when the marker says it was written before.

        ``query_id`` None (a bounded run) writes without a marker.
        """
        import redis

        if data.num_rows == 0:
            return True
        payload = self._payload(data, schema)
        keys = [f"{self.marker_prefix}:{job}:{self.name}:{query_id}"] if query_id is not None else []
        now = dt.datetime.now(dt.UTC).isoformat()
        try:
            self.client()  # registers the script on first use
            written = self._script(keys=keys, args=[batch_id, now, payload])
        except redis.RedisError as e:
            raise SinkError(
                f"{self._where()}: batch {batch_id} of job {job} failed and its marker was not written, "
                f"so a restart writes it again: {e}"
            ) from e
        if not written:
            log.info("%s: batch %s of job %s was committed before: skipped", self._where(), batch_id, job)
        return bool(written)

    def _payload(self, data: pa.Table, schema: Schema) -> str:
        """The batch as the script's JSON argument: per row, its hash, the fields to set and to delete."""
        import json

        for c in (*self.key, *self.field, *self.value):
            if c not in schema:
                raise SinkError(f"{self._where()}: column '{c}' is not in the results ({schema})")
        values = self.value or tuple(n for n in schema.names if n not in self.key)
        rows = data.num_rows
        hashes = [self.prefix + k for k in _joined([encode(data.column(c), c) for c in self.key], rows)]
        if self.field:
            fields = _joined([encode(data.column(c), c) for c in self.field], rows)
            out = [
                (h, (f, v), ()) if v is not None else (h, (), (f,))
                for h, f, v in zip(hashes, fields, encode(data.column(values[0]), values[0]), strict=True)
            ]
        else:
            encoded = [encode(data.column(c), c) for c in values]
            out = []
            for r, h in enumerate(hashes):
                cells = [(n, col[r]) for n, col in zip(values, encoded, strict=True)]
                out.append((h, [x for n, v in cells if v is not None for x in (n, v)], [n for n, v in cells if v is None]))
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def redis(
    url: str = "redis://localhost:6379/0",
    *,
    key: str | Sequence[str],
    field: str | Sequence[str] | None = None,
    value: str | Sequence[str] | None = None,
    prefix: str = "",
    name: str | None = None,
    marker_prefix: str = MARKER_PREFIX,
) -> RedisSink:
    """Exactly-once Redis hash sink: each micro-batch and its marker in one atomic Lua script.

    ``key`` names the hash (with ``prefix`` before it); with ``field`` each row sets one field
    of it to ``value``, without ``field`` each row sets the ``value`` columns (default: all
    others). ``name`` keeps the markers of two sinks of one job apart (default: the layout).
    The module docstring gives the layouts and encodings exactly.
    """
    require("redis", "redis", "redis")

    def cols(c: str | Sequence[str] | None) -> tuple[str, ...]:
        return (c,) if isinstance(c, str) else tuple(c or ())

    return RedisSink(url, cols(key), cols(field), cols(value), prefix, name or "", marker_prefix)
