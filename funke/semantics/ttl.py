"""State time-to-live as Flink configures it (``StateTtlConfig`` and its builder, with PyFlink's spellings).

TTL is Flink's only kind: processing-time TTL read from the state backend's clock
(``funke.semantics.state``), which applies it on every read and write.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

from funke.semantics.time import Duration, to_millis


class TtlUpdateType(enum.Enum):
    """When an entry's last-access timestamp is refreshed (Flink's ``StateTtlConfig.UpdateType``)."""

    Disabled = "disabled"
    OnCreateAndWrite = "on_create_and_write"
    OnReadAndWrite = "on_read_and_write"


class TtlStateVisibility(enum.Enum):
    """Whether a read may still see an expired entry (Flink's ``StateTtlConfig.StateVisibility``)."""

    ReturnExpiredIfNotCleanedUp = "return_expired_if_not_cleaned_up"
    NeverReturnExpired = "never_return_expired"


class TtlTimeCharacteristic(enum.Enum):
    """Flink supports processing-time TTL only; so does funke."""

    ProcessingTime = "processing_time"


@dataclass(frozen=True)
class StateTtlConfig:
    """How long state lives after its last create/write (or read).

    >>> from funke.semantics.time import seconds
    >>> cfg = (StateTtlConfig.new_builder(seconds(10))
    ...        .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite).build())
    >>> (cfg.ttl_ms, cfg.update_type.name, cfg.state_visibility.name)
    (10000, 'OnReadAndWrite', 'NeverReturnExpired')
    """

    ttl_ms: int
    update_type: TtlUpdateType = TtlUpdateType.OnCreateAndWrite
    state_visibility: TtlStateVisibility = TtlStateVisibility.NeverReturnExpired
    time_characteristic: TtlTimeCharacteristic = TtlTimeCharacteristic.ProcessingTime

    UpdateType: ClassVar[type[TtlUpdateType]] = TtlUpdateType
    StateVisibility: ClassVar[type[TtlStateVisibility]] = TtlStateVisibility
    TtlTimeCharacteristic: ClassVar[type[TtlTimeCharacteristic]] = TtlTimeCharacteristic

    def __post_init__(self) -> None:
        if isinstance(self.ttl_ms, bool) or not isinstance(self.ttl_ms, int) or self.ttl_ms <= 0:
            raise ValueError(f"state TTL must be a positive number of milliseconds, got {self.ttl_ms!r}")

    @classmethod
    def new_builder(cls, ttl: Duration) -> StateTtlConfigBuilder:
        return StateTtlConfigBuilder(to_millis(ttl, what="state TTL"))

    @property
    def is_enabled(self) -> bool:
        return self.update_type is not TtlUpdateType.Disabled


class StateTtlConfigBuilder:
    """PyFlink's builder spelling; ``build()`` returns the frozen :class:`StateTtlConfig`."""

    def __init__(self, ttl_ms: int) -> None:
        self._ttl_ms = ttl_ms
        self._update_type = TtlUpdateType.OnCreateAndWrite
        self._visibility = TtlStateVisibility.NeverReturnExpired

    def set_ttl(self, ttl: Duration) -> StateTtlConfigBuilder:
        self._ttl_ms = to_millis(ttl, what="state TTL")
        return self

    def set_update_type(self, update_type: TtlUpdateType) -> StateTtlConfigBuilder:
        self._update_type = TtlUpdateType(update_type)
        return self

    def update_ttl_on_create_and_write(self) -> StateTtlConfigBuilder:
        return self.set_update_type(TtlUpdateType.OnCreateAndWrite)

    def update_ttl_on_read_and_write(self) -> StateTtlConfigBuilder:
        return self.set_update_type(TtlUpdateType.OnReadAndWrite)

    def set_state_visibility(self, visibility: TtlStateVisibility) -> StateTtlConfigBuilder:
        self._visibility = TtlStateVisibility(visibility)
        return self

    def never_return_expired(self) -> StateTtlConfigBuilder:
        return self.set_state_visibility(TtlStateVisibility.NeverReturnExpired)

    def return_expired_if_not_cleaned_up(self) -> StateTtlConfigBuilder:
        return self.set_state_visibility(TtlStateVisibility.ReturnExpiredIfNotCleanedUp)

    def set_time_characteristic(self, characteristic: TtlTimeCharacteristic) -> StateTtlConfigBuilder:
        if TtlTimeCharacteristic(characteristic) is not TtlTimeCharacteristic.ProcessingTime:
            raise ValueError("only processing-time state TTL exists (as in Flink)")
        return self

    set_ttl_time_characteristic = set_time_characteristic

    # Flink's background cleanup strategies decide when an expired entry's storage is freed; funke
    # drops an expired entry on the read that finds it and never returns one under NeverReturnExpired,
    # so they change no result here (with ReturnExpiredIfNotCleanedUp, Flink's own answer depends on
    # when its cleanup ran). Accepted so PyFlink's builder calls work as written.
    def cleanup_full_snapshot(self) -> StateTtlConfigBuilder:
        return self

    def cleanup_incrementally(self, cleanup_size: int = 5, run_cleanup_for_every_record: bool = False) -> StateTtlConfigBuilder:
        return self

    def cleanup_in_rocksdb_compact_filter(self, query_time_after_num_entries: int = 1000, periodic_compaction_time: Any = None) -> StateTtlConfigBuilder:
        return self

    def disable_cleanup_in_background(self) -> StateTtlConfigBuilder:
        return self

    def build(self) -> StateTtlConfig:
        return StateTtlConfig(self._ttl_ms, self._update_type, self._visibility)
