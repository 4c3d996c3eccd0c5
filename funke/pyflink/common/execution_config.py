"""PyFlink's ``ExecutionConfig`` (``env.get_config()``): the parallelism and the global job parameters
(``RuntimeContext.get_job_parameter``); Flink's serializer and watermark-interval knobs describe its
runtime and change nothing on Spark (funke's watermark moves once per micro-batch)."""

from __future__ import annotations

from typing import Any

__all__ = ["ExecutionConfig"]


class ExecutionConfig:
    def __init__(self, env: Any) -> None:
        self._env = env
        self._interval = 200

    def get_parallelism(self) -> int:
        return self._env.get_parallelism()

    def set_parallelism(self, parallelism: int) -> ExecutionConfig:
        self._env.set_parallelism(parallelism)
        return self

    def set_global_job_parameters(self, global_job_parameters_dict: dict[str, str]) -> ExecutionConfig:
        self._env._settings.job_parameters = {str(k): str(v) for k, v in global_job_parameters_dict.items()}
        return self

    def get_global_job_parameters(self) -> dict[str, str]:
        return dict(self._env._settings.job_parameters)

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        self._interval = int(interval)
        return self

    def get_auto_watermark_interval(self) -> int:
        return self._interval

    def enable_object_reuse(self) -> ExecutionConfig:
        return self

    def disable_object_reuse(self) -> ExecutionConfig:
        return self

    def is_object_reuse_enabled(self) -> bool:
        return False
