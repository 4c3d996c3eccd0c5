"""PyFlink's ``CheckpointConfig``: the interval is funke's checkpoint interval (the micro-batch trigger),
the timeout how long a micro-batch may run before its query restarts from its checkpoint
(``funke.runtime.watchdog``). Spark checkpoints every micro-batch synchronously, so the settings about
concurrency, alignment and pauses between checkpoints describe Flink's asynchronous checkpoints and
change nothing here (README, "Coming from PyFlink", lists each)."""

from __future__ import annotations

from typing import Any

from funke.pyflink.datastream.checkpointing_mode import CheckpointingMode

__all__ = ["CheckpointConfig"]


class CheckpointConfig:
    def __init__(self, env: Any) -> None:
        self._env = env
        self._mode = CheckpointingMode.EXACTLY_ONCE
        self._settings: dict[str, Any] = {}

    def is_checkpointing_enabled(self) -> bool:
        return self._env._fk.checkpoint_interval_ms > 0

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return self._mode

    def set_checkpointing_mode(self, checkpointing_mode: CheckpointingMode) -> CheckpointConfig:
        self._mode = checkpointing_mode
        return self

    def get_checkpoint_interval(self) -> int:
        return self._env._fk.checkpoint_interval_ms or -1

    def set_checkpoint_interval(self, checkpoint_interval: int) -> CheckpointConfig:
        self._env._fk.checkpoint_interval_ms = int(checkpoint_interval)
        return self

    def _keep(self, name: str, value: Any) -> CheckpointConfig:
        self._settings[name] = value
        return self

    def set_checkpoint_timeout(self, checkpoint_timeout: int) -> CheckpointConfig:
        if int(checkpoint_timeout) <= 0:
            raise ValueError(f"checkpoint timeout must be positive, got {checkpoint_timeout}")
        fk = self._env._fk
        fk.settings = fk.settings.model_copy(update={"checkpoint_timeout": int(checkpoint_timeout)})
        return self

    def get_checkpoint_timeout(self) -> int:
        return self._env._fk.settings.checkpoint_timeout

    def set_min_pause_between_checkpoints(self, min_pause_between_checkpoints: int) -> CheckpointConfig:
        return self._keep("min_pause", min_pause_between_checkpoints)

    def get_min_pause_between_checkpoints(self) -> int:
        return self._settings.get("min_pause", 0)

    def set_max_concurrent_checkpoints(self, max_concurrent_checkpoints: int) -> CheckpointConfig:
        return self._keep("max_concurrent", max_concurrent_checkpoints)

    def get_max_concurrent_checkpoints(self) -> int:
        return self._settings.get("max_concurrent", 1)

    def set_tolerable_checkpoint_failure_number(self, number: int) -> CheckpointConfig:
        return self._keep("tolerable", number)

    def enable_unaligned_checkpoints(self, enabled: bool = True) -> CheckpointConfig:
        return self._keep("unaligned", enabled)

    def disable_unaligned_checkpoints(self) -> CheckpointConfig:
        return self._keep("unaligned", False)

    def is_unaligned_checkpoints_enabled(self) -> bool:
        return bool(self._settings.get("unaligned", False))

    def set_externalized_checkpoint_retention(self, retention: Any) -> CheckpointConfig:
        return self._keep("retention", retention)

    def set_checkpoint_storage_dir(self, checkpoint_path: str) -> CheckpointConfig:
        self._env._fk.checkpoint_dir = checkpoint_path
        return self
